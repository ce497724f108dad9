"""Structured reconvergence: which lanes take part in each cross-lane op.

docs/semantics.md defines the active lanes of a cross-lane op as the lanes of
the wave that reach it in the same dynamic instance of the kernel's structured
control flow (the same iteration of every enclosing loop, the same side of every
``if``; lanes that left a loop, skipped the rest of an iteration or returned are
inactive). A GPU with independent thread scheduling does not give that set by
itself: after divergence ``activemask()`` names whichever lanes the hardware has
together. This module computes the set in the source, so a target can hand it
to the hardware as an explicit member mask.

It is target-neutral (it imports neither ``numquad.cpu`` nor ``numquad.cuda``)
and has two layers.

**The analysis** (:func:`analyze`, cached per dispatcher) reads the function's
AST (``dispatcher.source_tree``, the user's line numbers) and annotates a private
copy of it:

* every call that needs the current mask: a cross-lane op (``Quad.*``/``Wave.*``
  except the queries ``laneId``/``width``) or a call of another ``@xpu.jit``
  function that needs one (transitively), see :meth:`Analysis.call_site`;
  :attr:`Analysis.needs_mask` says whether the function has any;
* :attr:`Analysis.uniform`: the locals whose value is the same in every lane
  that reads it (a greatest fixpoint: constants, kernel parameters, blockIdx,
  blockDim, gridDim, warpsize, counters of uniform ``range`` loops, and values
  computed only from these by arithmetic and pure calls, stored only at uniform
  positions: not under lane-varying control, not inside a loop with per-lane
  exits, not after a per-lane ``break``/``continue``). Array elements, op
  results and anything unknown are lane-varying: an unsound "uniform" is a
  silent wrong result, a needless ballot costs a few cycles;
* every ``if`` (:meth:`Analysis.branch`): is its test uniform, does it hold
  mask-taking calls;
* every loop (:meth:`Analysis.loop`): is its trip count the same in every lane
  (``uniform_exit``), do its values stay uniform, which per-lane escapes it has,
  and its ``form``: ``"kept"`` (plain control, the mask of the loop's entry is the
  mask of every iteration) or ``"while"`` (the lanes still in the loop are
  recomputed at each iteration head);
* every ``break``/``continue``/``return`` that must become a flag
  (:meth:`Analysis.converted`): one under lane-varying control that affects a
  later cross-lane op (a ``break``/``continue`` of a loop that holds ops, a
  ``return`` with ops after it); the others stay real jumps.

**The transform** (:func:`masked_function`) turns the annotated tree into a
function that threads an explicit ``uint32`` mask variable, ``_nq_mask``, through
that control flow, so every lane of a mask reaches every join point:

* a kernel starts with ``_nq_mask = _nq_entry_mask()`` (the lanes of this wave
  that exist: a partial last wave has fewer); a lane function that needs a mask
  takes it as an extra last parameter ``_nq_mask``;
* every mask-taking op call gets ``_nq_mask`` as an extra last argument, every
  mask-taking lane-function call ``_nq_mask=_nq_mask``; numba.cuda's
  ``cuda.activemask()`` becomes ``_nq_mask`` itself (the hardware's answer after
  divergence is whichever lanes it runs together);
* a lane-varying ``if`` that holds such calls becomes::

      _nq_cK = bool(test)
      _nq_bK = _nq_ballot(_nq_mask, _nq_cK)      # the lanes of the mask taking it
      _nq_mK = _nq_mask
      if _nq_cK:
          _nq_mask = _nq_bK
          ...
      else:
          _nq_mask = _nq_andnot(_nq_mK, _nq_bK)
          ...
      _nq_mask = _nq_mK

* a loop of form ``"while"`` becomes ``while True:`` whose head computes the
  lanes still in it, ``_nq_mask = _nq_ballot(_nq_mask, cond)``, and lets the
  others leave (``if not cond: break``); ``for t in range(a, b, s)`` counts in
  ``_nq_iK`` (Python's range semantics, negative steps included) and other
  iterables are indexed; the mask of the loop's entry is restored after it;
* converted escapes set flags (``_nq_brkK``, ``_nq_cntK``, ``_nq_ret``, and
  ``_nq_res`` holds a lane function's result); the rest of the block after a
  statement that may set one is guarded (``if not (flags):``, itself a
  lane-varying ``if``), loop heads test ``not _nq_brkK and not _nq_ret``;
* uniform control and control without mask-taking calls or converted escapes
  stays exactly as written.

Each ``K`` above is chosen so that none of the names it makes occurs in the
function already: the function it reads is the conditional-expression rewrite's
(numquad/_desugar.py), whose temporaries are ``_nq_cxN``.

Lanes that leave a loop early simply go on to the next op after it: an explicit
member mask makes the hardware wait there for the named lanes (``shfl.sync``
semantics on sm_70+), so no extra synchronisation is needed at joins. The
generated code calls three helpers that a target binds in the function's
globals: ``_nq_entry_mask()``, ``_nq_ballot(mask, pred)`` (uint32: the lanes of
*mask* whose *pred* holds; executed by exactly the lanes of *mask*) and
``_nq_andnot(a, b)`` (uint32 ``a & ~b``). Every generated node carries the
location of the user's statement it came from, so compiling the result with the
user's file name keeps errors on the user's lines.

A CPU front end can consume the same analysis: ``uniform`` for scalar values,
``branch(node).uniform`` and ``loop(node).form``/``uniform_exit`` for scalar
control versus masked control, ``converted(node)`` for the jumps that must
become per-lane state.
"""

from __future__ import annotations

import ast
import builtins as _builtins
import copy
import dataclasses
import itertools
import sys
import threading
import types as _pytypes
import weakref
from typing import Optional

import numpy as np

from . import _desugar
from . import _power
from . import ops as _ops
from . import xpu as _xpu
from .errors import NumquadCompileError, NumquadTypeError

__all__ = [
    "MASK",
    "ENTRY_MASK",
    "BALLOT",
    "ANDNOT",
    "HELPERS",
    "FOREVER",
    "name_forever_loops",
    "named_builtin",
    "ndim_complaint",
    "is_bit_count",
    "BLOCK_BUILTINS",
    "UNIFORM_BUILTINS",
    "enum_start",
    "seq_item",
    "Analysis",
    "CallSite",
    "BranchInfo",
    "LoopInfo",
    "analyze",
    "needs_mask",
    "masked_function",
    "fold_array_shapes",
    "alignment_complaint",
    "allocation_complaint",
    "python_type_dtype",
    "hasattr_constant",
    "local_names",
    "shape_value",
    "fold_hasattr",
    "Env",
    "MISSING",
    "BUILTIN_ALIASES",
]

#: The mask variable of the generated code (uint32, bit i: lane i takes part).
MASK = "_nq_mask"
#: The helpers the generated code calls; a target binds them in the globals.
ENTRY_MASK = "_nq_entry_mask"
BALLOT = "_nq_ballot"
ANDNOT = "_nq_andnot"
HELPERS = (ENTRY_MASK, BALLOT, ANDNOT)
#: The test of generated endless loops: a global bound to True. Never the literal
#: ``while True:``: on Python 3.12 and 3.13 Numba's bytecode frontend (0.68.0 on
#: 3.12; 0.68.0 and 0.68.1 on 3.13) cannot type a variable assigned in such a loop
#: after a ``break`` and assigned again after the loop ("Type of variable 'r.1'
#: cannot be determined"), which every masked loop does (docs/architecture.md, 8).
FOREVER = "_nq_forever"


def name_forever_loops(tree):
    """Rewrite every ``while True:`` (``while 1:``) in *tree* as ``while _nq_forever:``,
    in place; the code's globals must bind ``FOREVER`` to True."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.While)
            and isinstance(node.test, ast.Constant)
            and node.test.value is not None
            and bool(node.test.value)
        ):
            node.test = ast.copy_location(ast.Name(id=FOREVER, ctx=ast.Load()), node.test)
    return tree


_RESERVED = "_nq_"
_RET = "_nq_ret"
_RES = "_nq_res"

#: What :meth:`Env.resolve` gives for a name it cannot resolve statically.
MISSING = object()

# ---------------------------------------------------------------------------
# Name resolution: globals, closure, builtins, numba.cuda spellings
# ---------------------------------------------------------------------------

_GROUPS = ("threadIdx", "blockIdx", "blockDim", "gridDim", "shared", "local", "atomic")

#: The builtins of the block's and the grid's place and size: the same in every
#: thread of a block.
BLOCK_BUILTINS = frozenset(f"{g}.{c}" for g in ("blockIdx", "blockDim", "gridDim") for c in "xyz")
#: Builtins whose value is the same in every lane of a wave.
UNIFORM_BUILTINS = BLOCK_BUILTINS | {"warpsize"}
#: Builtin calls whose result is the same in every lane when their arguments are.
_UNIFORM_BUILTIN_CALLS = frozenset(["gridsize"])
_PURE_CALLS = (len, min, max, int, float, abs, bool, round, complex)


def _cuda_table():
    """numba.cuda objects that mean an xpu builtin (only if numba.cuda is imported)."""
    cuda = sys.modules.get("numba.cuda")
    table = {}
    if cuda is None:
        return table
    for name in ("grid", "gridsize", "laneid", "warpsize", "syncthreads", "syncwarp") + _GROUPS:
        obj = getattr(cuda, name, None)
        if obj is not None:
            table[id(obj)] = (obj, name)
    # a group's functions bound to another name (``atomic_add = cuda.atomic.add``)
    for group, names in (
        ("shared", ("array",)),
        ("local", ("array",)),
        ("const", ("array_like",)),
        ("atomic", tuple(_xpu.atomic.__all__)),
    ):
        g = getattr(cuda, group, None)
        for n in names:
            obj = getattr(g, n, None) if g is not None else None
            if obj is not None:
                table[id(obj)] = (obj, f"{group}.{n}")
    return table


def _is_activemask(obj):
    """numba.cuda's ``activemask``: the structured mask on every target, not the
    lanes the hardware happens to run together (docs/semantics.md)."""
    cuda = sys.modules.get("numba.cuda")
    return cuda is not None and obj is getattr(cuda, "activemask", None)


def named_builtin(obj, table):
    """The builtin *obj* is, by name: an xpu builtin's, else its entry in *table*
    (``{id(object): (object, name)}``, a table of numba.cuda's objects), else None."""
    name = _xpu.builtin_name(obj)
    if name is not None:
        return name
    hit = table.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    return None


def _builtin_name(obj):
    return named_builtin(obj, _cuda_table())


def ndim_complaint(b, node):
    """Why the call *node* of the builtin *b* (``grid``, ``gridsize`` or ``quad_grid``)
    does not take its ndim, else None: the CPU target (cpu/subst.py) and the python
    target (numquad/simt.py) refuse it with these words."""
    if b in ("grid", "gridsize"):
        if (
            len(node.args) != 1
            or not isinstance(node.args[0], ast.Constant)
            or type(node.args[0].value) is not int
            or node.args[0].value not in (1, 2, 3)
        ):
            got = ", ".join(ast.unparse(a) for a in node.args) or "nothing"
            return f"xpu.{b}(ndim) got {got}; it takes a constant int ndim of 1, 2 or 3"
        return None
    if (
        len(node.args) != 1
        or not isinstance(node.args[0], ast.Constant)
        or node.args[0].value != 2
        or isinstance(node.args[0].value, bool)
        or node.keywords
    ):
        got = ", ".join(ast.unparse(a) for a in node.args)
        return (
            f"xpu.quad_grid(ndim) got ndim {got or 'nothing'}; it takes the "
            f"constant 2 (2x2 pixel quads in a 2-D launch)"
        )
    return None


def is_bit_count(node, resolve):
    """Is the call *node* ``x.bit_count()`` of a value (*resolve*, an ``Env.resolve``,
    names no object for ``x.bit_count``)? numba.cuda compiles it as ``cuda.popc(x)``;
    the CPU target (cpu/cudaapi.py) and the python target (numquad/simt.py) do too."""
    f = node.func
    return (
        isinstance(f, ast.Attribute)
        and f.attr == "bit_count"
        and not node.args
        and not node.keywords
        and resolve(f) is MISSING
    )


def local_names(fn):
    a = fn.args
    names = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
    for x in (a.vararg, a.kwarg):
        if x is not None:
            names.add(x.arg)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((al.asname or al.name).split(".")[0] for al in node.names)
    return names


def enum_start(start):
    """``enumerate(t, start)``'s start, as the loops over ``enumerate`` read it (an
    integer, as Numba requires: its overload below refuses another type)."""
    return start


def _overload_enum_start():
    from numba.core import errors, types
    from numba.extending import overload

    @overload(enum_start, target="generic")
    def _typed(start):
        if isinstance(start, types.Integer):
            return lambda start: start
        raise errors.TypingError(
            f"enumerate(iterable, start): start got {start}; Only integers supported as start value in enumerate"
        )


_overload_enum_start()


def seq_item(seq, j):
    """``seq[j]``, as a loop rewritten over a sequence reads its items (an array's
    row or element, a tuple's item)."""
    return seq[j]


def _overload_seq_item():
    from numba.core import errors, types
    from numba.extending import overload

    @overload(seq_item, target="generic", inline="always")
    def _typed(seq, j):
        if isinstance(seq, types.BaseTuple) and len(set(seq.types)) > 1:
            # (Numba's words were "No implementation of function getitem(Tuple(...),
            # int64)", of a subscript the user did not write)
            raise errors.TypingError(
                f"for ... in t: t is {seq}, a tuple of items of different types; a loop iterates a "
                f"tuple whose items have one type, as Numba (and numba.cuda) iterate it: convert "
                f"the items to one type"
            )
        return lambda seq, j: seq[j]


_overload_seq_item()
_PURE_CALLS += (enum_start, seq_item)  # (the same in every lane where their arguments are)

#: The builtins that generated code calls, by names no user local can shadow (a
#: kernel with a local named ``range`` broke the CPU target's lane loops).
BUILTIN_ALIASES = {
    "_nq_range": range,
    "_nq_len": len,
    "_nq_bool": bool,
    "_nq_min": min,
    "_nq_enum_start": enum_start,
    "_nq_seq_item": seq_item,
}


class Env:
    """Name resolution for one function: its globals, closure and locals (the
    analysis here, numquad/_desugar.py and the CPU frontend all resolve names so)."""

    #: the builtin groups whose attributes are builtins too (``threadIdx.x``)
    _GROUP_NAMES = _GROUPS

    def __init__(self, pyfunc, fn, names=None):
        self.globals = pyfunc.__globals__
        self.closure = {}
        if pyfunc.__closure__:
            for name, cell in zip(pyfunc.__code__.co_freevars, pyfunc.__closure__):
                try:
                    self.closure[name] = cell.cell_contents
                except ValueError:  # an empty cell
                    pass
        self.locals = local_names(fn) if names is None else names

    def lookup(self, name):
        if name in BUILTIN_ALIASES:  # generated code's builtins (never a user's name)
            return BUILTIN_ALIASES[name]
        if name in self.locals:
            return MISSING
        if name in self.closure:
            return self.closure[name]
        if name in self.globals:
            return self.globals[name]
        return getattr(_builtins, name, MISSING)

    def resolve(self, node):
        """The Python object an expression like ``a.b.c`` names, else MISSING."""
        if isinstance(node, ast.Name):
            return self.lookup(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if base is MISSING:
                return MISSING
            try:
                return getattr(base, node.attr, MISSING)
            except Exception:  # noqa: BLE001 - a property that fails: unknown
                return MISSING
        return MISSING

    def builtin(self, node):
        """The xpu builtin an expression names ("grid", "threadIdx.x", ...), else None."""
        if not isinstance(node, (ast.Name, ast.Attribute)):
            return None
        obj = self.resolve(node)
        if obj is not MISSING:
            name = self._name_of(obj)
            if name is not None:
                return name
        if isinstance(node, ast.Attribute):
            base = self.builtin(node.value)
            if base in self._GROUP_NAMES:
                return f"{base}.{node.attr}"
        return None

    def _name_of(self, obj):
        """The builtin *obj* is, by name, else None."""
        return _builtin_name(obj)


# ---------------------------------------------------------------------------
# Annotations
# ---------------------------------------------------------------------------


class _Immutable:
    """Annotations travel with deep copies of their nodes, as themselves."""

    def __deepcopy__(self, memo):
        return self


@dataclasses.dataclass(frozen=True)
class CallSite(_Immutable):
    """A call that needs the current mask: ``kind`` "op" (``op`` set), "lane" (a
    call of ``callee``, an ``@xpu.jit`` function that needs a mask) or
    "activemask" (numba.cuda's ``activemask()``, which becomes the mask itself)."""

    kind: str
    op: Optional[_ops.Op] = None
    callee: object = None


@dataclasses.dataclass(frozen=True)
class BranchInfo(_Immutable):
    """An ``if``: ``uniform`` when its test is the same in every lane that
    evaluates it; ``masked`` when its branches hold mask-taking calls, so a
    lane-varying test needs a ballot."""

    uniform: bool
    masked: bool


@dataclasses.dataclass(frozen=True)
class LoopInfo(_Immutable):
    """A ``for``/``while`` loop.

    ``uniform_exit``: every lane that enters leaves at the same iteration (a
    uniform test or range, no per-lane ``break`` and no per-lane ``return``
    inside), so the entry mask is the mask of every iteration. ``uniform_values``:
    values stored inside stay uniform (no per-lane trip count or ``break``).
    ``masked``: the test or body holds mask-taking calls. ``brk``/``cnt``/``ret``:
    it has converted ``break``s, ``continue``s, returns inside. ``form``:
    ``"kept"`` (written as is; a converted ``continue`` only adds a flag) or
    ``"while"`` (``while True`` whose head recomputes the lanes still in it,
    with a ballot when ``masked``).
    """

    uniform_exit: bool
    uniform_values: bool
    masked: bool
    brk: bool
    cnt: bool
    ret: bool
    form: str


# ---------------------------------------------------------------------------
# The analysis
# ---------------------------------------------------------------------------

_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.While)


def _walk(node):
    """ast.walk that does not enter nested functions, lambdas and classes."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if not isinstance(c, _NESTED_SCOPES):
                todo.append(c)


def _walk_stmts(stmts):
    for s in stmts:
        yield from _walk(s)


def _range_args(env, it):
    """The argument nodes of ``range(...)`` (1 to 3, no keywords), else None."""
    if (
        isinstance(it, ast.Call)
        and env.resolve(it.func) is range
        and not it.keywords
        and 1 <= len(it.args) <= 3
        and not any(isinstance(a, ast.Starred) for a in it.args)
    ):
        return it.args
    return None


def literal_unroll_arg(env, it):
    """The tuple node of ``literal_unroll(t)`` (Numba's or numba.cuda's), else None."""
    if not (
        isinstance(it, ast.Call)
        and isinstance(it.func, (ast.Name, ast.Attribute))
        and len(it.args) == 1
        and not it.keywords
    ):
        return None
    obj = env.resolve(it.func)
    if getattr(obj, "__name__", None) == "literal_unroll" and str(getattr(obj, "__module__", "")).startswith("numba"):
        return it.args[0]
    return None


def _constant_sequence(env, it):
    """True for a tuple/list of constants, literal or a global."""
    if isinstance(it, (ast.Tuple, ast.List)):
        return all(isinstance(e, ast.Constant) for e in it.elts)
    if isinstance(it, (ast.Name, ast.Attribute)):
        obj = env.resolve(it)
        return isinstance(obj, tuple) and all(isinstance(v, (int, float, bool, np.generic)) for v in obj)
    return False


_tls = threading.local()
_cache = weakref.WeakKeyDictionary()
_cache_lock = threading.RLock()


def _busy():
    busy = getattr(_tls, "busy", None)
    if busy is None:
        busy = _tls.busy = set()
    return busy


def analyze(dispatcher) -> "Analysis":
    """The :class:`Analysis` of an ``@xpu.jit`` function (computed once, cached)."""
    with _cache_lock:
        a = _cache.get(dispatcher)
        if a is None:
            busy = _busy()
            busy.add(id(dispatcher))
            try:
                a = Analysis(dispatcher)
            finally:
                busy.discard(id(dispatcher))
            _cache[dispatcher] = a
        return a


def needs_mask(dispatcher) -> bool:
    """Does *dispatcher* call a cross-lane op, directly or through lane functions?"""
    if id(dispatcher) in _busy():  # recursion: not supported by the targets anyway
        return False
    return analyze(dispatcher).needs_mask


class Analysis:
    """Where the mask changes in one ``@xpu.jit`` function (see the module doc).

    ``tree`` is a private copy of the function's AST carrying the annotations;
    the accessors take nodes of that tree.
    """

    def __init__(self, dispatcher):
        # no reference to the dispatcher itself: the cache is keyed by it (weakly)
        self._self_id = id(dispatcher)
        self.firstlineno = dispatcher.firstlineno
        self.filename = dispatcher.filename
        self.name = dispatcher.__name__
        self.is_kernel = dispatcher.is_kernel
        self.tree = copy.deepcopy(dispatcher.source_tree)
        # hasattr(M, "x") first, and the side of an ``if`` it rules out (feature detection)
        fold_hasattr(self.tree, dispatcher.py_func)
        self.env = Env(dispatcher.py_func, self.tree)
        for name in sorted(self.env.locals):
            if name.startswith(_RESERVED) and not _desugar.is_temporary(name):
                self.error(f"names starting with {_RESERVED!r} are reserved by numquad; got {name!r}", self.tree)
        self._find_calls()
        self.needs_mask = any(getattr(n, "_nq_call", None) is not None for n in ast.walk(self.tree))
        self.uniform = frozenset()
        self.converted_returns = False
        if self.needs_mask:
            self._check_constructs()
            self._solve()

    # -- accessors ------------------------------------------------------------
    @staticmethod
    def call_site(node) -> Optional[CallSite]:
        return getattr(node, "_nq_call", None)

    @staticmethod
    def branch(node) -> Optional[BranchInfo]:
        return getattr(node, "_nq_if", None)

    @staticmethod
    def loop(node) -> Optional[LoopInfo]:
        return getattr(node, "_nq_loop", None)

    @staticmethod
    def converted(node) -> bool:
        return bool(getattr(node, "_nq_conv", False))

    def error(self, msg, node):
        raise NumquadCompileError(f"{msg} (in {self.name})", self.filename, getattr(node, "lineno", self.firstlineno))

    # -- calls ----------------------------------------------------------------------
    def _find_calls(self):
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Call):
                continue
            obj = self.env.resolve(node.func)
            if obj is MISSING:
                continue
            op = _ops.of_function(obj)
            if op is not None:
                if op.kind != "query":
                    node._nq_call = CallSite("op", op=op)
                else:  # a query takes nothing (numba.cuda: a raw TypeError)
                    complaint = op.check_arity(node.args, {k.arg: k.value for k in node.keywords})[1]
                    if complaint:
                        self.error(complaint, node)
            elif _is_activemask(obj):
                if not node.args and not node.keywords:  # else numba.cuda's own error
                    node._nq_call = CallSite("activemask")
            elif _xpu.is_foreign_device_function(obj) or _xpu.is_jitable(obj) or isinstance(obj, _xpu.Dispatcher):
                # (a numba.cuda or Numba device function runs as its @xpu.jit Dispatcher
                # where it uses ops: numquad/cuda/substitute.py)
                obj = _xpu.as_xpu(obj)
                if id(obj) == self._self_id:
                    continue
                try:
                    callee_needs = needs_mask(obj)
                except NumquadTypeError:  # no source: its own target decides (and says so)
                    callee_needs = False
                if callee_needs and obj.is_kernel:
                    # its masked code starts from its own wave's lanes (_nq_entry_mask)
                    # and takes no mask: it could not run on the caller's lanes
                    self.error(
                        f"{obj.__name__} uses cross-lane ops and returns nothing (a kernel), "
                        f"so the CUDA target cannot call it; make it a lane function by "
                        f"returning a value (e.g. return 0)",
                        node,
                    )
                if callee_needs:
                    node._nq_call = CallSite("lane", callee=obj)

    @staticmethod
    def _has_calls(node_or_stmts):
        nodes = node_or_stmts if isinstance(node_or_stmts, list) else [node_or_stmts]
        return any(getattr(n, "_nq_call", None) is not None for n in _walk_stmts(nodes))

    def _check_constructs(self):
        """Constructs that cannot hold a mask-taking call (the CPU target's rules)."""

        def name(c):
            site = c._nq_call
            return (
                site.op.qualname
                if site.kind == "op"
                else "cuda.activemask()"
                if site.kind == "activemask"
                else f"{site.callee.__name__}()"
            )

        def refuse(node, what):
            for n in _walk(node):
                if getattr(n, "_nq_call", None) is not None:
                    self.error(
                        f"{name(n)} inside {what}: cross-lane ops cannot be masked "
                        f"there; assign the result to a variable in a plain statement "
                        f"first",
                        n,
                    )

        for node in ast.walk(self.tree):
            if node is self.tree:
                continue
            if isinstance(node, _NESTED_SCOPES) or isinstance(
                node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
            ):
                for n in ast.walk(node):
                    if getattr(n, "_nq_call", None) is not None:
                        what = (
                            "a lambda"
                            if isinstance(node, ast.Lambda)
                            else "a comprehension or generator"
                            if not isinstance(node, _NESTED_SCOPES)
                            else f"a nested {type(node).__name__}"
                        )
                        self.error(
                            f"{name(n)} inside {what}: cross-lane ops cannot be masked "
                            f"there; assign the result to a variable in a plain "
                            f"statement first",
                            n,
                        )
            elif isinstance(node, ast.IfExp):
                refuse(node.body, "a conditional expression (x if c else y)")
                refuse(node.orelse, "a conditional expression (x if c else y)")
            elif isinstance(node, ast.BoolOp):
                for v in node.values[1:]:
                    refuse(v, "the right side of and/or")
            elif isinstance(node, ast.Compare):
                for v in node.comparators[1:]:
                    refuse(v, "a later operand of a comparison chain (a < b < c)")
            elif isinstance(node, (ast.Try, ast.With, ast.AsyncWith, ast.AsyncFor)) or type(node).__name__ in (
                "TryStar",
                "Match",
            ):
                for n in _walk(node):
                    if getattr(n, "_nq_call", None) is not None or isinstance(n, (ast.Return, ast.Break, ast.Continue)):
                        self.error(
                            f"a {type(node).__name__.lower()} statement cannot hold "
                            f"cross-lane ops or jumps in a function that uses cross-lane "
                            f"ops",
                            n,
                        )
            elif isinstance(node, ast.Call):
                site = getattr(node, "_nq_call", None)
                if site is not None:
                    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                        self.error(
                            f"{name(node)}: *args/**kwargs are not supported in a call "
                            f"that takes part in cross-lane ops",
                            node,
                        )
        if not self.is_kernel:
            a = self.tree.args
            if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
                self.error(
                    "a lane function that uses cross-lane ops takes plain positional "
                    "parameters (no *args, **kwargs, keyword-only or positional-only)",
                    self.tree,
                )

    # -- uniform expressions ------------------------------------------------------
    def is_uniform(self, e, U=None) -> bool:
        """Is expression *e* the same in every lane that evaluates it, given the
        uniform locals *U* (default: the solved set)?"""
        U = self.uniform if U is None else U
        u = lambda x: self.is_uniform(x, U)  # noqa: E731
        if e is None or isinstance(e, ast.Constant):
            return True
        if isinstance(e, ast.Name):
            if e.id in self.env.locals:
                return e.id in U
            obj = self.env.lookup(e.id)
            return self._uniform_object(obj)
        if isinstance(e, ast.Attribute):
            b = self.env.builtin(e)
            if b is not None:
                return b in UNIFORM_BUILTINS
            obj = self.env.resolve(e)
            if obj is not MISSING:
                return self._uniform_object(obj)
            return u(e.value)
        if isinstance(e, ast.Subscript):
            v = e.value
            shape = isinstance(v, ast.Attribute) and v.attr in ("shape", "strides")
            const = self.env.resolve(v) is not MISSING and self._uniform_object(self.env.resolve(v))
            return (shape or const) and u(v) and u(e.slice)
        if isinstance(e, ast.Index):  # Python < 3.9
            return u(e.value)
        if isinstance(e, ast.Slice):
            return u(e.lower) and u(e.upper) and u(e.step)
        if isinstance(e, (ast.Tuple, ast.List)):
            return all(u(x) for x in e.elts)
        if isinstance(e, ast.BinOp):
            return u(e.left) and u(e.right)
        if isinstance(e, ast.UnaryOp):
            return u(e.operand)
        if isinstance(e, ast.BoolOp):
            return all(u(x) for x in e.values)
        if isinstance(e, ast.Compare):
            return u(e.left) and all(u(c) for c in e.comparators)
        if isinstance(e, ast.IfExp):
            return u(e.test) and u(e.body) and u(e.orelse)
        if isinstance(e, ast.Call):
            if getattr(e, "_nq_call", None) is not None:
                return False
            f = self.env.resolve(e.func)
            if f is MISSING:
                return False
            op = _ops.of_function(f)
            if op is not None:
                return op.query == "width"  # the wave width: a constant
            b = _builtin_name(f)
            if b is not None and b not in _UNIFORM_BUILTIN_CALLS:
                return False
            pure = (
                b is not None
                or any(f is p for p in _PURE_CALLS)
                or (isinstance(f, type) and issubclass(f, np.generic))
                or isinstance(f, np.ufunc)
                or getattr(f, "__module__", None) == "math"
            )
            return pure and all(u(a) for a in e.args) and all(u(k.value) for k in e.keywords)
        return False

    @staticmethod
    def _uniform_object(obj):
        """A global or closure value: a constant unless it is a per-lane builtin."""
        if obj is MISSING:
            return False
        b = _builtin_name(obj)
        if b is not None:
            return b in UNIFORM_BUILTINS
        return _ops.of_function(obj) is None

    # -- the fixpoint ------------------------------------------------------------------
    def _solve(self):
        params = {a.arg for a in self.tree.args.args}
        U = set(self.env.locals)
        if not self.is_kernel:
            U -= params  # a lane function's arguments differ per lane
        conv = set()
        while True:
            self._conv = conv
            self._ok_stores = set()
            self._new_conv = set()
            self._infos = {}
            self._U = U
            ctx = _Ctx(pos_u=True, fn_u=True, loop=None, loop_u=True, after=False)
            self._block(self.tree.body, ctx)
            varying = set()
            for n in _walk_stmts(self.tree.body):
                if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and id(n) not in self._ok_stores:
                    varying.add(n.id)
                elif isinstance(n, ast.ExceptHandler) and n.name:
                    varying.add(n.name)
                elif isinstance(n, (ast.Import, ast.ImportFrom)):
                    varying.update((al.asname or al.name).split(".")[0] for al in n.names)
            U2 = U - varying
            conv2 = conv | self._new_conv
            if U2 == U and conv2 == conv:
                break
            U, conv = U2, conv2
        self.uniform = frozenset(U)
        for n in _walk(self.tree):
            if id(n) in conv:
                n._nq_conv = True
            info = self._infos.get(id(n))
            if isinstance(info, BranchInfo):
                n._nq_if = info
            elif isinstance(info, LoopInfo):
                n._nq_loop = info
        self.converted_returns = any(isinstance(n, ast.Return) and id(n) in conv for n in _walk(self.tree))
        del self._conv, self._ok_stores, self._new_conv, self._infos, self._U

    def _is_conv(self, node, conv):
        return id(node) in conv if conv is not None else bool(getattr(node, "_nq_conv", False))

    def _leaving(self, s, conv=None):
        """The converted escapes inside statement *s* that leave it: a subset of
        {"ret", "brk", "cnt"} (break/continue of the loop whose body holds *s*).
        *conv*: the ids of converted escapes while solving, else the annotations."""
        out = set()

        def walk(node, in_loop):
            if isinstance(node, _NESTED_SCOPES):
                return
            if self._is_conv(node, conv):
                if isinstance(node, ast.Return):
                    out.add("ret")
                elif not in_loop:
                    out.add("brk" if isinstance(node, ast.Break) else "cnt")
            if isinstance(node, _LOOPS):
                for c in ast.iter_child_nodes(node):
                    walk(c, in_loop or c not in node.orelse)
                return
            for c in ast.iter_child_nodes(node):
                walk(c, in_loop)

        walk(s, False)
        return out

    def _own_escapes(self, loop, conv):
        """(converted breaks of *loop*, converted continues of *loop*, converted
        returns inside its test/body)."""
        brk = cnt = ret = False

        def walk(node, own):
            nonlocal brk, cnt, ret
            if isinstance(node, _NESTED_SCOPES):
                return
            if self._is_conv(node, conv):
                if isinstance(node, ast.Return):
                    ret = True
                elif own and isinstance(node, ast.Break):
                    brk = True
                elif own and isinstance(node, ast.Continue):
                    cnt = True
            if isinstance(node, _LOOPS):
                for c in ast.iter_child_nodes(node):
                    walk(c, own and c in node.orelse)
                return
            for c in ast.iter_child_nodes(node):
                walk(c, own)

        for s in loop.body:
            walk(s, True)
        return brk, cnt, ret

    def _block(self, stmts, ctx):
        for j, s in enumerate(stmts):
            after = ctx.after or self._has_calls(stmts[j + 1 :])
            self._stmt(s, ctx, after)
            kinds = self._leaving(s, self._conv)
            if "ret" in kinds:
                ctx = dataclasses.replace(ctx, fn_u=False, loop_u=False)
            if "brk" in kinds or "cnt" in kinds:
                ctx = dataclasses.replace(ctx, pos_u=False, fn_u=False, loop_u=False)

    def _store(self, target, ok):
        """Record the Name stores in *target*; *ok*: they store a uniform value."""
        if isinstance(target, ast.Name):
            if ok:
                self._ok_stores.add(id(target))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._store(t, ok)
        elif isinstance(target, ast.Starred):
            self._store(target.value, False)

    def _stmt(self, s, ctx, after):
        U = self._U
        if isinstance(s, ast.Return):
            if not ctx.fn_u and after:
                self._new_conv.add(id(s))
            return
        if isinstance(s, (ast.Break, ast.Continue)):
            L = ctx.loop
            # a loop with an else clause and a jump form knows "no break" only from a flag
            if L is not None and ((self._has_calls(L) and not ctx.loop_u) or (isinstance(s, ast.Break) and L.orelse)):
                self._new_conv.add(id(s))
            return
        if isinstance(s, ast.If):
            tu = self.is_uniform(s.test, U)
            inner = dataclasses.replace(
                ctx, pos_u=ctx.pos_u and tu, fn_u=ctx.fn_u and tu, loop_u=ctx.loop_u and tu, after=after
            )
            self._block(s.body, inner)
            self._block(s.orelse, inner)
            self._infos[id(s)] = BranchInfo(uniform=tu, masked=self._has_calls(s.body + s.orelse))
            return
        if isinstance(s, _LOOPS):
            self._loop(s, ctx, after)
            return
        if isinstance(s, ast.Assign):
            ok = ctx.pos_u and self.is_uniform(s.value, U)
            for t in s.targets:
                self._store(t, ok)
            return
        if isinstance(s, (ast.AugAssign, ast.AnnAssign)):
            if s.value is not None:
                self._store(s.target, ctx.pos_u and self.is_uniform(s.value, U))
            return
        # other compound statements: their bodies are lane-varying (conservative)
        inner = dataclasses.replace(ctx, pos_u=False, fn_u=False, loop_u=False, after=after)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                self._block(block, inner)
        for h in getattr(s, "handlers", []) or []:
            self._block(h.body, inner)

    def _loop(self, s, ctx, after):
        U = self._U
        env = self.env
        if isinstance(s, ast.While):
            cu = self.is_uniform(s.test, U)
            target_u = False
        else:
            rargs = _range_args(env, s.iter)
            if rargs is not None:
                cu = all(self.is_uniform(a, U) for a in rargs)
                target_u = cu
            elif _constant_sequence(env, s.iter):
                cu = target_u = True
            elif literal_unroll_arg(env, s.iter) is not None:
                # written out per element at compile time: the same trip count in every
                # lane, and the loop must stay a ``for`` (a heterogeneous tuple has no
                # runtime index)
                cu, target_u = True, self.is_uniform(literal_unroll_arg(env, s.iter), U)
            else:
                cu = self.is_uniform(s.iter, U)
                target_u = False
        brk, cnt, ret = self._own_escapes(s, self._conv)
        masked = self._has_calls(s.body) or (isinstance(s, ast.While) and self._has_calls(s.test))
        uniform_exit = cu and not brk and not ret
        uniform_values = cu and not brk
        if isinstance(s, ast.For):
            self._store(s.target, ctx.pos_u and target_u and uniform_values)
        body_ctx = _Ctx(
            pos_u=ctx.pos_u and uniform_values,
            fn_u=ctx.fn_u and uniform_exit,
            loop=s,
            loop_u=True,
            after=after or self._has_calls(s),
        )
        self._block(s.body, body_ctx)
        else_ctx = dataclasses.replace(
            ctx,
            pos_u=ctx.pos_u and not brk,
            fn_u=ctx.fn_u and not (brk or ret),
            loop_u=ctx.loop_u and not (brk or ret),
            after=after,
        )
        self._block(s.orelse, else_ctx)
        if uniform_exit:
            form = "kept"
        elif isinstance(s, ast.For) and literal_unroll_arg(env, s.iter) is not None and masked:
            self.error(
                f"{'break' if brk else 'return'} in a literal_unroll loop around "
                "cross-lane ops is not supported (a heterogeneous tuple has no runtime "
                "index); use an if around the rest of the body",
                s,
            )
        elif masked or brk or ret:
            form = "while"
        else:
            form = "kept"  # per-lane trip count, nothing inside needs a mask
        self._infos[id(s)] = LoopInfo(
            uniform_exit=uniform_exit,
            uniform_values=uniform_values,
            masked=masked,
            brk=brk,
            cnt=cnt,
            ret=ret,
            form=form,
        )


@dataclasses.dataclass(frozen=True)
class _Ctx:
    pos_u: bool  # a value stored here is the same in every lane that stores it
    fn_u: bool  # every live lane of the function's mask is here (a return may stay real)
    loop: object  # the innermost enclosing loop
    loop_u: bool  # every lane of the loop's current iteration is here (break/continue may stay real)
    after: bool  # a mask-taking call may run after this point (for lanes that leave)


# ---------------------------------------------------------------------------
# The transform
# ---------------------------------------------------------------------------


def masked_function(dispatcher) -> ast.FunctionDef:
    """The function of *dispatcher* with the mask threaded through its control
    flow (see the module doc); a new tree with the user's line numbers. For a
    function that needs no mask, an unchanged copy of its tree."""
    a = analyze(dispatcher)
    if not a.needs_mask:
        return copy.deepcopy(a.tree)
    return _Emitter(a).function()


# ---------------------------------------------------------------------------
# hasattr of a module or class
# ---------------------------------------------------------------------------


def hasattr_constant(env, node):
    """``hasattr(M, "name")`` (*node*, an ``ast.Call``) with M a module or class the
    function reads as a global or closure variable (``Wave``, ``cuda``, ``math``):
    Python's answer on the user's object, as an ``ast.Constant``; else None.

    Neither compiler types the call from the user's object: the CPU target's Numba
    gave False for ``hasattr(Wave, "prefixSum")``, and numba.cuda (which sees the
    substituted globals of numquad/cuda/substitute.py) raised an AttributeError from
    its typing for a missing name. Both targets fold it here first."""
    if len(node.args) != 2 or node.keywords or env.resolve(node.func) is not hasattr:
        return None
    obj_node, name = node.args
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
        return None
    if not isinstance(obj_node, (ast.Name, ast.Attribute)):
        return None
    obj = env.resolve(obj_node)
    if obj is MISSING or not isinstance(obj, (_pytypes.ModuleType, type)):
        return None
    return ast.copy_location(ast.Constant(hasattr(obj, name.value)), node)


class _HasattrFolder(ast.NodeTransformer):
    def __init__(self, env):
        self.env = env
        self.changed = False

    def visit_Call(self, node):
        self.generic_visit(node)
        folded = hasattr_constant(self.env, node)
        if folded is None:
            return node
        self.changed = True
        return folded

    def visit_If(self, node):
        # ``if hasattr(Wave, "x"): Wave.x(v)``: the side not taken goes, so that a
        # name it reads and the module lacks is never typed (feature detection)
        self.generic_visit(node)
        if isinstance(node.test, ast.Constant) and isinstance(node.test.value, bool) and self.changed:
            taken = node.body if node.test.value else node.orelse
            return taken or ast.copy_location(ast.Pass(), node)
        return node


def fold_hasattr(tree, pyfunc) -> bool:
    """Replace, in place, every ``hasattr(M, "name")`` of *tree* (the function
    *pyfunc*'s) that :func:`hasattr_constant` answers by its constant; True when
    something changed."""
    folder = _HasattrFolder(Env(pyfunc, tree))
    folder.visit(tree)
    return folder.changed


#: The name ``literal_unroll`` loops call after :func:`fold_literal_unroll`.
LITERAL_UNROLL = "_nq_literal_unroll"


def fold_literal_unroll(tree, pyfunc) -> bool:
    """Make every ``for x in M.literal_unroll(t):`` of *tree* (Numba's or
    numba.cuda's, by any name) call :data:`LITERAL_UNROLL`, a plain global:
    numba-cuda unrolls only a loop whose ``literal_unroll`` is a global or free
    variable of its own (an attribute ``cuda.literal_unroll`` or Numba's object
    left a heterogeneous tuple to ``getiter``, a typing error), where the CPU and
    python targets unroll them all. True when something changed."""
    env = Env(pyfunc, tree)
    changed = False
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and literal_unroll_arg(env, node.iter) is not None:
            if not (isinstance(node.iter.func, ast.Name) and node.iter.func.id == LITERAL_UNROLL):
                node.iter.func = ast.copy_location(ast.Name(LITERAL_UNROLL, ast.Load()), node.iter.func)
                changed = True
    return changed


# ---------------------------------------------------------------------------
# Constant array shapes
# ---------------------------------------------------------------------------

_SHAPED = ("shared.array", "local.array")
# (an array shape is integers: no true division)
_FOLD_OPS = {k: f for k, f in _power.BINARY_OPS.items() if k is not ast.Div}


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def shape_value(env, consts, node):
    """The int or tuple of ints *node* stands for at compile time, else None:
    literals, names bound to them (a local assigned once at the top level, a
    global, a closure variable, a module attribute) and arithmetic on those."""
    if isinstance(node, ast.Constant):
        return int(node.value) if _is_int(node.value) else None
    if isinstance(node, ast.Tuple):
        vals = [shape_value(env, consts, e) for e in node.elts]
        return tuple(vals) if all(isinstance(v, int) for v in vals) else None
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, (ast.Name, ast.Attribute)):
        obj = env.resolve(node)
        if _is_int(obj):
            return int(obj)
        if isinstance(obj, tuple) and all(_is_int(v) for v in obj):
            return tuple(int(v) for v in obj)
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = shape_value(env, consts, node.operand)
        return (-v if isinstance(node.op, ast.USub) else v) if isinstance(v, int) else None
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLD_OPS:
        a = shape_value(env, consts, node.left)
        b = shape_value(env, consts, node.right)
        if isinstance(a, int) and isinstance(b, int):
            try:
                return _FOLD_OPS[type(node.op)](a, b)
            except (ZeroDivisionError, ValueError, OverflowError):
                return None
    return None


def _is_literal_shape(node):
    if isinstance(node, ast.Constant):
        return _is_int(node.value)
    return isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) and _is_int(e.value) for e in node.elts)


def fold_array_shapes(tree, pyfunc) -> bool:
    """Write the shape of every ``shared.array``/``local.array`` call of *tree*
    (xpu's or numba.cuda's spelling) that is a compile-time constant but not a
    literal (``TPB * 2``, a global tuple, ``config.TPB``, a closure variable, a
    local ``N = 16``) as that literal, in place; numba.cuda takes only literals and
    global names there. True when something changed. The CPU target folds the
    same forms in its frontend (numquad/cpu/cudaapi.py, ``constant_shape``)."""
    env = Env(pyfunc, tree)
    stores = {}
    for n in _walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
    params = {a.arg for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs}
    consts = {}
    for s in tree.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            name = s.targets[0].id
            if stores.get(name) == 1 and name not in params:
                v = shape_value(env, consts, s.value)
                if v is not None:
                    consts[name] = v
    changed = False
    for n in _walk(tree):
        if not (isinstance(n, ast.Call) and env.builtin(n.func) in _SHAPED):
            continue
        slots = [(n.args, 0)] if n.args else []
        slots += [(None, k) for k in n.keywords if k.arg == "shape"]
        for container, key in slots:
            node = container[key] if container is not None else key.value
            if _is_literal_shape(node):
                continue
            v = shape_value(env, consts, node)
            if v is None:
                continue
            lit = ast.copy_location(
                ast.Constant(v) if isinstance(v, int) else ast.Tuple([ast.Constant(x) for x in v], ast.Load()), node
            )
            ast.fix_missing_locations(lit)
            if container is not None:
                container[key] = lit
            else:
                key.value = lit
            changed = True
    return changed


def _literal_shape(node):
    """The dims of a literal int or tuple-of-ints shape node, else None."""
    elts = node.elts if isinstance(node, ast.Tuple) else [node]
    if elts and all(isinstance(e, ast.Constant) and _is_int(e.value) for e in elts):
        return tuple(int(e.value) for e in elts)
    return None


def _allocation_dtype(obj):
    """The NumPy dtype an allocation's dtype object names (a NumPy type or dtype, a
    name, a Numba type), else None."""
    try:
        from numba.core import types as _nbt
        from numba.np.numpy_support import as_dtype

        if isinstance(obj, _nbt.Type):
            return as_dtype(obj)
    except Exception:  # noqa: BLE001 - a Numba type NumPy has no dtype for
        return None
    try:
        return np.dtype(obj)
    except (TypeError, ValueError):
        pass
    cuda_support = sys.modules.get("numba.cuda.np.numpy_support")
    try:
        return cuda_support.as_dtype(obj) if cuda_support is not None else None
    except Exception:  # noqa: BLE001 - not a type numba.cuda has a dtype for
        return None


def _is_numba_type(obj):
    nbtypes = sys.modules.get("numba.core.types")
    return nbtypes is not None and isinstance(obj, nbtypes.Type)


def _never_a_shape(node, resolve, missing):
    """Is *node* (a shape that is not a literal) one no compiler takes: a list, a
    constant that is not an int, a local (runtime) name, or a tuple holding one?"""
    if isinstance(node, ast.Tuple):
        return any(_never_a_shape(e, resolve, missing) for e in node.elts)
    if isinstance(node, ast.Constant):
        return not _is_int(node.value)
    if isinstance(node, ast.Name):
        return resolve(node) is missing
    return isinstance(node, ast.List)


def python_type_dtype(what, obj):
    """The complaint for Python's ``float``/``int``/``bool``/``complex`` as the dtype of
    the allocation *what*, else None: NumPy reads them as dtypes, numba.cuda does not
    ("No implementation of function shared.array ... array(Literal[int](64),
    Function(<class 'float'>))"), so every target refuses them alike."""
    if not any(obj is t for t in (float, int, bool, complex)):
        return None
    best = {
        float: "np.float64 (or numba.float64)",
        int: "np.int64 (or numba.int64)",
        bool: "np.bool_ (or numba.boolean)",
        complex: "np.complex128 (or numba.complex128)",
    }[obj]
    return f"{what}: dtype {obj.__name__} is Python's type, which numba.cuda does not take as a dtype; use {best}"


def alignment_complaint(v):
    """What numba.cuda says of the int *v* given as a shared/local array's
    ``alignment=`` (its words, numba-cuda's cudaimpl.py: positive, a power of 2, a
    multiple of the pointer size, 8), or None where it takes it. Every target raises
    it as a ValueError, as numba.cuda does."""
    if v <= 0:
        return "Alignment must be positive"
    if v & (v - 1):
        return "Alignment must be a power of 2"
    if v % 8:
        return "Alignment must be a multiple of 8"
    return None


def allocation_complaint(builtin, call, resolve, missing=MISSING, lenient=False):
    """What is wrong with *call*, a ``shared.array``/``local.array`` call (*builtin*),
    in the CPU target's words (numquad/cpu/allocations.py, ``_allocation``), or None.
    Its shape must be a literal by now (:func:`fold_array_shapes` folds the constant
    forms); *resolve* maps a dtype's name node to its object (*missing* where none).
    For the targets whose compiler would take a list or float shape, or fail inside
    NumPy, Numba or numba.cuda on a bad one or a bad dtype. *lenient*: what
    numba.cuda may take is left to it: a shape expression that is not a list, a
    non-int constant or a local name (``SHAPE[0]``), a dtype that is neither a name
    nor a constant (``a.dtype``), a Numba type without a NumPy dtype (an extension
    type)."""
    kind = builtin.split(".")[0]
    what = f"xpu.{kind}.array(shape, dtype)"
    kw = {k.arg: k.value for k in call.keywords}
    extra = sorted(str(k) for k in kw if k not in ("shape", "dtype", "alignment"))
    if extra or len(call.args) > 3:
        got = f"keyword argument(s) {', '.join(extra)}" if extra else f"{len(call.args)} arguments"
        return f"{what} takes a shape, a dtype and an alignment; got {got}"
    shape = call.args[0] if call.args else kw.get("shape")
    dtype = call.args[1] if len(call.args) > 1 else kw.get("dtype")
    if shape is None or dtype is None:
        return f"{what} needs a shape and a dtype"
    dims = _literal_shape(shape)
    dynamic = kind == "shared" and dims == (0,)
    if dims is None and lenient and not _never_a_shape(shape, resolve, missing):
        return None
    if dims is None or (not dynamic and any(d < 1 for d in dims)):
        return (
            f"{what}: the shape must be a constant positive int or tuple of ints (a literal, "
            f"a global, closure or module name, a local assigned once, or arithmetic on "
            f"those); got {ast.unparse(shape)}"
        )
    obj = (
        resolve(dtype)
        if isinstance(dtype, (ast.Name, ast.Attribute))
        else (dtype.value if isinstance(dtype, ast.Constant) else missing)
    )
    if obj is missing and lenient and not isinstance(dtype, (ast.Name, ast.Constant)):
        return None
    if (
        obj is missing
        and isinstance(dtype, ast.Attribute)
        and dtype.attr == "dtype"
        and isinstance(dtype.value, ast.Name)
    ):
        return None  # ``dtype=ary.dtype``: an argument's, known at the compile
    python_type = python_type_dtype(what, obj)
    if python_type:
        return python_type
    dt = None if obj is missing or obj is None else _allocation_dtype(obj)
    if dt is None and lenient and _is_numba_type(obj):
        return None
    if dt is None or not (dt.kind in "biufc" or dt.fields):
        # a string NumPy does not know: numba.cuda's words for it (as cpu/allocations.py)
        bad = (
            f"Invalid NumPy dtype specified: '{obj}'"
            if isinstance(obj, str) and dt is None
            else f"unsupported dtype {ast.unparse(dtype)}"
        )
        return f"{what}: {bad}; it takes a bool, integer, float or complex NumPy/Numba type, or a record dtype"
    return None


def _name(n, store=False):
    return ast.Name(n, ast.Store() if store else ast.Load())


def _assign(name, value):
    return ast.Assign(targets=[_name(name, True)], value=value)


def _call(fname, *args):
    return ast.Call(func=_name(fname), args=list(args), keywords=[])


def _not_any(flags):
    """``not f1 and not f2 ...`` (True for no flags)."""
    if not flags:
        return ast.Constant(True)
    terms = [ast.UnaryOp(op=ast.Not(), operand=_name(f)) for f in flags]
    return terms[0] if len(terms) == 1 else ast.BoolOp(op=ast.And(), values=terms)


def _reads_mask(stmts):
    return any(isinstance(n, ast.Name) and n.id == MASK and isinstance(n.ctx, ast.Load) for n in _walk_stmts(stmts))


def _located(stmts, where):
    for s in stmts:
        for n in ast.walk(s):
            if "lineno" in n._attributes and not hasattr(n, "lineno"):
                ast.copy_location(n, where)
    for s in stmts:
        ast.fix_missing_locations(s)
    return stmts


@dataclasses.dataclass(frozen=True)
class _ECtx:
    brk: Optional[str] = None  # flag names of the innermost loop
    cnt: Optional[str] = None


class _Emitter:
    def __init__(self, analysis):
        self.a = analysis
        self._count = itertools.count()
        # names already in the function (numquad/_desugar.py's temporaries among
        # them): every name made here must differ from all of them
        self._taken = {n.id for n in ast.walk(analysis.tree) if isinstance(n, ast.Name)}

    def _k(self, *stems):
        """A number K such that no ``_nq_<stem>K`` is a name of the function."""
        while True:
            k = next(self._count)
            if not any(f"{_RESERVED}{s}{k}" in self._taken for s in stems):
                return k

    def fresh(self, stem):
        return f"{_RESERVED}{stem}{self._k(stem)}"

    # -- the function -----------------------------------------------------------
    def function(self):
        a = self.a
        fn = a.tree
        new = copy.copy(fn)
        new.args = copy.deepcopy(fn.args)
        body = list(fn.body)
        doc = []
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            doc = [copy.deepcopy(body.pop(0))]
        first = body[0] if body else fn
        prologue = []
        if a.is_kernel:
            prologue.append(_assign(MASK, _call(ENTRY_MASK)))
        else:
            new.args.args.append(ast.arg(arg=MASK))
            if new.args.defaults:
                new.args.defaults.append(ast.Constant(0xFFFFFFFF))
        if a.converted_returns:
            prologue.append(_assign(_RET, ast.Constant(False)))
        out = self.block(body, _ECtx())
        epilogue = []
        if a.converted_returns and not a.is_kernel:
            last = fn.body[-1] if fn.body else fn
            epilogue = _located([ast.Return(value=_name(_RES))], last)
        new.body = doc + _located(prologue, first) + out + epilogue
        if not new.body:
            new.body = [ast.Pass()]
        new.decorator_list = []
        _located([new], fn)
        return new

    # -- expressions ------------------------------------------------------------------
    def expr(self, e):
        """A copy of expression *e* whose mask-taking calls pass the mask."""
        if e is None:
            return None
        e = copy.deepcopy(e)
        return _CallMasker(self.a).visit(e)

    # -- blocks -------------------------------------------------------------------------
    def block(self, stmts, ctx):
        """A statement list; after a statement that may set flags, the rest runs
        under ``if not (flags):`` (one guard per run of statements)."""
        out, seg, flags, start = [], [], [], None
        for s in stmts:
            start = start or s
            seg.extend(self.stmt(s, ctx))
            kinds = self.a._leaving(s)
            if not kinds:
                continue
            out.extend(self.guard(flags, seg, start))
            seg, start = [], None
            for k in ("brk", "cnt", "ret"):
                if k in kinds:
                    f = {"brk": ctx.brk, "cnt": ctx.cnt, "ret": _RET}[k]
                    if f is not None and f not in flags:
                        flags.append(f)
            if isinstance(s, (ast.Return, ast.Break, ast.Continue)):
                return out  # the rest of the block is dead code
        out.extend(self.guard(flags, seg, start))
        return out

    def guard(self, flags, seg, where):
        """*seg* for the lanes that set none of *flags*."""
        if not flags or not seg:
            return seg
        return self.branch(_not_any(flags), seg, [], uniform=False, where=where)

    def branch(self, test, body, orelse, uniform, where):
        """``if test: body else: orelse`` (already transformed), with a ballot when
        the test is lane-varying and a branch reads the mask."""
        if uniform or not (_reads_mask(body) or _reads_mask(orelse)):
            return _located([ast.If(test=test, body=body or [ast.Pass()], orelse=orelse)], where)
        k = self._k("c", "b", "m")
        c, b, m = f"_nq_c{k}", f"_nq_b{k}", f"_nq_m{k}"
        then = [_assign(MASK, _name(b))] + body
        els = list(orelse)
        if _reads_mask(orelse):
            els = [_assign(MASK, _call(ANDNOT, _name(m), _name(b)))] + els
        stmts = [
            _assign(c, _call("_nq_bool", test)),
            _assign(b, _call(BALLOT, _name(MASK), _name(c))),
            _assign(m, _name(MASK)),
            ast.If(test=_name(c), body=then, orelse=els),
            _assign(MASK, _name(m)),
        ]
        return _located(stmts, where)

    # -- statements ---------------------------------------------------------------------
    def stmt(self, s, ctx):
        a = self.a
        if isinstance(s, ast.Return):
            if not a.converted(s):
                return _located([ast.Return(value=self.expr(s.value))], s)
            out = []
            if not a.is_kernel:
                value = self.expr(s.value) if s.value is not None else ast.Constant(None)
                out.append(_assign(_RES, value))
            elif s.value is not None:
                out.append(ast.Expr(value=self.expr(s.value)))
            out.append(_assign(_RET, ast.Constant(True)))
            return _located(out, s)
        if isinstance(s, (ast.Break, ast.Continue)):
            if not a.converted(s):
                return [copy.copy(s)]
            flag = ctx.brk if isinstance(s, ast.Break) else ctx.cnt
            return _located([_assign(flag, ast.Constant(True))], s)
        if isinstance(s, ast.If):
            info = a.branch(s)
            body = self.block(s.body, ctx)
            orelse = self.block(s.orelse, ctx)
            return self.branch(self.expr(s.test), body, orelse, uniform=info.uniform, where=s)
        if isinstance(s, _LOOPS):
            info = a.loop(s)
            if info.form == "while":
                return self.while_form(s, info, ctx)
            return self.kept_loop(s, info, ctx)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return [copy.deepcopy(s)]
        return [_StmtMasker(self.a).visit(copy.deepcopy(s))]

    def kept_loop(self, s, info, ctx):
        k = self._k("cnt")
        inner = _ECtx(brk=None, cnt=f"_nq_cnt{k}" if info.cnt else None)
        body = self.block(s.body, inner)
        if info.cnt:
            body = _located([_assign(inner.cnt, ast.Constant(False))], s) + body
        orelse = self.block(s.orelse, ctx)
        new = copy.copy(s)
        if isinstance(s, ast.For):
            new.target = copy.deepcopy(s.target)
            new.iter = self.expr(s.iter)
        else:
            new.test = self.expr(s.test)
        new.body = body or [ast.Pass()]
        new.orelse = orelse
        return _located([new], s)

    def while_form(self, s, info, ctx):
        a = self.a
        k = self._k("brk", "cnt", "i", "e", "s", "n", "q", "c", "a", "m")
        inner = _ECtx(brk=f"_nq_brk{k}" if info.brk else None, cnt=f"_nq_cnt{k}" if info.cnt else None)
        pre, head, bind = [], [], []
        if inner.brk:
            pre.append(_assign(inner.brk, ast.Constant(False)))
        if isinstance(s, ast.While):
            cond = self.expr(s.test)
        else:
            i = f"_nq_i{k}"
            rargs = _range_args(a.env, s.iter)
            if rargs is not None:
                e_, st = f"_nq_e{k}", f"_nq_s{k}"
                rargs = [self.expr(x) for x in rargs]
                start, stop, step = (
                    (ast.Constant(0), rargs[0], ast.Constant(1))
                    if len(rargs) == 1
                    else (rargs[0], rargs[1], rargs[2] if len(rargs) == 3 else ast.Constant(1))
                )
                pre += [_assign(i, start), _assign(e_, stop), _assign(st, step)]
                const = _constant_int(step)
                if const == 0:
                    a.error("range() step must not be zero", s)
                up = ast.Compare(left=_name(i), ops=[ast.Lt()], comparators=[_name(e_)])
                down = ast.Compare(left=_name(i), ops=[ast.Gt()], comparators=[_name(e_)])
                if const is not None:
                    cond = up if const > 0 else down
                else:
                    zero = ast.Constant(0)
                    cond = ast.BoolOp(
                        op=ast.Or(),
                        values=[
                            ast.BoolOp(
                                op=ast.And(),
                                values=[ast.Compare(left=_name(st), ops=[ast.Gt()], comparators=[zero]), up],
                            ),
                            ast.BoolOp(
                                op=ast.And(),
                                values=[ast.Compare(left=_name(st), ops=[ast.Lt()], comparators=[zero]), down],
                            ),
                        ],
                    )
                bind = [
                    ast.Assign(targets=[copy.deepcopy(s.target)], value=_name(i)),
                    ast.AugAssign(target=_name(i, True), op=ast.Add(), value=_name(st)),
                ]
            else:
                # a sequence (a tuple, an array) by index; ``enumerate(t[, start])`` and
                # ``zip(t, u, ...)`` as the index and the items of sequences, each
                # argument evaluated once before the loop, as Python does
                q, n = f"_nq_q{k}", f"_nq_n{k}"
                it, start = s.iter, None
                fn = a.env.resolve(it.func) if isinstance(it, ast.Call) and not it.keywords and it.args else None
                zipped = False  # enumerate(zip(t, u)): (j, (t[j], u[j]))
                if fn is enumerate and len(it.args) <= 2:
                    seqs = [it.args[0]]
                    arg = it.args[0]
                    if isinstance(arg, ast.Call) and not arg.keywords and arg.args:
                        if a.env.resolve(arg.func) is zip:
                            seqs, zipped = list(arg.args), True
                    start = it.args[1] if len(it.args) == 2 else ast.Constant(0)
                elif fn is zip:
                    seqs = list(it.args)
                else:
                    seqs, fn = [it], None
                qs = [q] + [f"{q}_{j}" for j in range(1, len(seqs))]
                pre += [_assign(qj, self.expr(e)) for qj, e in zip(qs, seqs)]
                length = _call("_nq_len", _name(q))
                for qj in qs[1:]:
                    length = _call("_nq_min", length, _call("_nq_len", _name(qj)))
                if start is not None:
                    pre.append(_assign(f"{q}_s", _call("_nq_enum_start", self.expr(start))))
                pre += [_assign(n, length), _assign(i, ast.Constant(0))]
                cond = ast.Compare(left=_name(i), ops=[ast.Lt()], comparators=[_name(n)])
                items = [_call("_nq_seq_item", _name(qj), _name(i)) for qj in qs]
                if zipped:
                    items = [ast.Tuple(elts=items, ctx=ast.Load())]
                if start is not None:
                    items.insert(0, ast.BinOp(left=_name(f"{q}_s"), op=ast.Add(), right=_name(i)))
                value = items[0] if fn is None else ast.Tuple(elts=items, ctx=ast.Load())
                bind = [
                    ast.Assign(targets=[copy.deepcopy(s.target)], value=value),
                    ast.AugAssign(target=_name(i, True), op=ast.Add(), value=ast.Constant(1)),
                ]
        body = self.block(s.body, inner)
        cond_reads = _reads_mask([ast.Expr(value=cond)])
        masked = _reads_mask(body) or cond_reads
        flags = [f for f in (inner.brk, _RET if info.ret else None) if f]

        def exit_(c):
            return ast.If(test=ast.UnaryOp(op=ast.Not(), operand=_name(c)), body=[ast.Break()], orelse=[])

        if inner.cnt:
            head.append(_assign(inner.cnt, ast.Constant(False)))
        c = f"_nq_c{k}"
        if flags and cond_reads:
            live = f"_nq_a{k}"
            head.append(_assign(live, _not_any(flags)))
            head.append(_assign(MASK, _call(BALLOT, _name(MASK), _name(live))))
            head.append(exit_(live))
            head.append(_assign(c, _call("_nq_bool", cond)))
        elif flags:
            head.append(_assign(c, ast.BoolOp(op=ast.And(), values=[_not_any(flags), _call("_nq_bool", cond)])))
        else:
            head.append(_assign(c, _call("_nq_bool", cond)))
        if masked:
            head.append(_assign(MASK, _call(BALLOT, _name(MASK), _name(c))))
        head.append(exit_(c))
        loop = ast.While(test=ast.Constant(True), body=head + bind + body, orelse=[])
        out = list(pre)
        if masked:
            m = f"_nq_m{k}"
            out += [_assign(m, _name(MASK)), loop, _assign(MASK, _name(m))]
        else:
            out.append(loop)
        _located(out, s)
        if s.orelse:
            orelse = self.block(s.orelse, ctx)
            else_flags = [f for f in (inner.brk, _RET if info.ret else None) if f]
            if else_flags:
                out += self.branch(_not_any(else_flags), orelse, [], uniform=False, where=s.orelse[0])
            else:
                out += orelse
        return out


def _constant_int(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _constant_int(node.operand)
        return None if v is None else -v
    return None


class _CallMasker(ast.NodeTransformer):
    """Adds the mask to every mask-taking call of an (already copied) expression."""

    def __init__(self, analysis):
        self.a = analysis

    def visit_Call(self, node):
        self.generic_visit(node)
        site = getattr(node, "_nq_call", None)
        if site is None:
            return node
        if site.kind == "activemask":
            return ast.copy_location(_name(MASK), node)
        if site.kind == "op":
            args, complaint = site.op.check_arity(node.args, {k.arg: k.value for k in node.keywords})
            if complaint:
                self.a.error(complaint, node)
            new = ast.Call(func=node.func, args=args + [_name(MASK)], keywords=[])
        else:
            new = ast.Call(
                func=node.func,
                args=list(node.args),
                keywords=list(node.keywords) + [ast.keyword(arg=MASK, value=_name(MASK))],
            )
        return ast.fix_missing_locations(ast.copy_location(new, node))


class _StmtMasker(_CallMasker):
    """The same for a whole simple statement."""
