"""A variable's assignments at a function's top level as variables of their own.

Numba types each assignment of a variable on its own (its SSA versions: ``v = x[i]``
a float32, a later ``v = v * 0.5`` a float64). The CPU target keeps a variable that
lives across a cross-lane op or a barrier in one lane array, of the versions'
unified type, and refuses a kernel where reading a version back in that type would
change a result (cpu/typing.py ``_mixed_versions``). Before refusing, cpu/dispatch.py
compiles such a kernel again with those variables split here (and a lane-varying
array view that would live across an op, cpu/codegen.py ``split_candidate``)::

    v = x[i]                     v = x[i]
    s = Wave.reduceSum(v)        s = Wave.reduceSum(v)
    out[i] = v * v + s     ->    out[i] = v * v + s
    v = v * 0.5                  v__1 = v * 0.5
    out2[i] = v                  out2[i] = v__1

Each assignment at the top level after the first (and the first too, of a
parameter or of a variable named before it) starts a new name, read until the next
one. A top-level statement runs
once per thread, in order, so no value flows back across it: renaming is exact.
Stores nested in an ``if`` or a loop keep the name of the segment they are in.
A variable with no top-level store that is named only inside branches of ``if``
statements (also within loops), each branch assigning it before anything there
names it, becomes a variable per branch (``_branch_bodies``): no value flows into
or out of such a branch. A
variable is left whole where a name could be bound other than by a plain store:
``global``, ``nonlocal``, ``del``, ``:=``, a ``match`` capture, a nested function
or lambda (numquad/cpu/nested.py has lifted those before this runs), a starred
target, or a store that also reads it in its target (``a[v], v = ...``).
"""

from __future__ import annotations

import ast

__all__ = ["split"]


def split(fn, names, params):
    """Split each variable of *names* in function *fn* (an ast.FunctionDef, changed
    in place) at its top-level assignments; *params* are the function's parameter
    names. Returns {new name: the variable's name}."""
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)
    }
    made = {}
    for v in sorted(names):
        if not _splittable(fn, v):
            continue
        points = [k for k, s in enumerate(fn.body) if _stores_at_top(s, v)]
        # the first top-level store starts a name of its own too where the variable is
        # a parameter or is named before it (a store nested in an ``if`` or a loop)
        first = (
            0
            if v in params
            or points
            and any(isinstance(n, ast.Name) and n.id == v for s in fn.body[: points[0]] for n in ast.walk(s))
            else 1
        )
        if len(points) <= first:
            # no top-level store to split at: a variable named only inside branches,
            # each branch starting with its own store, is a variable per branch
            for k, body in enumerate(_branch_bodies(fn.body, v) if not points else (), 1):
                new = f"{v}__b{k}"
                while new in taken:
                    new += "_"
                taken.add(new)
                made[new] = v
                for st in body:
                    _Rename(v, new).visit(st)
            continue
        prev = v
        for j, start in enumerate(points[first:], 1):
            new = f"{v}__{j}"
            while new in taken:
                new += "_"
            taken.add(new)
            made[new] = v
            end = points[first + j] if first + j < len(points) else len(fn.body)
            fn.body[start] = _split_store(fn.body[start], v, prev, new)
            for k in range(start + 1, end):
                _Rename(v, new).visit(fn.body[k])
            prev = new
    return made


def _mentions(node, v):
    return any(isinstance(n, ast.Name) and n.id == v for n in ast.walk(node))


def _branch_bodies(stmts, v):
    """The branches of ``if`` statements (in *stmts*, or in the bodies of its loops
    and of other branches) that hold every mention of *v*, where each such branch
    assigns *v* plainly before anything else there names it: no value of *v* flows
    into or out of a branch, so each may name it on its own (Numba's SSA versions;
    ``m = cuda.activemask()`` in one branch, ``m = 0xAAAAAAAA`` in the other). An
    empty list where *v* is named anywhere else."""
    bodies = []

    def walk(stmts):
        for st in stmts:
            if not _mentions(st, v):
                continue
            if isinstance(st, ast.If) and not _mentions(st.test, v):
                for b in (st.body, st.orelse):
                    first = next((x for x in b if _mentions(x, v)), None)
                    if first is None:
                        continue
                    if _plain_store(first, v):
                        bodies.append(b)
                    elif not walk(b):
                        return False
            elif isinstance(st, (ast.For, ast.While)) and not st.orelse:
                head = [st.target, st.iter] if isinstance(st, ast.For) else [st.test]
                if any(_mentions(h, v) for h in head) or not walk(st.body):
                    return False
            else:
                return False
        return True

    return bodies if walk(stmts) else []


def _plain_store(stmt, v):
    """Is *stmt* ``v = value`` (or ``v: T = value``) whose value does not name *v*?"""
    if isinstance(stmt, ast.Assign):
        return (
            len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == v
            and not _mentions(stmt.value, v)
        )
    if isinstance(stmt, ast.AnnAssign):
        return (
            isinstance(stmt.target, ast.Name)
            and stmt.target.id == v
            and stmt.value is not None
            and not _mentions(stmt.value, v)
        )
    return False


def _stores_at_top(stmt, v):
    """Does *stmt* store *v* itself, outside any ``if`` or loop (a name among its
    targets, or an augmented or annotated assignment of it)?"""
    if isinstance(stmt, ast.Assign):
        return any(
            isinstance(n, ast.Name) and n.id == v and isinstance(n.ctx, ast.Store)
            for t in stmt.targets
            for n in _target_names(t)
        )
    if isinstance(stmt, ast.AugAssign):
        return isinstance(stmt.target, ast.Name) and stmt.target.id == v
    if isinstance(stmt, ast.AnnAssign):
        return isinstance(stmt.target, ast.Name) and stmt.target.id == v and stmt.value is not None
    return False


def _target_names(t):
    """The names a target stores, through tuples and lists."""
    if isinstance(t, ast.Name):
        return [t]
    if isinstance(t, (ast.Tuple, ast.List)):
        return [n for e in t.elts for n in _target_names(e)]
    return []


def _splittable(fn, v):
    for n in ast.walk(fn):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and v in n.names:
            return False
        if isinstance(n, ast.Delete) and any(isinstance(t, ast.Name) and t.id == v for t in n.targets):
            return False
        if isinstance(n, ast.NamedExpr) and n.target.id == v:
            return False
        if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name == v:
            return False
        if isinstance(n, ast.MatchMapping) and n.rest == v:
            return False
        if isinstance(n, ast.Starred) and any(isinstance(m, ast.Name) and m.id == v for m in ast.walk(n)):
            return False
        if (
            n is not fn
            and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
            and any(isinstance(m, ast.Name) and m.id == v or isinstance(m, ast.arg) and m.arg == v for m in ast.walk(n))
        ):
            return False
    for s in fn.body:
        if _stores_at_top(s, v):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            stored = {id(n) for t in targets for n in _target_names(t)}
            if any(isinstance(n, ast.Name) and n.id == v and id(n) not in stored for t in targets for n in ast.walk(t)):
                return False
    return True


def _split_store(stmt, v, prev, new):
    """The top-level store *stmt* of *v*: what it reads of *v* reads *prev*, what it
    stores is *new* (an augmented assignment becomes ``new = prev op value``)."""
    if isinstance(stmt, ast.AugAssign):
        value = _Rename(v, prev).visit(stmt.value)
        out = ast.Assign(
            targets=[ast.Name(new, ast.Store())],
            value=ast.BinOp(left=ast.Name(prev, ast.Load()), op=stmt.op, right=value),
        )
        return ast.fix_missing_locations(ast.copy_location(out, stmt))
    stmt.value = _Rename(v, prev).visit(stmt.value)
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    for t in targets:
        for n in _target_names(t):
            if n.id == v:
                n.id = new
    return stmt


class _Rename(ast.NodeTransformer):
    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_Name(self, n):
        if n.id == self.old:
            n.id = self.new
        return n
