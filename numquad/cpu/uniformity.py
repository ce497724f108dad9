"""Uniformity: which locals hold the same value in every lane of a wave (a
greatest fixpoint over the normalised body), and which masked statements have
uniform control (``UniformIf``, uniform loops).
"""

from __future__ import annotations

import ast

import numpy as np

from .. import _control
from .._control import MISSING as _MISSING
from .. import ops as _ops
from . import cudaapi as _cudaapi
from .names import RESERVED
from .resolve import builtin_name

__all__ = ["Uniformity"]


def _unpack_target(t):
    """*t* is a name, or a (nested) tuple of names."""
    return isinstance(t, ast.Name) or isinstance(t, ast.Tuple) and all(map(_unpack_target, t.elts))


class Uniformity:
    """Uniformity analysis, called by ``Frontend.__init__`` (``uniform``) and the
    Segmenter. Reads the Frontend's ``env``, ``allocs`` and its ``builtin_of``,
    ``_is_masked``."""

    # -- uniformity -----------------------------------------------------------------
    _UNIFORM_BUILTINS = _control.UNIFORM_BUILTINS
    _PURE_CALLS = {len, min, max, int, float, abs, bool, range, _control.seq_item, _control.enum_start}
    #: array methods that return a view of the array (no copy, no side effect)
    _VIEW_METHODS = ("reshape", "transpose", "view")

    def _is_uniform_expr(self, e, U):
        if isinstance(e, ast.Constant):
            return True
        if isinstance(e, ast.Name):
            if e.id in U:
                return True
            if e.id in self.env.locals:
                return False
            obj = self.env.lookup(e.id)
            return obj is not _MISSING and builtin_name(obj) is None and _ops.of_function(obj) is None
        if isinstance(e, ast.Attribute):
            b = self.builtin_of(e)
            if b is not None:
                return b in self._UNIFORM_BUILTINS
            return self._is_uniform_expr(e.value, U)
        if isinstance(e, ast.Subscript):
            return self._is_uniform_expr(e.value, U) and self._is_uniform_expr(e.slice, U)
        if isinstance(e, ast.Tuple):
            return all(self._is_uniform_expr(x, U) for x in e.elts)
        if isinstance(e, ast.BinOp):
            return self._is_uniform_expr(e.left, U) and self._is_uniform_expr(e.right, U)
        if isinstance(e, ast.UnaryOp):
            return self._is_uniform_expr(e.operand, U)
        if isinstance(e, ast.Compare):
            return self._is_uniform_expr(e.left, U) and all(self._is_uniform_expr(c, U) for c in e.comparators)
        if isinstance(e, ast.IfExp):
            # ``cur = b if it % 2 == 0 else a``: one of two uniform values, chosen alike
            return all(self._is_uniform_expr(x, U) for x in (e.test, e.body, e.orelse))
        if isinstance(e, ast.BoolOp):
            return all(self._is_uniform_expr(x, U) for x in e.values)
        if (
            isinstance(e, ast.Call)
            and not e.keywords
            and isinstance(e.func, ast.Name)
            and e.func.id.startswith(("_nq_cu_lane_", "_nq_cu_mask_", "_nq_cu_shfl_", "_nq_cu_hint_"))
        ):
            # a numba.cuda selector's low bits, a mask or value check (cpu/cudaapi.py): pure
            return all(self._is_uniform_expr(a, U) for a in e.args)
        if (
            isinstance(e, ast.Call)
            and not e.keywords
            and isinstance(e.func, ast.Attribute)
            and e.func.attr in self._VIEW_METHODS
            and self.env.resolve(e.func) is _MISSING
        ):
            # ``a.reshape(4, 8)`` of a uniform array: a view, the same in every lane
            return self._is_uniform_expr(e.func.value, U) and all(self._is_uniform_expr(a, U) for a in e.args)
        if isinstance(e, ast.Call) and not e.keywords:
            f = self.env.resolve(e.func)
            op = _ops.of_function(f)
            if op is not None:
                return op.query == "width"  # the wave width: a constant
            ok_fn = (
                (f in self._PURE_CALLS)
                or (isinstance(f, type) and issubclass(f, np.number))
                or builtin_name(f) in _cudaapi.PURE_BUILTINS
                or _cudaapi.is_numba_scalar_type(f)
            )
            return ok_fn and all(self._is_uniform_expr(a, U) for a in e.args)
        if isinstance(e, ast.Slice):
            return all(x is None or self._is_uniform_expr(x, U) for x in (e.lower, e.upper, e.step))
        return False

    def _uniform_names(self, body):
        """The locals whose value is the same in every lane of a wave.

        A greatest fixpoint: start from every local, then drop a name while any
        store to it is not a plain (augmented) assignment of a uniform value at a
        uniform position (the top level, or inside masked loops and ifs whose
        control is itself uniform), or the target of a uniform ``range`` loop.
        ``s //= 2`` in ``while s > 0:`` around a barrier or a shuffle stays uniform.
        """
        U = set(self.env.locals) - {n for n, a in self.allocs.items() if a[0] == "local"}
        # an op's hoisted operands (_hoist_call): a uniform selector stays a scalar
        U |= {
            n.id
            for n in ast.walk(ast.Module(body=body, type_ignores=[]))
            if isinstance(n, ast.Name) and n.id.startswith(f"{RESERVED}a_")
        }
        changed = True
        while changed:
            changed = False
            ok_stores = set()
            for stmt, loopvar in self._uniform_positions(body, U):
                if loopvar is not None:
                    ok_stores.add(id(loopvar))
                elif self._uniform_store(stmt, U):
                    t = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
                    ok_stores |= {id(n) for n in ast.walk(t) if isinstance(n, ast.Name)}
            # the one store of an alias of a never-assigned uniform (an inlined function's
            # array parameter), wherever it is
            ok_stores |= _cudaapi.invariant_aliases(body, U)
            for node in ast.walk(ast.Module(body=body, type_ignores=[])):
                if (
                    isinstance(node, ast.Name)
                    and isinstance(node.ctx, (ast.Store, ast.Del))
                    and node.id in U
                    and id(node) not in ok_stores
                ):
                    U.discard(node.id)
                    changed = True
        return U

    def _uniform_store(self, stmt, U):
        if getattr(stmt, "_nq_op", None) is not None:
            return False
        if isinstance(stmt, ast.Assign):
            # ``a, (b, c) = t`` of a uniform tuple (a tuple argument) too
            return len(stmt.targets) == 1 and _unpack_target(stmt.targets[0]) and self._is_uniform_expr(stmt.value, U)
        if isinstance(stmt, ast.AugAssign):
            return isinstance(stmt.target, ast.Name) and self._is_uniform_expr(stmt.value, U)
        return False

    def _uniform_control(self, s, U):
        """Is *s* a masked compound statement whose control is uniform?"""
        if not self._is_masked(s, U):
            return False
        if isinstance(s, ast.For):
            return self._uniform_range(s, U) is not None and s.target.id in U
        if isinstance(s, ast.While):
            return not s.orelse and self._is_uniform_expr(s.test, U)
        if isinstance(s, ast.If):
            return self._is_uniform_expr(s.test, U)
        return False

    def _uniform_positions(self, body, U):
        """(statement, None) at uniform positions, and (None, target Name) for the
        targets of uniform range loops.

        A position is uniform when every lane of the wave that is still alive runs
        it together. Inside a loop that some lanes leave early (a ``break`` under
        lane-varying control) or skip part of (a varying ``continue``), the lanes
        that left keep the value they had, so no store in that loop's body is at a
        uniform position; the target of a range loop stays uniform unless lanes
        can leave it at different iterations. (Lanes that ``return`` never read a
        value again, so a varying return does not matter here.)
        """
        for s in body:
            yield s, None
            if self._uniform_control(s, U):
                if isinstance(s, (ast.For, ast.While)):
                    vbreak, vcont, ubreak = self._loop_jumps(s.body, U)
                    if isinstance(s, ast.For) and not (vbreak or (ubreak and vcont)):
                        yield None, s.target
                    if vbreak or vcont:
                        continue
                yield from self._uniform_positions(s.body, U)
                if isinstance(s, ast.If):
                    yield from self._uniform_positions(s.orelse, U)

    def _loop_jumps(self, body, U):
        """(varying break, varying continue, uniform break) among the jumps of one
        loop level: a jump is uniform when it sits at a uniform position of the loop
        body (only uniform ``if``s around it), varying otherwise."""
        vbreak = vcont = ubreak = False

        def walk(stmts, uniform):
            nonlocal vbreak, vcont, ubreak
            for s in stmts:
                if isinstance(s, ast.Break):
                    if uniform:
                        ubreak = True
                    else:
                        vbreak = True
                elif isinstance(s, ast.Continue):
                    if not uniform:
                        vcont = True
                elif isinstance(s, ast.If):
                    u = uniform and self._is_uniform_expr(s.test, U)
                    walk(s.body, u)
                    walk(s.orelse, u)
                elif isinstance(s, (ast.For, ast.While)):
                    walk(s.orelse, uniform)  # the else clause belongs to this level
                elif isinstance(s, (ast.With, ast.Try)) or type(s).__name__ in ("TryStar", "Match"):
                    for child in ast.iter_child_nodes(s):
                        if isinstance(child, ast.stmt):
                            walk([child], False)

        walk(body, True)
        return vbreak, vcont, ubreak

    def _range_call(self, it):
        """Is *it* a call of ``range`` with one to three positional arguments?"""
        return (
            isinstance(it, ast.Call)
            and self.env.resolve(it.func) is range
            and not it.keywords
            and 1 <= len(it.args) <= 3
        )

    def _uniform_range(self, s, U):
        if not (isinstance(s, ast.For) and isinstance(s.target, ast.Name) and not s.orelse):
            return None
        it = s.iter
        if not self._range_call(it):
            return None
        if all(self._is_uniform_expr(a, U) for a in it.args):
            return it.args
        return None
