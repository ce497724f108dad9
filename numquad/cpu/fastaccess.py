"""Unchecked accesses of a lane loop's fast version, told apart by array.

A lane loop's fast version (cpu/versioning.py) runs where a test before it showed
every contiguous access inside its array; there those accesses are plain loads and
stores. LLVM then unrolls a loop of a constant 16 or 32 lanes and packs the lanes'
loads into vector loads, but only where no store of the loop may write what they
read: ``out[y, x] = img[y, x]`` stayed 32 scalar loads and stores, since ``img`` and
``out`` might overlap (docs/BENCHMARKS.md, thirty-fifth session).

Here each such access carries LLVM's scoped no-alias metadata: one scope per array
the block function never rebinds (a parameter, or a static shared array bound only
where it is allocated), an access to array *k* is in scope *k* and declared not to
alias the accesses of the other scopes. That promise holds only where the arrays do
not overlap, so a fast version with such accesses runs only where :func:`disjoint`
is true of every pair of parameters among them, one stored (tested once per call of
the block function; with arrays that overlap, the masked loop runs, as before; a
static shared array's memory is its own, and dynamic shared arrays, which all view
one buffer, get no scope). One memory mapped at two addresses is beyond such a test
(docs/semantics.md). The accesses of one array keep their order, and accesses with no
scope (views, arrays in tuples, device functions) are not part of the promise.

The block function of each kernel gets its own domain (:func:`accessors`), so two
inlined into one function never mix their scopes.
"""

from __future__ import annotations

import itertools

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.extending import intrinsic, register_jitable

__all__ = ["accessors", "disjoint"]

_domains = itertools.count()


def accessors(nscopes):
    """``(loads, stores)``: for each of *nscopes* arrays, the intrinsic
    ``load(arr, idx)`` (``arr[idx]``) and ``store(arr, idx, v)`` (``arr[idx] = v``,
    *v* converted as Numba's store converts it), of a new domain. *idx*: an integer
    or a tuple of one integer per axis, each inside its axis (no wrap-around, no
    check). Only for arrays of integers or floats."""
    dom = f"numquad.lanes.{next(_domains)}"
    return [_access(dom, k, nscopes, False) for k in range(nscopes)], [
        _access(dom, k, nscopes, True) for k in range(nscopes)
    ]


def _scopes(module, dom, k, n):
    domain = module.add_metadata([ir.MetaDataString(module, dom)])
    scope = [module.add_metadata([ir.MetaDataString(module, f"{dom}.{j}"), domain]) for j in range(n)]
    return module.add_metadata([scope[k]]), module.add_metadata([s for j, s in enumerate(scope) if j != k])


def _element_pointer(context, builder, arrty, arr, idxty, idx):
    ary = context.make_array(arrty)(context, builder, arr)
    if isinstance(idxty, types.BaseTuple):
        raw = cgutils.unpack_tuple(builder, idx, len(idxty))
        tys = list(idxty)
    else:
        raw, tys = [idx], [idxty]
    inds = [context.cast(builder, v, t, types.intp) for v, t in zip(raw, tys)]
    shape = cgutils.unpack_tuple(builder, ary.shape, arrty.ndim)
    strides = cgutils.unpack_tuple(builder, ary.strides, arrty.ndim)
    return cgutils.get_item_pointer2(context, builder, ary.data, shape, strides, arrty.layout, inds)


def _check(arr, idx, what):
    tys = list(idx) if isinstance(idx, types.BaseTuple) else [idx]
    if not (
        isinstance(arr, types.Array)
        and isinstance(arr.dtype, (types.Integer, types.Float))
        and len(tys) == arr.ndim
        and all(isinstance(t, types.Integer) for t in tys)
    ):
        raise TypingError(f"{what}: an array of integers or floats and one integer per axis; got {arr}, {idx}")


def _access(dom, k, n, store):
    if store:

        def _store(typingctx, arr, idx, val):
            _check(arr, idx, "fast store")

            def codegen(context, builder, sig, args):
                arrty, idxty, valty = sig.args
                ptr = _element_pointer(context, builder, arrty, args[0], idxty, args[1])
                v = context.cast(builder, args[2], valty, arrty.dtype)
                st = builder.store(v, ptr, align=None if arrty.aligned else 1)
                own, others = _scopes(builder.module, dom, k, n)
                st.set_metadata("alias.scope", own)
                st.set_metadata("noalias", others)
                return context.get_dummy_value()

            return types.none(arr, idx, val), codegen

        return intrinsic(_store)

    def _load(typingctx, arr, idx):
        _check(arr, idx, "fast load")

        def codegen(context, builder, sig, args):
            arrty, idxty = sig.args
            ptr = _element_pointer(context, builder, arrty, args[0], idxty, args[1])
            v = builder.load(ptr, align=None if arrty.aligned else 1)
            own, others = _scopes(builder.module, dom, k, n)
            v.set_metadata("alias.scope", own)
            v.set_metadata("noalias", others)
            return v

        return arr.dtype(arr, idx), codegen

    return intrinsic(_load)


@register_jitable
def _extent(a):
    lo = hi = np.int64(a.ctypes.data)
    for k in range(a.ndim):
        s = np.int64(a.strides[k]) * np.int64(a.shape[k] - 1)
        if s < 0:
            lo += s
        else:
            hi += s
    return lo, hi + a.itemsize


@register_jitable
def disjoint(a, b):
    """``disjoint(a, b)``: True where arrays *a* and *b* share no byte (either empty,
    or their spans of memory apart)."""
    if a.size == 0 or b.size == 0:
        return True
    alo, ahi = _extent(a)
    blo, bhi = _extent(b)
    return ahi <= blo or bhi <= alo
