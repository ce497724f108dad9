"""Segmentation (the front end's last phase): a normalised statement list
becomes wave items (cpu/waveitems.py): straight-line lane code, uniform
statements, cross-lane calls, barriers, masked and uniform ``if``s and loops,
jumps; masked ``for`` loops become ``while True`` loops.
"""

from __future__ import annotations

import ast

from .waveitems import Region, Uniform, XLCall, If, UniformIf, Loop, Jump, Barrier, BarrierReduce

__all__ = ["Segmenter", "stores_any"]


def stores_any(s, names):
    """Does *s* assign one of *names*?"""
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in names for n in ast.walk(s))


class Segmenter:
    """Segmentation into wave items, called by ``Frontend.__init__`` (``items``). Reads
    the Frontend's ``env``, ``uniform`` and its ``error``, ``fresh``, ``builtin_of``,
    ``contains_xl``, ``_constant_int``, ``_is_syncwarp``, ``_check_syncwarp_mask`` and the
    Uniformity methods."""

    # -- segmentation ----------------------------------------------------------------
    def _escapes(self, s):
        """Does *s* contain a return, or a break/continue that leaves *s*?"""

        def walk(node, in_loop):
            if isinstance(node, ast.Return):
                return True
            if isinstance(node, (ast.Break, ast.Continue)):
                return not in_loop
            if isinstance(node, (ast.FunctionDef, ast.Lambda)):
                return False
            inner = in_loop or isinstance(node, (ast.For, ast.While))
            for child in ast.iter_child_nodes(node):
                if isinstance(node, (ast.For, ast.While)) and child in node.orelse:
                    if walk(child, in_loop):
                        return True
                elif walk(child, inner):
                    return True
            return False

        return walk(s, False)

    def _is_masked(self, s, U=None):
        if isinstance(s, (ast.Return, ast.Break, ast.Continue)):
            return True
        if getattr(s, "_nq_op", None) is not None:
            return True
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and self.builtin_of(s.value.func) == "syncthreads":
            return True
        if self.lift and isinstance(s, (ast.If, ast.For, ast.While)) and stores_any(s, self.lift):
            return True
        return self.contains_xl(s) or self._escapes(s)

    def _segment(self, stmts, top):
        items = []
        region = []

        def flush():
            if region:
                items.append(Region(list(region)))
                region.clear()

        for s in stmts:
            if not self._is_masked(s):
                if self._is_uniform_stmt(s):
                    flush()
                    items.append(Uniform(s))
                else:
                    region.append(s)
                continue
            flush()
            items.extend(self._segment_masked(s))
        flush()
        return items

    def _is_uniform_stmt(self, s):
        if isinstance(s, ast.AugAssign):
            return isinstance(s.target, ast.Name) and s.target.id in self.uniform
        return (
            isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name)
            and s.targets[0].id in self.uniform
        )

    def _segment_masked(self, s):
        op = getattr(s, "_nq_op", None)
        if op is not None:
            return [
                XLCall(
                    s.targets[0].id,
                    op,
                    list(s.value.args),
                    s,
                    getattr(s, "_nq_cucheck", None),
                    getattr(s, "_nq_spelled", None),
                )
            ]
        red = getattr(s, "_nq_barrier", None)
        if red is not None:
            return [BarrierReduce(s.targets[0].id, red, s.value.args[0].id, s)]
        if isinstance(s, ast.Return):
            # a kernel's ``return None`` is its bare ``return`` (numba.cuda: void)
            none = isinstance(s.value, ast.Constant) and s.value.value is None
            return [Jump("return", s, None if none else s.value)]
        if isinstance(s, ast.Break):
            return [Jump("break", s)]
        if isinstance(s, ast.Continue):
            return [Jump("continue", s)]
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and self.builtin_of(s.value.func) == "syncthreads":
            return [Barrier(s)]
        if self._is_syncwarp(s) and self.builtin_of(s.value.func) != "syncwarp":
            return [Uniform(s)]  # a memory fence: ends the region, then one fence
        if self._is_syncwarp(s):
            self._check_syncwarp_mask(s.value)
            # a wave barrier: the lane loops of a region run lane after lane, so the
            # region ends here; every lane's writes before it are done before any
            # lane reads after it (docs/semantics.md, memory between threads)
            return []
        if isinstance(s, ast.If) and self._uniform_control(s, self.uniform):
            return [UniformIf(s.test, self._segment(s.body, False), self._segment(s.orelse, False), s)]
        if isinstance(s, ast.If):
            cond = self.fresh("c")
            assign = ast.copy_location(
                ast.Assign(
                    targets=[ast.Name(cond, ast.Store())],
                    value=ast.Call(func=ast.Name("_nq_bool", ast.Load()), args=[s.test], keywords=[]),
                ),
                s,
            )
            ast.fix_missing_locations(assign)
            return [Region([assign]), If(cond, self._segment(s.body, False), self._segment(s.orelse, False), s)]
        if isinstance(s, ast.While) and self._uniform_control(s, self.uniform):
            return [Loop(self._segment(s.body, False), s, test=s.test)]
        if isinstance(s, ast.While):
            if s.orelse:
                self.error("while/else around cross-lane ops or jumps is not supported", s)
            pre = []
            body = list(s.body)
            if not (isinstance(s.test, ast.Constant) and s.test.value is True):
                brk = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=s.test), body=[ast.Break()], orelse=[])
                ast.copy_location(brk, s)
                ast.fix_missing_locations(brk)
                body = [brk] + body
            return pre + [Loop(self._segment(body, False), s)]
        if isinstance(s, ast.For):
            if s.orelse:
                self.error("for/else around cross-lane ops or jumps is not supported", s)
            rng = self._uniform_range(s, self.uniform)
            if rng is not None and self._uniform_control(s, self.uniform):
                return [Loop(self._segment(s.body, False), s, uniform=(s.target.id, rng))]
            return self._masked_range_loop(s)
        self.error(f"a {type(s).__name__} statement cannot hold cross-lane ops or jumps", s)

    def _masked_range_loop(self, s):
        it = s.iter
        if not self._range_call(it):  # (cpu/uniformity.py)
            self.error(
                "a loop around cross-lane ops must iterate over range(...) itself, or over a tuple or "
                "an array (a name, a tuple display, an element or an attribute), directly or through "
                f"enumerate(...) or zip(...) of those; got {ast.unparse(it)[:80]}: loop over "
                "range(...) and compute the other values from its index",
                s,
            )
        args = list(it.args)
        start, stop, step = (
            (ast.Constant(0), args[0], ast.Constant(1))
            if len(args) == 1
            else (args[0], args[1], args[2] if len(args) == 3 else ast.Constant(1))
        )
        i, e, st = self.fresh("i"), self.fresh("e"), self.fresh("s")
        N = lambda n, ctx=ast.Load: ast.Name(n, ctx())  # noqa: E731
        init = [
            ast.Assign(targets=[N(i, ast.Store)], value=start),
            ast.Assign(targets=[N(e, ast.Store)], value=stop),
            ast.Assign(targets=[N(st, ast.Store)], value=step),
        ]
        const_step = self._constant_int(step)
        if const_step == 0:
            self.error("range() step must not be zero", s)
        if const_step is not None:
            test = ast.Compare(left=N(i), ops=[ast.Lt() if const_step > 0 else ast.Gt()], comparators=[N(e)])
        else:
            test = ast.BoolOp(
                op=ast.Or(),
                values=[
                    ast.BoolOp(
                        op=ast.And(),
                        values=[
                            ast.Compare(left=N(st), ops=[ast.Gt()], comparators=[ast.Constant(0)]),
                            ast.Compare(left=N(i), ops=[ast.Lt()], comparators=[N(e)]),
                        ],
                    ),
                    ast.BoolOp(
                        op=ast.And(),
                        values=[
                            ast.Compare(left=N(st), ops=[ast.Lt()], comparators=[ast.Constant(0)]),
                            ast.Compare(left=N(i), ops=[ast.Gt()], comparators=[N(e)]),
                        ],
                    ),
                ],
            )
        head = [
            ast.If(test=ast.UnaryOp(op=ast.Not(), operand=test), body=[ast.Break()], orelse=[]),
            ast.Assign(targets=[s.target], value=N(i)),
            ast.AugAssign(target=N(i, ast.Store), op=ast.Add(), value=N(st)),
        ]
        for n in init + head:
            ast.copy_location(n, s)
            ast.fix_missing_locations(n)
        body = self._segment(head + list(s.body), False)
        return [Region(init), Loop(body, s)]
