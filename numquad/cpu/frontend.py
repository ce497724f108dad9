"""Front end of the CPU wave compiler: source -> a tree of wave items.

``Frontend`` holds one ``@xpu.jit`` function's state and runs its phases, each a
module of its own (the phases' methods are mixins of ``Frontend``):

1. *Resolve* (cpu/resolve.py): every global reference (``Quad.swapHorizontal``,
   ``xpu.grid``, ``cuda.threadIdx.x``, another ``@xpu.jit`` function) is looked up
   in the function's globals and closure. Nested defs are lifted (cpu/nested.py),
   ``literal_unroll`` loops written out (cpu/unroll.py) and numba.cuda's warp
   functions rewritten into ops (cpu/spellings.py).
2. *Normalise* (cpu/normalise.py): each cross-lane call is hoisted into its own
   statement ``_nq_xN = OP(_nq_aN, ...)`` whose operands are fresh temporaries (or
   constant selectors); masked ``while``/``for`` loops become ``while True``
   loops whose exit is a masked ``break``. Loops over constants are unrolled
   (cpu/unroll.py), shared and local arrays recorded (cpu/allocations.py) and
   lane functions with ops inlined (cpu/inline.py).
3. *Uniformity* (cpu/uniformity.py): the locals that hold the same value in
   every lane of a wave.
4. *Segment* (cpu/segment.py): a statement list becomes wave items
   (cpu/waveitems.py): straight-line lane code (``Region``, one vectorised lane
   loop), uniform scalar statements, cross-lane calls, masked ``if``/loops and
   jumps (``return``/``break``/``continue``).
5. Stores into read-only arguments are refused (cpu/stores.py).

Every node keeps the user's line number; errors name the user's file and line.
Generated names start with ``_nq_`` (cpu/names.py ``RESERVED``).
"""

from __future__ import annotations

import ast
import itertools
import operator

import numpy as np

from .. import _desugar
from .._control import MISSING as _MISSING
from .. import ops as _ops
from ..errors import NumquadCompileError, as_numba_typing
from . import cudaapi as _cudaapi
from . import nested as _nested
from . import splitnames as _splitnames
from .names import RESERVED, loc
from .resolve import Env, builtin_name
from .spellings import CudaSpellings
from .stores import StoreChecks
from .unroll import Unroller
from .normalise import Normaliser
from .allocations import Allocations
from .inline import Inliner
from .uniformity import Uniformity
from .segment import Segmenter

__all__ = ["Frontend"]

_FOLD = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    # a ** b of integer constants (b >= 0), as Numba folds it (the CUDA target's
    # constant: Quad.broadcast(v, 2 ** 2) is out of range there, not lane 0)
    ast.Pow: lambda a, b: a**b if 0 <= b <= 64 else None,
}


class Frontend(Normaliser, Unroller, Allocations, Inliner, Uniformity, Segmenter, StoreChecks):
    """Parses, normalises and segments one ``@xpu.jit`` function."""

    def __init__(self, dispatcher, consts=None, argtypes=None, arg_dtypes=None, split=None, no_unroll=False, lift=None):
        self.dispatcher = dispatcher
        # (cpu/dispatch.py) array locals rebound in an ``if`` or loop that holds no op:
        # such a statement is segmented as one holding ops, so that a rebinding under
        # uniform control stays one view for the wave (cpu/segment.py ``_is_masked``)
        self.lift = frozenset(lift or ())
        # (cpu/dispatch.py) loops over constants run as loops, as Numba types them, not
        # written out copy by copy: a variable they store changes type in them
        self.no_unroll = no_unroll
        # the names stored in the bodies of loops written out copy by copy (each copy
        # typed on its own, where Numba's loop types them as one: cpu/dispatch.py)
        self.unrolled_stores = set()
        self.literal_unrolled_stores = set()
        # the Numba types of the parameters, where known: for numba.cuda's words in errors
        self.argtypes = argtypes
        # an inlined function's array parameters whose element type the call fixes
        # ({name: dtype}): ``local.array(2, dtype=a.dtype)`` in a device function
        self.arg_dtypes = arg_dtypes or {}
        self.pyfunc = dispatcher.py_func
        self.filename = dispatcher.filename
        # debug=True: numba.cuda's warp functions are checked against their mask rules
        self.debug = bool(getattr(dispatcher, "debug", False))
        self.fn = dispatcher.source_tree
        self.env = Env(self.pyfunc, self.fn)
        self._counter = itertools.count()
        for name in self.env.locals:
            if name.startswith(RESERVED) and not _desugar.is_temporary(name) and not _nested.is_capture(name):
                self.error(f"names starting with {RESERVED!r} are reserved by numquad; got {name!r}", self.fn)
        _nested.lift(self)  # nested defs become functions it calls
        self._unroll_literal_loops(self.fn)
        # variables whose values have several types, kept in one lane array of their
        # unification: a name per top-level assignment (cpu/splitnames.py)
        self.split = _splitnames.split(self.fn, split, set(self.env.params)) if split else {}
        self.env.locals |= set(self.split)
        self.ops_used = set()
        self.allocs = {}  # name -> ("shared" | "local", shape, np.dtype, node)
        # (a numba.cuda device function's, callee, its name there) -> the one name of a
        # shared array every inlined copy of that function uses (_inline_call)
        self.shared_once = {}
        # the prefix of each inlined call's renamed locals -> (callee name, its file)
        self.inlined = {}
        self.env.closure.update({"_nq_Wave": _ops.Wave, "_nq_np": np})
        self.env.closure.update(_cudaapi.helpers())
        _cudaapi.check_supported(self)
        # locals assigned once to a constant, and parameters bound to constants by an
        # inlining call site: shapes and selectors may use them
        self.consts = _cudaapi.local_constants(self, consts)
        body = [CudaSpellings(self).visit(s) for s in self.fn.body]
        self.body = self._normalise_block(body, in_loop=False)
        self.has_barrier = any(self._contains_barrier(s) for s in self.body)
        self.uniform = self._uniform_names(self.body)
        self.items = self._segment(self.body, top=True)
        self._check_read_only_stores()

    # -- errors ---------------------------------------------------------------
    def error(self, msg, node):
        raise NumquadCompileError(
            f"{msg} (in {self.pyfunc.__name__})", self.filename, loc(node, self.dispatcher.firstlineno)
        )

    def typing_error(self, msg, node, call=None):
        """``error``, for a mistake numba.cuda reports as a TypingError: the error is
        also one. With the argument types known, the message of a refused
        ``shared.array``/``local.array`` *call* goes on in numba.cuda's words."""
        err = NumquadCompileError(
            f"{msg} (in {self.pyfunc.__name__})", self.filename, loc(node, self.dispatcher.firstlineno)
        )
        if call is not None and self.argtypes is not None:
            kind = self.builtin_of(call.func).split(".")[0]
            _cudaapi.allocation_wording(err, kind, call, self.pyfunc, self.argtypes)
        raise as_numba_typing(err)

    def fresh(self, stem):
        # "_nq_<stem>_<n>": the underscore keeps temporaries apart from the helpers
        # of generated code ("_nq_i32" was both the 32nd "_nq_i" loop counter and
        # np.int32, a NotDefinedError from Numba)
        return f"{RESERVED}{stem}_{next(self._counter)}"

    # -- classification of calls ------------------------------------------------
    def op_of(self, node):
        """The ops.Op called by *node* (an ast.Call), else None."""
        if not isinstance(node, ast.Call):
            return None
        return _ops.of_function(self.env.resolve(node.func))

    _GROUPS = ("threadIdx", "blockIdx", "blockDim", "gridDim", "shared", "local", "const", "atomic")

    def builtin_of(self, node):
        """The xpu builtin an expression names ("grid", "threadIdx.x", ...), else None."""
        obj = self.env.resolve(node)
        if obj is _MISSING:
            return None
        name = builtin_name(obj)
        if name is None and isinstance(node, ast.Attribute):
            base = self.builtin_of(node.value)
            if base in self._GROUPS:
                return f"{base}.{node.attr}"
        return name

    def is_xl(self, node):
        op = self.op_of(node)
        return op is not None and op.kind != "query"

    def contains_xl(self, node):
        return (
            any(self.is_xl(n) for n in ast.walk(node)) or self._contains_barrier(node) or self._contains_syncwarp(node)
        )

    def _contains_syncwarp(self, node):
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and self.builtin_of(n.func) in _cudaapi.REGION_ENDS:
                return True
        return False

    def _is_syncwarp(self, s):
        return (
            isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Call)
            and self.builtin_of(s.value.func) in _cudaapi.REGION_ENDS
        )

    def _check_syncwarp_mask(self, call):
        """``syncwarp(mask=0xffffffff)``: its mask is never computed on the CPU (a
        region ends there), so a mask numba.cuda refuses is refused here by its form:
        more than one argument, or a constant that is no integer."""
        args = list(call.args) + [k.value for k in call.keywords]
        bad_kw = [k.arg for k in call.keywords if k.arg != "mask"]
        if len(args) > 1 or bad_kw:
            self.error(f"syncwarp(mask=0xffffffff) takes at most 1 argument (mask); got {ast.unparse(call)}", call)
        if (
            args
            and isinstance(args[0], ast.Constant)
            and (not isinstance(args[0].value, int) or isinstance(args[0].value, bool))
        ):
            self.error(
                f"syncwarp(mask): the mask must be an integer (a 32-bit lane mask); got "
                f"{type(args[0].value).__name__} {args[0].value!r}",
                call,
            )

    def _contains_barrier(self, node):
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and (
                self.builtin_of(n.func) == "syncthreads" or self.builtin_of(n.func) in _cudaapi.BARRIER_REDUCE
            ):
                return True
        return False

    def uses_builtins(self):
        if self.allocs or self.has_barrier or getattr(self, "uses_hints", False):
            return True
        for node in itertools.chain(ast.walk(self.fn), *(ast.walk(s) for s in self.body)):
            if isinstance(node, (ast.Name, ast.Attribute)) and self.builtin_of(node) is not None:
                return True
            if isinstance(node, ast.Call) and self.op_of(node) is not None:
                return True
        return False

    def _constant_int(self, node):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, (int, np.integer))
            and not isinstance(node.value, bool)
        ):
            return int(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self._constant_int(node.operand)
            return None if v is None else -v
        if isinstance(node, ast.BinOp) and type(node.op) in _FOLD:
            a, b = self._constant_int(node.left), self._constant_int(node.right)
            if a is None or b is None:
                return None
            try:
                v = _FOLD[type(node.op)](a, b)
            except (ZeroDivisionError, ValueError, OverflowError):
                return None
            return None if v is None else int(v)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and len(node.args) == 1
            and node.func.id.startswith("_nq_cu_lane_")
        ):
            # a numba.cuda shuffle's selector: its low five bits (cudaapi._lane_bits)
            v = self._constant_int(node.args[0])
            return None if v is None else v & 31
        if isinstance(node, ast.Name) and node.id in getattr(self, "consts", ()):
            v = self.consts[node.id]
            return v if isinstance(v, int) else None
        obj = self.env.resolve(node) if isinstance(node, (ast.Name, ast.Attribute)) else _MISSING
        if isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
            return int(obj)
        return None
