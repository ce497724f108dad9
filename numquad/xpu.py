"""``@xpu.jit`` and the kernel-side builtins (``xpu.grid``, ``xpu.threadIdx``, ...).

The builtins mirror numba.cuda's names, signatures and return types. They are
markers: the CPU wave compiler and the CUDA target each give them meaning.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import dis
import functools
import importlib
import inspect
import linecache
import sys
import textwrap
import threading
import types as _pytypes
import uuid as _uuid
import weakref

import numpy as np

from .errors import (
    NumquadCompileError,
    NumquadError,
    NumquadLaunchError,
    NumquadRuntimeError,
    NumquadTypeError,
    NumquadUnconfiguredKernelError,
)
from . import _lanecall
from ._launchkey import launch_key
from ._sites import call_site, defined_at, launch_prefix
from ._source import note_source
from . import _desugar
from . import _cudacompat  # noqa: F401  (numba.cuda device functions with a signature, no GPU)

__all__ = [
    "jit",
    "Dispatcher",
    "grid",
    "gridsize",
    "quad_grid",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "laneid",
    "warpsize",
    "syncthreads",
    "syncwarp",
    "shared",
    "local",
    "atomic",
]


# ---------------------------------------------------------------------------
# Kernel-side builtins
# ---------------------------------------------------------------------------


class _Builtin:
    """A kernel-side builtin such as ``xpu.grid``; meaningful only inside a kernel."""

    def __init__(self, name, doc):
        self.name = name
        self.__name__ = name.rsplit(".", 1)[-1]
        self.__qualname__ = f"xpu.{name}"
        self.__doc__ = doc

    def __call__(self, *args, **kwargs):
        from ._sites import at_user_site

        raise TypeError(
            at_user_site(
                f"xpu.{self.name} is a kernel builtin, called here from plain Python; it runs inside "
                f"an @xpu.jit function"
            )
        )

    def __repr__(self):
        return f"<xpu builtin {self.name}>"

    def __reduce__(self):
        return (_builtin_by_name, (self.name,))


class _Group(_pytypes.ModuleType):
    """A namespace of builtins (``xpu.threadIdx``, ``xpu.atomic``, ...)."""

    def __repr__(self):
        return f"<xpu namespace {self.__name__}>"


#: Every builtin by name ("grid", "threadIdx.x", "atomic.add", ...).
BUILTINS = {}


def _builtin(name, doc):
    b = _Builtin(name, doc)
    BUILTINS[name] = b
    return b


def _builtin_by_name(name):
    return BUILTINS[name]


def builtin_name(obj):
    """The name of the xpu builtin or builtin namespace *obj* ("grid", "threadIdx",
    "threadIdx.x", "atomic.add", ...), else None. For the targets and the
    interpreter, which recognise builtins by this, never by xpu's private classes."""
    if isinstance(obj, _Builtin):
        return obj.name
    if isinstance(obj, _Group):
        return obj.__name__.split(".", 1)[1]
    return None


def is_cuda_function(obj):
    """Is *obj* a numba.cuda ``@cuda.jit`` function (a kernel or a device function)?
    Called from a kernel, either is a device function, as numba.cuda compiles it; the
    targets and the interpreter recognise it by this (without importing numba.cuda)."""
    cls = type(obj)
    return cls.__name__ == "CUDADispatcher" and cls.__module__.startswith("numba.cuda")


def is_numba_function(obj):
    """Is *obj* a user's plain Numba function (``@numba.njit``, ``@numba.jit``), or one
    of ``numba.cuda.random``'s (``xoroshiro128p_uniform_float32``: plain Numba
    functions that numba.cuda compiles for the GPU as it compiles a user's)? Not one of
    Numba's or numba.cuda's other own functions."""
    cls = type(obj)
    if not (cls.__name__ == "CPUDispatcher" and cls.__module__.startswith("numba.")):
        return False
    mod = getattr(getattr(obj, "py_func", None), "__module__", None) or "numba"
    return not mod.startswith("numba") or mod == "numba.cuda.random"


def is_foreign_device_function(obj):
    """Is *obj* a function of numba.cuda or of plain Numba, which a kernel calls as a
    device function? numba.cuda compiles either from its Python source for the GPU;
    the CPU target and the interpreter do the same (an ``@xpu.jit`` Dispatcher of
    its ``py_func``), so its array accesses are checked as the kernel's are and the
    analyses see what it may write."""
    return is_cuda_function(obj) or is_numba_function(obj)


def overload_templates(obj):
    """(template, registered by numba.cuda?) for each Numba ``overload`` (or
    ``register_jitable``) registration of *obj*, a user's plain Python function, in
    Numba's typing registry and numba.cuda's; nothing for anything else (Numba's and
    numba.cuda's own functions: ``literal_unroll``, ``stcg``, ...)."""
    if not isinstance(obj, _pytypes.FunctionType) or (getattr(obj, "__module__", None) or "numba").split(".")[0] in (
        "numba",
        "numba_cuda",
    ):
        return
    for name in ("numba.core.typing.templates", "numba.cuda.typing.templates"):
        registry = getattr(sys.modules.get(name), "builtin_registry", None)
        for val, typ in list(getattr(registry, "globals", ())):
            if val is obj:
                for template in getattr(typ, "templates", ()):
                    if getattr(template, "_overload_func", None) is not None:
                        yield template, name.startswith("numba.cuda")


def _is_jitable_wrapper(template):
    return "register_jitable.<locals>" in getattr(template._overload_func, "__qualname__", "")


def numba_overload_targets(obj):
    """The targets (``"cuda"``, ``"cpu"``, ``"generic"``) of the
    ``numba.extending.overload`` (or ``numba.cuda.extending.overload``) registrations
    of *obj*, a user's plain Python function whose implementation is another
    function; an empty set for anything else (a ``register_jitable`` function is its
    own implementation; numquad's CPU copies of numba.cuda's are not counted). The
    host targets cannot run such a stub as Python."""
    return {
        "cuda" if by_cuda else (getattr(t, "metadata", None) or {}).get("target", "generic")
        for t, by_cuda in overload_templates(obj)
        if not getattr(t._overload_func, "_nq_copy", False) and not _is_jitable_wrapper(t)
    }


def is_jitable(obj):
    """Is *obj* a user's function registered with Numba's ``register_jitable``
    (``numba.extending`` or ``numba.cuda.extending``) and no other overload? The CPU
    target compiles it from its source as a device function."""
    templates = [t for t, _ in overload_templates(obj)]
    return bool(templates) and all(map(_is_jitable_wrapper, templates))


def cuda_signatures(obj):
    """[(argtypes, return type)] a numba.cuda dispatcher was declared with."""
    sigs = list(obj.__dict__.get("_numquad_signatures", ()))
    for args, cres in getattr(obj, "overloads", {}).items():
        ret = getattr(getattr(cres, "signature", None), "return_type", None)
        if (tuple(args), ret) not in sigs:
            sigs.append((tuple(args), ret))
    return sigs


def as_xpu(obj):
    """An ``@xpu.jit`` Dispatcher for a numba.cuda device function, a plain Numba
    function or a ``register_jitable`` function (the same object each time); anything
    else unchanged."""
    if not is_foreign_device_function(obj) and not is_jitable(obj):
        return obj
    d = obj.__dict__.get("_numquad_xpu")
    if d is None:
        # (a register_jitable function: compiled from its source as a device function,
        # with numquad's semantics, not by Numba's CPU target)
        py = getattr(obj, "py_func", obj)
        options = getattr(obj, "targetoptions", None) or {}
        d = Dispatcher(py, fastmath=bool(options.get("fastmath")))
        # a plain Numba function's compiled signatures are its CPU callers' (numba.cuda
        # compiles it afresh for the kernel's types); numba.cuda's declared ones bind
        d._declared = cuda_signatures(obj) if is_cuda_function(obj) else []
        from .cpu.cudaapi import check_arity

        check_arity(d, d._declared)
        d._numquad_foreign = obj
        obj.__dict__["_numquad_xpu"] = d
    return d


def is_namespace(obj):
    """Is *obj* one of xpu's builtin namespaces (``xpu.threadIdx``, ``xpu.atomic``, ...)?"""
    return type(obj) is _Group


def _dim3(name, what):
    g = _Group(f"xpu.{name}", f"xpu.{name}.x/.y/.z: {what} (int32), as numba.cuda.{name}.")
    for c in "xyz":
        setattr(g, c, _builtin(f"{name}.{c}", f"xpu.{name}.{c}: {what}, {c} component (int32)."))
    g.__all__ = ["x", "y", "z"]
    return g


grid = _builtin(
    "grid",
    "xpu.grid(ndim)\n\nThe absolute thread index: an int64 for ndim=1, a tuple of "
    "ndim int64 for 2 and 3 (blockIdx * blockDim + threadIdx), as numba.cuda.grid.",
)
gridsize = _builtin(
    "gridsize",
    "xpu.gridsize(ndim)\n\nThe number of threads in the grid (gridDim * blockDim): an "
    "int64 or a tuple of ndim int64, as numba.cuda.gridsize.",
)
quad_grid = _builtin(
    "quad_grid",
    "xpu.quad_grid(ndim)\n\nndim must be the constant 2. The (x, y) pixel of this thread "
    "(a tuple of two int64) when each "
    "quad covers a 2x2 pixel tile: quad lane 0 top-left, 1 top-right, 2 bottom-left, "
    "3 bottom-right. A block covers the same blockDim.x x blockDim.y pixels as with "
    "xpu.grid(2), each pixel once, its tiles laid row by row in linear thread order "
    "(docs/lanes.md). blockDim.x and blockDim.y must be even (a launch error otherwise); "
    "3-D blocks: each z plane does the same, z is not returned. With t = threadIdx.x + "
    "(threadIdx.y & 1) * blockDim.x: x = blockIdx.x * blockDim.x + 2 * (t >> 2) + (t & 1), "
    "y = blockIdx.y * blockDim.y + (threadIdx.y & ~1) + ((t >> 1) & 1).",
)
threadIdx = _dim3("threadIdx", "the thread's index in its block")
blockIdx = _dim3("blockIdx", "the block's index in the grid")
blockDim = _dim3("blockDim", "the block's shape")
gridDim = _dim3("gridDim", "the grid's shape in blocks")
laneid = _builtin("laneid", "xpu.laneid\n\nThe thread's lane in its wave, 0..31 (int32).")
warpsize = _builtin("warpsize", "xpu.warpsize\n\nLanes in a wave: 32 (int32).")
syncthreads = _builtin(
    "syncthreads",
    "xpu.syncthreads()\n\nBlock barrier: every thread of the block reaches it before any goes on.",
)
syncwarp = _builtin("syncwarp", "xpu.syncwarp(mask=0xffffffff)\n\nWave barrier.")

shared = _Group("xpu.shared", "Block-shared memory.")
shared.array = _builtin(
    "shared.array",
    "xpu.shared.array(shape, dtype)\n\nA block-shared array of constant shape.",
)
shared.__all__ = ["array"]
local = _Group("xpu.local", "Per-thread memory.")
local.array = _builtin(
    "local.array",
    "xpu.local.array(shape, dtype)\n\nA per-thread array of constant shape.",
)
local.__all__ = ["array"]
atomic = _Group("xpu.atomic", "Atomic read-modify-write on array elements, as numba.cuda.atomic.")
#: numba.cuda's atomics: name -> (call form, what it stores).
ATOMICS = {
    "add": ("ary, idx, val", "ary[idx] + val"),
    "sub": ("ary, idx, val", "ary[idx] - val"),
    "max": (
        "ary, idx, val",
        "max(ary[idx], val); for floats nothing when either is NaN, and "
        "+0.0 does not replace -0.0 (an ordered compare)",
    ),
    "min": (
        "ary, idx, val",
        "min(ary[idx], val); for floats nothing when either is NaN, and -0.0 does not replace +0.0",
    ),
    "nanmax": ("ary, idx, val", "max(ary[idx], val), a NaN value ignored, a NaN element replaced"),
    "nanmin": ("ary, idx, val", "min(ary[idx], val), a NaN value ignored, a NaN element replaced"),
    "and_": ("ary, idx, val", "ary[idx] & val (integers)"),
    "or_": ("ary, idx, val", "ary[idx] | val (integers)"),
    "xor": ("ary, idx, val", "ary[idx] ^ val (integers)"),
    "exch": ("ary, idx, val", "val (integers)"),
    "inc": ("ary, idx, val", "0 if ary[idx] >= val else ary[idx] + 1 (uint32, uint64)"),
    "dec": ("ary, idx, val", "val if ary[idx] == 0 or ary[idx] > val else ary[idx] - 1 (uint32, uint64)"),
    "cas": ("ary, idx, old, val", "val if ary[idx] == old (integers)"),
    "compare_and_swap": ("ary, old, val", "val in ary[0] if ary[0] == old (integers, 1-D ary)"),
}
for _n, (_form, _what) in ATOMICS.items():
    setattr(
        atomic,
        _n,
        _builtin(
            f"atomic.{_n}",
            f"xpu.atomic.{_n}({_form})\n\nAtomically stores {_what}; returns the old value, as numba.cuda.atomic.{_n}.",
        ),
    )
atomic.__all__ = list(ATOMICS)
del _n, _form, _what

#: numba.cuda's other kernel functions, same names, types and meaning
#: (docs/numba-cuda.md; the CPU lowering is numquad/cpu/cudaapi.py).
CUDA_FUNCTIONS = {
    "syncthreads_count": "(pred)\n\nBlock barrier; returns the number of threads whose int pred is nonzero (int32).",
    "syncthreads_and": "(pred)\n\nBlock barrier; returns 1 when pred is nonzero in every thread, else 0 (int32).",
    "syncthreads_or": "(pred)\n\nBlock barrier; returns 1 when pred is nonzero in any thread, else 0 (int32).",
    "threadfence": "()\n\nMemory fence for the device.",
    "threadfence_block": "()\n\nMemory fence for the block.",
    "threadfence_system": "()\n\nMemory fence for the system.",
    "popc": "(x)\n\nThe number of set bits of integer x, in x's type.",
    "brev": "(x)\n\nx's bits reversed: uint64 for a uint64 x, else uint32 (an int64's low 32 bits,\n"
    "as numba.cuda resolves it on the GPU).",
    "clz": "(x)\n\nThe number of leading zero bits of integer x in its width, in x's type.",
    "ffs": "(x)\n\nThe 1-based position of x's least significant set bit, 0 for 0 (uint32).",
    "fma": "(a, b, c)\n\na * b + c with one rounding: float32 when each of a, b, c is a float32, bool,\n"
    "int8, int16 or uint8 (numba.cuda's float32 case), else float64.",
    "cbrt": "(x)\n\nThe cube root: float32 for a float32, bool, int8, int16 or uint8 x (numba.cuda's\n"
    "float32 case), else float64.",
    "selp": "(pred, a, b)\n\na if pred else b (a and b of one type).",
    "nanosleep": "(ns)\n\nSleep about ns nanoseconds (a no-op on the CPU).",
}
#: numba.cuda's loads and stores with a cache hint (``cuda.ldcg(a, i)``,
#: ``cuda.stcs(a, i, v)``): plain loads and stores on every numquad target.
CUDA_CACHE_HINTS = ("ldca", "ldcg", "ldcs", "ldlu", "ldcv", "stcg", "stcs", "stwb", "stwt")
for _n, _doc in CUDA_FUNCTIONS.items():
    globals()[_n] = _builtin(_n, f"xpu.{_n}{_doc}")
    __all__.append(_n)


def match_value_dtype(dtype):
    """The type numba.cuda's ``match_any_sync``/``match_all_sync`` compare a value
    of NumPy *dtype* in (lanes match where these bits are equal): its signatures
    take int32, int64, float32 and float64, and Numba picks the first a value
    converts to safely. So bool, int8/16/32 and uint8/16 compare as int32, int64
    and uint32 as int64, float32 as float32, but a uint64 as float64 (its only
    safe conversion among the four: ``cvt.rn.f64.u64`` in numba.cuda's PTX), so two
    uint64 values that round to one double match."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.dtype(np.float32 if dt.itemsize <= 4 else np.float64)
    if dt.kind == "u" and dt.itemsize == 8:
        return np.dtype(np.float64)
    if dt.itemsize > 4 or dt.kind == "u" and dt.itemsize == 4:
        return np.dtype(np.int64)
    return np.dtype(np.int32)


const = _Group("xpu.const", "Constant memory.")
const.array_like = _builtin(
    "const.array_like",
    "xpu.const.array_like(ary)\n\nA read-only copy of a global NumPy array, frozen when the kernel compiles.",
)
const.__all__ = ["array_like"]
__all__.append("const")
del _n, _doc


# ---------------------------------------------------------------------------
# Launch configuration
# ---------------------------------------------------------------------------

_MAX_BLOCK = 1024
_MAX_BLOCK_DIM = (1024, 1024, 64)
_MAX_GRID_DIM = (2**31 - 1, 65535, 65535)


def _dims(value, what, kernel):
    """Normalise a numba.cuda-style dimension (int or 1-3 tuple) to a 3-tuple."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (int(value),)
    if not isinstance(value, (tuple, list)) or not value:
        raise NumquadTypeError(f"{launch_prefix(kernel)}: {what} must be an int or a tuple of 1-3 ints; got {value!r}")
    if len(value) > 3:
        raise NumquadLaunchError(f"{launch_prefix(kernel)}: {what} has {len(value)} dimensions; it takes 1 to 3")
    out = []
    for v in value:
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise NumquadTypeError(f"{launch_prefix(kernel)}: {what} must hold ints; got {value!r}")
        if v < 1:
            raise NumquadLaunchError(
                f"{launch_prefix(kernel)}: every {what} dimension must be >= 1; got {tuple(value)!r}"
            )
        out.append(int(v))
    ndim = len(out)
    out += [1] * (3 - len(out))
    return tuple(out), ndim


def launch_config(kernel, griddim, blockdim):
    """Validate a launch as CUDA would; returns (grid3, block3, grid_ndim, block_ndim)."""
    g, gnd = _dims(griddim, "griddim", kernel)
    b, bnd = _dims(blockdim, "blockdim", kernel)
    if (b[0] % 2 or b[1] % 2) and _uses_quad_grid(kernel):
        raise NumquadLaunchError(
            f"{launch_prefix(kernel)}: xpu.quad_grid(2) got a block of "
            f"{tuple(blockdim) if isinstance(blockdim, (tuple, list)) else blockdim!r}; it takes "
            f"a block whose blockDim.x and blockDim.y are both even (2x2 pixel quads)"
        )
    nthreads = b[0] * b[1] * b[2]
    bound = getattr(kernel, "max_threads", None)
    if bound is not None and nthreads > bound:
        raise NumquadLaunchError(
            f"{launch_prefix(kernel)}: a block of {b} has {nthreads} threads; the kernel's "
            f"launch_bounds allow at most {bound}"
        )
    if nthreads > _MAX_BLOCK:
        raise NumquadLaunchError(
            f"{launch_prefix(kernel)}: a block of {b} has {nthreads} threads; at most {_MAX_BLOCK} are allowed"
        )
    for axis, (v, lim) in enumerate(zip(b, _MAX_BLOCK_DIM)):
        if v > lim:
            raise NumquadLaunchError(f"{launch_prefix(kernel)}: blockdim[{axis}] = {v}; at most {lim}")
    for axis, (v, lim) in enumerate(zip(g, _MAX_GRID_DIM)):
        if v > lim:
            raise NumquadLaunchError(f"{launch_prefix(kernel)}: griddim[{axis}] = {v}; at most {lim}")
    return g, b, gnd, bnd


#: CUDA's default limit of shared memory per block (more needs cudaFuncSetAttribute).
_MAX_DYNAMIC_SHARED = 48 * 1024


#: CUDA's limits on static shared memory per block and local memory per thread.
_MAX_STATIC_SHARED = 48 * 1024
_MAX_LOCAL = 512 * 1024


def check_memory_sizes(kernel, arrays):
    """*arrays*: (kind "shared" or "local", shape, NumPy dtype, line) of each array a
    kernel allocates. Over CUDA's limits (48 KiB of static shared memory per block,
    512 KiB of local memory per thread) numba.cuda's build fails; so does this, with
    the kernel's line, before a CPU launch tries to allocate it (a bare MemoryError,
    or a kernel that passes on the CPU and fails on the GPU). Returns the shared bytes."""
    total, first = 0, None
    for kind, shape, dt, line in arrays:
        nbytes = int(np.prod(shape, dtype=object)) * dt.itemsize
        if kind == "shared":
            total += nbytes
            first = line if first is None else first
        elif kind == "local" and nbytes > _MAX_LOCAL:
            raise NumquadCompileError(
                f"a local array of {nbytes} bytes per thread (in {kernel.__name__}); CUDA allows {_MAX_LOCAL}",
                kernel.filename,
                line,
            )
    if total > _MAX_STATIC_SHARED:
        raise NumquadCompileError(
            f"the shared arrays of {kernel.__name__} take {total} bytes; CUDA allows "
            f"{_MAX_STATIC_SHARED} bytes of static shared memory per block (more "
            f"needs dynamic shared memory, shared.array(0, dtype))",
            kernel.filename,
            first,
        )
    return total


def _check_stream(kernel, stream):
    """The launch's stream (``[grid, block, stream]``) on the CPU and python targets,
    where it orders nothing: 0, None or a CUDA stream object, as numba.cuda takes."""
    if (
        stream is None
        or hasattr(stream, "handle")
        or hasattr(stream, "__cuda_stream__")
        or (isinstance(stream, (int, np.integer)) and not isinstance(stream, bool) and stream == 0)
    ):
        return
    raise NumquadTypeError(
        f"{launch_prefix(kernel)}: the stream (3rd launch item) must be 0, None "
        f"or a CUDA stream (cuda.stream()); got {type(stream).__name__} {stream!r}"[:300]
    )


def dynamic_shared_bytes(kernel, extra, static=0):
    """The launch's dynamic shared memory size in bytes (``[grid, block, stream, nbytes]``),
    validated as CUDA would, for the CPU and python targets: with the kernel's *static*
    shared bytes at most 48 KiB per block (more needs an opt-in numba.cuda never makes,
    so its launch fails)."""
    nbytes = extra[1] if len(extra) > 1 else 0
    if not isinstance(nbytes, (int, np.integer)) or isinstance(nbytes, bool) or nbytes < 0:
        raise NumquadTypeError(
            f"{launch_prefix(kernel)}: the dynamic shared memory "
            f"size (4th launch item) must be an int >= 0; got {nbytes!r}"
        )
    if nbytes + static > _MAX_DYNAMIC_SHARED:
        also = f" and {static} bytes of static shared arrays" if static else ""
        raise NumquadLaunchError(
            f"{launch_prefix(kernel)}: {nbytes} bytes of dynamic shared memory"
            f"{also}; CUDA allows {_MAX_DYNAMIC_SHARED} per block in all without "
            f"an opt-in"
        )
    return np.int64(nbytes)


# ---------------------------------------------------------------------------
# The dispatcher
# ---------------------------------------------------------------------------


def _is_device_array(a):
    # the class first: numba.cuda's arrays compute the interface dict on each access
    return hasattr(type(a), "__cuda_array_interface__") or hasattr(a, "__cuda_array_interface__")


_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _returns_value_in_code(code):
    """:func:`_returns_value` from bytecode, for a function without source (defined in
    ``python -c`` or an interactive session): a return of anything but ``None``."""
    prev = None
    for ins in dis.get_instructions(code):
        if ins.opname == "RETURN_CONST" and ins.argval is not None:
            return True
        if ins.opname == "RETURN_VALUE" and not (
            prev is not None and prev.opname == "LOAD_CONST" and prev.argval is None
        ):
            return True
        prev = ins
    return False


def _returns_value(tree):
    """Does the function return a value? (A ``return`` in a def, lambda or class
    nested in it does not count: that is the nested function's return.)"""
    todo = list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        if isinstance(node, _NESTED_SCOPES):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def _config_key(griddim, blockdim):
    """The launch-configuration cache key: plain Python ints only, else None.

    ``(1.0, 32) == (1, 32)`` and ``True == 1`` as dict keys, so a float, a bool,
    a NumPy integer or a list is validated on every launch, never served from
    the cache (validation must not depend on what ran before)."""
    for v in (griddim, blockdim):
        if type(v) is int:
            continue
        if type(v) is tuple and all(type(x) is int for x in v):
            continue
        return None
    return (griddim, blockdim)


def _is_arg_hint(a):
    """numba.cuda's ``cuda.In(a)``, ``cuda.Out(a)``, ``cuda.InOut(a)`` launch arguments."""
    return type(a).__module__ == "numba.cuda.args" and hasattr(a, "value")


#: the types of launch arguments seen not to be cuda.In/Out/InOut (a launch reads
#: each argument's type once: _any_hint)
_PLAIN_TYPES = set()


def _any_hint(args):
    """Is any of *args* a ``cuda.In``/``Out``/``InOut`` (:func:`_is_arg_hint`)?"""
    for a in args:
        t = type(a)
        if t in _PLAIN_TYPES:
            continue
        if _is_arg_hint(a):
            return True
        if len(_PLAIN_TYPES) < 256:  # (types made on the fly are read each time past that)
            _PLAIN_TYPES.add(t)
    return False


def _host_argument(a):
    """A launch argument on a host target: ``cuda.In(a)`` a copy of ``a`` (what the
    kernel writes does not come back, as numba.cuda copies it only to the device),
    ``cuda.Out(a)`` and ``cuda.InOut(a)`` the array itself (written back)."""
    if not _is_arg_hint(a):
        return a
    if type(a).__name__ == "In" and isinstance(a.value, np.ndarray):
        return a.value.copy()
    return a.value


def _flag(option, value):
    """*value* of the on/off option *option* of xpu.jit as a bool; a TypeError for
    anything but True, False, 0 or 1 (numba.cuda's flags; numquad has no per-flag
    fastmath set as Numba's CPU jit has)."""
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    if value is None and option == "debug":  # numba.cuda's default: the config's, off
        return False
    raise TypeError(f"xpu.jit: {option} must be True or False; got {value!r}")


def _arity(fn):
    """(fewest, most) positional arguments *fn* takes; most is None with ``*args``."""
    code = fn.__code__
    n = code.co_argcount
    most = None if code.co_flags & inspect.CO_VARARGS else n
    return n - len(fn.__defaults__ or ()), most


def _instr_line(ins, default):
    pos = getattr(ins, "positions", None)
    if pos is not None and pos.lineno is not None:
        return pos.lineno
    return ins.starts_line or default


def _code_objects(code):
    out = [code]
    for c in out:
        out.extend(k for k in c.co_consts if isinstance(k, _pytypes.CodeType))
    return out


def _did_you_mean(word, names, spell):
    close = difflib.get_close_matches(word, [n for n in names if not n.startswith("_")], n=1, cutoff=0.6)
    return f"; did you mean {spell(close[0])}?" if close else ""


def _missing_attribute(path, obj, attr):
    """The message for ``path.attr`` where *obj* (what *path* names) has no *attr*."""
    from . import ops as _ops

    spell = lambda n: f"{path}.{n}"  # noqa: E731
    if isinstance(obj, type(_ops.Wave)):
        ops = [n for n in dir(obj) if _ops.of_function(getattr(obj, n, None)) is not None]
        group = obj.__name__.rsplit(".", 1)[-1]
        hint = _did_you_mean(attr, ops, spell) or f"; the {group} ops are {', '.join(sorted(ops))}"
        return f"{path}.{attr} is not a {group} op" + hint
    if obj is sys.modules[__name__] or isinstance(obj, _Group):
        names = [n for n in dir(obj) if isinstance(getattr(obj, n, None), (_Builtin, _Group))]
        hint = _did_you_mean(attr, names, spell)
        if not hint and len(names) <= 8:
            hint = f"; {path} has {', '.join(sorted(names))}"
        return f"{path}.{attr} is not an xpu builtin" + hint
    what = "module" if isinstance(obj, _pytypes.ModuleType) else "class"
    return f"{path}.{attr}: {what} {getattr(obj, '__name__', path)!r} has no attribute {attr!r}" + _did_you_mean(
        attr, dir(obj), spell
    )


def _hasattr_probes(codes):
    """The (path, name) pairs of the ``hasattr(path, "name")`` calls in *codes*
    (``hasattr(Wave, "reduceMean")``: ("Wave", "reduceMean")), from the bytecode."""
    probes = set()
    for c in codes:
        instrs = list(dis.get_instructions(c))
        for k, ins in enumerate(instrs):
            if ins.opname not in ("LOAD_GLOBAL", "LOAD_NAME") or ins.argval != "hasattr":
                continue
            path = None
            for nxt in instrs[k + 1 :]:
                if path is None and nxt.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF"):
                    path = nxt.argval
                elif path is not None and nxt.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                    path = f"{path}.{nxt.argval}"
                elif path is not None and nxt.opname == "LOAD_CONST" and isinstance(nxt.argval, str):
                    probes.add((path, nxt.argval))
                    break
                elif nxt.opname not in ("PUSH_NULL", "PRECALL", "CACHE"):
                    break
    return probes


def _unresolved_name(fn):
    """(line, message) for the first global name, or attribute of a module or class,
    that *fn* reads and that does not exist; None when every one resolves.

    Read from the bytecode (nested comprehensions, lambdas and defs included), so
    the line is exact and Python's own scoping decides what is global."""
    code = fn.__code__
    glb = fn.__globals__
    free = {}
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            free[name] = cell.cell_contents
        except ValueError:  # an empty cell: leave it to the compiler
            pass
    from . import ops as _ops

    codes = _code_objects(code)
    stored = {
        ins.argval for c in codes for ins in dis.get_instructions(c) if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL")
    }
    probed = _hasattr_probes(codes)
    for c in codes:
        instrs = list(dis.get_instructions(c))
        for k, ins in enumerate(instrs):
            name = ins.argval
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                if name in stored:
                    continue
                if name in glb:
                    obj = glb[name]
                elif hasattr(builtins, name):
                    obj = getattr(builtins, name)
                else:
                    hint = _did_you_mean(name, list(glb) + dir(builtins), str)
                    return _instr_line(ins, fn.__code__.co_firstlineno), f"name {name!r} is not defined{hint}"
            elif ins.opname == "LOAD_DEREF" and name in free and name not in code.co_cellvars:
                obj = free[name]
            else:
                continue
            path = name
            for nxt in instrs[k + 1 :]:
                if nxt.opname in ("LOAD_ATTR", "LOAD_METHOD") and (op := _ops.of_function(obj)) is not None:
                    return _instr_line(nxt, fn.__code__.co_firstlineno), (
                        f"{path}.{nxt.argval}: {path} is an op, which has no attribute {nxt.argval!r}; "
                        f"call it: {op.qualname}({', '.join(op.params)})"
                    )
                if nxt.opname not in ("LOAD_ATTR", "LOAD_METHOD") or not isinstance(obj, (_pytypes.ModuleType, type)):
                    break
                try:
                    obj = getattr(obj, nxt.argval)
                except AttributeError:
                    if (path, nxt.argval) in probed:
                        break  # feature detection: ``if hasattr(Wave, "x"): Wave.x(v)``
                    return _instr_line(nxt, fn.__code__.co_firstlineno), _missing_attribute(path, obj, nxt.argval)
                except Exception:  # noqa: BLE001 - a module's __getattr__ failing otherwise
                    break
                path = f"{path}.{nxt.argval}"
    return None


def _reads_builtin(fn, target, seen):
    """Does *fn* (or an ``@xpu.jit`` function it names, recursively) read the builtin
    *target*? From the bytecode, as :func:`_unresolved_name` reads names."""
    if id(fn) in seen:
        return False
    seen.add(id(fn))
    glb = fn.__globals__
    free = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            free[name] = cell.cell_contents
        except ValueError:
            pass
    for c in _code_objects(fn.__code__):
        instrs = list(dis.get_instructions(c))
        for k, ins in enumerate(instrs):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                obj = glb.get(ins.argval, _MISSING_NAME)
            elif ins.opname == "LOAD_DEREF":
                obj = free.get(ins.argval, _MISSING_NAME)
            else:
                continue
            for nxt in instrs[k + 1 :]:
                if (
                    obj is target
                    or isinstance(obj, Dispatcher)
                    or not isinstance(obj, (_pytypes.ModuleType, type))
                    or nxt.opname not in ("LOAD_ATTR", "LOAD_METHOD")
                ):
                    break
                obj = getattr(obj, nxt.argval, _MISSING_NAME)
            if obj is target:
                return True
            # an @xpu.jit function, a numba.cuda device function or an @njit helper
            # (probe: quad_grid read through @cuda.jit(device=True) escaped the
            # launch's even-block check), or a plain nested function
            try:
                fn2 = obj if isinstance(obj, _pytypes.FunctionType) else getattr(obj, "py_func", None)
            except Exception:  # noqa: BLE001 - an object whose getattr fails
                fn2 = None
            if isinstance(fn2, _pytypes.FunctionType) and _reads_builtin(fn2, target, seen):
                return True
    return False


_MISSING_NAME = object()


def _uses_quad_grid(kernel):
    """Does *kernel*, or a lane function it calls, read ``xpu.quad_grid``? (A launch
    then needs an even blockDim.x and blockDim.y.) Cached on the dispatcher."""
    if kernel._uses_quad_grid is None:
        kernel._uses_quad_grid = _reads_builtin(kernel.py_func, quad_grid, set())
    return kernel._uses_quad_grid


def _generator_line(fn):
    """The line of the first ``yield``/``await`` in *fn*, else its def line."""
    for ins in dis.get_instructions(fn.__code__):
        if ins.opname in ("YIELD_VALUE", "GET_AWAITABLE", "GET_AITER", "GET_ANEXT"):
            return _instr_line(ins, fn.__code__.co_firstlineno)
    return fn.__code__.co_firstlineno


def _lambda_tree(fn, lines_and_start=None):
    """The ``ast.Lambda`` of the lambda *fn*, as an equivalent FunctionDef."""
    code = fn.__code__
    params = list(code.co_varnames[: code.co_argcount])
    if lines_and_start is not None:
        lines, start = lines_and_start
        src = "".join(lines)
    else:
        lines = linecache.getlines(code.co_filename, fn.__globals__)
        src, start = "".join(lines), 1
    try:
        tree = ast.parse(textwrap.dedent(src) if lines_and_start is not None else src)
    except SyntaxError:
        return None
    ast.increment_lineno(tree, start - 1)
    found = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno and [a.arg for a in n.args.args] == params
    ]
    if len(found) > 1:
        # several lambdas with these parameters on the line: the one whose body holds
        # the code's first source position
        cols = [p[2] for p in code.co_positions() if p[0] == code.co_firstlineno and p[2] is not None]
        if cols:
            found = [n for n in found if n.body.col_offset <= min(cols) <= n.body.end_col_offset] or found
    if len(found) != 1:
        return None
    lam = found[0]
    ret = ast.copy_location(ast.Return(value=lam.body), lam.body)
    extra = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
    fdef = ast.FunctionDef(name=fn.__name__, args=lam.args, body=[ret], decorator_list=[], returns=None, **extra)
    ast.copy_location(fdef, lam)
    ast.fix_missing_locations(fdef)
    return fdef


# -- pickling ------------------------------------------------------------------

#: Dispatchers pickled by value, by id, so that unpickling in the same process
#: gives the same object back (as numba does)
_BY_VALUE = weakref.WeakValueDictionary()
_pickling_registered = False


def _importable(d):
    """Is *d* the object its module's attribute ``d.__qualname__`` names? (Never for
    ``__main__``: another interpreter's ``__main__``, a dask or joblib worker's, is
    not this script, so a script's functions go by value, as cloudpickle sends them.)"""
    if getattr(d, "__module__", None) == "__main__":
        return False
    obj = sys.modules.get(getattr(d, "__module__", None) or "")
    if obj is None:
        return False
    for part in d.__qualname__.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return obj is d


def _by_reference(module, qualname):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _ops_namespace(name):
    from . import ops as _ops

    return getattr(_ops, name.rsplit(".", 1)[-1])


def _group_by_name(name):
    obj = sys.modules[__name__]
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _register_pickling():
    """The namespaces a kernel's globals may hold (``Wave``, ``xpu.threadIdx``)
    pickle by name (they are module objects that no module import gives back)."""
    global _pickling_registered
    if not _pickling_registered:
        import copyreg
        from . import ops as _ops

        copyreg.pickle(type(_ops.Wave), lambda m: (_ops_namespace, (m.__name__,)))
        copyreg.pickle(_Group, lambda g: (_group_by_name, (g.__name__,)))
        _pickling_registered = True


class _ByValue:
    """Rebuilds a Dispatcher pickled by value (numba.core.serialize's protocol)."""

    @classmethod
    def _rebuild(cls, uuid, py_func, source, options, signatures, extra=None):
        d = _BY_VALUE.get(uuid)
        if d is not None:
            return d
        d = Dispatcher(py_func, **options)
        d._source = source
        d._uuid = uuid
        _BY_VALUE[uuid] = d
        for name, value in (extra or {}).items():
            setattr(d, name, value)
        if signatures:
            from .cpu.cudaapi import declare_signatures

            declare_signatures(d, signatures)
        return d


class _NoOverload(NumquadError, KeyError):
    """A ``get_regs_per_thread(signature)``-like lookup of argument types the CUDA
    target has not compiled (a KeyError, as numba.cuda's ``overloads[args]``)."""

    __str__ = Exception.__str__  # the message, not KeyError's repr of it


# what a Dispatcher holds besides its constructor's arguments and its signatures
# (xpu.jit's options): a copy (pickling, specialize) keeps them
_EXTRA = ("device_only", "max_threads", "cuda_options", "specialized")


class Dispatcher:
    """An ``@xpu.jit`` function: a kernel (returns nothing) or a lane function.

    Kernels launch with ``f[griddim, blockdim](*args)`` (CUDA also takes a stream
    and a dynamic shared-memory size); lane functions are called on arrays,
    ``f(*args, out=None)``: NumPy arrays, CUDA device arrays, or dask arrays (then
    lazily, one call per block; the chunks must start on wave boundaries).
    ``out=`` takes an array of exactly the broadcast shape and the function's result
    dtype (where a ufunc would cast or broadcast into another, numquad refuses it,
    naming both); it may overlap the inputs, which are read as if before any write.
    A Python scalar argument is weak, as in NumPy 2, but keeps its kind: a float
    takes the type of the call's float arrays (``f(x_float32, 2.0)`` computes in
    float32), an int stays an integer of the call's integer arrays' type, int64
    with none (a selector, a trip count or a shift stays one). The result type is
    what the function computes from those types, as in a kernel: ``x * 3`` of a
    float32 ``x`` and that int64 is float64 (Numba's rule, where a NumPy ufunc
    would keep float32).
    ``f.cpu`` and ``f.cuda`` pick a target explicitly.
    Compilation is lazy and cached per argument types on each target.
    """

    def __init__(self, pyfunc, target="auto", debug=False, fastmath=False, cache=False):
        if target not in ("auto", "cpu", "cuda"):
            raise ValueError(f"xpu.jit: target must be 'auto', 'cpu' or 'cuda'; got {target!r}")
        if not isinstance(pyfunc, _pytypes.FunctionType):
            raise TypeError(f"xpu.jit decorates a Python function; got {pyfunc!r}")
        _register_typeof()
        self.py_func = pyfunc
        self.target = target
        self.debug = _flag("debug", debug)
        self.fastmath = _flag("fastmath", fastmath)
        self.device_only = False  # xpu.jit(device=True): never launched
        self.max_threads = None  # launch_bounds' first: the most threads of a block
        self.cuda_options = {}  # passed on to numba.cuda (jit below: _CUDA_KERNEL_OPTIONS)
        self.cache = _flag("cache", cache)
        #: [(argument types, return type)] declared as in numba.cuda's cuda.jit(sig)
        self._declared = []
        self.specialized = False  # one signature given as a string or tuple (jit)
        functools.update_wrapper(self, pyfunc)
        code = pyfunc.__code__
        self.filename = code.co_filename
        self.firstlineno = code.co_firstlineno
        self.where = f'File "{self.filename}", line {self.firstlineno}, in {pyfunc.__name__}'
        flags = code.co_flags
        if flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
            what = "a generator" if flags & inspect.CO_GENERATOR else "an async function"
            raise NumquadTypeError(
                f'File "{self.filename}", line {_generator_line(pyfunc)}, in {pyfunc.__name__}: '
                f"xpu.jit takes a plain function; {pyfunc.__name__} is {what}: a kernel or "
                f"lane function cannot yield or await"
            )
        self._arity = _arity(pyfunc)
        self._source = None  # (lines, first line) when unpickled by value
        self._uuid = None
        self._names_checked = False
        self._lock = threading.RLock()
        self._tree = None
        self._is_kernel = None
        self._targets = {}
        self._configs = {}  # (griddim, blockdim) -> validated launch dims
        self._quick = {}  # (target, config, launch_key(args)) -> a target's quick runner
        self._views = {}  # "cpu", "cuda", "python" -> its _TargetView (made once)
        self._launchers = {}  # (target, griddim, blockdim) of plain ints -> its _Launcher
        self._uses_quad_grid = None

    # -- source ------------------------------------------------------------
    @property
    def source_tree(self):
        """The function's AST with the user's file line numbers (a lambda's as a def)."""
        if self._tree is None:
            with self._lock:
                if self._tree is None:
                    self._tree = _desugar.lower(self._parse_source(), self.py_func)
        return self._tree

    def _parse_source(self):
        if self.py_func.__name__ == "<lambda>":
            fn = _lambda_tree(self.py_func, self._source)
            if fn is None and self._source is None:
                try:
                    fn = _lambda_tree(self.py_func, inspect.getsourcelines(self.py_func))
                except (OSError, TypeError):
                    pass
            if fn is None:
                raise NumquadTypeError(
                    f"{self.where}: xpu.jit cannot find this lambda's source (several lambdas "
                    f"on one line?); define it with def"
                )
            return fn
        if self._source is not None:
            lines, start = self._source
        else:
            try:
                lines, start = inspect.getsourcelines(self.py_func)
                note_source(self.py_func, "".join(lines))  # (a later edit: cpu/diskcache.py)
            except (OSError, TypeError) as e:
                raise NumquadTypeError(
                    f"{self.where}: xpu.jit needs the function's source to compile it "
                    f"for the CPU ({e}); define it in a .py file (python -c, standard input "
                    f"and the interactive interpreter keep no source)"
                ) from None
        src = textwrap.dedent("".join(lines))
        tree = ast.parse(src, filename=self.filename)
        ast.increment_lineno(tree, start - 1)
        fn = tree.body[0]
        if isinstance(fn, ast.AsyncFunctionDef) or not isinstance(fn, ast.FunctionDef):
            raise NumquadTypeError(f"{self.where}: xpu.jit takes a plain def function")
        fn.decorator_list = []
        return fn

    @property
    def is_kernel(self):
        """True for a kernel (returns nothing), False for a lane function (a lambda is one)."""
        if self._is_kernel is None:
            if self.py_func.__name__ == "<lambda>":
                self._is_kernel = False
                return False
            try:
                self._is_kernel = not _returns_value(self.source_tree)
            except NumquadTypeError:
                # no source: the bytecode says, so that the call reaches the compile's
                # "needs the function's source" (not "f is a kernel: launch it as ...")
                self._is_kernel = not _returns_value_in_code(self.py_func.__code__)
        return self._is_kernel

    def _check_names(self):
        """Every global name and module attribute the function reads exists (once)."""
        if self._names_checked:
            return
        hit = _unresolved_name(self.py_func)
        if hit is not None:
            line, msg = hit
            raise NumquadCompileError(f"{msg} (in {self.__name__})", self.filename, line)
        self._names_checked = True

    def _check_arity(self, args):
        """*args* with omitted defaults filled in; a NumquadTypeError for a wrong count."""
        fewest, most = self._arity
        n = len(args)
        if fewest <= n and (most is None or n <= most):
            if n < self.py_func.__code__.co_argcount:
                args = tuple(args) + tuple(self.py_func.__defaults__[n - fewest :])
            return args
        if most == fewest:
            takes = f"{fewest} argument{'' if fewest == 1 else 's'}"
        elif most is None:
            takes = f"at least {fewest} argument{'' if fewest == 1 else 's'}"
        else:
            takes = f"{fewest} to {most} arguments"
        try:
            sig = str(inspect.signature(self.py_func))
        except (TypeError, ValueError):
            sig = "(...)"
        site = call_site(self)
        raise NumquadTypeError(
            f"{site}: {self.__name__}{sig} takes {takes}; got {n} ({self.__name__} is {defined_at(self, site)})"
        )

    # -- targets -----------------------------------------------------------
    def _target(self, name):
        t = self._targets.get(name)
        if t is not None:
            return t
        with self._lock:
            t = self._targets.get(name)
            if t is None:
                self._check_names()
                if name == "cpu":
                    from .cpu.dispatch import CPUTarget

                    t = CPUTarget(self)
                elif name == "python":
                    from .simt import PythonTarget

                    t = PythonTarget(self)
                else:
                    import importlib.util

                    if importlib.util.find_spec("numba_cuda") is None:
                        raise ImportError(
                            f"{self.where}: the CUDA target needs the numba-cuda package: "
                            f"pip install 'numquad[cuda]' (numba's own numba.cuda is a shim)"
                        )
                    from .cuda.dispatch import CUDATarget

                    t = CUDATarget(self)
                self._targets[name] = t
            return t

    def _choose(self, args):
        if self.target != "auto":
            return self.target
        return "cuda" if any(type(a) is not np.ndarray and _is_device_array(a) for a in args) else "cpu"

    @property
    def cpu(self):
        """This function on the CPU target: ``f.cpu[grid, block](...)`` or ``f.cpu(...)``."""
        return self._views.get("cpu") or self._view("cpu")

    @property
    def cuda(self):
        """This function on the CUDA target: ``f.cuda[grid, block](...)`` or ``f.cuda(...)``."""
        return self._views.get("cuda") or self._view("cuda")

    @property
    def python(self):
        """This function in the plain-Python SIMT interpreter (numquad/simt.py):
        ``f.python[grid, block](...)`` or ``f.python(...)``.

        Slow, but ordinary Python: ``print`` and ``breakpoint()``/pdb work inside the
        kernel, per thread, with every cross-lane op (numba.cuda's simulator has no
        warp ops). It is the fuzzer's oracle (``python -m numquad.fuzz``).
        """
        return self._views.get("python") or self._view("python")

    def _view(self, target):
        v = self._views[target] = _TargetView(self, target)
        return v

    # -- kernels -------------------------------------------------------------
    def __getitem__(self, config):
        return self._launcher(None, config)

    def _launcher(self, target, config):
        """The _Launcher of ``[config]`` on *target*; one kept per configuration of
        two plain ints (the common launch makes no new object)."""
        if type(config) is tuple and len(config) == 2:
            c0, c1 = config
            if type(c0) is int and type(c1) is int:  # never 1.0 or True for 1
                key = (target, c0, c1)
                launcher = self._launchers.get(key)
                if launcher is None:
                    launcher = _Launcher(self, target, config)
                    if len(self._launchers) < 64:
                        self._launchers[key] = launcher
                return launcher
        return _Launcher(self, target, config)

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """numba.cuda's ``kernel.forall(ntasks)(*args)``: a 1-D launch of at least
        *ntasks* threads, *tpb* a block (128 when 0); the kernel guards ``i < n``."""
        if isinstance(ntasks, bool) or not isinstance(ntasks, (int, np.integer)):
            raise NumquadTypeError(
                f"{call_site(self)}: {self.__name__}.forall(ntasks): ntasks must be an integer (the "
                f"number of threads); got {type(ntasks).__name__} {ntasks!r}"[:300]
            )
        if ntasks < 0:  # numba.cuda's words, and the line
            raise NumquadLaunchError(
                f"{call_site(self)}: {self.__name__}.forall(ntasks): Can't create ForAll with "
                f"negative task count: {ntasks}"
            )
        return _ForAll(self, ntasks, tpb, stream, sharedmem)

    def specialize(self, *args):
        """numba.cuda's ``kernel.specialize(*args)``: a copy of this dispatcher declared
        for the types of *args* (Numba's ``typeof``), as ``xpu.jit(types)`` declares
        one: later launches convert scalars to those types (``2**40`` for an int32 is
        0, a float for an integer is refused) and take arrays of those dtypes only. One
        copy per argument types; a dispatcher declared with one signature (or
        specialized already) raises RuntimeError, as numba.cuda's."""
        if self.specialized:
            raise RuntimeError("Dispatcher already specialized")
        from numba import typeof

        argtypes = tuple(typeof(a) for a in args)
        with self._lock:
            cache = self.__dict__.setdefault("_specializations", {})
            copy = cache.get(argtypes)
        if copy is not None:
            return copy
        # made and compiled outside this dispatcher's lock: a compile takes Numba's
        # lock, which is always taken first (numquad/cpu/dispatch.py, scalar_function)
        copy = Dispatcher(self.py_func, target=self.target, debug=self.debug, fastmath=self.fastmath, cache=self.cache)
        for name in _EXTRA:
            setattr(copy, name, getattr(self, name))
        from .cpu.cudaapi import declare_signatures

        copy.specialized = True
        declare_signatures(copy, [(argtypes, None)])
        with self._lock:  # two threads may have made one each: all get the first kept
            return cache.setdefault(argtypes, copy)

    # -- numba.cuda's introspection of compiled kernels ---------------------------
    @property
    def overloads(self):
        """numba.cuda's ``kernel.overloads``: ``{argument types: compiled kernel}`` for
        each tuple of Numba types this kernel has compiled for, on any target (a
        declared signature compiles at decoration, as ``cuda.jit(sig)`` does). A value
        is the target's own object: numba.cuda's kernel where the CUDA target compiled
        those types, else the CPU target's. A lane function has none (it compiles
        with each caller); its :attr:`signatures` are its declared ones."""
        cpu = self._targets.get("cpu")
        found = cpu.overloads() if cpu is not None else {}
        found.update(self._cuda_overloads())
        return found

    @property
    def signatures(self):
        """numba.cuda's ``kernel.signatures``: the argument-type tuples of
        :attr:`overloads`, after the declared ones (``@xpu.jit("void(float32[:])")``)
        in their order."""
        sigs = [tuple(args) for args, _ in self._declared]
        return sigs + [s for s in self.overloads if s not in sigs]

    @property
    def specializations(self):
        """numba.cuda's ``kernel.specializations``: ``{argument types: the
        Dispatcher`` :meth:`specialize` returned ``}`` (numba.cuda's key also holds the
        device's compute capability, which a CPU copy does not have)."""
        return dict(self.__dict__.get("_specializations", {}))

    def _cuda_overloads(self):
        """``{argument types: numba.cuda kernel}`` of the CUDA target's kernels."""
        t = self._targets.get("cuda")
        return t.overloads() if t is not None else {}

    def _gpu_usage(self, method, attr, signature):
        """numba.cuda's ``get_regs_per_thread(signature=None)`` and its siblings: the
        figure of the kernel the CUDA target compiled for *signature*'s argument
        types; without one, ``{argument types: figure}`` of each (the one figure of a
        specialized kernel). The figures are the GPU's, so a kernel that has only run
        on the CPU has none."""
        found = self._cuda_overloads()
        if signature is not None:
            if isinstance(signature, str) or not hasattr(signature, "args") and not isinstance(signature, tuple):
                raise NumquadTypeError(
                    f"{call_site(self)}: {self.__name__}.{method}(signature): signature must be a Numba "
                    f"signature (numba.cuda's: void(float32[:], int32), of numba.types) or a tuple of "
                    f"argument types; got {type(signature).__name__} {signature!r}"[:400]
                )
            args = tuple(getattr(signature, "args", signature))
            if args not in found:
                ran = ", ".join(f"({', '.join(map(str, s))})" for s in found) or "none"
                raise _NoOverload(
                    f"{call_site(self)}: {self.__name__}.{method}(signature): {self.__name__} has not "
                    f"been compiled for the CUDA target with argument types ({', '.join(map(str, args))}); "
                    f"it has for: {ran} (launch it on a GPU first, with k.cuda[...] or device arrays)"
                )
            found = {args: found[args]}
        figures = {args: getattr(kernel, attr) for args, kernel in found.items()}
        if signature is not None or (self.specialized and figures):
            return next(iter(figures.values()))
        return figures

    def get_regs_per_thread(self, signature=None):
        """numba.cuda's ``kernel.get_regs_per_thread(signature=None)``: the registers
        a thread of the CUDA target's kernel for *signature*'s argument types uses;
        without one, ``{argument types: registers}`` of each kernel the CUDA target
        compiled (a specialized kernel's one figure). A kernel that ran on the CPU
        only has none: ``{}``, and a KeyError naming the types for a *signature*.
        The other ``get_*`` methods answer alike."""
        return self._gpu_usage("get_regs_per_thread", "regs_per_thread", signature)

    def get_const_mem_size(self, signature=None):
        """numba.cuda's ``kernel.get_const_mem_size(signature=None)``: bytes of
        constant memory of the CUDA target's kernel."""
        return self._gpu_usage("get_const_mem_size", "const_mem_size", signature)

    def get_shared_mem_per_block(self, signature=None):
        """numba.cuda's ``kernel.get_shared_mem_per_block(signature=None)``: bytes of
        static shared memory of the CUDA target's kernel."""
        return self._gpu_usage("get_shared_mem_per_block", "shared_mem_per_block", signature)

    def get_max_threads_per_block(self, signature=None):
        """numba.cuda's ``kernel.get_max_threads_per_block(signature=None)``: the
        most threads a block of the CUDA target's kernel may have."""
        return self._gpu_usage("get_max_threads_per_block", "max_threads_per_block", signature)

    def get_local_mem_per_thread(self, signature=None):
        """numba.cuda's ``kernel.get_local_mem_per_thread(signature=None)``: bytes of
        local memory a thread of the CUDA target's kernel uses."""
        return self._gpu_usage("get_local_mem_per_thread", "local_mem_per_thread", signature)

    def _launch(self, target, config, args):
        if not self.is_kernel:
            raise NumquadTypeError(
                f"{launch_prefix(self)}: {self.__name__} returns a value, so it is a lane "
                f"function: call it as {self.__name__}(*arrays), not with [griddim, blockdim]"
            )
        if self.device_only:
            raise NumquadRuntimeError(
                f"{launch_prefix(self)}: Cannot compile a device function as a kernel: "
                f"{self.__name__} is xpu.jit(device=True), as numba.cuda refuses it; call it from "
                f"a kernel, or drop device=True"
            )
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise NumquadTypeError(
                f"{launch_prefix(self)}: launch {self.__name__}[griddim, blockdim](...) "
                f"(CUDA also takes [griddim, blockdim, stream, sharedmem]); got {config!r}"
            )
        griddim, blockdim = config[:2]
        extra = config[2:]
        key = _config_key(griddim, blockdim)
        dims = self._configs.get(key) if key is not None else None
        if dims is None:
            dims = launch_config(self, griddim, blockdim)
            if key is not None and len(self._configs) < 64:
                self._configs[key] = dims
        given = args
        args = self._check_arity(args)
        hinted = _any_hint(args)
        chosen = target or self._choose([a.value if _is_arg_hint(a) else a for a in args] if hinted else args)
        # what a quick runner may repeat: a configuration of plain ints, every argument
        # given (none filled from a default), the arguments as they came
        quick = key is not None and not extra and args is given and not hinted
        if hinted and chosen != "cuda":
            args = tuple(map(_host_argument, args))
        if extra and chosen != "cuda":
            _check_stream(self, extra[0])
        if self._declared and chosen in ("cuda", "python"):
            # numba.cuda's cuda.jit(sig): scalars take the types of the signature that
            # fits best (the CPU target converts every argument itself)
            from .cpu.cudaapi import convert_scalars

            args = convert_scalars(self, args)
        try:
            t = self._target(chosen)
            compiled = t.launch(dims, extra, args)
        except ImportError as e:
            if type(e).__name__ != "CudaSupportError":
                raise
            raise self._no_gpu(e, f"{self.__name__}.cuda[...](...)", "launch") from None
        if quick and len(self._quick) < 64 and hasattr(t, "quick_runner"):
            akey = launch_key(args)
            run = t.quick_runner(compiled, dims) if akey is not None else None
            if run is not None:
                self._quick[(target, config, akey)] = run

    # -- lane functions ------------------------------------------------------
    def __call__(self, *args, out=None, **kwargs):
        return self._call(None, args, out, kwargs)

    def _call(self, target, args, out, kwargs=None):
        if self.is_kernel:
            site = call_site(self)
            raise NumquadUnconfiguredKernelError(
                f"{site}: {self.__name__} ({defined_at(self, site)}) is a kernel (it returns no "
                f"value): launch it as {self.__name__}[griddim, blockdim](...), e.g. "
                f"{self.__name__}[(n + 127) // 128, 128](...); a lane function called on arrays "
                f"returns its result"
            )
        if kwargs:
            site = call_site(self)
            raise NumquadTypeError(
                f"{site}: {self.__name__}(...) ({defined_at(self, site)}) takes its arguments by position (and "
                f"out=); got keyword argument(s) {', '.join(sorted(kwargs))}"
            )
        code = self.py_func.__code__
        if code.co_kwonlyargcount or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
            site = call_site(self)
            kwonly = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
            extra = [f"keyword-only parameter(s) {', '.join(kwonly)}"] if kwonly else []
            extra += ["*args"] if code.co_flags & inspect.CO_VARARGS else []
            extra += ["**kwargs"] if code.co_flags & inspect.CO_VARKEYWORDS else []
            raise NumquadTypeError(
                f"{site}: {self.__name__} ({defined_at(self, site)}) has {' and '.join(extra)}; a lane "
                f"function called on arrays takes positional parameters only"
            )
        if _uses_quad_grid(self):
            # a lane call runs one row of threads (blockDim.y is 1, odd): the launch
            # check would refuse it (probe: it gave y = 1 in a one-row launch)
            site = call_site(self)
            raise NumquadLaunchError(
                f"{site}: {self.__name__} ({defined_at(self, site)}) reads xpu.quad_grid(2), "
                f"which takes a 2-D block whose blockDim.x and blockDim.y are both even; a lane "
                f"function called on arrays runs one row of threads: call it from a kernel "
                f"launched with such a block, e.g. k[(w // 16, h // 16), (16, 16)](...)"
            )
        given = len(args)
        args = self._check_arity(args)
        # an omitted default is the function's constant, typed as Numba types it (a
        # float is float64, an int int64), not a weak Python scalar the caller passed:
        # ``scale(x, eps=0.1)`` on float32 x computes in float64, as scale(x[i]) does
        args = args[:given] + tuple(map(_typed_default, args[given:]))
        if any(map(_lanecall.is_dask, args)):  # lazy: one call per block
            return _lanecall.dask_call(self, args, out, functools.partial(self._call, target, out=None))
        target = target or self._choose(list(args) + ([out] if out is not None else []))
        try:
            r = self._target(target).call(args, out)
            # scalars (or 0-d arrays) in, a NumPy scalar out, as np.sin(np.float32(2)) gives
            return r[()] if out is None and type(r) is np.ndarray and r.ndim == 0 else r
        except ImportError as e:
            if type(e).__name__ != "CudaSupportError":
                raise
            raise self._no_gpu(e, f"{self.__name__}.cuda(...)", "call") from None

    def _no_gpu(self, e, what, verb):
        """numba-cuda's multi-line ``CudaSupportError`` *e* (no driver, no GPU) as one
        line naming the user's call."""
        from .cuda.errors import NoGPUError

        reason = " ".join(str(e).split())
        return NoGPUError(
            f"{call_site(self)}: {what} runs on an NVIDIA GPU, but numba.cuda finds "
            f"none here ({reason.rstrip(': ')}); {verb} {self.__name__} without "
            f".cuda, or with .cpu, to run it on the CPU"
        )

    # -- introspection -------------------------------------------------------
    def _check_sig(self, method, sig):
        """*sig* of an ``inspect_*`` call: a signature string, a Numba signature, or a
        tuple/list of Numba types, one per parameter; else one line naming the call."""
        from numba.core import types as _nbt
        from numba.core.typing.templates import Signature

        if isinstance(sig, (str, Signature)):
            return
        params = self.py_func.__code__.co_argcount
        if isinstance(sig, (tuple, list)) and all(isinstance(t, _nbt.Type) for t in sig):
            if len(sig) == params or self.py_func.__code__.co_flags & 0x04:  # *args
                return
            got = f"{len(sig)} type(s)"
        else:
            got = f"{type(sig).__name__} {sig!r}"[:120]
        raise NumquadTypeError(
            f"{call_site(self)}: {self.__name__}.{method}(sig): sig must be the argument types "
            f"(a tuple of {params} Numba types such as (numba.float32[:], numba.int32)) or a "
            f'signature string ("void(float32[:], int32)"); got {got}'
        )

    def inspect_cpu_source(self, sig):
        """The generated CPU wave code for argument types *sig*, as Python source."""
        self._check_sig("inspect_cpu_source", sig)
        return self._target("cpu").inspect_source(sig)

    def inspect_llvm(self, sig):
        """The optimised LLVM IR of the CPU wave code for *sig*."""
        self._check_sig("inspect_llvm", sig)
        return self._target("cpu").inspect_llvm(sig)

    def inspect_asm(self, sig):
        """The CPU assembly of the wave code for *sig*."""
        self._check_sig("inspect_asm", sig)
        return self._target("cpu").inspect_asm(sig)

    def inspect_ptx(self, sig, cc=(9, 0), blockdim=None):
        """The PTX for *sig* and compute capability *cc*; needs no GPU.

        *sig*: the argument types (``(numba.float32[:], numba.int32)``) or a
        signature string (``"void(float32[:], int32)"``). *blockdim*: the launch's
        block shape; a kernel with cross-lane ops launched with blocks of a
        multiple of 32 threads runs a variant whose entry mask is the constant
        ``0xFFFFFFFF`` (docs/architecture.md), the PTX shown for such a *blockdim*.
        """
        self._check_sig("inspect_ptx", sig)
        if not (
            isinstance(cc, tuple)
            and len(cc) == 2
            and all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in cc)
        ):
            raise NumquadTypeError(
                f"{call_site(self)}: {self.__name__}.inspect_ptx(sig, cc): cc must be a compute "
                f"capability (major, minor) such as (9, 0); got {type(cc).__name__} {cc!r}"[:300]
            )
        return self._target("cuda").inspect_ptx(sig, cc=cc, blockdim=blockdim)

    def __repr__(self):
        kind = "kernel" if self.is_kernel else "lane function"
        return f"<xpu.jit {kind} {self.__name__}>"

    # -- pickling ------------------------------------------------------------
    def __reduce__(self):
        """By reference when the module attribute of this name is this dispatcher (a
        module-level ``@xpu.jit`` function), else by value: the function through
        Numba's cloudpickle, with its source and options (as numba pickles closures).
        Compiled code is not pickled; the copy compiles again where it is used."""
        if _importable(self):
            return _by_reference, (self.__module__, self.__qualname__)
        from numba.core import serialize

        _register_pickling()
        with self._lock:
            if self._uuid is None:
                self._uuid = _uuid.uuid4().hex
                _BY_VALUE[self._uuid] = self
        source = self._source
        if source is None:
            try:
                lines, start = inspect.getsourcelines(self.py_func)
                source = (list(lines), start)
            except (OSError, TypeError):
                pass
        options = dict(target=self.target, debug=self.debug, fastmath=self.fastmath, cache=self.cache)
        return serialize.custom_reduce(
            _ByValue,
            dict(
                uuid=self._uuid,
                py_func=self.py_func,
                source=source,
                options=options,
                signatures=list(self._declared),
                extra={name: getattr(self, name) for name in _EXTRA},
            ),
        )


def _typeof_dispatcher(val, c):
    """numba.typeof of an ``@xpu.jit`` function: what a ``@numba.njit`` function
    that calls or launches one is told (Numba's own words were "Cannot determine
    Numba type of <class 'numquad.xpu.Dispatcher'>"). A ValueError, as Numba's
    typeof raises for a value it cannot type; Numba adds the name and the line."""
    raise ValueError(
        f"{val.__name__} is an @xpu.jit function, which a @numba.njit function cannot call or "
        f"launch; call it from Python (or from another @xpu.jit function), or make the helper a "
        f"@numba.njit function, which @xpu.jit kernels may call"
    )


_typeof_registered = False


def _register_typeof():
    """Once, at the first ``@xpu.jit`` (importing numquad imports no Numba)."""
    global _typeof_registered
    if not _typeof_registered:
        from numba.extending import typeof_impl

        typeof_impl.register(Dispatcher)(_typeof_dispatcher)
        _typeof_registered = True


class _ForAll:
    def __init__(self, dispatcher, ntasks, tpb, stream, sharedmem):
        self._d, self._n, self._tpb, self._stream, self._smem = dispatcher, ntasks, tpb, stream, sharedmem

    def __call__(self, *args):
        if self._n == 0:
            return None
        # numba.cuda asks the occupancy calculator, which keeps to launch_bounds
        tpb = self._tpb or min(128, self._d.max_threads or 128)
        return self._d[(self._n + tpb - 1) // tpb, tpb, self._stream, self._smem](*args)


class _TargetView:
    def __init__(self, dispatcher, target):
        self._d = dispatcher
        self._t = target

    def __getitem__(self, config):
        return self._d._launcher(self._t, config)

    def __call__(self, *args, out=None, **kwargs):
        return self._d._call(self._t, args, out, kwargs)

    def __reduce__(self):
        return getattr, (self._d, self._t)


def _typed_default(v):
    """A parameter's default value as a NumPy scalar of the type Numba gives that
    constant (bool, int64 or uint64, float64, complex128); other values as they are."""
    if isinstance(v, bool):
        return np.bool_(v)
    if isinstance(v, int):
        if -(2**63) <= v < 2**63:
            return np.int64(v)
        return np.uint64(v) if 0 <= v < 2**64 else v
    if isinstance(v, float):
        return np.float64(v)
    if isinstance(v, complex):
        return np.complex128(v)
    return v


class _Launcher:
    __slots__ = ("_d", "_t", "_config", "_plain")

    def __init__(self, dispatcher, target, config):
        self._d = dispatcher
        self._t = target
        config = config if isinstance(config, tuple) else (config,)
        # a list dimension is read now, as numba.cuda's configure copies it: a later
        # change of the list does not change this launch
        if list in map(type, config):
            config = tuple(tuple(c) if isinstance(c, list) else c for c in config)
        self._config = config
        # a configuration of plain ints, which a quick runner may be keyed on: (1.0, 32)
        # == (1, 32) as a dict key
        self._plain = len(config) == 2 and _config_key(*config) is not None

    def __call__(self, *args, **kwargs):
        d = self._d
        if kwargs:
            raise NumquadTypeError(
                f"{launch_prefix(d)}: a kernel launch takes its arguments by position; got keyword "
                f"argument(s) {', '.join(sorted(kwargs))} for {d.__name__}"
            )
        # a launch like one made before (the same plain-int configuration, the same
        # count and types of arguments): the target's quick runner, nothing decided again
        quick = d._quick
        if quick and self._plain:
            akey = launch_key(args)
            run = quick.get((self._t, self._config, akey)) if akey is not None else None
            if run is not None:
                return run(args)
        return d._launch(self._t, self._config, args)

    def __reduce__(self):
        return _Launcher, (self._d, self._t, self._config)

    # numba.cuda's configured launch (_LaunchConfiguration): the kernel, the grid and
    # block as (x, y, z), the stream and the dynamic shared memory bytes
    @property
    def dispatcher(self):
        return self._d

    @property
    def griddim(self):
        return tuple(launch_config(self._d, *self._config[:2])[0])

    @property
    def blockdim(self):
        return tuple(launch_config(self._d, *self._config[:2])[1])

    @property
    def stream(self):
        return self._config[2] if len(self._config) > 2 else 0

    @property
    def sharedmem(self):
        return self._config[3] if len(self._config) > 3 else 0


#: numba.cuda's cuda.jit options that mean nothing to the CPU target (accepted, ignored)
_CUDA_OPTIONS = (
    "device",
    "inline",
    "forceinline",
    "lineinfo",
    "opt",
    "lto",
    "max_registers",
    "launch_bounds",
    "boundscheck",
    "shared_memory_carveout",
)


#: ... of which the CUDA target passes these on to numba.cuda's cuda.jit for a kernel
_CUDA_KERNEL_OPTIONS = ("lineinfo", "opt", "max_registers", "launch_bounds", "shared_memory_carveout")


def jit(func=None, *, target="auto", debug=False, fastmath=False, cache=False, **cuda_options):
    """``@xpu.jit`` or ``@xpu.jit(target="auto", debug=False, fastmath=False, cache=False)``

    Compile a SIMT kernel or lane function for the CPU wave compiler and for CUDA.
    A function that returns nothing is a kernel, launched as
    ``k[griddim, blockdim](*args)``; one that returns a value is a lane function,
    callable from kernels and, on arrays, from Python (``f(*arrays, out=None)``; as a
    NumPy ufunc, a call on scalars alone returns a NumPy scalar).
    ``target="auto"`` picks CUDA when an argument has ``__cuda_array_interface__``.
    ``cache=True`` keeps compiled code on disk: on the CPU, the machine code of each
    specialisation, keyed by the generated code, the globals it reads, numquad's own
    source and the library versions (numquad/cpu/diskcache.py; ``$NUMQUAD_CACHE_DIR``,
    else ``~/.cache/numquad``); on CUDA, numba-cuda's cache.
    ``debug=True`` on the CPU: Numba's Python error model (a division by zero raises
    ZeroDivisionError), an out-of-bounds access names its index, ``syncthreads()`` reached
    by part of a block raises, and each numba.cuda ``*_sync`` warp function is checked
    against CUDA's mask rules (docs/numba-cuda.md, item 13); on CUDA, numba.cuda's
    debug build.

    As numba.cuda's ``cuda.jit``, it also takes a signature or a list of them
    (``@xpu.jit("void(float32[:], int32)")``, ``xpu.jit((float32[:],))(f)``): the CPU
    target then compiles eagerly for those types and converts scalar launch arguments
    to them (an array must have the declared dtype); and numba.cuda's options
    ``device``, ``inline``, ``lineinfo``, ``opt``, ... (ignored by the CPU target;
    the CUDA target passes ``lineinfo``, ``opt``, ``max_registers``, ``launch_bounds``
    and ``shared_memory_carveout`` on to numba.cuda's ``cuda.jit``).
    """
    bad = sorted(set(cuda_options) - set(_CUDA_OPTIONS))
    external = [k for k in bad if k in ("link", "extensions")]
    if external:
        # numba.cuda's options for code numquad cannot compile for the CPU
        raise TypeError(
            f"xpu.jit() does not take {external[0]}= (numba.cuda's external C/PTX code and "
            f"argument extensions are not supported: docs/numba-cuda.md, declare_device); write "
            f"the function in Python"
        )
    if bad:
        raise TypeError(f"xpu.jit() got unexpected keyword argument(s) {bad}")
    sigs = None
    specialized = False
    if func is not None and not isinstance(func, (_pytypes.FunctionType, str, tuple, list)) and callable(func):
        # (a Dispatcher, a partial, a builtin, a method: parse_signatures said "is not a
        # signature", which hid the real mistake)
        shown = repr(func) if len(repr(func)) <= 100 else repr(func)[:97] + "..."
        what = (
            f"{func.__name__}, already an xpu.jit function"
            if isinstance(func, Dispatcher)
            else f"{shown} (a {type(func).__name__})"
        )
        raise TypeError(f"xpu.jit decorates a plain Python function (def or lambda) or takes a signature; got {what}")
    if func is not None and not isinstance(func, _pytypes.FunctionType):
        from .cpu.cudaapi import parse_signatures

        sigs = parse_signatures(func)
        specialized = not isinstance(func, list)  # numba.cuda's "specialized" kernel
        func = None

    bounds = cuda_options.get("launch_bounds")
    if bounds is not None:
        # numba.cuda's check (at its compile), and its first bound holds at every launch
        # (a GPU refuses a bigger block of a kernel compiled with it)
        bounds = (bounds,) if isinstance(bounds, (int, np.integer)) else tuple(bounds)
        if len(bounds) > 3:
            raise ValueError(
                f"Got {len(bounds)} launch bounds: {cuda_options['launch_bounds']}. A maximum "
                f"of three are supported: (max_threads_per_block, min_blocks_per_sm, "
                f"max_blocks_per_cluster)"
            )
        if not bounds or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in bounds
        ):
            raise TypeError(
                f"xpu.jit: launch_bounds takes an int > 0 or a tuple of 1 to 3 of them; "
                f"got {cuda_options['launch_bounds']!r}"
            )

    def wrap(f):
        d = Dispatcher(f, target=target, debug=debug, fastmath=fastmath, cache=cache)
        d.device_only = bool(cuda_options.get("device"))
        d.max_threads = int(bounds[0]) if bounds else None
        # what the CUDA target passes on to numba.cuda's cuda.jit (cuda/dispatch.py)
        d.cuda_options = {k: v for k, v in cuda_options.items() if k in _CUDA_KERNEL_OPTIONS and v is not None}
        if sigs:
            from .cpu.cudaapi import declare_signatures

            d.specialized = specialized
            declare_signatures(d, sigs)
        return d

    if func is None:
        return wrap
    return wrap(func)
