"""What holds while numquad's CPU target compiles with Numba, and only then.

Numba's registries and analyses are one per process, shared with the user's own
``numba.njit`` code. Two things numquad needs apply to its own compiles only, on the
thread that runs them (:func:`numquad_compile` marks them):

- the CPU copies of numba.cuda's overloads (numquad/cpu/cudaapi.py
  ``_only_for_numquad``): plain Numba code keeps Numba's own choice of overload;
- a faster liveness analysis (:func:`_live_map_bitsets`). The block functions numquad
  generates hold thousands of IR blocks and variables, and Numba computes which
  variables are live at each block several times a compile (after SSA and each
  dead-code pass) with Python sets: a fixpoint whose unions cost blocks x variables a
  sweep. The same fixpoint over bitsets (a Python int per block) gives the same
  sets. On a random 159-line kernel that generates 1,673 lines, the compile went
  from 69.6 s to 34.7 s (docs/BENCHMARKS.md, 2026-12-06).

Any other compile calls Numba's own analysis.
"""

from __future__ import annotations

import contextlib
import threading
from collections import defaultdict

from numba.core import analysis as _analysis
from numba.core import ir_utils as _ir_utils

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
            s = sets[b] = frozenset(names[i] for i in range(b.bit_length()) if b >> i & 1)
        out[off] = set(s)
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
