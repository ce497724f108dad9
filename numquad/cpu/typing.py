"""Scalar "shadow" typing: the type of every local of a kernel.

The normalised kernel is rewritten into a plain scalar function (each cross-lane
op becomes a typing-only stand-in that returns the op's result type, each
builtin a constant of numba.cuda's type) and run through Numba's front end and
type inference only, with no lowering. The stand-ins check operand types
against ops.py, so a bad operand is reported at the user's line.
"""

from __future__ import annotations

import re

import numpy as np

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
        typemap = dict(state.typemap)
        refusal = _cuda_refusal(state.func_ir, state.typemap, state.calltypes)
        if refusal is not None:
            typemap[_REFUSAL] = refusal
        raise compiler._EarlyPipelineCompletion(typemap)


#: the key of a typemap that holds what numba.cuda would refuse (:func:`_cuda_refusal`)
_REFUSAL = "<numba.cuda refuses>"

#: Array methods numba.cuda compiles in a kernel (each checked with ``inspect_ptx(...,
#: cc=(9, 0))`` against numba-cuda 0.30.4): views, and reductions over the whole
#: array called without arguments (``reshape`` only of a C or Fortran contiguous
#: array) ...
_CUDA_ARRAY_METHODS = frozenset({"view", "transpose", "reshape", "item", "fill"})
_CUDA_ARRAY_REDUCTIONS = frozenset({"sum", "prod", "mean", "var", "std", "argmax", "argmin", "all", "any"})
#: ... and those it compiles only with its NRT (``numba.cuda.config.CUDA_ENABLE_NRT``):
#: they return a new array
_NRT_ARRAY_METHODS = frozenset({"copy", "astype", "ravel", "flatten", "clip", "conj", "conjugate",
                                "cumsum", "cumprod", "max", "min", "nonzero", "repeat", "take"})
#: the NumPy ufunc of each operator (numba.cuda computes an operator on arrays with
#: its ufunc, numquad/_numpy_calls.py's CUDA_UFUNCS, and only with its NRT)
_OPERATOR_UFUNCS = {"add": "add", "iadd": "add", "sub": "subtract", "isub": "subtract",
                    "mul": "multiply", "imul": "multiply", "truediv": "divide", "itruediv": "divide",
                    "floordiv": "floor_divide", "ifloordiv": "floor_divide", "mod": "remainder",
                    "imod": "remainder", "pow": "power", "ipow": "power", "neg": "negative",
                    "pos": "positive", "invert": "invert", "not_": "logical_not", "and_": "bitwise_and",
                    "iand": "bitwise_and", "or_": "bitwise_or", "ior": "bitwise_or", "xor": "bitwise_xor",
                    "ixor": "bitwise_xor", "lshift": "left_shift", "ilshift": "left_shift",
                    "rshift": "right_shift", "irshift": "right_shift", "eq": "equal", "ne": "not_equal",
                    "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}


def _method_name(fnty):
    key = getattr(fnty, "typing_key", None)
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
        return key[1]
    if isinstance(key, str):
        return key.rsplit(".", 1)[-1]
    return None


def _is_numpy_function(key):
    import numpy as np
    return isinstance(key, np.ufunc) or (callable(key) and
                                         (getattr(key, "__module__", None) or "").startswith("numpy"))


def _cuda_refusal(func_ir, typemap, calltypes):
    """(message, file, line) of the first thing in the typed shadow function that
    numba.cuda cannot compile in a kernel while Numba's CPU target can, else None:
    whole-array arithmetic, NumPy calls and array methods that return a new array,
    array reductions along an axis, string methods, ``print`` of an array, and an
    array stored into a slice. (numba.cuda allocates no arrays in a kernel without
    its NRT, off by default; with it on, only what it still cannot compile is
    refused; docs/numba-cuda.md.) Calls of numquad's own helpers
    (globals named ``_nq_*``) and what they return are not the user's."""
    from numba.core import ir
    from .._numpy_calls import CUDA_UFUNCS, cuda_nrt
    nrt = cuda_nrt()
    internal = set()

    def arr(name):
        return isinstance(typemap.get(name), types.Array)

    for block in func_ir.blocks.values():
        for inst in block.body:
            loc = inst.loc
            why = None
            if isinstance(inst, ir.Assign):
                v = inst.value
                if isinstance(v, (ir.Global, ir.FreeVar)) and v.name.startswith("_nq_"):
                    internal.add(inst.target.name)
                    continue
                if not isinstance(v, ir.Expr):
                    continue
                if v.op == "getattr" and v.value.name in internal:
                    internal.add(inst.target.name)
                    continue
                if v.op == "call" and v.func.name in internal:
                    internal.add(inst.target.name)
                    continue
                if v.op in ("binop", "inplace_binop", "unary") and arr(inst.target.name):
                    sym = v.immutable_fn if v.op == "inplace_binop" else v.fn
                    sym = getattr(sym, "__name__", str(sym))
                    if not nrt or _OPERATOR_UFUNCS.get(sym) not in CUDA_UFUNCS:
                        why = (f"whole-array arithmetic ({sym} on {typemap[inst.target.name]}) "
                               f"creates a new array; loop over the elements")
                elif v.op == "getattr" and v.attr == "imag" and arr(v.value.name) and not nrt and \
                        not isinstance(typemap[v.value.name].dtype, types.Complex):
                    why = f".imag of a real array ({typemap[v.value.name]}) creates a new array"
                elif v.op == "call":
                    fnty = typemap.get(v.func.name)
                    this = getattr(fnty, "this", None)
                    name = _method_name(fnty) if isinstance(fnty, types.BoundFunction) else None
                    if isinstance(this, types.Array) and name is not None:
                        if name in _CUDA_ARRAY_REDUCTIONS:
                            if v.args or v.kws:
                                why = f"the array method .{name}() with arguments (along an axis) is not compiled"
                        elif not (name in _CUDA_ARRAY_METHODS or nrt and name in _NRT_ARRAY_METHODS) or \
                                (name == "reshape" and this.layout not in "CF" and not nrt):
                            why = f"the array method .{name}() of {this} is not compiled"
                    elif isinstance(this, types.UnicodeType) and name is not None and not nrt:
                        why = f"the string method .{name}() is not compiled"
                    elif isinstance(fnty, types.Function) and _is_numpy_function(fnty.typing_key):
                        fname = getattr(fnty.typing_key, "__name__", "?")
                        key = fnty.typing_key
                        if isinstance(key, np.ufunc) and len(v.args) == key.nin + key.nout and not v.kws \
                                and all(arr(a.name) for a in v.args[key.nin:]):
                            pass        # ``np.sin(x, r)``: into the given output, no new array
                        elif arr(inst.target.name) and not nrt:
                            why = f"np.{fname}(...) returns a new array"
                        elif (v.args[1:] or v.kws) and fname in _CUDA_ARRAY_REDUCTIONS:
                            why = f"np.{fname}(...) along an axis is not compiled"
            elif isinstance(inst, ir.Print):
                if any(arr(a.name) for a in inst.args):
                    why = "print() of an array is not compiled (numba.cuda prints scalars and strings)"
            elif isinstance(inst, (ir.SetItem, ir.StaticSetItem)):
                # (into an array's slice; a record's array field takes an array, as in
                # numba.cuda: ``rec["arr"] = src``)
                if arr(inst.value.name) and arr(inst.target.name) and inst.target.name not in internal \
                        and not nrt:
                    why = (f"storing an array ({typemap[inst.value.name]}) into a slice copies it, "
                           f"which is not compiled; loop over the elements")
            if why is not None:
                return (f"{why}: numba.cuda cannot compile this in a kernel, so the CPU target "
                        f"refuses it too (docs/numba-cuda.md)", loc.filename, loc.line)
    return None


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
    refusal = typemap.pop(_REFUSAL, None)
    if refusal is not None:
        from ..errors import NumquadCompileError
        msg, filename, line = refusal
        raise NumquadCompileError(msg, filename, line)
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
