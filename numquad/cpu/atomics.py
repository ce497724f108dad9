"""``xpu.atomic.*`` (and ``cuda.atomic.*``) on the CPU: LLVM ``atomicrmw`` and
``cmpxchg`` on array elements, with numba.cuda's names, types, signatures,
semantics and return value (the element's old value).

One table, :data:`_SPECS`, says for each atomic which element types it takes and
how it updates; one factory builds every intrinsic from it.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.extending import intrinsic

__all__ = ["ATOMICS", "ATOMIC_NAMES"]

_ALL = (types.float64, types.float32, types.int32, types.uint32, types.int64, types.uint64)
_INTS = (types.int32, types.uint32, types.int64, types.uint64)
_UINTS = (types.uint32, types.uint64)

#: name -> (element types, update). The update is an ``atomicrmw`` operation
#: name (integers, floats), or "minmax"/"nanminmax" (numba.cuda's float
#: compare-and-swap loops), or "inc"/"dec" (CUDA's wrapping counters).
_SPECS = {
    "add": (_ALL, ("add", "fadd")),
    "sub": (_ALL, ("sub", "fsub")),
    "max": (_ALL, ("max", "minmax")),
    "min": (_ALL, ("min", "minmax")),
    "nanmax": (_ALL, ("max", "nanminmax")),
    "nanmin": (_ALL, ("min", "nanminmax")),
    "and_": (_INTS, ("and", None)),
    "or_": (_INTS, ("or", None)),
    "xor": (_INTS, ("xor", None)),
    "exch": (_INTS, ("xchg", None)),
    "inc": (_UINTS, ("inc", None)),
    "dec": (_UINTS, ("dec", None)),
}

#: Every atomic numba.cuda offers in kernels, in the order of its docs.
ATOMIC_NAMES = tuple(_SPECS) + ("cas", "compare_and_swap")


def _check(name, ary, idx, allowed):
    if not isinstance(ary, types.Array):
        raise TypingError(f"xpu.atomic.{name}(ary, idx, ...): ary must be an array; got {ary}")
    if not ary.mutable:
        raise TypingError(f"xpu.atomic.{name}: ary is read-only ({ary}); atomics need a writable array")
    if ary.dtype not in allowed:
        raise TypingError(
            f"xpu.atomic.{name}: ary has dtype {ary.dtype}; it takes {', '.join(str(t) for t in allowed)}"
        )
    if idx is None:
        return
    ok_idx = (_index_part(idx) and ary.ndim == 1) or (
        isinstance(idx, types.BaseTuple) and len(idx) == ary.ndim and all(map(_index_part, idx.types))
    )
    if not ok_idx:
        raise TypingError(
            f"xpu.atomic.{name}: idx must be an integer (1-D) or a tuple of {ary.ndim} integers; got {idx}"
        )


def _index_part(t):
    """Is *t* an index numba.cuda's atomics take? They convert it to intp, as a cast
    does: an integer, and (as numba.cuda compiles them) a bool, a float (truncated,
    saturating) or an Optional of one of these (None raises TypeError)."""
    if isinstance(t, types.Optional):
        t = t.type
    return isinstance(t, (types.Integer, types.Boolean, types.Float))


def _indices(context, builder, idxty, idx):
    """An atomic's index (an integer or a tuple of them) as a list of intp values."""
    if isinstance(idxty, types.BaseTuple):
        idxs = cgutils.unpack_tuple(builder, idx, len(idxty))
        idxtys = idxty.types
    else:
        idxs, idxtys = [idx], [idxty]
    return [context.cast(builder, i, t, types.intp) for i, t in zip(idxs, idxtys)]


def _ptr(context, builder, aryty, ary, idxty, idx):
    arr = context.make_array(aryty)(context, builder, ary)
    idxs = _indices(context, builder, idxty, idx)
    # checked in release builds too, as stores are (cpu/bounds.py, store_index):
    # an atomic outside the array would write other memory
    return cgutils.get_item_pointer(context, builder, aryty, arr, idxs, wraparound=True, boundscheck=True)


def _cas_loop(builder, ptr, val, early, wants, new_value):
    """A compare-and-swap loop, numba.cuda's shape: load the element; return it
    unchanged when ``early(val, old)``; else while ``wants(old, val)`` try to swap
    in ``new_value(old, val)``. Returns the element's old value."""
    ty = val.type
    is_float = isinstance(ty, (ir.FloatType, ir.DoubleType))
    ity = ir.IntType(64 if isinstance(ty, ir.DoubleType) else 32) if is_float else ty
    iptr = builder.bitcast(ptr, ity.as_pointer())

    def as_ty(v):
        return builder.bitcast(v, ty) if is_float else v

    def as_int(v):
        return builder.bitcast(v, ity) if is_float else v

    first = as_ty(builder.load_atomic(iptr, "monotonic", ity.width // 8))
    entry = builder.block
    loop = builder.append_basic_block("nq.atomic.loop")
    attempt = builder.append_basic_block("nq.atomic.attempt")
    done = builder.append_basic_block("nq.atomic.done")
    builder.cbranch(early(val, first) if early else ir.Constant(ir.IntType(1), 0), done, loop)
    builder.position_at_end(loop)
    cur = builder.phi(ty)
    cur.add_incoming(first, entry)
    builder.cbranch(wants(cur, val), attempt, done)
    builder.position_at_end(attempt)
    pair = builder.cmpxchg(iptr, as_int(cur), as_int(new_value(cur, val)), "seq_cst", "seq_cst")
    cur.add_incoming(as_ty(builder.extract_value(pair, 0)), attempt)
    builder.cbranch(builder.extract_value(pair, 1), done, loop)
    builder.position_at_end(done)
    old = builder.phi(ty)
    old.add_incoming(first, entry)
    old.add_incoming(cur, loop)
    old.add_incoming(cur, attempt)
    return old


def _update(builder, name, dty, ptr, v):
    int_op, float_op = _SPECS[name][1]
    if isinstance(dty, types.Float):
        if float_op == "minmax":
            # nothing is stored when the value or the element is NaN (a NaN there
            # stays); else while strictly better (numba.cuda's ___numba_atomic_*_max)
            return _cas_loop(
                builder,
                ptr,
                v,
                lambda a, b: builder.fcmp_unordered("uno", a, b),
                lambda old, val: builder.fcmp_ordered("<" if int_op == "max" else ">", old, val),
                lambda old, val: val,
            )
        if float_op == "nanminmax":
            # a NaN value is ignored; a NaN element is replaced
            return _cas_loop(
                builder,
                ptr,
                v,
                lambda a, b: builder.fcmp_unordered("uno", a, a),
                lambda old, val: builder.fcmp_unordered("<" if int_op == "max" else ">", old, val),
                lambda old, val: val,
            )
        return builder.atomic_rmw(float_op, ptr, v, "seq_cst")
    if int_op in ("max", "min"):
        return builder.atomic_rmw(("" if dty.signed else "u") + int_op, ptr, v, "seq_cst")
    if int_op == "inc":  # old >= val ? 0 : old + 1
        return _cas_loop(
            builder,
            ptr,
            v,
            None,
            lambda old, val: ir.Constant(ir.IntType(1), 1),
            lambda old, val: builder.select(
                builder.icmp_unsigned("<", old, val), builder.add(old, old.type(1)), old.type(0)
            ),
        )
    if int_op == "dec":  # old == 0 or old > val ? val : old - 1
        return _cas_loop(
            builder,
            ptr,
            v,
            None,
            lambda old, val: ir.Constant(ir.IntType(1), 1),
            lambda old, val: builder.select(
                builder.icmp_unsigned("<", builder.sub(old, old.type(1)), val), builder.sub(old, old.type(1)), val
            ),
        )
    return builder.atomic_rmw(int_op, ptr, v, "seq_cst")


def _make(name):
    allowed = _SPECS[name][0]

    def impl(typingctx, ary, idx, val):
        _check(name, ary, idx, allowed)
        dty = ary.dtype

        def codegen(context, builder, sig, args):
            aryty, idxty, valty = sig.args
            ptr = _ptr(context, builder, aryty, args[0], idxty, args[1])
            return _update(builder, name, dty, ptr, context.cast(builder, args[2], valty, dty))

        return dty(ary, idx, val), codegen

    impl.__name__ = f"atomic_{name}"
    return intrinsic(impl)


def _cas_codegen(context, builder, aryty, ptr, oldv, oldty, val, valty):
    o = context.cast(builder, oldv, oldty, aryty.dtype)
    v = context.cast(builder, val, valty, aryty.dtype)
    return builder.extract_value(builder.cmpxchg(ptr, o, v, "seq_cst", "seq_cst"), 0)


@intrinsic
def _atomic_cas(typingctx, ary, idx, old, val):
    _check("cas", ary, idx, _INTS)

    def codegen(context, builder, sig, args):
        aryty, idxty, oldty, valty = sig.args
        ptr = _ptr(context, builder, aryty, args[0], idxty, args[1])
        return _cas_codegen(context, builder, aryty, ptr, args[2], oldty, args[3], valty)

    return ary.dtype(ary, idx, old, val), codegen


@intrinsic
def _atomic_compare_and_swap(typingctx, ary, old, val):
    _check("compare_and_swap", ary, None, _INTS)
    if ary.ndim != 1:
        raise TypingError(f"xpu.atomic.compare_and_swap(ary, old, val): ary must be 1-D; got {ary}")

    def codegen(context, builder, sig, args):
        aryty, oldty, valty = sig.args
        arr = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, arr, [context.get_constant(types.intp, 0)])
        return _cas_codegen(context, builder, aryty, ptr, args[1], oldty, args[2], valty)

    return ary.dtype(ary, old, val), codegen


#: xpu.atomic.* on the CPU, by name.
ATOMICS = {n: _make(n) for n in _SPECS}
ATOMICS["cas"] = _atomic_cas
ATOMICS["compare_and_swap"] = _atomic_compare_and_swap
