"""NVVM lowering of the Quad and Wave ops: one numba-cuda ``@intrinsic`` per op.

Every intrinsic is made by :func:`_make_intrinsic` from its :class:`numquad.ops.Op`
entry: the typer checks the operand and selector with the op's own messages
(``op.check_operand``, ``op.check_selector_constant``) and the lowering is chosen
by ``op.kind``. The kind lowerings are thin; the shared helpers below build the
PTX-level pieces (``shfl.sync`` for every type, ballots, ``redux.sync``, log-step
scans and butterflies).

Every op except the queries (``laneId``, ``width``) takes the *member mask* as
an extra last argument: the lanes that take part in this execution of the op,
as docs/semantics.md defines them. numquad/_control.py computes it in the
source (ballots at lane-varying branches and loop heads) and passes it; it is
the member mask of every ``shfl.sync``/``vote.sync``/``redux.sync`` and the
active set of the rules below (``activemask()`` after divergence names whichever
lanes the hardware happens to have together, so it is not used). Three helper
intrinsics serve the generated code: ``entry_mask()`` (the lanes of this wave
that exist), ``ballot(mask, pred)`` and ``andnot(a, b)``.

Inactive lanes follow docs/semantics.md:

* moves read the source lane only when it is in range and in the mask,
  otherwise they return the reader's own value; 64-bit runtime up/down
  distances are clamped to +-2**40 first, so a uint64 ``2**64 - 1`` is never -1;
* votes, ballots and bit counts use ``vote.sync.ballot`` over the mask, so
  inactive lanes read as false (``Quad.all``/``Wave.all`` are false when a
  lane of the quad/wave is inactive);
* scans run over the ranks of the active lanes: when the mask is a prefix
  (``m & (m + 1) == 0``, the case without divergence) rank and lane coincide and
  the scan is the log-step ``shfl.sync.up``; otherwise each step reads the lane
  of rank ``r - d`` (found by stripping the highest bits of the active lanes
  below) with ``shfl.sync.idx``;
* reductions: ``redux.sync`` for integers of <= 32 bits on sm_80+, else the
  butterfly of ops.py; when the wave is not full each step reads the partner
  block's first active lane (all lanes of a block hold the same partial), so
  the result equals the reference for every active pattern;
* float min/max: a NaN operand loses, min(+0.0, -0.0) is -0.0 and max +0.0 in
  either order (compares and selects, not ``llvm.minnum``).

The intrinsics are exposed as two module objects, ``CUDA_NAMESPACES["Quad"]``
and ``CUDA_NAMESPACES["Wave"]``, which the CUDA target puts in place of
``numquad.Quad``/``numquad.Wave`` in a kernel's globals.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import types as _pytypes

import numpy as np
from llvmlite import ir

from numba import cuda
from numba.cuda import cgutils, nvvmutils, types
from numba.cuda.core import targetconfig
from numba.cuda.core.errors import TypingError
from numba.cuda.extending import _intrinsic, intrinsic
from numba.cuda.np import numpy_support
from numba.cuda.typing import signature

from .. import _control, _llvmops, _power, ops
from ..errors import NumquadCompileError
from .._source import exec_source

__all__ = [
    "CUDA_NAMESPACES",
    "INTRINSICS",
    "HELPERS",
    "recording",
    "entry_mask",
    "full_entry_mask",
    "ballot",
    "andnot",
    "quad_grid",
]

_I1 = ir.IntType(1)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_WAVE = ops.WAVE

# An intrinsic whose typer sees literal arguments first, so a constant selector
# arrives as an IntegerLiteral (numba-cuda's public ``intrinsic`` prefers
# non-literal types and never shows the constant).
_literal_intrinsic = _intrinsic(target="cuda", prefer_literal=True)


# ---------------------------------------------------------------------------
# Typing: the op's own complaints
# ---------------------------------------------------------------------------

_state = threading.local()


@contextlib.contextmanager
def recording():
    """``with recording() as log:`` collects every op complaint (a message)
    raised while typing.

    The CUDA dispatcher uses it to turn Numba's TypingError into a
    NumquadTypeError that keeps the op's own message.
    """
    saved = getattr(_state, "log", None)
    _state.log = log = []
    try:
        yield log
    finally:
        _state.log = saved


def _reject(message):
    log = getattr(_state, "log", None)
    if log is not None:
        log.append(message)
    raise TypingError(message)


class _TypeName:
    """A Numba type, by name, for ``op.check_operand``: ``np.dtype()`` of it is a TypeError
    (a plain string such as "array(float32, 1d, C)" makes NumPy raise ValueError)."""

    def __init__(self, ty):
        self.name = str(ty)

    def __str__(self):
        return self.name


def _np_dtype(ty):
    """The NumPy dtype of a Numba scalar type, else an object naming the type."""
    if isinstance(ty, (types.Boolean, types.Integer, types.Float, types.Complex)):
        try:
            return numpy_support.as_dtype(ty)
        except Exception:  # noqa: BLE001 - an exotic scalar: report it by name
            pass
    return _TypeName(ty)


def _type_operand(op, ty):
    ty = types.unliteral(ty)
    complaint = op.check_operand(_np_dtype(ty))
    if complaint:
        _reject(complaint)
    return ty


def _type_selector(op, ty):
    """(numba type for the signature, constant value or None for a runtime selector)."""
    if isinstance(ty, types.IntegerLiteral):
        value = int(ty.literal_value)
        complaint = op.check_selector_constant(value)
        if complaint:
            # Not a Numba error: Numba would retry the call with the constant
            # as a runtime int64 (and succeed); this one ends the compilation.
            error = NumquadCompileError(complaint)
            error.op_message = complaint
            raise error
        return ty, value
    if isinstance(ty, types.Integer):
        return ty, None
    _reject(op.check_selector_type(ty, False))


def _nb_type(dtype):
    return numpy_support.from_dtype(np.dtype(dtype))


# ---------------------------------------------------------------------------
# IR helpers: the PTX building blocks
# ---------------------------------------------------------------------------


def _iconst(ty, value):
    """An integer constant of LLVM type *ty*, wrapped to its width (signed form)."""
    bits = ty.width
    value = int(value) & ((1 << bits) - 1)
    if bits > 1 and value >= 1 << (bits - 1):
        value -= 1 << bits
    return ir.Constant(ty, value)


def _const(nbty, value):
    """An LLVM constant of Numba scalar type *nbty* from a NumPy scalar."""
    llty = _llvm_type(nbty)
    if isinstance(nbty, types.Float):
        return ir.Constant(llty, float(value))
    return _iconst(llty, int(value))


def _llvm_type(nbty):
    if isinstance(nbty, types.Boolean):
        return _I1
    if isinstance(nbty, types.Float):
        return ir.FloatType() if nbty.bitwidth == 32 else ir.DoubleType()
    return ir.IntType(nbty.bitwidth)


def _is_signed(nbty):
    return isinstance(nbty, types.Integer) and nbty.signed


def _convergent(builder, fn, args):
    """A call that must stay control-equivalent: without ``convergent`` LLVM/NVVM may
    unroll a loop with a remainder or duplicate a block around it, splitting lanes that
    reach the same cross-lane op in the source (seen on the H200 as wrong swaps in a
    loop with lane-varying trip counts)."""
    if isinstance(fn, ir.Function):
        fn.attributes.add("convergent")
    return builder.call(fn, args, attrs=("convergent",))


def _entry_mask(builder):
    """The lanes of this thread's wave that exist: all 32, or fewer in the last wave
    of a block whose size is not a multiple of 32 (docs/semantics.md).

    A block of a multiple of 32 threads (the usual case) needs only the block
    shape; otherwise the linear thread id says how many lanes the wave has.
    """
    nx, ny, nz = (nvvmutils.call_sreg(builder, f"ntid.{c}") for c in "xyz")
    nthreads = builder.mul(builder.mul(nx, ny), nz)
    whole = builder.icmp_unsigned("==", builder.and_(nthreads, _iconst(_I32, 31)), _iconst(_I32, 0))
    with builder.if_else(whole, likely=True) as (then, otherwise):
        with then:
            bb_whole = builder.block
        with otherwise:
            tx, ty, tz = (nvvmutils.call_sreg(builder, f"tid.{c}") for c in "xyz")
            tid = builder.add(tx, builder.mul(nx, builder.add(ty, builder.mul(ny, tz))))
            left = builder.sub(nthreads, builder.and_(tid, _iconst(_I32, ~31)))  # >= 1
            width = builder.select(builder.icmp_unsigned("<", left, _iconst(_I32, 32)), left, _iconst(_I32, 32))
            part = builder.lshr(_iconst(_I32, 0xFFFFFFFF), builder.sub(_iconst(_I32, 32), width))
            bb_part = builder.block
    mask = builder.phi(_I32)
    mask.add_incoming(_iconst(_I32, 0xFFFFFFFF), bb_whole)
    mask.add_incoming(part, bb_part)
    return mask


def _laneid(builder):
    return nvvmutils.call_sreg(builder, "laneid")


def _lanemask_lt(builder):
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(_I32, []), "llvm.nvvm.read.ptx.sreg.lanemask.lt"
    )
    return builder.call(fn, [])


def _bit(builder, word, index):
    """Bit *index* (i32 in 0..31) of the i32 *word*, as i1.

    Written as ``word & (1 << index) != 0``: when *word* folds to ``0xFFFFFFFF``
    (a kernel of whole waves, numquad/cuda/dispatch.py) NVVM folds this to true,
    which it did not do for ``(word >> index) & 1``."""
    one = builder.shl(_iconst(_I32, 1), index)
    return builder.icmp_unsigned("!=", builder.and_(word, one), _iconst(_I32, 0))


def _ballot(builder, mask, pred):
    """``vote.sync.ballot.b32``: bit i set when lane i is in *mask* and its *pred* (i1) holds."""
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(_I32, (_I32, _I1)), "llvm.nvvm.vote.ballot.sync"
    )
    return _convergent(builder, fn, (mask, pred))


def _truth(builder, value):
    """A predicate (bool or integer) as i1: nonzero is true."""
    if value.type == _I1:
        return value
    return builder.icmp_unsigned("!=", value, ir.Constant(value.type, 0))


def _first_lane(builder, mask):
    """The lowest set lane of *mask* (ctz), i32; *mask* is never 0 (the caller is active)."""
    return builder.cttz(mask, ir.Constant(_I1, 1))


def _to_words(builder, value):
    """*value* as a list of i32 words: floats bitcast, 64-bit split, narrow widened."""
    ty = value.type
    if isinstance(ty, ir.FloatType):
        value = builder.bitcast(value, _I32)
    elif isinstance(ty, ir.DoubleType):
        value = builder.bitcast(value, _I64)
    width = value.type.width
    if width < 32:
        return [builder.zext(value, _I32)]
    if width == 32:
        return [value]
    lo = builder.trunc(value, _I32)
    hi = builder.trunc(builder.lshr(value, ir.Constant(_I64, 32)), _I32)
    return [lo, hi]


def _from_words(builder, words, ty):
    """The inverse of :func:`_to_words` for LLVM type *ty*."""
    if len(words) == 2:
        lo = builder.zext(words[0], _I64)
        hi = builder.shl(builder.zext(words[1], _I64), ir.Constant(_I64, 32))
        value = builder.or_(hi, lo)
    else:
        value = words[0]
    if isinstance(ty, (ir.FloatType, ir.DoubleType)):
        return builder.bitcast(value, ty)
    if ty.width < 32:
        return builder.trunc(value, ty)
    return value


def _shfl(builder, mode, mask, value, b, c):
    """``shfl.sync.<mode>.b32`` of a value of any scalar type, one shuffle per 32-bit word.

    *b* is an i32 value or a Python int (an immediate), *c* a Python int.
    """
    fnty = ir.FunctionType(_I32, (_I32,) * 4)
    fn = cgutils.get_or_insert_function(builder.module, fnty, f"llvm.nvvm.shfl.sync.{mode}.i32")
    if isinstance(b, int):
        b = _iconst(_I32, b)
    words = [_convergent(builder, fn, (mask, word, b, _iconst(_I32, c))) for word in _to_words(builder, value)]
    return _from_words(builder, words, value.type)


def _as_i32(builder, value):
    if value.type.width > 32:
        return builder.trunc(value, _I32)
    if value.type.width < 32:
        return builder.zext(value, _I32)
    return value


def _bits_equal(builder, a, b):
    """Bitwise equality of two scalars of the same LLVM type (floats by their bits)."""
    if isinstance(a.type, (ir.FloatType, ir.DoubleType)):
        ity = ir.IntType(32 if isinstance(a.type, ir.FloatType) else 64)
        a, b = builder.bitcast(a, ity), builder.bitcast(b, ity)
    return builder.icmp_unsigned("==", a, b)


# Combine operators, in IR. Bool operands use the combine's ``bool_as`` (ops.py):
# bool products/minima/maxima are AND/AND/OR, as NumPy computes them on bool arrays.
def _combine_name(op, nbty):
    comb = op.combine_fn
    return comb.bool_as if isinstance(nbty, types.Boolean) else comb.name


def _combine(builder, name, nbty, a, b):
    """``a (+) b`` for the ops.py combine *name* on Numba scalar type *nbty*."""
    kind = (
        "f"
        if isinstance(nbty, types.Float)
        else "i"
        if _is_signed(nbty)
        else "b"
        if isinstance(nbty, types.Boolean)
        else "u"
    )
    return _llvmops.combine(builder, name, kind, a, b)


def _compute_capability():
    flags = targetconfig.ConfigStack.top_or_none()
    cc = getattr(flags, "compute_capability", None) if flags is not None else None
    return tuple(cc[:2]) if cc else (0, 0)


def _redux(builder, name, nbty, mask, value):
    """``redux.sync`` (sm_80+) for an integer/bool of <= 32 bits, or None if it does not apply.

    Narrow values are extended by their signedness, so the truncated result is the
    wrapped sum / min / max of ops.py. Inline PTX: this libNVVM does not know
    ``llvm.nvvm.redux.sync.*``.
    """
    if name not in ("add", "min", "max", "and", "or", "xor") or _compute_capability() < (8, 0):
        return None
    if isinstance(nbty, types.Float) or _llvm_type(nbty).width > 32:
        return None
    signed = _is_signed(nbty)
    word = value if value.type.width == 32 else (builder.sext if signed else builder.zext)(value, _I32)
    ptxty = "b32" if name in ("and", "or", "xor") else ("s32" if signed else "u32")
    asm = ir.InlineAsm(
        ir.FunctionType(_I32, (_I32, _I32)), f"redux.sync.{name}.{ptxty} $0, $1, $2;", "=r,r,r", side_effect=True
    )
    out = _convergent(builder, asm, (word, mask))
    return out if value.type.width == 32 else builder.trunc(out, value.type)


class _IRInt:
    """An LLVM integer for which Python's ``& | ^ + -`` emit IR.

    ops.py's lane patterns (``lambda lane, sel: (lane & ~3) | (sel & 3)``) are
    evaluated on it, so the source lane the guard checks is computed by the
    catalogue's own formula.
    """

    def __init__(self, builder, value):
        self.builder = builder
        self.value = value

    def _other(self, other):
        if isinstance(other, _IRInt):
            return other.value
        return _iconst(self.value.type, other)

    def _bin(self, method, other, swap=False):
        a, b = self.value, self._other(other)
        if swap:
            a, b = b, a
        return _IRInt(self.builder, getattr(self.builder, method)(a, b))

    def __and__(self, o):
        return self._bin("and_", o)  # noqa: E704

    def __rand__(self, o):
        return self._bin("and_", o, True)  # noqa: E704

    def __or__(self, o):
        return self._bin("or_", o)  # noqa: E704

    def __ror__(self, o):
        return self._bin("or_", o, True)  # noqa: E704

    def __xor__(self, o):
        return self._bin("xor", o)  # noqa: E704

    def __rxor__(self, o):
        return self._bin("xor", o, True)  # noqa: E704

    def __add__(self, o):
        return self._bin("add", o)  # noqa: E704

    def __radd__(self, o):
        return self._bin("add", o, True)  # noqa: E704

    def __sub__(self, o):
        return self._bin("sub", o)  # noqa: E704

    def __rsub__(self, o):
        return self._bin("sub", o, True)  # noqa: E704


# ---------------------------------------------------------------------------
# Moves: match the op's lane pattern to a shfl.sync mode
# ---------------------------------------------------------------------------

# (mode, c, the lane the hardware reads for selector b). c = ((32 - width) << 8) | 0x1f;
# 0x1c1f makes segments of 4 lanes (the quad), up uses c = 0.
_FORMS = (
    ("bfly", 0x1F, lambda lane, b: lane ^ (b & 31)),
    ("idx", 0x1C1F, lambda lane, b: (lane & 0x1C) | (b & 3)),
    ("up", 0x00, lambda lane, b: lane - (b & 31)),
    ("down", 0x1F, lambda lane, b: lane + (b & 31)),
    ("idx", 0x1F, lambda lane, b: (b & 31) + 0 * lane),
)
_LANES = np.arange(_WAVE, dtype=np.int64)[None, :]
_RUNTIME_SELS = np.arange(-80, 80, dtype=np.int64)[:, None]


@functools.lru_cache(maxsize=None)
def _move_plan(qualname, sel):
    """How a move reads its source: ``(mode, c, b_is_src, needs_range_check)``.

    *sel* is the constant selector, or None for a runtime one. A form is used
    when the hardware reads the same lane as ``op.pattern`` wherever that lane
    is in range; otherwise ``shfl.sync.idx`` with b = the computed source lane.
    """
    op = ops.OPS[qualname]
    sels = _RUNTIME_SELS if sel is None else np.array([[sel]], dtype=np.int64)
    src = np.broadcast_to(op.pattern(_LANES, sels), (sels.shape[0], _WAVE))
    inrange = (src >= 0) & (src < _WAVE)
    for mode, c, hw in _FORMS:
        if np.array_equal(np.where(inrange, hw(_LANES, sels), 0), np.where(inrange, src, 0)):
            return mode, c, False, not inrange.all()
    return "idx", 0x1F, True, not inrange.all()


# ---------------------------------------------------------------------------
# Lowering, one builder per op.kind
# ---------------------------------------------------------------------------


def _lower_query(op, valty, sel):
    if op.query not in ("lane", "width"):
        raise ops.unknown_value("query", op.query, op)

    def codegen(context, builder, sig, args, mask):
        if op.query == "width":
            return _iconst(_I32, _WAVE)
        lane = _laneid(builder)  # %laneid is tid % 32 of the linear thread id
        if op.namespace == "Quad":
            return builder.and_(lane, _iconst(_I32, ops.QUAD - 1))
        return lane

    return codegen


#: A 64-bit runtime up/down distance is clamped into this range before the lane
#: arithmetic: every distance of 32 or more leaves the wave, and the clamped
#: value stays exact in int64 (a uint64 2**64 - 1 must not read as -1).
_DISTANCE_CLAMP = 2**40


def _exact_selector(builder, op, raw, nbty):
    """A runtime selector as an i64 holding its exact value (clamped for up/down)."""
    signed = _is_signed(nbty)
    if raw.type.width < 64:
        return (builder.sext if signed else builder.zext)(raw, _I64)
    if op.sel_kind not in ("up", "down"):
        return raw  # only its low bits are used
    hi = ir.Constant(_I64, _DISTANCE_CLAMP)
    if not signed:
        return builder.select(builder.icmp_unsigned(">", raw, hi), hi, raw)
    lo = ir.Constant(_I64, -_DISTANCE_CLAMP)
    raw = builder.select(builder.icmp_signed(">", raw, hi), hi, raw)
    return builder.select(builder.icmp_signed("<", raw, lo), lo, raw)


def _lower_move(op, valty, sel):
    if op.sel_kind == "first":  # the first active lane

        def codegen(context, builder, sig, args, mask):
            return _shfl(builder, "idx", mask, args[0], _first_lane(builder, mask), 0x1F)

        return codegen

    constant = sel if op.selector else op.xor_const  # None: a runtime selector
    mode, c, b_is_src, check_range = _move_plan(op.qualname, constant)

    def codegen(context, builder, sig, args, mask):
        value = args[0]
        lane = _laneid(builder)
        if constant is not None:
            sel_val, lane_val = constant, _IRInt(builder, lane)
        else:  # exact 64-bit lane arithmetic
            sel_val = _IRInt(builder, _exact_selector(builder, op, args[1], sig.args[1]))
            lane_val = _IRInt(builder, builder.zext(lane, _I64))
        src = op.pattern(lane_val, sel_val)
        src = src.value if isinstance(src, _IRInt) else _iconst(lane_val.value.type, src)
        src32 = _as_i32(builder, src)
        if check_range:  # the shift stays defined out of range
            ok = _bit(builder, mask, builder.and_(src32, _iconst(_I32, 31)))
            inrange = builder.icmp_unsigned("<", src, ir.Constant(src.type, _WAVE))
            ok = builder.and_(ok, inrange)
        else:
            ok = _bit(builder, mask, src32)
        if b_is_src:
            b = src32
        elif constant is not None:
            b = constant & 31  # the hardware reads b[4:0]
        else:
            b = _as_i32(builder, sel_val.value)
        moved = _shfl(builder, mode, mask, value, b, c)
        return builder.select(ok, moved, value)

    return codegen


def _lower_vote(op, valty, sel):
    if op.vote not in ("all", "any"):
        raise ops.unknown_value("vote", op.vote, op)

    def codegen(context, builder, sig, args, mask):
        word = _ballot(builder, mask, _truth(builder, args[0]))
        if op.namespace == "Quad":
            shift = builder.and_(_laneid(builder), _iconst(_I32, _WAVE - ops.QUAD))
            word = builder.and_(builder.lshr(word, shift), _iconst(_I32, 0xF))
            full = 0xF
        else:
            full = 0xFFFFFFFF
        if op.vote == "all":
            return builder.icmp_unsigned("==", word, _iconst(_I32, full))
        return builder.icmp_unsigned("!=", word, _iconst(_I32, 0))

    return codegen


def _count_below(builder, mask, pred):
    """popc(ballot(pred) & lanemask_lt): true active lanes below this one (uint32)."""
    word = _ballot(builder, mask, _truth(builder, pred))
    return builder.ctpop(builder.and_(word, _lanemask_lt(builder)))


def _lower_ballot(op, valty, sel):
    if op.vote not in ("ballot", "count", "prefix_count"):
        raise ops.unknown_value("vote", op.vote, op)

    def codegen(context, builder, sig, args, mask):
        if op.vote == "prefix_count":
            return _count_below(builder, mask, args[0])
        word = _ballot(builder, mask, _truth(builder, args[0]))
        return builder.ctpop(word) if op.vote == "count" else word

    return codegen


def _identities(op, valty):
    """(identity for a skipped lane, identity for the first lane of an exclusive scan)."""
    dt = np.dtype(str(valty))
    return _const(valty, op.combine_fn.identity(dt)), _const(valty, op.combine_fn.identity(dt, lane0=True))


def _ranks_below(builder, mask):
    """{d: (lane of rank r - d, whether it exists)} for d in LOG_STEPS, r being this
    lane's rank in *mask*: the d-th highest set bit of ``mask & lanemask_lt``.

    The highest set bit is stripped 16 times (``clz`` and a shift per step, a
    few instructions each); ``fns.b32`` does the same search but ptxas expands
    each one into a ~30-instruction binary search.
    """
    cur = builder.and_(mask, _lanemask_lt(builder))
    clz = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I32, (_I32, _I1)), "llvm.ctlz.i32")
    out = {}
    for k in range(1, ops.LOG_STEPS[-1] + 1):
        lead = builder.call(clz, (cur, ir.Constant(_I1, 0)))  # 32 when cur == 0
        if k in ops.LOG_STEPS:
            has = builder.icmp_unsigned("!=", cur, _iconst(_I32, 0))
            out[k] = (builder.sub(_iconst(_I32, 31), lead), has)
        if k < ops.LOG_STEPS[-1]:
            # clear the highest set bit: keep the bits below it (nothing when cur == 0)
            keep = builder.lshr(
                _iconst(_I32, 0x7FFFFFFF),
                builder.select(builder.icmp_unsigned("<", lead, _iconst(_I32, 31)), lead, _iconst(_I32, 31)),
            )
            cur = builder.and_(cur, keep)
    return out


def _scan_prefix_mask(builder, name, valty, mask, lane, v, ident0):
    """The exclusive scan when the active lanes are lanes 0..k-1 (rank == lane):
    log-step ``shfl.sync.up``; lane l >= d reads lane l - d, always active."""
    for d in ops.LOG_STEPS:
        up = _shfl(builder, "up", mask, v, d, 0)
        take = builder.icmp_unsigned(">=", lane, _iconst(_I32, d))
        v = builder.select(take, _combine(builder, name, valty, up, v), v)
    up = _shfl(builder, "up", mask, v, 1, 0)
    first = builder.icmp_unsigned("==", lane, _iconst(_I32, 0))
    return builder.select(first, ident0, up)


def _scan_any_mask(builder, name, valty, mask, lane, v, ident0):
    """The exclusive scan over the ranks of any active set: step d reads the lane of
    rank r - d with ``shfl.sync.idx``; rank 0 gets *ident0*."""
    srcs = {d: (builder.select(has, src, lane), has) for d, (src, has) in _ranks_below(builder, mask).items()}
    for d in ops.LOG_STEPS:
        src, has = srcs[d]
        other = _shfl(builder, "idx", mask, v, src, 0x1F)
        v = builder.select(has, _combine(builder, name, valty, other, v), v)
    src, has = srcs[1]  # the lane of rank r - 1
    prev = _shfl(builder, "idx", mask, v, src, 0x1F)
    return builder.select(has, prev, ident0)


def _lower_scan(op, valty, sel):
    if op.combine == "add" and isinstance(valty, types.Boolean):
        return lambda context, builder, sig, args, mask: _count_below(builder, mask, args[0])
    name = _combine_name(op, valty)

    def codegen(context, builder, sig, args, mask):
        _, ident0 = _identities(op, valty)
        lane = _laneid(builder)
        v = args[0]
        # a prefix mask (no divergence, a bounds-guarded tail): rank == lane
        prefix = builder.icmp_unsigned("==", builder.and_(mask, builder.add(mask, _iconst(_I32, 1))), _iconst(_I32, 0))
        with builder.if_else(prefix, likely=True) as (then, otherwise):
            with then:
                fast = _scan_prefix_mask(builder, name, valty, mask, lane, v, ident0)
                bb_fast = builder.block
            with otherwise:
                slow = _scan_any_mask(builder, name, valty, mask, lane, v, ident0)
                bb_slow = builder.block
        phi = builder.phi(v.type)
        phi.add_incoming(fast, bb_fast)
        phi.add_incoming(slow, bb_slow)
        return phi

    return codegen


def _butterfly(builder, name, valty, mask, lane, v, ident):
    """ops.py's butterfly; exact for every active pattern.

    A full wave uses ``shfl.sync.bfly`` with the immediate distance. Otherwise
    step d reads the first active lane of the partner's aligned block of d lanes
    (every lane of a block holds the same partial), or the identity when the
    whole block is inactive: the reference's inactive lanes hold identities.
    """
    full = builder.icmp_unsigned("==", mask, _iconst(_I32, 0xFFFFFFFF))
    with builder.if_else(full, likely=True) as (then, otherwise):
        with then:
            vf = v
            for d in ops.LOG_STEPS:
                vf = _combine(builder, name, valty, vf, _shfl(builder, "bfly", mask, vf, d, 0x1F))
            bb_full = builder.block
        with otherwise:
            vp = v
            for d in ops.LOG_STEPS:
                base = builder.and_(builder.xor(lane, _iconst(_I32, d)), _iconst(_I32, ~(d - 1)))
                block = builder.and_(builder.lshr(mask, base), _iconst(_I32, (1 << d) - 1))
                # bit d stops the count at d (block is empty), so no zero test is needed
                marked = builder.or_(block, _iconst(_I32, 1 << d))
                src = builder.add(base, builder.cttz(marked, ir.Constant(_I1, 1)))
                other = _shfl(builder, "idx", mask, vp, src, 0x1F)
                some = builder.icmp_unsigned("!=", block, _iconst(_I32, 0))
                vp = _combine(builder, name, valty, vp, builder.select(some, other, ident))
            bb_part = builder.block
    phi = builder.phi(v.type)
    phi.add_incoming(vf, bb_full)
    phi.add_incoming(vp, bb_part)
    return phi


def _lower_reduce(op, valty, sel):
    if op.combine == "add" and isinstance(valty, types.Boolean):

        def count(context, builder, sig, args, mask):
            return builder.ctpop(_ballot(builder, mask, args[0]))

        return count
    name = _combine_name(op, valty)

    def codegen(context, builder, sig, args, mask):
        out = _redux(builder, name, valty, mask, args[0])
        if out is not None:
            return out
        ident = _identities(op, valty)[0]
        return _butterfly(builder, name, valty, mask, _laneid(builder), args[0], ident)

    return codegen


def _lower_allequal(op, valty, sel):
    def codegen(context, builder, sig, args, mask):
        first = _shfl(builder, "idx", mask, args[0], _first_lane(builder, mask), 0x1F)
        word = _ballot(builder, mask, _bits_equal(builder, args[0], first))
        return builder.icmp_unsigned("==", word, mask)

    return codegen


def _lower_derivative(op, valty, sel):
    """``hi - lo`` (ops.derivative_sources): the catalogue's quad moves with constant
    selectors, lowered by :func:`_lower_move` (``shfl.sync``), then one ``fsub``.
    Fine: one swap (``shfl.sync.bfly``) and a select of the operand order by the
    lane's bit; coarse: two broadcasts (``shfl.sync.idx`` in segments of 4)."""
    if op.derivative not in ("fine", "coarse"):
        raise ops.unknown_value("derivative", op.derivative, op)
    if not isinstance(valty, types.Float):
        _reject(op.check_operand(_np_dtype(valty)))
    b = op.xor_const
    if op.derivative == "fine":
        swap = _lower_move(ops.quad_move("xor", b), valty, None)

        def codegen(context, builder, sig, args, mask):
            other = swap(context, builder, sig, args, mask)
            high = builder.icmp_unsigned("!=", builder.and_(_laneid(builder), _iconst(_I32, b)), _iconst(_I32, 0))
            hi = builder.select(high, args[0], other)
            lo = builder.select(high, other, args[0])
            return builder.fsub(hi, lo)

        return codegen
    bcast = ops.quad_move("quad")
    read_hi, read_lo = _lower_move(bcast, valty, b), _lower_move(bcast, valty, 0)

    def coarse(context, builder, sig, args, mask):
        hi = read_hi(context, builder, sig, args, mask)
        lo = read_lo(context, builder, sig, args, mask)
        return builder.fsub(hi, lo)

    return coarse


_LOWER = {
    "query": _lower_query,
    "move": _lower_move,
    "vote": _lower_vote,
    "ballot": _lower_ballot,
    "scan": _lower_scan,
    "reduce": _lower_reduce,
    "allequal": _lower_allequal,
    "derivative": _lower_derivative,
}


# ---------------------------------------------------------------------------
# The factory
# ---------------------------------------------------------------------------


def _type_mask(op, ty):
    if not isinstance(ty, types.Integer):
        _reject(f"{op.qualname}: the member mask must be an integer; got {ty}")
    return types.unliteral(ty)


def _type_call(op, argtys):
    """The typer shared by every op: ``(signature, codegen)``.

    *argtys* are the op's parameters, then (every op but the queries) the
    member mask, which numquad's control-flow transform passes.
    """
    sigargs, valty, sel = [], None, None
    if op.params:
        valty = _type_operand(op, argtys[0])
        sigargs.append(valty)
    if op.selector:
        selty, sel = _type_selector(op, argtys[1])
        sigargs.append(selty)
    has_mask = op.kind != "query"
    if has_mask:
        sigargs.append(_type_mask(op, argtys[len(op.params)]))
    restype = _nb_type(op.result_dtype(np.dtype(str(valty)) if valty is not None else None))
    lower = _LOWER[op.kind](op, valty, sel)

    def codegen(context, builder, sig, args):
        if not has_mask:
            return lower(context, builder, sig, args, None)
        return lower(context, builder, sig, args[:-1], _as_i32(builder, args[-1]))

    return signature(restype, *sigargs), codegen


def _make_intrinsic(op):
    """The numba-cuda intrinsic for *op*, with the op's parameter names and doc
    (plus ``mask``, the member mask, for every op but the queries)."""
    params = op.params + (("mask",) if op.kind != "query" else ())
    scope = {"_type_call": _type_call, "op": op}
    args = "".join(f"{p}, " for p in params)
    src = f"def {op.name}({', '.join(('typingctx',) + params)}):\n    return _type_call(op, ({args}))\n"
    filename = f"<numquad.cuda {op.qualname}>"
    exec_source(src, filename, scope)
    typer = scope[op.name]
    typer.__doc__ = op.doc
    typer.__qualname__ = op.qualname
    typer.__module__ = __name__
    return _literal_intrinsic(typer)


# ---------------------------------------------------------------------------
# The helpers of the generated control flow (numquad/_control.py)
# ---------------------------------------------------------------------------


@intrinsic
def entry_mask(typingctx):
    """entry_mask() -> uint32: the lanes of this thread's wave that exist."""

    def codegen(context, builder, sig, args):
        return _entry_mask(builder)

    return signature(types.uint32), codegen


@intrinsic
def full_entry_mask(typingctx):
    """full_entry_mask() -> uint32: ``0xFFFFFFFF``, the entry mask of a kernel
    compiled for blocks of a multiple of 32 threads (every wave full); the member
    masks of uniform code are then constants, and the ops lower as a hand-written
    kernel's (numquad/cuda/dispatch.py, ``CUDATarget.kernel``)."""

    def codegen(context, builder, sig, args):
        return _iconst(_I32, 0xFFFFFFFF)

    return signature(types.uint32), codegen


@intrinsic
def ballot(typingctx, mask, pred):
    """ballot(mask, pred) -> uint32: the lanes of *mask* whose *pred* holds
    (``vote.sync.ballot`` with member mask *mask*: exactly those lanes execute it)."""
    if not isinstance(mask, types.Integer) or not isinstance(pred, (types.Boolean, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        return _ballot(builder, _as_i32(builder, args[0]), _truth(builder, args[1]))

    return signature(types.uint32, types.unliteral(mask), types.unliteral(pred)), codegen


@intrinsic
def andnot(typingctx, a, b):
    """andnot(a, b) -> uint32: ``a & ~b`` (the lanes of a mask on the else side)."""
    if not isinstance(a, types.Integer) or not isinstance(b, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        x, y = _as_i32(builder, args[0]), _as_i32(builder, args[1])
        return builder.and_(x, builder.xor(y, _iconst(_I32, 0xFFFFFFFF)))

    return signature(types.uint32, types.unliteral(a), types.unliteral(b)), codegen


@_literal_intrinsic
def quad_grid(typingctx, ndim):
    """quad_grid(2) -> (int64, int64): the pixel of this thread with 2x2 pixel quads
    (numquad/xpu.py has the formula, docs/lanes.md the picture)."""
    if not isinstance(ndim, types.IntegerLiteral) or ndim.literal_value != 2:
        got = ndim.literal_value if isinstance(ndim, types.IntegerLiteral) else f"a runtime {ndim}"
        _reject(f"xpu.quad_grid(ndim) got ndim {got}; it takes the constant 2 (2x2 pixel quads in a 2-D launch)")

    def codegen(context, builder, sig, args):
        tx, ty, nx, ny, bx, by = (
            nvvmutils.call_sreg(builder, r) for r in ("tid.x", "tid.y", "ntid.x", "ntid.y", "ctaid.x", "ctaid.y")
        )
        one, two = _iconst(_I32, 1), _iconst(_I32, 2)
        # t: the thread's index in its pair of rows (whole quads when blockDim.x is even)
        t = builder.add(builder.mul(builder.and_(ty, one), nx), tx)
        dx = builder.add(builder.shl(builder.lshr(t, two), one), builder.and_(t, one))
        dy = builder.add(builder.and_(ty, _iconst(_I32, ~1)), builder.and_(builder.lshr(t, one), one))
        x = builder.add(builder.mul(builder.zext(bx, _I64), builder.zext(nx, _I64)), builder.zext(dx, _I64))
        y = builder.add(builder.mul(builder.zext(by, _I64), builder.zext(ny, _I64)), builder.zext(dy, _I64))
        return cgutils.pack_array(builder, (x, y))

    return signature(types.UniTuple(types.int64, 2), types.unliteral(ndim)), codegen


# The CUDA target compiles ``xpu.quad_grid`` as ``cuda.quad_grid`` (numquad/cuda/substitute.py
# maps the xpu module to numba.cuda, whose module attributes Numba types by their value):
# numba.cuda has no such name, so the intrinsic above is given that name there.
if not hasattr(cuda, "quad_grid"):
    cuda.quad_grid = quad_grid


#: ``_nq_pow(a, b)`` (numquad/_power.py): ``a ** b`` as numba.cuda types it, a float to an
#: integer power by :func:`numquad._power.float_power` (numba.cuda's own raises
#: OverflowError for an exponent of -2**31 or -2**63, and the thread of a release kernel
#: that raises returns early), any other pair by numba.cuda's ``**``
power = intrinsic(_power.power_typer(types, "power"))


#: The helpers by the names numquad/_control.py's generated code calls them.
HELPERS = {_control.ENTRY_MASK: entry_mask, _control.BALLOT: ballot, _control.ANDNOT: andnot, _power.NAME: power}


#: The intrinsic of every op, by qualified name.
INTRINSICS = {name: _make_intrinsic(op) for name, op in ops.OPS.items()}


def _namespace(name):
    mod = _pytypes.ModuleType(f"numquad.cuda.{name}", getattr(ops, name).__doc__)
    names = []
    for qualname, fn in INTRINSICS.items():
        ns, opname = qualname.split(".")
        if ns == name:
            setattr(mod, opname, fn)
            names.append(opname)
    mod.__all__ = names
    return mod


#: ``{"Quad": module, "Wave": module}``: the ops as intrinsics, typed by Numba as
#: module attributes (``Quad.swapHorizontal(v)`` inside a kernel).
CUDA_NAMESPACES = {name: _namespace(name) for name in ("Quad", "Wave")}
