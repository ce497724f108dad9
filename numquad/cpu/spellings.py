"""numba.cuda's spellings, rewritten before normalisation (cpu/frontend.py):
``CudaSpellings`` turns numba.cuda's warp functions (``shfl_sync``, ``ballot_sync``,
votes, ``match_*_sync``, ``activemask``, ``lanemask_lt``) into Quad/Wave ops with
numba.cuda's types and (debug) mask checks, cache hints (``ldcs``/``stcs``) into
loads and stores, and ``a ** b`` into numquad/_power.py's power.
"""

from __future__ import annotations

import ast
import copy
import sys

import numpy as np

from .. import _desugar
from .. import _control
from .._control import MISSING as _MISSING
from .. import ops as _ops
from .. import xpu as _xpu
from . import cudaapi as _cudaapi
from .. import _power
from .power import pow_ as _pow_intrinsic
from .names import RESERVED

__all__ = ["CudaSpellings", "cuda_function_names"]


def cuda_function_names():
    cuda = sys.modules.get("numba.cuda")
    if cuda is None:
        return {}
    names = _desugar.CUDA_WARP_FUNCTIONS
    return {id(getattr(cuda, n)): (getattr(cuda, n), n) for n in names if hasattr(cuda, n)}


_CUDA_FUNCS = None


class CudaSpellings(ast.NodeTransformer):
    """numba.cuda's warp functions, rewritten into Quad/Wave ops with numba.cuda's
    return types (ballot_sync: int32; votes: bool; activemask/lanemask_lt: uint32)."""

    _SHFL = _cudaapi.SHUFFLE_OPS

    def __init__(self, fe):
        global _CUDA_FUNCS
        if not _CUDA_FUNCS:
            _CUDA_FUNCS = cuda_function_names()
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
            ast.Call(func=ast.Name(f"{RESERVED}cu_hint_{b}", ast.Load()), args=[copy.deepcopy(arr), idx], keywords=[]),
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
