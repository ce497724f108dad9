"""The bounds checks of a block function's loads and stores (a rewrite of its AST).

:func:`check_loads` rewrites every load of a kernel's array in the block
function: outside lane loops the index is checked at once; inside one the load
gives 0 where the index is outside the array and notes the failure in the bounds
state, raised after the loop (numquad/cpu/bounds.py). A lane loop whose
contiguous accesses a test before it shows inside gets a fast version without
checks (numquad/cpu/versioning.py), whose accesses carry no-alias scopes
(numquad/cpu/fastaccess.py); a contiguous store in a lane loop is made only
where its index is inside (numquad/cpu/devicefn.py ``guarded_store``).
"""

from __future__ import annotations

import ast
import collections
import copy
import re

import numpy as np
from numba.core import types

from . import bounds as _bounds
from . import devicefn as _devicefn
from . import fastaccess as _fastaccess
from . import versioning as _versioning
from .astbuild import (
    L,
    CASTS as _CASTS,
    SCALAR_NAMES as _SCALAR_NAMES,
    assign as _assign,
    call as _call,
    const as _const,
    located as _located,
    name as _name,
    shape_arg as _shape_arg,
    view_root as _view_root,
)

__all__ = ["check_loads"]


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
    astbuild.shape_arg)."""

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
        if (  # a wave's rows of threads (codegen._BlockGen._wave_rows_loop): ``if True: ly0 = ..; lx0 = ..; <rows>``
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


#: Generated names that hold the user's arrays (their loads are checked as the user's
#: own): an inlined function's names (``_nq_f3_l``, cpu/inline.py ``_inline_call``),
#: a device function's shared arrays (``_nq_once0_sm``), an array allocated in a
#: statement that takes a view of it (``_nq_arr_4``), a literal_unroll element
#: (``_nq_lu_x_2``). The other ``_nq_`` arrays are the generated code's own (lane
#: vectors, per-lane storage), indexed in range by construction. (A loaded local
#: array of an inlined device function read past its end, or faulted, unchecked.)
_USER_ARRAY = re.compile(r"_nq_(?:f\d+_|once\d+_|arr_\d+$|lu_)")


def check_loads(fn, typemap, ns, allocs, immediate=False):
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
