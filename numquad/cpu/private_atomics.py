"""Private copies of histogram-like arrays: ``atomic.add`` without contention.

A kernel such as examples/histogram.py ``k_hist_atomic`` does one
``xpu.atomic.add(hist, key, 1)`` per element into a small integer array. On the
CPU every one is a ``lock``-prefixed read-modify-write (numquad/cpu/atomics.py),
and the worker threads of a launch (numquad/cpu/launch.py) fight over the same
cache lines. When an integer array argument is touched by nothing but
``atomic.add``/``atomic.sub`` statements whose value is not used (its
``.shape``/``.size``/``.ndim`` may be read), the result cannot tell whether the
additions were made one by one or summed first: integer addition wraps, and is
associative and commutative. Then each call of the block function (one per chunk
of blocks, numquad/cpu/launch.py) adds into a zeroed private copy with plain adds
and adds the copy into the array with one atomic per non-zero element at its end.
Floats are left alone (their addition is not associative).

One signature still compiles one block function (numquad/cpu/codegen.py): the
choice is made from the kernel's source when the code is generated, and the block
function then takes one more argument, ``_nq_pon``, which the launch sets
(numquad/cpu/dispatch.py): 0 when a privatised array may share memory with
another array argument, so that the other argument's reads and writes keep
seeing the atomics. Each call also decides at run time: no private copy when the
array is larger than :data:`_MAX_BYTES` or has more elements than the call has
threads (zeroing and merging it would cost more than the atomics), and then the
atomics go to the array as before.

An atomic's index is checked as before (on the array itself), so an index out of
bounds still raises NumquadIndexError. A launch that raises leaves the array
with some of its additions, as it does without private copies: here those of the
chunks that completed.
"""

from __future__ import annotations

import ast
import mmap

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic, register_jitable

from .atomics import ATOMICS, _SPECS, _check, _indices

__all__ = ["private_arrays", "private_launch_flag", "PRIVATE_ATOMICS", "private_alloc", "private_merge", "MAX_BYTES"]

#: The largest array given private copies, in bytes (per call of the block function).
MAX_BYTES = 64 * 1024

#: The element types whose additions may be regrouped (wrapping integer addition).
_DTYPES = (types.int32, types.uint32, types.int64, types.uint64)

#: The atomics a private copy takes, and the attributes of the array that may be read.
_ATOMICS = ("atomic.add", "atomic.sub")
_ATTRS = ("shape", "size", "ndim")


def _candidate(ty):
    return isinstance(ty, types.Array) and ty.mutable and ty.dtype in _DTYPES


def private_arrays(fe, typemap):
    """The parameters of the kernel of Frontend *fe* that get private copies: integer
    arrays (by *typemap*) that the kernel's statements (after inlining, ``fe.body``)
    name only as the first argument of an ``atomic.add``/``atomic.sub`` statement
    (its value unused) or to read ``.shape``, ``.size`` or ``.ndim``; never assigned,
    passed to a function, indexed or read in any other way."""
    cands = {p for p in fe.env.params if _candidate(typemap.get(p))}
    if not cands:
        return ()
    allowed, used = set(), set()
    nodes = [n for s in fe.body for n in ast.walk(s)]
    for node in nodes:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            arg = call.args[0] if call.args else None
            if (
                isinstance(arg, ast.Name)
                and arg.id in cands
                and not call.keywords
                and len(call.args) == 3
                and fe.builtin_of(call.func) in _ATOMICS
            ):
                allowed.add(id(arg))
                used.add(arg.id)
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in _ATTRS
            and isinstance(node.value, ast.Name)
            and isinstance(node.ctx, ast.Load)
        ):
            allowed.add(id(node.value))
    bad = {n.id for n in nodes if isinstance(n, ast.Name) and n.id in cands and id(n) not in allowed}
    return tuple(p for p in fe.env.params if p in used and p not in bad)


def _arrays(a):
    # (a record argument, ``arr[0]`` of a structured array, is read and written in the
    # caller's array: docs/numba-cuda.md)
    if isinstance(a, (np.ndarray, np.void)):
        yield a
    elif isinstance(a, tuple):
        for e in a:
            yield from _arrays(e)


def _mapped(a):
    """Is *a*'s memory a mapping (``np.memmap``, ``mmap``, ``SharedMemory``)? Two
    mappings of one file are the same memory at different addresses, which
    ``np.may_share_memory`` cannot see."""
    b = a
    for _ in range(64):
        if b is None:
            return False
        if isinstance(b, mmap.mmap):
            return True
        b = b.obj if isinstance(b, memoryview) else getattr(b, "base", None)
    return True  # (a chain that long: assume so)


def private_launch_flag(args, private):
    """``_nq_pon`` for a launch with *args*: 1, or 0 when an argument at one of the
    positions *private* may share memory with another array argument (NumPy's
    bounds check, cheap and conservative: a strided view of the same buffer counts;
    and any two mapped arrays, which may map one file twice)."""
    for i in private:
        a = args[i]
        mapped = _mapped(a)
        for j, b in enumerate(args):
            if j != i and any(np.may_share_memory(a, x) or mapped and _mapped(x) for x in _arrays(b)):
                return 0
    return 1


@intrinsic
def _shape_if(typingctx, ary, on):
    """``ary.shape`` where *on*, else a shape of zeros (a private copy not made)."""
    ret = types.UniTuple(types.intp, ary.ndim)

    def codegen(context, builder, sig, args):
        arr = context.make_array(sig.args[0])(context, builder, args[0])
        flag = context.cast(builder, args[1], sig.args[1], types.boolean)
        zero = context.get_constant(types.intp, 0)
        dims = [builder.select(flag, d, zero) for d in cgutils.unpack_tuple(builder, arr.shape, ary.ndim)]
        return context.make_tuple(builder, ret, dims)

    return ret(ary, on), codegen


@register_jitable
def private_alloc(ary, work):
    """A zeroed private copy of *ary* for a call running *work* threads of blocks
    (0 when the launch refused private copies), or an empty array when a copy does
    not pay: larger than MAX_BYTES, or more elements than threads."""
    on = ary.size <= work and ary.size * ary.itemsize <= MAX_BYTES
    return np.zeros(_shape_if(ary, on), ary.dtype)


_merge_add = ATOMICS["add"]


@register_jitable
def private_merge(ary, priv):
    """Adds the private copy *priv* into *ary*: one atomic per non-zero element (the
    other worker threads merge theirs meanwhile)."""
    if priv.size != 0:
        for idx in np.ndindex(priv.shape):
            v = priv[idx]
            if v != 0:
                _merge_add(ary, idx, v)


def _make(name):
    allowed = _SPECS[name][0]
    op = _SPECS[name][1][0]

    def impl(typingctx, ary, priv, idx, val):
        _check(name, ary, idx, allowed)  # numba.cuda's rules, as the atomic's own

        def codegen(context, builder, sig, args):
            aryty, privty, idxty, valty = sig.args
            arr = context.make_array(aryty)(context, builder, args[0])
            idxs = _indices(context, builder, idxty, args[2])
            # the index checked on the array itself (cpu/atomics.py): out of bounds raises
            ptr = cgutils.get_item_pointer(context, builder, aryty, arr, idxs, wraparound=True, boundscheck=True)
            v = context.cast(builder, args[3], valty, aryty.dtype)
            parr = context.make_array(privty)(context, builder, args[1])
            made = builder.icmp_signed("!=", parr.nitems, ir.Constant(parr.nitems.type, 0))
            with builder.if_else(made, likely=True) as (private, shared):
                with private:  # the same shape: the same (wrapped) index is inside
                    pptr = cgutils.get_item_pointer(context, builder, privty, parr, idxs, wraparound=True)
                    old = builder.load(pptr)
                    builder.store(builder.add(old, v) if op == "add" else builder.sub(old, v), pptr)
                with shared:
                    builder.atomic_rmw(op, ptr, v, "seq_cst")
            return context.get_dummy_value()

        return types.none(ary, priv, idx, val), codegen

    impl.__name__ = f"private_atomic_{name}"
    return intrinsic(impl)


#: ``atomic.add``/``atomic.sub`` on an array with a private copy, by name:
#: ``f(ary, priv, idx, val)`` adds into *priv* when it was made, else into *ary*.
PRIVATE_ATOMICS = {n: _make(n) for n in ("add", "sub")}
