"""Arrays a kernel only adds into with atomics: one private copy per worker thread.

``xpu.atomic.add(hist, x[i], 1)`` in every thread of a launch is a ``lock`` add per
thread; with the blocks of a launch spread over worker threads (cpu/launch.py)
those adds land on the same few cache lines from every core, and each one waits
for the line (examples/histogram.py: about 17 ns an add on two cores, against
0.8 ns for a private histogram per thread in plain Numba; docs/BENCHMARKS.md).

A kernel parameter qualifies (:func:`private_params`) when the kernel's only uses
of it are ``atomic.add``/``atomic.sub`` statements whose value is not used (and
``.shape``/``.size``/``.ndim``), on a C-contiguous integer array it never assigns.
Then nothing in the launch can read the array, so no thread can tell the adds
apart from adds into a zeroed private copy that each worker adds into the array at
its end: integer addition wraps, so the sum is the same bits in any order. The
block function is compiled for that case with plain adds into the copy
(cpu/atomics.py, ``PRIVATE_ATOMICS``; one OS thread owns each copy), and each worker
adds its copy into the array with atomics (:func:`merge`), so launches running at
once from several Python threads still add atomically. A launch uses it only where
:func:`usable` says so (no other argument overlaps the array; the copies are small
next to the launch); else it runs the atomic code, compiled on demand.
"""

from __future__ import annotations

import ast

import numba
import numpy as np
from numba.core import types

from .atomics import ATOMICS

__all__ = ["private_params", "use_private_atomics", "usable", "with_copies", "merge"]

_ADDITIVE = ("atomic.add", "atomic.sub")
_SHAPE_ATTRS = ("shape", "size", "ndim")
#: The largest array copied per worker; and no copy has more elements than the launch
#: has threads (zeroing and merging it then costs less than the launch's own work).
_MAX_BYTES = 1 << 20


def private_params(fe, argtypes):
    """((index, name), ...) of the parameters of the kernel of Frontend *fe* that only
    take ``atomic.add``/``atomic.sub`` statements (argument types *argtypes*)."""
    cands = {}
    for k, p in enumerate(fe.env.params):
        t = argtypes[k] if k < len(argtypes) else None
        if isinstance(t, types.Array) and t.layout == "C" and t.mutable and \
                isinstance(t.dtype, types.Integer):
            cands[p] = k
    if not cands:
        return ()
    allowed, used, bad = set(), set(), set()
    nodes = [n for s in fe.body for n in ast.walk(s)]
    for n in nodes:
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and n.value.args and \
                isinstance(n.value.args[0], ast.Name) and fe.builtin_of(n.value.func) in _ADDITIVE:
            allowed.add(id(n.value.args[0]))
        elif isinstance(n, ast.Attribute) and n.attr in _SHAPE_ATTRS and isinstance(n.value, ast.Name):
            allowed.add(id(n.value))
    for n in nodes:
        if isinstance(n, ast.Name) and n.id in cands:
            ok = id(n) in allowed and isinstance(n.ctx, ast.Load)
            (used if ok else bad).add(n.id)
    return tuple((k, p) for p, k in cands.items() if p in used and p not in bad)


class _Private(ast.NodeTransformer):
    def __init__(self, names):
        self.names = names

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("_nq_atomic_add", "_nq_atomic_sub") and node.args \
                and isinstance(node.args[0], ast.Name) and node.args[0].id in self.names:
            node.func = ast.copy_location(ast.Name("_nq_patomic_" + f.id[len("_nq_atomic_"):],
                                                   ast.Load()), f)
        return node


def use_private_atomics(fn_ast, names):
    """*fn_ast* (a generated block function) with the atomics on the parameters *names*
    made plain adds into the worker's copy (``_nq_patomic_add``/``_sub``)."""
    return _Private(set(names)).visit(fn_ast) if names else fn_ast


def _arrays(a):
    if isinstance(a, np.ndarray):
        yield a
    elif isinstance(a, tuple):
        for e in a:
            yield from _arrays(e)


def usable(args, private, nthreads):
    """Whether a launch of *nthreads* threads on *args* can use private copies of the
    arguments at the indices *private*: each a C-contiguous ndarray of at most
    _MAX_BYTES and *nthreads* elements that no other argument overlaps."""
    for k in private:
        a = args[k]
        if type(a) is not np.ndarray or not a.flags.c_contiguous or a.nbytes > _MAX_BYTES \
                or a.size > nthreads:
            return False
        for j, other in enumerate(args):
            if j != k and any(np.may_share_memory(a, b) for b in _arrays(other)):
                return False
    return True


def with_copies(args, private):
    """(*args* with a zeroed copy of each argument at the indices *private*, the
    (array, copy) pairs)."""
    out = list(args)
    pairs = []
    for k in private:
        c = np.zeros_like(args[k])
        out[k] = c
        pairs.append((args[k], c))
    return tuple(out), pairs


@numba.njit(nogil=True)
def _merge_add(dst, src):
    for k in range(src.shape[0]):
        v = src[k]
        if v != 0:
            _atomic_add(dst, k, v)


_atomic_add = ATOMICS["add"]


def merge(pairs):
    """Add each copy into its array, element by element with atomic adds."""
    for dst, src in pairs:
        _merge_add(dst.reshape(-1), src.reshape(-1))
