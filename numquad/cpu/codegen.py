"""Back end of the CPU wave compiler: wave items -> a Numba block function.

The block function runs every wave of one block. Per wave, each ``Region`` is a
32-iteration lane loop (vectorised by LLVM) under the current mask, each
cross-lane call one whole-wave intrinsic on lane arrays, and masked control
flow a small amount of scalar code over mask arrays. Values that live across
items sit in 64-byte-aligned ``[32 x T]`` stack arrays (``_nq_v_<name>``; a tuple
of scalars, one per element);
lane-invariant values stay scalar. Every generated statement carries the
line number of the user statement it came from, and the module is compiled
with the user's file name, so Numba's errors point at the user's kernel.

Names in generated code. Every name numquad adds starts with ``_nq_``
(``frontend._RESERVED``; the front end refuses user names with that prefix), so
the user's locals keep their own names. Temporaries from
``frontend.Frontend.fresh(stem)`` are ``_nq_<stem>_<n>``, with an underscore
before the counter so that they never meet the fixed helper names below:

=====================  ============================================================
``_nq_a_<n>``          an operand of a hoisted cross-lane call (frontend)
``_nq_x_<n>``          the result of a hoisted cross-lane call (frontend)
``_nq_c_<n>``          the condition of a masked ``if`` or loop (frontend)
``_nq_i_/e_/s_<n>``    a masked ``for`` loop's counter, end and step (frontend)
``_nq_u_<n>``          the position in an unrolled loop over constants (frontend)
``_nq_cx<n>``          a conditional expression's value or a loop ``else`` flag
                       (numquad/_desugar.py, shared with the CUDA target)
``_nq_cv_<n>``         an op operand converted to the op's type (this module)
``_nq_vw_<n>``         an index of a recomputed array view, as it was when the view
                       was made (this module, ``_remat``); ``_nq_vix`` keeps such an
                       index inside the array where a lane never made the view
``_nq_p_<name>``       the argument of a parameter the kernel assigns; each wave
                       starts from it (this module)
``_nq_v_<name>``       the ``[32 x T]`` (block mode: ``[G x T]``) lane array of a
                       local or temporary that lives across items
``_nq_m<k>``,          mask lane arrays of masked control flow; ``_nq_m_entry`` the
``_nq_m_entry``        lanes of the wave (block) that exist
``_nq_act``            in the one lane loop of a pure region, whether this lane is
                       active (its stores keep the old value where not)
``_nq_l``              the lane loop variable; ``_nq_lx``/``_nq_ly``/``_nq_ln`` the
                       column, row and lane of a rows-of-threads loop; ``_nq_t0``
                       the wave's first thread; ``_nq_w`` the wave in block mode
``_nq_b``, ``_nq_bix/y/z``  the block and its coordinates; :data:`BLOCK_PARAMS` the
                       block function's extra parameters (block range, grid and
                       block dimensions, ``_nq_stop`` the address of the launch's
                       stop flag, which ``_nq_stopped`` tests at the top of every
                       ``while`` loop: numquad/cpu/interrupt.py)
``_nq_G``, ``_nq_GMAX``     lanes of the group a lane loop runs over (32, or the
                       block in block mode) and their upper bound
``_nq_tx/ty/tz``       ``threadIdx`` in a 2-D or 3-D block
``_nq_XL_<ns>_<op>``   the whole-wave intrinsic of a cross-lane op
                       (numquad/cpu/intrinsics.py)
``_nq_SH_<ns>_<op>``   an op's typing-only stand-in in the shadow function
                       (numquad/cpu/typing.py); ``_nq_SH_cuda_<name>`` that of the
                       op numba.cuda's shuffle *name* became (cpu/cudaapi.py)
``_nq_T_<dtype>``      a scalar type token (a lane array's element type)
``_nq_loc_<name>``     a local array, one per lane; ``_nq_shape_/dtype_/nbytes_/
                       itemsize_<name>`` the constants of a local or shared array
``_nq_cu_*``           numba.cuda's kernel API on the CPU (numquad/cpu/cudaapi.py);
                       ``_nq_synck`` the result of a debug build's check of a
                       numba.cuda warp function's mask rules (cudaapi.gen_sync_check)
``_nq_atomic_*``       atomics (numquad/cpu/atomics.py)
``_nq_patomic_*``,     an atomic add into an array's private copy ``_nq_pv_<name>``,
``_nq_pv_<name>``,     made by ``_nq_palloc`` and added into the array by
``_nq_palloc``,        ``_nq_pmerge``; ``_nq_pon`` the block function's parameter
``_nq_pmerge``,        that allows them (numquad/cpu/private_atomics.py)
``_nq_pon``
``_nq_six``, ``_nq_lix``,  the bounds checks of a release build (numquad/cpu/bounds.py):
``_nq_lck``, ``_nq_lbc``,  a store's and a uniform load's index, a lane loop's load and
``_nq_lb``, ``_nq_shp``,   its check after the loop, the bounds state, an array's shape,
``_nq_lsa``, ``_nq_lcc``,  a device function's slot of the state and its check
``_nq_sok``, ``_nq_lsc``,  (device functions take the state as ``_nq_lb=``: cpu/devicefn.py),
``_nq_sv<n>``, ``_nq_si<n>`` a contiguous lane store's test, its check after the loop, its
                       value and index (devicefn.guarded_store)
``_nq_ld``, ``_nq_st``, ``_nq_stm``, ``_nq_lanes``, ``_nq_any``, ``_nq_all``,
``_nq_mcopy``, ``_nq_mandnot``, ...
                       helpers bound in :func:`_namespace` (lane loads and stores,
                       a store kept where a lane is inactive, lane arrays, mask
                       votes, mask copies and updates)
=====================  ============================================================
"""

from __future__ import annotations

import ast
import collections
import copy
import re
import weakref

import numpy as np
from numba.core import types
from numba.np.numpy_support import as_dtype

from .. import _control
from .. import ops as _ops
from .. import xpu as _xpu
from . import frontend as _fe
from . import bounds as _bounds
from . import devicefn as _devicefn
from . import versioning as _versioning
from . import fastaccess as _fastaccess
from . import intrinsics as _intr
from . import cudaapi as _cudaapi
from . import private_atomics as _private
from . import interrupt as _interrupt
from .. import _userraise
from ..errors import NumquadCompileError
from .atomics import ATOMICS
from .typing import STANDINS

#: The call form of each atomic ("ary, idx, val"), as numba.cuda.
_ATOMIC_FORMS = {n: form for n, (form, _) in _xpu.ATOMICS.items()}

__all__ = ["generate_block", "generate_shadow", "BLOCK_PARAMS"]

W = _ops.WAVE
L = "_nq_l"  # the lane loop variable
#: Extra parameters of every block function, after the user's.
BLOCK_PARAMS = ("_nq_b0", "_nq_b1", "_nq_gdx", "_nq_gdy", "_nq_gdz", "_nq_bdx", "_nq_bdy", "_nq_bdz", "_nq_stop")

_SCALAR_NAMES = {np.dtype(d): f"_nq_T_{np.dtype(d).name}" for d in _ops.VALUE_DTYPES}


def _name(n, ctx=ast.Load):
    return ast.Name(n, ctx())


def _call(fn, *args):
    return ast.Call(func=_name(fn) if isinstance(fn, str) else fn, args=list(args), keywords=[])


def _const(v):
    return ast.Constant(v)


def _sub(arr, idx=L):
    """arr[lane]: a lane-array load (a plain GEP + load, no wrap-around code)."""
    return _call("_nq_ld", _name(arr), _name(idx) if isinstance(idx, str) else idx)


def _store(arr, value, idx=L):
    """arr[lane] = value, as a statement."""
    return ast.Expr(_call("_nq_st", _name(arr), _name(idx) if isinstance(idx, str) else idx, value))


def _mask_copy(dst, src):
    """dst = src for the group's lanes, as one call (cpu/intrinsics.py, mask_copy)."""
    return ast.Expr(_call("_nq_mcopy", _name(dst), _name(src), _name("_nq_G")))


def _mask_andnot(dst, src):
    """dst = dst and not src for the group's lanes (cpu/intrinsics.py, mask_andnot)."""
    return ast.Expr(_call("_nq_mandnot", _name(dst), _name(src), _name("_nq_G")))


def _assign(target, value):
    return ast.Assign(targets=[target], value=value)


def _lane_loop(body):
    """for each lane of the group: the 32 lanes of a wave (``_nq_G`` is the constant 32),
    or every thread of the block in a kernel with barriers (``_nq_G`` set at run time)."""
    return ast.For(target=_name(L, ast.Store), iter=_call("_nq_range", _name("_nq_G")), body=body, orelse=[])


class _NdLanes(ast.NodeTransformer):
    """Inside a 2-D lane loop (:meth:`_BlockGen.plain_loop`): the lane is ``_nq_ln``,
    and threadIdx is read from the loop variables instead of the lane arrays."""

    def __init__(self, bdy, bdz):
        self.tid = {
            "_nq_tx": _call("_nq_i32", _name("_nq_lx")),
            "_nq_ty": _call(
                "_nq_i32", _name("_nq_ly") if bdz == 1 else ast.BinOp(_name("_nq_ly"), ast.Mod(), _const(bdy))
            ),
            "_nq_tz": _call(
                "_nq_i32", _const(0) if bdz == 1 else ast.BinOp(_name("_nq_ly"), ast.FloorDiv(), _const(bdy))
            ),
        }

    def visit_Call(self, node):
        if (
            isinstance(node.func, ast.Name)
            and node.func.id == "_nq_ld"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in self.tid
            and isinstance(node.args[1], ast.Name)
            and node.args[1].id == L
        ):
            return copy.deepcopy(self.tid[node.args[0].id])
        return self.generic_visit(node)

    def visit_Name(self, node):
        if node.id == L:
            return ast.Name("_nq_ln", node.ctx)
        return node


def _shape_arg(allocs, name):
    """The constant shape of *name* where it is a shared or local array (*allocs*: the
    frontend's, less the names bound to anything else: _BlockGen.const_shapes), as a
    tuple expression, else None. The bounds checks take it: with a
    constant LLVM proves most indices inside (``sA[ty, k]`` in a loop over k < 16),
    and a loop it can no longer unroll does not keep the lane loop around it scalar."""
    a = allocs.get(name)
    if a is None or a[0] not in ("shared", "local"):
        return None
    return ast.Tuple([_const(int(v)) for v in a[1]], ast.Load())


def _located(nodes, lineno):
    for n in nodes:
        for sub in ast.walk(n):
            if "lineno" in sub._attributes:
                sub.lineno = getattr(sub, "lineno", None) or lineno
                sub.col_offset = getattr(sub, "col_offset", None) or 0
                sub.end_lineno = getattr(sub, "end_lineno", None) or sub.lineno
                sub.end_col_offset = getattr(sub, "end_col_offset", None) or 0
    return nodes


# ---------------------------------------------------------------------------
# Builtin substitution
# ---------------------------------------------------------------------------


class _Subst(ast.NodeTransformer):
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
        if b in (
            "blockIdx.x",
            "blockIdx.y",
            "blockIdx.z",
            "blockDim.x",
            "blockDim.y",
            "blockDim.z",
            "gridDim.x",
            "gridDim.y",
            "gridDim.z",
        ):
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
    #: (_BlockGen.const_shapes); none unless told
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
            new = _call(_standin_name(op, getattr(node, "_nq_spelled", None)), *[self.visit(a) for a in node.args])
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
        """``xpu.grid(2)[k]`` (``x`` of ``x, y = xpu.grid(2)``, recomputed: _BlockGen._remat):
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
        if b in ("grid", "gridsize"):
            if (
                len(node.args) != 1
                or not isinstance(node.args[0], ast.Constant)
                or type(node.args[0].value) is not int
                or node.args[0].value not in (1, 2, 3)
            ):
                got = ", ".join(ast.unparse(a) for a in node.args) or "nothing"
                self.fe.error(f"xpu.{b}(ndim) got {got}; it takes a constant int ndim of 1, 2 or 3", node)
            nd = node.args[0].value
            f = self._grid_axis if b == "grid" else self._size_axis
            axes = [f(a) for a in "xyz"[:nd]]
            return axes[0] if nd == 1 else ast.Tuple(elts=axes, ctx=ast.Load())
        if b == "quad_grid":
            if (
                len(node.args) != 1
                or not isinstance(node.args[0], ast.Constant)
                or node.args[0].value != 2
                or isinstance(node.args[0].value, bool)
                or node.keywords
            ):
                got = ", ".join(ast.unparse(a) for a in node.args)
                self.fe.error(
                    f"xpu.quad_grid(ndim) got ndim {got or 'nothing'}; it takes the "
                    f"constant 2 (2x2 pixel quads in a 2-D launch)",
                    node,
                )
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


# ---------------------------------------------------------------------------
# Shadow function (typing)
# ---------------------------------------------------------------------------


def _dead_proxy(value):
    """Is *value* a weak reference proxy whose object is gone? (Any read of one
    raises ReferenceError; a module may hold one among its globals.)"""
    if type(value) not in (weakref.ProxyType, weakref.CallableProxyType):
        return False
    try:
        _ = value.__class__
    except ReferenceError:
        return True
    return False


def _namespace(fe):
    ns = dict(fe.env.globals)
    ns.update(fe.env.closure)
    # math.fmod & co (cpu/cudaapi.py); a dead proxy among the user's globals names nothing
    ns = {k: _cudaapi.cpu_global(v) for k, v in ns.items() if not _dead_proxy(v)}
    ns.update(_control.BUILTIN_ALIASES)
    ns.update(
        {
            "_nq_i32": np.int32,
            "_nq_i64": np.int64,
            "_nq_u32": np.uint32,
            "_nq_np": np,
            "_nq_complex": complex,
            "_nq_c64": np.complex64,
            "_nq_lanes": _intr.lanes,
            "_nq_any": _intr.mask_any,
            "_nq_all": _intr.mask_all,
            "_nq_nonneg": _intr.nonneg,
            "_nq_vix": _intr.view_index,
            "_nq_ld": _intr.lane_load,
            "_nq_st": _intr.lane_store,
            "_nq_G": W,
            "_nq_wv": _intr.wave_view,
            "_nq_lanes_block": _intr.lanes_block,
            "_nq_anyb": _intr.mask_any_block,
            "_nq_allb": _intr.mask_all_block,
            "_nq_six": _bounds.store_index,
            "_nq_aix": _bounds.atomic_index,
            "_nq_lix": _bounds.load_index,
            "_nq_lck": _bounds.lane_load,
            "_nq_shp": _bounds.shape_of,
            "_nq_lbs": _bounds.bounds_state,
            "_nq_lbc": _bounds.check_slot,
            "_nq_lsa": _bounds.state_at,
            "_nq_lcc": _bounds.check_call,
            "_nq_sok": _bounds.lane_store_ok,
            "_nq_lrok": _bounds.lane_range_ok,
            "_nq_lrise": _bounds.lane_rise_ok,
            "_nq_lsc": _bounds.check_store_slot,
            "_nq_stm": _intr.lane_store_if,
            "_nq_mcopy": _intr.mask_copy,
            "_nq_mandnot": _intr.mask_andnot,
            "_nq_stopped": _interrupt.stopped,
            "_nq_imod": _intr.int_mod,
            "_nq_ifloordiv": _intr.int_floordiv,
        }
    )
    for dt, n in _SCALAR_NAMES.items():
        ns[n] = dt.type
    for n, f in ATOMICS.items():
        ns[f"_nq_atomic_{n}"] = f
    for n, f in _private.PRIVATE_ATOMICS.items():
        ns[f"_nq_patomic_{n}"] = f
    ns["_nq_palloc"] = _private.private_alloc
    ns["_nq_pmerge"] = _private.private_merge
    ns.update(_cudaapi.namespace())
    for name, (kind, shape, dt, _) in fe.allocs.items():
        ns[f"_nq_shape_{name}"] = shape
        ns[f"_nq_dtype_{name}"] = dt if dt.fields else dt.type  # records: the dtype itself
        if kind == "shared":
            ns[f"_nq_nbytes_{name}"] = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
            ns[f"_nq_itemsize_{name}"] = dt.itemsize
    ns["_nq_shared_alloc"] = _intr.shared_alloc
    return ns


def _fill_empty_bodies(tree):
    """A ``pass`` in each statement list left empty: a branch whose statements all
    left it (``if c: a = cuda.local.array(4, f8)``: the allocation is made once, at
    the top) would not compile."""
    for n in ast.walk(tree):
        if isinstance(n, (ast.If, ast.For, ast.While, ast.With, ast.Try)) and not n.body:
            n.body = [ast.copy_location(ast.Pass(), n)]


def _compile_fn(fe, fn_ast, ns):
    _fill_empty_bodies(fn_ast)
    _control.name_forever_loops(fn_ast)
    ns[_control.FOREVER] = True
    mod = ast.Module(body=[fn_ast], type_ignores=[])
    ast.fix_missing_locations(mod)
    code = compile(mod, fe.filename, "exec")
    exec(code, ns)
    return ns[fn_ast.name], mod


def _fn_def(name, params, body, lineno):
    extra = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
    fn = ast.FunctionDef(
        name=name,
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=p) for p in params],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=body,
        decorator_list=[],
        returns=None,
        lineno=lineno,
        col_offset=0,
        **extra,
    )
    return fn


def _resolve_callees(fn_names, ns, cpu_fn_for, read=None):
    for _, (name, disp) in fn_names.items():
        ns[name] = cpu_fn_for(disp)
    # a tuple of device functions the kernel reads (``for f in literal_unroll(FUNCS)``,
    # ``FUNCS[0](v)``): their CPU functions, as for a device function named alone
    # (numba.cuda's own would need a GPU to compile)
    from ..xpu import Dispatcher, is_foreign_device_function

    for k in read or ():
        v = ns.get(k)
        if isinstance(v, tuple) and any(isinstance(e, Dispatcher) or is_foreign_device_function(e) for e in v):
            ns[k] = tuple(
                cpu_fn_for(_cudaapi.as_xpu(e)) if isinstance(e, Dispatcher) or is_foreign_device_function(e) else e
                for e in v
            )


def _standin_name(op, spelled):
    """The shadow function's typing stand-in of *op*; numba.cuda's shuffle *spelled*
    (XLCall.spelled) has its own, which types the value by numba.cuda's rule first."""
    return f"_nq_SH_cuda_{spelled}" if spelled else f"_nq_SH_{op.namespace}_{op.name}"


def _shadow_items(fe, items, subst):
    """Plain scalar statements equivalent to *items* (same control flow)."""
    out = []
    for it in items:
        if isinstance(it, _fe.Region):
            out += [subst.visit(copy.deepcopy(s)) for s in it.stmts]
        elif isinstance(it, _fe.Uniform):
            out.append(subst.visit(copy.deepcopy(it.stmt)))
        elif isinstance(it, _fe.XLCall):
            op = it.op
            call = _call(_standin_name(op, it.spelled), *[copy.deepcopy(a) for a in it.args])
            out.append(_located([_assign(_name(it.target, ast.Store), call)], it.node.lineno)[0])
        elif isinstance(it, _fe.If):
            node = ast.If(
                test=_name(it.cond),
                body=_shadow_items(fe, it.body, subst) or [ast.Pass()],
                orelse=_shadow_items(fe, it.orelse, subst),
            )
            out.append(_located([node], it.node.lineno)[0])
        elif isinstance(it, _fe.UniformIf):
            node = ast.If(
                test=subst.visit(copy.deepcopy(it.test)),
                body=_shadow_items(fe, it.body, subst) or [ast.Pass()],
                orelse=_shadow_items(fe, it.orelse, subst),
            )
            out.append(_located([node], it.node.lineno)[0])
        elif isinstance(it, _fe.Loop):
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
        elif isinstance(it, _fe.Barrier):
            out.append(_located([ast.Pass()], it.node.lineno)[0])
        elif isinstance(it, _fe.BarrierReduce):
            call = _call(f"_nq_cu_syncpred_{it.kind}", _name(it.arg))
            out.append(_located([_assign(_name(it.target, ast.Store), call)], it.node.lineno)[0])
        elif isinstance(it, _fe.Jump):
            node = {"break": ast.Break, "continue": ast.Continue}.get(it.kind)
            if node is not None:
                out.append(_located([node()], it.node.lineno)[0])
            else:
                value = subst.visit(copy.deepcopy(it.value)) if it.value is not None else None
                out.append(_located([ast.Return(value=value)], it.node.lineno)[0])
    return out


def _alloc_stmts(fe, per_lane):
    """``name = np.empty(shape, dtype)`` for each shared/local array (local arrays get
    one row per lane when *per_lane*)."""
    out = []
    if any(a[0] == "dynshared" for a in fe.allocs.values()):
        # one buffer of the launch's dynamic shared memory; every shared.array(0, dtype)
        # is a view of it (numba.cuda). Typing needs no size: a placeholder there.
        if not per_lane:
            out.append(_assign(_name("_nq_dynsmem", ast.Store), _call("_nq_i64", _const(64))))
        out.append(_assign(_name("_nq_dynbuf", ast.Store), _call("_nq_cu_dynalloc", _name("_nq_dynsmem"))))
        _located(out, fe.fn.lineno)
    for name, (kind, shape, dt, node) in fe.allocs.items():
        if kind == "dynshared":
            out += _located(
                [
                    _assign(
                        _name(name, ast.Store),
                        _call(
                            "_nq_cu_dynview",
                            _name("_nq_dynbuf"),
                            _name("_nq_dynsmem"),
                            _name(f"_nq_dtype_{name}"),
                            _const(dt.itemsize),
                        ),
                    )
                ],
                node.lineno,
            )
            continue
        if kind == "shared":
            # inside written padding: masked-off lanes of a vector store may point past
            # the array, and a masked store to an untouched page is a slow microcode
            # assist (10x on a whole kernel: examples/README.md)
            nbytes = _name(f"_nq_nbytes_{name}")
            view = _call(
                "_nq_cu_dynview",
                _call("_nq_shared_alloc", nbytes),
                nbytes,
                _name(f"_nq_dtype_{name}"),
                _name(f"_nq_itemsize_{name}"),
            )
            out += _located(
                [
                    _assign(
                        _name(name, ast.Store),
                        _call(ast.Attribute(view, "reshape", ast.Load()), _name(f"_nq_shape_{name}")),
                    )
                ],
                node.lineno,
            )
            continue
        if kind == "local" and per_lane:
            shp = ast.BinOp(ast.Tuple([_name("_nq_GMAX")], ast.Load()), ast.Add(), _name(f"_nq_shape_{name}"))
            target = f"_nq_loc_{name}"
        else:
            shp, target = _name(f"_nq_shape_{name}"), name
        out += _located(
            [
                _assign(
                    _name(target, ast.Store),
                    _call(ast.Attribute(_name("_nq_np"), "empty", ast.Load()), shp, _name(f"_nq_dtype_{name}")),
                )
            ],
            node.lineno,
        )
    return out


def generate_shadow(fe, cpu_fn_for):
    """The scalar shadow function of *fe*'s wave items (for typing)."""
    fn_names = {}
    body = _alloc_stmts(fe, per_lane=False) + _shadow_items(fe, fe.items, _Subst(fe, "shadow", fn_names))
    # cross-lane ops become typing-only stand-ins
    ns = _namespace(fe)
    for q, sh in STANDINS.items():
        op = _ops.OPS[q]
        ns[f"_nq_SH_{op.namespace}_{op.name}"] = sh
    _resolve_callees(fn_names, ns, cpu_fn_for, {n for s in body for n in _fe._names_in(s)})
    if not body:
        body = [ast.Pass()]
    fn = _fn_def("_nq_shadow_" + fe.pyfunc.__name__, fe.env.params, body, fe.fn.lineno)
    _located([fn], fe.fn.lineno)
    func, _ = _compile_fn(fe, fn, ns)
    return func


# ---------------------------------------------------------------------------
# Block function
# ---------------------------------------------------------------------------


def _item_names(item):
    """(names read or written, names stored) by one wave item, not recursing."""
    if isinstance(item, _fe.Region):
        allnames = set()
        stores = set()
        for s in item.stmts:
            for n in ast.walk(s):
                if isinstance(n, ast.Name):
                    allnames.add(n.id)
                    if isinstance(n.ctx, ast.Store):
                        stores.add(n.id)
        return allnames, stores
    if isinstance(item, _fe.Uniform):
        return set(_fe._names_in(item.stmt)), set(_fe._names_in(item.stmt, ast.Store))
    if isinstance(item, _fe.XLCall):
        reads = {a.id for a in item.args if isinstance(a, ast.Name)} | ({item.check[1]} if item.check else set())
        return {item.target} | reads, {item.target}
    if isinstance(item, _fe.If):
        return {item.cond}, set()
    if isinstance(item, _fe.UniformIf):
        return set(_fe._names_in(item.test)), set()
    if isinstance(item, _fe.Loop):
        if item.test is not None:
            return set(_fe._names_in(item.test)), set()
        if item.uniform:
            names = {item.uniform[0]}
            for a in item.uniform[1]:
                names |= set(_fe._names_in(a))
            return names, {item.uniform[0]}
        return set(), set()
    if isinstance(item, _fe.Jump):
        return (set(_fe._names_in(item.value)) if item.value is not None else set()), set()
    if isinstance(item, _fe.Barrier):
        return set(), set()
    if isinstance(item, _fe.BarrierReduce):
        return {item.target, item.arg}, {item.target}
    raise AssertionError(item)


def _walk_items(items):
    for it in items:
        yield it
        if isinstance(it, (_fe.If, _fe.UniformIf)):
            yield from _walk_items(it.body)
            yield from _walk_items(it.orelse)
        elif isinstance(it, _fe.Loop):
            yield from _walk_items(it.body)


def _assigns_in(stmts):
    """(list, index, statement) for each ``name = value`` in *stmts*, nested ones too,
    last first within each list (so that inserting before one keeps the others' index)."""
    for k in range(len(stmts) - 1, -1, -1):
        st = stmts[k]
        for _, inner in ast.iter_fields(st):
            if isinstance(inner, list):
                for sub in inner:
                    if isinstance(sub, (ast.excepthandler, ast.match_case)):
                        yield from _assigns_in(sub.body)
                if inner and isinstance(inner[0], ast.stmt):
                    yield from _assigns_in(inner)
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            yield stmts, k, st


def _stored_in_loops(items, inside=False):
    """The names stored inside a loop of *items* (a wave loop, or a loop within a
    region's or a uniform statement's code)."""
    out = set()
    for it in items:
        if isinstance(it, (_fe.If, _fe.UniformIf)):
            out |= _stored_in_loops(it.body, inside) | _stored_in_loops(it.orelse, inside)
        elif isinstance(it, _fe.Loop):
            out |= _item_names(it)[1] | _stored_in_loops(it.body, True)
        elif inside:
            out |= _item_names(it)[1]
        else:
            stmts = it.stmts if isinstance(it, _fe.Region) else [it.stmt] if isinstance(it, _fe.Uniform) else []
            for st in stmts:
                for node in ast.walk(st):
                    if isinstance(node, (ast.For, ast.While)):
                        out |= set(_fe._names_in(node, ast.Store))
    return out


def _has_jump(items, kinds):
    """Does a Jump of one of *kinds* in *items* belong to this loop level?"""
    for it in items:
        if isinstance(it, _fe.Jump) and it.kind in kinds:
            return True
        if isinstance(it, (_fe.If, _fe.UniformIf)) and (_has_jump(it.body, kinds) or _has_jump(it.orelse, kinds)):
            return True
    return False


def _tuple_leaves(ty):
    """[(index path, scalar type)] of a (nested) tuple type of bool, integer and float
    scalars, in order; None for anything else."""
    if type(ty) not in (types.UniTuple, types.Tuple) or not ty.types:
        return None
    out = []
    for k, t in enumerate(ty.types):
        if isinstance(t, (types.Integer, types.Float, types.Boolean)):
            out.append(((k,), t))
            continue
        inner = _tuple_leaves(t)
        if inner is None:
            return None
        out += [((k,) + path, u) for path, u in inner]
    return out


def _first_is_plain_store(region, name):
    """Is every read of *name* in *region* after a store there, on every path
    (:func:`_defined_before_reads`), or is *name* the target of one
    ``for`` loop (at any depth; ``for a in arrays:``) and named nowhere else but in
    that loop's body? (After a loop that ran no iteration, the earlier value is
    read, which only a lane array keeps.)"""
    loops = [
        n
        for n in ast.walk(ast.Module(body=region.stmts, type_ignores=[]))
        if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and n.target.id == name
    ]
    if len(loops) == 1 and name not in _fe._names_in(loops[0].iter):
        inside = sum(_fe._names_in(s).count(name) for s in [loops[0].target] + loops[0].body)
        if inside == sum(_fe._names_in(s).count(name) for s in region.stmts):
            return True
    return _defined_before_reads(region.stmts, name, False)[0]


def _unassigned_leaves(ty):
    """What Numba reads for an unassigned variable of type *ty*, leaf by leaf (a
    tuple's elements in order, a complex number's two parts): 0, or a literal type's
    value (``t = 7`` under a branch is typed Literal[int](7), so Numba reads 7 on
    every path); None for other types."""
    if isinstance(ty, types.Literal) and isinstance(ty, (types.Integer, types.Boolean, types.Float)):
        return [ty.literal_value]
    if isinstance(ty, (types.Integer, types.Float, types.Boolean)):
        return [0]
    if isinstance(ty, types.Complex):
        return [0.0, 0.0]
    if isinstance(ty, types.BaseTuple) and not isinstance(ty, types.NamedTuple):
        parts = [_unassigned_leaves(t) for t in ty]
        return None if any(p is None for p in parts) else [v for p in parts for v in p]
    return None


def _shown(node):
    """*node*'s text for a message, with the names an inlined call gave its locals
    (``_nq_f0_x``: frontend._inline_call) back as the user wrote them."""
    return re.sub(r"\b_nq_f\d+_(?:nq_f\d+_)*", "", ast.unparse(node))[:80]


def _zero_expr(ty):
    """An expression for what Numba reads for an unassigned variable of type *ty* (a
    scalar, a complex number, a tuple of them): :func:`_unassigned_leaves` in the
    variable's own shape; None for other types."""
    leaves = _unassigned_leaves(ty)
    if leaves is None:
        return None
    if isinstance(ty, types.BaseTuple):
        return ast.Tuple(elts=[_zero_expr(t) for t in ty], ctx=ast.Load())
    if isinstance(ty, types.Complex):
        z = _call("_nq_complex", *map(_const, leaves))
        return _call("_nq_c64", z) if ty.bitwidth == 64 else z
    return _call(_SCALAR_NAMES[as_dtype(types.unliteral(ty))], _const(leaves[0]))


def _reads(node, name):
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def _defined_before_reads(stmts, name, defined):
    """(every read of *name* in *stmts* comes after a store on every path, whether it
    is stored on every path through them), given *defined* at entry: Python's
    structured control flow, a loop's body possibly not run, ``break`` and
    ``continue`` ending a path. Anything else that names it (``del``,
    ``:=``, a store through a tuple with a starred part, ``global``): False."""
    for s in stmts:
        if any(
            isinstance(n, (ast.NamedExpr, ast.Delete, ast.Global, ast.Nonlocal, ast.Starred))
            and name in _fe._names_in(n)
            for n in ast.walk(s)
        ):
            return False, defined
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            value = s.value
            if value is not None and _reads(value, name) and not defined:
                return False, defined
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if any(_reads(t, name) for t in targets) and not defined:
                return False, defined
            stored = [
                n
                for t in targets
                for n in ast.walk(t)
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
            ]
            if stored and value is not None:
                defined = True
        elif isinstance(s, ast.AugAssign):
            if name in _fe._names_in(s) and not defined:
                return False, defined
        elif isinstance(s, ast.If):
            if _reads(s.test, name) and not defined:
                return False, defined
            ok1, d1 = _defined_before_reads(s.body, name, defined)
            ok2, d2 = _defined_before_reads(s.orelse, name, defined)
            if not (ok1 and ok2):
                return False, defined
            defined = defined or ((d1 or _ends_path(s.body)) and (d2 or _ends_path(s.orelse)))
        elif isinstance(s, (ast.For, ast.While)):
            head = s.iter if isinstance(s, ast.For) else s.test
            if _reads(head, name) and not defined:
                return False, defined
            inner = defined or (isinstance(s, ast.For) and name in _fe._names_in(s.target))
            if isinstance(s, ast.For) and _reads(s.target, name) and not defined:
                return False, defined
            if not _defined_before_reads(s.body, name, inner)[0]:
                return False, defined
            if not _defined_before_reads(s.orelse, name, defined)[0]:
                return False, defined
        elif isinstance(s, (ast.Return, ast.Break, ast.Continue, ast.Pass, ast.Expr)):
            if name in _fe._names_in(s) and not defined:
                return False, defined
        elif name in _fe._names_in(s):
            return False, defined
    return True, defined


def _ends_path(stmts):
    """Does every path through *stmts* end in ``break`` or ``continue`` (of a loop
    in the region: a rest after them in the same block is never reached)?"""
    for s in stmts:
        if isinstance(s, (ast.Break, ast.Continue)):
            return True
        if isinstance(s, ast.If) and _ends_path(s.body) and _ends_path(s.orelse):
            return True
    return False


#: Helpers of generated lane code that only compute (casts, the ``>= 0`` assumption
#: on thread ids, lane-array loads): a second identical call gives the same value,
#: and none can fault.
_PURE_HELPERS = frozenset({"_nq_i32", "_nq_i64", "_nq_u32", "_nq_nonneg", *_SCALAR_NAMES.values()})
#: Operators that cannot fault or branch on any operands (no division, modulo or
#: power: integer ones raise on zero or trap on MIN // -1).
_PURE_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)
_PURE_CMPOPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _stored_names(st):
    return {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def _repeatable(e):
    """Whether evaluating *e* again, with the locals it reads unchanged, gives the
    same value and does nothing else (no memory read, no call but the pure helpers)."""
    if isinstance(e, ast.Constant):
        return isinstance(e.value, (int, float, bool)) or e.value is None
    if isinstance(e, ast.Name):
        return True
    if isinstance(e, ast.BinOp):
        return _repeatable(e.left) and _repeatable(e.right)
    if isinstance(e, ast.UnaryOp):
        return _repeatable(e.operand)
    if isinstance(e, ast.BoolOp):
        return all(_repeatable(v) for v in e.values)
    if isinstance(e, ast.Compare):
        return all(isinstance(o, _PURE_CMPOPS) for o in e.ops) and all(_repeatable(v) for v in [e.left, *e.comparators])
    if isinstance(e, ast.Call):
        if _tid_load(e):
            return True  # (written once per wave, before any region)
        return (
            isinstance(e.func, ast.Name)
            and e.func.id in _PURE_HELPERS
            and not e.keywords
            and all(_repeatable(a) for a in e.args)
        )
    return False


def _by_positive_constant(e):
    """Is the BinOp *e* ``x // c``, ``x % c`` or ``x / c`` with *c* a positive
    constant (it raises for no *x*)?"""
    c = e.right
    return (
        isinstance(e.op, (ast.FloorDiv, ast.Mod, ast.Div))
        and isinstance(c, ast.Constant)
        and type(c.value) in (int, float)
        and c.value > 0
    )


def _tid_load(e):
    """Is *e* ``_nq_ld(_nq_tx, _nq_l)`` (or ``_nq_ty``, ``_nq_tz``): a lane's thread id
    in a 2-D or 3-D launch?"""
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id == "_nq_ld"
        and len(e.args) == 2
        and isinstance(e.args[0], ast.Name)
        and e.args[0].id in ("_nq_tx", "_nq_ty", "_nq_tz")
        and isinstance(e.args[1], ast.Name)
        and e.args[1].id == L
    )


def _tid_of_lane(name):
    """``threadIdx.x`` (*name* ``_nq_tx``), ``.y`` or ``.z`` of the group's lane
    ``_nq_l``, from the wave's first thread ``_nq_t0`` and the block's shape."""
    t = ast.BinOp(_name("_nq_t0"), ast.Add(), _name(L))
    if name == "_nq_tx":
        e = ast.BinOp(t, ast.Mod(), _name("_nq_bdx"))
    elif name == "_nq_ty":
        e = ast.BinOp(ast.BinOp(t, ast.FloorDiv(), _name("_nq_bdx")), ast.Mod(), _name("_nq_bdy"))
    else:
        e = ast.BinOp(t, ast.FloorDiv(), ast.BinOp(_name("_nq_bdx"), ast.Mult(), _name("_nq_bdy")))
    return _call("_nq_i32", e)


def _recompute_tids(stmts):
    """Rewrites each lane's read of a thread id ``_nq_ld(_nq_tx, _nq_l)`` in
    *stmts* as its computation from the lane (:func:`_tid_of_lane`: a shift and a
    mask where the block's shape is a constant), for each of ``_nq_tx/_ty/_tz`` read
    no other way; then no wave stores them in lane arrays, most of which the fast
    loops never read. Returns the names still read whole (an op's operand)."""
    names = ("_nq_tx", "_nq_ty", "_nq_tz")
    reads = {n: 0 for n in names}
    lane_reads = dict(reads)
    for st in stmts:
        for e in ast.walk(st):
            if isinstance(e, ast.Name) and e.id in reads:
                reads[e.id] += 1
            elif _tid_load(e):
                lane_reads[e.args[0].id] += 1
    whole = {n for n in names if reads[n] > lane_reads[n]}

    class _Tids(ast.NodeTransformer):
        def visit_Call(self, node):
            if _tid_load(node) and node.args[0].id not in whole:
                return ast.copy_location(_tid_of_lane(node.args[0].id), node)
            return self.generic_visit(node)

    for k, st in enumerate(stmts):
        stmts[k] = _Tids().visit(st)
    return whole


def _drop_repeats(stmts):
    """*stmts* without the assignments ``n = E`` (or ``n, m = (E, F)``) that repeat
    earlier top-level ``n = E`` when nothing in between stored ``n`` or a name ``E`` reads (a
    recomputed ``i = grid(1)`` before the region's own ``i = grid(1)``, a loop's
    constant step assigned twice); E must be :func:`_repeatable`."""
    avail = {}  # name -> (dump of its value, names the value reads)
    out = []

    def kill(names):
        for n in list(avail):
            if n in names or avail[n][1] & names:
                del avail[n]

    for st in stmts:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            n = st.targets[0].id
            key = ast.dump(st.value)
            if n in avail and avail[n][0] == key:
                continue
            kill({n})
            reads = set(_fe._names_in(st.value))
            if n not in reads and _repeatable(st.value):
                avail[n] = (key, reads)
        elif (  # ``x, y = (Ex, Ey)`` repeating ``x = Ex`` and ``y = Ey`` (``x, y = grid(2)``)
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Tuple)
            and isinstance(st.value, ast.Tuple)
            and len(st.targets[0].elts) == len(st.value.elts)
            and all(isinstance(t, ast.Name) for t in st.targets[0].elts)
            and all(t.id in avail and avail[t.id][0] == ast.dump(v) for t, v in zip(st.targets[0].elts, st.value.elts))
        ):
            continue
        else:
            kill(_stored_names(st))
        out.append(st)
    return out


def _drop_dead_loads(loads, rest):
    """The lane-array loads ``n = _nq_ld(...)`` of *loads* whose value is read: not
    those where the first statement of *rest* that names ``n`` is a plain top-level
    ``n = E`` with ``E`` not reading ``n`` (the value is overwritten unread)."""
    keep = []
    for ld in loads:
        n = ld.targets[0].id
        for st in rest:
            if n not in set(_fe._names_in(st)):
                continue
            if (
                isinstance(st, ast.Assign)
                and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name)
                and st.targets[0].id == n
                and n not in set(_fe._names_in(st.value))
            ):
                break  # overwritten first: the load is dead
            keep.append(ld)
            break
        # never named again: dead too (the region stores it only if it assigns it)
    return keep


#: numquad's casts in generated code: pure, and transparent to an index's form
_CASTS = frozenset({"_nq_nonneg", "_nq_i64", "_nq_i32", "_nq_u32"})


class _BlockGen:
    def __init__(self, fe, typemap, nd, debug, fast_path=True):
        self.fe = fe
        self.typemap = typemap
        # integer arrays touched only by atomic adds: a private copy per call
        self.private = _private.private_arrays(fe, typemap)
        self.nd = nd
        self.debug = debug
        self.fast_path = fast_path
        self.fn_names = {}
        self.masks = []
        self.block_mode = fe.has_barrier
        self.locals = (
            (
                fe.env.locals
                | {n for it in _walk_items(fe.items) for n in _item_names(it)[0] if n.startswith(_fe._RESERVED)}
            )
            - set(fe.env.closure)
            - set(_control.BUILTIN_ALIASES)
        )
        self.fused = self._fusable_conditions()
        self.view_snaps = []  # the lane temporaries holding a view's indices (_remat)
        self.remat = self._remat()
        # a shared or local array's constant shape is its name's only while the name is
        # bound to nothing else (``sh = out``, ``loc = loc[c:]``: the checks take the
        # shape the name holds there)
        self.const_shapes = {n: a for n, a in fe.allocs.items() if not self._stores.get(n)}
        self.lane_vars = self._lane_vars() - set(self.remat) - set(self.fused)
        # what a recomputed view (``row = a[i, :]``) reads must be at hand where it is read
        for n in self.view_deps:
            if n in self.locals and n not in fe.uniform and n not in self.remat and n not in self.fused:
                self.lane_vars.add(n)
        self.splats = set()
        self.converted = {}  # lane arrays converting an operand to its type at the call
        # a parameter reassigned to what no lane array holds (``arr = arr.reshape(6)``),
        # read and written in one region at the top level only: each lane starts that
        # region again from the argument, as each thread does (no storage across items)
        self.region_params = self._region_params()
        self.lane_vars -= set(self.region_params)
        self.reassigned_params = [p for p in fe.env.params if p in self.lane_vars]
        # a parameter the kernel assigns as a uniform value (``k = 5``, ``a = a[1:]``):
        # each wave (and block) starts again from the argument, as each thread does
        self.rebound_params = [
            p for p in fe.env.params if p not in self.lane_vars and self._assigned(p) and p not in self.region_params
        ]

    # -- storage decisions -------------------------------------------------------
    _LANE_BUILTINS = {"threadIdx.x", "threadIdx.y", "threadIdx.z", "laneid", "grid"}

    #: typing._mixed_versions's variables (generate_block sets it)
    mixed = {}
    #: the variables whose one type holds a literal (typing.shadow_types)
    literal = {}

    def _lane_pure(self, e, ok_names):
        fe = self.fe
        if isinstance(e, ast.Constant):
            return isinstance(e.value, (int, float, bool))
        if isinstance(e, ast.Name):
            if e.id in ok_names or (e.id in fe.uniform and self._stable(e.id)):
                return True
            b = fe.builtin_of(e) if e.id not in fe.env.locals else None
            return b in self._LANE_BUILTINS or b in fe._UNIFORM_BUILTINS
        if isinstance(e, ast.Attribute):
            b = fe.builtin_of(e)
            return b is not None and (b in self._LANE_BUILTINS or b in fe._UNIFORM_BUILTINS)
        if isinstance(e, ast.BinOp):
            # a region recomputes the value in every lane, those that never ran the
            # assignment too (returned, past a partial wave): nothing that can raise
            # there (``100 // (n - i)`` after ``if i >= n: return``), so a division
            # only by a positive constant (``tid // 32``)
            if not isinstance(e.op, _PURE_BINOPS) and not _by_positive_constant(e):
                return False
            return self._lane_pure(e.left, ok_names) and self._lane_pure(e.right, ok_names)
        if isinstance(e, ast.UnaryOp):
            return self._lane_pure(e.operand, ok_names)
        if isinstance(e, ast.BoolOp):  # ``inside = y < h and x < w``
            return all(self._lane_pure(v, ok_names) for v in e.values)
        if isinstance(e, ast.Compare):
            return all(isinstance(o, _PURE_CMPOPS) for o in e.ops) and all(
                self._lane_pure(v, ok_names) for v in [e.left, *e.comparators]
            )
        if isinstance(e, ast.Call) and not e.keywords:
            op = fe.op_of(e)
            if op is not None:
                return op.kind == "query"
            b = fe.builtin_of(e.func)
            if b == "grid":
                return len(e.args) == 1 and isinstance(e.args[0], ast.Constant) and e.args[0].value == 1
            return False
        return False

    def _grid_unpacked(self, st):
        """``(name, axis, call)`` for each name of ``x, y[, z] = xpu.grid(n)`` (or
        ``gridsize``, ``quad_grid``), a statement of the user's; else nothing."""
        if not (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Tuple)
            and all(isinstance(e, ast.Name) for e in st.targets[0].elts)
            and isinstance(st.value, ast.Call)
            and not st.value.keywords
            and len(st.value.args) == 1
            and isinstance(st.value.args[0], ast.Constant)
            and type(st.value.args[0].value) is int
            and st.value.args[0].value == len(st.targets[0].elts)
            and self.fe.builtin_of(st.value.func) in ("grid", "gridsize", "quad_grid")
        ):
            return []
        return [(e.id, k, st.value) for k, e in enumerate(st.targets[0].elts)]

    def _stable(self, name):
        """Whether a local holds one value wherever a recomputed value can read it:
        a parameter never assigned, or a local assigned once. A value recomputed
        from a uniform that the kernel assigns again (``t = i + k; k = 5``) would
        read the new ``k`` in the regions after it."""
        n = self._stores.get(name, 0)
        return n == 0 or (n == 1 and name not in self.fe.env.params)

    def _remat(self):
        """Lane values cheaper to recompute than to keep: single assignments at the
        top level whose value is built from thread ids, constants and uniforms that
        keep their value (``i = xpu.grid(1)``). Each region that reads one recomputes
        it, so LLVM sees consecutive indices and emits plain vector loads and stores."""
        self._stores = stores = {}
        for it in _walk_items(self.fe.items):
            for n in _item_names(it)[1]:
                stores[n] = stores.get(n, 0) + (1 if not isinstance(it, _fe.Region) else 0)
            if isinstance(it, _fe.Region):
                for st in it.stmts:
                    for n in _fe._names_in(st, ast.Store):
                        stores[n] = stores.get(n, 0) + 1
        out = {
            name: ast.Subscript(value=_name(f"_nq_loc_{name}"), slice=_name(L), ctx=ast.Load())
            for name, a in self.fe.allocs.items()
            if a[0] == "local"
        }
        for it in self.fe.items:
            if not isinstance(it, _fe.Region):
                continue
            for st in it.stmts:
                if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                    n = st.targets[0].id
                    if stores.get(n) == 1 and n not in self.fe.env.params and self._lane_pure(st.value, out):
                        out[n] = st.value
                for n, k, call in self._grid_unpacked(st):  # ``x, y = xpu.grid(2)``: ``xpu.grid(2)[0]``, ...
                    if stores.get(n) == 1 and n not in self.fe.env.params:
                        out[n] = ast.copy_location(
                            ast.Subscript(value=copy.deepcopy(call), slice=_const(k), ctx=ast.Load()), call
                        )
        # lane-varying array views assigned once (``row = a[i, :]``, anywhere): an array
        # cannot live in a lane array, so each region that reads one recomputes it from
        # its operands (cpu/cudaapi.py: is_view). An index or bound whose operands may
        # change before the view is read (a local assigned again, or inside a loop:
        # ``row = a[i + j, :]`` under a lane-varying ``if`` in a loop over ``j``, read in
        # a later iteration) is kept as it was at the view's assignment, in a lane
        # array of its own (``_nq_vw_<k> = int64(i + j)``; ``row = a[_nq_vw_<k>, :]``).
        self.view_deps = set()
        self.remat_views = set()
        in_loops = _stored_in_loops(self.fe.items)

        def keeps(m):
            return m in out or m not in self.locals or (self._stable(m) and m not in in_loops)

        for it in _walk_items(self.fe.items):
            if not isinstance(it, _fe.Region):
                continue
            for body, k, st in list(_assigns_in(it.stmts)):
                n = st.targets[0].id
                if n in out or n in self.fe.uniform or stores.get(n) != 1 or n in self.fe.env.params:
                    continue
                if not (_cudaapi.is_view(st.value) or self._is_row_view(n, st.value)) or not keeps(st.value.value.id):
                    continue
                snaps = []

                def kept(e, snaps=snaps, st=st):
                    if e is None or all(keeps(m) for m in _fe._names_in(e)) and not self._reads_memory(e):
                        return e
                    tmp = f"{_fe._RESERVED}vw_{len(self.view_snaps)}"
                    self.view_snaps.append(tmp)
                    self.locals.add(tmp)
                    snaps.append(ast.copy_location(_assign(_name(tmp, ast.Store), _call("_nq_i64", e)), st))
                    return _name(tmp)

                sl = st.value.slice
                parts = sl.elts if isinstance(sl, ast.Tuple) else None
                for j, p in enumerate(parts if parts is not None else [sl]):
                    if isinstance(p, ast.Slice):
                        p.lower, p.upper, p.step = kept(p.lower), kept(p.upper), kept(p.step)
                    elif parts is not None:
                        parts[j] = kept(p)
                    else:
                        st.value.slice = kept(p)
                body[k:k] = snaps
                out[n] = st.value
                self.remat_views.add(n)
                self.view_deps |= set(_fe._names_in(st.value))
        return out

    def _reads_memory(self, e):
        """Does the index *e* load memory or call a function that is not pure
        (``out[idx[i], :]``, ``a[atomic.add(c, i, 1)]``)? Recomputed in a later
        region it would see later writes, or call again: such an index is kept as it
        was at the view's assignment, as Python evaluates it once."""
        from .. import _desugar

        for x in ast.walk(e):
            if isinstance(x, ast.Subscript):
                return True
            if (
                isinstance(x, ast.Call)
                and not (isinstance(x.func, ast.Name) and x.func.id in _CASTS)
                and _desugar.call_kind(self.fe.env, x, _fe._MISSING) != "pure"
            ):
                return True
        return False

    def _is_row_view(self, name, value):
        """``row = a[i]`` of an array with more axes than indices (typed so): a view
        as ``a[i, :]`` is, recomputed as it is."""
        return (
            isinstance(value, ast.Subscript)
            and isinstance(value.value, ast.Name)
            and not isinstance(value.slice, ast.Slice)
            and isinstance(self.typemap.get(name), types.Array)
            and isinstance(self.typemap.get(value.value.id), types.Array)
        )

    def _fusable_conditions(self):
        """{cond: If} for each masked ``if`` whose condition is computed by the region
        just before it: the condition and the new masks then come out of one lane
        loop, with no lane array for the condition."""
        out = {}

        def scan(items):
            for a, b in zip(items, items[1:]):
                if isinstance(a, _fe.Region) and isinstance(b, _fe.If) and len(a.stmts) == 1:
                    st = a.stmts[0]
                    if (
                        isinstance(st, ast.Assign)
                        and isinstance(st.targets[0], ast.Name)
                        and st.targets[0].id == b.cond
                    ):
                        out[b.cond] = b
            for it in items:
                if isinstance(it, (_fe.If, _fe.UniformIf)):
                    scan(it.body)
                    scan(it.orelse)
                elif isinstance(it, _fe.Loop):
                    scan(it.body)

        scan(self.fe.items)
        return out

    def _lane_vars(self):
        uses = {}
        forced = set()
        for it in _walk_items(self.fe.items):
            names, _ = _item_names(it)
            for n in names:
                if (
                    n in self.locals
                    and n not in self.fe.uniform
                    and not (n in self.fe.env.params and not self._assigned(n))
                ):
                    uses.setdefault(n, []).append(it)
                    if not isinstance(it, _fe.Region):
                        forced.add(n)
        lane = set()
        for n, its in uses.items():
            if n in forced or len(its) > 1 or n in self.fe.env.params:
                lane.add(n)
            elif not _first_is_plain_store(its[0], n):
                lane.add(n)
        return lane

    def _region_params(self):
        """{parameter: its region} for :attr:`region_params`."""
        out = {}
        for p in self.fe.env.params:
            ty = self.typemap.get(p)
            if (
                p not in self.lane_vars
                or p in self.view_deps
                or ty is None
                or isinstance(ty, (types.Integer, types.Float, types.Boolean, types.Complex, types.BaseTuple))
            ):
                continue
            its = [it for it in _walk_items(self.fe.items) if p in _item_names(it)[0]]
            if len(its) == 1 and isinstance(its[0], _fe.Region) and any(its[0] is it for it in self.fe.items):
                out[p] = its[0]
        return out

    def _assigned(self, name):
        for it in _walk_items(self.fe.items):
            if name in _item_names(it)[1]:
                return True
        return False

    def _dtype(self, name, node=None):
        ty = self.typemap.get(name)
        if ty is None:
            # Typing the shadow prunes branches whose condition is a constant
            # (``if k < k:`` after a loop over constants), as Numba's nopython
            # pipeline does: a name stored only there has no type, and no live code
            # reads it (the generated block prunes or never runs that branch).
            # Its lane storage needs some type; int64 is as good as any.
            return np.dtype(np.int64)
        if isinstance(ty, (types.Integer, types.Float, types.Boolean)):
            return as_dtype(ty)
        store = self._first_store(name)
        if name.startswith(_fe._RESERVED):
            shown = f"the value {ast.unparse(store.value)}" if store is not None else "a temporary value"
        else:
            shown = name
        if name in self.mixed:
            _mixed_version_error(self.fe, name, self.mixed[name])  # not one type, but several
        if isinstance(ty, types.Array):
            try:
                self.fe.error(
                    f"{shown} ({ty}) is an array that differs from lane to lane and lives across a "
                    f"cross-lane op or a lane-varying branch; the CPU target keeps only bool, integer "
                    f"and float scalars and tuples of them there: pass the whole array and its index "
                    f"(index it after the op), or make the view after the op",
                    node or store or self.fe.fn,
                )
            except NumquadCompileError as e:
                # a view assigned again at the top level may live across only by its name
                # (``row = x[i]`` ... barrier ... ``row = x[j]``): cpu/dispatch.py compiles
                # once more with the variable split at those assignments (cpu/splitnames.py)
                e.split_candidate = name
                raise
        self.fe.error(
            f"{shown} ({ty}) differs from lane to lane and lives across a cross-lane op or a "
            f"lane-varying branch; the CPU target keeps only bool, integer and float scalars and "
            f"tuples of them there: compute it after the op",
            node or store or self.fe.fn,
        )

    def _first_store(self, name):
        """The first ``name = value`` of the kernel's regions (for an error's line), else None."""
        for it in _walk_items(self.fe.items):
            if isinstance(it, _fe.Region):
                for _, _, st in reversed(list(_assigns_in(it.stmts))):
                    if st.targets[0].id == name:
                        return st
        return None

    def _tuple_parts(self, name):
        """The element dtypes of *name* when it is a tuple of bool, integer and float
        scalars (``p = cuda.grid(2)``; nested tuples of them by their leaves, in
        order) or a complex scalar (its two parts): kept in one lane array per element
        (``_nq_v_<name>__<k>``); None for anything else."""
        ty = self.typemap.get(name)
        if isinstance(ty, types.Complex):
            # a complex value as its real and imaginary parts (_load_var rebuilds it)
            return [as_dtype(ty.underlying_float)] * 2
        leaves = _tuple_leaves(ty)
        return None if leaves is None else [as_dtype(t) for _, t in leaves]

    def _load_var(self, name):
        """``name = <this lane's value>`` from its lane storage."""
        parts = self._tuple_parts(name)
        if parts is None:
            return _assign(_name(name, ast.Store), _sub(f"_nq_v_{name}"))
        loads = [_sub(f"_nq_v_{name}__{k}") for k in range(len(parts))]
        ty = self.typemap.get(name)
        if isinstance(ty, types.Complex):
            # complex(re, im) keeps both parts' bits (re + im * 1j would not: inf, -0.0)
            value = _call("_nq_complex", *loads)
            if ty.bitwidth == 64:
                value = _call("_nq_c64", value)
            return _assign(_name(name, ast.Store), value)
        leaves = iter(loads)

        def build(t):  # the (nested) tuple again, leaf by leaf in order
            return ast.Tuple(
                [build(e) if isinstance(e, types.BaseTuple) else next(leaves) for e in t.types], ast.Load()
            )

        return _assign(_name(name, ast.Store), build(ty))

    def _store_var(self, name, value=None, active=None):
        """Statements storing *value* (default: the variable) as this lane's *name*;
        with *active* (a bool local), only where it is true (``_nq_stm``: a select)."""
        value = value or name
        parts = self._tuple_parts(name)

        def st(arr, v):
            if active is None:
                return _store(arr, v)
            return ast.Expr(_call("_nq_stm", _name(arr), _name(L), _name(active), v))

        if parts is None:
            return [st(f"_nq_v_{name}", _name(value))]
        if isinstance(self.typemap.get(name), types.Complex):
            return [
                st(f"_nq_v_{name}__{k}", ast.Attribute(_name(value), part, ast.Load()))
                for k, part in enumerate(("real", "imag"))
            ]
        out = []
        for k, (path, _) in enumerate(_tuple_leaves(self.typemap.get(name))):
            part = _name(value)
            for j in path:
                part = ast.Subscript(part, _const(j), ast.Load())
            out.append(st(f"_nq_v_{name}__{k}", part))
        return out

    def _pure_expr(self, e):
        """Whether *e* (generated lane code) computes without a fault, a branch or an
        effect on any lane's values, active or not: constants, locals, the arithmetic
        and comparison operators of _PURE_BINOPS/_PURE_CMPOPS, ``not``/``-``/``~``,
        lane-array loads and the pure helpers (casts; numpy scalar types and
        bool/int/float that are not the user's own names)."""
        if isinstance(e, ast.Constant):
            return isinstance(e.value, (int, float, bool))
        if isinstance(e, ast.Name):
            return True
        if isinstance(e, ast.BinOp):
            return isinstance(e.op, _PURE_BINOPS) and self._pure_expr(e.left) and self._pure_expr(e.right)
        if isinstance(e, ast.UnaryOp):
            return self._pure_expr(e.operand)
        if isinstance(e, ast.Compare):
            return (
                len(e.ops) == 1
                and isinstance(e.ops[0], _PURE_CMPOPS)
                and self._pure_expr(e.left)
                and self._pure_expr(e.comparators[0])
            )
        if isinstance(e, ast.Call):
            if e.keywords or not all(self._pure_expr(a) and not isinstance(a, ast.Starred) for a in e.args):
                return False
            f = e.func
            if isinstance(f, ast.Name) and (f.id in _PURE_HELPERS or f.id == "_nq_ld"):
                return True
            if isinstance(f, ast.Name) and f.id.startswith(_fe._RESERVED):
                return False
            try:
                obj = self.fe.env.resolve(f)
            except Exception:  # noqa: BLE001 - unknown: not pure
                return False
            return len(e.args) == 1 and (
                obj in (bool, int, float)
                or (isinstance(obj, type) and issubclass(obj, (np.integer, np.floating, np.bool_)))
            )
        return False

    def _pure_region(self, body, stores):
        """Whether a region's lane code (*body*: loads, recomputed values, its
        statements) may run in every lane, the inactive ones too, with only the
        stores of its lane variables masked: straight-line assignments of
        :meth:`_pure_expr` values to locals of its own (no array access, no call,
        no loop or ``if`` that a stale value could make long or fault)."""
        if any(n in self.fe.uniform or n in self.fe.env.params for n in stores):
            return False
        for st in body:
            if isinstance(st, ast.Assign):
                if not all(
                    isinstance(t, ast.Name)
                    or (isinstance(t, ast.Tuple) and all(isinstance(x, ast.Name) for x in t.elts))
                    for t in st.targets
                ):
                    return False
                if not (
                    self._pure_expr(st.value)
                    or (isinstance(st.value, ast.Tuple) and all(self._pure_expr(x) for x in st.value.elts))
                ):
                    return False
            elif isinstance(st, ast.AugAssign):
                if not (
                    isinstance(st.target, ast.Name) and isinstance(st.op, _PURE_BINOPS) and self._pure_expr(st.value)
                ):
                    return False
            else:
                return False
        return True

    @staticmethod
    def _where(what, index):
        """Arguments naming the block and the wave or thread, for a debug error."""
        return [_name("_nq_bix"), _name("_nq_biy"), _name("_nq_biz"), _const(what), _name(index)]

    def _any(self, mask):
        if self.block_mode:
            return _call("_nq_anyb", _name(mask), _name("_nq_G"))
        return _call("_nq_any", _name(mask))

    def _all(self, mask):
        if self.block_mode:
            return _call("_nq_allb", _name(mask), _name("_nq_G"))
        return _call("_nq_all", _name(mask))

    def masked_loop(self, mask, body, idle=()):
        """The lane loop of a region under *mask*: *body* in its lanes, *idle* in the
        others. In a block function, wave by wave, and a wave with no lane in *mask*
        runs no lane's test (only *idle*, a store per lane): a region under ``if tid <
        32`` in a block of 256 threads tested 224 lanes it had no work for."""
        if not self.block_mode:
            return _lane_loop([ast.If(test=_sub(mask), body=body, orelse=list(idle))])

        def wave_lanes(stmts):
            start = ast.BinOp(_name("_nq_w"), ast.Mult(), _const(W))
            stop = ast.BinOp(copy.deepcopy(start), ast.Add(), _const(W))
            rng = _call("_nq_range", _call("_nq_i32", start), _call("_nq_i32", stop))
            return ast.For(target=_name(L, ast.Store), iter=rng, body=stmts, orelse=[])

        some = _call("_nq_any", _call("_nq_wv", _name(mask), _name("_nq_w")))
        run = wave_lanes([ast.If(test=_sub(mask), body=body, orelse=list(idle))])
        skip = [wave_lanes(copy.deepcopy(list(idle)))] if idle else []
        return ast.For(
            target=_name("_nq_w", ast.Store),
            iter=_call("_nq_range", ast.BinOp(_name("_nq_G"), ast.FloorDiv(), _const(W))),
            body=[ast.If(test=some, body=[run], orelse=skip)],
            orelse=[],
        )

    def plain_loop(self, body):
        """The lane loop of a region where every lane is active. A kernel with barriers
        compiled for a 2-D or 3-D block shape whose lanes fill whole waves runs it as
        two loops, rows of threads outside, threadIdx.x inside: ``threadIdx.x`` is then
        the inner induction variable, so ``s[ty, k] * t[k, tx]`` is a broadcast times a
        contiguous vector load (with one flat loop over ``l`` LLVM sees ``l % bdx`` and
        gathers). Lanes run in the same order (l = ly * bdx + lx)."""
        shape = self.nd if isinstance(self.nd, tuple) else None
        if not shape or (shape[0] * shape[1] * shape[2]) % W:
            return _lane_loop(body)
        bdx, bdy, bdz = (int(v) for v in shape)
        if not self.block_mode:
            return self._wave_rows_loop(body, bdx, bdy, bdz)
        body = [_NdLanes(bdy, bdz).visit(st) for st in body]
        lane = _assign(
            _name("_nq_ln", ast.Store),
            ast.BinOp(ast.BinOp(_name("_nq_ly"), ast.Mult(), _const(bdx)), ast.Add(), _name("_nq_lx")),
        )
        inner = ast.For(
            target=_name("_nq_lx", ast.Store),
            iter=_call("_nq_range", _call("_nq_i32", _const(bdx))),
            body=[lane] + body,
            orelse=[],
        )
        return ast.For(
            target=_name("_nq_ly", ast.Store),
            iter=_call("_nq_range", _call("_nq_i32", _const(bdy * bdz))),
            body=[inner],
            orelse=[],
        )

    def _wave_rows_loop(self, body, bdx, bdy, bdz):
        """:meth:`plain_loop` for one full wave of a kernel without barriers: the
        wave's rows of threads outside, threadIdx.x inside, when its 32 lanes are
        whole rows (blockDim.x divides 32: 32 / blockDim.x rows) or part of one row
        (32 divides blockDim.x). threadIdx.y and z are then the same in the inner
        loop, so ``img[y, x]`` is a contiguous vector load, not a gather. Lanes run in
        the same order (lane = (row - first row) * width + threadIdx.x - first x)."""
        if bdx % W and W % bdx:
            return _lane_loop(body)  # rows straddle waves (blockDim.x 12, 48, ...)
        width = min(bdx, W)
        body = [_NdLanes(bdy, bdz).visit(st) for st in body]
        # the wave's first thread: row _nq_t0 // bdx (of the block's bdy * bdz rows),
        # column _nq_t0 % bdx (0 unless one row holds several waves)
        ly0 = _call("_nq_i32", ast.BinOp(_name("_nq_t0"), ast.FloorDiv(), _const(bdx)))
        lx0 = _call("_nq_i32", ast.BinOp(_name("_nq_t0"), ast.Mod(), _const(bdx)))
        lane = _assign(
            _name("_nq_ln", ast.Store),
            ast.BinOp(
                ast.BinOp(ast.BinOp(_name("_nq_ly"), ast.Sub(), _name("_nq_ly0")), ast.Mult(), _const(width)),
                ast.Add(),
                ast.BinOp(_name("_nq_lx"), ast.Sub(), _name("_nq_lx0")),
            ),
        )
        # int32 bounds, so int32 induction variables (docs/architecture.md, section 5:
        # LLVM miscompiled a truncated int64 one)
        inner = ast.For(
            target=_name("_nq_lx", ast.Store),
            iter=_call(
                "_nq_range", _name("_nq_lx0"), _call("_nq_i32", ast.BinOp(_name("_nq_lx0"), ast.Add(), _const(width)))
            ),
            body=[lane] + body,
            orelse=[],
        )
        rows = ast.For(
            target=_name("_nq_ly", ast.Store),
            iter=_call(
                "_nq_range",
                _name("_nq_ly0"),
                _call("_nq_i32", ast.BinOp(_name("_nq_ly0"), ast.Add(), _const(W // width))),
            ),
            body=[inner],
            orelse=[],
        )
        return ast.If(
            test=_const(True),
            body=[_assign(_name("_nq_ly0", ast.Store), ly0), _assign(_name("_nq_lx0", ast.Store), lx0), rows],
            orelse=[],
        )

    def new_mask(self):
        m = f"_nq_m{len(self.masks)}"
        self.masks.append(m)
        return m

    # -- emission -------------------------------------------------------------------
    #: (generate_block) a division by zero raises: Numba's "python" error model
    zero_division = False

    def subst(self, stmts, mode):
        out = []
        for s in stmts:
            t = _Subst(self.fe, mode, self.fn_names, self.block_mode, self.debug, self.private)
            t.zero_division = self.zero_division
            t.typemap = self.typemap
            t.const_shapes = self.const_shapes
            out.append(t.visit(copy.deepcopy(s)))
        return out

    def gen_items(self, items, frames):
        out = []
        skip = None
        for k, it in enumerate(items):
            if it is skip:
                continue
            nxt = items[k + 1] if k + 1 < len(items) else None
            if isinstance(it, _fe.Region) and isinstance(nxt, _fe.If) and self.fused.get(nxt.cond) is nxt:
                out.extend(self.gen_if(nxt, frames, cond_region=it))
                skip = it = nxt
                k += 1
            else:
                out.extend(self.gen_item(it, frames))
            if k + 1 < len(items) and any(isinstance(j, _fe.Jump) for j in _walk_items([it])):
                # lanes may have left here (a return, break or continue): when none is
                # left, the rest does not run, as on a GPU. Its uniform statements and
                # conditions run once per wave whatever the mask, and one that reads
                # memory (``t = tab[blockIdx.x]`` after ``if i >= n: return``) would
                # read out of bounds in a wave with no thread left
                rest = self.gen_items(items[k + 1 :], frames)
                if rest:
                    out.append(ast.If(test=self._any(frames[-1][0]), body=rest, orelse=[]))
                break
        return out

    def gen_item(self, it, frames):
        mask = frames[-1][0]
        lane_mode = "lane_nd" if self.nd else "lane"
        if isinstance(it, _fe.Region):
            names, stores = _item_names(it)
            loads = sorted(n for n in names | self._remat_reads(names) if n in self.lane_vars)
            core = _drop_repeats(self._remat_defs(names, lane_mode, stores) + self.subst(it.stmts, lane_mode))
            kept = [n for n in sorted(stores) if n in self.lane_vars]
            tail = [st for n in kept for st in self._store_var(n)]
            body = _drop_dead_loads([self._load_var(n) for n in loads], core + tail) + core
            body = [
                _assign(_name(p, ast.Store), _name(f"_nq_p_{p}")) for p, r in self.region_params.items() if r is it
            ] + body
            # a name the region reads and then assigns that lives in one Python local,
            # not a lane array (a value the same in every lane: ``a, b = b, a`` of two
            # arrays, ``src, dst = dst, src`` after a barrier): every lane starts from
            # its value at the region's entry, as every thread does (each lane running
            # on from the one before swapped the arrays back in every other lane)
            carried = [
                n
                for n in sorted(stores)
                if n in self.locals
                and n not in self.lane_vars
                and n not in self.region_params
                and n not in self.remat
                and n not in self.fused
                and not _first_is_plain_store(it, n)
            ]
            entry = [_assign(_name(f"_nq_e_{n}", ast.Store), _name(n)) for n in carried]
            body = [_assign(_name(n, ast.Store), _name(f"_nq_e_{n}")) for n in carried] + body
            line = it.stmts[0].lineno
            if self._pure_region(body, stores):
                if not kept:
                    return []  # computes nothing another item reads
                # one loop over every lane; inactive lanes keep their old values
                act = _assign(_name("_nq_act", ast.Store), _sub(mask))
                sel = [st for n in kept for st in self._store_var(n, active="_nq_act")]
                return _located(entry + [_lane_loop([act] + body + sel)], line)
            body += tail
            masked = self.masked_loop(mask, body)
            if self.fast_path:
                plain = self.plain_loop(copy.deepcopy(body))
                return _located(entry + [ast.If(test=self._all(mask), body=[plain], orelse=[masked])], line)
            return _located(entry + [masked], line)
        if isinstance(it, _fe.Uniform):
            return _located(self.subst([it.stmt], "uniform"), it.stmt.lineno)
        if isinstance(it, _fe.XLCall):
            return self.gen_xl(it, mask)
        if isinstance(it, _fe.If):
            return self.gen_if(it, frames)
        if isinstance(it, _fe.UniformIf):
            # the same in every lane: plain control flow around masked code
            test = self.subst([ast.Expr(it.test)], "uniform")[0].value
            node = ast.If(
                test=test,
                body=self.gen_items(it.body, frames) or [ast.Pass()],
                orelse=self.gen_items(it.orelse, frames),
            )
            return _located([node], it.node.lineno)
        if isinstance(it, _fe.Loop):
            line = it.node.lineno
            uniform = it.test is not None or it.uniform
            if uniform and not _has_jump(it.body, ("break", "continue")):
                # uniform control and no break/continue: the body runs under the
                # enclosing mask, with no loop masks to keep
                head = []
                loop_body = [ast.If(test=ast.UnaryOp(ast.Not(), self._any(mask)), body=[ast.Break()], orelse=[])]
                loop_body += self.gen_items(it.body, frames)
            else:
                ml, mb = self.new_mask(), self.new_mask()
                head = [_mask_copy(ml, mask)]
                loop_body = [
                    ast.If(test=ast.UnaryOp(ast.Not(), self._any(ml)), body=[ast.Break()], orelse=[]),
                    _mask_copy(mb, ml),
                ] + self.gen_items(it.body, frames + [(ml, "loop"), (mb, "body")])
            if it.test is not None:
                test = self.subst([ast.Expr(it.test)], "uniform")[0].value
                loop = ast.While(test=test, body=loop_body, orelse=[])
            elif it.uniform:
                target, rargs = it.uniform
                rargs = self.subst([ast.Expr(a) for a in rargs], "uniform")
                loop = ast.For(
                    target=_name(target, ast.Store),
                    iter=_call("_nq_range", *[e.value for e in rargs]),
                    body=loop_body,
                    orelse=[],
                )
            else:
                loop = ast.While(test=_const(True), body=loop_body, orelse=[])
            return _located(head + [loop], line)
        if isinstance(it, _fe.Jump):
            return self.gen_jump(it, frames)
        if isinstance(it, _fe.Barrier):
            # every lane loop runs over the whole block, so the block is already in step
            # here; debug=True checks that no live thread is missing (a divergent barrier)
            if not self.debug:
                return []
            return _located(self.barrier_check(mask, it.node.lineno, "xpu.syncthreads()"), it.node.lineno)
        if isinstance(it, _fe.BarrierReduce):
            return _cudaapi.gen_barrier_reduce(self, it, mask)
        raise AssertionError(it)

    def barrier_check(self, mask, line, what):
        """(debug=True) statements raising where a live thread of the block is not in
        *mask* at the barrier *what* of *line*: a divergent barrier."""
        msg = (
            f'File "{self.fe.filename}", line {line}: {what} reached by only part of the block '
            f"(under a divergent condition or loop); on a GPU this is undefined (debug=True check)"
        )
        chk = ast.If(
            test=ast.Compare(_sub(mask), [ast.NotEq()], [_sub("_nq_m_entry")]),
            body=[ast.Raise(exc=_call("_nq_RuntimeError", _const(msg), *self._where("thread", L)), cause=None)],
            orelse=[],
        )
        return [_lane_loop([chk])]

    def gen_if(self, it, frames, cond_region=None):
        """A masked ``if``: the then/else masks, then each side under its mask. With
        *cond_region* (the region computing the condition) one lane loop does both."""
        mask = frames[-1][0]
        line = it.node.lineno
        mt, me = self.new_mask(), (self.new_mask() if it.orelse else None)
        lane_mode = "lane_nd" if self.nd else "lane"
        if cond_region is None:
            c = _sub(f"_nq_v_{it.cond}")
            setm = [_store(mt, ast.BoolOp(ast.And(), [_sub(mask), c]))]
            if me:
                setm.append(_store(me, ast.BoolOp(ast.And(), [_sub(mask), ast.UnaryOp(ast.Not(), copy.deepcopy(c))])))
            out = [_lane_loop(setm)]
        else:
            names, stores = _item_names(cond_region)
            core = _drop_repeats(self._remat_defs(names, lane_mode, stores) + self.subst(cond_region.stmts, lane_mode))
            pre = (
                _drop_dead_loads(
                    [self._load_var(n) for n in sorted(names | self._remat_reads(names)) if n in self.lane_vars], core
                )
                + core
            )
            c = _name(it.cond)
            active = pre + [_store(mt, c)] + ([_store(me, ast.UnaryOp(ast.Not(), _name(it.cond)))] if me else [])
            idle = [_store(mt, _const(False))] + ([_store(me, _const(False))] if me else [])
            masked = self.masked_loop(mask, active, idle)
            if self._pure_region(pre, stores):
                # one loop over every lane: the masks are the condition and the lane's mask
                act = _assign(_name("_nq_act", ast.Store), _sub(mask))
                as_bool = _SCALAR_NAMES[np.dtype(bool)]
                setm = [_store(mt, ast.BinOp(_name("_nq_act"), ast.BitAnd(), _call(as_bool, c)))]
                if me:
                    setm.append(
                        _store(
                            me,
                            ast.BinOp(
                                _name("_nq_act"), ast.BitAnd(), _call(as_bool, ast.UnaryOp(ast.Not(), _name(it.cond)))
                            ),
                        )
                    )
                out = [_lane_loop([act] + pre + setm)]
            elif self.fast_path:
                out = [ast.If(test=self._all(mask), body=[self.plain_loop(copy.deepcopy(active))], orelse=[masked])]
            else:
                out = [masked]
        body = self.gen_items(it.body, frames + [(mt, "if")])
        if body:
            out.append(ast.If(test=self._any(mt), body=body, orelse=[]))
        if me:
            orelse = self.gen_items(it.orelse, frames + [(me, "if")])
            if orelse:
                out.append(ast.If(test=self._any(me), body=orelse, orelse=[]))
        return _located(out, line)

    def gen_jump(self, it, frames):
        kind = {"return": "func", "break": "loop", "continue": "body"}[it.kind]
        start = max(i for i, (_, k) in enumerate(frames) if k == kind)
        cur = frames[-1][0]
        if it.kind == "return" and it.value is not None:
            self.fe.error("a value-returning lane function cannot be compiled as a kernel here", it.node)
        # the lanes of *cur* leave every mask up to the frame jumped out of; *cur* (the
        # last of them) itself last, as the others read it
        out = [_mask_andnot(m, cur) for m, _ in frames[start:] if m != cur] + [_mask_andnot(cur, cur)]
        return _located(out, it.node.lineno)

    def _remat_reads(self, names):
        """The lane variables the recomputed values a region reads depend on."""
        out = set()
        todo, seen = [n for n in names if n in self.remat], set()
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            for m in _fe._names_in(self.remat[n]):
                if m in self.remat:
                    todo.append(m)
                else:
                    out.add(m)
        return out

    def _remat_defs(self, names, mode, stored=()):
        """Recompute the rematerialised values a region reads, in definition order,
        at its top: except one whose operands the region itself assigns (``n, m =
        a.shape`` then ``i = t // m``, one region): its own statement defines it,
        after them (the copy at the top read ``m`` before its assignment)."""
        need = set()
        todo = [n for n in names if n in self.remat]
        while todo:
            n = todo.pop()
            if n in need:
                continue
            need.add(n)
            todo += [m for m in _fe._names_in(self.remat[n]) if m in self.remat]
        if stored:
            need = {n for n in need if not (self._remat_reads({n}) & set(stored))}
        return self.subst([_assign(_name(n, ast.Store), self._remat_value(n)) for n in self.remat if n in need], mode)

    def _remat_value(self, n):
        """The value recomputing *n*; a view's indices through ``_nq_vix``: the region
        recomputes it in lanes that never made it too (``if i < n: row = a[i]``),
        where the index may be outside the array (a false IndexError, or a view
        outside it)."""
        v = copy.deepcopy(self.remat[n])
        if n in self.remat_views:
            parts = v.slice.elts if isinstance(v.slice, ast.Tuple) else [v.slice]
            fixed = [
                p
                if isinstance(p, ast.Slice)
                else ast.copy_location(
                    _call(
                        "_nq_vix",
                        p,
                        ast.Subscript(
                            value=ast.Attribute(value=_name(v.value.id), attr="shape", ctx=ast.Load()),
                            slice=_const(k),
                            ctx=ast.Load(),
                        ),
                    ),
                    p,
                )
                for k, p in enumerate(parts)
            ]
            if isinstance(v.slice, ast.Tuple):
                v.slice.elts = fixed
            else:
                v.slice = fixed[0]
        return v

    def _lane_operand(self, name, out):
        if name not in self.lane_vars:  # a uniform or recomputed value: spread it over lanes
            self.splats.add(name)
            mode = "lane_nd" if self.nd else "lane"
            out.append(_lane_loop(self._remat_defs({name}, mode) + [_store(f"_nq_v_{name}", _name(name))]))
        return _name(f"_nq_v_{name}")

    def gen_xl(self, it, mask):
        op = it.op
        out = []
        operand = self._lane_operand(it.args[0].id, out)
        # the operand's lane array holds the variable's unified type (x may be int32
        # here and int64 later); the op works in the type the value had at this call
        want = self._dtype(it.target)
        same_type = op.kind in ("move", "scan", "reduce", "derivative") and not (
            op.combine == "add" and want == np.dtype("uint32") and self._dtype(it.args[0].id) == np.dtype(bool)
        )
        if same_type and self._dtype(it.args[0].id) != want:
            conv = self.fe.fresh("cv")
            self.converted[conv] = want
            out.append(_lane_loop([_store(f"_nq_v_{conv}", _sub(operand.id))]))
            operand = _name(f"_nq_v_{conv}")
        args = [_name(mask), _name(f"_nq_v_{it.target}"), operand]
        if len(it.args) > 1:
            a = it.args[1]
            if isinstance(a, ast.Constant):
                args.append(_const(a.value))
            elif a.id in self.fe.uniform:
                args.append(_name(a.id))  # the same in every lane: stays scalar
            else:
                args.append(self._lane_operand(a.id, out))
        call = [ast.Expr(_call(f"_nq_XL_{op.namespace}_{op.name}", *args))]
        if it.check and self.debug:
            call = _cudaapi.gen_sync_check(self, it, mask, args, out) + call
        if self.block_mode:
            # the operand loops above run over the whole block's lane arrays (their lane
            # index is the thread id); then one whole-wave op per wave of the block
            class View(ast.NodeTransformer):
                def visit_Name(self, n):
                    if n.id.startswith("_nq_v_") or n.id.startswith("_nq_m"):
                        return _call("_nq_wv", n, _name("_nq_w"))
                    return n

            body = [View().visit(st) for st in call]
            if not self.debug:
                # a wave with no active lane has nothing to exchange: its lanes keep
                # their values (the op stores only active lanes), so the op is skipped
                some = _call("_nq_any", _call("_nq_wv", _name(mask), _name("_nq_w")))
                body = [ast.If(test=some, body=body, orelse=[])]
            out.append(
                ast.For(
                    target=_name("_nq_w", ast.Store),
                    iter=_call("_nq_range", ast.BinOp(_name("_nq_G"), ast.FloorDiv(), _const(W))),
                    body=body,
                    orelse=[],
                )
            )
            return _located(out, it.node.lineno)
        out.extend(call)
        return _located(out, it.node.lineno)

    def _undefined_is_zero(self):
        """Statements, run as each wave (block) of threads starts, that set every
        variable a thread may read before assigning it (:func:`_defined_before_reads`
        on the kernel's statements) to what Numba reads there: numba.cuda's lowering,
        as Numba's, reads an unassigned variable as 0 (its ``undef`` is a null
        constant), or as its literal type's value (:func:`_unassigned_leaves`), where
        a lane array or a block-function local would hold another thread's value.
        Variables of other types than scalars and tuples of them keep Numba's own
        handling."""
        out = []
        kept = set(self.remat) | set(self.fused) | set(self.region_params) | set(self.fe.env.params)
        for n in sorted(self.locals - kept):
            if _defined_before_reads(self.fe.body, n, False)[0]:
                continue
            if n in self.lane_vars:
                parts = self._tuple_parts(n)
                arrays = (
                    [(f"_nq_v_{n}", self.converted.get(n) or self._dtype(n))]
                    if parts is None
                    else [(f"_nq_v_{n}__{k}", dt) for k, dt in enumerate(parts)]
                )
                values = _unassigned_leaves(self.literal.get(n, self.typemap.get(n)))
                if values is None or len(values) != len(arrays):
                    values = [0] * len(arrays)
                out.append(
                    _lane_loop(
                        [_store(a, _call(_SCALAR_NAMES[np.dtype(dt)], _const(v))) for (a, dt), v in zip(arrays, values)]
                    )
                )
                continue
            zero = _zero_expr(self.literal.get(n, self.typemap[n])) if n in self.typemap else None
            if zero is not None:
                out.append(_assign(_name(n, ast.Store), zero))
        return out

    def build(self, name):
        fe = self.fe
        line = fe.fn.lineno
        wave_body = self.gen_items(fe.items, [("_nq_m_entry", "func")])
        # threadIdx in lane arrays only where an op takes the whole array, or the block's
        # shape is not a constant (a run-time division in each lane)
        if isinstance(self.nd, tuple):
            tids = _recompute_tids(wave_body)
        else:
            tids = {"_nq_tx", "_nq_ty", "_nq_tz"} if self.nd else set()
        # masks: the entry mask is its own frame
        self.masks.insert(0, "_nq_m_entry")
        params = [
            (f"_nq_p_{p}" if p in self.reassigned_params or p in self.rebound_params or p in self.region_params else p)
            for p in fe.env.params
        ]
        if any(a[0] == "dynshared" for a in fe.allocs.values()):
            params.append("_nq_dynsmem")  # the launch's dynamic shared memory, bytes
        if self.private:
            params.append("_nq_pon")  # 0: the launch refused private copies
        pro = []
        if isinstance(self.nd, tuple):
            # compiled for this block shape (cpu/dispatch.py): blockDim as constants
            for a, v in zip("xyz", self.nd):
                pro.append(_assign(_name(f"_nq_bd{a}", ast.Store), _call("_nq_i64", _const(int(v)))))
        alloc = "_nq_lanes_block" if self.block_mode else "_nq_lanes"
        for n in sorted(self.lane_vars | self.splats | set(self.converted)):
            parts = None if n in self.converted else self._tuple_parts(n)
            if parts is not None:
                pro += [
                    _assign(_name(f"_nq_v_{n}__{k}", ast.Store), _call(alloc, _name(_SCALAR_NAMES[dt])))
                    for k, dt in enumerate(parts)
                ]
                continue
            dt = self.converted.get(n) or self._dtype(n)
            pro.append(_assign(_name(f"_nq_v_{n}", ast.Store), _call(alloc, _name(_SCALAR_NAMES[dt]))))
        for m in self.masks:
            pro.append(_assign(_name(m, ast.Store), _call(alloc, _name(_SCALAR_NAMES[np.dtype(bool)]))))
        for a in "xyz":
            if f"_nq_t{a}" in tids:
                pro.append(
                    _assign(_name(f"_nq_t{a}", ast.Store), _call(alloc, _name(_SCALAR_NAMES[np.dtype("int32")])))
                )
        pro.append(
            _assign(
                _name("_nq_nt", ast.Store),
                ast.BinOp(ast.BinOp(_name("_nq_bdx"), ast.Mult(), _name("_nq_bdy")), ast.Mult(), _name("_nq_bdz")),
            )
        )
        if self.block_mode:
            # kernels with barriers run each block as one group of lanes (all its waves)
            # (an int32, so lane loops over it have an int32 induction variable: see _tid)
            pro.append(
                _assign(
                    _name("_nq_G", ast.Store),
                    _call(
                        "_nq_i32",
                        ast.BinOp(
                            ast.BinOp(ast.BinOp(_name("_nq_nt"), ast.Add(), _const(W - 1)), ast.FloorDiv(), _const(W)),
                            ast.Mult(),
                            _const(W),
                        ),
                    ),
                )
            )
        pro += _alloc_stmts(fe, per_lane=True)
        # a zeroed private copy of each array only atomic adds touch (or an empty one
        # where it does not pay), added into the array after the last block
        # (cpu/private_atomics.py)
        work = ast.BinOp(
            ast.BinOp(_name("_nq_pon"), ast.Mult(), ast.BinOp(_name("_nq_b1"), ast.Sub(), _name("_nq_b0"))),
            ast.Mult(),
            _name("_nq_nt"),
        )
        pro += [
            _assign(_name(f"_nq_pv_{p}", ast.Store), _call("_nq_palloc", _name(p), copy.deepcopy(work)))
            for p in self.private
        ]
        merge = [ast.Expr(_call("_nq_pmerge", _name(p), _name(f"_nq_pv_{p}"))) for p in self.private]
        # per wave: the entry mask, thread ids, reassigned parameters
        wave_pro = [
            _assign(
                _name("_nq_t0", ast.Store),
                _const(0) if self.block_mode else ast.BinOp(_name("_nq_w"), ast.Mult(), _const(W)),
            ),
            _lane_loop(
                [
                    _store(
                        "_nq_m_entry",
                        ast.Compare(ast.BinOp(_name("_nq_t0"), ast.Add(), _name(L)), [ast.Lt()], [_name("_nq_nt")]),
                    )
                ]
            ),
        ]
        if tids:
            wave_pro.append(
                _lane_loop([_store(n, _tid_of_lane(n)) for n in ("_nq_tx", "_nq_ty", "_nq_tz") if n in tids])
            )
        wave_pro += self._undefined_is_zero()
        for p in self.reassigned_params:
            wave_pro.append(_lane_loop(self._store_var(p, f"_nq_p_{p}")))
        for p in self.rebound_params:
            wave_pro.append(_assign(_name(p, ast.Store), _name(f"_nq_p_{p}")))
        if self.block_mode:
            wave_loop = ast.If(test=_const(True), body=wave_pro + (wave_body or [ast.Pass()]), orelse=[])
        else:
            nwaves = ast.BinOp(ast.BinOp(_name("_nq_nt"), ast.Add(), _const(W - 1)), ast.FloorDiv(), _const(W))
            wave_loop = ast.For(
                target=_name("_nq_w", ast.Store),
                iter=_call("_nq_range", nwaves),
                body=wave_pro + (wave_body or [ast.Pass()]),
                orelse=[],
            )
        # the blocks b0..b1 of the grid, in order (x fastest)
        block_ids = ast.parse(
            "_nq_bix = _nq_b % _nq_gdx\n"
            "_nq_biy = (_nq_b // _nq_gdx) % _nq_gdy\n"
            "_nq_biz = _nq_b // (_nq_gdx * _nq_gdy)\n"
        ).body
        for st in block_ids:
            for n in ast.walk(st):
                if "lineno" in n._attributes:
                    n.lineno = n.end_lineno = line
        block_loop = ast.For(
            target=_name("_nq_b", ast.Store),
            iter=_call("_nq_range", _name("_nq_b0"), _name("_nq_b1")),
            body=block_ids + [wave_loop],
            orelse=[],
        )
        fn = _fn_def(name, params + list(BLOCK_PARAMS), pro + [block_loop] + merge, line)
        _located([fn], line)
        _StopPolls().visit(fn)
        return fn


class _StopPolls(ast.NodeVisitor):
    """``if _nq_stopped(_nq_stop): return`` first in every ``while`` loop of a block
    function: a Ctrl-C stops a loop that never ends (numquad/cpu/interrupt.py)."""

    def visit_While(self, node):
        self.generic_visit(node)
        poll = ast.If(test=_call("_nq_stopped", _name("_nq_stop")), body=[ast.Return(value=None)], orelse=[])
        for n in ast.walk(poll):  # at the loop's line
            if "lineno" in n._attributes:
                ast.copy_location(n, node)
        node.body.insert(0, poll)

    def visit_Lambda(self, node):  # (its own scope: no stop flag)
        return None


class _CheckedLoads(ast.NodeTransformer):
    """Every load ``a[idx]`` of an array of the kernel (cpu/bounds.py).

    Outside lane loops (and in every loop of a ``debug=True`` build, *immediate*:
    its message names the index) the index passes through ``_nq_lix``, which
    raises at once.
    Inside one the load becomes ``_nq_lck(a, idx, _nq_lb, slot, shape)`` (*shape*: a
    shared or local array's constant shape, else None): 0 where the index is outside
    the array, the failure noted in the slots ``slot + axis`` of the block
    function's bounds state ``_nq_lb``; after the loop one ``_nq_lbc`` per slot
    raises it, with the array's shape where the loop does not assign it. *arrays*
    tells which names are arrays; *allocs* are the frontend's (constant shapes:
    :func:`_shape_arg`)."""

    _LANE_TARGETS = (L, "_nq_ly")

    def __init__(self, arrays, allocs, devices=None, immediate=False, ns=None, local_names=()):
        self.immediate = immediate
        self.ns = ns or {}  # the block function's globals
        self.local_names = set(local_names)  # its variables
        self.arrays = arrays
        self.allocs = allocs
        self.devices = devices or {}  # checked device functions' names -> their own (cpu/devicefn.py)
        self.slots = 0
        self.pending = None  # [(slot, axis, line, array)] of the lane loop being visited
        self.uniform = None  # the same, of a statement outside lane loops (array None:
        # a device function's call)
        self.linear = set()  # names that hold the lane plus a uniform value (_lane_linear)
        self.fast = None  # ids of the accesses a lane loop's fast version leaves unchecked
        # arrays whose fast accesses carry no-alias scopes (cpu/fastaccess.py): name ->
        # (scope, ndim); the fast version being visited's (name, stored) of them; and
        # every such array stored by one
        self.scoped = {}
        self.scope_used = None
        self.scoped_stored = set()
        self.scoped_used = set()

    def visit(self, node):
        if self.pending is not None or not isinstance(node, ast.stmt) or self._lane_for(node):
            return super().visit(node)
        outer, self.uniform = self.uniform, []
        res = super().visit(node)
        checks, self.uniform = self._checks(self.uniform), outer
        if checks and isinstance(res, ast.While):  # a call in its test: checked each time it ran
            res.body = _located(copy.deepcopy(checks), node.lineno) + res.body
        return ([res] if isinstance(res, ast.AST) else res) + _located(checks, node.lineno) if checks else res

    def _lane_for(self, node):
        return (
            not self.immediate
            and isinstance(node, ast.For)
            and isinstance(node.target, ast.Name)
            and node.target.id in self._LANE_TARGETS
        )

    def visit_Call(self, node):
        """A checked device function's call passes the bounds state from a slot of
        its own, checked after the lane loop (or the statement) by ``_nq_lcc``."""
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.devices and not self.immediate:
            # (a debug build's device function raises at its own access, line and index)
            slot, self.slots = self.slots, self.slots + 1
            node.keywords.append(ast.keyword(arg="_nq_lb", value=_call("_nq_lsa", _name("_nq_lb"), _const(slot))))
            # the check names the call by a site: (None, its line, the function's name)
            site = _bounds.device_site(None, getattr(node, "lineno", 0), self.devices[node.func.id])
            (self.uniform if self.pending is None else self.pending).append((slot, site, 0, None))
        return node

    def _checks(self, pending, assigned=()):
        out = []
        for s, k, line, arr, *store in pending:
            if arr is None:
                out.append(ast.Expr(_call("_nq_lcc", _name("_nq_lb"), _const(s), _const(k))))  # k: the site
            else:
                # (a row of chained indexing, ``a[y][x]``: no size after the loop)
                # (``a.flat[j]``: a's size, from shape_of)
                root = arr[:-5] if arr.endswith(".flat") else arr
                shape = (
                    _const(None)
                    if root in assigned or not root.isidentifier()
                    else _call("_nq_shp", _name(arr) if root == arr else ast.Attribute(_name(root), "flat", ast.Load()))
                )
                out.append(
                    ast.Expr(
                        _call(
                            "_nq_lsc" if store else "_nq_lbc",
                            _name("_nq_lb"),
                            _const(s),
                            _const(k),
                            _const(line),
                            shape,
                        )
                    )
                )
        return out

    def _lane_store(self, node):
        """``a[_nq_six(shape, idx, line)] = v`` (or ``+=``) in a lane loop: the store is
        made only where *idx* is inside the array, the failure noted in the bounds
        state and raised after the loop (``_nq_lsc``), as a load's is; an exit in the
        loop would keep LLVM from vectorising it."""
        t = node.targets[0] if isinstance(node, ast.Assign) else node.target
        if (
            self.pending is None
            or isinstance(node, ast.Assign)
            and len(node.targets) != 1
            or not (
                isinstance(t, ast.Subscript)
                and isinstance(t.slice, ast.Call)
                and isinstance(t.slice.func, ast.Name)
                and t.slice.func.id == "_nq_six"
            )
        ):
            return None
        shape, idx, line = t.slice.args
        if self.fast is not None and id(t) in self.fast:  # (its loop's test holds: inside)
            n = self.stores = getattr(self, "stores", 0) + 1
            k = self._scope_of(t.value, idx)
            out = _devicefn.guarded_store(node, idx, n, None)
            if k is not None:  # (the store itself, with its array's scope)
                self.scope_used.add((t.value.id, True))
                si = _name(f"_nq_si{n}")
                if isinstance(node, ast.Assign):
                    v = _name(f"_nq_sv{n}")
                else:  # ``a[i] += v``: the element, then v (Python's order), then the store
                    v = ast.BinOp(_call(f"_nq_fl{k}", _name(t.value.id), copy.deepcopy(si)), node.op, node.value)
                out[-1] = ast.Expr(_call(f"_nq_fs{k}", t.value, si, v))
            return _located(out, node.lineno)
        if not self._lane_linear(idx):
            return None
        n = self.stores = getattr(self, "stores", 0) + 1
        naxes = len(idx.elts) if isinstance(idx, ast.Tuple) else 1
        slot, self.slots = self.slots, self.slots + naxes
        self.pending += [(slot + k, k, line.value, ast.unparse(t.value), "store") for k in range(naxes)]
        return _located(
            _devicefn.guarded_store(node, idx, n, lambda i: _call("_nq_sok", shape, i, _name("_nq_lb"), _const(slot))),
            node.lineno,
        )

    def _lane_linear(self, e):
        """Whether the index *e* is the lane plus a value the same in every lane (``i``
        of ``i = xpu.grid(1)``, ``i + 1``), as far as the lane loop's single
        assignments show: a store there is contiguous, a masked vector store. Other
        stores keep their raise: LLVM would scalarise a masked scatter inside the
        vector loop (the 2-D derivatives: 9.8 -> 13.4 ms, the compaction 14.2 -> 16.9)."""
        if isinstance(e, ast.Name):
            return e.id == L or e.id in self.linear
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in _CASTS and len(e.args) == 1:
            return self._lane_linear(e.args[0])
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)):
            lanes = [
                any(isinstance(n, ast.Name) and (n.id == L or n.id in self.linear) for n in ast.walk(x))
                for x in (e.left, e.right)
            ]
            if isinstance(e.op, ast.Sub):
                return lanes == [True, False] and self._lane_linear(e.left)
            return lanes.count(True) == 1 and self._lane_linear(e.left if lanes[0] else e.right)
        return False

    def visit_Assign(self, node):
        self.generic_visit(node)
        return self._lane_store(node) or node

    visit_AugAssign = visit_Assign

    def _is_load(self, node):
        root = _view_root(node.value)  # ``a[i]``, or ``a[y][x]`` (a row's element)
        if (
            not isinstance(node.ctx, ast.Load)
            or isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            return False
        if root is not None and root.id in self.arrays:
            return True
        # a view made in the statement (``a.T[0, i]``, ``a.ravel()[j]``), an array in a
        # tuple (``t[1][i]``) or a record's field (``r[i]['v'][k]``): lane_load checks it
        # where it is an array, and reads it as it is where not (a tuple, a record); not
        # a constant index (a tuple's element: Numba needs the literal), a slice (a
        # tuple's slice needs it too; an array's slice is a view, in bounds) nor a.shape[k]
        return (
            not isinstance(node.value, ast.Name)
            and not isinstance(node.slice, (ast.Constant, ast.Slice))
            and not (isinstance(node.value, ast.Attribute) and node.value.attr in ("shape", "strides"))
            and not any(isinstance(n, ast.Name) and n.id.startswith("_nq_") for n in ast.walk(node.value))
            and _devicefn.checkable_view(node.value)
        )

    def visit_Subscript(self, node):
        is_load = self._is_load(node)  # (before a chain's inner load is rewritten)
        self.generic_visit(node)
        if not is_load or isinstance(node.slice, ast.Tuple) and not node.slice.elts:
            return node  # (a 0-d array's a[()]: no index to check)
        line = getattr(node, "lineno", 0)
        named = isinstance(node.value, ast.Name)
        if self.pending is None:
            view = _name(node.value.id) if named else copy.deepcopy(node.value)
            node.slice = ast.copy_location(
                _call("_nq_lix", _call("_nq_shp", view), node.slice, _const(line)), node.slice
            )
            return node
        if self.fast is not None and id(node) in self.fast:  # (its loop's test holds: inside the array)
            k = self._scope_of(node.value, node.slice)
            if k is None:
                return node
            self.scope_used.add((node.value.id, False))
            return ast.copy_location(_call(f"_nq_fl{k}", node.value, node.slice), node)
        naxes = len(node.slice.elts) if isinstance(node.slice, ast.Tuple) else 1
        slot, self.slots = self.slots, self.slots + naxes
        self.pending += [(slot + k, k, line, ast.unparse(node.value)) for k in range(naxes)]
        shape = (_shape_arg(self.allocs, node.value.id) if named else None) or _const(None)
        return ast.copy_location(_call("_nq_lck", node.value, node.slice, _name("_nq_lb"), _const(slot), shape), node)

    def _scope_of(self, arr, idx):
        """The no-alias scope of a fast access ``arr[idx]`` (cpu/fastaccess.py): where
        *arr* is an array the block function never rebinds and *idx* one integer per
        axis; else None."""
        if not isinstance(arr, ast.Name) or arr.id not in self.scoped:
            return None
        k, ndim = self.scoped[arr.id]
        naxes = len(idx.elts) if isinstance(idx, ast.Tuple) else 1
        return k if naxes == ndim and not any(isinstance(n, ast.Slice) for n in ast.walk(idx)) else None

    def _fast_loop(self, loop, accesses):
        """The lane loop *loop* visited as a fast version leaving *accesses* (ids)
        unchecked, and whether its accesses carry no-alias scopes (then it may run
        only where ``_nq_nal``: no two such arrays overlap)."""
        self.fast, self.scope_used = accesses, set()
        out = self._lane_loop(loop)
        used, self.fast, self.scope_used = self.scope_used, None, None
        self.scoped_used |= {n for n, _ in used}
        self.scoped_stored |= {n for n, st in used if st}
        return out, bool(used)

    def visit_For(self, node):
        if self.pending is not None or not self._lane_for(node):
            return self.generic_visit(node)
        plan = _versioning.plan(node, self.arrays, self._is_load, self._int_cast)
        if plan is None:
            return self._lane_loop(node)
        # two versions: contiguous accesses unchecked where a test before the loop
        # shows them inside (cpu/versioning.py), else every access checked
        fast = copy.deepcopy(node)
        fast, scoped = self._fast_loop(
            fast, {id(b) for a, b in zip(ast.walk(node), ast.walk(fast)) if id(a) in plan[1]}
        )
        test = ast.BoolOp(ast.And(), [plan[0], _name("_nq_nal")]) if scoped else plan[0]
        return [ast.copy_location(ast.If(test=test, body=fast, orelse=self._lane_loop(node)), node)]

    def _int_cast(self, f):
        """``_nq_T_<type>`` where the called expression *f* is a NumPy integer type by
        the kernel's globals (``np.int8``, ``numpy.uint64``, ``int32`` imported from
        NumPy) and names no local variable; else None (cpu/versioning.py)."""
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            if f.value.id in self.local_names or self.ns.get(f.value.id) is not np:
                return None
            obj = getattr(np, f.attr, None)
        elif isinstance(f, ast.Name) and f.id not in self.local_names:
            obj = self.ns.get(f.id)
        else:
            return None
        if not (isinstance(obj, type) and issubclass(obj, np.integer)):
            return None
        return _SCALAR_NAMES.get(np.dtype(obj))

    def visit_If(self, node):
        if self.fast is not None and id(node) in self.fast:  # a guard that holds: its body
            return self._visit_all(node.body)
        if self.pending is None:
            res = self._versioned_region(node)
            if res is not None:
                return res
        return self.generic_visit(node)

    def _versioned_region(self, node):
        """``if _nq_all(mask): <lane loop> else: <masked loop>``, the two paths of a
        region, where the lane loop has a fast version (cpu/versioning.py): ``if
        _nq_all(mask) and <its test>: <the fast loop> else: <the masked loop>``. The
        masked loop gives the same results when every lane is active, so no checked
        copy of the lane loop is kept: the region keeps its two loops (a third made
        a fuzzer's kernels 35-45 % slower to compile). None for any other ``if``."""
        t = node.test
        if not (
            isinstance(t, ast.Call)
            and isinstance(t.func, ast.Name)
            and t.func.id in ("_nq_all", "_nq_allb")
            and len(node.body) == 1
            and node.orelse
        ):
            return None
        loop, starts, outer = node.body[0], {}, None
        if (  # a wave's rows of threads (_BlockGen._wave_rows_loop): ``if True: ly0 = ..; lx0 = ..; <rows>``
            isinstance(loop, ast.If)
            and isinstance(loop.test, ast.Constant)
            and loop.test.value is True
            and not loop.orelse
            and len(loop.body) == 3
            and all(
                isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)
                for a in loop.body[:2]
            )
        ):
            outer, loop = loop, loop.body[2]
            starts = {a.targets[0].id: a.value for a in outer.body[:2]}
        if not self._lane_for(loop):
            return None
        if loop.target.id == L:
            plan = _versioning.plan(loop, self.arrays, self._is_load, self._int_cast)
        else:
            plan = _versioning.plan_rows(loop, starts, self.arrays, self._is_load, self._int_cast)
        if plan is None:
            return None
        fast, scoped = self._fast_loop(loop, set(plan[1]))
        if outer is not None:
            outer.body = outer.body[:2] + fast
            fast = [outer]
        test = ast.BoolOp(ast.And(), [t, plan[0]] + ([_name("_nq_nal")] if scoped else []))
        node.test, node.body, node.orelse = test, fast, self._visit_all(node.orelse)
        return node

    def _visit_all(self, stmts):
        """The statements *stmts*, each visited (a visit may give a list or None)."""
        out = []
        for st in stmts:
            r = self.visit(st)
            out += r if isinstance(r, list) else [] if r is None else [r]
        return out

    def _lane_loop(self, node):
        """The lane loop *node* with its accesses checked, then the checks of its flags."""
        self.pending = []
        # names the loop assigns once, from the lane plus a uniform value (_lane_linear)
        once = {}
        for st in ast.walk(node):
            for t in (
                st.targets
                if isinstance(st, ast.Assign)
                else [st.target]
                if isinstance(st, (ast.AugAssign, ast.For))
                else []
            ):
                for nm in ast.walk(t):
                    if isinstance(nm, ast.Name) and isinstance(nm.ctx, ast.Store):
                        once[nm.id] = st if nm.id not in once else None
        self.linear = set()
        for nm, st in once.items():  # (in order: an assignment reads earlier ones)
            if (
                isinstance(st, ast.Assign)
                and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name)
                and self._lane_linear(st.value)
            ):
                self.linear.add(nm)
        self.generic_visit(node)
        # the size in the message: the array's after the loop, unless the loop assigns it
        assigned = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        checks = self._checks(self.pending, assigned)
        self.pending = None
        return [node] + _located(checks, node.lineno)

    def visit_While(self, node):
        """A ``while`` in a lane loop whose test or body loads (or calls a device
        function) checks those flags at the top of each iteration: a failed load
        gives 0, and a test such as ``a[j] != 0`` would then loop for ever. (A lane
        loop holding a ``while`` is scalar code anyway.)"""
        if self.pending is None:
            return self.generic_visit(node)  # (uniform code: visit() checks it)
        start = len(self.pending)
        self.generic_visit(node)
        if len(self.pending) > start:
            assigned = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            node.body = _located(self._checks(self.pending[start:], assigned), node.lineno) + node.body
        return node

    def visit_Lambda(self, node):  # (their own scopes: left alone)
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda


def _view_root(e):
    """The Name an array expression indexes from: ``a`` of ``a``, ``a[y]``, ``a[y][1:]``
    (chained indexing, ``out[y][x] = v``), else None."""
    while isinstance(e, ast.Subscript):
        if isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, str):
            return None  # a record's field
        e = e.value
    return e if isinstance(e, ast.Name) else None


#: Generated names that hold the user's arrays (their loads are checked as the user's
#: own): an inlined function's names (``_nq_f3_l``, cpu/frontend.py ``_inline_call``),
#: a device function's shared arrays (``_nq_once0_sm``), an array allocated in a
#: statement that takes a view of it (``_nq_arr_4``), a literal_unroll element
#: (``_nq_lu_x_2``). The other ``_nq_`` arrays are the generated code's own (lane
#: vectors, per-lane storage), indexed in range by construction. (A loaded local
#: array of an inlined device function read past its end, or faulted, unchecked.)
_USER_ARRAY = re.compile(r"_nq_(?:f\d+_|once\d+_|arr_\d+$|lu_)")


def _check_loads(fn, typemap, ns, allocs, immediate=False):
    """Rewrites the loads of *fn* (the block function's AST) as :class:`_CheckedLoads`
    says, with the bounds state made at the top of the function."""
    arrays = {n for n, t in typemap.items() if isinstance(t, types.Array)}
    arrays |= {n for n, v in ns.items() if isinstance(v, np.ndarray)}
    devices = {n: v.py_func.__name__ for n, v in ns.items() if _devicefn.is_checked(v)}
    tr = _CheckedLoads(
        {n for n in arrays if not n.startswith("_nq_") or _USER_ARRAY.match(n)}, allocs, devices, immediate, ns, typemap
    )
    # the arrays of numbers whose fast accesses carry no-alias scopes (cpu/fastaccess.py):
    # the parameters the block function never rebinds, and the static shared arrays it
    # binds only where it allocates them (memory of their own: no test needed)
    bound = collections.Counter(
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    )
    params = [a.arg for a in fn.args.args if not bound[a.arg]]
    shared = [n for n, a in allocs.items() if a[0] == "shared" and bound[n] == 1]
    scoped = [
        n
        for n in params + shared
        if isinstance(typemap.get(n), types.Array) and isinstance(typemap[n].dtype, (types.Integer, types.Float))
    ]
    tr.scoped = {n: (k, typemap[n].ndim) for k, n in enumerate(scoped)}
    tr.visit(fn)
    if tr.scoped_used:
        loads, stores = _fastaccess.accessors(len(scoped))
        for k in range(len(scoped)):
            ns[f"_nq_fl{k}"], ns[f"_nq_fs{k}"] = loads[k], stores[k]
        ns["_nq_disj"] = _fastaccess.disjoint
        pairs = [
            _call("_nq_disj", _name(a), _name(b))
            for a in sorted(tr.scoped_stored)
            for b in sorted(tr.scoped_used)
            if b != a and (b not in tr.scoped_stored or a < b) and a in params and b in params
        ]
        nal = ast.BoolOp(ast.And(), pairs) if len(pairs) > 1 else pairs[0] if pairs else _const(True)
        fn.body.insert(0, _located([_assign(_name("_nq_nal", ast.Store), nal)], fn.lineno)[0])
    if tr.slots:
        fn.body.insert(
            0, _located([_assign(_name("_nq_lb", ast.Store), _call("_nq_lbs", _const(tr.slots)))], fn.lineno)[0]
        )


def _refuse_mixed_versions(fe, gen, mixed):
    """A variable kept in one lane array (or spread into one) across items, one of
    whose values has another type than the array's and is read: the read would
    compute in the array's type where Numba (and numba.cuda) computes in the
    value's own. Refused, naming the variable, the types and the line."""
    stored = gen.lane_vars | gen.splats
    for name in sorted(mixed):
        if name in stored and (not name.startswith("_nq_") or _inlined_local(fe, name)):
            _mixed_version_error(fe, name, mixed[name])


def _inlined_local(fe, name):
    """(user's name, function, file) of an inlined lane function's local *name*
    (``_nq_f<k>_<name>``: frontend._inline_call), else None."""
    m = re.match(r"(_nq_f\d+_)(.+)$", name)
    hit = fe.inlined.get(m.group(1)) if m else None
    # (a local of a function that one inlines: ``_nq_f<k>_nq_f<j>_<name>``)
    return None if hit is None else (re.sub(r"^(nq_f\d+_)+", "", m.group(2)), hit[0], hit[1])


def _mixed_version_error(fe, name, found):
    """:func:`_refuse_mixed_versions`'s error for variable *name*, *found* its
    (version's type, line, unified type)."""
    own, line, unified = found
    from ..errors import NumquadTypeError

    an = "an" if str(own).startswith(("int", "array")) else "a"
    where, fn = fe.filename, fe.pyfunc.__name__
    inlined = _inlined_local(fe, name) if name.startswith("_nq_") else None
    if inlined is not None:
        name, fn, where = inlined
    err = NumquadTypeError(
        f"File \"{where}\", line {line}, in {fn}: '{name}' holds {an} {own} "
        f"value here and values of other types elsewhere, and lives across a cross-lane op, a "
        f"barrier or a lane-varying branch or loop: the CPU target keeps such a variable in one "
        f"type ({unified}), and would "
        f"read it on this line in that type where Numba reads {an} {own}; give the value of the other "
        f"type its own name"
    )
    err.mixed_version = True  # (cpu/dispatch.py compiles once more with the variable split)
    raise err


def generate_block(fe, typemap, nd, debug, cpu_fn_for, fast_path=True, mixed=None, zero_division=False, literal=None):
    """(block function, its Python source, the parameters given private copies) for
    the Frontend *fe*. With private copies the block function takes ``_nq_pon``
    after the user's parameters (and ``_nq_dynsmem``): cpu/private_atomics.py.
    *mixed*: typing.shadow_types's variables with a version of another type."""
    gen = _BlockGen(fe, typemap, nd, debug, fast_path=fast_path)
    gen.mixed = mixed or {}
    gen.zero_division = zero_division
    gen.literal = literal or {}
    fn_ast = gen.build(f"_nq_block_{fe.pyfunc.__name__}")
    _refuse_mixed_versions(fe, gen, mixed or {})
    ns = _namespace(fe)
    for q, xl in _intr.XL_INTRINSICS.items():
        op = _ops.OPS[q]
        ns[f"_nq_XL_{op.namespace}_{op.name}"] = xl
    from ..errors import NumquadRuntimeError

    ns["_nq_RuntimeError"] = NumquadRuntimeError
    ns["_nq_shcount"], ns["_nq_divisor"] = _devicefn.debug_checks()
    ns["_nq_GMAX"] = _intr.BLOCK_LANES if gen.block_mode else W
    _resolve_callees(gen.fn_names, ns, cpu_fn_for, set(_fe._names_in(fn_ast)))
    # debug builds too, every check raising at once: the message names the line and index
    _check_loads(fn_ast, typemap, ns, gen.const_shapes, immediate=debug)
    func, mod = _compile_fn(fe, fn_ast, ns)
    return func, ast.unparse(mod), gen.private
