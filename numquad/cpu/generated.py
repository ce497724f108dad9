"""What a generated function (the shadow or the block function) sees, and its compilation.

:func:`namespace` makes its globals: the user's globals and closure, and the
``_nq_*`` helpers the generated code calls (lane loads and stores, mask votes,
bounds checks, atomics, numba.cuda's kernel API on the CPU); :func:`alloc_stmts`
allocates the kernel's shared and local arrays under the names the namespace
binds; :func:`resolve_callees` binds the device functions it calls to their CPU
functions; :func:`compile_fn` compiles the function's AST with the user's file
name, so that Numba's errors point at the user's kernel.
"""

from __future__ import annotations

import ast
import weakref

import numpy as np

from .. import _control
from . import bounds as _bounds
from . import cudaapi as _cudaapi
from . import intrinsics as _intr
from . import interrupt as _interrupt
from . import private_atomics as _private
from .atomics import ATOMICS
from .astbuild import (
    W,
    SCALAR_NAMES as _SCALAR_NAMES,
    assign as _assign,
    call as _call,
    const as _const,
    located as _located,
    name as _name,
)

__all__ = ["namespace", "compile_fn", "resolve_callees", "alloc_stmts"]


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


def namespace(fe):
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


def compile_fn(fe, fn_ast, ns):
    _fill_empty_bodies(fn_ast)
    _control.name_forever_loops(fn_ast)
    ns[_control.FOREVER] = True
    mod = ast.Module(body=[fn_ast], type_ignores=[])
    ast.fix_missing_locations(mod)
    code = compile(mod, fe.filename, "exec")
    exec(code, ns)
    return ns[fn_ast.name], mod


def resolve_callees(fn_names, ns, cpu_fn_for, read=None):
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


def alloc_stmts(fe, per_lane):
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
