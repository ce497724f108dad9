"""Builtin substitution: the kernel's builtins as lane code or as shadow code.

:class:`Subst` rewrites a statement of the user's kernel: ``xpu.grid``,
``threadIdx``, ``Wave.laneId`` and the other builtins become the code of one lane
(inside a lane loop), of the wave (outside one) or a typing placeholder (in the
shadow function, numquad/cpu/shadow.py); cross-lane ops in the shadow become their
typing stand-ins (:func:`standin_name`). On the way it adds the checks of a
release build (a store's index, an atomic's index) and of a debug build (a
divisor, a shift count), and raises the user's exceptions with the thread's
coordinates (numquad/_userraise.py).
"""

from __future__ import annotations

import ast
import copy
import re

from numba.core import types

from .. import _control
from .. import _userraise
from .. import ops as _ops
from .. import xpu as _xpu
from . import cudaapi as _cudaapi
from . import devicefn as _devicefn
from .astbuild import (
    W,
    L,
    call as _call,
    const as _const,
    name as _name,
    shape_arg as _shape_arg,
    sub as _sub,
    view_root as _view_root,
)

__all__ = ["Subst", "standin_name"]


#: The call form of each atomic ("ary, idx, val"), as numba.cuda.
_ATOMIC_FORMS = {n: form for n, (form, _) in _xpu.ATOMICS.items()}


def standin_name(op, spelled):
    """The shadow function's typing stand-in of *op*; numba.cuda's shuffle *spelled*
    (XLCall.spelled) has its own, which types the value by numba.cuda's rule first."""
    return f"_nq_SH_cuda_{spelled}" if spelled else f"_nq_SH_{op.namespace}_{op.name}"


def _shown(node):
    """*node*'s text for a message, with the names an inlined call gave its locals
    (``_nq_f0_x``: cpu/inline.py ``_inline_call``) back as the user wrote them."""
    return re.sub(r"\b_nq_f\d+_(?:nq_f\d+_)*", "", ast.unparse(node))[:80]


class Subst(ast.NodeTransformer):
    """Replaces builtins (xpu.grid, threadIdx, Wave.laneId, ...) by lane code.

    ``mode`` is "lane" (inside a lane loop, 1-D block), "lane_nd" (inside a lane
    loop, 2-D/3-D block), "uniform" (outside lane loops) or "shadow" (typing).
    """

    def __init__(self, fe, mode, fn_names, block_mode=False, debug=False, private=()):
        self.fe = fe
        self.mode = mode
        self.fn_names = fn_names
        self.block_mode = block_mode
        self.debug = debug
        self.private = private  # arrays with private copies (cpu/private_atomics.py)

    def _tid(self, axis, assume=True):
        """threadIdx.<axis> in this lane; *assume* tells LLVM it is >= 0 (an index into
        shared memory then needs no wrap-around code; grid() asserts its own sum).

        In a kernel with barriers the lane loop runs over the whole block with an
        int32 induction variable, which is threadIdx.x itself: LLVM knows its range
        from the loop. ``nonneg(int32(l))`` there, with the block's run-time lane
        count, made LLVM 20's loop vectoriser read ``s[t & 7]`` as 16 consecutive
        elements (garbage past s[7]; reproduced with plain Numba, see
        tests/test_block.py::test_shared_index_expressions)."""
        if self.mode == "shadow":
            return _call("_nq_i32", _const(0))
        if self.mode == "lane_nd":
            return _sub(f"_nq_t{axis}")
        if axis == "x" and self.block_mode:
            return _name(L)
        if axis == "x":
            t = _call("_nq_i32", ast.BinOp(_name("_nq_t0"), ast.Add(), _name(L)))
            return _call("_nq_nonneg", t) if assume else t
        return _call("_nq_i32", _const(0))

    def _checked_stores(self, node):
        """The index of every ``name[idx] = ...`` store (and ``a[y][x] = ...``) passes
        through ``_nq_six`` (cpu/bounds.py, store_index), which raises on a store
        outside the array, naming its line; debug builds add Numba's boundscheck."""
        if self.mode == "shadow":
            return node
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            for sub in ast.walk(t):
                if (
                    isinstance(sub, ast.Subscript)
                    and isinstance(sub.ctx, ast.Store)
                    and (_view_root(sub.value) is not None or _devicefn.checkable_view(sub.value))
                    and not (isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, str))
                ):
                    # (a record's field, ``r["a"] = v``: Numba types only a literal name)
                    line = getattr(node, "lineno", 0)
                    if isinstance(sub.value, ast.Name):
                        shape = _shape_arg(self.const_shapes, sub.value.id) or _call("_nq_shp", _name(sub.value.id))
                    else:  # ``out[y][x] = v``: the row's shape (the row's own index is a checked load);
                        # ``a.T[0, i] = v``, ``a.ravel()[j] = v``, ``r.x[i] = v``: the view's
                        shape = _call("_nq_shp", copy.deepcopy(sub.value))
                    sub.slice = ast.copy_location(_call("_nq_six", shape, sub.slice, _const(line)), sub.slice)
        return node

    def visit_Assign(self, node):
        return self._checked_stores(self.generic_visit(node))

    def visit_AugAssign(self, node):
        node = self.generic_visit(node)
        if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)):
            node.value = self._divisor(node, node.value, node.lineno)
        if isinstance(node.op, (ast.LShift, ast.RShift)):
            node.value = self._shift_count(node, node.value, node.lineno)
        return self._checked_stores(node)

    def visit_Assert(self, node):
        """``assert c, msg`` as ``if not c: raise AssertionError(msg)``, which names the
        failing thread as a ``raise`` does (visit_Raise), as numba.cuda's debug build does."""
        return self.visit(_userraise.assert_as_raise(node))

    def visit_Raise(self, node):
        """``raise E(args)`` of the user's exception class: raised as
        ``E(USER_RAISE, tid.x, tid.y, tid.z, ctaid.x, ctaid.y, ctaid.z, *args)``, so
        that the launch can prefix the message with the thread, as numba.cuda does
        with debug=True (numquad/_userraise.py). A class with its own
        ``__init__`` or ``__new__`` (which may not take the extra arguments), a
        re-raise and anything not a class named by the code are left as they are."""
        self.generic_visit(node)
        exc = node.exc
        call = exc if isinstance(exc, ast.Call) else ast.Call(func=exc, args=[], keywords=[])
        if (
            exc is None
            or call.keywords
            or any(isinstance(a, ast.Starred) for a in call.args)
            or not isinstance(call.func, (ast.Name, ast.Attribute))
            or not _userraise.plain_exception_class(self.fe.env.resolve(call.func))
        ):
            return node
        if self.mode == "shadow":
            where = [_const(0)] * 6
        elif self.mode in ("lane", "lane_nd"):
            where = [self._tid(a, assume=False) for a in "xyz"]
            where += [_name(f"_nq_bi{a}") for a in "xyz"]
        else:  # a uniform raise: the wave's first thread
            t = _const(0) if self.block_mode else _name("_nq_t0")
            bdx, bdy = _name("_nq_bdx"), _name("_nq_bdy")
            where = [
                ast.BinOp(t, ast.Mod(), bdx),
                ast.BinOp(ast.BinOp(t, ast.FloorDiv(), bdx), ast.Mod(), bdy),
                ast.BinOp(t, ast.FloorDiv(), ast.BinOp(bdx, ast.Mult(), bdy)),
            ]
            where += [_name(f"_nq_bi{a}") for a in "xyz"]
        node.exc = ast.copy_location(
            ast.Call(func=call.func, args=[_const(_userraise.USER_RAISE)] + where + call.args, keywords=[]), exc
        )
        return node

    def _value(self, b, node):
        if b.startswith("threadIdx."):
            return self._tid(b[-1])
        if b in _control.BLOCK_BUILTINS:
            if self.mode == "shadow":
                return _call("_nq_i32", _const(0))
            short = {"blockIdx": "bi", "blockDim": "bd", "gridDim": "gd"}[b.split(".")[0]]
            return _call("_nq_i32", _name(f"_nq_{short}{b[-1]}"))
        if b == "laneid":
            if self.mode == "shadow":
                return _call("_nq_i32", _const(0))
            return _call("_nq_i32", ast.BinOp(_name(L), ast.BitAnd(), _const(W - 1)))
        if b == "warpsize":
            return _call("_nq_i32", _const(W))
        self.fe.error(f"xpu.{b} cannot be used as a value here", node)

    def _grid_axis(self, axis):
        if self.mode == "shadow":
            return _call("_nq_i64", _const(0))
        return _call(
            "_nq_nonneg",
            ast.BinOp(
                ast.BinOp(_call("_nq_i64", _name(f"_nq_bi{axis}")), ast.Mult(), _name(f"_nq_bd{axis}")),
                ast.Add(),
                _call("_nq_i64", self._tid(axis, assume=False)),
            ),
        )

    def _quad_grid(self):
        """xpu.quad_grid(2): the (x, y) pixel of this lane with 2x2 quads (numquad/xpu.py
        has the formula; docs/lanes.md the picture): t is the thread's index in its
        pair of rows, whose 2 * blockDim.x threads are whole quads when blockDim.x is even."""
        if self.mode == "shadow":
            return ast.Tuple(elts=[_call("_nq_i64", _const(0)), _call("_nq_i64", _const(0))], ctx=ast.Load())
        tx = ast.unparse(_call("_nq_i64", self._tid("x", assume=False)))
        ty = ast.unparse(_call("_nq_i64", self._tid("y", assume=False)))
        t = f"((({ty}) & 1) * _nq_bdx + ({tx}))"
        x = f"_nq_nonneg(_nq_i64(_nq_bix) * _nq_bdx + ((({t}) >> 2) << 1) + (({t}) & 1))"
        y = f"_nq_nonneg(_nq_i64(_nq_biy) * _nq_bdy + (({ty}) & -2) + ((({t}) >> 1) & 1))"
        return ast.parse(f"({x}, {y})", mode="eval").body

    def _size_axis(self, axis):
        if self.mode == "shadow":
            return _call("_nq_i64", _const(0))
        return ast.BinOp(_call("_nq_i64", _name(f"_nq_gd{axis}")), ast.Mult(), _name(f"_nq_bd{axis}"))

    #: a division by zero raises (Numba's "python" error model, debug=True builds):
    #: the divisor is checked where it stands, so the error names the line
    zero_division = False
    #: the shared and local arrays whose constant shape the checks may take
    #: (codegen._BlockGen.const_shapes); none unless told
    const_shapes = {}

    def _divisor(self, node, right, line):
        if (
            not (self.zero_division and self.mode != "shadow")
            or isinstance(right, ast.Constant)
            and isinstance(right.value, (int, float))
            and right.value != 0
        ):
            return right
        msg = _devicefn.division_message(self.fe.filename, line, _shown(node))
        return ast.copy_location(_call("_nq_divisor", right, _const(msg)), right)

    def _shift_count(self, node, right, line):
        """(debug=True) the count *right* of the shift *node*, checked to be 0..63: a
        count outside is undefined on every target (LLVM poison: PTX clamps it, x86
        masks it to 6 bits; docs/semantics.md)."""
        if (
            not (self.debug and self.mode != "shadow")
            or isinstance(right, ast.Constant)
            and isinstance(right.value, int)
            and 0 <= right.value < 64
        ):
            return right
        msg = _devicefn.shift_message(self.fe.filename, line, _shown(node))
        return ast.copy_location(_call("_nq_shcount", right, _const(msg)), right)

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)):
            node.right = self._divisor(node, node.right, node.lineno)
        if isinstance(node.op, (ast.LShift, ast.RShift)):
            node.right = self._shift_count(node, node.right, node.lineno)
        if (
            isinstance(node.op, (ast.FloorDiv, ast.Mod))
            and self.mode in ("lane", "lane_nd")
            and not self.zero_division
            and self._int_scalar(node.left)
            and self._int_scalar(node.right)
        ):
            # a power-of-two divisor as a shift or a mask (cpu/intrinsics.py int_mod)
            f = "_nq_imod" if isinstance(node.op, ast.Mod) else "_nq_ifloordiv"
            return ast.copy_location(_call(f, node.left, node.right), node)
        return node

    #: the shadow function's Numba types by name (set by the code generator)
    typemap = None

    def _int_scalar(self, e):
        """Is *e* (lane code, after substitution) surely an integer scalar? Names by
        the shadow's types, literals, integer conversions and integer arithmetic."""
        if isinstance(e, ast.Constant):
            return type(e.value) is int
        if isinstance(e, ast.Name):
            if e.id == L:
                return True
            ty = (self.typemap or {}).get(e.id)
            return isinstance(ty, types.Integer)
        if isinstance(e, ast.UnaryOp):
            return isinstance(e.op, (ast.USub, ast.UAdd, ast.Invert)) and self._int_scalar(e.operand)
        if isinstance(e, ast.BinOp):
            return (
                isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.BitAnd, ast.BitOr, ast.BitXor))
                and self._int_scalar(e.left)
                and self._int_scalar(e.right)
            )
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and not e.keywords:
            if e.func.id == "_nq_lck" and e.args and isinstance(e.args[0], ast.Name):  # a checked load
                return self._int_element(e.args[0].id, e.args[1])
            return e.func.id in ("_nq_i32", "_nq_i64", "_nq_nonneg", "_nq_imod", "_nq_ifloordiv")
        if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name):
            return self._int_element(e.value.id, e.slice)
        return False

    def _int_element(self, array, index):
        """Is *array*[*index*] an integer scalar (an index on every axis)?"""
        ty = (self.typemap or {}).get(array)
        if not (isinstance(ty, types.Array) and isinstance(ty.dtype, types.Integer)):
            return False
        idx = index.elts if isinstance(index, ast.Tuple) else [index]
        return len(idx) == ty.ndim and all(self._int_scalar(x) for x in idx)

    def visit_Attribute(self, node):
        b = self.fe.builtin_of(node)
        if b is not None and "." in b and b.split(".")[0] in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
            return ast.copy_location(self._value(b, node), node)
        if b in ("laneid", "warpsize"):
            return ast.copy_location(self._value(b, node), node)
        return self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id not in self.fe.env.locals:
            b = self.fe.builtin_of(node)
            if b is not None and (
                b in ("laneid", "warpsize")
                or ("." in b and b.split(".")[0] in ("threadIdx", "blockIdx", "blockDim", "gridDim"))
            ):
                return ast.copy_location(self._value(b, node), node)
        return node

    def visit_Call(self, node):
        op = self.fe.op_of(node)
        if op is not None and op.kind == "query":
            if self.mode == "shadow":
                return ast.copy_location(_call("_nq_u32", _const(0)), node)
            if op.query == "width":
                v = _const(W)
            elif op.query != "lane":
                raise _ops.unknown_value("query", op.query, op)
            elif op.namespace == "Quad":
                v = ast.BinOp(_name(L), ast.BitAnd(), _const(3))
            else:
                v = ast.BinOp(_name(L), ast.BitAnd(), _const(W - 1))
            return ast.copy_location(_call("_nq_u32", v), node)
        if op is not None and self.mode == "shadow":
            new = _call(standin_name(op, getattr(node, "_nq_spelled", None)), *[self.visit(a) for a in node.args])
            return ast.copy_location(new, node)
        b = self.fe.builtin_of(node.func)
        if b is not None:
            return ast.copy_location(self._builtin_call(b, node), node)
        callee = self.fe.env.resolve(node.func)
        from ..xpu import Dispatcher

        if isinstance(callee, Dispatcher):
            name = self.fn_names.setdefault(id(callee), (f"_nq_fn{len(self.fn_names)}", callee))[0]
            node.func = ast.copy_location(_name(name), node.func)
        return self.generic_visit(node)

    def visit_Subscript(self, node):
        """``xpu.grid(2)[k]`` (``x`` of ``x, y = xpu.grid(2)``, recomputed: codegen._BlockGen._remat):
        that axis alone. The other axes are pure, so leaving them out changes nothing."""
        v = node.value
        if (
            isinstance(v, ast.Call)
            and isinstance(node.slice, ast.Constant)
            and type(node.slice.value) is int
            and self.fe.builtin_of(v.func) in ("grid", "gridsize", "quad_grid")
        ):
            t = self.visit(v)
            if isinstance(t, ast.Tuple) and 0 <= node.slice.value < len(t.elts):
                return ast.copy_location(t.elts[node.slice.value], node)
            node.value = t
            node.slice = self.visit(node.slice)
            return node
        return self.generic_visit(node)

    def _builtin_call(self, b, node):
        if b in ("grid", "gridsize", "quad_grid"):
            complaint = _control.ndim_complaint(b, node)
            if complaint:
                self.fe.error(complaint, node)
        if b in ("grid", "gridsize"):
            nd = node.args[0].value
            f = self._grid_axis if b == "grid" else self._size_axis
            axes = [f(a) for a in "xyz"[:nd]]
            return axes[0] if nd == 1 else ast.Tuple(elts=axes, ctx=ast.Load())
        if b == "quad_grid":
            return self._quad_grid()
        if b == "syncwarp":
            return _const(None)  # the lanes of a wave run in lockstep
        if b.startswith("atomic."):
            if node.keywords:
                self.fe.error(f"xpu.{b} takes positional arguments only", node)
            form = _ATOMIC_FORMS[b.split(".")[1]]
            want = form.count(",") + 1
            if len(node.args) != want:
                self.fe.error(f"xpu.{b}({form}) takes {want} arguments; got {len(node.args)}", node)
            args = [self.visit(a) for a in node.args]
            arr = node.args[0]
            if self.mode != "shadow" and isinstance(args[0], ast.Name) and b != "atomic.compare_and_swap":
                # the index checked as a store's is, naming the atomic's line (Numba's
                # boundscheck inside the atomic still guards what this cannot see)
                shape = _shape_arg(self.const_shapes, args[0].id) or _call("_nq_shp", _name(args[0].id))
                args[1] = ast.copy_location(
                    _call("_nq_aix", shape, args[1], _const(getattr(node, "lineno", 0))), node.args[1]
                )
            if self.mode != "shadow" and isinstance(args[0], ast.Name) and b == "atomic.compare_and_swap":
                # ``compare_and_swap(ary, old, val)`` is ``cas(ary, 0, old, val)``: index 0
                # checked as the others' indices are (on an empty array it wrote past it;
                # the shadow typing keeps the call's own errors)
                shape = _shape_arg(self.const_shapes, args[0].id) or _call("_nq_shp", _name(args[0].id))
                return _call(
                    "_nq_atomic_cas",
                    args[0],
                    _call("_nq_aix", shape, _const(0), _const(getattr(node, "lineno", 0))),
                    *args[1:],
                )
            if self.mode != "shadow" and isinstance(arr, ast.Name) and arr.id in self.private:
                # into the call's private copy, merged at its end (cpu/private_atomics.py)
                return _call(f"_nq_patomic_{b.split('.')[1]}", args[0], _name(f"_nq_pv_{arr.id}"), *args[1:])
            return _call(f"_nq_atomic_{b.split('.')[1]}", *args)
        if b == "syncthreads":
            self.fe.error("xpu.syncthreads() must be a statement of its own", node)
        lowered = _cudaapi.lower_call(self, b, node)
        if lowered is not None:
            return lowered
        if b in ("shared.array", "local.array"):
            self.fe.error(
                f"{ast.unparse(node.func)}(...) must be assigned to a name in a statement of its own "
                f"on the CPU target (`sm = {ast.unparse(node.func)}(...)`, then use `sm`, e.g. "
                f"`sm[1:]`)",
                node,
            )
        if b in ("laneid", "warpsize") or b.split(".")[0] in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
            self.fe.error(f"xpu.{b} is a value, not a function: write xpu.{b} without the call", node)
        self.fe.error(f"xpu.{b} is not supported by the CPU target", node)
