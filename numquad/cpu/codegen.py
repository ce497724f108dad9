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

This module emits the block function (``_BlockGen``) and drives its making
(:func:`generate_block`); the phases it uses are modules of their own:
numquad/cpu/subst.py (builtins as lane code), numquad/cpu/storage.py (the analyses
that decide lane arrays, recomputation and dropped statements),
numquad/cpu/checkedloads.py (the bounds checks of loads and stores),
numquad/cpu/generated.py (the function's globals and compilation) and
numquad/cpu/astbuild.py (the AST builders). The typing shadow of the same wave
items is numquad/cpu/shadow.py.

Names in generated code. Every name numquad adds starts with ``_nq_``
(``names.RESERVED``, numquad/cpu/names.py; the front end refuses user names with that prefix), so
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
                       ``while`` loop and block: numquad/cpu/interrupt.py)
``_nq_G``, ``_nq_GMAX``     lanes of the group a lane loop runs over (32, or the
                       block in block mode) and their upper bound
``_nq_GB``,            in block mode, the block's lanes, and each lane array's
``_nq_B<array>``       block-wide array; in a span (``gen_span``) ``_nq_w`` is the
                       wave it runs and the array's name a view of its 32 lanes
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
                       helpers bound in numquad/cpu/generated.py ``namespace`` (lane loads and stores,
                       a store kept where a lane is inactive, lane arrays, mask
                       votes, mask copies and updates)
=====================  ============================================================
"""

from __future__ import annotations

import ast
import copy
import re

import numpy as np
from numba.core import types
from numba.np.numpy_support import as_dtype

from .. import _control
from .. import ops as _ops
from . import names as _names
from . import waveitems as _wi
from . import checkedloads as _checkedloads
from . import devicefn as _devicefn
from . import generated as _generated
from . import intrinsics as _intr
from . import cudaapi as _cudaapi
from . import private_atomics as _private
from . import storage as _storage
from ..errors import NumquadCompileError
from .subst import Subst
from .astbuild import (
    W,
    L,
    CASTS as _CASTS,
    SCALAR_NAMES as _SCALAR_NAMES,
    assign as _assign,
    call as _call,
    const as _const,
    fn_def as _fn_def,
    lane_loop as _lane_loop,
    located as _located,
    mask_andnot as _mask_andnot,
    mask_copy as _mask_copy,
    name as _name,
    store as _store,
    sub as _sub,
)

__all__ = ["generate_block", "BLOCK_PARAMS"]

#: Extra parameters of every block function, after the user's.
BLOCK_PARAMS = ("_nq_b0", "_nq_b1", "_nq_gdx", "_nq_gdy", "_nq_gdz", "_nq_bdx", "_nq_bdy", "_nq_bdz", "_nq_stop")


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
        # a kernel with barriers runs each run of items without a barrier (or a jump)
        # wave by wave, as a kernel without barriers does (gen_items): not where lanes
        # keep local arrays, whose rows are indexed by the block's lane
        self.spans = self.block_mode and all(a[0] in ("shared", "dynshared") for a in fe.allocs.values())
        self.in_span = False
        self.locals = (
            (
                fe.env.locals
                | {
                    n
                    for it in _storage.walk_items(fe.items)
                    for n in _storage.item_names(it)[0]
                    if n.startswith(_names.RESERVED)
                }
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
            if not isinstance(e.op, _storage.PURE_BINOPS) and not _storage.by_positive_constant(e):
                return False
            return self._lane_pure(e.left, ok_names) and self._lane_pure(e.right, ok_names)
        if isinstance(e, ast.UnaryOp):
            return self._lane_pure(e.operand, ok_names)
        if isinstance(e, ast.BoolOp):  # ``inside = y < h and x < w``
            return all(self._lane_pure(v, ok_names) for v in e.values)
        if isinstance(e, ast.Compare):
            return all(isinstance(o, _storage.PURE_CMPOPS) for o in e.ops) and all(
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
        for it in _storage.walk_items(self.fe.items):
            for n in _storage.item_names(it)[1]:
                stores[n] = stores.get(n, 0) + (1 if not isinstance(it, _wi.Region) else 0)
            if isinstance(it, _wi.Region):
                for st in it.stmts:
                    for n in _names.names_in(st, ast.Store):
                        stores[n] = stores.get(n, 0) + 1
        out = {
            name: ast.Subscript(value=_name(f"_nq_loc_{name}"), slice=_name(L), ctx=ast.Load())
            for name, a in self.fe.allocs.items()
            if a[0] == "local"
        }
        for it in self.fe.items:
            if not isinstance(it, _wi.Region):
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
        in_loops = _storage.stored_in_loops(self.fe.items)

        def keeps(m):
            return m in out or m not in self.locals or (self._stable(m) and m not in in_loops)

        for it in _storage.walk_items(self.fe.items):
            if not isinstance(it, _wi.Region):
                continue
            for body, k, st in list(_storage.assigns_in(it.stmts)):
                n = st.targets[0].id
                if n in out or n in self.fe.uniform or stores.get(n) != 1 or n in self.fe.env.params:
                    continue
                if not (_cudaapi.is_view(st.value) or self._is_row_view(n, st.value)) or not keeps(st.value.value.id):
                    continue
                snaps = []

                def kept(e, snaps=snaps, st=st):
                    if e is None or all(keeps(m) for m in _names.names_in(e)) and not self._reads_memory(e):
                        return e
                    tmp = f"{_names.RESERVED}vw_{len(self.view_snaps)}"
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
                self.view_deps |= set(_names.names_in(st.value))
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
                and _desugar.call_kind(self.fe.env, x, _control.MISSING) != "pure"
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
                if isinstance(a, _wi.Region) and isinstance(b, _wi.If) and len(a.stmts) == 1:
                    st = a.stmts[0]
                    if (
                        isinstance(st, ast.Assign)
                        and isinstance(st.targets[0], ast.Name)
                        and st.targets[0].id == b.cond
                    ):
                        out[b.cond] = b
            for it in items:
                if isinstance(it, (_wi.If, _wi.UniformIf)):
                    scan(it.body)
                    scan(it.orelse)
                elif isinstance(it, _wi.Loop):
                    scan(it.body)

        scan(self.fe.items)
        return out

    def _lane_vars(self):
        uses = {}
        forced = set()
        for it in _storage.walk_items(self.fe.items):
            names, _ = _storage.item_names(it)
            for n in names:
                if (
                    n in self.locals
                    and n not in self.fe.uniform
                    and not (n in self.fe.env.params and not self._assigned(n))
                ):
                    uses.setdefault(n, []).append(it)
                    if not isinstance(it, _wi.Region):
                        forced.add(n)
        lane = set()
        for n, its in uses.items():
            if n in forced or len(its) > 1 or n in self.fe.env.params:
                lane.add(n)
            elif not _storage.first_is_plain_store(its[0], n):
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
            its = [it for it in _storage.walk_items(self.fe.items) if p in _storage.item_names(it)[0]]
            if len(its) == 1 and isinstance(its[0], _wi.Region) and any(its[0] is it for it in self.fe.items):
                out[p] = its[0]
        return out

    def _assigned(self, name):
        for it in _storage.walk_items(self.fe.items):
            if name in _storage.item_names(it)[1]:
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
        if name.startswith(_names.RESERVED):
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
        for it in _storage.walk_items(self.fe.items):
            if isinstance(it, _wi.Region):
                for _, _, st in reversed(list(_storage.assigns_in(it.stmts))):
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
        leaves = _storage.tuple_leaves(ty)
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
        for k, (path, _) in enumerate(_storage.tuple_leaves(self.typemap.get(name))):
            part = _name(value)
            for j in path:
                part = ast.Subscript(part, _const(j), ast.Load())
            out.append(st(f"_nq_v_{name}__{k}", part))
        return out

    def _pure_expr(self, e):
        """Whether *e* (generated lane code) computes without a fault, a branch or an
        effect on any lane's values, active or not: constants, locals, the arithmetic
        and comparison operators of storage.PURE_BINOPS/PURE_CMPOPS, ``not``/``-``/``~``,
        lane-array loads and the pure helpers (casts; numpy scalar types and
        bool/int/float that are not the user's own names)."""
        if isinstance(e, ast.Constant):
            return isinstance(e.value, (int, float, bool))
        if isinstance(e, ast.Name):
            return True
        if isinstance(e, ast.BinOp):
            return isinstance(e.op, _storage.PURE_BINOPS) and self._pure_expr(e.left) and self._pure_expr(e.right)
        if isinstance(e, ast.UnaryOp):
            return self._pure_expr(e.operand)
        if isinstance(e, ast.Compare):
            return (
                len(e.ops) == 1
                and isinstance(e.ops[0], _storage.PURE_CMPOPS)
                and self._pure_expr(e.left)
                and self._pure_expr(e.comparators[0])
            )
        if isinstance(e, ast.Call):
            if e.keywords or not all(self._pure_expr(a) and not isinstance(a, ast.Starred) for a in e.args):
                return False
            f = e.func
            if isinstance(f, ast.Name) and (f.id in _storage.PURE_HELPERS or f.id == "_nq_ld"):
                return True
            if isinstance(f, ast.Name) and f.id.startswith(_names.RESERVED):
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
                    isinstance(st.target, ast.Name)
                    and isinstance(st.op, _storage.PURE_BINOPS)
                    and self._pure_expr(st.value)
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
            t = Subst(self.fe, mode, self.fn_names, self.block_mode, self.debug, self.private)
            t.zero_division = self.zero_division
            t.typemap = self.typemap
            t.const_shapes = self.const_shapes
            out.append(t.visit(copy.deepcopy(s)))
        return out

    def _span_item(self, it, nxt):
        """Can *it* run wave by wave in a kernel with barriers: no barrier, no jump
        (and the ``if`` fused with it, if any, neither)?"""
        for j in _storage.walk_items([it]):
            if isinstance(j, (_wi.Barrier, _wi.BarrierReduce, _wi.Jump)):
                return False
        if isinstance(it, _wi.Region) and isinstance(nxt, _wi.If) and self.fused.get(nxt.cond) is nxt:
            return self._span_item(nxt, None)
        return True

    def _carried(self, region, stores):
        """The names of *stores* (of *region*) that live in one Python local, not a lane
        array, and that the region reads before it assigns them (see gen_item)."""
        return [
            n
            for n in sorted(stores)
            if n in self.locals
            and n not in self.lane_vars
            and n not in self.region_params
            and n not in self.remat
            and n not in self.fused
            and not _storage.first_is_plain_store(region, n)
        ]

    def _span_safe(self, items):
        """Do *items* compute the same run wave by wave as over the whole block? Lane
        values do (each lane has its own), and so does a value the same in every lane
        that the stretch defines before it reads it. One the stretch may read as it
        was at the stretch's start and also assigns (``s //= 2``, ``while s > 0``,
        ``v = x * m`` then ``m, z = 5, 0``, a ``for m`` loop after a read of ``m``)
        would be read by the next wave as the last wave left it. Lane work is needed,
        or the span gains nothing."""
        skip = self.lane_vars | set(self.remat) | set(self.region_params)
        assigned = set()
        for j in _storage.walk_items(items):
            assigned |= _storage.item_names(j)[1]
        if self._live_in(items, set()) & (assigned - skip):
            return False
        return any(not isinstance(j, (_wi.Uniform, _wi.UniformIf)) for j in _storage.walk_items(items))

    def _block_wide_regions(self, items):
        """Are *items* plain regions only (no op, no branch a wave could skip) that
        read lane arrays made before them (``out[i] = s + wave_sum[w]`` after a
        barrier)? One block-wide lane loop runs those better than a loop over the
        waves rebinding each array's view (the block scan's last stretch: callgrind,
        docs/BENCHMARKS.md); a region reading none (``shr[tid] = data[i]``) runs
        better as a span (its lane loops' vector fast path)."""
        if not all(isinstance(it, (_wi.Region, _wi.Uniform)) for it in items):
            return False
        made = set()
        reads = set()
        for it in items:
            names, stores = _storage.item_names(it)
            reads |= names - made
            made |= stores
        return bool(reads & self.lane_vars)

    def _live_in(self, items, defined):
        """The names *items* may read before they (or the items before, *defined*)
        assign them, in program order; a definition inside a branch or loop counts
        only inside it, a loop's body is read as its first iteration sees it (a name
        assigned later in the body is read at the top of the next iteration: its
        read before the assignment counts)."""
        live, defined = set(), set(defined)
        for it in items:
            names, stores = _storage.item_names(it)
            if isinstance(it, _wi.Region):
                local = {n for n in stores if _storage.first_is_plain_store(it, n)}
                live |= names - local - defined
                defined |= stores
            elif isinstance(it, _wi.Uniform):
                st = it.stmt
                if isinstance(st, ast.Assign):
                    live |= set(_names.names_in(st.value)) - defined
                    targets = {n for t in st.targets for n in _names.names_in(t, ast.Load)}
                    live |= targets - defined  # (subscript and attribute targets read names)
                else:
                    live |= names - defined
                defined |= stores
            elif isinstance(it, _wi.XLCall):
                live |= names - stores - defined
                defined |= stores
            elif isinstance(it, (_wi.If, _wi.UniformIf)):
                live |= names - defined
                live |= self._live_in(it.body, defined) | self._live_in(it.orelse, defined)
            elif isinstance(it, _wi.Loop) and it.uniform:
                # ``for r in range(r)``: the range reads r before the loop assigns it
                target, rargs = it.uniform
                live |= {n for a in rargs for n in _names.names_in(a)} - defined
                live |= self._live_in(it.body, defined | {target})
            elif isinstance(it, _wi.Loop):
                live |= names - defined
                live |= self._live_in(it.body, defined)
            else:
                live |= names - defined
        return live

    def gen_span(self, items, frames):
        """*items* (no barrier, no jump) of a kernel with barriers, run wave by wave:
        the code of a kernel without barriers, in a loop over the block's waves, each
        lane array it names a view of its wave's 32 lanes of the block-wide one (bound
        where ``_nq_SPAN`` stands, :meth:`build`). Lanes of a wave run as in a region; the
        waves of the block one after another, which every barrier-free stretch of a
        block allows (docs/architecture.md, "What a lane sees of another lane's writes")."""
        self.block_mode, self.in_span = False, True
        try:
            body = self.gen_items(items, frames)
        finally:
            self.block_mode, self.in_span = True, False
        if not body:
            return []
        line = body[0].lineno
        # the names the span's code reads (its lane arrays among them: only those rebound)
        named = sorted(set(_names.names_in(ast.Module(body=body, type_ignores=[]))))
        enter = [ast.Expr(_call("_nq_SPAN", _const(1), *map(_const, named)))]
        leave = [ast.Expr(_call("_nq_SPAN", _const(0), *map(_const, named)))]
        loop = ast.For(
            target=_name("_nq_w", ast.Store),
            iter=_call("_nq_range", ast.BinOp(_name("_nq_GB"), ast.FloorDiv(), _const(W))),
            body=enter + body,
            orelse=[],
        )
        return _located([loop] + leave, line)

    def gen_items(self, items, frames):
        out = []
        skip = None
        for k, it in enumerate(items):
            if it is skip:
                continue
            nxt = items[k + 1] if k + 1 < len(items) else None
            if self.spans and self.block_mode and not self.in_span:
                j = k
                while j < len(items) and self._span_item(items[j], items[j + 1] if j + 1 < len(items) else None):
                    j += 1
                while j > k and not self._span_safe(items[k:j]):
                    j -= 1
                if j > k and self._block_wide_regions(items[k:j]):
                    j = k
                if j > k:  # items k..j-1 wave by wave, then the rest
                    return out + self.gen_span(items[k:j], frames) + self.gen_items(items[j:], frames)
            if isinstance(it, _wi.Region) and isinstance(nxt, _wi.If) and self.fused.get(nxt.cond) is nxt:
                out.extend(self.gen_if(nxt, frames, cond_region=it))
                skip = it = nxt
                k += 1
            else:
                out.extend(self.gen_item(it, frames))
            if k + 1 < len(items) and any(isinstance(j, _wi.Jump) for j in _storage.walk_items([it])):
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
        if isinstance(it, _wi.Region):
            names, stores = _storage.item_names(it)
            loads = sorted(n for n in names | self._remat_reads(names) if n in self.lane_vars)
            core = _storage.drop_repeats(self._remat_defs(names, lane_mode, stores) + self.subst(it.stmts, lane_mode))
            kept = [n for n in sorted(stores) if n in self.lane_vars]
            tail = [st for n in kept for st in self._store_var(n)]
            body = _storage.drop_dead_loads([self._load_var(n) for n in loads], core + tail) + core
            body = [
                _assign(_name(p, ast.Store), _name(f"_nq_p_{p}")) for p, r in self.region_params.items() if r is it
            ] + body
            # a name the region reads and then assigns that lives in one Python local,
            # not a lane array (a value the same in every lane: ``a, b = b, a`` of two
            # arrays, ``src, dst = dst, src`` after a barrier): every lane starts from
            # its value at the region's entry, as every thread does (each lane running
            # on from the one before swapped the arrays back in every other lane)
            carried = self._carried(it, stores)
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
        if isinstance(it, _wi.Uniform):
            return _located(self.subst([it.stmt], "uniform"), it.stmt.lineno)
        if isinstance(it, _wi.XLCall):
            return self.gen_xl(it, mask)
        if isinstance(it, _wi.If):
            return self.gen_if(it, frames)
        if isinstance(it, _wi.UniformIf):
            # the same in every lane: plain control flow around masked code
            test = self.subst([ast.Expr(it.test)], "uniform")[0].value
            node = ast.If(
                test=test,
                body=self.gen_items(it.body, frames) or [ast.Pass()],
                orelse=self.gen_items(it.orelse, frames),
            )
            return _located([node], it.node.lineno)
        if isinstance(it, _wi.Loop):
            line = it.node.lineno
            uniform = it.test is not None or it.uniform
            if uniform and not _storage.has_jump(it.body, ("break", "continue")):
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
        if isinstance(it, _wi.Jump):
            return self.gen_jump(it, frames)
        if isinstance(it, _wi.Barrier):
            # every lane loop runs over the whole block, so the block is already in step
            # here; debug=True checks that no live thread is missing (a divergent barrier)
            if not self.debug:
                return []
            return _located(self.barrier_check(mask, it.node.lineno, "xpu.syncthreads()"), it.node.lineno)
        if isinstance(it, _wi.BarrierReduce):
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
            names, stores = _storage.item_names(cond_region)
            core = _storage.drop_repeats(
                self._remat_defs(names, lane_mode, stores) + self.subst(cond_region.stmts, lane_mode)
            )
            pre = (
                _storage.drop_dead_loads(
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
            for m in _names.names_in(self.remat[n]):
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
            todo += [m for m in _names.names_in(self.remat[n]) if m in self.remat]
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
        variable a thread may read before assigning it (storage.defined_before_reads
        on the kernel's statements) to what Numba reads there: numba.cuda's lowering,
        as Numba's, reads an unassigned variable as 0 (its ``undef`` is a null
        constant), or as its literal type's value (storage.unassigned_leaves), where
        a lane array or a block-function local would hold another thread's value.
        Variables of other types than scalars and tuples of them keep Numba's own
        handling."""
        out = []
        kept = set(self.remat) | set(self.fused) | set(self.region_params) | set(self.fe.env.params)
        for n in sorted(self.locals - kept):
            if _storage.defined_before_reads(self.fe.body, n, False)[0]:
                continue
            if n in self.lane_vars:
                parts = self._tuple_parts(n)
                arrays = (
                    [(f"_nq_v_{n}", self.converted.get(n) or self._dtype(n))]
                    if parts is None
                    else [(f"_nq_v_{n}__{k}", dt) for k, dt in enumerate(parts)]
                )
                values = _storage.unassigned_leaves(self.literal.get(n, self.typemap.get(n)))
                if values is None or len(values) != len(arrays):
                    values = [0] * len(arrays)
                out.append(
                    _lane_loop(
                        [_store(a, _call(_SCALAR_NAMES[np.dtype(dt)], _const(v))) for (a, dt), v in zip(arrays, values)]
                    )
                )
                continue
            zero = _storage.zero_expr(self.literal.get(n, self.typemap[n])) if n in self.typemap else None
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
            tids = _storage.recompute_tids(wave_body)
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
        arrays = []  # (name, dtype) of every lane array
        for n in sorted(self.lane_vars | self.splats | set(self.converted)):
            parts = None if n in self.converted else self._tuple_parts(n)
            if parts is not None:
                arrays += [(f"_nq_v_{n}__{k}", dt) for k, dt in enumerate(parts)]
                continue
            arrays.append((f"_nq_v_{n}", self.converted.get(n) or self._dtype(n)))
        arrays += [(m, np.dtype(bool)) for m in self.masks]
        arrays += [(f"_nq_t{a}", np.dtype("int32")) for a in "xyz" if f"_nq_t{a}" in tids]
        pro += [_assign(_name(a, ast.Store), _call(alloc, _name(_SCALAR_NAMES[np.dtype(dt)]))) for a, dt in arrays]
        if any(_is_span_mark(st) for st in ast.walk(ast.Module(body=wave_body, type_ignores=[]))):
            mod = _SpanBinds({a for a, _ in arrays}).visit(ast.Module(body=wave_body, type_ignores=[]))
            wave_body[:] = mod.body
            pro += [_assign(_name(f"_nq_B{a}", ast.Store), _name(a)) for a, _ in arrays]
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
            pro.append(_assign(_name("_nq_GB", ast.Store), _name("_nq_G")))
        pro += _generated.alloc_stmts(fe, per_lane=True)
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
                _lane_loop([_store(n, _storage.tid_of_lane(n)) for n in ("_nq_tx", "_nq_ty", "_nq_tz") if n in tids])
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
        # each block first tests the launch's stop flag: a Ctrl-C (or a failed worker)
        # stops a launch of many blocks between two (numquad/cpu/launch.py)
        poll = _stop_poll()
        block_loop = ast.For(
            target=_name("_nq_b", ast.Store),
            iter=_call("_nq_range", _name("_nq_b0"), _name("_nq_b1")),
            body=[poll] + block_ids + [wave_loop],
            orelse=[],
        )
        fn = _fn_def(name, params + list(BLOCK_PARAMS), pro + [block_loop] + merge, line)
        _located([fn], line)
        _StopPolls().visit(fn)
        return fn


def _is_span_mark(st):
    """Is *st* the ``_nq_SPAN(1)`` (enter) or ``_nq_SPAN(0)`` (leave) mark of a span?"""
    return (
        isinstance(st, ast.Expr)
        and isinstance(st.value, ast.Call)
        and isinstance(st.value.func, ast.Name)
        and st.value.func.id == "_nq_SPAN"
    )


class _SpanBinds(ast.NodeTransformer):
    """The marks of :meth:`_BlockGen.gen_span` as statements: entering a wave
    ``_nq_w`` of the span, its first thread, 32 lanes, and each lane array (of
    *arrays*) that the span names a view of the wave's lanes of the block-wide one
    (``_nq_B<name>``); leaving the span, the block's again."""

    def __init__(self, arrays):
        self.arrays = arrays

    def generic_visit(self, node):
        super().generic_visit(node)
        for field, value in ast.iter_fields(node):
            if isinstance(value, list) and any(_is_span_mark(st) for st in value):
                out = []
                for st in value:
                    out.extend(self._bind(st) if _is_span_mark(st) else [st])
                setattr(node, field, out)
        return node

    def _bind(self, mark):
        enter, *named = (a.value for a in mark.value.args)
        used = [a for a in named if a in self.arrays]
        if enter:
            out = [
                _assign(_name("_nq_t0", ast.Store), ast.BinOp(_name("_nq_w"), ast.Mult(), _const(W))),
                _assign(_name("_nq_G", ast.Store), _call("_nq_i32", _const(W))),
            ]
            out += [_assign(_name(a, ast.Store), _call("_nq_wv", _name(f"_nq_B{a}"), _name("_nq_w"))) for a in used]
        else:
            out = [_assign(_name("_nq_t0", ast.Store), _const(0)), _assign(_name("_nq_G", ast.Store), _name("_nq_GB"))]
            out += [_assign(_name(a, ast.Store), _name(f"_nq_B{a}")) for a in used]
        for st in out:
            ast.copy_location(st, mark)
            for n in ast.walk(st):
                if "lineno" in n._attributes:
                    ast.copy_location(n, mark)
        return out


def _stop_poll():
    """``if _nq_stopped(_nq_stop): return``: the launch's stop flag is set
    (numquad/cpu/interrupt.py)."""
    return ast.If(test=_call("_nq_stopped", _name("_nq_stop")), body=[ast.Return(value=None)], orelse=[])


class _StopPolls(ast.NodeVisitor):
    """``if _nq_stopped(_nq_stop): return`` first in every ``while`` loop of a block
    function: a Ctrl-C stops a loop that never ends (numquad/cpu/interrupt.py). (The
    loop over blocks gets its own test where generate_block makes it.)"""

    def visit_While(self, node):
        self.generic_visit(node)
        poll = _stop_poll()
        for n in ast.walk(poll):  # at the loop's line
            if "lineno" in n._attributes:
                ast.copy_location(n, node)
        node.body.insert(0, poll)

    def visit_Lambda(self, node):  # (its own scope: no stop flag)
        return None


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
    (``_nq_f<k>_<name>``: numquad/cpu/inline.py ``_inline_call``), else None."""
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
    ns = _generated.namespace(fe)
    for q, xl in _intr.XL_INTRINSICS.items():
        op = _ops.OPS[q]
        ns[f"_nq_XL_{op.namespace}_{op.name}"] = xl
    from ..errors import NumquadRuntimeError

    ns["_nq_RuntimeError"] = NumquadRuntimeError
    ns["_nq_shcount"], ns["_nq_divisor"] = _devicefn.debug_checks()
    ns["_nq_GMAX"] = _intr.BLOCK_LANES if gen.block_mode else W
    _generated.resolve_callees(gen.fn_names, ns, cpu_fn_for, set(_names.names_in(fn_ast)))
    # debug builds too, every check raising at once: the message names the line and index
    _checkedloads.check_loads(fn_ast, typemap, ns, gen.const_shapes, immediate=debug)
    func, mod = _generated.compile_fn(fe, fn_ast, ns)
    return func, ast.unparse(mod), gen.private
