"""Resolution (the front end's first phase): what a name in a kernel's code is.
``builtin_name`` names an xpu builtin or its numba.cuda spelling ("grid",
"threadIdx.x", "atomic.add", ...); ``Env`` resolves a function's globals and
closure as numquad/_control.py does, with numba.cuda device functions read as
``@xpu.jit`` functions (cpu/cudaapi.py ``as_xpu``).
"""

from __future__ import annotations

import ast
import sys

from .._control import Env as _SharedEnv, named_builtin
from .. import xpu as _xpu
from . import cudaapi as _cudaapi

__all__ = ["builtin_name", "Env"]


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
    if not _CUDA_ALIASES and "numba.cuda" in sys.modules:
        _CUDA_ALIASES = _cuda_aliases()
    return named_builtin(obj, _CUDA_ALIASES or {})


class Env(_SharedEnv):
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
