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

from numba.core import compiler, errors, ir, types
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

__all__ = ["shadow_types", "expression_types", "STANDINS", "checked_standin"]


def _nb_dtype(ty):
    try:
        return as_dtype(ty)
    except Exception:
        return None


def _standin(op, check=None):
    """A typing-only stand-in for *op*: checks the operand (first by *check*, which
    returns a complaint or None for the operand's Numba type), returns the result type."""

    def typer(args):
        x = types.unliteral(args[0])
        msg = check(x) if check is not None else None
        if msg is None:
            scalar = isinstance(x, (types.Integer, types.Float, types.Boolean))
            msg = op.check_operand(_nb_dtype(x) if scalar else str(x))
        if msg is None and len(args) > 1:
            sel = types.unliteral(args[1])
            msg = op.check_selector_type(sel, isinstance(sel, types.Integer))
        if msg:
            raise errors.TypingError(msg)
        res = op.result_dtype(_nb_dtype(x))
        from numba.np.numpy_support import from_dtype

        sig = from_dtype(res)(*args)

        def codegen(context, builder, sig, args):  # never lowered
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


def checked_standin(qualname, check):
    """The typing-only stand-in of op *qualname* whose operand *check* (a Numba type
    -> complaint or None) sees first: a numba.cuda spelling's own type rule."""
    return _standin(_ops.OPS[qualname], check)


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
        typemap[_MIXED] = _mixed_versions(state.func_ir, state.typemap)
        typemap[_UNDEF] = _unassigned_reads(state.func_ir, state.typemap)
        raise compiler._EarlyPipelineCompletion(typemap)


def _unassigned_reads(func_ir, typemap):
    """{variable: the type Numba gives the versions that merge a path where no
    assignment reached it} (its SSA phis with an undefined incoming value), where
    those are all one type: Numba reads 0 of it there, or the value of a literal type
    (``if c: t = -129`` then ``x // t``: the phi is Literal[int](-129), read as -129
    on every path, though a later ``t = x * 2.5`` is a float64)."""
    found = {}
    for block in func_ir.blocks.values():
        for inst in block.body:
            if (
                isinstance(inst, ir.Assign)
                and isinstance(inst.value, ir.Expr)
                and inst.value.op == "phi"
                and any(v is ir.UNDEFINED for v in inst.value.incoming_values)
            ):
                m = _VERSION.match(inst.target.name)
                ty = typemap.get(inst.target.name)
                if m and ty is not None:
                    found.setdefault(m.group("name"), set()).add(ty)
    return {name: next(iter(tys)) for name, tys in found.items() if len(tys) == 1}


def _unify(typingctx, tys):
    t = tys[0]
    for other in tys[1:]:
        if other != t:
            u = typingctx.unify_pairs(t, other)
            t = u if u is not None else t
    return t


def _mixed_versions(func_ir, typemap):
    """{variable: (the type of one of its SSA versions, the line of a use of that
    version, the variable's unified type)} for the variables one of whose versions
    has another type than the variable's unified one (:func:`shadow_types`) and is
    read other than by a copy into another version (a phi). The code generator keeps
    a variable that lives across a cross-lane op or a barrier in one array of the
    unified type, so such a read would compute in that type where Numba computes in
    the version's own (cpu/codegen.py refuses it)."""
    typingctx = cpu_target.typing_context
    versions, literal = {}, {}
    for key, ty in typemap.items():
        m = _VERSION.match(key)
        if m:
            versions.setdefault(m.group("name"), {})[key] = types.unliteral(ty)
            if isinstance(ty, types.Literal):
                literal[key] = ty.literal_value
    unified = {n: _unify(typingctx, list(vs.values())) for n, vs in versions.items() if len(vs) > 1}
    odd = {v: (n, t) for n, vs in versions.items() if n in unified for v, t in vs.items() if t != unified[n]}
    if not odd:
        return {}

    def base(name):
        m = _VERSION.match(name)
        return m.group("name") if m else None

    out = {}
    for block in func_ir.blocks.values():
        for inst in block.body:
            if isinstance(inst, ir.Del):
                continue
            if isinstance(inst, ir.Assign):
                value, target = inst.value, inst.target.name
                if isinstance(value, ir.Var) and base(value.name) == base(target):
                    continue  # a copy into another version
                if isinstance(value, ir.Expr) and value.op == "phi":
                    continue
                used = value.list_vars() if hasattr(value, "list_vars") else []
            else:
                used = inst.list_vars()
            for var in used:
                hit = odd.get(var.name)
                if hit is None or hit[0] in out:
                    continue
                if _exact(hit[1], unified[hit[0]], literal.get(var.name)) and _same_result(
                    typingctx, typemap, func_ir, inst, var.name, unified[hit[0]]
                ):
                    continue
                out[hit[0]] = (hit[1], inst.loc.line, unified[hit[0]])
    return out


def _exact(narrow, wide, value=None):
    """Whether every value of Numba type *narrow* (or the constant *value*, a
    literal's) converts to *wide* exactly."""
    if narrow == wide:
        return True
    try:
        a, b = np.dtype(as_dtype(narrow)), np.dtype(as_dtype(wide))
    except Exception:
        return False
    if value is not None and isinstance(value, (bool, int, float)) and b.kind in "biufc":
        try:
            with np.errstate(all="ignore"):
                return bool(np.array(value).astype(b) == value) and np.array(value).astype(b).item() == value
        except (OverflowError, ValueError, TypeError):
            return False
    if a.kind == "b":
        return b.kind in "biufc"
    if a.kind in "iu" and b.kind in "iu":
        ia, ib = np.iinfo(a), np.iinfo(b)
        return ib.min <= ia.min and ia.max <= ib.max
    if a.kind in "iu" and b.kind in "fc":
        mant = {4: 24, 8: 53}.get(b.itemsize if b.kind == "f" else b.itemsize // 2)
        return mant is not None and a.itemsize * 8 - (a.kind == "i") <= mant
    if a.kind == "f" and b.kind in "fc":
        return a.itemsize <= (b.itemsize if b.kind == "f" else b.itemsize // 2)
    if a.kind == "c" and b.kind == "c":
        return a.itemsize <= b.itemsize
    return False


#: the generated calls whose argument is an op's operand, which the code generator
#: converts to the op's type at the call
_OPERAND_CALLS = ("_nq_SH_", "_nq_cu_shfl_", "_nq_cu_pred_", "_nq_cu_mval_", "_nq_cu_mask_", "_nq_cu_lane_")


def _same_result(typingctx, typemap, func_ir, inst, name, wide):
    """Whether *inst* reading variable *name* as *wide* (its exact widening) gives
    what it gives reading it as its own type: an index, a stored or returned value,
    an op's operand (converted to the op's type at the call), or an operator whose
    result type Numba picks the same either way."""
    own = types.unliteral(typemap.get(name))
    integral = isinstance(wide, (types.Integer, types.Boolean))
    if isinstance(inst, (ir.SetItem, ir.StaticSetItem)):
        if inst.value.name == name:
            # a stored value converts to the array's dtype from the wide type, where
            # Numba converts from its own: the same only where that conversion is
            # exact (an int32 into an int64 array: yes; into a uint32 array Numba wraps
            # and a float64 saturates; a float32 NaN into an int32 array is 0, a
            # float64 one -2**31)
            arr = typemap.get(inst.target.name)
            dtype = getattr(arr, "dtype", None)
            return dtype is not None and (dtype == own or _exact(own, dtype))
        return integral  # an index: a float one is no index
    if not isinstance(inst, ir.Assign):
        return isinstance(inst, (ir.Return, ir.Branch))
    v = inst.value
    if not isinstance(v, ir.Expr):
        return False  # a copy into another variable keeps the type
    target = typemap.get(inst.target.name)
    if v.op in ("getitem", "static_getitem") and v.value.name != name:
        return integral  # an index
    if v.op == "call":
        # an op's stand-in (STANDINS), or a check of numba.cuda's argument types that
        # hands its argument on to an op (cpu/spellings.py, CudaSpellings): the
        # operand is converted to the op's type at the call; a selector, a lane or a
        # mask is not, and must stay an integer
        try:
            d = func_ir.get_definition(v.func)
        except Exception:
            return False
        if not (isinstance(d, (ir.Global, ir.FreeVar)) and d.name.startswith(_OPERAND_CALLS)):
            return False
        if d.name.startswith(("_nq_cu_mask_", "_nq_cu_lane_")):
            return integral
        if d.name.startswith("_nq_SH_"):
            return bool(v.args) and v.args[0].name == name and name not in [a.name for a in v.args[1:]] or integral
        return True
    if v.op == "unary" and isinstance(own, (types.Integer, types.Boolean)) and own != wide and v.fn != "not":
        # Numba computes ``-x``, ``+x`` and ``~x`` of an integer in its own type and
        # widens the result: -uint16(1) is 65535, where the wide type's is -1
        return False
    if v.op in ("binop", "inplace_binop", "unary"):
        args = [v.lhs, v.rhs] if v.op != "unary" else [v.value]
        tys = [wide if a.name == name else typemap.get(a.name) for a in args]
        try:
            sig = typingctx.resolve_function_type(v.fn, tuple(tys), {})
        except Exception:
            return False
        return sig is not None and sig.return_type == target
    return False


#: the key of a typemap that holds :func:`_mixed_versions`
_MIXED = "<versions of other types>"

#: the key of a typemap that holds :func:`_unassigned_reads`
_UNDEF = "<read unassigned>"


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
_NRT_ARRAY_METHODS = frozenset(
    {
        "copy",
        "astype",
        "ravel",
        "flatten",
        "clip",
        "conj",
        "conjugate",
        "cumsum",
        "cumprod",
        "max",
        "min",
        "nonzero",
        "repeat",
        "take",
    }
)
#: the NumPy ufunc of each operator (numba.cuda computes an operator on arrays with
#: its ufunc, numquad/_numpy_calls.py's CUDA_UFUNCS, and only with its NRT)
_OPERATOR_UFUNCS = {
    "add": "add",
    "iadd": "add",
    "sub": "subtract",
    "isub": "subtract",
    "mul": "multiply",
    "imul": "multiply",
    "truediv": "divide",
    "itruediv": "divide",
    "floordiv": "floor_divide",
    "ifloordiv": "floor_divide",
    "mod": "remainder",
    "imod": "remainder",
    "pow": "power",
    "ipow": "power",
    "neg": "negative",
    "pos": "positive",
    "invert": "invert",
    "not_": "logical_not",
    "and_": "bitwise_and",
    "iand": "bitwise_and",
    "or_": "bitwise_or",
    "ior": "bitwise_or",
    "xor": "bitwise_xor",
    "ixor": "bitwise_xor",
    "lshift": "left_shift",
    "ilshift": "left_shift",
    "rshift": "right_shift",
    "irshift": "right_shift",
    "eq": "equal",
    "ne": "not_equal",
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
}


def _method_name(fnty):
    key = getattr(fnty, "typing_key", None)
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
        return key[1]
    if isinstance(key, str):
        return key.rsplit(".", 1)[-1]
    return None


def _is_numpy_function(key):
    import numpy as np

    return isinstance(key, np.ufunc) or (callable(key) and (getattr(key, "__module__", None) or "").startswith("numpy"))


def _cuda_minmax_refusal(name, argtys):
    """Why numba.cuda types no ``max``/``min`` of *argtys* where Numba's CPU target
    does, else None. numba.cuda takes numbers (datetimes, timedeltas) as arguments
    or in one tuple, exactly two booleans, or one iterable (a tuple of one type, an
    array); Numba's CPU target also mixes booleans with numbers."""
    numeric = (types.Number, types.NPDatetime, types.NPTimedelta)
    if len(argtys) == 2 and all(isinstance(t, types.Boolean) for t in argtys):
        return None
    if len(argtys) == 1:
        (t,) = argtys
        if isinstance(t, types.IterableType) or not isinstance(t, types.BaseTuple):
            return None  # (what neither target types is Numba's own error)
        items = list(t)
    else:
        items = argtys
    if all(isinstance(t, numeric) for t in items):
        return None
    got = ", ".join(str(t) for t in argtys)
    return (
        f"{name}({got}): numba.cuda's {name} takes numbers, exactly two booleans, or one "
        f"tuple of one type; convert the booleans (e.g. {name}(int(a), b))"
    )


def _cuda_refusal(func_ir, typemap, calltypes):
    """(message, file, line) of the first thing in the typed shadow function that
    numba.cuda cannot compile in a kernel while Numba's CPU target can, else None:
    whole-array arithmetic, NumPy calls and array methods that return a new array,
    array reductions along an axis, string methods, ``print`` of an array, an
    array stored into a slice, and ``max``/``min`` of booleans mixed with numbers
    or of more than two booleans. (numba.cuda allocates no arrays in a kernel without
    its NRT, off by default; with it on, only what it still cannot compile is
    refused; docs/numba-cuda.md.) Calls of numquad's own helpers
    (globals named ``_nq_*``) and what they return are not the user's."""
    from numba.core import ir
    from .._numpy_calls import CUDA_UFUNCS, cuda_nrt

    nrt = cuda_nrt()
    internal = set()
    minmax = {}

    def arr(name):
        return isinstance(typemap.get(name), types.Array)

    for block in func_ir.blocks.values():
        for inst in block.body:
            loc = inst.loc
            why = None
            if isinstance(inst, ir.Assign):
                v = inst.value
                if isinstance(v, (ir.Global, ir.FreeVar)) and v.name in ("_nq_cuda_max", "_nq_cuda_min"):
                    minmax[inst.target.name] = v.name[-3:]  # the user's max(a, b) (cpu/cudaapi.py)
                    continue
                if isinstance(v, (ir.Global, ir.FreeVar)) and v.name.startswith("_nq_"):
                    internal.add(inst.target.name)
                    continue
                if not isinstance(v, ir.Expr):
                    continue
                if v.op == "getattr" and v.value.name in internal:
                    internal.add(inst.target.name)
                    continue
                if v.op == "call" and v.func.name in minmax:
                    why = _cuda_minmax_refusal(minmax[v.func.name], [typemap[a.name] for a in v.args])
                elif v.op == "call" and v.func.name in internal:
                    internal.add(inst.target.name)
                    continue
                elif v.op in ("binop", "inplace_binop", "unary") and arr(inst.target.name):
                    sym = v.immutable_fn if v.op == "inplace_binop" else v.fn
                    sym = getattr(sym, "__name__", str(sym))
                    if not nrt or _OPERATOR_UFUNCS.get(sym) not in CUDA_UFUNCS:
                        why = (
                            f"whole-array arithmetic ({sym} on {typemap[inst.target.name]}) "
                            f"creates a new array; loop over the elements"
                        )
                elif (
                    v.op == "getattr"
                    and v.attr == "imag"
                    and arr(v.value.name)
                    and not nrt
                    and not isinstance(typemap[v.value.name].dtype, types.Complex)
                ):
                    why = f".imag of a real array ({typemap[v.value.name]}) creates a new array"
                elif v.op == "call":
                    fnty = typemap.get(v.func.name)
                    this = getattr(fnty, "this", None)
                    name = _method_name(fnty) if isinstance(fnty, types.BoundFunction) else None
                    if isinstance(this, types.Array) and name is not None:
                        if name in _CUDA_ARRAY_REDUCTIONS:
                            if v.args or v.kws:
                                why = f"the array method .{name}() with arguments (along an axis) is not compiled"
                        elif not (name in _CUDA_ARRAY_METHODS or nrt and name in _NRT_ARRAY_METHODS) or (
                            name == "reshape" and this.layout not in "CF" and not nrt
                        ):
                            why = f"the array method .{name}() of {this} is not compiled"
                    elif isinstance(this, types.UnicodeType) and name is not None and not nrt:
                        why = f"the string method .{name}() is not compiled"
                    elif isinstance(fnty, types.Function) and fnty.typing_key in (max, min):
                        why = _cuda_minmax_refusal(fnty.typing_key.__name__, [typemap[a.name] for a in v.args])
                    elif isinstance(fnty, types.Function) and _is_numpy_function(fnty.typing_key):
                        fname = getattr(fnty.typing_key, "__name__", "?")
                        key = fnty.typing_key
                        if (
                            isinstance(key, np.ufunc)
                            and len(v.args) == key.nin + key.nout
                            and not v.kws
                            and all(arr(a.name) for a in v.args[key.nin :])
                        ):
                            pass  # ``np.sin(x, r)``: into the given output, no new array
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
                if arr(inst.value.name) and arr(inst.target.name) and inst.target.name not in internal and not nrt:
                    why = (
                        f"storing an array ({typemap[inst.value.name]}) into a slice copies it, "
                        f"which is not compiled; loop over the elements"
                    )
            if why is not None:
                return (
                    f"{why}: numba.cuda cannot compile this in a kernel, so the CPU target "
                    f"refuses it too (docs/numba-cuda.md)",
                    loc.filename,
                    loc.line,
                )
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


_VERSION = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(\.\d+)*$")


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
        typingctx,
        targetctx,
        func,
        tuple(argtypes),
        None,
        flags,
        {},
        pipeline_class=_ShadowCompiler,
    )


def shadow_types(func, argtypes, mixed_out=None, literal_out=None, multi_out=None):
    """{variable name: Numba type} for the scalar function *func* at *argtypes*.

    SSA versions of one variable (``x``, ``x.1``) are unified to one type; the
    dict *mixed_out* gets :func:`_mixed_versions`, the dict *literal_out* the
    variables whose versions that merge an unassigned path have one type that holds
    a literal (``t = 7`` under a branch: Literal[int](7); ``p = (7, x)``), which
    Numba reads there (:func:`_unassigned_reads`); the dict *multi_out* the
    variables whose versions have more than one type, with those types.
    """
    typingctx = cpu_target.typing_context
    typemap = _typemap(func, argtypes)
    refusal = typemap.pop(_REFUSAL, None)
    if refusal is not None:
        from ..errors import NumquadCompileError

        msg, filename, line = refusal
        raise NumquadCompileError(msg, filename, line)
    mixed = typemap.pop(_MIXED, {})
    unassigned = typemap.pop(_UNDEF, {})
    found = {}
    for key, ty in typemap.items():
        m = _VERSION.match(key)
        if not m:
            continue
        found.setdefault(m.group("name"), []).append(types.unliteral(ty))
    if mixed_out is not None:
        mixed_out.update(mixed)
    if multi_out is not None:
        multi_out.update({name: set(tys) for name, tys in found.items() if len(set(tys)) > 1})
    if literal_out is not None:
        literal_out.update({name: ty for name, ty in unassigned.items() if ty != types.unliteral(ty)})
    return {name: _unify(typingctx, tys) for name, tys in found.items()}


def expression_types(pyfunc, argtypes, exprs):
    """The Numba types of the AST expressions *exprs* of *pyfunc*, its parameters at
    *argtypes* (literals stay literal, as in a call's arguments); None when one
    reads a name that is neither a parameter nor a global, closure or builtin name,
    or Numba cannot type it."""
    import ast
    import builtins

    code = pyfunc.__code__
    params = code.co_varnames[: code.co_argcount]
    names = dict(vars(builtins))
    names.update(pyfunc.__globals__)
    for name, cell in zip(code.co_freevars, pyfunc.__closure__ or ()):
        try:
            names[name] = cell.cell_contents
        except ValueError:  # an empty cell
            pass
    read = {n.id for e in exprs for n in ast.walk(e) if isinstance(n, ast.Name)}
    if not exprs or len(params) != len(argtypes) or not read <= set(params) | set(names):
        return None
    body = "".join(f"    _nq_e{k} = {ast.unparse(e)}\n" for k, e in enumerate(exprs))
    scope = {k: v for k, v in names.items() if k in read and k not in params}
    exec(f"def _nq_probe({', '.join(params)}):\n{body}", scope)  # noqa: S102 - the user's own expressions
    try:
        typemap = _typemap(scope["_nq_probe"], argtypes)
    except errors.NumbaError:
        return None
    return [typemap[f"_nq_e{k}"] for k in range(len(exprs))]
