"""Front end of the CPU wave compiler: source -> a tree of wave items.

1. *Resolve*: every global reference (``Quad.swapHorizontal``, ``xpu.grid``,
   ``cuda.threadIdx.x``, another ``@xpu.jit`` function) is looked up in the
   function's globals and closure.
2. *Normalise*: each cross-lane call is hoisted into its own statement
   ``_nq_xN = OP(_nq_aN, ...)`` whose operands are fresh temporaries (or
   constant selectors); masked ``while``/``for`` loops become ``while True``
   loops whose exit is a masked ``break``.
3. *Segment*: a statement list becomes wave items: straight-line lane code
   (``Region``, one vectorised lane loop), uniform scalar statements, cross-lane
   calls, masked ``if``/loops and jumps (``return``/``break``/``continue``).

Every node keeps the user's line number; errors name the user's file and line.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import itertools
import linecache
import operator
import sys
from typing import Optional

import numpy as np
from numba.core import types as numba_types

from .. import _desugar
from .. import _control
from .._control import MISSING as _MISSING, Env as _SharedEnv
from .. import ops as _ops
from .. import xpu as _xpu
from ..errors import NumquadCompileError, NumquadTypeError, as_numba_typing
from . import cudaapi as _cudaapi
from . import nested as _nested
from . import splitnames as _splitnames
from .. import _power
from .._source import function_tree
from .power import pow_ as _pow_intrinsic
from .intrinsics import zero_like as _zero_like

__all__ = ["Frontend", "Region", "Uniform", "XLCall", "If", "UniformIf", "Loop", "Jump", "Barrier", "BarrierReduce"]

#: Every name numquad generates starts with this; user code may not use it. The
#: generated names: ``_nq_<stem>_<n>`` temporaries of the front end (a: operand,
#: x: op result, c: masked if condition, i/e/s: masked range loop counter/end/step,
#: cv: operand converted to its type at the call); ``_nq_cx<n>`` the temporaries of
#: conditional expressions that hold ops (numquad/_desugar.py); ``_nq_cu_*`` the
#: numba.cuda spellings' checks (cpu/cudaapi.py); ``_nq_f<k>_<name>`` the locals of
#: the k-th inlined lane function; in the block function (cpu/codegen.py)
#: ``_nq_v_<name>`` lane arrays (``_nq_v_<name>__<k>``: element k of a tuple),
#: ``_nq_m<k>``/``_nq_m_entry`` mask arrays, ``_nq_l``
#: the lane index, ``_nq_w`` the wave, ``_nq_t0``/``_nq_tx..z`` thread ids,
#: ``_nq_G`` lanes per group, ``_nq_XL_<Ns>_<op>`` whole-wave intrinsics,
#: ``_nq_SH_<Ns>_<op>`` their typing stand-ins, ``_nq_atomic_<name>`` atomics,
#: ``_nq_patomic_<name>``/``_nq_pv_<name>``/``_nq_palloc``/``_nq_pmerge``/``_nq_pon``
#: atomics into private copies (cpu/private_atomics.py),
#: ``_nq_i32``/``_nq_i64``/``_nq_u32``/``_nq_T_<dtype>`` scalar types and
#: ``_nq_shape_<name>``/``_nq_dtype_<name>`` shared/local array layouts.
_RESERVED = "_nq_"

# -- wave items ---------------------------------------------------------------


@dataclasses.dataclass
class Region:
    """Straight-line lane code: runs as one lane loop under the current mask."""

    stmts: list


@dataclasses.dataclass
class Uniform:
    """A statement whose value is the same in every lane: runs once per wave."""

    stmt: ast.stmt


@dataclasses.dataclass
class XLCall:
    """``target = op(args)``: one whole-wave vector operation. ``check`` is (the
    numba.cuda function's name, the temporary holding its mask) where a debug build
    checks the call against numba.cuda's mask rules (numquad/cpu/cudaapi.py,
    ``gen_sync_check``)."""

    target: str
    op: _ops.Op
    args: list  # ast.Name (a lane temporary) or ast.Constant (a selector)
    node: ast.stmt
    check: Optional[tuple] = None
    #: numba.cuda's shuffle written where this op came from (``shfl_sync``, ...): its
    #: operand is typed by numba.cuda's rule first (cpu/cudaapi.py ``_SHFL_STANDINS``)
    spelled: Optional[str] = None


@dataclasses.dataclass
class If:
    cond: str  # a bool lane temporary
    body: list
    orelse: list
    node: ast.stmt


@dataclasses.dataclass
class Loop:
    """A masked loop. ``uniform`` is (target, range-args) for a range loop whose
    trip count is the same in every lane; ``test`` the condition of a ``while``
    that is the same in every lane; with neither, a ``while True`` loop that ends
    when no lane is left."""

    body: list
    node: ast.stmt
    uniform: Optional[tuple] = None
    test: Optional[ast.expr] = None


@dataclasses.dataclass
class UniformIf:
    """An ``if`` whose condition is the same in every lane: plain scalar control."""

    test: ast.expr
    body: list
    orelse: list
    node: ast.stmt


@dataclasses.dataclass
class Barrier:
    """``xpu.syncthreads()``: every thread of the block arrives before any goes on."""

    node: ast.stmt


@dataclasses.dataclass
class BarrierReduce:
    """``target = syncthreads_count/_and/_or(arg)``: a block barrier with a reduction."""

    target: str
    kind: str  # the builtin's name
    arg: str  # a lane temporary
    node: ast.stmt


@dataclasses.dataclass
class Jump:
    kind: str  # "return", "break", "continue"
    node: ast.stmt
    value: Optional[ast.expr] = None


# -- resolution ---------------------------------------------------------------


def _cuda_aliases():
    """numba.cuda's spellings that mean the same as an xpu builtin. A kernel that
    spells ``cuda.*`` has imported numba.cuda already, so this never imports it."""
    cuda = sys.modules.get("numba.cuda")
    if cuda is None:
        return {}
    table = {}
    for name in ("grid", "gridsize", "laneid", "warpsize", "syncthreads", "syncwarp"):
        obj = getattr(cuda, name, None)
        if obj is not None:
            table[id(obj)] = (obj, name)
    for group in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
        obj = getattr(cuda, group, None)
        if obj is not None:
            table[id(obj)] = (obj, group)
    for group, names in (("shared", ("array",)), ("local", ("array",)), ("atomic", tuple(_xpu.atomic.__all__))):
        g = getattr(cuda, group, None)
        if g is None:
            continue
        table[id(g)] = (g, group)
        for n in names:
            obj = getattr(g, n, None)
            if obj is not None:
                table[id(obj)] = (obj, f"{group}.{n}")
    table.update(_cudaapi.extra_aliases(cuda))
    return table


_CUDA_ALIASES = None


def builtin_name(obj):
    """The xpu builtin name of *obj* ("grid", "threadIdx.x", ...), else None."""
    global _CUDA_ALIASES
    name = _xpu.builtin_name(obj)
    if name is not None:
        return name
    if not _CUDA_ALIASES and "numba.cuda" in sys.modules:
        _CUDA_ALIASES = _cuda_aliases()
    if not _CUDA_ALIASES:
        return None
    hit = _CUDA_ALIASES.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    return None


class _Env(_SharedEnv):
    """numquad/_control.py's name resolution, with numba.cuda device functions read
    as ``@xpu.jit`` functions (cudaapi.as_xpu)."""

    def __init__(self, pyfunc, fn: ast.FunctionDef):
        super().__init__(pyfunc, fn)
        self.pyfunc = pyfunc
        self.params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        if fn.args.vararg is not None:  # a kernel's *args: one tuple (cpu/dispatch.py)
            self.params.append(fn.args.vararg.arg)

    def lookup(self, name):
        return _cudaapi.as_xpu(super().lookup(name))

    def resolve(self, node):
        """The Python object an expression like ``a.b.c`` names, or _MISSING."""
        return _cudaapi.as_xpu(super().resolve(node))


# -- helpers --------------------------------------------------------------------


def _assigns_target(s):
    """Does the body of ``for`` loop *s* assign its (plain name) target?"""
    return isinstance(s.target, ast.Name) and any(
        isinstance(n, ast.Name) and n.id == s.target.id and isinstance(n.ctx, ast.Store)
        for n in ast.walk(ast.Module(body=s.body, type_ignores=[]))
    )


def _unrolled(expr):
    """Whether *expr* holds a constant that unrolling a loop over constants put
    there (``_Normaliser._unroll``): the loop variable of the user's code."""
    return any(getattr(n, "_nq_unrolled", False) for n in ast.walk(expr))


_FOLD = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    # a ** b of integer constants (b >= 0), as Numba folds it (the CUDA target's
    # constant: Quad.broadcast(v, 2 ** 2) is out of range there, not lane 0)
    ast.Pow: lambda a, b: a**b if 0 <= b <= 64 else None,
}

#: The numba.cuda spellings' helpers (cpu/cudaapi.py: the mask, predicate, lane and
#: match-value checks around a warp function's op): no side effects.
_WARP_CHECK_HELPERS = tuple(
    f"{_desugar.RESERVED}cu_{n}" for n in ("match", "mask_", "pred_", "shfl_", "lane_", "mval_", "vote_", "hint_")
)

#: Loops over at most this many constants around cross-lane ops are unrolled.
_UNROLL_MAX = 32
#: ... and only when the copies weigh at most this many statements (_unroll_weight), and no loop.
_UNROLL_BUDGET = 96


def _to_dtype(obj):
    if obj is _MISSING or obj is None:
        return None
    try:
        from numba.core import types as _nbt
        from numba.np.numpy_support import as_dtype

        if isinstance(obj, _nbt.Type):
            return as_dtype(obj)
    except Exception:
        pass
    try:
        return np.dtype(obj)
    except (TypeError, ValueError):
        return None


def _cuda_function_names():
    cuda = sys.modules.get("numba.cuda")
    if cuda is None:
        return {}
    names = _desugar.CUDA_WARP_FUNCTIONS
    return {id(getattr(cuda, n)): (getattr(cuda, n), n) for n in names if hasattr(cuda, n)}


_CUDA_FUNCS = None


class _CudaSpellings(ast.NodeTransformer):
    """numba.cuda's warp functions, rewritten into Quad/Wave ops with numba.cuda's
    return types (ballot_sync: int32; votes: bool; activemask/lanemask_lt: uint32)."""

    _SHFL = _cudaapi.SHUFFLE_OPS

    def __init__(self, fe):
        global _CUDA_FUNCS
        if not _CUDA_FUNCS:
            _CUDA_FUNCS = _cuda_function_names()
        self.fe = fe

    def visit_BinOp(self, node):
        self.generic_visit(node)
        return self._power_call(node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        return self._power_call(node)

    def _power_call(self, node):
        """``a ** b`` as ``_nq_pow(a, b)`` (numquad/_power.py: 0.0 ** -1 is inf, not an
        exception), but for integer constants (shapes) and small literal exponents."""
        if not isinstance(node.op, ast.Pow):
            return node
        holder = ast.Module(body=[ast.Expr(node) if isinstance(node, ast.BinOp) else node], type_ignores=[])

        def is_int_constant(n):
            return isinstance(_control.shape_value(self.fe.env, self.fe.consts, n), int)

        if not _power.rewrite(holder, is_int_constant):
            return node
        self.fe.env.closure[_power.NAME] = _pow_intrinsic
        st = holder.body[0]
        return st.value if isinstance(node, ast.BinOp) else st

    def visit_Expr(self, node):
        call = node.value
        b = self.fe.builtin_of(call.func) if isinstance(call, ast.Call) else None
        if b in _cudaapi.HINTS and b.startswith("st"):
            # cuda.stcs(a, i, v): the store a[i] = v, bounds-checked as any store (a plain
            # store helper wrote past the array), numba.cuda's type checks on a and i
            arr, idx, value = self._hint_args(b, call)
            return ast.copy_location(
                ast.Assign(
                    targets=[ast.copy_location(ast.Subscript(value=arr, slice=idx, ctx=ast.Store()), call)],
                    value=self.visit(value),
                ),
                node,
            )
        return self.generic_visit(node)

    def _hint_args(self, b, call):
        """(array, checked index, value or None) of cache hint *b*'s call."""
        n = 2 if b.startswith("ld") else 3
        if call.keywords or len(call.args) != n:
            self.fe.error(f"cuda.{b} takes {n} positional arguments; got {len(call.args) + len(call.keywords)}", call)
        arr, idx = (self.visit(a) for a in call.args[:2])
        if not all(
            isinstance(m, (ast.Name, ast.Attribute, ast.Constant, ast.Subscript, ast.Tuple, ast.Load))
            for m in ast.walk(arr)
        ):
            self.fe.error(f"cuda.{b}: pass the array as a name (assign {ast.unparse(arr)} to a variable first)", call)
        self.fe.uses_hints = True  # (a builtin: a function using one is inlined)
        checked = ast.copy_location(
            ast.Call(func=ast.Name(f"{_RESERVED}cu_hint_{b}", ast.Load()), args=[copy.deepcopy(arr), idx], keywords=[]),
            call,
        )
        return arr, checked, call.args[2] if n == 3 else None

    def visit_Call(self, node):
        b = self.fe.builtin_of(node.func)
        if b in _cudaapi.HINTS:
            if b.startswith("st"):
                self.fe.error(f"cuda.{b}(array, i, value) returns nothing: call it as a statement of its own", node)
            # cuda.ldcs(a, i): the load a[i], bounds-checked as any load (a plain load
            # helper read past the array)
            arr, idx, _ = self._hint_args(b, node)
            return ast.copy_location(ast.Subscript(value=arr, slice=idx, ctx=ast.Load()), node)
        self.generic_visit(node)
        called = self.fe.env.resolve(node.func)
        if (
            _ops.is_namespace(called)
            or _xpu.is_namespace(called)
            or called is _xpu
            or called is sys.modules.get("numba.cuda")
        ):
            shown = ast.unparse(node.func)
            some = ", ".join(f"{shown}.{n}" for n in list(getattr(called, "__all__", ()))[1:4])
            self.fe.error(
                f"{shown} is a namespace, not a function: call one of its names" + (f" ({some}, ...)" if some else ""),
                node,
            )
        # hasattr, round(x, n), x.bit_count(): as a device function compiles them too
        rewritten = _cudaapi.scalar_call(self.fe.env, node, self.fe.env.closure.__setitem__)
        if rewritten is not None:
            return rewritten
        if not _CUDA_FUNCS:
            return node
        obj = self.fe.env.resolve(node.func)
        hit = _CUDA_FUNCS.get(id(obj)) if obj is not _MISSING else None
        if hit is None or hit[0] is not obj:
            return node
        name = hit[1]
        a = node.args
        complaint = _desugar.warp_call_complaint(name, node)
        if complaint:
            self.fe.error(complaint, node)

        def P(src, **kw):
            e = ast.parse(src, mode="eval").body

            for n in ast.walk(e):
                if "lineno" in n._attributes:
                    n.lineno, n.end_lineno = node.lineno, node.end_lineno
                    n.col_offset, n.end_col_offset = node.col_offset, node.end_col_offset

            class Sub(ast.NodeTransformer):
                def visit_Name(self, n):
                    return copy.deepcopy(kw[n.id]) if n.id in kw else n

            return Sub().visit(e)

        def spelled(e):
            """*e* with its op call marked as numba.cuda's shuffle *name* (XLCall.spelled)."""
            for n in ast.walk(e):
                if isinstance(n, ast.Call) and self.fe.op_of(n) is not None:
                    n._nq_spelled = name
                    break
            return e

        def spell():
            # each argument holding a call appears once below: evaluated once, as numba.cuda
            # evaluates it (an atomic or a device function's call as the value ran twice)
            if name in self._SHFL:
                # numba.cuda's type rules: an integer mask, a 32/64-bit value (cpu/cudaapi.py,
                # the check returns the value); the selector's low five bits, as the GPU reads
                # it (cudaapi._lane_bits). A value without calls stays the op's operand as
                # written (no copy of it: the check, a separate tuple item, reads it again;
                # the op's typing checks the value first by numba.cuda's rule: spelled)
                if not any(isinstance(n, ast.Call) for n in ast.walk(a[1])):
                    return spelled(
                        P(
                            f"(_nq_cu_shfl_{name}(M, V), _nq_Wave.{self._SHFL[name]}(V, _nq_cu_lane_{name}(S)))[1]",
                            M=a[0],
                            V=a[1],
                            S=a[2],
                        )
                    )
                return P(
                    f"_nq_Wave.{self._SHFL[name]}(_nq_cu_shfl_{name}(M, V), _nq_cu_lane_{name}(S))",
                    M=a[0],
                    V=a[1],
                    S=a[2],
                )
            if name == "activemask":
                return P("_nq_Wave.ballot(True)")
            if name == "lanemask_lt":
                return P("_nq_np.uint32((_nq_np.uint64(1) << _nq_Wave.laneId()) - _nq_np.uint64(1))")
            mask = f"_nq_cu_mask_{name}(M)"  # an integer, as numba.cuda requires
            if name == "match_any_sync":
                return P(f"_nq_np.int32(_nq_cu_match(_nq_cu_mval_{name}(V)) & {mask})", M=a[0], V=a[1])
            if name == "match_all_sync":
                # (the active lanes of the mask if they all hold the value, else 0; all equal)
                return P(
                    f"_nq_cu_vote_match_all(_nq_cu_match(_nq_cu_mval_{name}(V)), _nq_Wave.ballot(True), {mask})",
                    M=a[0],
                    V=a[1],
                )
            pred = f"_nq_cu_pred_{name}(Q)"  # an integer or bool, as numba.cuda requires
            if name == "ballot_sync":
                return P(f"_nq_np.int32(_nq_Wave.ballot({pred}) & {mask})", M=a[0], Q=a[1])
            if name == "any_sync":
                return P(f"(_nq_Wave.ballot({pred}) & {mask}) != 0", M=a[0], Q=a[1])
            # all_sync, eq_sync (the predicate the same in every active lane of the mask)
            return P(f"_nq_cu_vote_{name[:-5]}(_nq_Wave.ballot({pred}), _nq_Wave.ballot(True), {mask})", M=a[0], Q=a[1])

        return self._with_check(name, a, spell())

    _CHECKED = frozenset(_cudaapi.SYNC_NAMES)

    def _with_check(self, name, a, e):
        """*e*, the rewrite of numba.cuda's *name*; in a debug build its cross-lane call
        carries the mask expression, which the call's hoisting evaluates into a
        temporary for the check of numba.cuda's mask rules (XLCall.check). A mask
        with a call that is not a cross-lane op (which may have effects) is not
        evaluated twice: that call goes unchecked."""
        if not self.fe.debug or name not in self._CHECKED:
            return e
        mask = a[0]

        def pure(n):  # a cross-lane op, or a conversion such as np.uint32(...)
            obj = self.fe.env.resolve(n.func)
            return self.fe.op_of(n) is not None or (isinstance(obj, type) and issubclass(obj, (int, np.generic)))

        if any(isinstance(n, ast.Call) and not pure(n) for n in ast.walk(mask)):
            return e
        for n in ast.walk(e):
            if isinstance(n, ast.Call) and self.fe.op_of(n) is not None:
                n._nq_cucheck = (name, copy.deepcopy(mask))
                break
        return e


def _all_names(body, fe):
    out = set()
    for s in body:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and n.id.startswith(_RESERVED):
                out.add(n.id)
    return out


def _return_in_loop(node, in_loop=False):
    if isinstance(node, ast.Return):
        return in_loop
    inner = in_loop or isinstance(node, (ast.For, ast.While))
    return any(_return_in_loop(c, inner) for c in ast.iter_child_nodes(node))


def _unpack_target(t):
    """*t* is a name, or a (nested) tuple of names."""
    return isinstance(t, ast.Name) or isinstance(t, ast.Tuple) and all(map(_unpack_target, t.elts))


def _names_in(node, ctx=None):
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and (ctx is None or isinstance(n.ctx, ctx)):
            out.append(n.id)
    return out


def _store_sites(body, params, resolve, builtin_of=None, depth=0):
    """{param: (node, detail)} for each of *params* (names) that a store in *body*
    (statements) reaches: ``x[...] = v``, ``x.f = v``, ``x.flat[j] += v``, an atomic
    on ``x...``, ``x.fill(v)``, whose target is reached from the parameter by
    indexing, attributes and method calls, also through names assigned such a
    value; and a call passing
    such a value to a user function (a device function) that stores into that
    parameter (*detail* then names the function and the store's line). *resolve*
    maps a name or attribute node to its object."""
    reach = {p: p for p in params}

    def root(e):
        while True:
            if isinstance(e, (ast.Subscript, ast.Attribute)):
                e = e.value
            elif isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):
                e = e.func.value  # a.reshape(...), a.view(...)
            else:
                return reach.get(e.id) if isinstance(e, ast.Name) else None

    nodes = [n for s in body for n in ast.walk(s)]
    changed = True
    while changed:
        changed = False
        for n in nodes:
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None and root(n.value):
                param = root(n.value)
                for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                    for name in [t] if isinstance(t, ast.Name) else t.elts if isinstance(t, ast.Tuple) else []:
                        if isinstance(name, ast.Name) and name.id not in reach:
                            reach[name.id] = param
                            changed = True
    out = {}
    for n in nodes:
        targets = (
            n.targets
            if isinstance(n, ast.Assign)
            else [n.target]
            if isinstance(n, (ast.AugAssign, ast.AnnAssign))
            else []
        )
        hits = [(t, root(t), None) for t in targets if isinstance(t, (ast.Subscript, ast.Attribute))]
        if isinstance(n, ast.Call):
            name = builtin_of(n.func) if builtin_of else None
            if name is None and isinstance(n.func, ast.Attribute) and n.func.attr.startswith("atomic"):
                name = "atomic." + n.func.attr  # (in a callee: cuda.atomic.add)
            if name is not None and name.startswith("atomic.") and n.args:
                hits.append((n, root(n.args[0]), None))
            elif isinstance(n.func, ast.Attribute) and n.func.attr == "fill":
                hits.append((n, root(n.func.value), None))  # a.fill(v): a store
            elif depth < 8:
                hits += _callee_hits(n, root, resolve, depth)
        for node, param, detail in hits:
            if param and param not in out:
                out[param] = (node, detail)
    return out


def _callee_hits(call, root, resolve, depth):
    """(call, param, detail) for the arguments of *call* reaching a parameter that
    the called user function (a Numba or numquad dispatcher's ``py_func``) stores into."""
    reached = [(j, root(a)) for j, a in enumerate(call.args) if root(a)]
    if not reached:
        return []
    try:
        obj = resolve(call.func)
    except Exception:
        return []
    py = getattr(obj, "py_func", None)
    code = getattr(py, "__code__", None)
    if code is None:
        return []
    tree = function_tree(py)
    if tree is None:
        return []
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return []
    names = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    closure = {}
    for k, cell in zip(code.co_freevars, py.__closure__ or ()):
        try:
            closure[k] = cell.cell_contents
        except ValueError:
            pass

    def resolve_inner(e):
        if isinstance(e, ast.Name):
            return closure[e.id] if e.id in closure else py.__globals__.get(e.id)
        if isinstance(e, ast.Attribute):
            base = resolve_inner(e.value)
            return getattr(base, e.attr, None) if base is not None else None
        return None

    want = {names[j]: p for j, p in reached if j < len(names)}
    inner = _store_sites(fn.body, list(want), resolve_inner, None, depth + 1)
    out = []
    for q, (node, _) in inner.items():
        line = code.co_firstlineno + getattr(node, "lineno", 1) - 1  # (the source starts there)
        out.append((call, want[q], f"{py.__name__}(), line {line}"))
    return out


def read_only_store_message(param):
    """The refusal of a store into read-only argument *param* (here and at a launch)."""
    return (
        f"a store into a read-only array (argument '{param}' has its writeable flag False, and "
        f"the CPU target runs the kernel on the array's own memory): pass a writeable array "
        f"(a.copy())"
    )


def _loc(node, default=None):
    return getattr(node, "lineno", default)


def _global_values(d):
    """(name, value) for every global and closure value *d*'s code may read."""
    fn = d.py_func
    codes = [fn.__code__]
    for c in codes:
        codes.extend(k for k in c.co_consts if isinstance(k, type(fn.__code__)))
    names = {n for c in codes for n in c.co_names}
    out = [(n, fn.__globals__[n]) for n in sorted(names) if n in fn.__globals__]
    for n, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out.append((n, cell.cell_contents))
        except ValueError:
            pass
    return out


def _constant_default(value):
    """Can default *value* be spliced into an inlined call as a constant?"""
    if isinstance(value, tuple):
        return all(_constant_default(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex, str))


def _global_default(value):
    """Can default *value* be read in an inlined call as a global (its own type)?"""
    if isinstance(value, tuple):
        return all(_constant_default(v) or _global_default(v) for v in value)
    return isinstance(value, np.generic) and value.dtype.kind in "biufc"


def _compiled_once(callee):
    """Does numba.cuda compile *callee* (an ``@xpu.jit`` Dispatcher, or None) once and
    call it, rather than inline it at each call: a ``@cuda.jit(device=True)``
    function without ``inline="always"``? Its shared arrays are then one per
    function, as numba.cuda emits them once (numquad's CUDA target runs it so)."""
    foreign = getattr(callee, "_numquad_foreign", None)
    if foreign is None:
        return False
    from ..xpu import is_cuda_function

    if not is_cuda_function(foreign):
        return False
    inline = (getattr(foreign, "targetoptions", None) or {}).get("inline", "never")
    return inline not in ("always", True)


def _stored_names(stmts):
    """The names *stmts* store (assignments, loop targets), at any depth."""
    return {n.id for st in stmts for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _aliased(fn, name):
    """Is the value of *name* bound to another name somewhere in *fn* (``b = name``,
    ``b, c = name, x``, ``t = (name, x)``, ``(b := name)``)?"""

    def holds(e):
        if isinstance(e, ast.Name):
            return e.id == name
        if isinstance(e, (ast.Tuple, ast.List)):
            return any(holds(x) for x in e.elts)
        if isinstance(e, ast.IfExp):
            return holds(e.body) or holds(e.orelse)
        return False

    for n in ast.walk(fn):
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and n.value is not None and holds(n.value):
            return True
    return False


def _numba_inlines(callee):
    """Is *callee* (an ``@xpu.jit`` Dispatcher, or None) inlined in Numba's IR where a
    GPU kernel calls it, rather than compiled once and called: an ``@xpu.jit``
    function without declared signatures (cuda/dispatch.py, ``inline="always"``), or a
    numba.cuda or Numba function with ``inline="always"``?"""
    if callee is None:
        return False
    foreign = getattr(callee, "_numquad_foreign", None)
    if foreign is not None:
        return (getattr(foreign, "targetoptions", None) or {}).get("inline", "never") in ("always", True)
    return not getattr(callee, "_declared", None)


def _recursive(callee):
    """Does *callee* call itself, directly or through other functions?"""
    from ..xpu import Dispatcher

    for _, v in _global_values(callee):
        v = _cudaapi.as_xpu(v)
        if isinstance(v, Dispatcher) and _call_cycle(v, callee.py_func) is not None:
            return True
    return False


def _unassigned_locals(cfe):
    """The locals a call of the function of Frontend *cfe* may read before assigning
    them (codegen._defined_before_reads), sorted."""
    from .storage import defined_before_reads as _defined_before_reads

    return [
        n
        for n in sorted(cfe.env.locals - set(cfe.env.params) - set(cfe.allocs))
        if not _defined_before_reads(cfe.body, n, False)[0]
    ]


def _call_cycle(callee, pyfunc):
    """The ``@xpu.jit`` functions callee -> ... -> (the one of *pyfunc*) when *callee*
    calls back, directly or not, into *pyfunc*; else None."""
    from ..xpu import Dispatcher

    todo = [(callee, [callee])]
    seen = set()
    while todo:
        d, path = todo.pop()
        if d.py_func is pyfunc:
            return path
        if id(d) in seen:
            continue
        seen.add(id(d))
        for _, v in _global_values(d):
            v = _cudaapi.as_xpu(v)  # numba.cuda device functions too
            if isinstance(v, Dispatcher):
                todo.append((v, path + [v]))
    return None


def _statement_count(d):
    """The statements of *d*'s source (an ``@xpu.jit`` function), 50 without it."""
    from .._source import function_tree

    tree = function_tree(getattr(d, "py_func", None))
    if tree is None:
        return 50
    return sum(isinstance(n, ast.stmt) for n in ast.walk(tree)) - 1  # not the def


def _uses_wave_features(d):
    """Does *d*'s code name an op, an xpu builtin or numba.cuda (bytecode, no parse)?"""
    for _, v in _global_values(d):
        if (
            _ops.of_function(v) is not None
            or _xpu.builtin_name(v) is not None
            or isinstance(v, type(_ops.Wave))
            or v is _xpu
            or v is sys.modules.get("numba.cuda")
        ):
            return True
    return False


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


class Frontend:
    """Parses, normalises and segments one ``@xpu.jit`` function."""

    def __init__(self, dispatcher, consts=None, argtypes=None, arg_dtypes=None, split=None, no_unroll=False):
        self.dispatcher = dispatcher
        # (cpu/dispatch.py) loops over constants run as loops, as Numba types them, not
        # written out copy by copy: a variable they store changes type in them
        self.no_unroll = no_unroll
        # the names stored in the bodies of loops written out copy by copy (each copy
        # typed on its own, where Numba's loop types them as one: cpu/dispatch.py)
        self.unrolled_stores = set()
        self.literal_unrolled_stores = set()
        # the Numba types of the parameters, where known: for numba.cuda's words in errors
        self.argtypes = argtypes
        # an inlined function's array parameters whose element type the call fixes
        # ({name: dtype}): ``local.array(2, dtype=a.dtype)`` in a device function
        self.arg_dtypes = arg_dtypes or {}
        self.pyfunc = dispatcher.py_func
        self.filename = dispatcher.filename
        # debug=True: numba.cuda's warp functions are checked against their mask rules
        self.debug = bool(getattr(dispatcher, "debug", False))
        self.fn = dispatcher.source_tree
        self.env = _Env(self.pyfunc, self.fn)
        self._counter = itertools.count()
        for name in self.env.locals:
            if name.startswith(_RESERVED) and not _desugar.is_temporary(name) and not _nested.is_capture(name):
                self.error(f"names starting with {_RESERVED!r} are reserved by numquad; got {name!r}", self.fn)
        _nested.lift(self)  # nested defs become functions it calls
        self._unroll_literal_loops(self.fn)
        # variables whose values have several types, kept in one lane array of their
        # unification: a name per top-level assignment (cpu/splitnames.py)
        self.split = _splitnames.split(self.fn, split, set(self.env.params)) if split else {}
        self.env.locals |= set(self.split)
        self.ops_used = set()
        self.allocs = {}  # name -> ("shared" | "local", shape, np.dtype, node)
        # (a numba.cuda device function's, callee, its name there) -> the one name of a
        # shared array every inlined copy of that function uses (_inline_call)
        self.shared_once = {}
        # the prefix of each inlined call's renamed locals -> (callee name, its file)
        self.inlined = {}
        self.env.closure.update({"_nq_Wave": _ops.Wave, "_nq_np": np})
        self.env.closure.update(_cudaapi.helpers())
        _cudaapi.check_supported(self)
        # locals assigned once to a constant, and parameters bound to constants by an
        # inlining call site: shapes and selectors may use them
        self.consts = _cudaapi.local_constants(self, consts)
        body = [_CudaSpellings(self).visit(s) for s in self.fn.body]
        self.body = self._normalise_block(body, in_loop=False)
        self.has_barrier = any(self._contains_barrier(s) for s in self.body)
        self.uniform = self._uniform_names(self.body)
        self.items = self._segment(self.body, top=True)
        self._check_read_only_stores()

    # -- stores into read-only arguments ------------------------------------------
    def _check_read_only_stores(self):
        """Refuse a store reaching a read-only array argument (writeable flag False)
        by a path Numba's typing does not see: a record's field (``a[i].x = v``,
        ``a[i]['x'] = v``, ``a[i].v[0] = v``, an atomic on ``a[i].v``), ``a.flat[j] = v``.
        On the CPU the kernel runs on the array's own memory: such a store wrote into
        it (an immutable ``bytes`` object's, say) or faulted (a read-only memmap).
        Plain stores are refused the same way (Numba types the array read-only). A
        name assigned a value reached from such an argument counts as reaching it.
        A single record argument's type does not say whether it is writeable: the
        record parameters stored into are kept (``record_stores``: name -> line) for
        the launch to check (cpu/dispatch.py)."""
        self.record_stores = {}
        if not self.argtypes:
            return
        ro = [p for p, t in zip(self.env.params, self.argtypes) if isinstance(t, numba_types.Array) and not t.mutable]
        records = [p for p, t in zip(self.env.params, self.argtypes) if isinstance(t, numba_types.Record)]
        stores = self._stores_reaching(ro + records)
        for param, (node, inner) in stores.items():
            line = _loc(node, self.dispatcher.firstlineno)
            where = f"{self.pyfunc.__name__}" + (f" (the store: {inner})" if inner else "")
            if param in records:
                self.record_stores[param] = (line, where)
                continue
            raise NumquadTypeError(f'File "{self.filename}", line {line}, in {where}: {read_only_store_message(param)}')

    def _stores_reaching(self, params):
        """{param: (its first store, or the call reaching one, line in a callee or None)}
        for the *params* a store reaches (``_store_sites``)."""
        return _store_sites(self.body, params, self.env.resolve, self.builtin_of)

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

    # -- errors ---------------------------------------------------------------
    def error(self, msg, node):
        raise NumquadCompileError(
            f"{msg} (in {self.pyfunc.__name__})", self.filename, _loc(node, self.dispatcher.firstlineno)
        )

    def typing_error(self, msg, node, call=None):
        """``error``, for a mistake numba.cuda reports as a TypingError: the error is
        also one. With the argument types known, the message of a refused
        ``shared.array``/``local.array`` *call* goes on in numba.cuda's words."""
        err = NumquadCompileError(
            f"{msg} (in {self.pyfunc.__name__})", self.filename, _loc(node, self.dispatcher.firstlineno)
        )
        if call is not None and self.argtypes is not None:
            kind = self.builtin_of(call.func).split(".")[0]
            _cudaapi.allocation_wording(err, kind, call, self.pyfunc, self.argtypes)
        raise as_numba_typing(err)

    def fresh(self, stem):
        # "_nq_<stem>_<n>": the underscore keeps temporaries apart from the helpers
        # of generated code ("_nq_i32" was both the 32nd "_nq_i" loop counter and
        # np.int32, a NotDefinedError from Numba)
        return f"{_RESERVED}{stem}_{next(self._counter)}"

    # -- classification of calls ------------------------------------------------
    def op_of(self, node):
        """The ops.Op called by *node* (an ast.Call), else None."""
        if not isinstance(node, ast.Call):
            return None
        return _ops.of_function(self.env.resolve(node.func))

    _GROUPS = ("threadIdx", "blockIdx", "blockDim", "gridDim", "shared", "local", "const", "atomic")

    def builtin_of(self, node):
        """The xpu builtin an expression names ("grid", "threadIdx.x", ...), else None."""
        obj = self.env.resolve(node)
        if obj is _MISSING:
            return None
        name = builtin_name(obj)
        if name is None and isinstance(node, ast.Attribute):
            base = self.builtin_of(node.value)
            if base in self._GROUPS:
                return f"{base}.{node.attr}"
        return name

    def is_xl(self, node):
        op = self.op_of(node)
        return op is not None and op.kind != "query"

    def contains_xl(self, node):
        return (
            any(self.is_xl(n) for n in ast.walk(node)) or self._contains_barrier(node) or self._contains_syncwarp(node)
        )

    def _contains_syncwarp(self, node):
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and self.builtin_of(n.func) in _cudaapi.REGION_ENDS:
                return True
        return False

    def _is_syncwarp(self, s):
        return (
            isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Call)
            and self.builtin_of(s.value.func) in _cudaapi.REGION_ENDS
        )

    def _check_syncwarp_mask(self, call):
        """``syncwarp(mask=0xffffffff)``: its mask is never computed on the CPU (a
        region ends there), so a mask numba.cuda refuses is refused here by its form:
        more than one argument, or a constant that is no integer."""
        args = list(call.args) + [k.value for k in call.keywords]
        bad_kw = [k.arg for k in call.keywords if k.arg != "mask"]
        if len(args) > 1 or bad_kw:
            self.error(f"syncwarp(mask=0xffffffff) takes at most 1 argument (mask); got {ast.unparse(call)}", call)
        if (
            args
            and isinstance(args[0], ast.Constant)
            and (not isinstance(args[0].value, int) or isinstance(args[0].value, bool))
        ):
            self.error(
                f"syncwarp(mask): the mask must be an integer (a 32-bit lane mask); got "
                f"{type(args[0].value).__name__} {args[0].value!r}",
                call,
            )

    def _contains_barrier(self, node):
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and (
                self.builtin_of(n.func) == "syncthreads" or self.builtin_of(n.func) in _cudaapi.BARRIER_REDUCE
            ):
                return True
        return False

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
            self._check_order([s.test])
            pre, test = self._hoist(s.test)
            s.test = test
            s.body = self._normalise_block(s.body, in_loop)
            s.orelse = self._normalise_block(s.orelse, in_loop)
            return pre + [s]
        if isinstance(s, ast.While):
            s.body = self._normalise_block(s.body, True)
            s.orelse = self._normalise_block(s.orelse, in_loop)
            if self.contains_xl(s.test):
                if s.orelse:
                    self.error("a while/else loop whose test has a cross-lane op", s)
                self._check_order([s.test])
                pre, test = self._hoist(s.test)
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
            self._check_order([s.iter])
            pre, it = self._hoist(s.iter)
            s.iter = it
            s.body = self._normalise_block(s.body, True)
            s.orelse = self._normalise_block(s.orelse, in_loop)
            return seq_pre + pre + [s]
        if isinstance(s, ast.Return):
            if s.value is None:
                return [s]
            self._check_order([s.value])
            pre, v = self._hoist(s.value)
            s.value = v
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
            if isinstance(new, ast.Expr) and isinstance(new.value, ast.Name) and new.value.id.startswith(_RESERVED):
                return pre  # a bare op call whose result is unused
            return pre + [new]
        return [s]

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
                if isinstance(f, Dispatcher) and _uses_wave_features(f):
                    inlined += 3 * _statement_count(f)
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
                    c._nq_unrolled = True  # see _unrolled
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
                if _RESERVED in what:
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

    # -- shared and local arrays ---------------------------------------------------
    def _allocation_inside(self, s):
        """(node, field, call) where an assignment's value is a view of a shared or local
        array made in it (``a[1:]``, ``a.view(t)``, ``a.reshape(...)`` of the call)."""
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)):
            return None
        node = s.value
        while True:
            if isinstance(node, ast.Subscript):
                nxt, field = node.value, "value"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                node, nxt, field = node.func, node.func.value, "value"
            elif isinstance(node, ast.Attribute):
                nxt, field = node.value, "value"
            else:
                return None
            if isinstance(nxt, ast.Call) and self.builtin_of(nxt.func) in ("shared.array", "local.array"):
                return node, field, nxt
            node = nxt

    def _check_alignment(self, node, s, call):
        """numba.cuda's checks of a shared/local array's ``alignment=`` (its words:
        numba-cuda's cudaimpl.py): a constant int, positive, a power of 2, a
        multiple of the pointer size; None is no alignment."""
        if isinstance(node, ast.Constant) and node.value is None:
            return
        if isinstance(node, (ast.Name, ast.Attribute)) and not (
            isinstance(node, ast.Name) and node.id in self.env.locals
        ):
            if self.env.resolve(node) is None:  # a global or closure name bound to None
                return
        v = _cudaapi.constant_value(self, node)
        if isinstance(v, bool) or not isinstance(v, int):
            self.typing_error(
                f"RequireLiteralValue: alignment must be a constant integer; got {ast.unparse(node)}", s, call
            )
        msg = _control.alignment_complaint(v)
        if msg is None:
            return
        raise ValueError(f'File "{self.filename}", line {_loc(s, self.dispatcher.firstlineno)}: {msg}; got {v}')

    def _allocation(self, s):
        kind = self.builtin_of(s.value.func).split(".")[0]
        call = s.value
        what = f"xpu.{kind}.array(shape, dtype)"
        if len(s.targets) != 1 or not isinstance(s.targets[0], ast.Name):
            self.error(f"assign {what} to a plain name", s)
        name = s.targets[0].id
        args = list(call.args)
        kw = {k.arg: k.value for k in call.keywords}
        extra = sorted(str(k) for k in kw if k not in ("shape", "dtype", "alignment"))
        if extra or len(args) > 3:
            got = f"keyword argument(s) {', '.join(extra)}" if extra else f"{len(args)} arguments"
            self.error(f"{what} takes a shape, a dtype and an alignment; got {got}", s)
        align = args[2] if len(args) > 2 else kw.get("alignment")
        if align is not None:
            self._check_alignment(align, s, call)
            # checked as numba.cuda checks it; the CPU's arrays need no more (what a
            # kernel computes does not depend on an array's address)
            call.args = args = args[:2]
            call.keywords = [k for k in call.keywords if k.arg != "alignment"]
        shape = args[0] if args else kw.get("shape")
        dtype = args[1] if len(args) > 1 else kw.get("dtype")
        if shape is None or dtype is None:
            self.typing_error(f"{what} needs a shape and a dtype", s)
        dims = _cudaapi.constant_shape(self, shape)
        if kind == "shared" and dims == [0]:
            kind = "dynshared"  # the launch's dynamic shared memory (numba.cuda's shape 0)
        elif any(d is None or d < 1 for d in dims):
            self.typing_error(
                f"{what}: the shape must be a constant positive int or tuple of ints "
                f"(a literal, a global, closure or module name, a local assigned "
                f"once, or arithmetic on those); got {ast.unparse(shape)}",
                s,
                call,
            )
        obj = (
            self.env.resolve(dtype)
            if isinstance(dtype, (ast.Name, ast.Attribute))
            else (dtype.value if isinstance(dtype, ast.Constant) else _MISSING)
        )
        if (
            obj is _MISSING
            and isinstance(dtype, ast.Attribute)
            and dtype.attr == "dtype"
            and isinstance(dtype.value, ast.Name)
            and dtype.value.id in self.env.params
            and self.argtypes is not None
        ):
            # ``dtype=ary.dtype`` of an array argument: its type is the compile's
            t = self.argtypes[self.env.params.index(dtype.value.id)]
            if hasattr(t, "dtype") and hasattr(t, "ndim"):
                obj = t.dtype
        if (
            obj is _MISSING
            and isinstance(dtype, ast.Attribute)
            and dtype.attr == "dtype"
            and isinstance(dtype.value, ast.Name)
            and dtype.value.id in self.arg_dtypes
        ):
            obj = self.arg_dtypes[dtype.value.id]
        python_type = _control.python_type_dtype(what, obj)
        if python_type:
            self.typing_error(python_type, s, call)
        dt = _to_dtype(obj)
        if dt is None or not (dt.kind in "biufc" or dt.fields):
            # a string NumPy does not know: numba.cuda's words for it
            bad = (
                f"Invalid NumPy dtype specified: '{obj}'"
                if isinstance(obj, str) and dt is None
                else f"unsupported dtype {ast.unparse(dtype)}"
            )
            self.typing_error(
                f"{what}: {bad}; it takes a bool, integer, float or complex NumPy/Numba type, or a record dtype",
                s,
                call,
            )
        if name in self.allocs:
            k0, dims0, dt0, _ = self.allocs[name]
            if kind == "local" and k0 == "local" and dims0 == tuple(dims) and dt0 == dt:
                # the same shape and dtype again (``tmp = cuda.local.array(4, uint32)`` in two
                # branches): one thread's storage for both, as a loop's allocation reuses
                # its own (a new local array's contents are undefined); not where another
                # name keeps the first array (``b = a`` then ``a = cuda.local.array(...)``:
                # two arrays in numba.cuda, one storage here)
                if _aliased(self.fn, name):
                    self.error(
                        f"{name} is assigned two local arrays and another name keeps one of "
                        f"them; each local.array call is an array of its own, and the CPU "
                        f"target takes one local array per name: use one name per array",
                        s,
                    )
                return
            if k0 == kind and dims0 == tuple(dims) and dt0 == dt:
                self.error(
                    f"{name} is assigned two {what} arrays; each shared.array call is an "
                    f"array of its own, and the CPU target takes one shared array per name: "
                    f"use one name per array (or allocate it once, before the branches)",
                    s,
                )
            self.error(
                f"{name} is assigned two {what} arrays of different shapes, dtypes or "
                f"memories ({dims0} {dt0} and {tuple(dims)} {dt}); the CPU target takes one "
                f"per name (or the same local shape and dtype again): use one name per "
                f"array",
                s,
            )
        self.allocs[name] = (kind, tuple(dims), dt, s)

    # -- inlining of lane functions that use cross-lane ops or thread builtins ----
    def _inlinable(self, node):
        """The normalised frontend of the lane function *node* calls, where the CPU
        target inlines that call (it uses cross-lane ops or thread builtins, itself or
        through what it calls, or is passed a function), else None. Memoised per call
        node: the order checks ask before ``_hoist`` inlines."""
        memo = self.__dict__.setdefault("_inlinable_memo", {})
        hit = memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        cfe = self._inlinable_uncached(node)
        memo[id(node)] = (node, cfe)
        return cfe

    def _inlined(self, node):
        """Is *node* a call the CPU target inlines (runs before its statement)? (A
        function naming an op or a thread builtin is, without building its frontend.)"""
        from ..xpu import Dispatcher

        if not isinstance(node, ast.Call):
            return False
        f = self.env.resolve(node.func)
        return isinstance(f, Dispatcher) and (_uses_wave_features(f) or self._inlinable(node) is not None)

    def _hoisted(self, n):
        """Does the call *n* run before the rest of its statement (``_hoist``): a
        cross-lane op, a barrier reduction, an inlined lane function?"""
        return isinstance(n, ast.Call) and (
            self.is_xl(n) or self.builtin_of(n.func) in _cudaapi.BARRIER_REDUCE or self._inlined(n)
        )

    def _inlinable_uncached(self, node):
        from ..xpu import Dispatcher

        callee = self.env.resolve(node.func)
        if not isinstance(callee, Dispatcher):
            return None
        cycle = _call_cycle(callee, self.pyfunc)
        if cycle is not None:
            # recursion: never inlined (that would not end); a recursive function is a
            # plain scalar function, so it cannot use cross-lane ops or thread builtins
            chain = " -> ".join([self.pyfunc.__name__] + [d.__name__ for d in cycle])
            if len(cycle) > 1:
                self.error(
                    f"mutually recursive lane functions ({chain}) are not supported by "
                    f"the CPU target (a function that calls itself is)",
                    node,
                )
            if any(_uses_wave_features(d) for d in cycle):
                self.error(
                    f"recursive call ({chain}): a function that uses cross-lane ops or "
                    f"thread builtins (a kernel, or a lane function) is inlined into its "
                    f"caller, so it cannot be recursive",
                    node,
                )
            return None
        self._bind_call(node, callee)
        # parameters the call binds to constants (a shape passed down to the callee)
        params = list(callee.source_tree.args.posonlyargs + callee.source_tree.args.args)
        bindings = {}
        for p, a in zip(params, node.args):
            v = _cudaapi.constant_value(self, a)
            if v is None:
                v = _cudaapi.compile_time_object(self, a)
            if v is not None:
                bindings[p.arg] = v
        dtypes = {
            p.arg: dt
            for p, a in zip(params, node.args)
            if isinstance(a, ast.Name) and (dt := self._array_dtype(a.id)) is not None
        }
        cfe = callee._target("cpu").frontend(
            consts=bindings, arg_dtypes=dtypes, debug=self.debug, no_unroll=self.no_unroll
        )
        cfe.signatures = getattr(callee, "_declared", None) or []
        cfe.callee = callee
        # a function passed as an argument (``apply(sq, x)``, numba.cuda's Dispatcher
        # argument) is bound only in an inlined copy: compiled on its own, the callee
        # would receive the numba.cuda object itself
        passes_function = any(isinstance(v, Dispatcher) or builtin_name(v) is not None for v in bindings.values())
        if cfe.ops_used or cfe.uses_builtins() or passes_function:
            return cfe
        if _numba_inlines(callee) and not _recursive(callee) and _unassigned_locals(cfe):
            # a local a call may read unassigned: the CUDA target's copy is inlined in
            # Numba's IR, where the local keeps the call before's value (docs/semantics.md);
            # only an inlined copy keeps it here too (a scalar function starts at 0)
            return cfe
        return None

    def _array_dtype(self, name):
        """The element type of the array *name* holds where the compile knows it (an
        array argument, an array parameter a caller fixed, a shared or local array),
        else None."""
        if name in self.env.params and self.argtypes is not None:
            t = self.argtypes[self.env.params.index(name)]
            return t.dtype if hasattr(t, "dtype") and hasattr(t, "ndim") else None
        if name in self.arg_dtypes:
            return self.arg_dtypes[name]
        if name in self.allocs:
            return self.allocs[name][2]
        return None

    def _bind_call(self, node, callee):
        """Rewrite the call *node* of lane function *callee* in place as positional
        arguments only: keywords put at their parameters, omitted trailing ones given
        the callee's defaults (constants), as Python binds them. A call that does not
        bind is left for _inline_call's error."""
        fargs = callee.source_tree.args
        if (
            fargs.vararg
            or fargs.kwarg
            or fargs.kwonlyargs
            or any(isinstance(a, ast.Starred) for a in node.args)
            or any(k.arg is None for k in node.keywords)
        ):
            return
        names = [a.arg for a in fargs.posonlyargs + fargs.args]
        if len(node.args) > len(names):
            self.error(
                f"{callee.__name__}() takes {len(names)} positional argument(s) "
                f"({', '.join(names)}); got {len(node.args)}",
                node,
            )
        bound = dict(zip(names, node.args))
        for k in node.keywords:
            if k.arg in {a.arg for a in fargs.posonlyargs}:
                self.error(f"{callee.__name__}() got a positional-only argument passed as a keyword: '{k.arg}'", node)
            if k.arg not in names:
                self.error(
                    f"{callee.__name__}() got an unexpected keyword argument '{k.arg}'; it takes ({', '.join(names)})",
                    node,
                )
            if k.arg in bound:
                self.error(f"{callee.__name__}() got multiple values for argument '{k.arg}'", node)
            bound[k.arg] = k.value
        defaults = callee.py_func.__defaults__ or ()
        first_default = len(names) - len(defaults)
        args = []
        for j, name in enumerate(names):
            if name in bound:
                args.append(bound[name])
            elif j >= first_default:
                value = defaults[j - first_default]
                if _constant_default(value):
                    args.append(ast.copy_location(ast.Constant(value), node))
                    continue
                if not _global_default(value):
                    self.error(
                        f"{callee.__name__}(): the default of '{name}' is a "
                        f"{type(value).__name__}; the CPU target inlines this "
                        f"function with number (NumPy scalars too), bool, None or "
                        f"string defaults only: pass '{name}' explicitly",
                        node,
                    )
                # a NumPy scalar (np.float32(0.1)) keeps its type: a global, as Numba
                # reads a default it cannot splice in as a literal
                glob = f"{_RESERVED}dflt{len(self.env.closure)}_{name}"
                self.env.closure[glob] = value
                args.append(ast.copy_location(ast.Name(glob, ast.Load()), node))
            else:
                self.error(f"{callee.__name__}() missing argument '{name}'; it takes ({', '.join(names)})", node)
        node.args, node.keywords = args, []

    def uses_builtins(self):
        if self.allocs or self.has_barrier or getattr(self, "uses_hints", False):
            return True
        for node in itertools.chain(ast.walk(self.fn), *(ast.walk(s) for s in self.body)):
            if isinstance(node, (ast.Name, ast.Attribute)) and self.builtin_of(node) is not None:
                return True
            if isinstance(node, ast.Call) and self.op_of(node) is not None:
                return True
        return False

    def _inline_call(self, node, cfe, pre, visitor):
        """Splice the callee's (normalised) body in place of the call."""
        if node.keywords or len(node.args) != len(cfe.env.params):
            self.error(
                f"{cfe.pyfunc.__name__}() takes {len(cfe.env.params)} positional argument(s); got {len(node.args)}",
                node,
            )
        k = next(self._counter)
        prefix = f"{_RESERVED}f{k}_"
        self.inlined[prefix] = (cfe.pyfunc.__name__, cfe.filename)
        args = [visitor.visit(a) for a in node.args]
        body = copy.deepcopy(cfe.body)
        ret = prefix + "ret"
        # (the callee's own aliases and helpers live in its closure: resolved below, not renamed)
        # (not the builtins generated code calls, ``_nq_range`` of a loop over constants
        # with a uniform selector: every function resolves them alike)
        rename = {
            n: prefix + n.lstrip("_")
            for n in cfe.env.locals | _all_names(body, cfe)
            if (n not in cfe.env.closure or n in cfe.env.locals) and n not in _control.BUILTIN_ALIASES
        }
        # a parameter the callee never assigns, given a caller's name, reads that name
        # (no copy: a per-lane local or shared array passed on stays the caller's array,
        # which the storage analysis knows); the callee's other names are all renamed,
        # so its body cannot assign the caller's
        stored = {
            n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
        }
        direct = (
            {}
            if getattr(cfe, "signatures", None)
            else {
                p: a.id
                for p, a in zip(cfe.env.params, args)
                if isinstance(a, ast.Name) and p not in stored and p in rename
            }
        )
        rename.update(direct)
        if _compiled_once(getattr(cfe, "callee", None)):
            # a numba.cuda device function (not inline="always") is compiled once, so
            # its shared arrays (and those of the functions inlined into it) are one
            # per function, whichever call reaches them; an inlined copy is one per
            # call, as numba.cuda's inline="always" and @xpu.jit functions on CUDA
            # (one per shape and dtype: numba.cuda compiles the function once per
            # literal argument, so a shape parameter gives each shape its own array)
            for n, a in cfe.allocs.items():
                if a[0] == "shared":
                    rename[n] = self.shared_once.setdefault(
                        (cfe.callee, n, repr(a[1]), str(a[2])),
                        f"{_RESERVED}once{len(self.shared_once)}_{n.lstrip('_')}",
                    )
        glob = {}

        class Rename(ast.NodeTransformer):
            def visit_Name(self, n):
                if n.id in _control.BUILTIN_ALIASES:
                    return n
                if n.id in rename:
                    n.id = rename[n.id]
                elif isinstance(n.ctx, ast.Load):
                    obj = cfe.env.lookup(n.id)
                    if obj is not _MISSING:
                        alias = glob.setdefault(n.id, f"{prefix}g_{n.id}")
                        self_env = hoister_env
                        self_env.closure[alias] = obj
                        n.id = alias
                return n

            def visit_Assign(self, n):
                self.generic_visit(n)
                check = getattr(n, "_nq_cucheck", None)  # (debug) the mask's temporary
                if check is not None and check[1] in rename:
                    n._nq_cucheck = (check[0], rename[check[1]])
                return n

        hoister_env = self.env
        body = [Rename().visit(s) for s in body]
        returns = [n for s in body for n in ast.walk(s) if isinstance(n, ast.Return)]
        # a callee declared with one signature (numba.cuda's @cuda.jit(sig, device=True))
        # converts its scalar arguments and its result to the declared types
        sigs = list(getattr(cfe, "signatures", None) or ())
        sig = sigs[0] if len(sigs) == 1 else None
        cast = _cudaapi.caster(self.env.closure, prefix)
        if sig is not None:
            args = [cast(a, t) for a, t in zip(args, sig[0])]
        picked = None
        if len(sigs) > 1:
            # several: Numba's typing picks the one the arguments fit best (as numba.cuda's
            # dispatcher does) and converts them and the result to its types
            pick, result = _cudaapi.signature_picker(cfe.pyfunc.__name__, sigs, len(args))
            self.env.closure[prefix + "pick"] = pick
            self.env.closure[prefix + "result"] = result
            raws = [prefix + f"in{j}" for j in range(len(args))]
            pre.extend(
                ast.copy_location(ast.Assign(targets=[ast.Name(r, ast.Store())], value=a), node)
                for r, a in zip(raws, args)
            )
            self.env.locals.update(raws)

            def _raw():
                return [ast.Name(r, ast.Load()) for r in raws]

            args = [
                ast.Call(func=ast.Name(prefix + "pick", ast.Load()), args=[ast.Constant(j)] + _raw(), keywords=[])
                for j in range(len(args))
            ]

            def picked(v):
                return ast.Call(func=ast.Name(prefix + "result", ast.Load()), args=[v] + _raw(), keywords=[])

        binds = [
            ast.copy_location(ast.Assign(targets=[ast.Name(rename[p], ast.Store())], value=a), node)
            for p, a in zip(cfe.env.params, args)
            if p in rename and p not in direct
        ]  # (not object-bound ones)
        for n, a in cfe.allocs.items():
            self.allocs[rename[n]] = a
            self.env.locals.add(rename[n])
        self.unrolled_stores |= {rename.get(n, n) for n in cfe.unrolled_stores}
        self.literal_unrolled_stores |= {rename.get(n, n) for n in cfe.literal_unrolled_stores}
        # a function numba.cuda compiles once and calls (not _numba_inlines) starts each
        # call with its locals unassigned, which Numba reads as 0 (cpu/intrinsics.py
        # zero_like): one a call may read before assigning it is set to 0 after the
        # call (the kernel's variables are 0 as each thread starts: cpu/codegen.py
        # _undefined_is_zero), or the next call (in a loop) would read this call's
        # value. (Not before it: Numba refuses a read no assignment reaches.) A
        # function numba.cuda inlines in Numba's IR (an @xpu.jit function on the CUDA
        # target, inline="always") keeps that value, as its inlined copy does there
        # (the H100 gave it, docs/GPU.md)
        unset = (
            []
            if _numba_inlines(getattr(cfe, "callee", None))
            else [n for n in _unassigned_locals(cfe) if n in rename and n not in direct]
        )
        if unset:
            self.env.closure[prefix + "zero"] = _zero_like
        rtype = sig[1] if sig is not None else None
        if rtype is not None:
            for r in returns:
                if r.value is not None:
                    r.value = cast(r.value, rtype)
        if picked is not None:
            for r in returns:
                if r.value is not None:
                    r.value = ast.copy_location(picked(r.value), r.value)
        if len(returns) == 1 and body and body[-1] is returns[0]:
            last = body.pop()
            body.append(
                ast.copy_location(
                    ast.Assign(
                        targets=[ast.Name(ret, ast.Store())],
                        value=last.value if last.value is not None else ast.Constant(None),
                    ),
                    last,
                )
            )
        elif not returns:
            # a function that falls off its end: spliced as it is
            body.append(
                ast.copy_location(ast.Assign(targets=[ast.Name(ret, ast.Store())], value=ast.Constant(None)), node)
            )
        else:
            # the body in a ``while True:`` whose ``break`` is each return; a return inside
            # a loop also sets a flag that each loop around it tests after it ends
            done = prefix + "done"
            in_loop = any(_return_in_loop(s) for s in body)
            returning = {
                id(n)
                for s in body
                for n in ast.walk(s)
                if isinstance(n, (ast.For, ast.While)) and _return_in_loop(n, True)
            }

            def _flag(value, at):
                return ast.copy_location(
                    ast.Assign(targets=[ast.Name(done, ast.Store())], value=ast.Constant(value)), at
                )

            class Ret(ast.NodeTransformer):
                def visit_Return(self, r):
                    out = [
                        ast.copy_location(
                            ast.Assign(targets=[ast.Name(ret, ast.Store())], value=r.value or ast.Constant(None)), r
                        )
                    ]
                    if in_loop:
                        out.append(_flag(True, r))
                    return out + [ast.copy_location(ast.Break(), r)]

                def _loop(self, n):
                    self.generic_visit(n)
                    if id(n) not in returning:
                        return n
                    return [
                        n,
                        ast.copy_location(
                            ast.If(
                                test=ast.Name(done, ast.Load()), body=[ast.copy_location(ast.Break(), n)], orelse=[]
                            ),
                            n,
                        ),
                    ]

                visit_For = visit_While = _loop

            flat = []
            for s in body:
                r = Ret().visit(s)
                flat.extend(r if isinstance(r, list) else [r])
            body = flat
            body = ([_flag(False, node)] if in_loop else []) + [
                ast.copy_location(
                    ast.While(test=ast.Constant(True), body=body + [ast.copy_location(ast.Break(), node)], orelse=[]),
                    node,
                )
            ]
        body += [
            ast.copy_location(
                ast.Assign(
                    targets=[ast.Name(rename[n], ast.Store())],
                    value=ast.Call(
                        func=ast.Name(prefix + "zero", ast.Load()), args=[ast.Name(rename[n], ast.Load())], keywords=[]
                    ),
                ),
                node,
            )
            for n in unset
        ]
        for st in binds + body:
            ast.fix_missing_locations(st)
            for n in ast.walk(st):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    self.env.locals.add(n.id)
        self.env.locals.add(ret)
        self.ops_used |= cfe.ops_used
        pre.extend(binds + body)
        return ast.copy_location(ast.Name(ret, ast.Load()), node)

    def _constant_int(self, node):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, (int, np.integer))
            and not isinstance(node.value, bool)
        ):
            return int(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self._constant_int(node.operand)
            return None if v is None else -v
        if isinstance(node, ast.BinOp) and type(node.op) in _FOLD:
            a, b = self._constant_int(node.left), self._constant_int(node.right)
            if a is None or b is None:
                return None
            try:
                v = _FOLD[type(node.op)](a, b)
            except (ZeroDivisionError, ValueError, OverflowError):
                return None
            return None if v is None else int(v)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and len(node.args) == 1
            and node.func.id.startswith("_nq_cu_lane_")
        ):
            # a numba.cuda shuffle's selector: its low five bits (cudaapi._lane_bits)
            v = self._constant_int(node.args[0])
            return None if v is None else v & 31
        if isinstance(node, ast.Name) and node.id in getattr(self, "consts", ()):
            v = self.consts[node.id]
            return v if isinstance(v, int) else None
        obj = self.env.resolve(node) if isinstance(node, (ast.Name, ast.Attribute)) else _MISSING
        if isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
            return int(obj)
        return None

    # -- uniformity -----------------------------------------------------------------
    _UNIFORM_BUILTINS = {
        "blockIdx.x",
        "blockIdx.y",
        "blockIdx.z",
        "blockDim.x",
        "blockDim.y",
        "blockDim.z",
        "gridDim.x",
        "gridDim.y",
        "gridDim.z",
        "warpsize",
    }
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
            if isinstance(n, ast.Name) and n.id.startswith(f"{_RESERVED}a_")
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

    def _uniform_range(self, s, U):
        if not (isinstance(s, ast.For) and isinstance(s.target, ast.Name) and not s.orelse):
            return None
        it = s.iter
        if not (
            isinstance(it, ast.Call)
            and self.env.resolve(it.func) is range
            and not it.keywords
            and 1 <= len(it.args) <= 3
        ):
            return None
        if all(self._is_uniform_expr(a, U) for a in it.args):
            return it.args
        return None

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
        if not (
            isinstance(it, ast.Call)
            and self.env.resolve(it.func) is range
            and not it.keywords
            and 1 <= len(it.args) <= 3
        ):
            self.error(
                "a loop around cross-lane ops must iterate over range(...), or over a tuple or an "
                "array (a name, a tuple display, an element or an attribute), directly or through "
                "enumerate(...) or zip(...)",
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
