"""What holds while numquad's CPU target compiles with Numba, and only then.

Numba's registries and analyses are one per process, shared with the user's own
``numba.njit`` code. Three things apply to numquad's own compiles only, on the
thread that runs them (:func:`numquad_compile` marks them):

- the CPU copies of numba.cuda's overloads (numquad/cpu/cudaapi.py
  ``_only_for_numquad``): plain Numba code keeps Numba's own choice of overload;
- a faster liveness analysis (:func:`_live_map_bitsets`). The block functions numquad
  generates hold thousands of IR blocks and variables, and Numba computes which
  variables are live at each block several times a compile (after SSA and each
  dead-code pass) with Python sets: a fixpoint whose unions cost blocks x variables a
  sweep. The same fixpoint over bitsets (a Python int per block) gives the same
  sets. On a random 159-line kernel that generates 1,673 lines, the compile went
  from 70.3 s to 34.2 s (benchmarks/bench_compile_large.py, docs/BENCHMARKS.md);
  any other compile calls Numba's own analysis;
- the implementations Numba compiles for ``@overload``/``register_jitable`` functions
  (``int(x)`` is one, numba/cpython/builtins.py). numquad's compiles rewrite every
  float-to-integer conversion to the GPU's saturating one (numquad/_conversions.py),
  and Numba keeps each overload's compiled implementation in one cache per overload,
  keyed by the typing context, the argument types and the caller's flags, which
  numquad's compiles share with the user's. Whichever compiled first gave its bits
  to the other: a user's ``@njit(error_model="numpy")`` ``int(inf)`` saturated after
  a numquad kernel, a kernel gave x86's ``0x80...0`` after such a user function, and
  both persisted in disk caches. numquad's compiles keep their own cache
  (:func:`_get_impl`).
"""

from __future__ import annotations

import contextlib
import threading
from collections import defaultdict

from numba.core import analysis as _analysis
from numba.core import ir_utils as _ir_utils
from numba.core.typing import templates as _templates

__all__ = ["numquad_compile", "in_numquad_compile"]

_STATE = threading.local()


@contextlib.contextmanager
def numquad_compile():
    """Marks this thread's Numba compiles as numquad's for the block."""
    depth = getattr(_STATE, "depth", 0)
    _STATE.depth = depth + 1
    try:
        yield
    finally:
        _STATE.depth = depth


def in_numquad_compile():
    """Is this thread inside :func:`numquad_compile`?"""
    return getattr(_STATE, "depth", 0) > 0


def _live_map_bitsets(cfg, blocks, var_use_map, var_def_map):
    """Numba's ``analysis.compute_live_map`` (the variables live at the entry of
    each block) with each set a Python int, bit i for variable i: the same two
    fixpoints (the definitions reaching each block forward, then liveness backward
    within them), in the same topological order, to the same least solution."""
    topo = cfg.topo_order()
    index, names = {}, []

    def bits(s):
        b = 0
        for n in s:
            i = index.get(n)
            if i is None:
                i = index[n] = len(names)
                names.append(n)
            b |= 1 << i
        return b

    use = {k: bits(v) for k, v in var_use_map.items()}
    dfn = {k: bits(v) for k, v in var_def_map.items()}
    succ = {k: [o for o, _ in cfg.successors(k)] for k in topo}
    pred = {k: [i for i, _ in cfg.predecessors(k)] for k in topo}
    reach = defaultdict(int)
    while True:
        before = dict(reach)
        for off in topo:
            r = reach[off] | dfn.get(off, 0) | use.get(off, 0)
            reach[off] = r
            for o in succ[off]:
                reach[o] |= r
        if reach == before:
            break
    live = {off: use.get(off, 0) for off in blocks.keys()}
    while True:
        before = dict(live)
        for off in reversed(topo):
            lv = live[off]
            for inc in pred[off]:
                live[inc] |= lv & reach[inc] & ~dfn.get(inc, 0)
        if live == before:
            break
    sets, out = {}, {}
    for off, b in live.items():
        s = sets.get(b)
        if s is None:
            s = sets[b] = frozenset(_members(b, names))
        out[off] = set(s)
    return out


def _members(b, names):
    """The names of the bits set in *b*: one scan of its binary digits (shifting a
    long int bit by bit would cost its length at each bit)."""
    digits = bin(b)[:1:-1]  # bit 0 first
    out = []
    i = digits.find("1")
    while i >= 0:
        out.append(names[i])
        i = digits.find("1", i + 1)
    return out


_NUMBA_LIVE_MAP = _analysis.compute_live_map


def _compute_live_map(cfg, blocks, var_use_map, var_def_map):
    if in_numquad_compile():
        return _live_map_bitsets(cfg, blocks, var_use_map, var_def_map)
    return _NUMBA_LIVE_MAP(cfg, blocks, var_use_map, var_def_map)


# numba.core.postproc reads analysis.compute_live_map, numba.core.ir_utils its own import
if getattr(_analysis.compute_live_map, "__module__", None) == "numba.core.analysis":
    _analysis.compute_live_map = _compute_live_map
if getattr(_ir_utils.compute_live_map, "__module__", None) == "numba.core.analysis":
    _ir_utils.compute_live_map = _compute_live_map


_NUMBA_GET_IMPL = _templates._OverloadFunctionTemplate._get_impl
_OWN_IMPLS = {}  # an overload template class -> numquad's cache of its implementations


def _get_impl(self, args, kws):
    """Numba's ``_OverloadFunctionTemplate._get_impl``; in numquad's compiles with
    the template's implementation cache swapped for numquad's own (on this
    instance: Numba makes one per resolution), so that an implementation compiled
    with numquad's conversions is never another compile's, nor the reverse."""
    if in_numquad_compile():
        cls = type(self)
        own = _OWN_IMPLS.get(cls)
        if own is None:
            own = _OWN_IMPLS[cls] = {}
        self._impl_cache = own
    return _NUMBA_GET_IMPL(self, args, kws)


if getattr(_NUMBA_GET_IMPL, "__module__", None) == "numba.core.typing.templates":
    _templates._OverloadFunctionTemplate._get_impl = _get_impl
