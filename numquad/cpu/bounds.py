"""Bounds checks of a kernel's array accesses.

Every store and every load of a kernel's arrays (parameters, globals, shared and
local arrays, a row of chained indexing ``a[y][x]``) is checked: an integer index
outside ``-n .. n - 1`` of its axis (negative ones wrap, as Numba indexes) is an
error at the user's line, never a read or write of other memory. A ``debug=True``
build raises every check at once (its message names the index too) and adds
Numba's boundscheck. What the checks cost is in docs/BENCHMARKS.md.

- A store (``a[i] = v``, ``a[y, x] += v``) raises at once, before anything is
  written past the array: :func:`store_index`.
- A load outside a lane loop (the kernel's uniform code: ``t = tab[blockIdx.x]``)
  raises at once too: :func:`load_index`.
- A load inside a lane loop does not raise there: LLVM does not vectorise a loop
  with an exit in its body, and a lane loop guarded by ``if i < n`` is the
  commonest loop there is. :func:`lane_load` reads the element only where the
  index is inside the array (the loop vectoriser makes the branch a masked vector
  load), gives 0 elsewhere, and ors the failure into a flag of the block function's
  *bounds state* (:func:`bounds_state`), one flag (a *slot*) per axis of each load,
  which LLVM keeps in a register through the loop. After the loop
  :func:`check_slot` raises if the flag is set.

The checks take an array's shape (:func:`shape_of`), and the loads are LLVM IR,
not Numba functions taking the array: a Numba function that takes an array and
branches counts a reference on it at each call (an atomic increment and
decrement, in every lane of a lane loop: 3-7x on the tiled matmul). The checks a
kernel's code calls are intrinsics, their LLVM IR emitted at the call: overloads
that Numba inlines in its own IR were a third of a large kernel's compile time
(docs/BENCHMARKS.md).

A check raises ``IndexError("store" or "load", line, index, axis, size)``, or, after
a lane loop, ``IndexError("lane load", line, axis, size)`` (the index is not kept;
the size is -1 where the array differs per lane); the launch turns it into a
``NumquadIndexError`` at the user's line (cpu/dispatch.py). Slices and array
indices are left to Numba.
"""

from __future__ import annotations

import operator
import threading

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.extending import intrinsic, overload, register_jitable

__all__ = [
    "store_index",
    "load_index",
    "shape_of",
    "lane_load",
    "bounds_state",
    "check_slot",
    "device_site",
    "device_where",
    "device_load",
    "device_store",
    "device_store_ok",
    "state_at",
    "check_call",
    "lane_store_ok",
    "check_store_slot",
    "lane_range_ok",
    "lane_rise_ok",
]

_i8 = ir.IntType(8)
_i64 = ir.IntType(64)
_SCALARS = (types.Integer, types.Float, types.Boolean)


@intrinsic
def shape_of(typingctx, x):
    """``x.shape`` for an array; for a flat iterator (``a.flat``) its one size as an
    unsigned integer, which :func:`_bad_axes_ir` reads as "no negative index" (Numba
    indexes ``a.flat[j]`` from the first element without wrapping a negative j, on
    the CPU and in numba.cuda); None for anything else (a tuple, a list, a record)."""
    if isinstance(x, types.NumpyFlatType):

        def flat_size(context, builder, sig, args):
            arr = _flat_array(context, builder, sig.args[0], args[0])
            return context.make_tuple(builder, sig.return_type, [arr.nitems])

        return types.UniTuple(types.uint64, 1)(x), flat_size
    if not isinstance(x, types.Array):
        return types.none(x), lambda context, builder, sig, args: context.get_dummy_value()

    def codegen(context, builder, sig, args):
        return context.make_array(sig.args[0])(context, builder, args[0]).shape

    return types.UniTuple(types.intp, x.ndim)(x), codegen


def _flat_array(context, builder, flatty, flat):
    """The array of a flat iterator's value *flat* (of type *flatty*)."""
    it = cgutils.create_struct_proxy(flatty)(context, builder, value=flat)
    return context.make_array(flatty.array_type)(context, builder, value=it.array)


def _flat_src(head, on_bad):
    """``def impl(<head>)`` of a load ``arr.flat[idx]``: *on_bad* (a statement, with
    ``n`` the size and ``bad`` the test) where idx is outside 0..n-1, then the element
    (at index 0 where bad: the failure raises before anything uses it)."""
    return (
        f"def impl({head}):\n    n = len(arr)\n    bad = _u64(idx) >= _u64(n)\n"
        f"    {on_bad}\n    return arr[_zero_if(bad, idx)]\n"
    )


def _axes(ndim, idx):
    """[(axis, index expression, signed)] of the integers in *idx* (an integer, or a
    tuple of integers, slices and arrays) into an array of *ndim* dimensions, or
    None for anything else (``...``, ``None``, an array index)."""
    if isinstance(idx, types.Integer):
        return [(0, "idx", idx.signed)]
    if (
        isinstance(idx, types.BaseTuple)
        and len(idx) <= ndim
        and not any(isinstance(t, (types.EllipsisType, types.NoneType)) for t in idx)
    ):
        return [(k, f"idx[{k}]", t.signed) for k, t in enumerate(idx) if isinstance(t, types.Integer)]
    return None


def _bad_src(k, expr, signed, shape):
    # one unsigned compare: -n <= idx < n  <=>  uint(idx + n) < uint(2n); an unsigned
    # index does not wrap (Numba's indexing)
    test = f"_u64(_i64({expr}) + n{k}) >= _u64(2 * n{k})" if signed else f"_u64({expr}) >= _u64(n{k})"
    return f"    n{k} = {shape}[{k}]\n    bad{k} = {test}\n"


def _raise_src(head, where, axes, shape, ret):
    """``def impl(<head>)``: for each axis of *axes* (:func:`_axes`) outside *shape*,
    ``_oob(<where>, index, axis, size)`` (a :func:`_raiser`); then ``return <ret>``."""
    return (
        f"def impl({head}):\n"
        + "".join(
            _bad_src(*a, shape) + f"    if bad{a[0]}:\n        _oob({where}, {a[1]}, {a[0]}, n{a[0]})\n" for a in axes
        )
        + f"    return {ret}\n"
    )


def _view_src(head, idx, axes, shape, slot):
    """``def impl(<head>)`` for a view's or a record's load: each bad axis noted in the
    state's slot ``slot(axis)`` and read at index 0 instead (no branch)."""
    notes = "".join(_bad_src(*a, shape) + f"    _note(state, {slot(a[0])}, bad{a[0]})\n" for a in axes)
    parts = [f"idx[{k}]" for k in range(len(idx))] if isinstance(idx, types.BaseTuple) else ["idx"]
    parts = [f"_zero_if(bad{k}, {e})" if any(a[0] == k for a in axes) else e for k, e in enumerate(parts)]
    return (
        f"def impl({head}):\n"
        + notes
        + f"    return arr[{', '.join(parts)}{',' if isinstance(idx, types.BaseTuple) else ''}]\n"
    )


def _exec(src, **names):
    ns = {"_u64": np.uint64, "_i64": np.int64, **names}
    exec(src, ns)
    return ns["impl"]


def _call_jitable(context, builder, fn, tys, vals):
    """LLVM IR: a call of *fn* (a ``register_jitable`` function) on *vals* of types
    *tys*; an exception it raises propagates."""
    fnty = context.typing_context.resolve_value_type(fn)
    sig = fnty.get_call_type(context.typing_context, tuple(tys), {})
    return context.get_function(fnty, sig)(builder, list(vals))


def _raiser(kind):
    """The Numba function raising ``IndexError(kind, where, index, axis, size)``."""

    @register_jitable(inline="never")
    def oob(where, idx, axis, n):
        raise IndexError(kind, where, idx, axis, n)

    return oob


_RAISERS = {kind: _raiser(kind) for kind in ("store", "load", "atomic", "device store", "device load")}


def _bad_axes_ir(context, builder, shapety, shape, idxty, idx):
    """LLVM IR of :func:`_bad_src` for each integer axis of the index *idx* (of type
    *idxty*) into an array of *shape* (a tuple, of type *shapety*): [(axis, the
    index as given, its type, the size as i64, i1 outside)]."""
    axes = (_axes(len(shapety), idxty) if isinstance(shapety, types.BaseTuple) else None) or []
    tys = list(idxty) if isinstance(idxty, types.BaseTuple) else [idxty]
    raw = cgutils.unpack_tuple(builder, idx, len(tys)) if isinstance(idxty, types.BaseTuple) else [idx]
    out = []
    for k, _expr, signed in axes:
        i = context.cast(builder, raw[k], tys[k], types.int64)
        n = context.cast(builder, builder.extract_value(shape, k), shapety[k], types.int64)
        # one unsigned compare: -n <= i < n <=> uint(i + n) < uint(2n); an unsigned
        # size (a flat iterator's, shape_of) takes no negative index
        bad = (
            builder.icmp_unsigned(">=", builder.add(i, n), builder.shl(n, _i64(1)))
            if signed and shapety[k].signed
            else builder.icmp_unsigned(">=", i, n)
        )
        out.append((k, raw[k], tys[k], n, bad))
    return out


def _index_check(kind):
    """The typer of an index check that raises at once (:func:`store_index`,
    :func:`load_index`, :func:`device_store`): for each integer axis of the index
    outside the shape, ``IndexError(kind, where, index, axis, size)``; then the index.
    Intrinsics, not overloads: their LLVM IR is at the call, with no Numba function to
    inline or call (a 2-D kernel checks each store and uniform load)."""
    raiser = _RAISERS[kind]

    def typer(typingctx, shape, idx, where):
        def codegen(context, builder, sig, args):
            i64 = types.int64
            w = context.cast(builder, args[2], sig.args[2], i64)
            for k, raw, ty, n, bad in _bad_axes_ir(context, builder, shape, args[0], idx, args[1]):
                with cgutils.if_unlikely(builder, bad):
                    _call_jitable(context, builder, raiser, (i64, ty, i64, i64), (w, raw, _i64(k), n))
            return args[1]

        return idx(shape, idx, where), codegen

    return typer


_store_check, _load_check, _atomic_check, _device_store_check = map(
    _index_check, ("store", "load", "atomic", "device store")
)


@intrinsic
def store_index(typingctx, shape, idx, line):
    """``store_index(shape, idx, line)``: ``idx``, after checking that ``arr[idx] =
    ...`` stays inside an array of *shape* (:func:`shape_of`; raises
    ``IndexError("store", line, index, axis, size)`` before the store)."""
    return _store_check(typingctx, shape, idx, line)


@intrinsic
def atomic_index(typingctx, shape, idx, line):
    """``atomic_index(shape, idx, line)``: ``idx``, after checking that an atomic on
    ``arr[idx]`` stays inside an array of *shape* (raises ``IndexError("atomic",
    line, index, axis, size)`` before the atomic)."""
    return _atomic_check(typingctx, shape, idx, line)


@intrinsic
def load_index(typingctx, shape, idx, line):
    """``load_index(shape, idx, line)``: ``idx``, after checking that the load
    ``arr[idx]`` stays inside an array of *shape* (raises ``IndexError("load", line,
    index, axis, size)``); for code outside lane loops."""
    return _load_check(typingctx, shape, idx, line)


# -- the bounds state of lane loops --------------------------------------------------


@intrinsic
def bounds_state(typingctx, nslots):
    """A fresh ``uint8[nslots]`` of zeros on the stack of the block function, as a
    pointer: its bytes are only read and written at constant offsets, so LLVM keeps
    each one in a register through a lane loop (bytes, not words: a vectorised or
    over 16 lanes of bytes is one register, of words four)."""
    if not isinstance(nslots, types.IntegerLiteral):
        raise TypingError(f"bounds_state() takes a constant; got {nslots}")
    count = max(nslots.literal_value, 1)

    def codegen(context, builder, sig, args):
        ptr = cgutils.alloca_once(builder, _i8, size=count, name="nq_bounds")
        for k in range(count):
            builder.store(_i8(0), builder.gep(ptr, [_i64(k)]))
        return ptr

    return types.CPointer(types.uint8)(nslots), codegen


def _note_ir(builder, state, slot, bad):
    p = builder.gep(state, [slot])
    builder.store(builder.or_(builder.load(p), builder.zext(bad, _i8)), p)


@intrinsic
def _note(typingctx, state, slot, bad):
    """flag[slot] |= bad."""

    def codegen(context, builder, sig, args):
        _note_ir(builder, args[0], context.cast(builder, args[1], sig.args[1], types.int64), args[2])
        return context.get_dummy_value()

    return types.none(state, slot, types.boolean), codegen


@intrinsic
def _zero_if(typingctx, bad, i):
    """``0 if bad else i``, as one select."""

    def codegen(context, builder, sig, args):
        return builder.select(args[0], args[1].type(0), args[1])

    return i(types.boolean, i), codegen


def _load_scalar_ir(per_axis):
    """:func:`lane_load` of one element (an integer per axis), in LLVM IR; each axis
    notes its failure in slot ``slot + axis`` when *per_axis*, else all in *slot*."""
    return lambda typingctx, arr, idx, state, slot, shape: _load_scalar_sig(per_axis, arr, idx, state, slot, shape)


def _load_scalar_sig(per_axis, arr, idx, state, slot, shape):
    idxs = list(idx) if isinstance(idx, types.BaseTuple) else [idx]
    if not (
        isinstance(arr, types.Array)
        and isinstance(arr.dtype, _SCALARS)
        and len(idxs) == arr.ndim
        and all(isinstance(t, types.Integer) for t in idxs)
    ):
        raise TypingError(f"_load_scalar() takes an array of scalars and an integer per axis; got {arr}, {idx}")

    def codegen(context, builder, sig, args):
        arrty, idxty, _, slotty, shapety = sig.args
        ary = context.make_array(arrty)(context, builder, args[0])
        slot = context.cast(builder, args[3], slotty, types.int64)
        if isinstance(shapety, types.NoneType):
            sizes = cgutils.unpack_tuple(builder, ary.shape, arrty.ndim)
        else:
            sizes = [
                context.cast(builder, builder.extract_value(args[4], k), shapety[k], types.int64)
                for k in range(arrty.ndim)
            ]
        raw = cgutils.unpack_tuple(builder, args[1], len(idxs)) if isinstance(idxty, types.BaseTuple) else [args[1]]
        any_bad = cgutils.false_bit
        inds = []
        for k, (t, v) in enumerate(zip(idxs, raw)):
            i, n = context.cast(builder, v, t, types.int64), sizes[k]
            if t.signed:
                # -n <= i < n as two signed compares (not _bad_src's one unsigned compare:
                # LLVM folds these with a loop's range and a guard ``if i < n``, so a
                # shared array's load in a loop over its constant shape costs nothing);
                # a negative i counts from the end
                bad = builder.or_(builder.icmp_signed(">=", i, n), builder.icmp_signed("<", i, builder.neg(n)))
                i = builder.select(builder.icmp_signed("<", i, _i64(0)), builder.add(i, n), i)
            else:
                bad = builder.icmp_unsigned(">=", i, n)
            _note_ir(builder, args[2], builder.add(slot, _i64(k if per_axis else 0)), bad)
            any_bad = builder.or_(any_bad, bad)
            inds.append(i)
        strides = cgutils.unpack_tuple(builder, ary.strides, arrty.ndim)
        with builder.if_else(any_bad, likely=False) as (then, otherwise):
            with then:
                bb_bad = builder.basic_block
            with otherwise:
                ptr = cgutils.get_item_pointer2(context, builder, ary.data, sizes, strides, arrty.layout, inds)
                val = context.unpack_value(builder, arrty.dtype, ptr)
                bb_ok = builder.basic_block
        phi = builder.phi(val.type)
        phi.add_incoming(context.get_constant(arrty.dtype, 0), bb_bad)
        phi.add_incoming(val, bb_ok)
        return phi

    return arr.dtype(arr, idx, state, slot, shape), codegen


_load_scalar = intrinsic(_load_scalar_ir(True))
_load_scalar_one = intrinsic(_load_scalar_ir(False))


@intrinsic
def lane_load(typingctx, arr, idx, state, slot, shape):
    """``lane_load(arr, idx, state, slot, shape)``: ``arr[idx]`` in a lane loop: the
    element where every integer of *idx* is inside its axis, else 0 with the failure
    ored into *state*'s slots ``slot + axis``; :func:`check_slot` raises it after the
    loop. *shape*: the array's shape where it is a constant (a shared or local
    array), so that LLVM can prove the index inside (``sA[ty, k]`` in a loop over
    k < 16); else None.

    An intrinsic: a load of one element is its LLVM IR at the call. (An overload that
    Numba inlines in its IR at each of a kernel's loads took a third of a large
    kernel's compile.)"""
    axes = _axes(arr.ndim, idx) if isinstance(arr, types.Array) else None
    if isinstance(arr, types.NumpyFlatType) and isinstance(idx, types.Integer):
        impl = _exec(
            _flat_src("arr, idx, state, slot, shape", "_note(state, slot, bad)"), _note=_note, _zero_if=_zero_if
        )
    elif axes is not None and isinstance(arr.dtype, _SCALARS) and len(axes) == arr.ndim:
        # one element: a branch the loop vectoriser turns into a masked load
        return _load_scalar_sig(True, arr, idx, state, slot, shape)
    elif axes is None:
        impl = lambda arr, idx, state, slot, shape: arr[idx]  # noqa: E731
    else:
        # a view or a record: read at index 0 of each bad axis instead (n == 0 aside,
        # inside the array; the flag raises before anything uses it), with no branch
        shp = "arr.shape" if isinstance(shape, types.NoneType) else "shape"
        impl = _exec(
            _view_src("arr, idx, state, slot, shape", idx, axes, shp, lambda k: f"slot + {k}"),
            _note=_note,
            _zero_if=_zero_if,
        )
    got = typingctx.resolve_function_type(operator.getitem, (arr, idx), {})
    if got is None:
        raise TypingError(f"cannot index {arr} with {idx}")
    sig = got.return_type(arr, idx, state, slot, shape)

    def codegen(context, builder, sig, args):
        return context.compile_internal(builder, impl, sig, args)

    return sig, codegen


@register_jitable(inline="never")
def _lane_out_of_bounds(line, axis, n):
    raise IndexError("lane load", line, axis, n)


def _raise_if_flag(context, builder, state, slot, raiser, args):
    """LLVM IR: when the flag ``state[slot]`` (slot: an i64) is set, call *raiser* (a
    ``register_jitable`` function that raises) with *args*, i64 values."""
    bad = builder.icmp_unsigned("!=", builder.load(builder.gep(state, [slot])), _i8(0))
    with cgutils.if_unlikely(builder, bad):
        _call_jitable(context, builder, raiser, (types.int64,) * len(args), args)


def _slot_check(out_of_bounds):
    """The typer of a check after a lane loop (:func:`check_slot`,
    :func:`check_store_slot`): raises through *out_of_bounds* ``(line, axis, size)``
    when the slot's flag is set; the size is -1 where the array's shape differs per
    lane (None). Intrinsics, not overloads Numba inlines: a kernel has one per load,
    and inlining them was slow to compile."""

    def typer(typingctx, state, slot, axis, line, shape):
        if not isinstance(axis, types.IntegerLiteral):
            raise TypingError(f"the axis of a slot's check is a constant; got {axis}")
        k = axis.literal_value

        def codegen(context, builder, sig, args):
            i64 = types.int64
            n = (
                context.cast(builder, builder.extract_value(args[4], k), shape[k], i64)
                if isinstance(shape, types.BaseTuple)
                else _i64(-1)
            )
            _raise_if_flag(
                context,
                builder,
                args[0],
                context.cast(builder, args[1], sig.args[1], i64),
                out_of_bounds,
                [context.cast(builder, args[3], sig.args[3], i64), _i64(k), n],
            )
            return context.get_dummy_value()

        return types.none(state, slot, axis, line, shape), codegen

    return typer


_load_slot_check = _slot_check(_lane_out_of_bounds)


@intrinsic
def check_slot(typingctx, state, slot, axis, line, shape):
    """``check_slot(state, slot, axis, line, shape)``: raises ``IndexError("lane
    load", line, axis, size)`` when a lane loop's load failed on its *axis* (recorded
    in *slot*); *shape*: the array's shape after the loop, None where it differs per
    lane."""
    return _load_slot_check(typingctx, state, slot, axis, line, shape)


# -- device functions -----------------------------------------------------------------
# A device function (numba.cuda's ``@cuda.jit(device=True)``, an ``@xpu.jit`` function
# a kernel calls) is a scalar function compiled on its own (cpu/devicefn.py): its loads
# and stores are checked as the kernel's are, with the caller's bounds state passed in
# (``state_at``: one slot per call site, every load of the function noting into it) or
# None where the caller keeps none (debug builds, lane functions on arrays), and then a
# load raises at once. An access of a device function is named by a *site*, an index
# into a table of (file, line, function), since its line is in another file than the
# kernel's.

_DEVICE_SITES = {}
_device_sites_lock = threading.Lock()


def device_site(filename, line, function):
    """The site number of an access at *filename*:*line* in *function*: a hash of
    them (56 bits), the same in every process, since machine code holding it may be
    loaded by another process from the disk cache (cpu/diskcache.py)."""
    import hashlib

    where = (filename, line, function)
    site = int.from_bytes(hashlib.sha256(repr(where).encode()).digest()[:7], "little")
    with _device_sites_lock:
        _DEVICE_SITES.setdefault(site, where)
    return site


def device_where(site):
    """(file, line, function) of a site number of :func:`device_site`."""
    return _DEVICE_SITES.get(site, (None, 0, "?"))


def device_load(arr, idx, state, site):
    """``arr[idx]`` in a device function. With a bounds state (a pointer from
    :func:`state_at`): as :func:`lane_load`, every axis noting its failure in the
    state's first slot. Without one (None): raises ``IndexError("device load", site,
    index, axis, size)`` at once."""
    return arr[idx]


def device_store_ok(shape, idx, state, site):
    """True where a device function's store ``arr[idx] = ...`` stays inside an array of
    *shape*. With a bounds state, else False with the failure noted in the state's
    first slot; without one (None), raises ``IndexError("device store", site, index,
    axis, size)``."""
    return True


@intrinsic
def state_at(typingctx, state, slot):
    """The bounds state from *slot* on, for a device function's loads to note into."""

    def codegen(context, builder, sig, args):
        return builder.gep(args[0], [context.cast(builder, args[1], sig.args[1], types.int64)])

    return state(state, slot), codegen


@intrinsic
def device_store(typingctx, shape, idx, site):
    """``device_store(shape, idx, site)``: ``idx``, after checking that a device
    function's ``arr[idx] = ...`` stays inside an array of *shape* (raises
    ``IndexError("device store", site, index, axis, size)``)."""
    return _device_store_check(typingctx, shape, idx, site)


@overload(device_load)
def _device_load(arr, idx, state, site):
    if isinstance(arr, types.Record) and isinstance(idx, types.IntegerLiteral):
        # r[0]: a record's field by position, which Numba lowers only as written
        name = list(arr.fields)[idx.literal_value]
        return _exec(f"def impl(arr, idx, state, site):\n    return arr[{name!r}]\n")
    if isinstance(arr, (types.Number, types.Boolean)):
        # (Numba's own words would name this function: a lane function called on
        # arrays gets one element of each in every lane, a scalar)
        raise TypingError(
            f"cannot index a {arr} value: it is a scalar, not an array (in a lane "
            f"function called on arrays, every argument is one element)"
        )
    if isinstance(arr, types.NumpyFlatType) and isinstance(idx, types.Integer):
        on_bad = (
            "if bad:\n        _oob(site, idx, 0, n)"
            if isinstance(state, (types.NoneType, types.Omitted))
            else "_note(state, 0, bad)"
        )
        return _exec(
            _flat_src("arr, idx, state, site", on_bad), _oob=_RAISERS["device load"], _note=_note, _zero_if=_zero_if
        )
    axes = _axes(arr.ndim, idx) if isinstance(arr, types.Array) else None
    if axes is None:
        return lambda arr, idx, state, site: arr[idx]
    if isinstance(state, (types.NoneType, types.Omitted)):
        return _exec(
            _raise_src("arr, idx, state, site", "site", axes, "arr.shape", "arr[idx]"), _oob=_RAISERS["device load"]
        )
    if isinstance(arr.dtype, _SCALARS) and len(axes) == arr.ndim:
        return lambda arr, idx, state, site: _load_scalar_one(arr, idx, state, 0, None)
    return _exec(
        _view_src("arr, idx, state, site", idx, axes, "arr.shape", lambda k: "0"), _note=_note, _zero_if=_zero_if
    )


@intrinsic
def _store_ok_noted(typingctx, shape, idx, state):
    """A device function's store check with a bounds state: :func:`lane_store_ok`
    noting every axis into the state's first slot."""

    def codegen(context, builder, sig, args):
        return _store_ok_ir(context, builder, sig, args, lambda k: _i64(0))

    return types.boolean(shape, idx, state), codegen


@overload(device_store_ok, inline="always")
def _device_store_ok(shape, idx, state, site):
    if isinstance(state, (types.NoneType, types.Omitted)):

        def impl(shape, idx, state, site):
            device_store(shape, idx, site)
            return True

        return impl
    return lambda shape, idx, state, site: _store_ok_noted(shape, idx, state)


@register_jitable(inline="never")
def _call_out_of_bounds(site):
    raise IndexError("device call", site)


@intrinsic
def check_call(typingctx, state, slot, site):
    """``check_call(state, slot, site)``: raises ``IndexError("device call", site)``
    when an access of the device function called at *site* (:func:`device_site`: no
    file, the call's line, the function's name), noting into *slot*, failed."""

    def codegen(context, builder, sig, args):
        i64 = types.int64
        _raise_if_flag(
            context,
            builder,
            args[0],
            context.cast(builder, args[1], sig.args[1], i64),
            _call_out_of_bounds,
            [context.cast(builder, args[2], sig.args[2], i64)],
        )
        return context.get_dummy_value()

    return types.none(state, slot, site), codegen


# -- stores in lane loops -------------------------------------------------------------


def _store_ok_ir(context, builder, sig, args, slot_of):
    """LLVM IR of :func:`lane_store_ok` and :func:`_store_ok_noted`: each integer
    axis of the index outside the shape ored into the state's slot ``slot_of(axis)``
    (an i64), then whether none was (no branch)."""
    ok = cgutils.true_bit
    for k, _raw, _ty, _n, bad in _bad_axes_ir(context, builder, sig.args[0], args[0], sig.args[1], args[1]):
        _note_ir(builder, args[2], slot_of(k), bad)
        ok = builder.and_(ok, builder.not_(bad))
    return ok


@intrinsic
def lane_store_ok(typingctx, shape, idx, state, slot):
    """``lane_store_ok(shape, idx, state, slot)``: True where a store ``arr[idx] =
    ...`` in a lane loop stays inside an array of *shape*; else False, the failure
    ored into *state*'s slots ``slot + axis`` (:func:`check_store_slot` raises it
    after the loop). The loop makes the store only where this is True: a masked
    vector store once vectorised."""

    def codegen(context, builder, sig, args):
        base = context.cast(builder, args[3], sig.args[3], types.int64)
        return _store_ok_ir(context, builder, sig, args, lambda k: builder.add(base, _i64(k)))

    return types.boolean(shape, idx, state, slot), codegen


@register_jitable(inline="never")
def _lane_store_out_of_bounds(line, axis, n):
    raise IndexError("lane store", line, axis, n)


_store_slot_check = _slot_check(_lane_store_out_of_bounds)


@intrinsic
def check_store_slot(typingctx, state, slot, axis, line, shape):
    """``check_store_slot(state, slot, axis, line, shape)``: raises
    ``IndexError("lane store", line, axis, size)`` when a lane loop's store failed on
    its *axis* (recorded in *slot*), as :func:`check_slot` for a load."""
    return _store_slot_check(typingctx, state, slot, axis, line, shape)


@register_jitable
def lane_range_ok(shape, first, last, lanes):
    """``lane_range_ok(shape, first, last, lanes)``: True where a lane loop's
    contiguous access, whose index is *first* at the first lane and *last* at the
    last of *lanes*, stays inside the first axis of *shape* in every lane (both
    inside and exactly ``lanes - 1`` apart: cpu/versioning.py). Then the loop's
    fast version runs, its contiguous accesses unchecked."""
    f = np.int64(first)
    t = np.int64(last)
    return f >= 0 and t >= f and t < shape[0] and t - f == lanes - 1


@register_jitable
def lane_rise_ok(first, last, lanes):
    """``lane_rise_ok(first, last, lanes)``: True where a value that rises by one per
    lane, or drops where a cast wraps, is *first* at the first of *lanes* and
    *last* at the last with no wrap between: exactly ``lanes - 1`` apart, in its
    own type (cpu/versioning.py)."""
    return first <= last and last - first == lanes - 1
