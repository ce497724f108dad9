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
  (:func:`_get_impl`);
- the subroutines Numba compiles and caches per target context
  (``compile_subroutine``: ``math.hypot`` of float32, ``abs`` of a complex,
  ``cmath.exp``), for the same reason: numquad's compiles keep their own cache
  (:func:`_compile_subroutine`). A probe found a kernel's ``abs(complex64)`` giving
  the C library's bits after a user's ``njit`` had compiled it first, and the user's
  ``math.hypot`` giving libdevice's after a kernel.

A Numba dispatcher that is not numquad's (a user's ``@numba.njit`` function an
``@overload`` implementation calls, say) compiles as plain Numba code even when a
numquad compile asks for it (:func:`foreign_compile`): the user's later calls of it
get Numba's own code. numquad links a rewritten copy of such code into its own
(numquad/_conversions.py, ``saturating_conversions``). numquad's own dispatchers
carry ``_nq_owned``, or are defined in numquad's modules.
"""

from __future__ import annotations

import contextlib
import threading
from collections import defaultdict

from numba.core import analysis as _analysis
from numba.core import base as _base
from numba.core import dispatcher as _dispatcher
from numba.core import ir_utils as _ir_utils
from numba.core.typing import templates as _templates

__all__ = ["numquad_compile", "in_numquad_compile", "foreign_compile", "in_foreign_compile"]

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


@contextlib.contextmanager
def foreign_compile():
    """Inside a numquad compile, the compile of a dispatcher that is not numquad's:
    plain Numba's, for the block (numquad's marks and rewrites off)."""
    depth, foreign = getattr(_STATE, "depth", 0), getattr(_STATE, "foreign", 0)
    _STATE.depth, _STATE.foreign = 0, foreign + 1
    try:
        yield
    finally:
        _STATE.depth, _STATE.foreign = depth, foreign


def in_foreign_compile():
    """Is this thread compiling a dispatcher that is not numquad's, for a numquad
    compile (:func:`foreign_compile`)?"""
    return getattr(_STATE, "foreign", 0) > 0


def _owned(disp):
    if getattr(disp, "_nq_owned", False):
        return True
    return (getattr(getattr(disp, "py_func", None), "__module__", None) or "").startswith("numquad.")


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


def _owned_jitter(jitter):
    """*jitter* (Numba's jit decorator maker) making dispatchers marked as numquad's."""

    def make(*args, **kwargs):
        decorate = jitter(*args, **kwargs)

        def owned(fn):
            disp = decorate(fn)
            disp._nq_owned = True
            return disp

        return owned

    return make


_NUMBA_GET_JIT_DECORATOR = _templates._OverloadFunctionTemplate._get_jit_decorator


def _get_jit_decorator(self):
    """Numba's; in numquad's compiles an overload's implementation (kept in numquad's
    own cache, :func:`_get_impl`) is numquad's dispatcher."""
    jitter = _NUMBA_GET_JIT_DECORATOR(self)
    return _owned_jitter(jitter) if in_numquad_compile() else jitter


if getattr(_NUMBA_GET_JIT_DECORATOR, "__module__", None) == "numba.core.typing.templates":
    _templates._OverloadFunctionTemplate._get_jit_decorator = _get_jit_decorator


_NUMBA_DISPATCHER_COMPILE = _dispatcher.Dispatcher.compile


def _dispatcher_compile(self, sig):
    """Numba's ``Dispatcher.compile``; one that is not numquad's compiles as plain
    Numba code when a numquad compile asks for it (:func:`foreign_compile`)."""
    if in_numquad_compile() and not _owned(self):
        with foreign_compile():
            return _NUMBA_DISPATCHER_COMPILE(self, sig)
    return _NUMBA_DISPATCHER_COMPILE(self, sig)


if getattr(_NUMBA_DISPATCHER_COMPILE, "__module__", None) == "numba.core.dispatcher":
    _dispatcher.Dispatcher.compile = _dispatcher_compile


_NUMBA_COMPILE_SUBROUTINE = _base.BaseContext.compile_subroutine
_OWN_SUBROUTINES = {}  # numquad's cache of Numba's subroutines (``cached_internal_func``)


def _compile_subroutine(self, *args, **kwargs):
    """Numba's ``BaseContext.compile_subroutine``; in numquad's compiles with the
    context's subroutine cache swapped for numquad's own: a subroutine compiled with
    numquad's rewrites (the GPU's conversions and math) is never plain Numba's, nor
    the reverse."""
    if not in_numquad_compile():
        return _NUMBA_COMPILE_SUBROUTINE(self, *args, **kwargs)
    theirs = self.cached_internal_func
    self.cached_internal_func = _OWN_SUBROUTINES
    try:
        return _NUMBA_COMPILE_SUBROUTINE(self, *args, **kwargs)
    finally:
        self.cached_internal_func = theirs


if getattr(_NUMBA_COMPILE_SUBROUTINE, "__module__", None) == "numba.core.base":
    _base.BaseContext.compile_subroutine = _compile_subroutine
