"""Whole-wave LLVM vector operations for the CPU wave compiler.

A wave's per-lane values live in 64-byte-aligned ``[32 x T]`` stack arrays
(:func:`lanes`). Each cross-lane op loads whole ``<32 x T>`` vectors, works on
them with ``shufflevector``/``select``/log-step scans/vector reductions, and does
one masked store: lanes whose mask is false keep their old value.

Every op of :mod:`numquad.ops` is lowered by one factory per ``op.kind``; the
factories take the pattern, combine and identity from the ops.py entry.
"""

from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_borrowed
from numba.core.errors import TypingError
from numba.extending import intrinsic, register_jitable
from numba.np.numpy_support import as_dtype

from .. import _llvmops
from .. import ops as _ops

__all__ = [
    "view_index",
    "lanes",
    "lane_load",
    "lane_store",
    "lane_store_if",
    "mask_copy",
    "mask_andnot",
    "mask_any",
    "mask_all",
    "nonneg",
    "int_floordiv",
    "int_mod",
    "XL_INTRINSICS",
]

W = _ops.WAVE
_i1 = ir.IntType(1)
_i8 = ir.IntType(8)
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)
_LANES = ir.Constant(ir.VectorType(_i32, W), [ir.Constant(_i32, i) for i in range(W)])


# ---------------------------------------------------------------------------
# Lane arrays
# ---------------------------------------------------------------------------


def _scalar_of(ty):
    if isinstance(ty, types.NumberClass):
        return ty.instance_type
    if isinstance(ty, types.DType):
        return ty.dtype
    if isinstance(ty, types.Function) and ty.typing_key is np.bool_:
        return types.boolean
    return None


#: Lanes of a block-wide lane array (CUDA's largest block).
BLOCK_LANES = 1024


@register_jitable
def shared_alloc(nbytes):
    """The bytes of one shared array (16-byte aligned) between BLOCK_LANES x 16 bytes
    of padding on each side, written once: a vector store whose masked-off lanes
    point outside the array then stays on touched pages (cpu/generated.py ``alloc_stmts``)."""
    pad = BLOCK_LANES
    n = (nbytes + 15) // 16
    buf = np.empty(n + 2 * pad, np.complex128)
    buf[:pad] = 0
    buf[pad + n :] = 0
    return buf[pad : pad + n].view(np.uint8)


def _lanes_impl(count):
    def impl(typingctx, dtype):
        ty = _scalar_of(dtype)
        if ty is None:
            raise TypingError(f"lanes() takes a scalar type; got {dtype}")
        arrty = types.Array(ty, 1, "C")
        return arrty(dtype), _lanes_codegen(ty, arrty, count)

    return impl


def _lanes_codegen(ty, arrty, count):
    def codegen(context, builder, sig, args):
        llty = context.get_data_type(ty)
        with builder.goto_entry_block():
            ptr = builder.alloca(ir.ArrayType(llty, count))
            ptr.align = 64
            builder.store(ir.ArrayType(llty, count)(None), ptr)
        data = builder.bitcast(ptr, llty.as_pointer())
        ary = context.make_array(arrty)(context, builder)
        itemsize = context.get_abi_sizeof(llty)
        intp = context.get_value_type(types.intp)
        context.populate_array(
            ary,
            data=data,
            shape=cgutils.pack_array(builder, [ir.Constant(intp, count)]),
            strides=cgutils.pack_array(builder, [ir.Constant(intp, itemsize)]),
            itemsize=ir.Constant(intp, itemsize),
            meminfo=None,
        )
        return ary._getvalue()

    return codegen


lanes = intrinsic(_lanes_impl(W))
lanes.__doc__ = "``lanes(np.float32)``: a 64-byte-aligned [32 x T] stack array (zeroed at entry)."
lanes_block = intrinsic(_lanes_impl(BLOCK_LANES))
lanes_block.__doc__ = "``lanes_block(np.float32)``: a 64-byte-aligned [1024 x T] stack array."


def _null_is_zero(ty):
    """Whether Numba's null constant of *ty* is its zero value (scalars, complex
    numbers and tuples of them)."""
    if isinstance(ty, (types.Integer, types.Float, types.Boolean, types.Complex)):
        return True
    return isinstance(ty, types.BaseTuple) and all(_null_is_zero(t) for t in ty)


@intrinsic
def zero_like(typingctx, x):
    """``zero_like(x)``: 0 of x's type, as Numba reads a variable no assignment
    reached (its ``undef``: a null constant); x itself where the type's null is no
    value (arrays, records). cpu/inline.py sets a callee's locals with it at each
    inlined call."""
    ty = types.unliteral(x)

    def codegen(context, builder, sig, args):
        if _null_is_zero(sig.return_type):
            return context.get_constant_null(sig.return_type)
        return impl_ret_borrowed(context, builder, sig.return_type, args[0])

    return ty(ty), codegen


@intrinsic
def wave_view(typingctx, arr, w):
    """Lanes ``32*w .. 32*w+31`` of a block-wide lane array, as a 32-lane array."""

    def codegen(context, builder, sig, args):
        arrty = sig.args[0]
        src = context.make_array(arrty)(context, builder, args[0])
        off = builder.mul(args[1], ir.Constant(args[1].type, W))
        ary = context.make_array(arrty)(context, builder)
        intp = context.get_value_type(types.intp)
        context.populate_array(
            ary,
            data=builder.gep(src.data, [off], inbounds=True),
            shape=cgutils.pack_array(builder, [ir.Constant(intp, W)]),
            strides=src.strides,
            itemsize=src.itemsize,
            meminfo=None,
        )
        return ary._getvalue()

    return arr(arr, w), codegen


def _vec_ptr(context, builder, arrty, arr):
    ary = context.make_array(arrty)(context, builder, arr)
    llty = context.get_data_type(arrty.dtype)
    return builder.bitcast(ary.data, ir.VectorType(llty, W).as_pointer())


def _align(context, arrty):
    """Lane arrays start 64-byte aligned and a wave's slice of a block-wide lane
    array starts at a multiple of 32 elements."""
    return min(64, W * context.get_abi_sizeof(context.get_data_type(arrty.dtype)))


def _load(context, builder, arrty, arr):
    ptr = _vec_ptr(context, builder, arrty, arr)
    return builder.load(ptr, align=_align(context, arrty))


def _load_mask(context, builder, arrty, arr):
    v = _load(context, builder, arrty, arr)
    return builder.icmp_unsigned("!=", v, v.type(None))


def _store_masked(context, builder, arrty, arr, mask, value):
    """out[l] = value[l] where mask[l]; other lanes keep their old value."""
    ptr = _vec_ptr(context, builder, arrty, arr)
    align = _align(context, arrty)
    old = builder.load(ptr, align=align)
    if value.type != old.type:  # bool results: i1 -> i8
        value = builder.zext(value, old.type)
    builder.store(builder.select(mask, value, old), ptr, align=align)


def _splat(builder, scalar):
    vt = ir.VectorType(scalar.type, W)
    v = builder.insert_element(vt(ir.Undefined), scalar, ir.Constant(_i32, 0))
    return builder.shuffle_vector(v, vt(ir.Undefined), ir.Constant(ir.VectorType(_i32, W), [0] * W))


def _const_vec(llty, values):
    return ir.Constant(ir.VectorType(llty, W), [ir.Constant(llty, v) for v in values])


def _shuffle(builder, v, src):
    """v[src[l]] for a compile-time list *src* (one shufflevector)."""
    return builder.shuffle_vector(v, v, _const_vec(_i32, src))


def _ballot(builder, bits):
    return builder.bitcast(bits, _i32)


def _bits(context, builder, mask, predty, pred_arr, pred_val):
    v = _load(context, builder, predty, pred_arr)
    return builder.and_(mask, builder.icmp_unsigned("!=", v, v.type(None)))


def _call_intr(builder, name, args, retty):
    mod = builder.module
    fnty = ir.FunctionType(retty, [a.type for a in args])
    fn = cgutils.get_or_insert_function(mod, fnty, name)
    return builder.call(fn, args)


def _vec_suffix(vt):
    el = vt.element
    if isinstance(el, ir.FloatType):
        return f"v{W}f32"
    if isinstance(el, ir.DoubleType):
        return f"v{W}f64"
    return f"v{W}i{el.width}"


def _popcount(builder, v):
    return _call_intr(builder, f"llvm.ctpop.{_vec_suffix(v.type)}", [v], v.type)


# ---------------------------------------------------------------------------
# A tiny expression wrapper so ops.py's lane patterns (plain Python lambdas
# like ``(lane & ~3) | (sel & 3)``) build LLVM vector code directly.
# ---------------------------------------------------------------------------


class _V:
    def __init__(self, builder, value):
        self.b = builder
        self.v = value

    def _c(self, other):
        if isinstance(other, _V):
            return other.v
        return _const_vec(_i32, [int(other)] * W)

    def _bin(self, fn, other):
        return _V(self.b, fn(self.v, self._c(other)))

    def __and__(self, o):
        return self._bin(self.b.and_, o)

    def __or__(self, o):
        return self._bin(self.b.or_, o)

    def __xor__(self, o):
        return self._bin(self.b.xor, o)

    def __add__(self, o):
        return self._bin(self.b.add, o)

    def __sub__(self, o):
        return self._bin(self.b.sub, o)

    __rand__, __ror__, __rxor__, __radd__ = __and__, __or__, __xor__, __add__


#: An up/down distance is clamped into -_SEL_CLAMP.._SEL_CLAMP before lane arithmetic:
#: every distance of 32 or more reads outside the wave, so this keeps the result
#: exact in 32 bits (a uint64 2**64 - 1 must not become -1, nor 2**32 + 4 become 4).
_SEL_CLAMP = 64


def _sel_i32(builder, op, signed, s):
    """A selector value (scalar or vector, any width) as i32 with the op's meaning
    kept: ``& 31``/``& 3`` selectors keep their low bits, up/down distances are
    clamped to their exact value's sign and magnitude (docs/semantics.md)."""
    ty = s.type
    el = ty.element if isinstance(ty, ir.VectorType) else ty
    wrap = (lambda t: ir.VectorType(t, W)) if isinstance(ty, ir.VectorType) else (lambda t: t)

    def c(t, v):
        return ir.Constant(wrap(t), v) if not isinstance(ty, ir.VectorType) else _const_vec(t, [v] * W)

    if op.sel_kind in ("up", "down") and el.width >= 32:
        hi = c(el, _SEL_CLAMP)
        if signed:
            lo = c(el, -_SEL_CLAMP & ((1 << el.width) - 1))
            s = builder.select(builder.icmp_signed(">", s, hi), hi, s)
            s = builder.select(builder.icmp_signed("<", s, lo), lo, s)
        else:
            s = builder.select(builder.icmp_unsigned(">", s, hi), hi, s)
    if el.width > 32:
        return builder.trunc(s, wrap(_i32))
    if el.width < 32:
        return (builder.sext if signed else builder.zext)(s, wrap(_i32))
    return s


def _sel_vector(context, builder, op, selty, sel):
    """The selector as <32 x i32>: a literal, a uniform scalar or a lane array."""
    if isinstance(selty, types.Array):
        return _sel_i32(builder, op, selty.dtype.signed, _load(context, builder, selty, sel))
    if isinstance(selty, types.IntegerLiteral):
        v = selty.literal_value
        if op.sel_kind in ("up", "down"):
            v = max(-_SEL_CLAMP, min(_SEL_CLAMP, v))
        return _const_vec(_i32, [v & 0xFFFFFFFF] * W)
    return _splat(builder, _sel_i32(builder, op, selty.signed, sel))


def _gather(context, builder, arrty, arr, idx):
    """arr[idx[l]] for a runtime <32 x i32> idx with every entry in 0..31: one
    ``llvm.masked.gather`` from the lane array (vgather on AVX2/AVX-512)."""
    ary = context.make_array(arrty)(context, builder, arr)
    llty = context.get_data_type(arrty.dtype)
    size = context.get_abi_sizeof(llty)
    base = _splat(builder, builder.ptrtoint(ary.data, _i64))
    offs = builder.mul(builder.zext(idx, ir.VectorType(_i64, W)), _const_vec(_i64, [size] * W))
    ptrty = ary.data.type
    ptrs = builder.inttoptr(builder.add(base, offs), ir.VectorType(ptrty, W))
    vt = ir.VectorType(llty, W)
    name = f"llvm.masked.gather.{_vec_suffix(vt)}.v{W}p0"
    return _call_intr(builder, name, [ptrs, ir.Constant(_i32, size), _const_vec(_i1, [1] * W), vt(ir.Undefined)], vt)


# ---------------------------------------------------------------------------
# Combine operators on vectors
# ---------------------------------------------------------------------------


def _combine(builder, name, dtype, a, b):
    """``a (+) b`` for the ops.py combine operator *name* on vectors of *dtype*."""
    return _llvmops.combine(builder, name, dtype.kind, a, b)


def _identity_vec(llty, combine, dtype, lane0=False):
    val = combine.identity(dtype, lane0=lane0)
    if dtype.kind == "f":
        return ir.Constant(ir.VectorType(llty, W), [ir.Constant(llty, float(val))] * W)
    if dtype.kind == "b":
        return _const_vec(llty, [int(bool(val))] * W)
    return _const_vec(llty, [int(val) & ((1 << llty.width) - 1)] * W)


def _operand(context, builder, op, xty, x, resdt):
    """Load the operand and convert it to the result type (bool sum -> uint32)."""
    v = _load(context, builder, xty, x)
    if resdt == np.dtype("uint32") and as_dtype(xty.dtype) == np.dtype("bool"):
        v = builder.zext(builder.icmp_unsigned("!=", v, v.type(None)), ir.VectorType(_i32, W))
    return v


# ---------------------------------------------------------------------------
# One compute function per op kind: (op, sig, context, builder, mask, args) ->
# the whole-wave result, for the call ``xl(mask, out, x[, sel])``; _make_xl
# wraps each in the shared load-mask / masked-store codegen.
# ---------------------------------------------------------------------------


def _first_active(builder, mask):
    first = _call_intr(builder, "llvm.cttz.i32", [_ballot(builder, mask), ir.Constant(_i1, 0)], _i32)
    return builder.and_(first, ir.Constant(_i32, W - 1))


def _move(op, sig, context, builder, mask, args):
    xty = sig.args[2]
    selty = sig.args[3] if len(sig.args) > 3 else None
    x = _load(context, builder, xty, args[2])
    if op.sel_kind == "first":
        return _splat(builder, builder.extract_element(x, _first_active(builder, mask)))
    const_sel = 0 if selty is None else (selty.literal_value if isinstance(selty, types.IntegerLiteral) else None)
    if const_sel is not None:
        return _move_const(builder, x, mask, [op.pattern(l, const_sel) for l in range(W)])
    if isinstance(selty, types.Integer):
        sel = _sel_i32(builder, op, selty.signed, args[3])
        if op.sel_kind in ("up", "down"):
            # 0..31: composed constant shuffles; a negative distance (which reads the
            # other way) or one past the wave: the general path
            near = builder.icmp_unsigned("<", sel, ir.Constant(_i32, W))
            with builder.if_else(near, likely=True) as (then, otherwise):
                with then:
                    mv_n, act_n = _move_uniform(op, builder, x, mask, sel)
                    bb_n = builder.block
                with otherwise:
                    mv_f, act_f = _move_gather(op, context, builder, sig, args, _splat(builder, sel))
                    bb_f = builder.block
            moved = builder.phi(mv_n.type)
            moved.add_incoming(mv_n, bb_n)
            moved.add_incoming(mv_f, bb_f)
            src_active = builder.phi(act_n.type)
            src_active.add_incoming(act_n, bb_n)
            src_active.add_incoming(act_f, bb_f)
        else:
            moved, src_active = _move_uniform(op, builder, x, mask, sel)
    else:
        moved, src_active = _move_gather(
            op, context, builder, sig, args, _sel_vector(context, builder, op, selty, args[3])
        )
    return builder.select(src_active, moved, x)


def _move_const(builder, x, mask, src):
    """A move with constant source lanes *src* (one per lane): one shufflevector of
    the values, one of the mask, and the move rule's select (an inactive or
    out-of-range source gives the reader's own value)."""
    ok = [0 <= s < W for s in src]
    src = [s if o else l for l, (s, o) in enumerate(zip(src, ok))]
    moved = _shuffle(builder, x, src)
    src_active = _shuffle(builder, mask, src)
    if not all(ok):
        src_active = builder.and_(src_active, _const_vec(_i1, [int(o) for o in ok]))
    return builder.select(src_active, moved, x)


def _derivative(op, sig, context, builder, mask, args):
    """``hi - lo`` (ops.derivative_sources): the quad moves the derivative reads,
    lowered as the catalogue's moves with constant selectors are, then one ``fsub``.
    Fine: one swap (``Quad.swapHorizontal``/``swapVertical``) and a select of the
    operand order by the lane's bit; coarse: two ``Quad.broadcast``s."""
    if op.derivative not in ("fine", "coarse"):
        raise _ops.unknown_value("derivative", op.derivative, op)
    x = _load(context, builder, sig.args[2], args[2])
    if not isinstance(x.type.element, (ir.FloatType, ir.DoubleType)):
        raise TypingError(op.check_operand(as_dtype(sig.args[2].dtype)))
    b = op.xor_const
    if op.derivative == "fine":
        swap = _ops.quad_move("xor", b)
        other = _move_const(builder, x, mask, [swap.pattern(l, 0) for l in range(W)])
        high = _const_vec(_i1, [int(bool(l & b)) for l in range(W)])  # the lane is hi itself
        hi = builder.select(high, x, other)
        lo = builder.select(high, other, x)
    else:
        bcast = _ops.quad_move("quad")
        hi = _move_const(builder, x, mask, [bcast.pattern(l, b) for l in range(W)])
        lo = _move_const(builder, x, mask, [bcast.pattern(l, 0) for l in range(W)])
    return builder.fsub(hi, lo)


def _move_gather(op, context, builder, sig, args, selv):
    """(moved, source-active) for a <32 x i32> selector: per-lane source lanes, one
    gather of the values and one of the mask."""
    srcv = op.pattern(_V(builder, _LANES), _V(builder, selv)).v
    inrange = builder.icmp_unsigned("<", srcv, _const_vec(_i32, [W] * W))
    srcv = builder.select(inrange, srcv, _LANES)
    moved = _gather(context, builder, sig.args[2], args[2], srcv)
    src_mask = _gather(context, builder, sig.args[0], args[0], srcv)
    src_active = builder.and_(builder.icmp_unsigned("!=", src_mask, src_mask.type(None)), inrange)
    return moved, src_active


def _move_uniform(op, builder, x, mask, sel):
    """(moved, source-active) for a selector that is the same in every lane: a few
    constant shufflevectors and selects instead of a gather."""

    def staged(shifts, out_of_range):
        # compose the move from its power-of-two steps, one per bit of sel
        v, m, ok = x, mask, _const_vec(_i1, [1] * W)
        for b, src in enumerate(shifts):
            bit = builder.icmp_unsigned("!=", builder.and_(sel, ir.Constant(_i32, 1 << b)), ir.Constant(_i32, 0))
            v = builder.select(bit, _shuffle(builder, v, src), v)
            m = builder.select(bit, _shuffle(builder, m, src), m)
            if out_of_range:
                inr = _const_vec(_i1, [int(0 <= p < W) for p in out_of_range(1 << b)])
                ok = builder.select(bit, builder.and_(_shuffle(builder, ok, src), inr), ok)
        return v, builder.and_(m, ok)

    bits = range(5)
    if op.sel_kind == "xor":
        return staged([[l ^ (1 << b) for l in range(W)] for b in bits], None)
    if op.sel_kind in ("up", "down"):  # sel in 0..31 (the caller checks)
        sign = -1 if op.sel_kind == "up" else 1
        return staged(
            [[min(max(l + sign * (1 << b), 0), W - 1) for l in range(W)] for b in bits],
            lambda d: [l + sign * d for l in range(W)],
        )
    if op.sel_kind == "lane":
        lane = builder.and_(sel, ir.Constant(_i32, W - 1))
        return _splat(builder, builder.extract_element(x, lane)), _splat(builder, builder.extract_element(mask, lane))
    if op.sel_kind != "quad":
        raise _ops.unknown_value("sel_kind", op.sel_kind, op)
    # lane (sel & 3) of each quad
    idx = builder.and_(sel, ir.Constant(_i32, 3))
    v, m = x, mask
    for q in range(4):
        hit = builder.icmp_unsigned("==", idx, ir.Constant(_i32, q))
        src = [(l & ~3) | q for l in range(W)]
        v = builder.select(hit, _shuffle(builder, x, src), v)
        m = builder.select(hit, _shuffle(builder, mask, src), m)
    return v, m


def _vote(op, sig, context, builder, mask, args):
    if op.vote not in ("all", "any"):
        raise _ops.unknown_value("vote", op.vote, op)
    word = _ballot(builder, _bits(context, builder, mask, sig.args[2], args[2], None))
    if op.namespace == "Quad":
        shifted = builder.lshr(_splat(builder, word), builder.and_(_LANES, _const_vec(_i32, [~3 & 0xFFFFFFFF] * W)))
        nib = builder.and_(shifted, _const_vec(_i32, [0xF] * W))
        if op.vote == "all":
            return builder.icmp_unsigned("==", nib, _const_vec(_i32, [0xF] * W))
        return builder.icmp_unsigned("!=", nib, _const_vec(_i32, [0] * W))
    if op.vote == "all":
        return _splat(builder, builder.icmp_unsigned("==", word, ir.Constant(_i32, 0xFFFFFFFF)))
    return _splat(builder, builder.icmp_unsigned("!=", word, ir.Constant(_i32, 0)))


def _ballot_op(op, sig, context, builder, mask, args):
    if op.vote not in ("ballot", "count", "prefix_count"):
        raise _ops.unknown_value("vote", op.vote, op)
    word = _ballot(builder, _bits(context, builder, mask, sig.args[2], args[2], None))
    if op.vote == "ballot":
        return _splat(builder, word)
    if op.vote == "count":
        return _splat(builder, _call_intr(builder, "llvm.ctpop.i32", [word], _i32))
    below = _const_vec(_i32, [(1 << l) - 1 for l in range(W)])  # prefix_count
    return _popcount(builder, builder.and_(_splat(builder, word), below))


def _scan_input(op, sig, context, builder, mask, args):
    """The operand in the result type, inactive lanes replaced by the identity."""
    resdt = as_dtype(sig.args[1].dtype)
    v = _operand(context, builder, op, sig.args[2], args[2], resdt)
    return builder.select(mask, v, _identity_vec(v.type.element, op.combine_fn, resdt)), resdt


def _scan(op, sig, context, builder, mask, args):
    """The exclusive log-step scan over the ranks of the active lanes
    (docs/semantics.md). When the active lanes are 0..k-1 (the usual case) rank and
    lane coincide; otherwise the active values are compressed to the front of the
    vector first and the results expanded back (``llvm.masked.compressstore`` /
    ``expandload``: vpcompress/vpexpand on AVX-512)."""
    v, resdt = _scan_input(op, sig, context, builder, mask, args)
    comb = op.combine_fn
    word = _ballot(builder, mask)
    gappy = builder.icmp_unsigned(
        "!=", builder.and_(word, builder.add(word, ir.Constant(_i32, 1))), ir.Constant(_i32, 0)
    )
    vt = v.type
    suffix = _vec_suffix(vt)
    with builder.goto_entry_block():
        tmp = builder.alloca(vt)
        tmp.align = 64
    builder.store(v, tmp)
    with builder.if_then(gappy, likely=False):
        builder.store(_identity_vec(vt.element, comb, resdt), tmp)
        _call_intr(
            builder,
            f"llvm.masked.compressstore.{suffix}",
            [v, builder.bitcast(tmp, vt.element.as_pointer()), mask],
            ir.VoidType(),
        )
    v = builder.load(tmp)
    for d in _ops.LOG_STEPS:
        up = _shuffle(builder, v, [l - d if l >= d else l for l in range(W)])
        summed = _combine(builder, comb.name, resdt, up, v)
        v = builder.select(_const_vec(_i1, [int(l >= d) for l in range(W)]), summed, v)
    # exclusive: shift up one rank, rank 0 gets the first-lane identity
    ident0 = _identity_vec(v.type.element, comb, resdt, lane0=True)
    v = builder.shuffle_vector(v, ident0, _const_vec(_i32, [W] + list(range(W - 1))))
    builder.store(v, tmp)
    with builder.if_then(gappy, likely=False):
        ex = _call_intr(
            builder, f"llvm.masked.expandload.{suffix}", [builder.bitcast(tmp, vt.element.as_pointer()), mask, v], vt
        )
        builder.store(ex, tmp)
    return builder.load(tmp)


#: ``llvm.vector.reduce.*`` by combine operator; min/max take an s/u prefix.
_VEC_REDUCE = {"add": "add", "mul": "mul", "and": "and", "or": "or", "xor": "xor"}


def _reduce(op, sig, context, builder, mask, args):
    v, resdt = _scan_input(op, sig, context, builder, mask, args)
    comb = op.combine_fn
    if resdt.kind == "f":
        # the fixed butterfly order, so every target gives the same bits
        for d in _ops.LOG_STEPS:
            v = _combine(builder, comb.name, resdt, v, _shuffle(builder, v, [l ^ d for l in range(W)]))
        return v
    op_name = comb.bool_as if resdt.kind == "b" else comb.name
    if op_name in _VEC_REDUCE:
        name = _VEC_REDUCE[op_name]
    elif op_name in ("min", "max"):
        name = ("s" if resdt.kind == "i" else "u") + op_name
    else:
        raise _ops.unknown_value("bool_as" if resdt.kind == "b" else "combine", op_name, op)
    r = _call_intr(builder, f"llvm.vector.reduce.{name}.{_vec_suffix(v.type)}", [v], v.type.element)
    return _splat(builder, r)


def _all_equal(op, sig, context, builder, mask, args):
    x = _load(context, builder, sig.args[2], args[2])
    el = x.type.element
    if isinstance(el, (ir.FloatType, ir.DoubleType)):  # compare bits, not values
        width = 32 if isinstance(el, ir.FloatType) else 64
        x = builder.bitcast(x, ir.VectorType(ir.IntType(width), W))
    ref = _splat(builder, builder.extract_element(x, _first_active(builder, mask)))
    differ = builder.and_(mask, builder.icmp_unsigned("!=", x, ref))
    return _splat(builder, builder.icmp_unsigned("==", _ballot(builder, differ), ir.Constant(_i32, 0)))


_COMPUTE = {
    "move": _move,
    "vote": _vote,
    "ballot": _ballot_op,
    "scan": _scan,
    "reduce": _reduce,
    "allequal": _all_equal,
    "derivative": _derivative,
}


def _whole_wave(op, sig):
    """Load the mask, compute the op on whole-wave vectors, store under the mask."""
    compute = _COMPUTE[op.kind]

    def codegen(context, builder, sig, args):
        mask = _load_mask(context, builder, sig.args[0], args[0])
        res = compute(op, sig, context, builder, mask, args)
        _store_masked(context, builder, sig.args[1], args[1], mask, res)
        return context.get_dummy_value()

    return codegen


def _make_xl(op):

    def typer(args):
        for a in args[:3]:
            if not (isinstance(a, types.Array) and a.ndim == 1):
                raise TypingError(f"{op.qualname}: internal lane-array call got {a}")
        sig = types.none(*args)
        return sig, _whole_wave(op, sig)

    if op.selector is None:

        def xl(typingctx, mask, out, x):
            return typer((mask, out, x))
    else:

        def xl(typingctx, mask, out, x, sel):
            return typer((mask, out, x, sel))

    xl.__name__ = f"xl_{op.namespace}_{op.name}"
    # prefer_literal: a constant lane selector arrives as an IntegerLiteral and
    # becomes one constant shufflevector
    return intrinsic(prefer_literal=True)(xl)


#: One whole-wave intrinsic per non-query op: ``xl(mask, out, x[, sel])``.
XL_INTRINSICS = {q: _make_xl(op) for q, op in _ops.OPS.items() if op.kind != "query"}


# ---------------------------------------------------------------------------
# Mask helpers
# ---------------------------------------------------------------------------


def _mask_reduce(all_):
    def impl(typingctx, mask):
        def codegen(context, builder, sig, args):
            m = _load_mask(context, builder, sig.args[0], args[0])
            word = _ballot(builder, m)
            want = 0xFFFFFFFF if all_ else 0
            op = "==" if all_ else "!="
            return builder.icmp_unsigned(op, word, ir.Constant(_i32, want))

        return types.boolean(mask), codegen

    return impl


mask_any = intrinsic(_mask_reduce(False))
mask_any.__doc__ = "True when any lane of the mask lane-array is set."
mask_all = intrinsic(_mask_reduce(True))
mask_all.__doc__ = "True when every lane of the mask lane-array is set."


@register_jitable
def view_index(i, n):
    """The index *i* of a recomputed array view (cpu/codegen.py ``_remat``) on an axis
    of *n* elements: *i* where it is inside the axis, else 0. A region recomputes the
    view in every lane it runs, also in lanes that never made it (``if i < n: row =
    a[i]``): there it must neither raise nor point outside the array; no such lane
    reads it."""
    return i if -n <= i < n else i * 0


@intrinsic
def nonneg(typingctx, x):
    """``x`` unchanged, telling LLVM that it is >= 0 (so a thread index used as an
    array index needs no negative-index wrap-around and lane loops vectorise)."""
    if not isinstance(x, types.Integer):
        raise TypingError(f"nonneg() takes an integer; got {x}")

    def codegen(context, builder, sig, args):
        (v,) = args
        cond = builder.icmp_signed(">=", v, v.type(0))
        _call_intr(builder, "llvm.assume", [cond], ir.VoidType())
        return v

    return x(x), codegen


def _lane_ptr(context, builder, arrty, arr, idx):
    ary = context.make_array(arrty)(context, builder, arr)
    return builder.gep(ary.data, [idx], inbounds=True)


@intrinsic
def lane_load(typingctx, arr, lane):
    """``arr[lane]`` for a lane array and a lane index 0..31 (no wrap-around code)."""

    def codegen(context, builder, sig, args):
        arrty = sig.args[0]
        ptr = _lane_ptr(context, builder, arrty, args[0], args[1])
        return context.unpack_value(builder, arrty.dtype, ptr)

    return arr.dtype(arr, lane), codegen


@intrinsic
def lane_store(typingctx, arr, lane, value):
    """``arr[lane] = value`` for a lane array (the value is cast to its dtype)."""

    def codegen(context, builder, sig, args):
        arrty, _, valty = sig.args
        ptr = _lane_ptr(context, builder, arrty, args[0], args[1])
        val = context.cast(builder, args[2], valty, arrty.dtype)
        context.pack_value(builder, arrty.dtype, val, ptr)
        return context.get_dummy_value()

    return types.none(arr, lane, value), codegen


@intrinsic
def lane_store_if(typingctx, arr, lane, active, value):
    """``arr[lane] = value if active else arr[lane]``, with no branch: a load, a
    ``select`` and a store, which the loop vectoriser turns into a blend. The lane
    loop of a region that cannot fault on an inactive lane (cpu/codegen.py,
    ``_BlockGen._pure_region``) computes every lane and keeps the old value of the
    inactive ones with it."""
    if not isinstance(active, types.Boolean):
        raise TypingError(f"lane_store_if() takes a bool; got {active}")

    def codegen(context, builder, sig, args):
        arrty, _, _, valty = sig.args
        ptr = _lane_ptr(context, builder, arrty, args[0], args[1])
        old = context.unpack_value(builder, arrty.dtype, ptr)
        new = context.cast(builder, args[3], valty, arrty.dtype)
        context.pack_value(builder, arrty.dtype, builder.select(args[2], new, old), ptr)
        return context.get_dummy_value()

    return types.none(arr, lane, active, value), codegen


def _mask_block(all_):
    def impl(typingctx, mask, count):
        def codegen(context, builder, sig, args):
            mty = sig.args[0]
            ary = context.make_array(mty)(context, builder, args[0])
            n = builder.udiv(args[1], ir.Constant(args[1].type, W))
            acc = cgutils.alloca_once_value(builder, ir.Constant(_i1, 1 if all_ else 0))
            with cgutils.for_range(builder, n) as loop:
                ptr = builder.gep(ary.data, [builder.mul(loop.index, ir.Constant(loop.index.type, W))])
                v = builder.load(builder.bitcast(ptr, ir.VectorType(_i8, W).as_pointer()), align=32)
                word = _ballot(builder, builder.icmp_unsigned("!=", v, v.type(None)))
                if all_:
                    hit = builder.icmp_unsigned("==", word, ir.Constant(_i32, 0xFFFFFFFF))
                    builder.store(builder.and_(builder.load(acc), hit), acc)
                else:
                    hit = builder.icmp_unsigned("!=", word, ir.Constant(_i32, 0))
                    builder.store(builder.or_(builder.load(acc), hit), acc)
            return builder.load(acc)

        return types.boolean(mask, count), codegen

    return impl


def _mask_update(andnot):
    def impl(typingctx, dst, src, count):
        if not (
            isinstance(dst, types.Array)
            and isinstance(src, types.Array)
            and isinstance(dst.dtype, types.Boolean)
            and isinstance(src.dtype, types.Boolean)
        ):
            raise TypingError(f"mask update takes two bool lane arrays; got {dst}, {src}")

        def codegen(context, builder, sig, args):
            d = context.make_array(sig.args[0])(context, builder, args[0])
            s = context.make_array(sig.args[1])(context, builder, args[1])
            vt = ir.VectorType(_i8, W)
            n = builder.udiv(args[2], ir.Constant(args[2].type, W))
            with cgutils.for_range(builder, n) as loop:
                off = builder.mul(loop.index, ir.Constant(loop.index.type, W))
                dp = builder.bitcast(builder.gep(d.data, [off]), vt.as_pointer())
                v = builder.load(builder.bitcast(builder.gep(s.data, [off]), vt.as_pointer()), align=32)
                if andnot:
                    v = builder.and_(builder.load(dp, align=32), builder.xor(v, vt([1] * W)))
                builder.store(v, dp, align=32)
            return context.get_dummy_value()

        return types.none(dst, src, count), codegen

    return impl


mask_copy = intrinsic(_mask_update(False))
mask_copy.__doc__ = """``dst[:count] = src[:count]`` for bool lane arrays (*count* a multiple of 32):
whole-wave vector moves, one call where a lane loop gave Numba a loop to compile."""
mask_andnot = intrinsic(_mask_update(True))
mask_andnot.__doc__ = """``dst[l] = dst[l] and not src[l]`` for the first *count* lanes (a multiple
of 32) of bool lane arrays: the lanes of *src* leave *dst* (a ``return``, ``break`` or
``continue``); ``mask_andnot(m, m, n)`` clears *m*."""


mask_any_block = intrinsic(_mask_block(False))
mask_any_block.__doc__ = "True when any of the first *count* lanes of a block-wide mask is set."
mask_all_block = intrinsic(_mask_block(True))
mask_all_block.__doc__ = "True when all of the first *count* lanes of a block-wide mask are set."


def _int_divmod_intrinsic(op, which):
    """``a // b`` (*which* 0) or ``a % b`` (1) of integers, as Numba computes it, with
    a power-of-two divisor taken by a shift or a mask: ``tid % (2 * s)`` in a lane
    loop was an ``idiv`` per lane (two thirds of numba.cuda's shared-memory tree sum
    on the CPU). Python's floor division by ``2**k`` is an arithmetic shift right by
    k, its remainder ``a & (2**k - 1)``; any other divisor (0 and negative ones too)
    takes Numba's own lowering, in the branch not taken. The divisor is usually the
    same in every lane, so the test is too (LLVM may unswitch the loop on it). Only
    for an int64 result (Numba's for signed integers of any width, and for unsigned
    ones narrower than 64 bits); any other types take Numba's lowering."""

    @intrinsic
    def divmod_(typingctx, a, b):
        ta, tb = types.unliteral(a), types.unliteral(b)
        sig = typingctx.resolve_function_type(op, (ta, tb), {})
        if sig is None:
            return None
        res = sig.return_type
        fast = isinstance(ta, types.Integer) and isinstance(tb, types.Integer) and res == types.int64

        def codegen(context, builder, sig_, args):
            x = context.cast(builder, args[0], sig_.args[0], ta)
            y = context.cast(builder, args[1], sig_.args[1], tb)
            numba_impl = context.get_function(op, res(ta, tb))
            if not fast:
                return numba_impl(builder, [x, y])
            i64 = ir.IntType(64)
            d = context.cast(builder, y, tb, types.int64)
            pow2 = builder.and_(
                builder.icmp_signed(">", d, i64(0)),
                builder.icmp_signed("==", builder.and_(d, builder.sub(d, i64(1))), i64(0)),
            )
            with builder.if_else(pow2, likely=True) as (then, otherwise):
                with then:
                    n = context.cast(builder, x, ta, types.int64)
                    if which == 1:
                        quick = builder.and_(n, builder.sub(d, i64(1)))
                    else:
                        cttz = cgutils.get_or_insert_function(
                            builder.module, ir.FunctionType(i64, [i64, ir.IntType(1)]), "llvm.cttz.i64"
                        )
                        quick = builder.ashr(n, builder.call(cttz, [d, ir.IntType(1)(1)]))
                    quick_block = builder.block
                with otherwise:
                    slow = numba_impl(builder, [x, y])
                    slow_block = builder.block
            out = builder.phi(i64)
            out.add_incoming(quick, quick_block)
            out.add_incoming(slow, slow_block)
            return out

        return res(a, b), codegen

    return divmod_


#: ``_nq_ifloordiv(a, b)`` and ``_nq_imod(a, b)`` (cpu/subst.py ``Subst``)
int_floordiv = _int_divmod_intrinsic(operator.floordiv, 0)
int_mod = _int_divmod_intrinsic(operator.mod, 1)
