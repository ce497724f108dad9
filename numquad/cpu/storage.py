"""Analyses over wave items that decide the block function's storage.

Which names a wave item reads and stores (:func:`item_names`, :func:`walk_items`),
which are stored in loops, whether a variable is stored before every read on every
path (:func:`defined_before_reads`: then it needs no lane array across items), what
Numba reads for a variable never assigned (:func:`unassigned_leaves`,
:func:`zero_expr`), which expressions are pure and can be recomputed
(:func:`repeatable`), and the clean-ups of a region's statements: repeated
assignments and dead lane-array loads dropped, thread ids recomputed from the lane
(:func:`drop_repeats`, :func:`drop_dead_loads`, :func:`recompute_tids`).
numquad/cpu/codegen.py decides with them; none of them emits a block function.
"""

from __future__ import annotations

import ast

from numba.core import types
from numba.np.numpy_support import as_dtype

from . import names as _names
from . import waveitems as _wi
from .astbuild import L, SCALAR_NAMES as _SCALAR_NAMES, call as _call, const as _const, name as _name

__all__ = [
    "item_names",
    "walk_items",
    "assigns_in",
    "stored_in_loops",
    "has_jump",
    "tuple_leaves",
    "first_is_plain_store",
    "unassigned_leaves",
    "zero_expr",
    "defined_before_reads",
    "PURE_HELPERS",
    "PURE_BINOPS",
    "PURE_CMPOPS",
    "repeatable",
    "by_positive_constant",
    "tid_of_lane",
    "recompute_tids",
    "drop_repeats",
    "drop_dead_loads",
]


def item_names(item):
    """(names read or written, names stored) by one wave item, not recursing."""
    if isinstance(item, _wi.Region):
        allnames = set()
        stores = set()
        for s in item.stmts:
            for n in ast.walk(s):
                if isinstance(n, ast.Name):
                    allnames.add(n.id)
                    if isinstance(n.ctx, ast.Store):
                        stores.add(n.id)
        return allnames, stores
    if isinstance(item, _wi.Uniform):
        return set(_names.names_in(item.stmt)), set(_names.names_in(item.stmt, ast.Store))
    if isinstance(item, _wi.XLCall):
        reads = {a.id for a in item.args if isinstance(a, ast.Name)} | ({item.check[1]} if item.check else set())
        return {item.target} | reads, {item.target}
    if isinstance(item, _wi.If):
        return {item.cond}, set()
    if isinstance(item, _wi.UniformIf):
        return set(_names.names_in(item.test)), set()
    if isinstance(item, _wi.Loop):
        if item.test is not None:
            return set(_names.names_in(item.test)), set()
        if item.uniform:
            names = {item.uniform[0]}
            for a in item.uniform[1]:
                names |= set(_names.names_in(a))
            return names, {item.uniform[0]}
        return set(), set()
    if isinstance(item, _wi.Jump):
        return (set(_names.names_in(item.value)) if item.value is not None else set()), set()
    if isinstance(item, _wi.Barrier):
        return set(), set()
    if isinstance(item, _wi.BarrierReduce):
        return {item.target, item.arg}, {item.target}
    raise AssertionError(item)


def walk_items(items):
    for it in items:
        yield it
        if isinstance(it, (_wi.If, _wi.UniformIf)):
            yield from walk_items(it.body)
            yield from walk_items(it.orelse)
        elif isinstance(it, _wi.Loop):
            yield from walk_items(it.body)


def assigns_in(stmts):
    """(list, index, statement) for each ``name = value`` in *stmts*, nested ones too,
    last first within each list (so that inserting before one keeps the others' index)."""
    for k in range(len(stmts) - 1, -1, -1):
        st = stmts[k]
        for _, inner in ast.iter_fields(st):
            if isinstance(inner, list):
                for sub in inner:
                    if isinstance(sub, (ast.excepthandler, ast.match_case)):
                        yield from assigns_in(sub.body)
                if inner and isinstance(inner[0], ast.stmt):
                    yield from assigns_in(inner)
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            yield stmts, k, st


def stored_in_loops(items, inside=False):
    """The names stored inside a loop of *items* (a wave loop, or a loop within a
    region's or a uniform statement's code)."""
    out = set()
    for it in items:
        if isinstance(it, (_wi.If, _wi.UniformIf)):
            out |= stored_in_loops(it.body, inside) | stored_in_loops(it.orelse, inside)
        elif isinstance(it, _wi.Loop):
            out |= item_names(it)[1] | stored_in_loops(it.body, True)
        elif inside:
            out |= item_names(it)[1]
        else:
            stmts = it.stmts if isinstance(it, _wi.Region) else [it.stmt] if isinstance(it, _wi.Uniform) else []
            for st in stmts:
                for node in ast.walk(st):
                    if isinstance(node, (ast.For, ast.While)):
                        out |= set(_names.names_in(node, ast.Store))
    return out


def has_jump(items, kinds):
    """Does a Jump of one of *kinds* in *items* belong to this loop level?"""
    for it in items:
        if isinstance(it, _wi.Jump) and it.kind in kinds:
            return True
        if isinstance(it, (_wi.If, _wi.UniformIf)) and (has_jump(it.body, kinds) or has_jump(it.orelse, kinds)):
            return True
    return False


def tuple_leaves(ty):
    """[(index path, scalar type)] of a (nested) tuple type of bool, integer and float
    scalars, in order; None for anything else."""
    if type(ty) not in (types.UniTuple, types.Tuple) or not ty.types:
        return None
    out = []
    for k, t in enumerate(ty.types):
        if isinstance(t, (types.Integer, types.Float, types.Boolean)):
            out.append(((k,), t))
            continue
        inner = tuple_leaves(t)
        if inner is None:
            return None
        out += [((k,) + path, u) for path, u in inner]
    return out


def first_is_plain_store(region, name):
    """Is every read of *name* in *region* after a store there, on every path
    (:func:`defined_before_reads`), or is *name* the target of one
    ``for`` loop (at any depth; ``for a in arrays:``) and named nowhere else but in
    that loop's body? (After a loop that ran no iteration, the earlier value is
    read, which only a lane array keeps.)"""
    loops = [
        n
        for n in ast.walk(ast.Module(body=region.stmts, type_ignores=[]))
        if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and n.target.id == name
    ]
    if len(loops) == 1 and name not in _names.names_in(loops[0].iter):
        inside = sum(_names.names_in(s).count(name) for s in [loops[0].target] + loops[0].body)
        if inside == sum(_names.names_in(s).count(name) for s in region.stmts):
            return True
    return defined_before_reads(region.stmts, name, False)[0]


def unassigned_leaves(ty):
    """What Numba reads for an unassigned variable of type *ty*, leaf by leaf (a
    tuple's elements in order, a complex number's two parts): 0, or a literal type's
    value (``t = 7`` under a branch is typed Literal[int](7), so Numba reads 7 on
    every path); None for other types."""
    if isinstance(ty, types.Literal) and isinstance(ty, (types.Integer, types.Boolean, types.Float)):
        return [ty.literal_value]
    if isinstance(ty, (types.Integer, types.Float, types.Boolean)):
        return [0]
    if isinstance(ty, types.Complex):
        return [0.0, 0.0]
    if isinstance(ty, types.BaseTuple) and not isinstance(ty, types.NamedTuple):
        parts = [unassigned_leaves(t) for t in ty]
        return None if any(p is None for p in parts) else [v for p in parts for v in p]
    return None


def zero_expr(ty):
    """An expression for what Numba reads for an unassigned variable of type *ty* (a
    scalar, a complex number, a tuple of them): :func:`unassigned_leaves` in the
    variable's own shape; None for other types."""
    leaves = unassigned_leaves(ty)
    if leaves is None:
        return None
    if isinstance(ty, types.BaseTuple):
        return ast.Tuple(elts=[zero_expr(t) for t in ty], ctx=ast.Load())
    if isinstance(ty, types.Complex):
        z = _call("_nq_complex", *map(_const, leaves))
        return _call("_nq_c64", z) if ty.bitwidth == 64 else z
    return _call(_SCALAR_NAMES[as_dtype(types.unliteral(ty))], _const(leaves[0]))


def _reads(node, name):
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def defined_before_reads(stmts, name, defined):
    """(every read of *name* in *stmts* comes after a store on every path, whether it
    is stored on every path through them), given *defined* at entry: Python's
    structured control flow, a loop's body possibly not run, ``break`` and
    ``continue`` ending a path. Anything else that names it (``del``,
    ``:=``, a store through a tuple with a starred part, ``global``): False."""
    for s in stmts:
        if any(
            isinstance(n, (ast.NamedExpr, ast.Delete, ast.Global, ast.Nonlocal, ast.Starred))
            and name in _names.names_in(n)
            for n in ast.walk(s)
        ):
            return False, defined
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            value = s.value
            if value is not None and _reads(value, name) and not defined:
                return False, defined
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if any(_reads(t, name) for t in targets) and not defined:
                return False, defined
            stored = [
                n
                for t in targets
                for n in ast.walk(t)
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
            ]
            if stored and value is not None:
                defined = True
        elif isinstance(s, ast.AugAssign):
            if name in _names.names_in(s) and not defined:
                return False, defined
        elif isinstance(s, ast.If):
            if _reads(s.test, name) and not defined:
                return False, defined
            ok1, d1 = defined_before_reads(s.body, name, defined)
            ok2, d2 = defined_before_reads(s.orelse, name, defined)
            if not (ok1 and ok2):
                return False, defined
            defined = defined or ((d1 or _ends_path(s.body)) and (d2 or _ends_path(s.orelse)))
        elif isinstance(s, (ast.For, ast.While)):
            head = s.iter if isinstance(s, ast.For) else s.test
            if _reads(head, name) and not defined:
                return False, defined
            inner = defined or (isinstance(s, ast.For) and name in _names.names_in(s.target))
            if isinstance(s, ast.For) and _reads(s.target, name) and not defined:
                return False, defined
            if not defined_before_reads(s.body, name, inner)[0]:
                return False, defined
            if not defined_before_reads(s.orelse, name, defined)[0]:
                return False, defined
        elif isinstance(s, (ast.Return, ast.Break, ast.Continue, ast.Pass, ast.Expr)):
            if name in _names.names_in(s) and not defined:
                return False, defined
        elif name in _names.names_in(s):
            return False, defined
    return True, defined


def _ends_path(stmts):
    """Does every path through *stmts* end in ``break`` or ``continue`` (of a loop
    in the region: a rest after them in the same block is never reached)?"""
    for s in stmts:
        if isinstance(s, (ast.Break, ast.Continue)):
            return True
        if isinstance(s, ast.If) and _ends_path(s.body) and _ends_path(s.orelse):
            return True
    return False


#: Helpers of generated lane code that only compute (casts, the ``>= 0`` assumption
#: on thread ids, lane-array loads): a second identical call gives the same value,
#: and none can fault.
PURE_HELPERS = frozenset({"_nq_i32", "_nq_i64", "_nq_u32", "_nq_nonneg", *_SCALAR_NAMES.values()})
#: Operators that cannot fault or branch on any operands (no division, modulo or
#: power: integer ones raise on zero or trap on MIN // -1).
PURE_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)
PURE_CMPOPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _stored_names(st):
    return {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def repeatable(e):
    """Whether evaluating *e* again, with the locals it reads unchanged, gives the
    same value and does nothing else (no memory read, no call but the pure helpers)."""
    if isinstance(e, ast.Constant):
        return isinstance(e.value, (int, float, bool)) or e.value is None
    if isinstance(e, ast.Name):
        return True
    if isinstance(e, ast.BinOp):
        return repeatable(e.left) and repeatable(e.right)
    if isinstance(e, ast.UnaryOp):
        return repeatable(e.operand)
    if isinstance(e, ast.BoolOp):
        return all(repeatable(v) for v in e.values)
    if isinstance(e, ast.Compare):
        return all(isinstance(o, PURE_CMPOPS) for o in e.ops) and all(repeatable(v) for v in [e.left, *e.comparators])
    if isinstance(e, ast.Call):
        if _tid_load(e):
            return True  # (written once per wave, before any region)
        return (
            isinstance(e.func, ast.Name)
            and e.func.id in PURE_HELPERS
            and not e.keywords
            and all(repeatable(a) for a in e.args)
        )
    return False


def by_positive_constant(e):
    """Is the BinOp *e* ``x // c``, ``x % c`` or ``x / c`` with *c* a positive
    constant (it raises for no *x*)?"""
    c = e.right
    return (
        isinstance(e.op, (ast.FloorDiv, ast.Mod, ast.Div))
        and isinstance(c, ast.Constant)
        and type(c.value) in (int, float)
        and c.value > 0
    )


def _tid_load(e):
    """Is *e* ``_nq_ld(_nq_tx, _nq_l)`` (or ``_nq_ty``, ``_nq_tz``): a lane's thread id
    in a 2-D or 3-D launch?"""
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id == "_nq_ld"
        and len(e.args) == 2
        and isinstance(e.args[0], ast.Name)
        and e.args[0].id in ("_nq_tx", "_nq_ty", "_nq_tz")
        and isinstance(e.args[1], ast.Name)
        and e.args[1].id == L
    )


def tid_of_lane(name):
    """``threadIdx.x`` (*name* ``_nq_tx``), ``.y`` or ``.z`` of the group's lane
    ``_nq_l``, from the wave's first thread ``_nq_t0`` and the block's shape."""
    t = ast.BinOp(_name("_nq_t0"), ast.Add(), _name(L))
    if name == "_nq_tx":
        e = ast.BinOp(t, ast.Mod(), _name("_nq_bdx"))
    elif name == "_nq_ty":
        e = ast.BinOp(ast.BinOp(t, ast.FloorDiv(), _name("_nq_bdx")), ast.Mod(), _name("_nq_bdy"))
    else:
        e = ast.BinOp(t, ast.FloorDiv(), ast.BinOp(_name("_nq_bdx"), ast.Mult(), _name("_nq_bdy")))
    return _call("_nq_i32", e)


def recompute_tids(stmts):
    """Rewrites each lane's read of a thread id ``_nq_ld(_nq_tx, _nq_l)`` in
    *stmts* as its computation from the lane (:func:`tid_of_lane`: a shift and a
    mask where the block's shape is a constant), for each of ``_nq_tx/_ty/_tz`` read
    no other way; then no wave stores them in lane arrays, most of which the fast
    loops never read. Returns the names still read whole (an op's operand)."""
    names = ("_nq_tx", "_nq_ty", "_nq_tz")
    reads = {n: 0 for n in names}
    lane_reads = dict(reads)
    for st in stmts:
        for e in ast.walk(st):
            if isinstance(e, ast.Name) and e.id in reads:
                reads[e.id] += 1
            elif _tid_load(e):
                lane_reads[e.args[0].id] += 1
    whole = {n for n in names if reads[n] > lane_reads[n]}

    class _Tids(ast.NodeTransformer):
        def visit_Call(self, node):
            if _tid_load(node) and node.args[0].id not in whole:
                return ast.copy_location(tid_of_lane(node.args[0].id), node)
            return self.generic_visit(node)

    for k, st in enumerate(stmts):
        stmts[k] = _Tids().visit(st)
    return whole


def drop_repeats(stmts):
    """*stmts* without the assignments ``n = E`` (or ``n, m = (E, F)``) that repeat
    earlier top-level ``n = E`` when nothing in between stored ``n`` or a name ``E`` reads (a
    recomputed ``i = grid(1)`` before the region's own ``i = grid(1)``, a loop's
    constant step assigned twice); E must be :func:`repeatable`."""
    avail = {}  # name -> (dump of its value, names the value reads)
    out = []

    def kill(names):
        for n in list(avail):
            if n in names or avail[n][1] & names:
                del avail[n]

    for st in stmts:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            n = st.targets[0].id
            key = ast.dump(st.value)
            if n in avail and avail[n][0] == key:
                continue
            kill({n})
            reads = set(_names.names_in(st.value))
            if n not in reads and repeatable(st.value):
                avail[n] = (key, reads)
        elif (  # ``x, y = (Ex, Ey)`` repeating ``x = Ex`` and ``y = Ey`` (``x, y = grid(2)``)
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Tuple)
            and isinstance(st.value, ast.Tuple)
            and len(st.targets[0].elts) == len(st.value.elts)
            and all(isinstance(t, ast.Name) for t in st.targets[0].elts)
            and all(t.id in avail and avail[t.id][0] == ast.dump(v) for t, v in zip(st.targets[0].elts, st.value.elts))
        ):
            continue
        else:
            kill(_stored_names(st))
        out.append(st)
    return out


def drop_dead_loads(loads, rest):
    """The lane-array loads ``n = _nq_ld(...)`` of *loads* whose value is read: not
    those where the first statement of *rest* that names ``n`` is a plain top-level
    ``n = E`` with ``E`` not reading ``n`` (the value is overwritten unread)."""
    keep = []
    for ld in loads:
        n = ld.targets[0].id
        for st in rest:
            if n not in set(_names.names_in(st)):
                continue
            if (
                isinstance(st, ast.Assign)
                and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name)
                and st.targets[0].id == n
                and n not in set(_names.names_in(st.value))
            ):
                break  # overwritten first: the load is dead
            keep.append(ld)
            break
        # never named again: dead too (the region stores it only if it assigns it)
    return keep
