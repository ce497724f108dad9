"""Lane loops in two versions: contiguous accesses checked once, before the loop.

A release build checks every access of a lane loop per lane (cpu/bounds.py): a
load reads only where its index is inside the array, a contiguous store writes
only there. LLVM vectorises both as *masked* vector loads and stores, or, where
its cost model finds those dear, keeps the loop scalar; on some machines they are
slow (on AMD Zen 3 a ``vpmaskmovq`` store of four int64 took about 26 cycles: a
copy kernel ran at a quarter of a plain Numba loop's speed, and the quad stream of
benchmarks/bench_cpu.py, whose first loop only loads, at 0.3x; docs/BENCHMARKS.md).

Most of a lane loop's accesses are contiguous: the index is the lane plus a value
the same in every lane (``out[i] = x[i]`` with ``i = cuda.grid(1)``,
``shr[tid]``). Such an index runs over ``first .. first + G - 1`` as the lane goes
over ``0 .. G - 1``, so one test before the loop shows whether every lane's access
is inside the array. :func:`plan` finds those accesses, and the guards that hold
in every lane where the test does, and writes the test. cpu/checkedloads.py
(``_CheckedLoads``) then turns a region's two paths, ``if _nq_all(mask): <lane
loop> else: <masked loop>``, into::

    if _nq_all(mask) and <every contiguous access inside, every guard true>:
        for _nq_l in _nq_range(_nq_G):   # those accesses plain, the guards gone:
            ...                          # vector loads and stores
    else:
        <the masked loop, every access checked per lane, as before>

(the masked loop gives the same bits when every lane is active, so the region
keeps two loops), and a lane loop outside such a region into ``if <test>: <fast
loop> else: <the loop checked>``. The fast loop only leaves out checks that cannot
fail and tests that hold. An access counts as contiguous only where this module can
prove it from the loop's statements alone:

- it is ``name[index]`` or ``name[i0, i1, ...]`` of an array the loop does not
  assign, in a statement directly in the loop's body, a guard's or a branch's that
  only some lanes take (a store), or in the expression of one (a load); one under a
  condition or in such a branch is tested for every lane, which only makes the
  test stricter (``if tx == 0: tile[ty, 0] = a[y, x - 1]``: the halo of a tile);
- each of its indices, with every name the loop assigns replaced by the one
  assignment that precedes it on that straight line (``h, w = a.shape`` and
  ``x, y = (..., ...)`` element by element), is either the lane variable under
  ``+``, ``-`` (the lane on the left), the integer casts (``_nq_i32``/``_nq_i64``/
  ``_nq_u32``, NumPy's integer types: ``np.int8(x)``) and ``_nq_nonneg``, and
  values that do not depend on the lane, or such a value alone: names the loop
  never assigns, integer constants, an array's size, ``+ - * & | ^`` and the
  casts (nothing that can raise, so the test may run where the loop would not);
  at least one index depends on the lane. Each axis is tested on its own: an
  index that rises with the lane at its first and last lane, one that does not
  once (``out[k, i]`` in a 1-D launch).

In a 2-D or 3-D launch whose waves are whole rows of threads, a region where
every lane is active runs as rows of threads outside and ``threadIdx.x`` inside
(cpu/codegen.py ``_BlockGen.plain_loop``), and ``x, y = cuda.grid(2)`` is
recomputed there from the loop variables (``_BlockGen._remat``). :func:`plan_rows`
reads that loop nest as a lane of two variables: an index may rise with
``_nq_lx`` (``x``: within a row) or with ``_nq_ly`` (``y``: the same along a
row, one more each row), never with both; each is tested at the first and the
last value of its variable, and so is a guard's operand (``if y < h and x <
w:``). ``img[y, x]`` is then an unchecked load in the fast loop. (LLVM unrolls such a
loop fully; it packs its lanes into vector loads and stores only because each
unchecked access of a parameter or a static shared array carries its array's
no-alias scope: cpu/fastaccess.py.)

A guard is an ``if`` directly in the loop's body (or a guard's) whose test, or the
value of the one name it reads, is a comparison ``< <= > >=`` (or an ``and`` of
them) of such an index with a value that does not depend on the lane: true at the
first lane and at the last, with the index rising exactly ``G - 1`` between them
(bounds.lane_rise_ok), it is true in every lane.

The test (bounds.lane_range_ok) evaluates the index at the first and the last
lane, with ``_nq_nonneg`` left out (it tells LLVM a value is >= 0; the last lane
of a partial wave is not a thread): both inside the array's first axis and
exactly ``G - 1`` apart. The casts wrap, but a wrap makes the index jump down,
and with no jump an index that rises by one per lane covers exactly
``first .. last``.
"""

from __future__ import annotations

import ast
import copy

__all__ = ["plan", "plan_rows"]

_LANE = "_nq_l"
_CASTS = frozenset({"_nq_i32", "_nq_i64", "_nq_u32", "_nq_nonneg"})
_COMPARE = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_UNIFORM_OPS = (ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)


def _assigned(node):
    """How many times each name is bound in *node* (assignment, loop target, del)."""
    counts = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            counts[n.id] = counts.get(n.id, 0) + 1
        elif isinstance(n, (ast.Lambda, ast.comprehension, ast.NamedExpr)):
            return None  # (a scope or a binding in an expression: not analysed)
    return counts


def _is_cast(e):
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and (e.func.id in _CASTS or e.func.id.startswith(("_nq_T_int", "_nq_T_uint")))
        and len(e.args) == 1
        and not e.keywords
    )


class _Expander:
    """Rewrites an expression read at position *pos* of the fast version's straight
    line (the loop's body, its guards' bodies in their place) into an expression of
    the lane variables and values the loop does not change, or gives None. A name the
    loop assigns is replaced by the value of its one assignment before *pos* on that
    line: Numba types that version of the name as the value (its SSA form), so the
    test before the loop computes in the loop's own types."""

    def __init__(self, counts, arrays, int_cast, lanes):
        self.counts = counts
        self.arrays = arrays
        self.int_cast = int_cast
        self.lanes = lanes  # the loop variables that count lanes
        self.defs = {}  # name -> (position, value) of its one assignment

    def define(self, st, pos):
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1):
            return
        t, v = st.targets[0], st.value
        if isinstance(t, ast.Name):
            pairs = [(t, v)]
        elif (  # ``h, w = a.shape``: ``a.shape[0]``, ``a.shape[1]``
            isinstance(t, ast.Tuple) and isinstance(v, ast.Attribute) and v.attr == "shape" and self._array(v.value)
        ):
            pairs = [(e, ast.Subscript(v, ast.Constant(k), ast.Load())) for k, e in enumerate(t.elts)]
        elif isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple) and len(t.elts) == len(v.elts):
            pairs = list(zip(t.elts, v.elts))  # (a value reading a target: itself defined here, never expanded)
        else:
            return
        for n, value in pairs:
            if isinstance(n, ast.Name) and self.counts.get(n.id) == 1:
                self.defs[n.id] = (pos, value)

    def _array(self, e):
        return isinstance(e, ast.Name) and e.id in self.arrays and e.id not in self.counts

    def expand(self, e, pos, depth=0):
        if depth > 20:
            return None
        if isinstance(e, ast.Name):
            if e.id in self.lanes:
                return e
            if e.id not in self.counts:
                return e  # the same in every lane of the loop
            k, value = self.defs.get(e.id, (pos, None))
            return self.expand(value, k, depth + 1) if k < pos else None
        if isinstance(e, ast.Constant):
            return e if type(e.value) is int else None
        if isinstance(e, ast.Call) and len(e.args) == 1 and not e.keywords:
            # a generated cast, or the user's (``np.int8(x)``) as the generated name
            # of the same NumPy type (``_nq_T_int8``)
            f = e.func.id if _is_cast(e) else self.int_cast(e.func)
            arg = None if f is None else self.expand(e.args[0], pos, depth + 1)
            return None if arg is None else ast.Call(func=_name(f), args=[arg], keywords=[])
        if isinstance(e, ast.BinOp) and isinstance(e.op, _UNIFORM_OPS):
            left, right = self.expand(e.left, pos, depth + 1), self.expand(e.right, pos, depth + 1)
            return None if left is None or right is None else ast.BinOp(left, e.op, right)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.Invert)):
            x = self.expand(e.operand, pos, depth + 1)
            return None if x is None else ast.UnaryOp(e.op, x)
        # an array's size: ``a.size``, ``a.shape[k]``, ``len(a)``
        if isinstance(e, ast.Attribute) and e.attr == "size" and self._array(e.value):
            return e
        if (
            isinstance(e, ast.Subscript)
            and isinstance(e.value, ast.Attribute)
            and e.value.attr == "shape"
            and self._array(e.value.value)
            and isinstance(e.slice, ast.Constant)
            and type(e.slice.value) is int
        ):
            return e
        if (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Name)
            and e.func.id == "len"
            and e.func.id not in self.counts
            and len(e.args) == 1
            and not e.keywords
            and self._array(e.args[0])
        ):
            return e
        return None


def _lanes_in(e, lanes):
    """The lane variables (of *lanes*) the expression *e* reads."""
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name) and n.id in lanes}


def _rises_by(e, lane):
    """Is the expanded index *e* the lane variable *lane* plus values that do not
    depend on any lane, through ``+``, ``-`` and casts only?"""
    if isinstance(e, ast.Name):
        return e.id == lane
    if _is_cast(e):
        return _rises_by(e.args[0], lane)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)):
        lanes = {lane}
        left, right = bool(_lanes_in(e.left, lanes)), bool(_lanes_in(e.right, lanes))
        if left and not right:
            return _rises_by(e.left, lane)
        if right and not left and isinstance(e.op, ast.Add):
            return _rises_by(e.right, lane)
    return False


class _AtLane(ast.NodeTransformer):
    """The expanded index with the lane variable *lane* at *value*, without
    ``_nq_nonneg``."""

    def __init__(self, lane, value):
        self.lane = lane
        self.value = value

    def visit_Name(self, node):
        return copy.deepcopy(self.value) if node.id == self.lane else node

    def visit_Call(self, node):
        self.generic_visit(node)
        return node.args[0] if isinstance(node.func, ast.Name) and node.func.id == "_nq_nonneg" else node


def _at(e, lane, value):
    return _AtLane(lane, value).visit(copy.deepcopy(e))


def _name(n):
    return ast.Name(n, ast.Load())


def _call(fn, *args):
    return ast.Call(func=_name(fn), args=list(args), keywords=[])


def _is_range(it, *args):
    """Is *it* ``_nq_range(<args>)``, each arg a test on its expression?"""
    return (
        isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "_nq_range"
        and len(it.args) == len(args)
        and not it.keywords
        and all(test(a) for test, a in zip(args, it.args))
    )


def _plain_for(loop, var):
    return isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and loop.target.id == var and not loop.orelse


def plan(loop, arrays, is_load, int_cast):
    """For the lane loop *loop* (``for _nq_l in _nq_range(_nq_G)``, before its loads
    are checked; its stores' indices are ``_nq_six(shape, index, line)``): ``(test,
    nodes)``, the test before the loop (an expression) and the ``id`` of each node of
    *loop* the fast version changes: a Subscript it leaves unchecked, a guard (an
    ``if`` whose test holds in every lane where the test before the loop does) it
    replaces by its body. None where the loop has no contiguous access outside
    lane-varying branches (its fast version would gain nothing: a masked load
    costs as much as a masked store on some machines, 41 -> 15 ms on the quad
    stream of benchmarks/bench_cpu.py on Zen 3). *arrays*: the
    kernel's arrays' names; *is_load(node)*: whether a Subscript is a checked load;
    *int_cast(func)*: the generated name (``_nq_T_int8``) of the NumPy integer type a
    called expression of the user's code is (``np.int8``), else None."""
    if not (_plain_for(loop, _LANE) and _is_range(loop.iter, lambda a: isinstance(a, ast.Name) and a.id == "_nq_G")):
        return None
    last = ast.BinOp(_name("_nq_G"), ast.Sub(), ast.Constant(1))
    return _plan(loop, loop.body, {_LANE: (ast.Constant(0), last, _name("_nq_G"))}, arrays, is_load, int_cast)


def plan_rows(rows, starts, arrays, is_load, int_cast):
    """:func:`plan` for the rows loop of a 2-D or 3-D block (cpu/codegen.py
    ``_BlockGen.plain_loop``)::

        for _nq_ly in _nq_range(<ly0>, _nq_i32(<ly0> + R)):     # or _nq_range(_nq_i32(R))
            for _nq_lx in _nq_range(<lx0>, _nq_i32(<lx0> + W)):  # or _nq_range(_nq_i32(W))
                _nq_ln = ...
                <body>

    (*starts*: the values of the names ``_nq_ly0``/``_nq_lx0`` the ranges start at,
    assigned before the loop). The lane is then two loop variables: an index (or a
    guard's operand) may rise with ``_nq_lx`` (in one row: ``img[y, x]``'s ``x``) or
    with ``_nq_ly`` (the same in a row: its ``y``), but not with both. Each axis of
    an index is tested on its own, at the first and the last value of the one
    variable it reads (an axis that reads neither once). None where the loop is not
    of this form."""
    if not (_plain_for(rows, "_nq_ly") and len(rows.body) == 1 and _plain_for(rows.body[0], "_nq_lx")):
        return None
    inner = rows.body[0]
    if not (inner.body and isinstance(inner.body[0], ast.Assign)):
        return None
    spans = {}
    for var, it in (("_nq_ly", rows.iter), ("_nq_lx", inner.iter)):
        if _is_range(it, lambda a: True):  # _nq_range(_nq_i32(n)): 0 .. n - 1
            n = it.args[0]
            first = ast.Constant(0)
        elif _is_range(it, lambda a: True, lambda a: True):  # _nq_range(s, _nq_i32(s + n))
            s, stop = it.args
            if not (
                isinstance(s, ast.Name)
                and s.id in starts
                and _is_cast(stop)
                and isinstance(stop.args[0], ast.BinOp)
                and isinstance(stop.args[0].op, ast.Add)
                and isinstance(stop.args[0].left, ast.Name)
                and stop.args[0].left.id == s.id
            ):
                return None
            n = stop.args[0].right
            first = copy.deepcopy(starts[s.id])
        else:
            return None
        if _is_cast(n):
            n = n.args[0]
        if not (isinstance(n, ast.Constant) and type(n.value) is int and n.value > 0):
            return None
        spans[var] = (first, ast.BinOp(copy.deepcopy(first), ast.Add(), ast.Constant(n.value - 1)), n)
    return _plan(inner, inner.body, spans, arrays, is_load, int_cast)


def _plan(loop, body, spans, arrays, is_load, int_cast):
    """*spans*: each lane variable's (first value, last value, count)."""
    counts = _assigned(loop)
    if counts is None:
        return None
    for v in spans:
        counts.pop(v, None)
    ex = _Expander(counts, arrays, int_cast, set(spans))
    tests, nodes = {}, set()
    direct = []  # accesses outside lane-varying branches: without one, no fast version
    branch = 0  # how deep in such branches the walk is

    def add(test):
        tests.setdefault(ast.dump(test), test)

    def axis_test(shape, e):
        """The test that index *e* (expanded) stays inside *shape*'s first axis in
        every lane, or None."""
        lanes = _lanes_in(e, spans)
        if not lanes:  # the same in every lane: inside once
            return _call("_nq_lrok", shape, _at(e, "", None), _at(e, "", None), ast.Constant(1))
        (v,) = lanes if len(lanes) == 1 else (None,)
        if v is None or not _rises_by(e, v):
            return None
        first, last, n = spans[v]
        return _call("_nq_lrok", shape, _at(e, v, first), _at(e, v, last), copy.deepcopy(n))

    def access(sub, shape, idx, pos):
        if not ex._array(sub.value) or isinstance(idx, ast.Slice):
            return
        parts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
        if not parts or any(isinstance(p, (ast.Slice, ast.Starred)) for p in parts):
            return
        found = []
        for k, p in enumerate(parts):
            e = ex.expand(p, pos)
            if e is None:
                return
            axis = (
                shape if len(parts) == 1 else ast.Tuple([ast.Subscript(shape, ast.Constant(k), ast.Load())], ast.Load())
            )
            t = axis_test(copy.deepcopy(axis), e)
            if t is None:
                return
            found.append((t, bool(_lanes_in(e, spans))))
        if not any(varies for _, varies in found):
            return  # (the same element in every lane: nothing to gain)
        for t, _ in found:
            add(t)
        nodes.add(id(sub))
        if not branch:
            direct.append(sub)

    def guard(test, pos):
        """The tests before the loop that make *test* (an ``if``'s, or the value of
        the name it reads) hold in every lane, or None: comparisons (and ``and`` of
        them) of a value that rises by one per lane with one the same in every lane,
        true at the first lane and at the last, the value rising exactly ``G - 1``
        between them."""
        if isinstance(test, ast.Name) and test.id in counts:  # ``inside = i < n`` before ``if inside:``
            k, value = ex.defs.get(test.id, (pos, None))
            if k >= pos:
                return None
            test = value
        parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        out = []
        for c in parts:
            if not (isinstance(c, ast.Compare) and len(c.ops) == 1 and isinstance(c.ops[0], _COMPARE)):
                return None
            left, right = ex.expand(c.left, pos), ex.expand(c.comparators[0], pos)
            if left is None or right is None:
                return None
            lane = [x for x in (left, right) if _lanes_in(x, spans)]
            if not lane:
                out.append(ast.Compare(left, c.ops, [right]))
                continue
            vs = _lanes_in(lane[0], spans)
            if len(lane) != 1 or len(vs) != 1:
                return None
            (v,) = vs
            if not _rises_by(lane[0], v):
                return None
            first, last, n = spans[v]
            out.append(_call("_nq_lrise", _at(lane[0], v, first), _at(lane[0], v, last), copy.deepcopy(n)))
            for at in (first, last):
                out.append(ast.Compare(_at(left, v, at), c.ops, [_at(right, v, at)]))
        return out

    pos = 0

    def walk(stmts):
        nonlocal pos, branch
        for st in stmts:
            if isinstance(st, ast.If):
                g = guard(st.test, pos)
                if g is not None:
                    for t in g:
                        add(t)
                    nodes.add(id(st))
                    walk(st.body)
                    continue
                # a branch some lanes take (``if tx == 0: tile[ty, 0] = a[y, x - 1]``): its
                # accesses are tested for every lane, which only makes the test stricter;
                # what it assigns is not known after it (lanes that skip it keep another value)
                before = dict(ex.defs)
                branch += 1
                walk(st.body)
                ex.defs = dict(before)
                walk(st.orelse)
                branch -= 1
                ex.defs = before
                continue
            if isinstance(st, (ast.Assign, ast.AugAssign)):
                t = st.targets[0] if isinstance(st, ast.Assign) else st.target
                if (
                    (not isinstance(st, ast.Assign) or len(st.targets) == 1)
                    and isinstance(t, ast.Subscript)
                    and isinstance(t.slice, ast.Call)
                    and isinstance(t.slice.func, ast.Name)
                    and t.slice.func.id == "_nq_six"
                    and len(t.slice.args) == 3
                ):
                    shape, idx, _ = t.slice.args
                    access(t, copy.deepcopy(shape), idx, pos)
            if isinstance(st, (ast.Assign, ast.AugAssign, ast.Expr)):
                for sub in ast.walk(st.value):
                    if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and is_load(sub):
                        access(sub, _call("_nq_shp", _name(sub.value.id)), sub.slice, pos)
            ex.define(st, pos)
            pos += 1

    walk(body)
    if not direct:
        return None  # (a masked loop, ``if _nq_ld(mask, l): ...``: its region's fast loop is the other)
    vals = list(tests.values())
    return (vals[0] if len(vals) == 1 else ast.BoolOp(ast.And(), vals)), nodes
