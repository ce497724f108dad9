"""``@xpu.jit`` and the kernel-side builtins (``xpu.grid``, ``xpu.threadIdx``, ...).

The builtins mirror numba.cuda's names, signatures and return types. They are
markers: the CPU wave compiler and the CUDA target each give them meaning.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import threading
import types as _pytypes

import numpy as np

from .errors import NumquadLaunchError, NumquadTypeError

__all__ = [
    "jit",
    "Dispatcher",
    "grid",
    "gridsize",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "laneid",
    "warpsize",
    "syncthreads",
    "syncwarp",
    "shared",
    "local",
    "atomic",
]


# ---------------------------------------------------------------------------
# Kernel-side builtins
# ---------------------------------------------------------------------------

class _Builtin:
    """A kernel-side builtin such as ``xpu.grid``; meaningful only inside a kernel."""

    def __init__(self, name, doc):
        self.name = name
        self.__name__ = name.rsplit(".", 1)[-1]
        self.__qualname__ = f"xpu.{name}"
        self.__doc__ = doc

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"xpu.{self.name} is a kernel builtin: use it inside an @xpu.jit function"
        )

    def __repr__(self):
        return f"<xpu builtin {self.name}>"

    def __reduce__(self):
        return (_builtin_by_name, (self.name,))


class _Group(_pytypes.ModuleType):
    """A namespace of builtins (``xpu.threadIdx``, ``xpu.atomic``, ...)."""

    def __repr__(self):
        return f"<xpu namespace {self.__name__}>"


#: Every builtin by name ("grid", "threadIdx.x", "atomic.add", ...).
BUILTINS = {}


def _builtin(name, doc):
    b = _Builtin(name, doc)
    BUILTINS[name] = b
    return b


def _builtin_by_name(name):
    return BUILTINS[name]


def _dim3(name, what):
    g = _Group(f"xpu.{name}", f"xpu.{name}.x/.y/.z: {what} (int32), as numba.cuda.{name}.")
    for c in "xyz":
        setattr(g, c, _builtin(f"{name}.{c}", f"xpu.{name}.{c}: {what}, {c} component (int32)."))
    g.__all__ = ["x", "y", "z"]
    return g


grid = _builtin(
    "grid",
    "xpu.grid(ndim)\n\nThe absolute thread index: an int64 for ndim=1, a tuple of "
    "ndim int64 for 2 and 3 (blockIdx * blockDim + threadIdx), as numba.cuda.grid.",
)
gridsize = _builtin(
    "gridsize",
    "xpu.gridsize(ndim)\n\nThe number of threads in the grid (gridDim * blockDim): an "
    "int64 or a tuple of ndim int64, as numba.cuda.gridsize.",
)
threadIdx = _dim3("threadIdx", "the thread's index in its block")
blockIdx = _dim3("blockIdx", "the block's index in the grid")
blockDim = _dim3("blockDim", "the block's shape")
gridDim = _dim3("gridDim", "the grid's shape in blocks")
laneid = _builtin("laneid", "xpu.laneid\n\nThe thread's lane in its wave, 0..31 (int32).")
warpsize = _builtin("warpsize", "xpu.warpsize\n\nLanes in a wave: 32 (int32).")
syncthreads = _builtin(
    "syncthreads",
    "xpu.syncthreads()\n\nBlock barrier: every thread of the block reaches it before any goes on.",
)
syncwarp = _builtin("syncwarp", "xpu.syncwarp(mask=0xffffffff)\n\nWave barrier.")

shared = _Group("xpu.shared", "Block-shared memory.")
shared.array = _builtin(
    "shared.array",
    "xpu.shared.array(shape, dtype)\n\nA block-shared array of constant shape.",
)
shared.__all__ = ["array"]
local = _Group("xpu.local", "Per-thread memory.")
local.array = _builtin(
    "local.array",
    "xpu.local.array(shape, dtype)\n\nA per-thread array of constant shape.",
)
local.__all__ = ["array"]
atomic = _Group("xpu.atomic", "Atomic read-modify-write on array elements, as numba.cuda.atomic.")
#: numba.cuda's atomics: name -> (call form, what it stores).
ATOMICS = {
    "add": ("ary, idx, val", "ary[idx] + val"),
    "sub": ("ary, idx, val", "ary[idx] - val"),
    "max": ("ary, idx, val", "max(ary[idx], val); for floats nothing when either is NaN"),
    "min": ("ary, idx, val", "min(ary[idx], val); for floats nothing when either is NaN"),
    "nanmax": ("ary, idx, val", "max(ary[idx], val), a NaN value ignored, a NaN element replaced"),
    "nanmin": ("ary, idx, val", "min(ary[idx], val), a NaN value ignored, a NaN element replaced"),
    "and_": ("ary, idx, val", "ary[idx] & val (integers)"),
    "or_": ("ary, idx, val", "ary[idx] | val (integers)"),
    "xor": ("ary, idx, val", "ary[idx] ^ val (integers)"),
    "exch": ("ary, idx, val", "val (integers)"),
    "inc": ("ary, idx, val", "0 if ary[idx] >= val else ary[idx] + 1 (uint32, uint64)"),
    "dec": ("ary, idx, val", "val if ary[idx] == 0 or ary[idx] > val else ary[idx] - 1 (uint32, uint64)"),
    "cas": ("ary, idx, old, val", "val if ary[idx] == old (integers)"),
    "compare_and_swap": ("ary, old, val", "val in ary[0] if ary[0] == old (integers, 1-D ary)"),
}
for _n, (_form, _what) in ATOMICS.items():
    setattr(atomic, _n, _builtin(
        f"atomic.{_n}",
        f"xpu.atomic.{_n}({_form})\n\nAtomically stores {_what}; returns the old value, "
        f"as numba.cuda.atomic.{_n}.",
    ))
atomic.__all__ = list(ATOMICS)
del _n, _form, _what


# ---------------------------------------------------------------------------
# Launch configuration
# ---------------------------------------------------------------------------

_MAX_BLOCK = 1024
_MAX_BLOCK_DIM = (1024, 1024, 64)
_MAX_GRID_DIM = (2**31 - 1, 65535, 65535)


def _dims(value, what, kernel):
    """Normalise a numba.cuda-style dimension (int or 1-3 tuple) to a 3-tuple."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (int(value),)
    if not isinstance(value, (tuple, list)) or not value:
        raise NumquadTypeError(
            f"{kernel.where}: launch of {kernel.__name__}: {what} must be an int or "
            f"a tuple of 1-3 ints; got {value!r}"
        )
    if len(value) > 3:
        raise NumquadLaunchError(
            f"{kernel.where}: launch of {kernel.__name__}: {what} has {len(value)} "
            f"dimensions; it takes 1 to 3"
        )
    out = []
    for v in value:
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise NumquadTypeError(
                f"{kernel.where}: launch of {kernel.__name__}: {what} must hold "
                f"ints; got {value!r}"
            )
        if v < 1:
            raise NumquadLaunchError(
                f"{kernel.where}: launch of {kernel.__name__}: every {what} "
                f"dimension must be >= 1; got {tuple(value)!r}"
            )
        out.append(int(v))
    ndim = len(out)
    out += [1] * (3 - len(out))
    return tuple(out), ndim


def launch_config(kernel, griddim, blockdim):
    """Validate a launch as CUDA would; returns (grid3, block3, grid_ndim, block_ndim)."""
    g, gnd = _dims(griddim, "griddim", kernel)
    b, bnd = _dims(blockdim, "blockdim", kernel)
    nthreads = b[0] * b[1] * b[2]
    if nthreads > _MAX_BLOCK:
        raise NumquadLaunchError(
            f"{kernel.where}: launch of {kernel.__name__}: a block of {b} has "
            f"{nthreads} threads; at most {_MAX_BLOCK} are allowed"
        )
    for axis, (v, lim) in enumerate(zip(b, _MAX_BLOCK_DIM)):
        if v > lim:
            raise NumquadLaunchError(
                f"{kernel.where}: launch of {kernel.__name__}: blockdim[{axis}] = {v}; "
                f"at most {lim}"
            )
    for axis, (v, lim) in enumerate(zip(g, _MAX_GRID_DIM)):
        if v > lim:
            raise NumquadLaunchError(
                f"{kernel.where}: launch of {kernel.__name__}: griddim[{axis}] = {v}; "
                f"at most {lim}"
            )
    return g, b, gnd, bnd


# ---------------------------------------------------------------------------
# The dispatcher
# ---------------------------------------------------------------------------

def _is_device_array(a):
    return hasattr(a, "__cuda_array_interface__")


def _returns_value(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                return True
    return False


class Dispatcher:
    """An ``@xpu.jit`` function: a kernel (returns nothing) or a lane function.

    Kernels launch with ``f[griddim, blockdim](*args)`` (CUDA also takes a stream
    and a dynamic shared-memory size); lane functions are called on arrays,
    ``f(*args, out=None)``. ``f.cpu`` and ``f.cuda`` pick a target explicitly.
    Compilation is lazy and cached per argument types on each target.
    """

    def __init__(self, pyfunc, target="auto", debug=False, fastmath=False, cache=False):
        if target not in ("auto", "cpu", "cuda"):
            raise ValueError(f"xpu.jit: target must be 'auto', 'cpu' or 'cuda'; got {target!r}")
        if not isinstance(pyfunc, _pytypes.FunctionType):
            raise TypeError(f"xpu.jit decorates a Python function; got {pyfunc!r}")
        self.py_func = pyfunc
        self.target = target
        self.debug = bool(debug)
        self.fastmath = bool(fastmath)
        self.cache = bool(cache)
        functools.update_wrapper(self, pyfunc)
        code = pyfunc.__code__
        self.filename = code.co_filename
        self.firstlineno = code.co_firstlineno
        self.where = f'File "{self.filename}", line {self.firstlineno}, in {pyfunc.__name__}'
        self._lock = threading.RLock()
        self._tree = None
        self._is_kernel = None
        self._targets = {}
        self._configs = {}         # (griddim, blockdim) -> validated launch dims

    # -- source ------------------------------------------------------------
    @property
    def source_tree(self):
        """The function's AST with the user's file line numbers."""
        if self._tree is None:
            try:
                lines, start = inspect.getsourcelines(self.py_func)
            except (OSError, TypeError) as e:
                raise NumquadTypeError(
                    f"{self.where}: xpu.jit needs the function's source to compile it "
                    f"for the CPU ({e})"
                ) from None
            src = textwrap.dedent("".join(lines))
            tree = ast.parse(src, filename=self.filename)
            ast.increment_lineno(tree, start - 1)
            fn = tree.body[0]
            if isinstance(fn, ast.AsyncFunctionDef) or not isinstance(fn, ast.FunctionDef):
                raise NumquadTypeError(f"{self.where}: xpu.jit takes a plain def function")
            fn.decorator_list = []
            self._tree = fn
        return self._tree

    @property
    def is_kernel(self):
        """True for a kernel (returns nothing), False for a lane function."""
        if self._is_kernel is None:
            try:
                self._is_kernel = not _returns_value(self.source_tree)
            except NumquadTypeError:
                self._is_kernel = True
        return self._is_kernel

    # -- targets -----------------------------------------------------------
    def _target(self, name):
        with self._lock:
            t = self._targets.get(name)
            if t is None:
                if name == "cpu":
                    from .cpu.dispatch import CPUTarget
                    t = CPUTarget(self)
                elif name == "python":
                    from .simt import PythonTarget
                    t = PythonTarget(self)
                else:
                    import importlib.util
                    if importlib.util.find_spec("numba_cuda") is None:
                        raise ImportError(
                            f"{self.where}: the CUDA target needs the numba-cuda package: "
                            f"pip install 'numquad[cuda]' (numba's own numba.cuda is a shim)")
                    from .cuda.dispatch import CUDATarget
                    t = CUDATarget(self)
                self._targets[name] = t
            return t

    def _choose(self, args):
        if self.target != "auto":
            return self.target
        return "cuda" if any(_is_device_array(a) for a in args) else "cpu"

    @property
    def cpu(self):
        """This function on the CPU target: ``f.cpu[grid, block](...)`` or ``f.cpu(...)``."""
        return _TargetView(self, "cpu")

    @property
    def cuda(self):
        """This function on the CUDA target: ``f.cuda[grid, block](...)`` or ``f.cuda(...)``."""
        return _TargetView(self, "cuda")

    @property
    def python(self):
        """This function in the plain-Python SIMT interpreter (numquad/simt.py):
        ``f.python[grid, block](...)`` or ``f.python(...)``.

        Slow, but ordinary Python: ``print`` and ``breakpoint()``/pdb work inside the
        kernel, per thread, with every cross-lane op (numba.cuda's simulator has no
        warp ops). It is the fuzzer's oracle (``python -m numquad.fuzz``).
        """
        return _TargetView(self, "python")

    # -- kernels -------------------------------------------------------------
    def __getitem__(self, config):
        return _Launcher(self, None, config)

    def _launch(self, target, config, args):
        if not self.is_kernel:
            raise NumquadTypeError(
                f"{self.where}: {self.__name__} returns a value, so it is a lane "
                f"function: call it as {self.__name__}(*arrays), not with [griddim, blockdim]"
            )
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise NumquadTypeError(
                f"{self.where}: launch {self.__name__}[griddim, blockdim](...) "
                f"(CUDA also takes [griddim, blockdim, stream, sharedmem]); got {config!r}"
            )
        griddim, blockdim = config[:2]
        extra = config[2:]
        try:
            dims = self._configs[(griddim, blockdim)]
        except (KeyError, TypeError):
            dims = launch_config(self, griddim, blockdim)
            if len(self._configs) < 64:
                self._configs[(griddim, blockdim)] = dims
        target = target or self._choose(args)
        # on the CPU a stream and a dynamic shared-memory size are accepted and unused
        return self._target(target).launch(dims, extra, args)

    # -- lane functions ------------------------------------------------------
    def __call__(self, *args, out=None):
        return self._call(None, args, out)

    def _call(self, target, args, out):
        if self.is_kernel:
            raise NumquadTypeError(
                f"{self.where}: {self.__name__} is a kernel: launch it as "
                f"{self.__name__}[griddim, blockdim](...), e.g. "
                f"{self.__name__}[(n + 127) // 128, 128](...)"
            )
        target = target or self._choose(list(args) + ([out] if out is not None else []))
        return self._target(target).call(args, out)

    # -- introspection -------------------------------------------------------
    def inspect_cpu_source(self, sig):
        """The generated CPU wave code for argument types *sig*, as Python source."""
        return self._target("cpu").inspect_source(sig)

    def inspect_llvm(self, sig):
        """The optimised LLVM IR of the CPU wave code for *sig*."""
        return self._target("cpu").inspect_llvm(sig)

    def inspect_asm(self, sig):
        """The CPU assembly of the wave code for *sig*."""
        return self._target("cpu").inspect_asm(sig)

    def inspect_ptx(self, sig, cc=(9, 0)):
        """The PTX for *sig* and compute capability *cc*; needs no GPU."""
        return self._target("cuda").inspect_ptx(sig, cc=cc)

    def __repr__(self):
        kind = "kernel" if self.is_kernel else "lane function"
        return f"<xpu.jit {kind} {self.__name__}>"


class _TargetView:
    def __init__(self, dispatcher, target):
        self._d = dispatcher
        self._t = target

    def __getitem__(self, config):
        return _Launcher(self._d, self._t, config)

    def __call__(self, *args, out=None):
        return self._d._call(self._t, args, out)


class _Launcher:
    def __init__(self, dispatcher, target, config):
        self._d = dispatcher
        self._t = target
        self._config = config if isinstance(config, tuple) else (config,)

    def __call__(self, *args):
        return self._d._launch(self._t, self._config, args)


def jit(func=None, *, target="auto", debug=False, fastmath=False, cache=False):
    """``@xpu.jit`` or ``@xpu.jit(target="auto", debug=False, fastmath=False, cache=False)``

    Compile a SIMT kernel or lane function for the CPU wave compiler and for CUDA.
    A function that returns nothing is a kernel, launched as
    ``k[griddim, blockdim](*args)``; one that returns a value is a lane function,
    callable from kernels and, on arrays, from Python (``f(*arrays, out=None)``).
    ``target="auto"`` picks CUDA when an argument has ``__cuda_array_interface__``.
    """
    def wrap(f):
        return Dispatcher(f, target=target, debug=debug, fastmath=fastmath, cache=cache)

    if func is None:
        return wrap
    if isinstance(func, str):
        raise TypeError("xpu.jit takes no signature: types are inferred per call")
    return wrap(func)
