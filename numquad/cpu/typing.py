"""Scalar "shadow" typing: the type of every local of a kernel.

The normalised kernel is rewritten into a plain scalar function (each cross-lane
op becomes a typing-only stand-in that returns the op's result type, each
builtin a constant of numba.cuda's type) and run through Numba's front end and
type inference only, with no lowering. The stand-ins check operand types
against ops.py, so a bad operand is reported at the user's line.
"""

from __future__ import annotations

import re

from numba.core import compiler, errors, types
from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass
from numba.core.registry import cpu_target
from numba.core.typed_passes import NopythonTypeInference
from numba.core.untyped_passes import (
    FixupArgs,
    IRProcessing,
    InlineClosureLikes,
    ReconstructSSA,
    RewriteSemanticConstants,
    TranslateByteCode,
    DeadBranchPrune,
    GenericRewrites,
    RewriteDynamicRaises,
    MakeFunctionToJitFunction,
    InlineInlinables,
    FindLiterallyCalls,
    LiteralUnroll,
    LiteralPropagationSubPipelinePass,
)
from numba.extending import intrinsic
from numba.np.numpy_support import as_dtype

from .. import ops as _ops

__all__ = ["shadow_types", "expression_types", "STANDINS"]


def _nb_dtype(ty):
    try:
        return as_dtype(ty)
    except Exception:
        return None


def _standin(op):
    """A typing-only stand-in for *op*: checks the operand, returns the result type."""

    def typer(args):
        x = types.unliteral(args[0])
        msg = None
        if not isinstance(x, (types.Integer, types.Float, types.Boolean)):
            msg = op.check_operand(str(x))
        else:
            msg = op.check_operand(_nb_dtype(x))
        if msg is None and len(args) > 1:
            sel = types.unliteral(args[1])
            msg = op.check_selector_type(sel, isinstance(sel, types.Integer))
        if msg:
            raise errors.TypingError(msg)
        res = op.result_dtype(_nb_dtype(x))
        from numba.np.numpy_support import from_dtype
        sig = from_dtype(res)(*args)

        def codegen(context, builder, sig, args):     # never lowered
            raise AssertionError("shadow stand-ins are typing-only")
        return sig, codegen

    if op.selector is None:
        def sh(typingctx, x):
            return typer((x,))
    else:
        def sh(typingctx, x, sel):
            return typer((x, sel))
    sh.__name__ = f"shadow_{op.namespace}_{op.name}"
    return intrinsic(sh)


#: One typing-only stand-in per non-query op.
STANDINS = {q: _standin(op) for q, op in _ops.OPS.items() if op.kind != "query"}


@register_pass(mutates_CFG=False, analysis_only=True)
class _StopAfterTyping(FunctionPass):
    _name = "numquad_stop_after_typing"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        raise compiler._EarlyPipelineCompletion(dict(state.typemap))


class _ShadowCompiler(compiler.CompilerBase):
    def define_pipelines(self):
        pm = PassManager("numquad_shadow")
        pm.add_pass(TranslateByteCode, "analyzing bytecode")
        pm.add_pass(FixupArgs, "fix up args")
        pm.add_pass(IRProcessing, "processing IR")
        pm.add_pass(InlineClosureLikes, "inline closures")
        pm.add_pass(RewriteSemanticConstants, "rewrite semantic constants")
        pm.add_pass(DeadBranchPrune, "dead branch pruning")
        pm.add_pass(GenericRewrites, "nopython rewrites")
        pm.add_pass(RewriteDynamicRaises, "rewrite dynamic raises")
        pm.add_pass(MakeFunctionToJitFunction, "make_function -> jit")
        pm.add_pass(InlineInlinables, "inline inlinables")
        pm.add_pass(FindLiterallyCalls, "find literally calls")
        pm.add_pass(LiteralUnroll, "literal unroll")
        pm.add_pass(ReconstructSSA, "ssa")
        pm.add_pass(LiteralPropagationSubPipelinePass, "literal propagation")
        pm.add_pass(NopythonTypeInference, "nopython frontend")
        pm.add_pass(_StopAfterTyping, "stop")
        pm.finalize()
        return [pm]


_VERSION = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(\.\d+)?$")


def _typemap(func, argtypes):
    """Numba's typemap of *func* at *argtypes* (type inference only)."""
    typingctx = cpu_target.typing_context
    targetctx = cpu_target.target_context
    typingctx.refresh()
    targetctx.refresh()
    flags = compiler.Flags()
    flags.no_cpython_wrapper = True
    flags.nrt = True
    return compiler.compile_extra(
        typingctx, targetctx, func, tuple(argtypes), None, flags, {},
        pipeline_class=_ShadowCompiler,
    )


def shadow_types(func, argtypes):
    """{variable name: Numba type} for the scalar function *func* at *argtypes*.

    SSA versions of one variable (``x``, ``x.1``) are unified to one type.
    """
    typingctx = cpu_target.typing_context
    typemap = _typemap(func, argtypes)
    found = {}
    for key, ty in typemap.items():
        m = _VERSION.match(key)
        if not m:
            continue
        found.setdefault(m.group("name"), []).append(types.unliteral(ty))
    out = {}
    for name, tys in found.items():
        t = tys[0]
        for other in tys[1:]:
            if other == t:
                continue
            u = typingctx.unify_pairs(t, other)
            t = u if u is not None else t
        out[name] = t
    return out


def expression_types(pyfunc, argtypes, exprs):
    """The Numba types of the AST expressions *exprs* of *pyfunc*, its parameters at
    *argtypes* (literals stay literal, as in a call's arguments); None when one
    reads a name that is neither a parameter nor a global, closure or builtin name,
    or Numba cannot type it."""
    import ast
    import builtins
    code = pyfunc.__code__
    params = code.co_varnames[:code.co_argcount]
    names = dict(vars(builtins))
    names.update(pyfunc.__globals__)
    for name, cell in zip(code.co_freevars, pyfunc.__closure__ or ()):
        try:
            names[name] = cell.cell_contents
        except ValueError:                      # an empty cell
            pass
    read = {n.id for e in exprs for n in ast.walk(e) if isinstance(n, ast.Name)}
    if not exprs or len(params) != len(argtypes) or not read <= set(params) | set(names):
        return None
    body = "".join(f"    _nq_e{k} = {ast.unparse(e)}\n" for k, e in enumerate(exprs))
    scope = {k: v for k, v in names.items() if k in read and k not in params}
    exec(f"def _nq_probe({', '.join(params)}):\n{body}", scope)   # noqa: S102 - the user's own expressions
    try:
        typemap = _typemap(scope["_nq_probe"], argtypes)
    except errors.NumbaError:
        return None
    return [typemap[f"_nq_e{k}"] for k in range(len(exprs))]
