"""Shared and local arrays in the front end: ``shared.array``/``local.array``
assignments checked as numba.cuda checks them (shape, dtype, alignment) and
recorded in the Frontend's ``allocs``.
"""

from __future__ import annotations

import ast

import numpy as np

from .. import _control
from .._control import MISSING as _MISSING
from . import cudaapi as _cudaapi
from .names import loc

__all__ = ["Allocations"]


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


class Allocations:
    """Shared and local arrays, called by ``Normaliser._normalise_stmt``. Reads the
    Frontend's ``env``, ``fn``, ``argtypes``, ``arg_dtypes``, ``dispatcher``,
    ``filename`` and its ``error``, ``typing_error``, ``builtin_of``; adds to
    ``allocs``."""

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
        raise ValueError(f'File "{self.filename}", line {loc(s, self.dispatcher.firstlineno)}: {msg}; got {v}')

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
