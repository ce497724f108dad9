"""Loop unrolling in the front end: ``numba.literal_unroll`` loops written out
once per element (before normalisation), and loops over constants around
cross-lane ops written out copy by copy (selectors stay constants) or run by
index (``for v in t``, ``enumerate``, ``zip`` over tuples and arrays).
"""

from __future__ import annotations

import ast
import copy

import numpy as np

from .. import _desugar
from .inline import statement_count, uses_wave_features

__all__ = ["Unroller"]

#: Loops over at most this many constants around cross-lane ops are unrolled.
_UNROLL_MAX = 32
#: ... and only when the copies weigh at most this many statements (_unroll_weight), and no loop.
_UNROLL_BUDGET = 96


def _stored_names(stmts):
    """The names *stmts* store (assignments, loop targets), at any depth."""
    return {n.id for st in stmts for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _literal(node):
    """The value of a float or bool literal (``2.5``, ``-0.5``, ``True``), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _literal(node.operand)
        return -v if isinstance(v, float) else None
    if isinstance(node, ast.Constant) and isinstance(node.value, (float, bool)):
        return node.value
    return None


def _same_kind_constants(values):
    """*values* when they are all finite Python floats or all bools (a tuple Numba
    iterates as a UniTuple of float64 or bool), else None. A loop over them around
    cross-lane ops is unrolled or run by index like one over int constants."""
    if not values:
        return None
    if all(type(v) is bool for v in values):
        return list(values)
    if all(type(v) in (float, np.float64) and np.isfinite(v) for v in values):
        return [float(v) for v in values]
    return None


class Unroller:
    """Loop unrolling, called by ``Frontend.__init__`` (literal_unroll) and by
    ``Normaliser._normalise_stmt`` (loops over constants, loops by index). Reads the
    Frontend's ``env``, ``fn``, ``argtypes`` and its ``error``,
    ``fresh``, ``op_of``, ``builtin_of``, ``is_xl``, ``_constant_int``; calls
    ``_normalise_block`` back; adds to ``unrolled_stores`` and
    ``literal_unrolled_stores``."""

    # -- numba.literal_unroll -------------------------------------------------------
    def _unroll_literal_loops(self, node):
        """Each ``for x in literal_unroll(t):`` below *node* (in place; the tree is
        the frontend's own copy) written out once per element of ``t``, as Numba's
        ``literal_unroll`` does: ``x_k = t[k]`` then the body with ``x`` as
        ``x_k``, so that each element keeps its own type (a tuple of arrays of
        different dtypes or dimensions). ``t`` is a tuple the compile knows the
        length of: a global or closure tuple, a tuple display, or a tuple argument."""
        for field, value in ast.iter_fields(node):
            if not isinstance(value, list):
                continue
            out, changed = [], False
            for st in value:
                if isinstance(st, ast.For) and self._is_literal_unroll(st.iter):
                    out.extend(self._unrolled(st))
                    changed = True
                else:
                    if isinstance(st, ast.AST):
                        self._unroll_literal_loops(st)
                    out.append(st)
            if changed:
                setattr(node, field, out)

    def _is_literal_unroll(self, it):
        if not (isinstance(it, ast.Call) and isinstance(it.func, (ast.Name, ast.Attribute))):
            return False
        if isinstance(it.func, ast.Name) and it.func.id in self.env.locals:
            return False
        obj = self.env.resolve(it.func)  # numba's, or numba.cuda's own copy
        return getattr(obj, "__name__", None) == "literal_unroll" and str(getattr(obj, "__module__", "")).startswith(
            "numba"
        )

    def _unrolled(self, st):
        it = st.iter
        if len(it.args) != 1 or it.keywords:
            self.error("literal_unroll() takes one tuple", st)
        arg = it.args[0]
        n = None
        if isinstance(arg, ast.Tuple):
            n = len(arg.elts)
        elif isinstance(arg, ast.Name) and arg.id in self.env.params and self.argtypes is not None:
            from numba.core import types as _nbt

            ty = self.argtypes[self.env.params.index(arg.id)]
            n = len(ty) if isinstance(ty, _nbt.BaseTuple) else None
        elif not (isinstance(arg, ast.Name) and arg.id in self.env.locals):
            obj = self.env.resolve(arg)
            n = len(obj) if isinstance(obj, tuple) else None
        if n is None:
            self.error(
                f"literal_unroll({ast.unparse(arg)}): the CPU target unrolls a tuple whose length "
                f"it knows at compile time (a global or closure tuple, a tuple argument, or a "
                f"tuple display)",
                st,
            )
        if st.orelse:
            self.error("a literal_unroll loop with an else clause is not supported by the CPU target", st)
        if not isinstance(st.target, ast.Name):
            self.error("a literal_unroll loop's target must be one name on the CPU target", st)
        for sub in _desugar.loop_level(st.body):
            if isinstance(sub, (ast.Break, ast.Continue)):
                self.error(
                    f"{'break' if isinstance(sub, ast.Break) else 'continue'} in a literal_unroll "
                    f"loop is not supported by the CPU target (it writes the body out once per "
                    f"element)",
                    sub,
                )
        name = st.target.id
        self.literal_unrolled_stores |= _stored_names(st.body)
        out = []
        for k in range(n):
            fresh = self.fresh(f"lu_{name}")
            self.env.locals.add(fresh)
            item = ast.Assign(
                targets=[ast.Name(fresh, ast.Store())],
                value=ast.Subscript(value=copy.deepcopy(arg), slice=ast.Constant(k), ctx=ast.Load()),
            )
            body = [copy.deepcopy(b) for b in st.body]
            for b in body:
                for m in ast.walk(b):
                    if isinstance(m, ast.Name) and m.id == name:
                        m.id = fresh
            for m in [item] + body:
                ast.copy_location(m, st)
                ast.fix_missing_locations(m)
            self._unroll_literal_loops(ast.Module(body=body, type_ignores=[]))
            out += [item] + body
        return out or [ast.copy_location(ast.Pass(), st)]

    def _index_parameter_loop(self, s, in_loop):
        """``for v in t``, ``for j, v in enumerate(t[, start])`` and ``for a, b in
        zip(t, u, ...)`` around cross-lane ops, over tuples (the same in every lane or
        not) or arrays, as a uniform range loop by index::

            for _nq_itK in range(len(t)): v = t[_nq_itK]
            for _nq_itK in range(len(t)): j, v = start + _nq_itK, t[_nq_itK]
            for _nq_itK in range(min(len(t), len(u))): a, b = t[_nq_itK], u[_nq_itK]

        (Numba iterates a UniTuple or an array the same way, and refuses a
        heterogeneous tuple both ways). A sequence that is not a parameter the
        function never assigns (a local tuple, a tuple display ``(a[i], b[i])``, an
        attribute, an element, a device function's result) is evaluated once,
        before the loop, into a name of its own, as Python evaluates a loop's
        iterable once: the statements that assign those names are returned, to go
        before the loop. A loop over anything else (a ``range``, constants, a
        builtin's result such as ``reversed(t)``) is left as written, and [] is
        returned."""
        it = s.iter
        N = lambda n: ast.Name(n, ast.Load())  # noqa: E731
        call = lambda f, *a: ast.Call(func=N(f), args=list(a), keywords=[])  # noqa: E731
        pre = []

        def hoisted(node, stem):
            """A fresh local assigned *node* before the loop (in *pre*), read as a name."""
            tmp = self.fresh(stem)
            self.env.locals.add(tmp)
            assign = ast.copy_location(ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=node), s)
            pre.append(ast.fix_missing_locations(assign))
            return ast.copy_location(N(tmp), node)

        def once(node):
            """*node* as a name read in every iteration: itself where it is a
            parameter never assigned, else a fresh name assigned it before the loop;
            None where it is no sequence the loop can index."""
            if self._iterated_param(node):
                return node
            if isinstance(node, ast.Call):
                # a function's tuple or array, computed once (not a builtin:
                # reversed(t), iter(t) and the like are no sequence to index)
                fn = self.env.resolve(node.func)
                if fn is None or isinstance(fn, type) or getattr(fn, "__module__", None) == "builtins":
                    return None
            elif not isinstance(node, (ast.Name, ast.Tuple, ast.Attribute, ast.Subscript)):
                return None
            if isinstance(node, ast.Tuple) and any(isinstance(e, ast.Starred) for e in node.elts):
                return None
            if isinstance(node, (ast.Name, ast.Attribute)) and self.builtin_of(node) is not None:
                return None  # cuda.threadIdx and the like: left to the error below
            return hoisted(node, "seq")

        fn = self.env.resolve(it.func) if isinstance(it, ast.Call) else None
        if fn in (enumerate, zip):
            if it.keywords or not it.args:
                return []
            inner = it.args[0]
            zipped = (  # enumerate(zip(t, u)): (j, (t[j], u[j]))
                fn is enumerate
                and isinstance(inner, ast.Call)
                and not inner.keywords
                and bool(inner.args)
                and self.env.resolve(inner.func) is zip
            )
            if fn is enumerate and len(it.args) <= 2:
                seqs = [once(q) for q in inner.args] if zipped else [once(inner)]
                if any(q is None for q in seqs):
                    return []
                start = it.args[1] if len(it.args) == 2 else ast.Constant(0)
                # read in every iteration where it is a constant or a parameter never
                # assigned, else evaluated once before the loop (after the sequence, in
                # Python's order); an integer, as Numba requires ("Only integers
                # supported as start value in enumerate"), checked where it is typed
                constant = isinstance(start, ast.Constant) or (
                    isinstance(start, ast.UnaryOp)
                    and isinstance(start.op, ast.USub)
                    and isinstance(start.operand, ast.Constant)
                )
                if not (constant or self._iterated_param(start)):
                    start = hoisted(start, "start")
                start = ast.Call(func=ast.Name("_nq_enum_start", ast.Load()), args=[start], keywords=[])
            elif fn is zip:
                seqs, start = [once(a) for a in it.args], None
                if any(q is None for q in seqs):
                    return []
            else:
                return []
        elif self._constant_sequence(it) is not None:
            return []  # unrolled or indexed as constants (the caller)
        elif (seq := once(it)) is not None:
            seqs, start = [seq], None
        else:
            return []
        direct = fn not in (enumerate, zip)
        j = self.fresh("it")
        self.env.locals.add(j)  # a local: uniform where the loop is (_uniform_names)
        items = [call("_nq_seq_item", N(q.id), N(j)) for q in seqs]
        if fn is enumerate and zipped:
            items = [ast.Tuple(elts=items, ctx=ast.Load())]
        if start is not None:
            items.insert(0, ast.BinOp(left=start, op=ast.Add(), right=N(j)))
        if direct:
            binds = [ast.Assign(targets=[s.target], value=items[0])]
        elif isinstance(s.target, ast.Tuple) and len(s.target.elts) == len(items):
            binds = [ast.Assign(targets=[t], value=v) for t, v in zip(s.target.elts, items)]
        else:
            binds = [ast.Assign(targets=[s.target], value=ast.Tuple(elts=items, ctx=ast.Load()))]
        n = call("_nq_len", N(seqs[0].id))
        for q in seqs[1:]:
            n = call("_nq_min", n, call("_nq_len", N(q.id)))
        s.iter = call("_nq_range", n)
        s.target = ast.Name(j, ast.Store())
        s.body = [ast.copy_location(b, s) for b in binds] + s.body
        ast.fix_missing_locations(s)
        return self._normalise_block(pre, in_loop)

    def _iterated_param(self, node):
        """*node* names a parameter the function never assigns."""
        if not (isinstance(node, ast.Name) and node.id in self.env.params):
            return False
        return not any(
            isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Store) for n in ast.walk(self.fn)
        )

    def _constant_sequence(self, node):
        """The values of a tuple/list of int constants (literal or a global), or of a
        ``range`` with constant arguments and at most _UNROLL_MAX values; else None."""
        if isinstance(node, ast.Call) and self.env.resolve(node.func) is range and not node.keywords:
            args = [self._constant_int(a) for a in node.args]
            if args and all(a is not None for a in args) and len(args) <= 3:
                try:
                    vals = list(range(*args))
                except ValueError:
                    return None
                return vals if len(vals) <= _UNROLL_MAX else None
            return None
        if isinstance(node, (ast.Tuple, ast.List)):
            vals = [self._constant_int(e) for e in node.elts]
            if all(v is not None for v in vals):
                return vals
            return _same_kind_constants([_literal(e) for e in node.elts])
        if isinstance(node, (ast.Name, ast.Attribute)):
            obj = self.env.resolve(node)
            if isinstance(obj, tuple) and all(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in obj
            ):
                return [int(v) for v in obj]
            if isinstance(obj, tuple):
                return _same_kind_constants(list(obj))
        return None

    def _unrollable(self, s):
        if not isinstance(s.target, ast.Name) or s.orelse:
            return False
        for n in ast.walk(ast.Module(body=s.body, type_ignores=[])):
            if isinstance(n, (ast.Break, ast.Continue, ast.Return)):
                return False
            if isinstance(n, ast.Name) and n.id == s.target.id and isinstance(n.ctx, ast.Store):
                return False
        return True

    def _too_big_to_unroll(self, s, values):
        """Unrolling copies the body once per value: a body with a loop, or copies
        beyond _UNROLL_BUDGET statements, compile for minutes (fuzz seed 3 kernel 151:
        five copies of a body with a while loop and two inlined lane functions, 3,962
        generated lines, 205 s). Such a loop runs as a loop; its variable is then a
        selector that is the same in every lane, not a constant."""
        stmts = [n for st in s.body for n in ast.walk(st) if isinstance(n, ast.stmt)]
        if any(isinstance(n, (ast.For, ast.While)) for n in stmts):
            return True
        return len(values) * sum(self._unroll_weight(n) for n in stmts) > _UNROLL_BUDGET

    def _unroll_weight(self, s):
        """What one statement of a copy costs in generated code, in plain statements:
        a cross-lane op splits the lane loops around it (3); an ``if`` computes a
        mask and emits each side with and without it (6). Counting every statement
        as one unrolled fuzz seed 22 kernel 61 (five copies of a body with two
        masked ``if``s and a conditional expression): 1,656 generated lines, two
        minutes to compile on the CPU target for release and two more for debug. A
        call to a lane function with cross-lane ops is inlined: 3 per statement of
        its body (fuzz seed 3000 kernel 3018, five copies of a call to an 8-statement
        lane function counted as 3 each: 1,308 generated lines, 36 s to compile)."""
        if isinstance(s, ast.If):
            return 6
        from ..xpu import Dispatcher

        inlined = 0
        for n in ast.walk(s):
            if isinstance(n, ast.Call):
                f = self.env.resolve(n.func)
                if isinstance(f, Dispatcher) and uses_wave_features(f):
                    inlined += 3 * statement_count(f)
        if inlined:
            return 3 + inlined
        if any(self.is_xl(n) for n in ast.walk(s)):
            return 3
        return 1

    def _index_constants(self, s, values):
        """``for k in (a, b, c): body`` as ``for u in range(3): k = a if u == 0 else ...``."""
        name = s.target.id if isinstance(s.target, ast.Name) else None
        if name is None or not values:
            return
        u = self.fresh("u")
        pick = ast.Constant(values[-1])
        for pos in range(len(values) - 2, -1, -1):
            pick = ast.IfExp(
                test=ast.Compare(left=ast.Name(u, ast.Load()), ops=[ast.Eq()], comparators=[ast.Constant(pos)]),
                body=ast.Constant(values[pos]),
                orelse=pick,
            )
        bind = ast.copy_location(ast.Assign(targets=[ast.Name(name, ast.Store())], value=pick), s)
        s.target = ast.copy_location(ast.Name(u, ast.Store()), s.target)
        s.iter = ast.copy_location(
            ast.Call(func=ast.Name("_nq_range", ast.Load()), args=[ast.Constant(len(values))], keywords=[]), s.iter
        )
        s.body = [bind] + s.body
        for n in (bind, s.target, s.iter):
            ast.fix_missing_locations(n)

    def _var_in_op(self, s):
        """Does the loop variable of *s* reach a cross-lane op's selector (the argument a
        constant makes an immediate shuffle)? A value operand does not need it constant."""
        if not isinstance(s.target, ast.Name):
            return False
        name = s.target.id
        for n in ast.walk(ast.Module(body=s.body, type_ignores=[])):
            if isinstance(n, ast.Call) and self.is_xl(n):
                op = self.op_of(n)
                if op.selector is None:
                    continue
                sel = [k.value for k in n.keywords if k.arg == op.selector]
                if len(n.args) > 1:
                    sel.append(n.args[1])
                for a in sel:
                    if any(isinstance(m, ast.Name) and m.id == name for m in ast.walk(a)):
                        return True
        return False

    def _unroll(self, s, values, in_loop):
        """``for k in (16, 8, 4, 2, 1):`` around cross-lane ops: one copy of the body
        per value with ``k`` replaced by the constant, so selectors stay constants."""
        if not isinstance(s.target, ast.Name) or s.orelse:
            self.error("a loop over constants around cross-lane ops needs a plain name and no else", s)
        name = s.target.id
        for n in ast.walk(ast.Module(body=s.body, type_ignores=[])):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
                self.error(f"{name} is assigned inside the loop over constants that defines it", n)

        class Bind(ast.NodeTransformer):
            def __init__(self, value):
                self.value = value

            def visit_Name(self, n):
                if n.id == name and isinstance(n.ctx, ast.Load):
                    c = ast.copy_location(ast.Constant(self.value), n)
                    c._nq_unrolled = True  # see normalise.py _unrolled
                    return c
                return n

        out = []
        for v in values:
            body = [Bind(v).visit(copy.deepcopy(st)) for st in s.body]
            out.extend(self._normalise_block(body, in_loop))
        self.unrolled_stores |= _stored_names(out)  # (an op's temporaries too)
        if values:
            last = ast.copy_location(
                ast.Assign(targets=[ast.Name(name, ast.Store())], value=ast.Constant(values[-1])), s
            )
            ast.fix_missing_locations(last)
            out.append(last)
        return out
