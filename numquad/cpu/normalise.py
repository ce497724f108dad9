"""Normalisation (the front end's second phase): each statement checked and
rewritten so that every cross-lane call, barrier reduction and inlined lane
function runs in a statement of its own (``_nq_xN = OP(_nq_aN, ...)``), refused
where that would change Python's order of evaluation; masked ``while`` tests
become breaks, asserts with ops become ``if``s.
"""

from __future__ import annotations

import ast
import copy
import linecache

from .. import _desugar
from .._control import MISSING as _MISSING
from . import cudaapi as _cudaapi
from .. import _power
from .names import RESERVED

__all__ = ["Normaliser"]


def _assigns_target(s):
    """Does the body of ``for`` loop *s* assign its (plain name) target?"""
    return isinstance(s.target, ast.Name) and any(
        isinstance(n, ast.Name) and n.id == s.target.id and isinstance(n.ctx, ast.Store)
        for n in ast.walk(ast.Module(body=s.body, type_ignores=[]))
    )


def _unrolled(expr):
    """Whether *expr* holds a constant that unrolling a loop over constants put
    there (cpu/unroll.py ``Unroller._unroll``): the loop variable of the user's code."""
    return any(getattr(n, "_nq_unrolled", False) for n in ast.walk(expr))


#: The numba.cuda spellings' helpers (cpu/cudaapi.py: the mask, predicate, lane and
#: match-value checks around a warp function's op): no side effects.
_WARP_CHECK_HELPERS = tuple(
    f"{_desugar.RESERVED}cu_{n}" for n in ("match", "mask_", "pred_", "shfl_", "lane_", "mval_", "vote_", "hint_")
)


def _exits_loop(loop):
    """Does a ``break`` or ``continue`` of *loop* itself (not of a loop inside it) occur?"""
    todo = list(loop.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Break, ast.Continue)):
            return True
        if isinstance(n, (ast.For, ast.While)):
            todo.extend(n.orelse)  # a break there leaves *loop*
            continue
        if not isinstance(n, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(n))
    return False


class Normaliser:
    """Normalisation of statement lists (``_normalise_block``) and hoisting of
    cross-lane calls (``_hoist``). Reads the Frontend's ``env``, ``allocs``,
    ``filename``, ``no_unroll`` and its ``error``, ``fresh``, ``op_of``,
    ``builtin_of``, ``is_xl``, ``contains_xl``, ``_constant_int``; calls the
    Unroller, Allocations, Inliner and Segmenter (``_escapes``) methods; adds to
    ``ops_used``."""

    # -- normalisation --------------------------------------------------------------
    def _normalise_block(self, stmts, in_loop):
        out = []
        for s in stmts:
            out.extend(self._normalise_stmt(s, in_loop))
        return out

    def _check_no_xl(self, node, what):
        """Refuse a cross-lane op, a lane function that uses one (or thread builtins)
        or a barrier reduction inside *what*, where only some lanes evaluate it: they
        would run in every lane (numquad/_desugar.py lowers such an expression to
        statements where the order allows, and leaves it here where it does not)."""
        for n in ast.walk(node):
            if not isinstance(n, ast.Call):
                continue
            if self.is_xl(n):
                name = self.op_of(n).qualname
            elif self.builtin_of(n.func) in _cudaapi.BARRIER_REDUCE:
                name = f"cuda.{self.builtin_of(n.func)}"
            elif self._inlined(n):
                name = f"{self.env.resolve(n.func).__name__}() (a lane function with cross-lane ops or thread builtins)"
            else:
                continue
            why = (
                ""
                if what in ("a lambda", "a comprehension or generator")
                else " (the statement also reads memory that a call in it may write, or the reverse, "
                "so it cannot be split into statements in Python's order)"
            )
            self.error(
                f"{name} inside {what}: cross-lane ops cannot be masked there; assign "
                f"the result to a variable in a plain statement first{why}",
                n,
            )

    def _normalise_stmt(self, s, in_loop):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            what = "class" if isinstance(s, ast.ClassDef) else "async def"
            self.error(
                f"a nested {what} ({getattr(s, 'name', 'lambda')}) is not supported by the "
                f"CPU target; define a function at module level with @xpu.jit (a lane "
                f"function) and call it",
                s,
            )
        if isinstance(s, ast.Delete):
            self.error(
                "`del` is not supported in a kernel or lane function (Numba cannot compile "
                "it): assign the name a new value, or leave it",
                s,
            )
        if isinstance(s, (ast.Assign, ast.For)) and any(
            isinstance(n, ast.Starred)
            for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
            for n in ast.walk(t)
        ):
            self.error(
                "starred unpacking (`a, *rest = ...`) is not supported in a kernel or lane "
                "function (Numba cannot compile it): unpack every element by name",
                s,
            )
        if isinstance(s, (ast.Global, ast.Nonlocal)):
            kind = type(s).__name__.lower()
            written = [n for n in s.names if n in self.env.locals]
            if written:
                self.error(
                    f"{kind} {written[0]}: a kernel cannot assign a Python "
                    f"{'global' if kind == 'global' else 'variable of an enclosing function'}; "
                    f"pass an array and write into it",
                    s,
                )
            return []  # a name only read is the global/closure value anyway
        if isinstance(s, (ast.Try, ast.With, ast.AsyncWith, ast.AsyncFor, ast.Global, ast.Nonlocal)) or type(
            s
        ).__name__ in ("TryStar", "Match"):
            if self.contains_xl(s):
                self._check_no_xl(s, f"a {type(s).__name__.lower()} statement")
            return [s]
        if isinstance(s, ast.Assert) and self.contains_xl(s):
            # ``assert Wave.reduceSum(v) >= 0, msg``: ``if not ...: raise AssertionError(msg)``
            exc = ast.Call(func=ast.Name("AssertionError", ast.Load()), args=[s.msg] if s.msg else [], keywords=[])
            new = ast.If(
                test=ast.UnaryOp(op=ast.Not(), operand=s.test),
                body=[ast.copy_location(ast.Raise(exc=exc, cause=None), s)],
                orelse=[],
            )
            ast.copy_location(new, s)
            ast.fix_missing_locations(new)
            return self._normalise_stmt(new, in_loop)
        if isinstance(s, ast.If):
            pre, s.test = self._checked_hoist(s.test)
            s.body = self._normalise_block(s.body, in_loop)
            s.orelse = self._normalise_block(s.orelse, in_loop)
            return pre + [s]
        if isinstance(s, ast.While):
            s.body = self._normalise_block(s.body, True)
            s.orelse = self._normalise_block(s.orelse, in_loop)
            if self.contains_xl(s.test):
                if s.orelse:
                    self.error("a while/else loop whose test has a cross-lane op", s)
                pre, test = self._checked_hoist(s.test)
                brk = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=test), body=[ast.Break()], orelse=[])
                ast.copy_location(brk, s)
                ast.fix_missing_locations(brk)
                s.test = ast.copy_location(ast.Constant(True), s)
                s.body = pre + [brk] + s.body
            return [s]
        seq_pre = []
        if isinstance(s, ast.For) and self.contains_xl(s) and not s.orelse:
            seq_pre = self._index_parameter_loop(s, in_loop)
        # (a loop that a lane may leave by ``return`` is segmented like one around
        # an op: probe: ``for c in (3, 5, 7): if x % c == 0: return`` was refused)
        if isinstance(s, ast.For) and (
            self.contains_xl(s) or self._escapes(s) or any(self._inlined(n) for n in ast.walk(s))
        ):
            consts = self._constant_sequence(s.iter)
            is_range = isinstance(s.iter, ast.Call)
            # a range is unrolled only when its variable reaches an op's selector (a
            # constant selector); unrolling nested loops for nothing multiplied the code
            # (fuzz seed 2 kernel 126: 20 copies of a while loop, 87 s to compile)
            if consts is not None and self.no_unroll:
                if not is_range:
                    self._index_constants(s, consts)  # as below: by index, as Numba runs it
            elif consts is not None and not (is_range and not (self._unrollable(s) and self._var_in_op(s))):
                # a loop left by break/continue is not written out copy by copy: each
                # copy would need the mask of the lanes still in the loop (probe: `for
                # c in (3, 5): if x % c == 0: break` around an op was refused)
                if not self._too_big_to_unroll(s, consts) and not _exits_loop(s) and not _assigns_target(s):
                    return self._unroll(s, consts, in_loop)
                # (``for k in (7, 16): k -= 8`` assigns its variable: not a constant in the
                # body, so a loop over the constants by index, as numba.cuda runs it)
                if not is_range:
                    self._index_constants(s, consts)  # a loop with a uniform selector
        if isinstance(s, ast.For):
            pre, s.iter = self._checked_hoist(s.iter)
            s.body = self._normalise_block(s.body, True)
            s.orelse = self._normalise_block(s.orelse, in_loop)
            return seq_pre + pre + [s]
        if isinstance(s, ast.Return):
            if s.value is None:
                return [s]
            pre, s.value = self._checked_hoist(s.value)
            return pre + [s]
        if (
            isinstance(s, ast.Assign)
            and isinstance(s.value, ast.Call)
            and self.builtin_of(s.value.func) in ("shared.array", "local.array")
        ):
            self._allocation(s)
            return []
        inner = self._allocation_inside(s)
        if inner is not None:
            # ``v = cuda.shared.array(0, np.int32)[1:]`` (numba.cuda's docs): the array
            # under a name of its own first, then the statement reads that name
            parent, field, call = inner
            tmp = self.fresh("arr")
            self.env.locals.add(tmp)
            self._allocation(ast.copy_location(ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=call), s))
            setattr(parent, field, ast.copy_location(ast.Name(tmp, ast.Load()), call))
            return self._normalise_stmt(s, in_loop)
        if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
            pre, new = self._hoist_stmt(s)
            if isinstance(new, ast.Expr) and isinstance(new.value, ast.Name) and new.value.id.startswith(RESERVED):
                return pre  # a bare op call whose result is unused
            return pre + [new]
        return [s]

    def _effects(self, n):
        """(reads memory, writes memory) of evaluating *n* itself (not its operands)."""
        from ..xpu import Dispatcher

        if isinstance(n, ast.Subscript):
            # (a store comes after the whole statement; ``a.shape[0]`` reads no memory,
            # nor does an element of a thread's own local array)
            v = n.value
            if isinstance(v, ast.Attribute) and v.attr in ("shape", "strides"):
                return False, False
            if isinstance(v, ast.Name) and self.allocs.get(v.id, ("",))[0] == "local":
                return False, False
            return isinstance(n.ctx, ast.Load), False
        if not isinstance(n, ast.Call):
            return False, False
        if self.builtin_of(n.func) in _cudaapi.BARRIER_REDUCE:
            # a barrier: after it, the other threads' stores that follow it may be there
            # (a probe: ``s[t] = s[t ^ 1] + 0 * cuda.syncthreads_count(1)`` loaded
            # s[t ^ 1] after the barrier, lane by lane, and read its neighbour's store)
            return True, True
        op = self.op_of(n)
        if op is not None or (isinstance(n.func, ast.Name) and n.func.id.startswith(_WARP_CHECK_HELPERS)):
            return False, False
        if isinstance(n.func, ast.Name) and n.func.id == _power.NAME:
            return False, False  # ``a ** b`` (numquad/_power.py): arithmetic
        f = self.env.resolve(n.func)
        if isinstance(f, Dispatcher):
            return True, _desugar.may_write(f) or any(self._passes_writer(a) for a in n.args)
        kind = _desugar.call_kind(self.env, n, _MISSING)
        return (False, False) if kind == "pure" else (True, True)

    def _passes_writer(self, arg):
        """Is *arg* a function (``apply(bump, a, i)``) that may write memory when the
        callee calls it?"""
        from ..xpu import Dispatcher, is_foreign_device_function

        if not isinstance(arg, (ast.Name, ast.Attribute)):
            return False
        obj = self.env.resolve(arg)
        if obj is _MISSING or not callable(obj) or isinstance(obj, type):
            return False
        if isinstance(obj, Dispatcher) or is_foreign_device_function(obj):
            return _desugar.may_write(obj)
        return _desugar.call_kind(self.env, ast.Call(func=arg, args=[], keywords=[]), _MISSING) != "pure"

    def _check_order(self, parts):
        """Refuse a statement whose hoisting would change what it computes.

        A cross-lane op, a ``syncthreads_count/_and/_or`` and an inlined lane function
        run before the rest of their statement (``_hoist``); Python evaluates what is
        left of them first. Where one side may write memory that the other reads or
        writes (``out[i] = bump(buf, i) + Wave.reduceSum(buf[i])``, with ``bump`` a
        device function that writes ``buf[i]``), that order would be observed."""
        seq, start = [], {}

        def post(n):
            start[id(n)] = len(seq)
            for c in ast.iter_child_nodes(n):
                if not isinstance(c, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                    post(c)
            seq.append(n)

        for p in parts:
            post(p)
        # an op where only some lanes evaluate it is refused by _hoist with its own message
        masked = set()
        for p in parts:
            for n in ast.walk(p):
                sides = (
                    [n.body, n.orelse]
                    if isinstance(n, ast.IfExp)
                    else n.values[1:]
                    if isinstance(n, ast.BoolOp)
                    else n.comparators[1:]
                    if isinstance(n, ast.Compare)
                    else []
                )
                masked |= {id(m) for side in sides for m in ast.walk(side)}
        effects = [self._effects(n) for n in seq]

        hoisted_calls = [k for k, n in enumerate(seq) if id(n) not in masked and self._hoisted(n)]
        # what runs before a hoisted call both in Python's order and hoisted: an earlier
        # hoisted call and what it evaluates (hoisted calls keep their order), so
        # ``out[t] = f(t) + f(t)`` is two calls in Python's order. Not what an enclosing
        # hoisted call evaluates before it: the calls inside an op's or an inlined lane
        # function's arguments run before those arguments (``lf(a[i],
        # Wave.reduceSum(bump(a, i)))`` and ``Wave.reduceSum(a[i] +
        # Wave.reduceSum(bump(a, i)))`` would load a[i] after bump)
        spans = {k: range(start[id(seq[k])], k + 1) for k in hoisted_calls}
        for k in hoisted_calls:
            n = seq[k]
            first = start[id(n)]
            moved = set()
            for h, span in spans.items():
                if h != k and not (span.start <= first and k < h):  # h does not enclose n
                    moved.update(span)
            before = [effects[j] for j in range(first) if j not in moved]
            lr = any(e[0] for e in before)
            lw = any(e[1] for e in before)
            sr = any(e[0] for e in effects[first : k + 1])
            sw = any(e[1] for e in effects[first : k + 1])
            if (lw and (sr or sw)) or (sw and lr):
                what = it = ast.unparse(n)
                if RESERVED in what:
                    # (a numba.cuda spelling or a lifted nested function, rewritten under
                    # numquad's names: the user's line instead)
                    line = linecache.getline(self.filename, getattr(n, "lineno", 0)).strip()
                    what = f"the cross-lane call in `{line}`" if line else "a cross-lane call"
                    it = "that call"
                barrier = isinstance(n, ast.Call) and self.builtin_of(n.func) in _cudaapi.BARRIER_REDUCE
                why = (
                    "it is a barrier, after which the loads Python evaluates before it would "
                    "read other threads' later stores"
                    if barrier
                    else "a call in that statement may write memory that the other side reads"
                )
                self.error(
                    f"{what} runs before the rest of its statement on the CPU target, "
                    f"and {why}; assign {it} to a variable in a statement of its own "
                    f"(where it should run: before or after the {'loads' if barrier else 'call'})",
                    n,
                )

    def _hoist_stmt(self, s):
        if isinstance(s, ast.AugAssign):
            # ``a[i] += v`` loads a[i] before it evaluates v
            target = copy.copy(s.target)
            if isinstance(target, ast.Subscript):
                target.ctx = ast.Load()
            self._check_order([target, s.value])
        elif isinstance(s, ast.Assign):
            if len(s.targets) > 1 or isinstance(s.targets[0], (ast.Tuple, ast.List)):
                # ``v, out[i, Wave.reduceMax(v)] = 50, 1``, ``a[i] = out[Wave.f(a[i])] = v``:
                # Python stores the targets left to right, each after the one before
                for t in s.targets:
                    for n in ast.walk(t):
                        if self._hoisted(n):
                            self.error(
                                f"{ast.unparse(n)} in a target of an assignment with several "
                                f"targets: Python evaluates it after the targets to its left "
                                f"are stored, the CPU target before; assign it to a variable "
                                f"in a statement of its own first",
                                n,
                            )
            self._check_order([s.value] + list(s.targets))
        elif getattr(s, "value", None) is not None:
            self._check_order([s.value] + ([s.target] if getattr(s, "target", None) else []))
        pre = []
        for field in ("value", "target", "targets"):
            v = getattr(s, field, None)
            if v is None:
                continue
            if isinstance(v, list):
                new = []
                for t in v:
                    p, t2 = self._hoist(t)
                    pre += p
                    new.append(t2)
                setattr(s, field, new)
            else:
                p, v2 = self._hoist(v)
                pre += p
                setattr(s, field, v2)
        return pre, s

    def _checked_hoist(self, expr):
        """:meth:`_hoist` of a statement's one expression *expr*, refused first where
        hoisting would change what it computes (:meth:`_check_order`)."""
        self._check_order([expr])
        return self._hoist(expr)

    def _hoist(self, expr):
        """Pull cross-lane calls out of *expr*: (statements to run first, new expr)."""
        pre = []
        hoister = self

        class T(ast.NodeTransformer):
            def visit_Lambda(self, node):
                hoister._check_no_xl(node, "a lambda")
                return node

            def _comp(self, node):
                hoister._check_no_xl(node, "a comprehension or generator")
                return node

            visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comp

            def visit_IfExp(self, node):
                # the test always runs; only one of the two values does
                hoister._check_no_xl(node.body, "a conditional expression (x if c else y)")
                hoister._check_no_xl(node.orelse, "a conditional expression (x if c else y)")
                node.test = self.visit(node.test)
                return node

            def visit_BoolOp(self, node):
                for v in node.values[1:]:
                    hoister._check_no_xl(v, "the right side of and/or")
                return self.generic_visit(node)

            def visit_Compare(self, node):
                # a < b < c: c only where a < b (what numquad/_desugar.py did not lower)
                for v in node.comparators[1:]:
                    hoister._check_no_xl(v, "a later operand of a comparison chain (a < b < c)")
                return self.generic_visit(node)

            def visit_Call(self, node):
                op = hoister.op_of(node)
                if op is None and hoister.builtin_of(node.func) in _cudaapi.BARRIER_REDUCE:
                    return hoister._hoist_barrier_reduce(node, pre, self)
                if op is not None and op.kind == "query":
                    complaint = op.check_arity(node.args, {k.arg: k.value for k in node.keywords})[1]
                    if complaint:  # (it takes nothing)
                        hoister.error(complaint, node)
                if op is None or op.kind == "query":
                    callee = hoister._inlinable(node)
                    if callee is not None:
                        return hoister._inline_call(node, callee, pre, self)
                    return self.generic_visit(node)
                return hoister._hoist_call(node, op, pre, self)

        new = T().visit(expr)
        return pre, new

    def _hoist_call(self, node, op, pre, visitor):
        args, complaint = op.check_arity(node.args, {k.arg: k.value for k in node.keywords})
        if complaint:
            self.error(complaint, node)
        new_args = []
        for i, a in enumerate(args):
            a = visitor.visit(a)
            if i == 1:  # the lane selector
                const = self._constant_int(a)
                if (
                    const is not None
                    and op.check_selector_constant(const)
                    and _unrolled(a)
                    and -(2**63) <= const < 2**64
                ):
                    # constant only through an unrolled loop (``for k in (0, 31):``): the
                    # loop variable is a runtime selector on the other targets, so it is
                    # one here too (wrapped, or read in exact arithmetic), not refused
                    const = None
                if const is not None:
                    msg = op.check_selector_constant(const)
                    if msg:
                        self.error(msg, node)
                    new_args.append(ast.copy_location(ast.Constant(const), a))
                    continue
                if op.sel_wrap is None and op.sel_range is not None and op.sel_kind not in ("up", "down"):
                    self.error(f"{op.qualname}: {op.selector} must be a constant", node)
            if isinstance(a, ast.Name) and a.id in self.env.locals:
                new_args.append(a)  # already a lane value
                continue
            tmp = self.fresh("a")
            pre.append(ast.copy_location(ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=a), node))
            new_args.append(ast.copy_location(ast.Name(tmp, ast.Load()), a))
        target = self.fresh("x")
        call = ast.Call(func=node.func, args=new_args, keywords=[])
        ast.copy_location(call, node)
        stmt = ast.copy_location(ast.Assign(targets=[ast.Name(target, ast.Store())], value=call), node)
        ast.fix_missing_locations(stmt)
        stmt._nq_op = op
        stmt._nq_spelled = getattr(node, "_nq_spelled", None)
        check = getattr(node, "_nq_cucheck", None)
        if check is not None:
            # (debug) numba.cuda's mask, a second time: it has no effects (_with_check)
            tmp = self.fresh("a")
            pre.append(
                ast.fix_missing_locations(
                    ast.copy_location(
                        ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=visitor.visit(check[1])), node
                    )
                )
            )
            stmt._nq_cucheck = (check[0], tmp)
        pre.append(stmt)
        self.ops_used.add(op.qualname)
        return ast.copy_location(ast.Name(target, ast.Load()), node)

    def _hoist_barrier_reduce(self, node, pre, visitor):
        """``syncthreads_count/_and/_or(pred)`` -> ``_nq_aN = pred`` and a statement
        ``_nq_xN = <call>(_nq_aN)`` of its own (a BarrierReduce item)."""
        b = self.builtin_of(node.func)
        if node.keywords or len(node.args) != 1:
            self.error(f"cuda.{b}(pred) takes 1 argument; got {len(node.args) + len(node.keywords)}", node)
        tmp, target = self.fresh("a"), self.fresh("x")
        pre.append(
            ast.copy_location(ast.Assign(targets=[ast.Name(tmp, ast.Store())], value=visitor.visit(node.args[0])), node)
        )
        call = ast.copy_location(ast.Call(func=node.func, args=[ast.Name(tmp, ast.Load())], keywords=[]), node)
        stmt = ast.copy_location(ast.Assign(targets=[ast.Name(target, ast.Store())], value=call), node)
        ast.fix_missing_locations(stmt)
        stmt._nq_barrier = b
        pre[-1] = ast.fix_missing_locations(pre[-1])
        pre.append(stmt)
        return ast.copy_location(ast.Name(target, ast.Load()), node)
