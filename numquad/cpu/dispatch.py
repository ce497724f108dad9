"""The CPU target of ``@xpu.jit``: compile per argument types, launch over cores.

Pipeline: :mod:`frontend` (parse, resolve, normalise, segment) ->
:mod:`typing` (scalar shadow typing) -> :mod:`codegen` (the block function)
-> :mod:`launch` (blocks spread over cores with ``prange``).
"""

from __future__ import annotations

import contextlib
import copy
import re
import threading

import numba
from numba.core import config as _nb_config
from numba.core import errors as _nb_errors

from ..errors import NumquadCompileError, NumquadTypeError
from . import codegen as _cg
from . import frontend as _fe
from . import launch as _launch
from .typing import shadow_types

__all__ = ["CPUTarget"]

_compile_lock = threading.RLock()


@contextlib.contextmanager
def _slp_vectorize():
    """Turn on LLVM's SLP vectoriser (off in Numba by default) while compiling wave code."""
    old = _nb_config.SLP_VECTORIZE
    _nb_config.SLP_VECTORIZE = True
    try:
        yield
    finally:
        _nb_config.SLP_VECTORIZE = old


_OP_MSG = re.compile(r"((?:Quad|Wave)\.\w+[^\n]*?(?:it takes|out of range)[^\n]*)")
_AT = re.compile(r" at (\S+) \((\d+)\)")
_LOC = re.compile(r'File "([^"]+)", line (\d+)')
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _same_file(a, b):
    import os
    try:
        return os.path.abspath(a) == os.path.abspath(b)
    except (TypeError, ValueError):
        return a == b


def _typing_error(dispatcher, err):
    """A NumquadTypeError from a Numba TypingError, naming the user's file and line."""
    text = _ANSI.sub("", str(err))
    m = _OP_MSG.search(text)
    msg = m.group(1).strip() if m else text.strip().splitlines()[0]
    locs = [(f, int(n)) for f, n in _AT.findall(text) + _LOC.findall(text)
            if _same_file(f, dispatcher.filename)]
    f, n = locs[0] if locs else (dispatcher.filename, dispatcher.firstlineno)
    detail = "" if m else "\n" + text
    return NumquadTypeError(
        f'File "{dispatcher.filename}", line {n}, in {dispatcher.__name__}: {msg}{detail}')


def _typeof_args(dispatcher, args):
    out = []
    for i, a in enumerate(args):
        try:
            ty = numba.typeof(a, numba.core.typing.typeof.Purpose.argument)
        except (ValueError, TypeError, _nb_errors.NumbaError):
            ty = None
        if ty is None or not isinstance(ty, (numba.types.Array, numba.types.Integer, numba.types.Float,
                                             numba.types.Complex, numba.types.Boolean)):
            raise NumquadTypeError(
                f"{dispatcher.where}: argument {i} of {dispatcher.__name__} has type "
                f"{type(a).__name__}, which the CPU target cannot pass; it takes NumPy "
                f"arrays and bool/int/float/complex scalars"
            )
        if isinstance(ty, numba.types.Array) and not isinstance(
                ty.dtype, (numba.types.Integer, numba.types.Float, numba.types.Complex, numba.types.Boolean)):
            raise NumquadTypeError(
                f"{dispatcher.where}: argument {i} of {dispatcher.__name__} is an array of "
                f"{ty.dtype}; the CPU target takes bool, integer, float and complex arrays"
            )
        out.append(ty)
    return tuple(out)


class _Compiled:
    """One specialisation: block function + launcher, and their source."""

    def __init__(self, block, source):
        self.block = block
        self.source = source


class CPUTarget:
    """The CPU target of one ``@xpu.jit`` function."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self._lock = threading.RLock()
        self._cache = {}
        self._scalar = None

    # -- compilation -----------------------------------------------------------
    def frontend(self):
        d = self.dispatcher
        tree = copy.deepcopy(d.source_tree)

        class _Proxy:
            py_func = d.py_func
            filename = d.filename
            firstlineno = d.firstlineno
            source_tree = tree
        return _fe.Frontend(_Proxy)

    def _cpu_fn_for(self, callee):
        """The scalar CPU function used when a kernel calls another xpu.jit function."""
        return callee._target("cpu").scalar_function()

    def scalar_function(self):
        """This lane function as a plain scalar njit function (no cross-lane ops)."""
        with self._lock:
            if self._scalar is None:
                fe = self.frontend()
                if fe.ops_used or fe.uses_builtins():
                    raise NumquadCompileError(
                        f"{self.dispatcher.__name__} uses cross-lane ops or thread builtins; "
                        f"calling it from another kernel is not supported by the CPU target yet",
                        self.dispatcher.filename, self.dispatcher.firstlineno)
                self._scalar = numba.njit(self.dispatcher.py_func, error_model="numpy",
                                          fastmath=self.dispatcher.fastmath)
            return self._scalar

    def compile(self, argtypes, nd):
        key = (argtypes, nd)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
            with _compile_lock:
                compiled = self._compile(argtypes, nd)
            self._cache[key] = compiled
            return compiled

    def _compile(self, argtypes, nd):
        d = self.dispatcher
        fe = self.frontend()
        shadow = _cg.generate_shadow(fe, self._cpu_fn_for)
        try:
            typemap = shadow_types(shadow, argtypes)
        except _nb_errors.TypingError as e:
            raise _typing_error(d, e) from None
        block_py, source = _cg.generate_block(fe, typemap, nd, d.debug, self._cpu_fn_for)
        block = numba.njit(block_py, error_model="numpy", boundscheck=d.debug or None,
                           fastmath=d.fastmath, nogil=True)
        block_sig = tuple(argtypes) + (numba.types.int64,) * len(_cg.BLOCK_PARAMS)
        try:
            with _slp_vectorize():
                block.compile(block_sig)
        except _nb_errors.TypingError as e:
            raise _typing_error(d, e) from None
        return _Compiled(block, source)

    # -- launching -----------------------------------------------------------------
    def launch(self, dims, extra, args):
        (g, b, gnd, bnd) = dims
        argtypes = _typeof_args(self.dispatcher, args)
        nd = b[1] > 1 or b[2] > 1
        compiled = self.compile(argtypes, nd)
        if not self.dispatcher.debug:
            _launch.run_grid(compiled.block, args, g, b)
            return
        try:
            _launch.run_grid(compiled.block, args, g, b)
        except IndexError as e:
            d = self.dispatcher
            raise IndexError(f"{d.where}: an array access in {d.__name__} is out of bounds "
                             f"(debug=True bounds check): {e}") from None

    def call(self, args, out):
        from .arraycall import call_lane_function
        return call_lane_function(self.dispatcher, args, out)

    # -- introspection -----------------------------------------------------------------
    def _sig(self, sig):
        if isinstance(sig, numba.core.typing.Signature):
            sig = sig.args
        return tuple(sig)

    def inspect_source(self, sig):
        return self.compile(self._sig(sig), False).source

    def inspect_llvm(self, sig):
        c = self.compile(self._sig(sig), False)
        return c.block.inspect_llvm(c.block.signatures[0])

    def inspect_asm(self, sig):
        c = self.compile(self._sig(sig), False)
        return c.block.inspect_asm(c.block.signatures[0])
