"""The shadow function: a kernel's wave items as plain scalar code, for typing.

:func:`generate_shadow` writes one scalar function with the control flow of the
wave items, builtins substituted in shadow mode (numquad/cpu/subst.py) and each
cross-lane op replaced by its typing-only stand-in (numquad/cpu/typing.py
``STANDINS``). numquad/cpu/typing.py types it with Numba; the types of its
locals are those of the block function's variables (numquad/cpu/codegen.py).
"""

from __future__ import annotations

import ast
import copy

from .. import ops as _ops
from . import names as _names
from . import waveitems as _wi
from . import generated as _generated
from .subst import Subst, standin_name
from .typing import STANDINS
from .astbuild import (
    assign as _assign,
    call as _call,
    const as _const,
    fn_def as _fn_def,
    located as _located,
    name as _name,
)

__all__ = ["generate_shadow"]


def _shadow_items(fe, items, subst):
    """Plain scalar statements equivalent to *items* (same control flow)."""
    out = []
    for it in items:
        if isinstance(it, _wi.Region):
            out += [subst.visit(copy.deepcopy(s)) for s in it.stmts]
        elif isinstance(it, _wi.Uniform):
            out.append(subst.visit(copy.deepcopy(it.stmt)))
        elif isinstance(it, _wi.XLCall):
            op = it.op
            call = _call(standin_name(op, it.spelled), *[copy.deepcopy(a) for a in it.args])
            out.append(_located([_assign(_name(it.target, ast.Store), call)], it.node.lineno)[0])
        elif isinstance(it, _wi.If):
            node = ast.If(
                test=_name(it.cond),
                body=_shadow_items(fe, it.body, subst) or [ast.Pass()],
                orelse=_shadow_items(fe, it.orelse, subst),
            )
            out.append(_located([node], it.node.lineno)[0])
        elif isinstance(it, _wi.UniformIf):
            node = ast.If(
                test=subst.visit(copy.deepcopy(it.test)),
                body=_shadow_items(fe, it.body, subst) or [ast.Pass()],
                orelse=_shadow_items(fe, it.orelse, subst),
            )
            out.append(_located([node], it.node.lineno)[0])
        elif isinstance(it, _wi.Loop):
            body = _shadow_items(fe, it.body, subst) or [ast.Pass()]
            if it.test is not None:
                node = ast.While(test=subst.visit(copy.deepcopy(it.test)), body=body, orelse=[])
            elif it.uniform:
                target, rargs = it.uniform
                node = ast.For(
                    target=_name(target, ast.Store),
                    iter=_call("_nq_range", *[subst.visit(copy.deepcopy(a)) for a in rargs]),
                    body=body,
                    orelse=[],
                )
            else:
                node = ast.While(test=_const(True), body=body, orelse=[])
            out.append(_located([node], it.node.lineno)[0])
        elif isinstance(it, _wi.Barrier):
            out.append(_located([ast.Pass()], it.node.lineno)[0])
        elif isinstance(it, _wi.BarrierReduce):
            call = _call(f"_nq_cu_syncpred_{it.kind}", _name(it.arg))
            out.append(_located([_assign(_name(it.target, ast.Store), call)], it.node.lineno)[0])
        elif isinstance(it, _wi.Jump):
            node = {"break": ast.Break, "continue": ast.Continue}.get(it.kind)
            if node is not None:
                out.append(_located([node()], it.node.lineno)[0])
            else:
                value = subst.visit(copy.deepcopy(it.value)) if it.value is not None else None
                out.append(_located([ast.Return(value=value)], it.node.lineno)[0])
    return out


def generate_shadow(fe, cpu_fn_for):
    """The scalar shadow function of *fe*'s wave items (for typing)."""
    fn_names = {}
    body = _generated.alloc_stmts(fe, per_lane=False) + _shadow_items(fe, fe.items, Subst(fe, "shadow", fn_names))
    # cross-lane ops become typing-only stand-ins
    ns = _generated.namespace(fe)
    for q, sh in STANDINS.items():
        op = _ops.OPS[q]
        ns[f"_nq_SH_{op.namespace}_{op.name}"] = sh
    _generated.resolve_callees(fn_names, ns, cpu_fn_for, {n for s in body for n in _names.names_in(s)})
    if not body:
        body = [ast.Pass()]
    fn = _fn_def("_nq_shadow_" + fe.pyfunc.__name__, fe.env.params, body, fe.fn.lineno)
    _located([fn], fe.fn.lineno)
    func, _ = _generated.compile_fn(fe, fn, ns)
    return func
