"""A plain-Python SIMT interpreter: the third target of ``@xpu.jit`` and the fuzzer's oracle.

``k.python[griddim, blockdim](*arrays)`` runs a kernel here, thread by thread, in
ordinary Python: every thread is a generator made from the kernel's own source,
and a small scheduler runs the threads of each wave together at every cross-lane
op, following docs/semantics.md (maximal reconvergence by dynamic instance). A
lane function runs with ``f.python(*arrays)`` (element k is lane k % 32 of wave
k // 32, as on the other targets).

It is slow (microseconds per thread and op) but it is plain Python, so you can
debug a kernel here: ``print(...)`` inside a kernel prints per thread,
``breakpoint()`` (or ``import pdb; pdb.set_trace()``) stops in the kernel's own
source lines with its variables visible, and an out-of-bounds index raises an
ordinary ``IndexError`` with a traceback into your kernel. numba.cuda's simulator
(``NUMBA_ENABLE_CUDASIM``) has no warp ops; this one has all of them.

This module shares no code with the compilers: it reads ``numquad.ops`` only to
recognise op objects and implements every op itself, lane by lane.

How an op's active lanes are found. Every op site, loop and call site of a lane
function gets a number in evaluation order. A thread blocked at an op carries
the key ``(loop1, iteration1, loop2, iteration2, ..., op, 0)``: the loops it is
in, each with the number of times round since the loop was entered, and the
call sites of the lane functions it is inside. Threads of a wave blocked on the
same key execute the op together; the scheduler always runs the group with the
smallest key first, which is maximal reconvergence for structured code. Threads
run one after the other between sync points (one valid interleaving).
"""

from __future__ import annotations

import ast
import copy
import itertools
import math
import operator
import sys
import types as _pytypes
import threading

import numpy as np

from . import _control
from . import _desugar
from . import _power
from . import _userraise
from . import ops as _ops
from . import xpu as _xpu
from .errors import NumquadCompileError, NumquadError, NumquadLaunchError, NumquadTypeError

__all__ = ["PythonTarget", "SIMTError", "run_kernel", "call_lane_function"]

W = 32


class SIMTError(NumquadError, RuntimeError):
    """The interpreter found a kernel it cannot run (a barrier under divergence, a
    deadlock, lanes that disagree on an operand's type)."""


# ---------------------------------------------------------------------------
# Name resolution: xpu builtins, numba.cuda aliases, ops, lane functions
# ---------------------------------------------------------------------------

_MISSING = _control.MISSING  # what a name that names nothing resolves to
_GROUP_NAMES = ("threadIdx", "blockIdx", "blockDim", "gridDim", "shared", "local", "atomic", "const")


#: numba.cuda's loads and stores with a cache hint: plain loads and stores here
_CACHE_HINTS = _xpu.CUDA_CACHE_HINTS


def _cuda_table():
    """numba.cuda objects that mean an xpu builtin (only if numba.cuda is imported)."""
    cuda = sys.modules.get("numba.cuda")
    table = {}
    if cuda is None:
        return table
    names = ("grid", "gridsize", "laneid", "warpsize", "syncthreads", "syncwarp", *_xpu.CUDA_FUNCTIONS)
    for name in names + _CACHE_HINTS:
        obj = getattr(cuda, name, None)
        if obj is not None:
            table[id(obj)] = (obj, name)
    for name in _GROUP_NAMES:
        obj = getattr(cuda, name, None)
        if obj is not None:
            table[id(obj)] = (obj, name)
            # its functions bound to another name (``atomic_add = cuda.atomic.add``)
            for attr in dir(obj):
                f = getattr(obj, attr, None) if not attr.startswith("_") and name not in _DIM_GROUPS else None
                if callable(f):
                    table.setdefault(id(f), (f, f"{name}.{attr}"))
    return table


_DIM_GROUPS = ("threadIdx", "blockIdx", "blockDim", "gridDim")


def _builtin_name(obj):
    # (this target's table names more of numba.cuda than the analysis needs)
    return _control.named_builtin(obj, _cuda_table())


def _as_dispatcher(obj):
    """A numba.cuda function (``@cuda.jit``, with or without ``device=True``) or a
    plain Numba one (``@numba.njit``) called from a kernel is a device function, as
    numba.cuda compiles it: here an ``@xpu.jit`` Dispatcher of its Python function
    (the same one each time). A ``register_jitable`` function too: the compiled
    targets run it as a device function, ops and all."""
    if not (_xpu.is_foreign_device_function(obj) or _xpu.is_jitable(obj)):
        return obj
    d = obj.__dict__.get("_numquad_python")
    if d is None:
        d = obj.__dict__["_numquad_python"] = _xpu.Dispatcher(getattr(obj, "py_func", obj))
        d._numquad_foreign = obj
    return d


class _Resolver(_control.Env):
    """Name resolution as the compiled targets resolve names (numquad/_control.py),
    with the interpreter's own: the names its rewrites write (``__nq_Wave``, ...),
    numba.cuda and Numba functions as device functions (``_as_dispatcher``), and its
    table of numba.cuda's builtins."""

    _GROUP_NAMES = _GROUP_NAMES

    def __init__(self, func, local_names):
        super().__init__(func, None, local_names)

    def lookup(self, name):
        if name == "__nq_Wave":
            return _ops.Wave
        if name == "__nq_np":
            return np
        if name == "__nq_match":
            return _match_any
        return _as_dispatcher(super().lookup(name))

    def resolve(self, node):
        obj = super().resolve(node)
        return _as_dispatcher(obj) if isinstance(node, ast.Attribute) else obj

    def _name_of(self, obj):
        return _builtin_name(obj)


_CUDA_WARP = _desugar.CUDA_WARP_FUNCTIONS


def _match_any(value):
    """Stands for the wave op behind numba.cuda's match_*_sync in rewritten code."""
    raise SIMTError("match_any_sync runs only inside a kernel")


class _MatchOp:
    """The lanes (of those that reach it together) holding this lane's value, bit for bit."""

    namespace, name, qualname, kind, params = "cuda", "match", "cuda.match_any_sync", "match", ("value",)


_MATCH = _MatchOp()
_SHFL = {
    "shfl_sync": "shuffle",
    "shfl_up_sync": "shuffleUp",
    "shfl_down_sync": "shuffleDown",
    "shfl_xor_sync": "shuffleXor",
}


class _CudaWarpFunctions(ast.NodeTransformer):
    """numba.cuda's warp functions as Wave ops (numba.cuda's return types)."""

    def __init__(self, resolver, name, filename):
        self.r = resolver
        self.name, self.filename = name, filename
        cuda = sys.modules.get("numba.cuda")
        self.table = (
            {}
            if cuda is None
            else {id(getattr(cuda, n)): (getattr(cuda, n), n) for n in _CUDA_WARP if hasattr(cuda, n)}
        )

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if _control.is_bit_count(node, self.r.resolve) and "numba.cuda" in sys.modules:
            # numba.cuda's int.bit_count() is cuda.popc (the bits of the value's own
            # type: 64 for int64(-1), where Python's and NumPy's method count |x|)
            self.r.closure["__nq_bit_count"] = sys.modules["numba.cuda"].popc
            return ast.copy_location(
                ast.Call(
                    func=ast.copy_location(ast.Name("__nq_bit_count", ast.Load()), f), args=[f.value], keywords=[]
                ),
                node,
            )
        if not self.table:
            return node
        obj = self.r.resolve(node.func)
        hit = self.table.get(id(obj))
        if hit is None or hit[0] is not obj:
            return node
        name, a = hit[1], node.args
        complaint = _desugar.warp_call_complaint(name, node)
        if complaint:
            # (the compiled targets' words; a 4th ``width`` was dropped here)
            raise NumquadCompileError(
                f"{self.name}: {complaint} (python target)", self.filename, getattr(node, "lineno", None)
            )

        def P(src, **kw):
            e = ast.parse(src, mode="eval").body

            class Sub(ast.NodeTransformer):
                def visit_Name(self, n):
                    return kw[n.id] if n.id in kw else n

            e = Sub().visit(e)
            for n in ast.walk(e):
                ast.copy_location(n, node)
            return e

        # each argument appears once below: evaluated once, as numba.cuda evaluates it
        if name in _SHFL:
            # PTX's shfl.sync reads the selector's low five bits (bval[4:0] = b[4:0])
            return P(f"__nq_Wave.{_SHFL[name]}(__nq_vote('{name}', V, 0, M), S & 31)", M=a[0], V=a[1], S=a[2])
        if name == "activemask":
            return P("__nq_Wave.ballot(True)")
        if name == "lanemask_lt":
            return P("__nq_np.uint32((__nq_np.uint64(1) << __nq_np.uint64(__nq_Wave.laneId())) - __nq_np.uint64(1))")
        m = "__nq_np.uint32(M)"
        if name == "match_any_sync":
            return P(f"__nq_np.int32(__nq_match(V) & {m})", M=a[0], V=a[1])
        if name == "match_all_sync":
            return P(f"__nq_vote('match_all', __nq_match(V), __nq_Wave.ballot(True), {m})", M=a[0], V=a[1])
        if name == "ballot_sync":
            return P(f"__nq_np.int32(__nq_Wave.ballot(Q) & {m})", M=a[0], Q=a[1])
        if name == "any_sync":
            return P(f"(__nq_Wave.ballot(Q) & {m}) != 0", M=a[0], Q=a[1])
        return P(f"__nq_vote('{name[:-5]}', __nq_Wave.ballot(Q), __nq_Wave.ballot(True), {m})", M=a[0], Q=a[1])


def _vote(kind, b, a, m):
    """numba.cuda's all_sync / eq_sync / match_all_sync from the ballot of the
    predicate (match_any's bits) *b*, the active lanes *a* and the mask *m* (uint32);
    a shuffle's name (*kind*) gives its value *b* back, checked as numba.cuda checks it
    (its mask evaluated)."""
    if kind in _SHFL:
        # numba.cuda's shfl_*_sync take 32- and 64-bit ints and floats (as cpu/cudaapi.py)
        if not isinstance(b, (int, float, np.int32, np.int64, np.float32, np.float64)) or isinstance(
            b, (bool, np.bool_)
        ):
            f = sys._getframe(1)
            got = np.asarray(b).dtype if isinstance(b, (np.generic, bool)) else type(b).__name__
            raise NumquadTypeError(
                f'File "{f.f_code.co_filename}", line {f.f_lineno}, in {f.f_code.co_name}: '
                f"{_desugar.shuffle_value_complaint(kind, got)} (python target)"
            )
        return b
    if kind == "all":
        return np.bool_((b & m) == (a & m))
    if kind == "eq":
        return np.bool_((b & m) == 0 or (b & m) == (a & m))
    eq = np.bool_((b & m) == (a & m))
    return np.int32(np.uint32(a & m) * np.uint32(eq)), eq


# ---------------------------------------------------------------------------
# Literals typed as Numba types them (int -> int64, float -> float64, bool -> bool)
# ---------------------------------------------------------------------------


def _np_literal(value):
    if isinstance(value, bool):
        return np.bool_(value)
    if isinstance(value, int):
        if -(2**63) <= value < 2**63:
            return np.int64(value)
        if 0 <= value < 2**64:
            return np.uint64(value)
        return value
    if isinstance(value, float):
        return np.float64(value)
    return value


def _typed_constant(value, depth=0):
    """A global's or a closure's Python scalar as Numba types it (``SCALE = 0.1`` is
    a float64, ``OFF = 100`` an int64, as a literal is: :func:`_np_literal`), in
    tuples and namedtuples too; anything else as it is. As a Python scalar, NumPy 2
    took it as weak: ``x_f32 * SCALE`` multiplied in float32, ``int8 + OFF`` wrapped."""
    if type(value) in (bool, int, float):
        return _np_literal(value)
    if type(value) is complex:
        return np.complex128(value)
    if isinstance(value, tuple) and depth < 8:
        items = [_typed_constant(v, depth + 1) for v in value]
        if type(value) is tuple:
            return tuple(items)
        if isinstance(getattr(type(value), "_fields", None), tuple):
            return type(value)._make(items)
    return value


def _fold(node):
    """The Python value of a constant expression as CPython's compiler folds it (the
    constant Numba and numba.cuda see: numquad/_power.py ``cpython_constant``), else
    _MISSING."""
    v = _power.cpython_constant(node)
    return _MISSING if v is _power.NOT_CONSTANT else v


_RANGE_TYPES = {}


def _range_type(args):
    """The loop variable type Numba gives ``range(*args)``: its overload resolution
    over range's int32, int64 and uint64 forms (``range(np.uint32(n))`` counts in
    uint64, ``range(np.uint32(n), -3, -1)`` in int64, ``range(np.int32(a),
    np.uint64(b))`` in int32); a Python int or bool is Numba's int64 or boolean."""
    key = tuple(type(a) for a in args)
    ty = _RANGE_TYPES.get(key)
    if ty is None:
        from numba import typeof
        from numba.core import types as nbt
        from numba.core.registry import cpu_target

        ctx = cpu_target.typing_context
        ctx.refresh()
        argtys = tuple(
            nbt.boolean if isinstance(a, (bool, np.bool_)) else nbt.int64 if isinstance(a, int) else typeof(a)
            for a in args
        )
        sig = ctx.resolve_function_type(ctx.resolve_value_type(range), argtys, {})
        if sig is None:
            raise TypeError(f"range() of {', '.join(map(str, argtys))}: Numba types no such range")
        ty = _RANGE_TYPES[key] = np.dtype(str(sig.return_type.dtype)).type
    return ty


_INT_TYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


def _float_to_int(t, x):
    """Float *x* as integer type *t*, as the GPU converts (docs/semantics.md,
    "Conversions"): toward zero, saturating to the range; an 8-bit result
    saturates to 16 bits and keeps the low 8 bits; a NaN gives 0x80...0 of the
    width from float64 into 16-64 bits and from float32 into 64 bits, else 0."""
    info = np.iinfo(t)
    lo, hi = (info.min, info.max) if info.bits > 8 else ((-(2**15), 2**15 - 1) if info.kind == "i" else (0, 2**16 - 1))
    v = float(x)
    if v != v:
        wide = not isinstance(x, np.float32) or info.bits == 64
        r = 1 << (info.bits - 1) if wide and info.bits > 8 else 0
    else:
        r = lo if v <= lo else hi if v >= hi else int(v)
    r &= (1 << info.bits) - 1
    if info.kind == "i" and r >= 1 << (info.bits - 1):
        r -= 1 << info.bits
    return t(r)


def _check_alignment(v):
    """numba.cuda's checks of a shared/local array's ``alignment=`` (its words;
    numquad/cpu/allocations.py ``_check_alignment`` for the CPU target)."""
    if v is None:
        return
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise NumquadCompileError(f"RequireLiteralValue: alignment must be a constant integer; got {v!r}")
    msg = _control.alignment_complaint(int(v))
    if msg:
        raise ValueError(f"{msg}; got {v}")


def _as_int32(x):
    """*x* converted to int32 as a numba.cuda ``i4`` parameter takes it: a float as
    the GPU converts, an integer wrapped to its low 32 bits."""
    if isinstance(x, (float, np.floating)):
        return _float_to_int(np.int32, x)
    return np.int64(int(x) & 0xFFFFFFFF).astype(np.uint32).astype(np.int32)


def _nq_toint(t, x):
    """``t(x)`` in a kernel, for an integer type *t* (``int`` is int64 for a float)."""
    if isinstance(x, (float, np.floating)):
        return _float_to_int(np.int64 if t is int else t, x)
    if t is int:
        # Numba's int() of an integer keeps its type (int(uint8) is a uint8), of a bool
        # is an int64; a Python int here made np.uint64(int(x)) of a negative x raise
        # OverflowError where the compiled code wraps
        return x if isinstance(x, np.integer) else np.int64(x)
    return t(x)


def _round_to(x, ndigits):
    """``round(x, ndigits)`` as numba.cuda computes it (a float32 in float64):
    ``y = x * 10**ndigits`` rounded to an int64 (half to even, converted as the GPU
    converts, so -0.0 gives +0.0), a tie fixed to even, then divided back."""
    t = type(x)
    v, nd = np.float64(x), int(ndigits)
    if not np.isfinite(v):
        r = v
    else:
        if nd >= 0:
            pow1, pow2 = (
                (np.float64(10.0) ** (nd - 22), np.float64(1e22))
                if nd > 22
                else (np.float64(10.0) ** nd, np.float64(1.0))
            )
            y = (v * pow1) * pow2
        else:
            pow1, pow2 = np.float64(10.0) ** -nd, np.float64(1.0)
            y = v / pow1
        if np.isinf(y):
            r = v
        else:
            z = np.float64(_float_to_int(np.int64, np.rint(y)))
            if abs(y - z) == 0.5:
                z = np.float64(2.0) * np.float64(_float_to_int(np.int64, np.rint(y / 2.0)))
            r = (z / pow2) / pow1 if nd >= 0 else z * pow1
    return t(r) if isinstance(x, np.floating) else float(r)


_TO_INT = {math.floor: np.floor, math.ceil: np.ceil, math.trunc: np.trunc, round: np.rint}


def _nq_intfn(fn, *args):
    """``round(x)`` of a float: an int64 converted as above; ``round(x, ndigits)`` as
    :func:`_round_to`. ``math.floor(x)``, ``math.ceil``, ``math.trunc`` are floats,
    as numba.cuda types them: float32 of a float32, float64 of anything else."""
    x = args[0]
    if fn is not round and len(args) == 1 and isinstance(x, (int, float, np.integer, np.floating, np.bool_)):
        t = np.float32 if isinstance(x, np.float32) else np.float64
        return _TO_INT[fn](t(x))
    if isinstance(x, (float, np.floating)):
        if len(args) == 2:
            return _round_to(x, args[1])
        return _float_to_int(np.int64, _TO_INT[fn](np.float64(x)))
    if fn is round and len(args) == 1 and isinstance(x, (np.integer, np.bool_)):
        # numba.cuda's round takes floats only: an integer converts to the case
        # Numba's typing picks (float32 where that is safe), then rounds to int64
        t = np.float32 if isinstance(x, _SAFE_TO_F32) else np.float64
        return _float_to_int(np.int64, np.rint(t(x)))
    return fn(*args)


# math functions as numba and numba.cuda compute them: NumPy's ufuncs on float32
# and float64 (a domain error gives NaN, an overflow inf, where Python's math raises)
_MATH_UFUNC = {
    "sqrt": np.sqrt,
    "exp": np.exp,
    "expm1": np.expm1,
    "exp2": np.exp2,
    "log": np.log,
    "log1p": np.log1p,
    "log10": np.log10,
    "log2": np.log2,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "atan2": np.arctan2,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "hypot": np.hypot,
    "fabs": np.fabs,
    "pow": np.power,
    "fmod": np.fmod,
    "copysign": np.copysign,
    "degrees": np.degrees,
    "radians": np.radians,
    "nextafter": np.nextafter,
}
# no ufunc: Python's math, and the C library's special values where it raises
_MATH_RAISING = ("erf", "erfc", "gamma", "lgamma", "remainder", "ldexp", "frexp")


def _math_special(name, x, *rest):
    """The C library's result where Python's ``math.<name>`` raises."""
    if math.isnan(x) or any(math.isnan(r) for r in rest):
        return math.nan
    if name == "gamma":  # tgamma: +-0 -> +-inf, a negative integer -> NaN, else overflow
        if x == 0:
            return math.copysign(math.inf, x)
        return math.nan if x < 0 and (math.isinf(x) or x == math.floor(x)) else math.inf
    if name == "lgamma":  # a pole or an overflow
        return math.inf
    return math.nan  # remainder(x, 0), remainder(inf, y)


# numba.cuda types pow with the cases (f32, f32), (f64, f64), (f32, i32), (f64, i32) and
# ldexp with (f32, i32), (f64, i32), and Numba picks the first case with the fewest
# unsafe, then safe, then promoting conversions of the arguments. The kinds, as Numba's
# conversion rules give them for the three types those cases take: 0 exact, 1 promote,
# 2 safe, 3 unsafe.
_SAFE_TO_F32 = (np.bool_, np.int8, np.int16, np.uint8)  # Numba converts these to float32 safely


def _conversion(src, dst):
    if src is dst:
        return 0
    if dst is np.float32:
        return 2 if src in _SAFE_TO_F32 else 3
    if dst is np.float64:
        return 1 if src is np.float32 else 2
    if src in (np.int8, np.int16):  # to int32
        return 1
    return 2 if src in (np.bool_, np.uint8, np.uint16) else 3


_POW_CASES = ((np.float32, np.float32), (np.float64, np.float64), (np.float32, np.int32), (np.float64, np.int32))


def _scalar_type(v):
    if isinstance(v, (np.generic, bool)):
        return np.asarray(v).dtype.type
    return np.int64 if isinstance(v, int) else np.float64


def _pow_ldexp(name, x, y):
    tys = (_scalar_type(x), _scalar_type(y))
    cases = _POW_CASES if name == "pow" else _POW_CASES[2:]

    def rating(case):
        kinds = [_conversion(s, d) for s, d in zip(tys, case)]
        return kinds.count(3), kinds.count(2), kinds.count(1)

    t, ty = min(cases, key=rating)  # the first of equals, as Numba
    if ty is np.int32:
        n = (
            _float_to_int(np.int32, y)
            if tys[1] in (np.float32, np.float64)
            else np.asarray(y).astype(np.int64).astype(np.int32)
        )
        if name == "ldexp":
            with np.errstate(all="ignore"):
                return np.ldexp(t(x), n)
        y = n
    try:  # C's pow (np.power(-0.0, 0.5) is -0.0, C's +0.0)
        return t(math.pow(float(t(x)), float(y if ty is np.int32 else t(y))))
    except (ValueError, OverflowError):
        with np.errstate(all="ignore"):
            return np.power(t(x), t(y))


def _nq_math(fn, *args):
    """``math.<fn>(*args)`` with float arguments: typed and valued as the compiled
    targets compute it (float32 stays float32; an int or a Python float is float64)."""
    if not args or not all(isinstance(a, (int, float, np.integer, np.floating, np.bool_)) for a in args):
        return fn(*args)
    name = fn.__name__
    if name in ("pow", "ldexp"):
        return _pow_ldexp(name, *args)
    if name == "frexp":  # numba.cuda: (float32, int32) of a float32, bool, int8, int16, uint8
        m, e = np.frexp(_cuda_float(args[0]).type(args[0]))
        return m, np.int32(e)
    args = [a if isinstance(a, np.floating) else np.float64(a) for a in args]
    uf = _MATH_UFUNC.get(name)
    if uf is not None:
        with np.errstate(all="ignore"):
            return uf(*args)
    if name in _MATH_RAISING:
        t = np.result_type(*args).type
        try:
            r = fn(*args)
        except (ValueError, OverflowError):
            r = _math_special(name, *(float(a) for a in args))
        return t(r)
    return fn(*args)


_BINOPS = _power.BINARY_OPS


_BINOP_BY_NAME = {k.__name__: v for k, v in _BINOPS.items()}


def _binop_call(left, op, right, inplace=False):
    """``left op right`` as an expression; integer operators through :func:`_nq_binop`
    (*inplace*: ``left op= right``, in place where *left* is an array)."""
    fn = _BINOPS.get(type(op))
    if fn is None:
        return ast.BinOp(left=left, op=op, right=right)
    return ast.Call(
        func=ast.Name("__nq_binop", ast.Load()),
        args=[ast.Constant(type(op).__name__), left, right, ast.Constant(inplace)],
        keywords=[],
    )


#: What the running launch asks for: ``debug`` (a division by zero raises).
class _Mode(threading.local):
    debug = False  # (in every thread)


_mode = _Mode()
_DIVISIONS = (operator.truediv, operator.floordiv, operator.mod)


class _debug_mode:
    """``with _debug_mode(d):`` runs *d*'s threads with its ``debug`` flag."""

    def __init__(self, d):
        # (fastmath=True too: no check, as the CPU target's error model, cpu/dispatch.py)
        self.debug = bool(getattr(d, "debug", False)) and not getattr(d, "fastmath", False)

    def __enter__(self):
        self.prev = _mode.debug
        _mode.debug = self.debug

    def __exit__(self, *exc):
        _mode.debug = self.prev


def _nq_binop(opname, a, b, inplace=False):
    """``a <op> b`` as the compiled targets compute it: two integers or bools (NumPy
    scalars) are first widened as Numba types the operator, to uint64 when both are
    unsigned and to int64 otherwise (a shift: by the left operand's signedness; a bool
    is signed, and ``& | ^`` of two bools stay bool), so ``int32 + int32`` and
    ``uint8 + uint8`` do not wrap where the compiled code does not. An integer power
    with a negative exponent is Numba's too (0 for |a| > 1, the type's 0x80..0 for a
    zero base) where NumPy raises; a float to an integer power and uint16 with float32
    as :func:`_float_int_power` and Numba say."""
    fn = _BINOP_BY_NAME[opname]
    if _mode.debug and fn in _DIVISIONS and not isinstance(b, np.ndarray) and b == 0:
        # debug=True: Numba's "python" error model, as numba.cuda compiles a debug build
        raise ZeroDivisionError(
            "integer division by zero"
            if isinstance(a, (np.integer, np.bool_)) and fn is not operator.truediv
            else "division by zero"
        )
    if inplace and isinstance(a, np.ndarray):
        return getattr(operator, "i" + fn.__name__.rstrip("_"))(a, b)
    if isinstance(a, np.floating) and isinstance(b, np.integer):
        if fn is operator.pow:
            return _float_int_power(a, b)
        if isinstance(b, np.uint16) and isinstance(a, np.float32):
            a = np.float64(a)  # Numba: uint16 and float32 meet in float64
    elif isinstance(b, np.floating) and isinstance(a, np.integer):
        if isinstance(a, np.uint16) and isinstance(b, np.float32):
            b = np.float64(b)
    if fn is operator.truediv and isinstance(a, (np.integer, np.bool_)) and isinstance(b, (np.integer, np.bool_)):
        # Numba's int / int: each operand to float64 (uint64 / int64 too: not both to int64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.float64(a) / np.float64(b)
    both_bool = isinstance(a, np.bool_) and isinstance(b, np.bool_)
    if (
        isinstance(a, (np.integer, np.bool_))
        and isinstance(b, (np.integer, np.bool_))
        and not (both_bool and fn in (operator.and_, operator.or_, operator.xor))
    ):
        # (a bool counts as a signed integer: True + True is 2, as in Numba)
        if fn is operator.lshift or fn is operator.rshift:
            t = np.uint64 if a.dtype.kind == "u" else np.int64
        else:
            t = np.uint64 if a.dtype.kind == "u" and b.dtype.kind == "u" else np.int64
        if fn is operator.pow:
            return _int_power(t, a, b)
        a, b = t(a), t(b)
        if (fn is operator.floordiv or fn is operator.mod) and t is np.int64 and b == -1:
            # Numba's signed division: MIN // -1 is 0 (and MIN % -1), where NumPy wraps
            return t(-int(a)) if fn is operator.floordiv and a != np.iinfo(np.int64).min else t(0)
    return fn(a, b)


def _int_power(t, a, b):
    """``a ** b`` of integers as Numba computes it in its result type *t*: the base
    converted to *t* first, the exponent in its own type (a uint64 exponent is never
    negative); a negative exponent gives 0 for a base other than 1, -1 and 0 (the
    type's 0x80..0); past 65536, C's ``pow`` of the floats, converted back as the GPU
    converts (saturating); else the power, wrapping."""
    a, e = t(a), int(b)
    if e < 0:
        if a == 0:
            return t(np.uint64(1) << np.uint64(63))
        if a != 1 and a != -1:
            return t(0)
        return t(1 if a == 1 or e % 2 == 0 else -1)
    if e > 0x10000:
        with np.errstate(all="ignore"):
            return _float_to_int(t, np.power(np.float64(a), np.float64(e)))
    v = pow(int(a), e, 1 << 64)
    return t(v - (1 << 64) if t is np.int64 and v >= 1 << 63 else v)


def _float_int_power(a, b):
    """A float to an integer power as Numba computes it (and so both compiled
    targets): square-and-multiply in the float's type, then 1 / r for a negative
    exponent (the infinity of r's sign where r is 0: docs/semantics.md); past 65536,
    C's ``pow`` in float64. NumPy's power of two arrays rounds differently."""
    t = type(a)
    e = int(b)
    if abs(e) > 0x10000:
        with np.errstate(all="ignore"):  # C's pow, as the compiled math.pow: inf, not OverflowError
            return t(np.power(np.float64(a), np.float64(e)))
    r, x, k = t(1.0), a, abs(e)
    with np.errstate(all="ignore"):
        while k:
            if k & 1:
                r = t(r * x)
            k >>= 1
            x = t(x * x)
        return t(t(1.0) / r) if e < 0 else r


def _nq_unop(opname, v):
    """``-v``, ``+v`` and ``~v`` with Numba's result: of a bool, ``-v`` and ``+v`` are
    int64 (NumPy refuses them); of an integer, the operator wraps in the operand's
    width and the result widens to int64 (signed) or uint64 (unsigned), so
    ``-np.uint8(200)`` is ``np.uint64(56)`` and ``-np.int8(-128)`` is ``np.int64(-128)``."""
    if isinstance(v, (bool, np.bool_)):
        if opname == "Invert":
            return ~v
        return np.int64(-int(v)) if opname == "USub" else np.int64(int(v))
    if isinstance(v, np.integer):
        bits = v.dtype.itemsize * 8
        x = int(v)
        r = (-x if opname == "USub" else ~x if opname == "Invert" else x) & ((1 << bits) - 1)
        if v.dtype.kind == "u":
            return np.uint64(r)
        return np.int64(r - (1 << bits) if r >> (bits - 1) else r)
    return -v if opname == "USub" else (~v if opname == "Invert" else +v)


_CMPOPS = {
    "Eq": operator.eq,
    "NotEq": operator.ne,
    "Lt": operator.lt,
    "LtE": operator.le,
    "Gt": operator.gt,
    "GtE": operator.ge,
}


def _nq_cmp(opname, a, b):
    """``a <op> b`` for one comparison operator: a uint64 and a signed 64-bit integer
    meet in float64 as Numba types them on both compiled targets (``2**63 + 1 ==
    2**63 - 1`` is True there); NumPy 2 compares them exactly. (A narrower signed
    integer gives the same answer either way.)"""
    if (isinstance(a, np.uint64) and isinstance(b, (np.int64, int)) and not isinstance(b, (bool, np.bool_))) or (
        isinstance(b, np.uint64) and isinstance(a, (np.int64, int)) and not isinstance(a, (bool, np.bool_))
    ):
        a, b = np.float64(a), np.float64(b)
    return _CMPOPS[opname](a, b)


def _nq_cmpchain(ops, a, *later):
    """``a <op0> b <op1> c ...``: each link as :func:`_nq_cmp`, *later* the operands
    after the first as functions called in order while the links hold."""
    r = True
    for op, get in zip(ops, later):
        b = get()
        r = _nq_cmp(op, a, b)
        if not r:
            return r
        a = b
    return r


def _nq_store(value, ary, idx):
    """``ary[idx] = value`` (evaluated in Python's order: the value, the array, the
    index): a float stored into an integer array converts as above, an integer wraps
    to the array's width."""
    if isinstance(value, (float, np.floating)) and isinstance(ary, np.ndarray) and ary.dtype.kind in "iu":
        value = _float_to_int(ary.dtype.type, value)
    elif (
        isinstance(value, (int, np.integer))
        and not isinstance(value, (bool, np.bool_))
        and isinstance(ary, np.ndarray)
        and ary.dtype.kind in "iu"
    ):
        # an integer stored into a narrower integer array wraps (C's conversion, as
        # Numba compiles it); NumPy would raise OverflowError
        value = np.uint64(int(value) & 0xFFFF_FFFF_FFFF_FFFF).astype(ary.dtype)
    ary[idx] = value


def _nq_range(*args):
    ty = _range_type(args)
    return map(ty, range(*[int(a) for a in args]))


_UNIFIED = {}


def _numba_type(v):
    """Numba's type of the scalar *v* (a Python int an int64, a float a float64)."""
    from numba import typeof
    from numba.core import types as nbt

    return (
        nbt.boolean
        if isinstance(v, (bool, np.bool_))
        else nbt.int64
        if isinstance(v, int)
        else nbt.float64
        if isinstance(v, float)
        else typeof(v)
    )


def _unified_dtype(args):
    """The NumPy dtype of Numba's unification of the scalars *args*' types (int64
    with uint64: float64), or None where Numba has none (or one is no scalar)."""
    if not all(isinstance(a, (bool, int, float, np.bool_, np.integer, np.floating)) for a in args):
        return None
    key = tuple(type(a) for a in args)
    dt = _UNIFIED.get(key, _MISSING)
    if dt is _MISSING:
        from numba.core import types as nbt
        from numba.core.registry import cpu_target

        unified = cpu_target.typing_context.unify_types(*map(_numba_type, args))
        dt = _UNIFIED[key] = (
            None if unified is None else np.dtype(np.bool_) if unified == nbt.boolean else np.dtype(str(unified))
        )
    return dt


def _nq_boolop(is_or, thunks, peeks):
    """``a or b or ...`` (``and``: *is_or* False) with the type Numba gives it, all the
    operands' types unified: the operands run in Python's order while the result is
    open; an operand not run is peeked where it is a constant or a name (*peeks*)."""
    vals = []
    for t in thunks:
        v = t()
        vals.append(v)
        if bool(v) if is_or else not bool(v):
            break
    v, others = vals[-1], vals[:-1]
    for peek in peeks[len(vals) :]:
        if peek is None:
            return v
        try:
            others.append(peek())
        except Exception:  # noqa: BLE001 - a name not bound on this path
            return v
    return _as_unified(v, others)


def _as_unified(v, others):
    """*v* converted to the type Numba unifies from *v*'s and *others*' types."""
    dt = _unified_dtype([v] + list(others))
    return v if dt is None or (isinstance(v, np.generic) and v.dtype == dt) else dt.type(v)


def _nq_abs(x):
    """``abs(x)``: of a bool, Numba's int8."""
    return np.int8(x) if isinstance(x, (bool, np.bool_)) else abs(x)


def _nq_pick(c, then, other, peek_then, peek_other):
    """``then() if c else other()`` with the type Numba gives the expression: both
    sides' types unified (``x_f32 if c else 0`` is a float64, ``x_i8 if c else 1000``
    an int64), where the side not taken is a constant or a name (*peek_*: it read
    without side effects; None where it is anything else: the taken side's type)."""
    v = then() if c else other()
    peek = peek_other if c else peek_then
    if peek is None:
        return v
    try:
        w = peek()
    except Exception:  # noqa: BLE001 - a name not bound on this path
        return v
    return _as_unified(v, [w])


def _nq_minmax(fn, *args):
    """``max``/``min`` of scalars with their types unified as Numba's typing unifies
    them (``max(int64, uint64)`` compares and returns float64s)."""
    dt = _unified_dtype(args)
    if dt is None:
        return fn(*args)
    if len(args) == 2 and dt.kind == "f" and all(isinstance(a, (float, np.floating)) for a in args):
        # two floats: numba.cuda's libdevice fmax/fmin (numquad/cpu/cudaapi.py cuda_max)
        return (_cmax if fn is max else _cmin)(*[dt.type(a) for a in args])
    return fn(*[dt.type(a) for a in args])


_DIVMOD_TYPES = {}


def _nq_divmod(a, b):
    """``divmod(a, b)`` of scalars as Numba types it: both arguments converted to the
    case its typing picks (int64, uint64, float32 or float64: ``divmod(uint64,
    int64)`` is float64s, ``divmod(int8, int8)`` int64s), then both parts as the
    operators compute them (:func:`_nq_binop`)."""
    if not all(isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating)) for v in (a, b)):
        return divmod(a, b)
    key = (type(a), type(b))
    dt = _DIVMOD_TYPES.get(key, _MISSING)
    if dt is _MISSING:
        from numba.core.registry import cpu_target

        try:
            sig = cpu_target.typing_context.resolve_function_type(divmod, (_numba_type(a), _numba_type(b)), {})
        except Exception:  # noqa: BLE001 - no case: the operators' own types
            sig = None
        dt = _DIVMOD_TYPES[key] = None if sig is None else np.dtype(str(sig.args[0]))
    if dt is not None:
        a, b = dt.type(a), dt.type(b)
    return _nq_binop("FloorDiv", a, b), _nq_binop("Mod", a, b)


def _nq_text(v):
    if isinstance(v, tuple):
        return "(" + ", ".join(map(_nq_text, v)) + ("," if len(v) == 1 else "") + ")"
    return str(v)


def _nq_print(*args, **kwargs):
    print(*[_nq_text(a) if isinstance(a, tuple) else a for a in args], **kwargs)


def _nq_iter(obj):
    if isinstance(obj, (tuple, list)):
        return iter([_np_literal(v) if isinstance(v, (bool, int, float)) else v for v in obj])
    return iter(obj)


# ---------------------------------------------------------------------------
# The source transformation: a lane function/kernel -> a generator function
# ---------------------------------------------------------------------------

K_OP, K_SYNCWARP, K_SYNCTHREADS = 0, 1, 2
_TOKENS = itertools.count()

_DIM_ATTR = {"threadIdx": "t", "blockIdx": "b", "blockDim": "d", "gridDim": "g"}
_SYNC_REDUCE = ("syncthreads_count", "syncthreads_and", "syncthreads_or")
_DEVICE_FUNCTIONS = tuple(n for n in _xpu.CUDA_FUNCTIONS if n not in _SYNC_REDUCE) + _CACHE_HINTS


def _literal_int(node):
    """The integer an integer literal, or arithmetic on literals, writes (``4``, ``-1``,
    ``2 ** 5``: a constant selector, which must be in the op's range); else None."""
    if isinstance(node, ast.Constant):
        v = node.value
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _literal_int(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp):
        a, b = _literal_int(node.left), _literal_int(node.right)
        fold = {
            ast.Add: lambda: a + b,
            ast.Sub: lambda: a - b,
            ast.Mult: lambda: a * b,
            ast.Pow: lambda: a**b if 0 <= b <= 64 else None,
        }.get(type(node.op))
        return None if a is None or b is None or fold is None else fold()
    return None


class _Transformer(ast.NodeTransformer):
    def __init__(self, dispatcher_name, filename, resolver, helpers):
        self.name = dispatcher_name
        self.filename = filename
        self.r = resolver
        self.helpers = helpers  # name -> object, passed in through the factory
        self.ids = itertools.count(1)
        self.loops = []  # (loop id, counter name)
        # shared arrays and barriers are named per function: (function, site)
        self.token = f"{filename}:{dispatcher_name}:{next(_TOKENS)}"

    # -- helpers --------------------------------------------------------------
    def error(self, msg, node):
        raise NumquadCompileError(f"{self.name}: {msg} (python target)", self.filename, getattr(node, "lineno", None))

    def helper(self, obj, stem):
        for k, v in self.helpers.items():
            if v is obj:
                return k
        name = f"__nq_{stem}{len(self.helpers)}"
        self.helpers[name] = obj
        return name

    def key(self, site):
        elts = []
        for lid, cname in self.loops:
            elts.append(ast.Constant(lid))
            elts.append(ast.Name(cname, ast.Load()))
        elts += [ast.Constant(site), ast.Constant(0)]
        return ast.BinOp(
            left=ast.Name("__nq_pre", ast.Load()), op=ast.Add(), right=ast.Tuple(elts=elts, ctx=ast.Load())
        )

    @staticmethod
    def T(attr):
        return ast.Attribute(value=ast.Name("__nq_T", ast.Load()), attr=attr, ctx=ast.Load())

    def yield_(self, kind, key, payload, args):
        return ast.Yield(
            value=ast.Tuple(
                elts=[ast.Constant(kind), key, payload, ast.Tuple(elts=args, ctx=ast.Load())], ctx=ast.Load()
            )
        )

    # -- function ---------------------------------------------------------------
    def visit_FunctionDef(self, fn):
        if getattr(self, "_seen_fn", False):
            self.error("nested functions are not supported", fn)
        self._seen_fn = True
        # a constant default as Numba types an omitted argument's constant (``n=300``
        # an int64, ``eps=0.1`` a float64), as a literal in the body is
        fn.args.defaults = [self.visit_Constant(v) if isinstance(v, ast.Constant) else v for v in fn.args.defaults]
        fn.body = self.block(fn.body)
        lead = [ast.arg("__nq_T"), ast.arg("__nq_pre")]
        if fn.args.posonlyargs:  # (def f(x, /): x stays the first argument)
            fn.args.posonlyargs = lead + fn.args.posonlyargs
        else:
            fn.args.args = lead + fn.args.args
        fn.decorator_list = []
        fn.returns = None
        # make sure it is a generator even without any op
        fn.body.append(ast.If(test=ast.Constant(False), body=[ast.Expr(ast.Yield(None))], orelse=[]))
        return fn

    def block(self, stmts):
        out = []
        for s in stmts:
            r = self.visit(s)
            if isinstance(r, list):
                out.extend(r)
            elif r is not None:
                out.append(r)
        return out or [ast.Pass()]

    def visit_Lambda(self, node):
        self.error("lambdas are not supported inside a kernel", node)

    def visit_ListComp(self, node):
        self.error("comprehensions are not supported inside a kernel", node)

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    # -- loops --------------------------------------------------------------------
    def visit_While(self, s):
        lid = next(self.ids)
        cname = f"__nq_it{lid}"
        self.loops.append((lid, cname))
        test = self.visit(s.test)
        body = self.block(s.body)
        self.loops.pop()
        init = ast.Assign(targets=[ast.Name(cname, ast.Store())], value=ast.Constant(-1))
        inc = ast.AugAssign(target=ast.Name(cname, ast.Store()), op=ast.Add(), value=ast.Constant(1))
        exit_ = [ast.Break()]
        out = [init]
        if s.orelse:
            # the else clause runs when the test ends the loop, not after a break; it
            # belongs to the enclosing level (its break/continue leave the outer loop)
            done = f"__nq_done{lid}"
            out.append(ast.Assign(targets=[ast.Name(done, ast.Store())], value=ast.Constant(False)))
            exit_.insert(0, ast.Assign(targets=[ast.Name(done, ast.Store())], value=ast.Constant(True)))
        brk = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=test), body=exit_, orelse=[])
        out.append(ast.While(test=ast.Constant(True), body=[inc, brk] + body, orelse=[]))
        if s.orelse:
            out.append(ast.If(test=ast.Name(done, ast.Load()), body=self.block(s.orelse), orelse=[]))
        return [ast.fix_missing_locations(ast.copy_location(n, s)) for n in out]

    def visit_For(self, s):
        it = self.visit(s.iter)
        lid = next(self.ids)
        cname = f"__nq_it{lid}"
        self.loops.append((lid, cname))
        target = self.visit(s.target)
        body = self.block(s.body)
        self.loops.pop()
        init = ast.Assign(targets=[ast.Name(cname, ast.Store())], value=ast.Constant(-1))
        inc = ast.AugAssign(target=ast.Name(cname, ast.Store()), op=ast.Add(), value=ast.Constant(1))
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "__nq_range"):
            it = ast.Call(func=ast.Name("__nq_iter", ast.Load()), args=[it], keywords=[])
        # Python's own for/else: the else clause runs unless a break left the loop
        orelse = self.block(s.orelse) if s.orelse else []
        loop = ast.For(target=target, iter=it, body=[inc] + body, orelse=orelse)
        return [ast.copy_location(n, s) for n in (init, loop)]

    def visit_AsyncFor(self, s):
        self.error("async for is not supported", s)

    def visit_Assert(self, s):
        """``assert c, msg`` as ``if not c: raise AssertionError(msg)`` (the thread in its
        message, as the CPU target gives it: numquad/_userraise.py)."""
        return self.visit(_userraise.assert_as_raise(s))

    def visit_Raise(self, s):
        """``raise E(args)`` of a plain exception class: with the thread's ids first, as
        the CPU target raises it (numquad/_userraise.py: the launch prefixes the message)."""
        exc = s.exc
        call = exc if isinstance(exc, ast.Call) else ast.Call(func=exc, args=[], keywords=[])
        plain = (
            exc is not None
            and not call.keywords
            and isinstance(call.func, (ast.Name, ast.Attribute))
            and not any(isinstance(a, ast.Starred) for a in call.args)
            and _userraise.plain_exception_class(self.r.resolve(call.func))
        )
        self.generic_visit(s)
        if plain:
            call = s.exc if isinstance(s.exc, ast.Call) else ast.Call(func=s.exc, args=[], keywords=[])
            where = [self.T(f"t{a}") for a in "xyz"] + [self.T(f"b{a}") for a in "xyz"]
            s.exc = ast.copy_location(
                ast.Call(func=call.func, args=[ast.Constant(_userraise.USER_RAISE)] + where + call.args, keywords=[]),
                s.exc,
            )
        return s

    def visit_Try(self, s):
        self.error("try is not supported inside a kernel", s)

    # -- expressions --------------------------------------------------------------
    def visit_Constant(self, node):
        if isinstance(node.value, (bool, int, float)):
            v = _np_literal(node.value)
            if isinstance(v, np.generic):
                return ast.copy_location(self.literal(v), node)
        return node

    def literal(self, v):
        ctor = {np.bool_: "bool_", np.int64: "int64", np.uint64: "uint64", np.float64: "float64"}[type(v)]
        arg = ast.Constant(bool(v) if isinstance(v, np.bool_) else (float(v) if isinstance(v, np.float64) else int(v)))
        return ast.Call(
            func=ast.Attribute(value=ast.Name("__nq_np", ast.Load()), attr=ctor, ctx=ast.Load()),
            args=[arg],
            keywords=[],
        )

    def _folded(self, node):
        """A constant expression as one typed literal, else None."""
        v = _fold(node)
        if v is not _MISSING:
            lit = _np_literal(v)
            if isinstance(lit, np.generic):
                return ast.copy_location(self.literal(lit), node)
        return None

    def visit_UnaryOp(self, node):
        folded = self._folded(node)
        if folded is not None:
            return folded
        node = self.generic_visit(node)
        if isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            return ast.copy_location(
                ast.Call(
                    func=ast.Name("__nq_unop", ast.Load()),
                    args=[ast.Constant(type(node.op).__name__), node.operand],
                    keywords=[],
                ),
                node,
            )
        if isinstance(node.op, ast.Not):
            # Numba's boolean, not Python's bool (which NumPy takes as a weak scalar:
            # (not b) - u16 would compute in uint16)
            return ast.copy_location(
                ast.Call(
                    func=ast.Attribute(ast.Name("__nq_np", ast.Load()), "bool_", ast.Load()), args=[node], keywords=[]
                ),
                node,
            )
        return node

    @staticmethod
    def _thunk(body):
        return ast.Lambda(
            args=ast.arguments(
                posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
            ),
            body=body,
        )

    def _peek(self, side):
        """A function reading *side* where that has no effect (a constant, a literal's
        call, a name), else None."""
        cheap = isinstance(side, (ast.Name, ast.Constant)) or (
            isinstance(side, ast.Call)
            and isinstance(side.func, ast.Attribute)
            and isinstance(side.func.value, ast.Name)
            and side.func.value.id == "__nq_np"
            and all(isinstance(a, ast.Constant) for a in side.args)
        )
        return self._thunk(copy.deepcopy(side)) if cheap else ast.Constant(None)

    @staticmethod
    def _switches(*sides):
        return any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for side in sides for n in ast.walk(side))

    @staticmethod
    def _at(call, node):
        for n in ast.walk(call):
            if "lineno" in n._attributes:
                ast.copy_location(n, node)
        return call

    def visit_IfExp(self, node):
        """``x if c else y`` through :func:`_nq_pick`, which gives it Numba's unified
        type, where neither side holds an op (a thread's switch point)."""
        node = self.generic_visit(node)
        if self._switches(node.body, node.orelse):
            return node
        return self._at(
            ast.Call(
                func=ast.Name("__nq_pick", ast.Load()),
                args=[
                    node.test,
                    self._thunk(node.body),
                    self._thunk(node.orelse),
                    self._peek(node.body),
                    self._peek(node.orelse),
                ],
                keywords=[],
            ),
            node,
        )

    def visit_BoolOp(self, node):
        """``a or b`` / ``a and b`` through :func:`_nq_boolop` (Numba's unified type)."""
        node = self.generic_visit(node)
        if self._switches(*node.values):
            return node
        return self._at(
            ast.Call(
                func=ast.Name("__nq_boolop", ast.Load()),
                args=[
                    ast.Constant(isinstance(node.op, ast.Or)),
                    ast.List(elts=[self._thunk(v) for v in node.values], ctx=ast.Load()),
                    ast.List(elts=[self._peek(v) for v in node.values], ctx=ast.Load()),
                ],
                keywords=[],
            ),
            node,
        )

    def visit_Compare(self, node):
        """A single ``a <op> b`` through :func:`_nq_cmp` (Numba's mixed-sign rule); a
        chain ``a < b < c`` stays Python's."""
        folded = self._folded(node)
        if folded is not None:
            return folded
        node = self.generic_visit(node)
        if len(node.ops) == 1 and type(node.ops[0]).__name__ in _CMPOPS:
            return ast.copy_location(
                ast.Call(
                    func=ast.Name("__nq_cmp", ast.Load()),
                    args=[ast.Constant(type(node.ops[0]).__name__), node.left, node.comparators[0]],
                    keywords=[],
                ),
                node,
            )
        if all(type(op).__name__ in _CMPOPS for op in node.ops) and not self._switches(*node.comparators):
            # a chain: each link through _nq_cmp, a later operand evaluated only where
            # the links before it hold (Python's order; a later operand holds no op)
            return self._at(
                ast.Call(
                    func=ast.Name("__nq_cmpchain", ast.Load()),
                    args=[ast.Constant(tuple(type(op).__name__ for op in node.ops)), node.left]
                    + [self._thunk(c) for c in node.comparators],
                    keywords=[],
                ),
                node,
            )
        return node

    def visit_BinOp(self, node):
        """Integer operators with Numba's result type (:func:`_nq_binop`)."""
        folded = self._folded(node)
        if folded is not None:
            return folded
        node = self.generic_visit(node)
        return ast.copy_location(_binop_call(node.left, node.op, node.right), node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            b = self.r.builtin(node)
            if b is not None:
                return ast.copy_location(self.builtin_value(b, node), node)
        return node

    def visit_Attribute(self, node):
        if isinstance(node.ctx, ast.Load):
            b = self.r.builtin(node)
            if b is not None:
                return ast.copy_location(self.builtin_value(b, node), node)
            obj = self.r.resolve(node)
            if obj is not _MISSING and _ops.of_function(obj) is not None:
                self.error(f"{_ops.of_function(obj).qualname} must be called", node)
        return self.generic_visit(node)

    def builtin_value(self, b, node):
        if "." in b:
            group, comp = b.split(".", 1)
            if group in _DIM_ATTR and comp in ("x", "y", "z"):
                return self.T(_DIM_ATTR[group] + comp)
        if b in _DIM_ATTR:  # t = cuda.threadIdx; t.x
            return self.T("dim3_" + b)
        if b in ("laneid", "warpsize"):
            return self.T(b)
        if b in ("grid", "gridsize"):
            return self.T(b)
        if b == "quad_grid":
            self.error("xpu.quad_grid must be called", node)
        if b.startswith("atomic."):
            return self.T("atomic_" + b.split(".")[1])
        if b in _DEVICE_FUNCTIONS:
            return self.T(b)
        if b == "const.array_like":
            return self.T("const_array_like")
        if b == "local.array":
            return self.T("local_array")
        if b in ("shared.array", "syncthreads", "syncwarp"):
            self.error(f"xpu.{b} must be called", node)
        self.error(f"xpu.{b} is not supported by the python target", node)

    def visit_Call(self, node):
        f = node.func
        d = self.r.resolve(f)
        foreign = getattr(d, "_numquad_foreign", None)
        if _xpu.is_numba_function(foreign) and not foreign._can_compile:
            self.error(
                f"`{ast.unparse(f)}` is a plain Numba function with an explicit signature, which "
                f"numba.cuda cannot compile for the GPU (using cpu function on device); drop the "
                f"signature, or make it a device function",
                node,
            )
        b = self.r.builtin(f)
        if b in ("shared.array", "local.array"):
            complaint = _control.allocation_complaint(b, node, self.r.resolve, _MISSING)
            if complaint is not None:
                self.error(complaint, node)
        if b is not None:
            if b == "syncthreads" or b in _SYNC_REDUCE:
                site = next(self.ids)
                args = [self.visit(a) for a in node.args]
                return ast.copy_location(
                    self.yield_(
                        K_SYNCTHREADS,
                        ast.Constant((self.token, site)),
                        ast.Constant(None if b == "syncthreads" else b),
                        args,
                    ),
                    node,
                )
            if b == "syncwarp":
                args = [self.visit(a) for a in node.args]
                site = next(self.ids)
                return ast.copy_location(self.yield_(K_SYNCWARP, self.key(site), ast.Constant(None), args), node)
            if b == "shared.array":
                site = next(self.ids)
                args = [self.visit(a) for a in node.args]
                kws = [ast.keyword(k.arg, self.visit(k.value)) for k in node.keywords]
                return ast.copy_location(
                    ast.Call(
                        func=self.T("shared_array"),
                        args=[ast.Constant((self.token, site, self.filename, getattr(node, "lineno", None)))] + args,
                        keywords=kws,
                    ),
                    node,
                )
            if b in ("grid", "gridsize", "quad_grid"):
                complaint = _control.ndim_complaint(b, node)
                if complaint:
                    self.error(complaint, node)
                return ast.copy_location(ast.Call(func=self.T(b), args=[node.args[0]], keywords=[]), node)
        obj = self.r.resolve(f)
        op = _ops.of_function(obj) if obj is not _MISSING else None
        if obj is _match_any:
            op = _MATCH
        if op is not None:
            if node.keywords:
                kw = {k.arg: k.value for k in node.keywords}
                args = list(node.args)
                for p in op.params[len(args) :]:
                    if p in kw:
                        args.append(kw.pop(p))
                if kw:
                    self.error(f"{op.qualname}() got unexpected keyword(s) {sorted(kw)}", node)
            else:
                args = list(node.args)
            if len(args) != len(op.params):
                self.error(
                    f"{op.qualname}({', '.join(op.params)}) takes {len(op.params)} argument(s); got {len(args)}", node
                )
            if op.kind == "query":
                return ast.copy_location(self.T("q_" + op.namespace + "_" + op.name), node)
            if op is not _MATCH and op.selector and len(args) > 1:
                const = _literal_int(args[1])
                complaint = op.check_selector_constant(const) if const is not None else None
                if complaint:  # (a runtime selector out of range wraps)
                    self.error(complaint, node)
            args = [self.visit(a) for a in args]
            site = next(self.ids)
            payload = ast.Name(self.helper(op, "op"), ast.Load())
            return ast.copy_location(self.yield_(K_OP, self.key(site), payload, args), node)
        denied = _cudaapi_denied(obj)
        if denied:  # a stub that returns None: NaN stored, as if computed
            self.error(
                f"`cuda.{denied}` is not supported by numquad's python target (supported: docs/numba-cuda.md)", node
            )
        if isinstance(obj, _xpu.Dispatcher):
            args = [self.visit(a) for a in node.args]
            keywords = [
                ast.copy_location(ast.keyword(k.arg, self.visit(k.value)), k) for k in node.keywords
            ]  # bound by Python, defaults too
            site = next(self.ids)
            call = ast.Call(
                func=ast.Name("__nq_call", ast.Load()),
                args=[ast.Name(self.helper(obj, "fn"), ast.Load()), ast.Name("__nq_T", ast.Load()), self.key(site)]
                + args,
                keywords=keywords,
            )
            return ast.copy_location(ast.YieldFrom(value=call), node)
        if isinstance(f, ast.Name) and f.id in self.r.locals and not any(isinstance(a, ast.Starred) for a in node.args):
            # a function passed as an argument (``apply(sq, x)``: numba.cuda's Dispatcher
            # argument): a device function is called as one, anything else plainly
            args = [self.visit(a) for a in node.args]
            keywords = [ast.copy_location(ast.keyword(k.arg, self.visit(k.value)), k) for k in node.keywords]
            site = next(self.ids)
            call = ast.Call(
                func=ast.Name("__nq_dyncall", ast.Load()),
                args=[self.visit(f), ast.Name("__nq_T", ast.Load()), self.key(site)] + args,
                keywords=keywords,
            )
            return ast.copy_location(ast.YieldFrom(value=call), node)
        if obj is range:
            args = [self.visit(a) for a in node.args]
            return ast.copy_location(ast.Call(func=ast.Name("__nq_range", ast.Load()), args=args, keywords=[]), node)
        if (
            any(obj is g for g in _TO_INT)
            and not node.keywords
            and len(node.args) == (1 if obj is not round else len(node.args))
            and 1 <= len(node.args) <= 2
        ):
            return ast.copy_location(
                ast.Call(
                    func=ast.Name("__nq_intfn", ast.Load()),
                    args=[self.visit(f)] + [self.visit(a) for a in node.args],
                    keywords=[],
                ),
                node,
            )
        if (
            getattr(obj, "__name__", None)
            and getattr(math, obj.__name__, None) is obj
            and (obj.__name__ in _MATH_UFUNC or obj.__name__ in _MATH_RAISING)
            and not node.keywords
        ):
            return ast.copy_location(
                ast.Call(
                    func=ast.Name("__nq_math", ast.Load()),
                    args=[self.visit(f)] + [self.visit(a) for a in node.args],
                    keywords=[],
                ),
                node,
            )
        if obj is abs and len(node.args) == 1 and not node.keywords:
            # Numba's abs of a bool is an int8 (NumPy's keeps the bool)
            return ast.copy_location(
                ast.Call(func=ast.Name("__nq_abs", ast.Load()), args=[self.visit(node.args[0])], keywords=[]), node
            )
        if obj is divmod and len(node.args) == 2 and not node.keywords:
            return ast.copy_location(
                ast.Call(
                    func=ast.Name("__nq_divmod", ast.Load()), args=[self.visit(a) for a in node.args], keywords=[]
                ),
                node,
            )
        if (obj is int or any(obj is t for t in _INT_TYPES)) and len(node.args) == 1 and not node.keywords:
            return ast.copy_location(
                ast.Call(
                    func=ast.Name("__nq_toint", ast.Load()), args=[self.visit(f), self.visit(node.args[0])], keywords=[]
                ),
                node,
            )
        if (
            (obj is max or obj is min)
            and len(node.args) >= 2
            and not node.keywords
            and not any(isinstance(a, ast.Starred) for a in node.args)
        ):
            # Numba's typing: the arguments unified first (int64 with uint64 is float64)
            return ast.copy_location(
                ast.Call(
                    func=ast.Name("__nq_minmax", ast.Load()),
                    args=[self.visit(f)] + [self.visit(a) for a in node.args],
                    keywords=[],
                ),
                node,
            )
        if obj is print:
            # tuples of NumPy scalars as numba.cuda prints them: (1, 2, 3), not np.int64(1)
            return ast.copy_location(
                ast.Call(
                    func=ast.Name("__nq_print", ast.Load()),
                    args=[self.visit(a) for a in node.args],
                    keywords=[self.visit(k) for k in node.keywords],
                ),
                node,
            )
        if obj is not _MISSING and _xpu.numba_overload_targets(obj):
            # its Python body is a stub (often ``pass``): running it would give None
            self.error(
                f"{getattr(obj, '__name__', '?')} is compiled through a numba `overload`, whose "
                f"implementation the python target cannot run: write it as a device function "
                f"(@xpu.jit or @cuda.jit(device=True))",
                node,
            )
        return self.generic_visit(node)

    def visit_Assign(self, node):
        """``a[i] = v`` stores through ``__nq_store`` (float-to-integer conversion)."""
        t = node.targets[0] if len(node.targets) == 1 else None
        if (
            not isinstance(t, ast.Subscript)
            or isinstance(t.slice, ast.Slice)
            or (isinstance(t.slice, ast.Tuple) and any(isinstance(e, ast.Slice) for e in t.slice.elts))
        ):
            return self.generic_visit(node)
        call = ast.Call(
            func=ast.Name("__nq_store", ast.Load()),
            args=[self.visit(node.value), self.visit(t.value), self.visit(t.slice)],
            keywords=[],
        )
        return ast.copy_location(ast.Expr(value=ast.copy_location(call, node)), node)

    def visit_AugAssign(self, node):
        """``a[i] op= v``: the array and the index once, then ``a[i] op v`` stored
        through ``__nq_store`` (Python's order: a, i, a[i], v)."""
        t = node.target
        if isinstance(t, ast.Name) and type(node.op) in _BINOPS:
            # x op= v: x = x op v (NumPy scalars are immutable: the same thing)
            load = ast.copy_location(ast.Name(t.id, ast.Load()), t)
            value = _binop_call(self.visit(load), node.op, self.visit(node.value), inplace=True)
            return ast.copy_location(ast.Assign(targets=[t], value=value), node)
        if (
            not isinstance(t, ast.Subscript)
            or isinstance(t.slice, ast.Slice)
            or (isinstance(t.slice, ast.Tuple) and any(isinstance(e, ast.Slice) for e in t.slice.elts))
        ):
            return self.generic_visit(node)
        tmp = f"__nq_aug{next(self.ids)}"
        keep = ast.Assign(
            targets=[ast.Name(tmp, ast.Store())],
            value=ast.Tuple(elts=[self.visit(t.value), self.visit(t.slice)], ctx=ast.Load()),
        )

        def part(k):
            return ast.Subscript(value=ast.Name(tmp, ast.Load()), slice=ast.Constant(k), ctx=ast.Load())

        value = _binop_call(
            ast.Subscript(value=part(0), slice=part(1), ctx=ast.Load()), node.op, self.visit(node.value)
        )
        store = ast.Expr(
            value=ast.Call(func=ast.Name("__nq_store", ast.Load()), args=[value, part(0), part(1)], keywords=[])
        )
        return [ast.copy_location(keep, node), ast.copy_location(store, node)]


# ---------------------------------------------------------------------------
# Per-thread context
# ---------------------------------------------------------------------------

_i32 = np.int32
_i64 = np.int64
_u32 = np.uint32


class _BlockState:
    __slots__ = ("shared", "dynamic")

    def __init__(self, dynamic_bytes=0):
        self.shared = {}
        # the launch's dynamic shared memory: every shared.array(0, dtype) of the
        # block views these bytes from offset 0, as on CUDA (poisoned, as shared
        # arrays are)
        self.dynamic = np.full(dynamic_bytes, 0xA5, np.uint8)


class _Dim3(tuple):
    """numba.cuda's dim3 value: ``.x``, ``.y``, ``.z`` (int32)."""

    x = property(lambda self: self[0])
    y = property(lambda self: self[1])
    z = property(lambda self: self[2])


class _Thread:
    """What a thread sees of the machine: its ids, the block's shared memory, atomics."""

    def __init__(self, block_state, tid3, bid3, bdim3, gdim3):
        self._blk = block_state
        tx, ty, tz = tid3
        bx, by, bz = bid3
        dx, dy, dz = bdim3
        gx, gy, gz = gdim3
        self.tx, self.ty, self.tz = _i32(tx), _i32(ty), _i32(tz)
        self.bx, self.by, self.bz = _i32(bx), _i32(by), _i32(bz)
        self.dx, self.dy, self.dz = _i32(dx), _i32(dy), _i32(dz)
        self.gx, self.gy, self.gz = _i32(gx), _i32(gy), _i32(gz)
        for group, c in _DIM_ATTR.items():  # the groups as values (``t = cuda.threadIdx``)
            setattr(self, "dim3_" + group, _Dim3(getattr(self, c + a) for a in "xyz"))
        tid = tx + ty * dx + tz * dx * dy
        self.tid = tid
        lane = tid % W
        self.lane = lane
        self.laneid = _i32(lane)
        self.warpsize = _i32(W)
        self.q_Wave_laneId = _u32(lane)
        self.q_Quad_laneId = _u32(lane & 3)
        self.q_Wave_width = _u32(W)
        self._g = (_i64(bx * dx + tx), _i64(by * dy + ty), _i64(bz * dz + tz))
        self._gs = (_i64(gx * dx), _i64(gy * dy), _i64(gz * dz))

    def grid(self, nd):
        return self._g[0] if nd == 1 else self._g[:nd]

    def gridsize(self, nd):
        return self._gs[0] if nd == 1 else self._gs[:nd]

    def quad_grid(self, nd):
        """xpu.quad_grid(2) (numquad/xpu.py): t is the thread's index in its pair of rows."""
        t = (int(self.ty) & 1) * int(self.dx) + int(self.tx)
        x = int(self.bx) * int(self.dx) + 2 * (t >> 2) + (t & 1)
        y = int(self.by) * int(self.dy) + (int(self.ty) & ~1) + ((t >> 1) & 1)
        return _i64(x), _i64(y)

    def shared_array(self, site, shape=None, dtype=None, alignment=None):
        _check_alignment(alignment)  # no other effect on values
        if isinstance(shape, (int, np.integer)) and shape == 0:
            dt = _to_dtype(dtype)
            buf = self._blk.dynamic
            arr = buf[: buf.size // dt.itemsize * dt.itemsize].view(dt)
            return arr.view(np.recarray) if dt.names is not None else arr  # r[i].field
        arr = self._blk.shared.get(site)
        if arr is None:
            arr = self._blk.shared[site] = _alloc(shape, dtype)
            arr[...] = _poison(arr.dtype)
            total = sum(a.nbytes for a in self._blk.shared.values())
            if self._blk.dynamic.size and total + self._blk.dynamic.size > _xpu._MAX_DYNAMIC_SHARED:
                raise NumquadLaunchError(
                    f'File "{site[2]}", line {site[3]}: '
                    f"{self._blk.dynamic.size} bytes of dynamic shared memory and {total} bytes of "
                    f"static shared arrays; CUDA allows {_xpu._MAX_DYNAMIC_SHARED} per block in all "
                    f"without an opt-in (python target)"
                )
            if total > _xpu._MAX_STATIC_SHARED:
                # CUDA's limit, as the compiled targets check it before a launch (the
                # python target counts the arrays a block reaches)
                raise NumquadCompileError(
                    f"the shared arrays of the kernel take {total} bytes; CUDA allows "
                    f"{_xpu._MAX_STATIC_SHARED} bytes of static shared memory per block (more needs "
                    f"dynamic shared memory, shared.array(0, dtype)) (python target)",
                    site[2],
                    site[3],
                )
        return arr

    def local_array(self, shape=None, dtype=None, alignment=None):
        _check_alignment(alignment)  # no other effect on values
        arr = _alloc(shape, dtype)
        arr[...] = _poison(arr.dtype)
        return arr

    # -- atomics: threads run one at a time, so a read-modify-write is atomic ------
    # (numba.cuda's semantics, as listed in xpu.ATOMICS)
    @staticmethod
    def _cast(ary, v):
        # a float into an integer array converts as the GPU converts (saturating;
        # NumPy's astype gave the x86 "integer indefinite" 0x80...0 for 3e9 -> int32)
        if ary.dtype.kind in "iu" and isinstance(v, (float, np.floating)):
            return _float_to_int(ary.dtype.type, v)
        return np.asarray(v).astype(ary.dtype)[()]

    @staticmethod
    def _index(idx):
        """An atomic's index as numba.cuda converts it to intp (cpu/atomics.py
        ``_index_part``): a float truncated (saturating, as the GPU converts), a bool
        0 or 1, None a TypeError (Numba's cast of an Optional)."""

        def part(i):
            if i is None:
                raise TypeError("expected an integer index, got None")
            if isinstance(i, (float, np.floating)):
                return int(_float_to_int(np.int64, i))
            return int(i) if isinstance(i, (bool, np.bool_)) else i

        return tuple(map(part, idx)) if isinstance(idx, tuple) else part(idx)

    def _rmw(self, ary, idx, val, f):
        idx = self._index(idx)
        old = ary[idx]
        ary[idx] = f(old, self._cast(ary, val))
        return old

    def atomic_add(self, ary, idx, val):
        return self._rmw(ary, idx, val, lambda a, b: a + b)

    def atomic_sub(self, ary, idx, val):
        return self._rmw(ary, idx, val, lambda a, b: a - b)

    def atomic_and_(self, ary, idx, val):
        return self._rmw(ary, idx, val, lambda a, b: a & b)

    def atomic_or_(self, ary, idx, val):
        return self._rmw(ary, idx, val, lambda a, b: a | b)

    def atomic_xor(self, ary, idx, val):
        return self._rmw(ary, idx, val, lambda a, b: a ^ b)

    def atomic_max(self, ary, idx, val):
        # floats: nothing is stored when either is NaN
        return self._rmw(ary, idx, val, lambda a, b: b if b > a else a)

    def atomic_min(self, ary, idx, val):
        return self._rmw(ary, idx, val, lambda a, b: b if b < a else a)

    def atomic_nanmax(self, ary, idx, val):
        return self._rmw(ary, idx, val, lambda a, b: a if _is_nan(b) else (b if _is_nan(a) or b > a else a))

    def atomic_nanmin(self, ary, idx, val):
        return self._rmw(ary, idx, val, lambda a, b: a if _is_nan(b) else (b if _is_nan(a) or b < a else a))

    def atomic_exch(self, ary, idx, val):
        return self._rmw(ary, idx, val, lambda a, b: b)

    def atomic_inc(self, ary, idx, val):
        return self._rmw(ary, idx, val, lambda a, b: a.dtype.type(0) if a >= b else a + a.dtype.type(1))

    def atomic_dec(self, ary, idx, val):
        return self._rmw(ary, idx, val, lambda a, b: b if (a == 0 or a > b) else a - a.dtype.type(1))

    def atomic_cas(self, ary, idx, old, val):
        idx = self._index(idx)
        cur = ary[idx]
        if cur == self._cast(ary, old):
            ary[idx] = self._cast(ary, val)
        return cur

    def atomic_compare_and_swap(self, ary, old, val):
        return self.atomic_cas(ary, 0, old, val)

    # -- numba.cuda's other device functions (xpu.CUDA_FUNCTIONS) ---------------------
    # the cache-hint loads and stores (numba.cuda's ldcg(array, i), stcg(array, i, v)):
    # plain loads and stores (before, numba.cuda's Python stubs ran: a load gave None)
    @staticmethod
    def _hint_load(ary, i):
        return ary[i]

    @staticmethod
    def _hint_store(ary, i, value):
        _nq_store(value, ary, i)

    ldca = ldcg = ldcs = ldlu = ldcv = _hint_load
    stcg = stcs = stwb = stwt = _hint_store

    @staticmethod
    def popc(x):
        x = _as_scalar(x)
        return x.dtype.type(bin(int(x) % (1 << (8 * x.dtype.itemsize))).count("1"))

    @staticmethod
    def brev(x):
        x = _as_scalar(x)
        bits = 64 if x.dtype == np.uint64 else 32  # numba.cuda: an int64 takes the uint32 case
        v = int(x) % (1 << bits)
        r = int(format(v, f"0{bits}b")[::-1], 2)
        return (np.uint32 if bits == 32 else np.uint64)(r)

    @staticmethod
    def clz(x):
        x = _as_scalar(x)
        bits = 8 * x.dtype.itemsize
        v = int(x) % (1 << bits)
        return x.dtype.type(bits - v.bit_length())

    @staticmethod
    def ffs(x):
        x = _as_scalar(x)
        v = int(x) % (1 << (8 * x.dtype.itemsize))
        return np.uint32((v & -v).bit_length())

    @staticmethod
    def fma(a, b, c):
        a, b, c = _as_scalar(a), _as_scalar(b), _as_scalar(c)
        return _fma(a, b, c)

    @staticmethod
    def cbrt(x):
        x = _as_scalar(x)
        return np.cbrt(_cuda_float(x).type(x))

    @staticmethod
    def selp(pred, a, b):
        return a if pred else b

    @staticmethod
    def nop(*args):
        return None

    threadfence = threadfence_block = threadfence_system = nanosleep = nop

    @staticmethod
    def const_array_like(ary):
        a = np.array(ary)
        a.flags.writeable = False
        return a


def _cuda_float(*xs):
    """The float type numba.cuda gives cbrt and fma of *xs*: float32 when each is a
    float32, a bool, an int8, an int16 or a uint8 (Numba's safe conversions to
    float32), else float64."""
    small = (np.float32,) + _SAFE_TO_F32
    return np.dtype(np.float32 if all(np.asarray(x).dtype.type in small for x in xs) else np.float64)


def _fma(a, b, c):
    """a * b + c with one rounding, in numba.cuda's float type of the three."""
    from fractions import Fraction

    dt = _cuda_float(a, b, c)
    a, b, c = dt.type(a), dt.type(b), dt.type(c)
    vals = (float(a), float(b), float(c))
    if not all(math.isfinite(v) for v in vals):
        return dt.type(a * b + c)
    exact = Fraction(vals[0]) * Fraction(vals[1]) + Fraction(vals[2])
    if exact == 0:
        return dt.type(a * b + c)  # the sign of a zero as IEEE says
    try:
        d = float(exact)  # rounded to nearest; past the largest float64's
    except OverflowError:  # half ulp, an OverflowError: inf, as IEEE rounds
        d = math.inf if exact > 0 else -math.inf
    if dt == np.float64:
        return np.float64(d)
    big = Fraction(float(np.finfo(np.float32).max)) + Fraction(2) ** 103  # FLT_MAX + half an ulp
    if abs(exact) >= big:
        return np.float32(math.inf if exact > 0 else -math.inf)
    with np.errstate(over="ignore"):
        r = np.float32(d)
    if not math.isfinite(float(r)):  # d rounded past FLT_MAX, the exact value did not
        top = float(np.finfo(np.float32).max)
        return np.float32(top if exact > 0 else -top)
    if Fraction(d) != exact and math.isfinite(d):
        # d may sit on a float32 tie that the exact value does not: round again by hand
        lo = np.nextafter(r, np.float32(-np.inf))
        hi = np.nextafter(r, np.float32(np.inf))
        best = min((r, lo, hi), key=lambda y: abs(Fraction(float(y)) - exact) if math.isfinite(float(y)) else math.inf)
        r = best
    return np.float32(r)


def _alloc(shape, dtype):
    if isinstance(shape, (tuple, list)):
        shape = tuple(int(s) for s in shape)
    else:
        shape = (int(shape),)
    arr = np.empty(shape, _to_dtype(dtype))
    # records: r[i].field reads and writes, as for a record array argument (_scalar_arg)
    return arr.view(np.recarray) if arr.dtype.names is not None else arr


def _to_dtype(dtype):
    """A NumPy dtype from a NumPy type, dtype, name or Numba type."""
    try:
        return np.dtype(dtype)
    except TypeError:
        pass
    from numba.np.numpy_support import as_dtype

    return as_dtype(dtype)


def _poison(dt):
    """Uninitialised memory reads as a recognisable pattern (NaN for floats)."""
    if dt.names is not None:  # a record: each field poisoned
        rec = np.zeros((), dt)
        for name in dt.names:
            rec[name] = _poison(dt.fields[name][0].base)
        return rec
    if dt.kind == "f":
        return np.nan
    if dt.kind == "c":
        return complex(np.nan, np.nan)
    if dt.kind == "b":
        return False
    return np.iinfo(dt).max // 3


# ---------------------------------------------------------------------------
# The ops, lane by lane (docs/semantics.md)
# ---------------------------------------------------------------------------


def _is_nan(x):
    return x != x


def _cmin(a, b):
    if isinstance(a, np.floating):
        if _is_nan(a):
            return b
        if _is_nan(b):
            return a
        if a < b:
            return a
        if b < a:
            return b
        if a == 0 and (np.signbit(a) != np.signbit(b)):
            return a if np.signbit(a) else b
        return a
    if isinstance(a, np.bool_):
        return a & b
    return a if a <= b else b


def _cmax(a, b):
    if isinstance(a, np.floating):
        if _is_nan(a):
            return b
        if _is_nan(b):
            return a
        if a > b:
            return a
        if b > a:
            return b
        if a == 0 and (np.signbit(a) != np.signbit(b)):
            return b if np.signbit(a) else a
        return a
    if isinstance(a, np.bool_):
        return a | b
    return a if a >= b else b


def _cadd(a, b):
    return a + b


def _cmul(a, b):
    if isinstance(a, np.bool_):
        return a & b
    return a * b


def _cand(a, b):
    return a & b


def _cor(a, b):
    return a | b


def _cxor(a, b):
    return a ^ b


_COMBINE = {"add": _cadd, "mul": _cmul, "min": _cmin, "max": _cmax, "and": _cand, "or": _cor, "xor": _cxor}


#: A move's source lane for a selector (or xor_const), by ops.py's ``sel_kind``
#: ("first" is found from the active lanes instead).
_MOVE_SOURCE = {
    "quad": lambda lane, sel: (lane & ~3) | (sel & 3),
    "lane": lambda lane, sel: sel & 31,
    "xor": lambda lane, sel: lane ^ (sel & 31),
    "up": lambda lane, sel: lane - sel,
    "down": lambda lane, sel: lane + sel,
    "first": None,
}

#: A vote over the lanes' truths (inactive lanes false), by ops.py's ``vote``.
_VOTE = {"all": all, "any": any}


def _as_scalar(v):
    if isinstance(v, np.generic):
        return v
    if isinstance(v, (bool, int, float)):
        return _np_literal(v)
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return v[()]
    raise SIMTError(f"a cross-lane op got {type(v).__name__} {v!r}; it takes a scalar")


def _common(values, op):
    vals = [_as_scalar(v) for v in values]
    dts = {v.dtype for v in vals}
    if len(dts) == 1:
        return vals, vals[0].dtype
    dt = np.result_type(*dts)
    return [dt.type(v) for v in vals], dt


def _bits_of(v):
    dt = v.dtype
    if dt.kind == "b":
        return bool(v)
    return int(np.asarray(v).view(np.dtype(f"u{dt.itemsize}"))[()])


def _truth(v):
    return bool(_as_scalar(v) != 0)


def _check_types(op, argsets):
    """The operand and selector types, as the compiled targets check them while
    typing (ops.py's one wording): a float selector or a complex operand is an
    error here too, not a value the interpreter runs with."""
    if not op.params or not argsets or op.kind == "match":
        return
    complaint = op.check_operand(_common([a[0] for a in argsets], op)[1])
    if complaint is None and op.selector is not None and len(argsets[0]) > 1:
        dt = _common([a[1] for a in argsets], op)[1]
        complaint = op.check_selector_type(str(dt), dt.kind in "iu")
    if complaint:
        raise NumquadTypeError(complaint)


def _execute(op, lanes, argsets):
    """Run *op* for the active *lanes* (ascending) of one wave; one result per lane."""
    kind = op.kind
    n = len(lanes)
    _check_types(op, argsets)
    if kind == "match":
        keys = []
        for a in argsets:  # compared in numba.cuda's type (a uint64 as a float64)
            v = np.asarray(_as_scalar(a[0]))
            keys.append(v.astype(_xpu.match_value_dtype(v.dtype)).tobytes())
        out = []
        for k in range(n):
            bits = 0
            for j in range(n):
                if keys[j] == keys[k]:
                    bits |= 1 << lanes[j]
            out.append(np.uint32(bits))
        return out
    if kind == "move":
        vals, dt = _common([a[0] for a in argsets], op)
        by_lane = dict(zip(lanes, vals))
        if op.sel_kind not in _MOVE_SOURCE:
            raise _ops.unknown_value("sel_kind", op.sel_kind, op)
        source = _MOVE_SOURCE[op.sel_kind]
        out = []
        first = lanes[0]
        for k in range(n):
            lane = lanes[k]
            if op.sel_kind == "first":
                src = first
            else:
                sel = op.xor_const if op.xor_const is not None else int(_as_scalar(argsets[k][1]))
                src = source(lane, sel)
            v = by_lane.get(src) if 0 <= src < W else None
            out.append(vals[k] if v is None else v)
        return out
    if kind == "derivative":
        vals, dt = _common([a[0] for a in argsets], op)
        by_lane = dict(zip(lanes, vals))
        out = []
        for k in range(n):
            hi, lo = _ops.derivative_sources(op, lanes[k])
            # each read follows the move rule: an inactive lane gives the reader's own value
            a, b = by_lane.get(hi, vals[k]), by_lane.get(lo, vals[k])
            with np.errstate(over="ignore", invalid="ignore"):
                out.append(dt.type(a - b))
        return out
    if kind == "vote":
        vote = _VOTE.get(op.vote)
        if vote is None:
            raise _ops.unknown_value("vote", op.vote, op)
        truth = {lane: _truth(a[0]) for lane, a in zip(lanes, argsets)}
        if op.namespace == "Quad":
            out = []
            for lane in lanes:
                q = [truth.get(l, False) for l in range((lane & ~3), (lane & ~3) + 4)]
                out.append(np.bool_(vote(q)))
            return out
        return [np.bool_(vote(truth.get(l, False) for l in range(W)))] * n
    if kind == "ballot":
        word = 0
        for lane, a in zip(lanes, argsets):
            if _truth(a[0]):
                word |= 1 << lane
        if op.vote == "ballot":
            return [np.uint32(word)] * n
        if op.vote == "count":
            return [np.uint32(bin(word).count("1"))] * n
        if op.vote == "prefix_count":
            return [np.uint32(bin(word & ((1 << lane) - 1)).count("1")) for lane in lanes]
        raise _ops.unknown_value("vote", op.vote, op)
    if kind == "allequal":
        vals, dt = _common([a[0] for a in argsets], op)
        ref = _bits_of(vals[0])
        r = all(_bits_of(v) == ref for v in vals)
        return [np.bool_(r)] * n
    if kind in ("scan", "reduce"):
        vals, dt = _common([a[0] for a in argsets], op)
        comb_name = op.combine
        if dt.kind == "b" and comb_name == "add":
            dt = np.dtype(np.uint32)
            vals = [dt.type(1 if v else 0) for v in vals]
        if op.types == "bitwise" and dt.kind == "f":
            raise SIMTError(f"{op.qualname} takes no float operand")
        comb = _COMBINE.get(comb_name)
        if comb is None:
            raise _ops.unknown_value("combine", comb_name, op)
        ident = op.combine_fn.identity(dt)
        if kind == "scan":
            a = list(vals) + [ident] * (W - n)  # by rank
            for d in (1, 2, 4, 8, 16):
                a = a[:d] + [comb(a[r - d], a[r]) for r in range(d, W)]
            first = op.combine_fn.identity(dt, lane0=True)
            return [first] + a[: n - 1]
        v = [ident] * W  # by lane position
        for lane, x in zip(lanes, vals):
            v[lane] = x
        for d in (1, 2, 4, 8, 16):
            v = [comb(v[l], v[l ^ d]) for l in range(W)]
        return [v[lane] for lane in lanes]
    raise SIMTError(f"op kind {kind} cannot be executed")


# ---------------------------------------------------------------------------
# Compiled functions and the scheduler
# ---------------------------------------------------------------------------


class _Compiled:
    def __init__(self, gen):
        self.gen = gen


def _nq_dyncall(fn, T, pre, *args, **kwargs):
    """A call of a local name: a device function passed as an argument runs as one
    (:func:`_nq_call`), any other callable plainly."""
    d = _as_dispatcher(fn)
    if isinstance(d, _xpu.Dispatcher):
        return (yield from _nq_call(d, T, pre, *args, **kwargs))
    return fn(*args, **kwargs)
    yield  # (a generator: the call site says ``yield from``)


def _nq_call(dispatcher, T, pre, *args, **kwargs):
    gen = _target_of(dispatcher).compiled().gen
    sig = _declared_signature(dispatcher, len(args) + len(kwargs), args if not kwargs else None)
    if sig is None:
        return (yield from gen(T, pre, *args, **kwargs))
    # a declared signature (numba.cuda's cuda.jit("int32(float64)", device=True)):
    # the arguments and the result converted to its types, as numba.cuda compiles it
    argtys, ret = sig
    args = tuple(_to_declared(a, t) for a, t in zip(args, argtys))
    result = yield from gen(T, pre, *args, **kwargs)
    return result if ret is None else _to_declared(result, ret)


def _declared_signature(dispatcher, nargs, args=None):
    """The signature *dispatcher* (or the numba.cuda function it stands for) was
    declared with that takes *nargs* arguments and fits *args* best (Numba's
    overload rating: fewest unsafe, then safe, then promoting conversions; the first
    of several when *args* is None or cannot be typed): (argument types, return
    type); else None."""
    foreign = getattr(dispatcher, "_numquad_foreign", None)
    sigs = list(getattr(dispatcher, "_declared", None) or ())
    if foreign is not None:
        sigs += list(foreign.__dict__.get("_numquad_signatures", ()))
        if type(foreign).__module__.startswith("numba.cuda"):
            sigs += [
                (tuple(a), getattr(getattr(c, "signature", None), "return_type", None))
                for a, c in getattr(foreign, "overloads", {}).items()
            ]
    sigs = [(tuple(a), r) for a, r in sigs if len(a) == nargs]
    if sigs and args is not None and _typeable(args):
        rated = [(r, s) for s in sigs for r in [_fit(args, s[0])] if r is not None]
        if not rated:
            from numba import typeof

            raise TypeError(
                f"No matching definition for argument type(s) {', '.join(str(typeof(a)) for a in args)} "
                f"of {dispatcher.__name__}: it is declared for "
                + ", ".join(f"({', '.join(str(t) for t in a)})" for a, _ in sigs)
            )
        return min(rated, key=lambda x: x[0])[1]
    if sigs:
        return sigs[0]
    return None


def _typeable(args):
    from numba import typeof

    try:
        for a in args:
            typeof(a)
    except ValueError:
        return False
    return True


def _fit(args, argtys):
    """(unsafe, safe, promoting) conversions from *args*' types to *argtys*, as Numba
    rates an overload; None where one cannot convert."""
    from numba import typeof
    from numba.core.registry import cpu_target
    from numba.core.typeconv import Conversion
    from numba.core import types as nbt

    counts = [0, 0, 0]
    for a, t in zip(args, argtys):
        try:
            conv = cpu_target.typing_context.can_convert(typeof(a), t)
        except ValueError:
            return None
        if conv is None or (isinstance(typeof(a), nbt.Complex) and not isinstance(t, nbt.Complex)):
            return None  # (a complex value never converts to a real type in numba.cuda)
        for k, kind in enumerate((Conversion.unsafe, Conversion.safe, Conversion.promote)):
            counts[k] += conv == kind
    return tuple(counts)


def _to_declared(value, nbtype):
    """A scalar *value* as numba type *nbtype* converts it (floats to integers as the
    GPU converts, integers wrapping); anything else (arrays, tuples) unchanged."""
    from numba.core import types as nbt

    if not isinstance(nbtype, (nbt.Integer, nbt.Float, nbt.Boolean)) or not isinstance(
        value, (bool, int, float, np.generic)
    ):
        return value
    t = np.dtype(str(nbtype)).type if not isinstance(nbtype, nbt.Boolean) else np.bool_
    if isinstance(value, (float, np.floating)) and isinstance(nbtype, nbt.Integer):
        return _float_to_int(t, value)
    if (
        isinstance(value, (int, np.integer))
        and not isinstance(value, (bool, np.bool_))
        and isinstance(nbtype, nbt.Integer)
    ):
        return np.uint64(int(value) & 0xFFFF_FFFF_FFFF_FFFF).astype(t)
    return t(value)


def _target_of(dispatcher):
    return dispatcher._target("python")


def _compile(dispatcher):
    fn = dispatcher.py_func
    # the function as written (a lambda as a def): not Dispatcher.source_tree, whose
    # rewrites (numquad/_desugar.py) serve the compiled targets
    fdef = dispatcher._parse_source()
    _desugar.check_builtin_stores(fdef, fn)
    _desugar.check_returns(fdef, fn)  # None on some path: the compilers' error
    _desugar.check_print_keywords(fdef, fn)  # (numba.cuda's print takes none)
    _control.fold_array_shapes(fdef, fn)  # constant shapes as literals, as on CUDA
    resolver = _Resolver(fn, _control.local_names(fdef))
    helpers = {}
    fdef = _CudaWarpFunctions(resolver, dispatcher.__name__, dispatcher.filename).visit(fdef)
    tr = _Transformer(dispatcher.__name__, dispatcher.filename, resolver, helpers)
    fdef = tr.visit(fdef)
    fixed = {
        "__nq_np": np,
        "__nq_range": _nq_range,
        "__nq_iter": _nq_iter,
        "__nq_call": _nq_call,
        "__nq_dyncall": _nq_dyncall,
        "__nq_print": _nq_print,
        "__nq_minmax": _nq_minmax,
        "__nq_divmod": _nq_divmod,
        "__nq_cmpchain": _nq_cmpchain,
        "__nq_pick": _nq_pick,
        "__nq_abs": _nq_abs,
        "__nq_boolop": _nq_boolop,
        "__nq_toint": _nq_toint,
        "__nq_store": _nq_store,
        "__nq_intfn": _nq_intfn,
        "__nq_math": _nq_math,
        "__nq_binop": _nq_binop,
        "__nq_unop": _nq_unop,
        "__nq_cmp": _nq_cmp,
        "__nq_vote": _vote,
    }
    freevars = list(fn.__code__.co_freevars)
    params = list(fixed) + list(helpers) + freevars
    factory = ast.FunctionDef(
        name="__nq_factory",
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(p) for p in params],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=[fdef, ast.Return(ast.Name(fdef.name, ast.Load()))],
        decorator_list=[],
        returns=None,
        **({"type_params": []} if sys.version_info >= (3, 12) else {}),
    )
    mod = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(mod)
    code = compile(mod, dispatcher.filename, "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, _pytypes.CodeType))
    # globals are frozen at the first compile, as Numba freezes them (numba.cuda's
    # globals.rst): the values of the names the function reads, arrays copied
    glbls = dict(fn.__globals__)
    for name in fn.__code__.co_names:
        if isinstance(glbls.get(name), np.ndarray):
            glbls[name] = glbls[name].copy()
            glbls[name].flags.writeable = False
        elif name in glbls:
            glbls[name] = _typed_constant(glbls[name])
    make = _pytypes.FunctionType(fcode, glbls, "__nq_factory")
    closure_vals = []
    for name in freevars:
        closure_vals.append(_typed_constant(resolver.closure.get(name)))
    gen = make(*fixed.values(), *helpers.values(), *closure_vals)
    return _Compiled(gen)


def _run_block(gen, args, bid3, block3, grid3, dynamic_bytes=0):
    state = _BlockState(dynamic_bytes)
    dx, dy, dz = block3
    nthreads = dx * dy * dz
    threads = []
    for t in range(nthreads):
        tx, ty, tz = t % dx, (t // dx) % dy, t // (dx * dy)
        threads.append(_Thread(state, (tx, ty, tz), bid3, block3, grid3))
    _schedule([gen(T, (), *args) for T in threads], nthreads)


def _where(gen):
    """``File "f.py", line N, in k`` of the user's line a suspended thread waits at
    (the innermost generator of a ``yield from`` chain: a called lane function)."""
    while getattr(gen, "gi_yieldfrom", None) is not None and hasattr(gen.gi_yieldfrom, "gi_frame"):
        gen = gen.gi_yieldfrom
    f = gen.gi_frame
    if f is None:
        return "in a kernel"
    return f'File "{f.f_code.co_filename}", line {f.f_lineno}, in {f.f_code.co_name}'


def _check_syncwarp_args(gen, args):
    """``syncwarp(mask=0xffffffff)``: the mask an integer, as numba.cuda types it."""
    if len(args) > 1:
        raise NumquadTypeError(f"{_where(gen)}: syncwarp(mask=0xffffffff) takes at most 1 argument; got {len(args)}")
    if args and (isinstance(args[0], (bool, np.bool_)) or not isinstance(args[0], (int, np.integer))):
        v = args[0]
        got = f"{v.dtype} {v}" if isinstance(v, np.generic) else f"{type(v).__name__} {v!r}"
        raise NumquadTypeError(
            f"{_where(gen)}: syncwarp(mask): the mask must be an integer (a 32-bit lane mask); got {got}"[:300]
        )


def _cudaapi_denied(obj):
    if "numba.cuda" not in sys.modules:
        return None
    from .cpu.cudaapi import denied_name

    return denied_name(obj)


def _schedule(gens, nthreads):
    """Run generators *gens* (thread tid = index) to completion: the SIMT scheduler."""
    nwaves = (nthreads + W - 1) // W
    req = [None] * nthreads
    send = [None] * nthreads
    live = [True] * nthreads
    nlive = nthreads
    runnable = list(range(nthreads))
    while True:
        for t in runnable:
            try:
                req[t] = gens[t].send(send[t])
            except StopIteration:
                live[t] = False
                req[t] = None
                nlive -= 1
            send[t] = None
        runnable = []
        if nlive == 0:
            return
        # one group per wave: the smallest key among the threads blocked at an op
        for w in range(nwaves):
            lo, hi = w * W, min(nthreads, (w + 1) * W)
            best = None
            for t in range(lo, hi):
                r = req[t]
                if r is None or r[0] == K_SYNCTHREADS:
                    continue
                if best is None or r[1] < best:
                    best = r[1]
            if best is None:
                continue
            group = [
                t for t in range(lo, hi) if req[t] is not None and req[t][0] != K_SYNCTHREADS and req[t][1] == best
            ]
            kind = req[group[0]][0]
            if kind == K_SYNCWARP:
                for t in group:
                    _check_syncwarp_args(gens[t], req[t][3])
            if kind == K_OP:
                op = req[group[0]][2]
                try:
                    res = _execute(op, [t - lo for t in group], [req[t][3] for t in group])
                except NumquadTypeError as e:
                    raise NumquadTypeError(f"{_where(gens[group[0]])}: {e}") from None
                for t, v in zip(group, res):
                    send[t] = v
            for t in group:
                req[t] = None
            runnable.extend(group)
        if runnable:
            continue
        # every live thread is at a syncthreads
        sites = {req[t][1] for t in range(nthreads) if live[t]}
        if len(sites) != 1:
            raise SIMTError(
                "threads of a block wait at different syncthreads() calls (a barrier under lane-varying control)"
            )
        waiting = [t for t in range(nthreads) if live[t]]
        what = req[waiting[0]][2]
        value = None
        if what is not None:  # syncthreads_count/_and/_or
            # numba.cuda types them i4(i4): the predicate is an int32 first, and
            # neither a bool nor a float (as the compiled targets refuse them)
            vals = [_as_scalar(req[t][3][0]) for t in waiting]
            bad = next(
                (v for v in vals if isinstance(v, (bool, np.bool_, float, np.floating, complex, np.complexfloating))),
                None,
            )
            if bad is not None:
                raise SIMTError(
                    f"cuda.{what}(pred): pred got {np.asarray(bad).dtype}; it takes an integer "
                    f"(numba.cuda does not take a bool: write int32(pred))"
                )
            preds = [_as_int32(v) != 0 for v in vals]
            n = (
                sum(preds)
                if what == "syncthreads_count"
                else int(all(preds))
                if what == "syncthreads_and"
                else int(any(preds))
            )
            value = np.int32(n)
        for t in waiting:
            req[t] = None
            send[t] = value
            runnable.append(t)


class _RecordRef:
    """A single record argument (``arr[0]`` of a structured array, an np.void) read and
    written by field as Numba does (``r.a``, ``r["a"]``); np.void has only ``r["a"]``."""

    __slots__ = ("_nq_rec",)

    def __init__(self, rec):
        object.__setattr__(self, "_nq_rec", rec)

    def __getattr__(self, name):
        try:
            return self._nq_rec[name]
        except (KeyError, ValueError, IndexError):
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self._nq_rec[name] = value

    def __getitem__(self, key):
        return self._nq_rec[key]

    def __setitem__(self, key, value):
        self._nq_rec[key] = value


def _scalar_arg(a):
    if isinstance(a, (bool, int, float)):
        return _np_literal(a)
    if isinstance(a, np.ndarray) and a.dtype.names is not None and not isinstance(a, np.recarray):
        return a.view(np.recarray)  # r[i].field reads and writes, as in Numba
    if isinstance(a, np.void) and a.dtype.names is not None and not isinstance(a, np.record):
        return _RecordRef(a)  # r.field reads and writes the caller's record
    if isinstance(a, tuple):  # typed element by element, as Numba types a tuple
        parts = [_scalar_arg(e) for e in a]
        return type(a)(*parts) if hasattr(a, "_fields") else tuple(parts)
    return a


# ---------------------------------------------------------------------------
# The target
# ---------------------------------------------------------------------------


class PythonTarget:
    """The python target of one ``@xpu.jit`` function (``f.python``)."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self._lock = threading.RLock()
        self._compiled = None

    def compiled(self):
        with self._lock:
            if self._compiled is None:
                self._compiled = _compile(self.dispatcher)
            return self._compiled

    def launch(self, dims, extra, args):
        g, b, gnd, bnd = dims
        d = self.dispatcher
        for k, a in enumerate(args):
            if hasattr(a, "__cuda_array_interface__") and not isinstance(a, np.ndarray):
                raise NumquadTypeError(
                    f"{d.where}: argument {k} of {d.__name__} is a CUDA device "
                    f"array; the python target takes NumPy arrays"
                )
        from .cpu.dispatch import typeof_args  # what the compiled targets take

        typeof_args(d, args, launch=True, target="python")
        args = tuple(_scalar_arg(a) for a in args)
        dynamic_bytes = int(_xpu.dynamic_shared_bytes(d, extra))
        gen = self.compiled().gen
        try:
            with np.errstate(all="ignore"), _debug_mode(d):
                for bz in range(g[2]):
                    for by in range(g[1]):
                        for bx in range(g[0]):
                            _run_block(gen, args, (bx, by, bz), b, g, dynamic_bytes)
        except Exception as e:
            user = _userraise.user_exception(e)
            if user is None:
                raise
            raise user from None  # the user's own raise, with the thread

    def call(self, args, out):
        return call_lane_function(self.dispatcher, args, out)


def run_kernel(dispatcher, griddim, blockdim, *args):
    """``dispatcher.python[griddim, blockdim](*args)``."""
    dispatcher.python[griddim, blockdim](*args)


_BLOCK = 256


def call_lane_function(d, args, out=None):
    """A lane function on arrays: broadcast, flatten in C order, lane k % 32 of wave k // 32.

    The arguments and ``out=`` are checked and typed as on the compiled targets
    (numquad/_lanecall.py: a Python scalar is weak but keeps its kind)."""
    from . import _lanecall

    p = _lanecall.plan(d, args)
    vals, is_arr, shape = list(p.values), list(p.is_array), p.shape
    size = int(np.prod(shape, dtype=np.int64))
    flat = [np.broadcast_to(v, shape).reshape(-1) if a else v for v, a in zip(vals, is_arr)]
    d._target("python").compiled()  # compile errors raise before any lane runs
    results = [None] * size
    nblocks = -(-size // _BLOCK)
    try:
        with np.errstate(all="ignore"), _debug_mode(d):
            for blk in range(nblocks):
                lo, hi = blk * _BLOCK, min(size, (blk + 1) * _BLOCK)
                state = _BlockState()
                gens = []
                for k in range(lo, hi):
                    T = _Thread(state, (k - lo, 0, 0), (blk, 0, 0), (_BLOCK, 1, 1), (nblocks, 1, 1))
                    gens.append(_nq_call(d, T, (), *[f[k] if a else f for f, a in zip(flat, is_arr)]))
                res = _collect(gens)
                results[lo:hi] = res
    except Exception as e:
        user = _userraise.user_exception(e, _BLOCK)
        if user is None:
            raise
        raise user from None  # the user's own raise, with the element
    typed = _function_result_dtype(d, vals, is_arr)
    if results:
        vals_ = [_as_scalar(r) for r in results]
        restype = typed or np.result_type(*{v.dtype for v in vals_})
    elif typed is not None:
        vals_, restype = [], typed
    else:
        # no lanes: the type of one lane given zeros (the compiled targets type the
        # function; a value the zeros cannot produce falls back to NumPy's rule)
        vals_ = []
        try:
            with np.errstate(all="ignore"):
                T = _Thread(_BlockState(), (0, 0, 0), (0, 0, 0), (1, 1, 1), (1, 1, 1))
                zeros = [np.zeros((), np.asarray(v).dtype)[()] if a else v for v, a in zip(vals, is_arr)]
                restype = _as_scalar(_collect([_nq_call(d, T, (), *zeros)])[0]).dtype
        except Exception:
            restype = np.result_type(*[np.asarray(v).dtype for v in vals]) if vals else np.dtype(float)
    if out is not None:
        _lanecall.check_out(d, out, shape, restype if size else out.dtype)
        result = out
    else:
        result = np.empty(shape, restype)
    if size:
        result[...] = np.array(vals_, dtype=restype).reshape(shape)
    return result


def _function_result_dtype(d, vals, is_arr):
    """The dtype of the function's result as the compiled targets type it (Numba's
    unification of its returns: int8 and uint8 give int16, not the type of the values
    that came back), or None where that typing fails and the values decide."""
    try:
        from .cpu.arraycall import result_dtype

        return result_dtype(d, vals, is_arr)
    except NumquadError:
        return None


def _collect(gens):
    """Run lane-function generators like _schedule, keeping their return values."""
    out = [None] * len(gens)

    def wrap(k, g):
        out[k] = yield from g

    _schedule([wrap(k, g) for k, g in enumerate(gens)], len(gens))
    return out
