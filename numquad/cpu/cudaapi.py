"""numba.cuda's kernel API on the CPU target.

One table, :data:`API`, lists every name numba.cuda offers inside kernels, whether
the CPU target supports it and how it differs; docs/numba-cuda.md is generated from
it (``python -m numquad.cpu.cudaapi > docs/numba-cuda.md``). The rest of this module
is the CPU meaning of the names the wave compiler does not treat as cross-lane ops
or barriers itself:

* scalar intrinsics with numba.cuda's result types (``popc``, ``brev``, ``clz``,
  ``ffs``, ``fma``, ``cbrt``, ``selp``, ``nanosleep``, cache-hinted loads/stores),
  memory fences, ``const.array_like``;
* the type checks of the ``*_sync`` warp functions (an integer mask, an integer or
  bool predicate, 32/64-bit shuffle values), as numba.cuda reports them;
* ``match_any_sync``/``match_all_sync`` (one whole-wave op);
* ``syncthreads_count/_and/_or`` (a block barrier with a reduction: block mode);
* dynamic shared memory (``shared.array(0, dtype)``, sized at launch);
* numba.cuda device functions (``@cuda.jit(device=True)``), compiled from their
  Python source like ``@xpu.jit`` lane functions (:func:`as_xpu`);
* one clear line for any other ``cuda.*`` name (:func:`check_supported`).
"""

from __future__ import annotations

import ast
import copy
import functools
import math
import dataclasses
import sys
import types as _pytypes

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.extending import intrinsic, overload
from numba.np import numpy_support

from .. import _desugar, _numpy_calls, _power
from .. import xpu as _xpu
from .. import ops as _ops
from ..errors import NumquadCompileError, NumquadTypeError
from .._source import code_names, module_copy
from . import astbuild as _ab
from . import typing as _typing
from .compiling import in_numquad_compile

__all__ = [
    "API",
    "unsupported",
    "scalar_call",
    "as_xpu",
    "check_supported",
    "lower_call",
    "namespace",
    "helpers",
    "constant_value",
    "constant_shape",
    "allocation_wording",
    "local_constants",
    "compile_time_object",
    "invariant_aliases",
    "gen_barrier_reduce",
    "cpu_pyfunc",
    "cpu_global",
    "parse_signatures",
    "SHUFFLE_OPS",
    "declare_signatures",
    "match_signature",
    "convert_scalars",
    "BARRIER_REDUCE",
    "REGION_ENDS",
    "PURE_BUILTINS",
    "HINTS",
    "render_md",
    "signature_picker",
    "denied_name",
    "SYNC_NAMES",
    "gen_sync_check",
]

DOC = "docs/numba-cuda.md"


def unsupported(name):
    """The one line for a numba.cuda name the CPU target does not support."""
    return f"`cuda.{name}` is not supported by numquad's CPU target (supported: {DOC})"


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Api:
    name: str  # as spelled after ``cuda.``
    group: str
    numba_cuda: str  # numba.cuda's meaning and result type
    cpu: bool  # supported by the CPU target
    note: str = ""  # how the CPU target differs, or why not / what to use
    xpu: bool = True  # also spelled xpu.<name>


_G_THREAD = "Thread indexing"
_G_MEM = "Memory"
_G_SYNC = "Synchronisation and fences"
_G_WARP = "Warp functions"
_G_ATOM = "Atomics"
_G_MATH = "Bit and math intrinsics"
_G_MISC = "Other"
_G_NO = "Not supported on the CPU"

_ATOMIC_TYPES = {
    "add": "int32, uint32, int64, uint64, float32, float64",
    "and_": "int32, uint32, int64, uint64",
    "inc": "uint32, uint64",
}


def _atomic_rows():
    rows = []
    for n, (form, what) in _xpu.ATOMICS.items():
        tys = _ATOMIC_TYPES.get(n) or _ATOMIC_TYPES.get(
            {
                "sub": "add",
                "max": "add",
                "min": "add",
                "nanmax": "add",
                "nanmin": "add",
                "or_": "and_",
                "xor": "and_",
                "exch": "and_",
                "cas": "and_",
                "compare_and_swap": "and_",
                "dec": "inc",
            }[n]
        )
        rows.append(
            Api(
                f"atomic.{n}",
                _G_ATOM,
                f"`({form})`: stores {what}; returns the old element ({tys})",
                True,
                "LLVM `atomicrmw`/`cmpxchg`, sequentially consistent"
                + (
                    "; returns the element it replaced (numba.cuda's float max/min return "
                    "the element read before their compare-and-swap loop, which another "
                    "thread may have changed)"
                    if n in ("max", "min", "nanmax", "nanmin")
                    else ""
                ),
            )
        )
    return rows


def _rows():
    t = [
        Api("threadIdx.x", _G_THREAD, "thread index in the block, `.x/.y/.z` (int32)", True),
        Api("blockIdx.x", _G_THREAD, "block index in the grid, `.x/.y/.z` (int32)", True),
        Api("blockDim.x", _G_THREAD, "block shape, `.x/.y/.z` (int32)", True),
        Api("gridDim.x", _G_THREAD, "grid shape in blocks, `.x/.y/.z` (int32)", True),
        Api("laneid", _G_THREAD, "lane in the warp, 0..31 (int32)", True),
        Api("warpsize", _G_THREAD, "32 (int32)", True),
        Api(
            "grid",
            _G_THREAD,
            "`grid(ndim)`: absolute thread index, int64 or a tuple of int64",
            True,
            "ndim must be a constant",
        ),
        Api("gridsize", _G_THREAD, "`gridsize(ndim)`: threads in the grid, int64 or a tuple", True),
        Api(
            "shared.array",
            _G_MEM,
            "`shared.array(shape, dtype)`: block-shared array; `shape` 0 is the launch's dynamic shared memory",
            True,
            "shape: an int or tuple constant, a global/closure/module name, a local assigned once, "
            "arithmetic on those; every `shared.array(0, dtype)` aliases one buffer of the launch's "
            "`[grid, block, stream, nbytes]` bytes, as numba.cuda; dtype: bool, integer, float, "
            "complex or a record dtype; in a `@cuda.jit(device=True)` function one array per "
            "function, whichever call reaches it (numba.cuda: per function and signature), in an "
            '`@xpu.jit` or `inline="always"` function one per call, as numba.cuda inlines them; '
            "`alignment=`: checked as numba.cuda checks it, no other effect on the CPU",
        ),
        Api(
            "local.array",
            _G_MEM,
            "`local.array(shape, dtype)`: per-thread array",
            True,
            "shape and `alignment=` as `shared.array`",
        ),
        Api(
            "const.array_like",
            _G_MEM,
            "`const.array_like(ary)`: a global array in constant memory",
            True,
            "the global array itself, read-only and frozen at compile time (as numba.cuda)",
        ),
        Api(
            "syncthreads",
            _G_SYNC,
            "block barrier",
            True,
            "the block runs as one group of lanes, in step at every barrier",
        ),
        Api(
            "syncthreads_count",
            _G_SYNC,
            "`(pred)`: barrier; threads with int32(pred) != 0 (int32)",
            True,
            "pred must be an integer, as numba.cuda",
        ),
        Api("syncthreads_and", _G_SYNC, "`(pred)`: barrier; 1 if every thread's pred != 0 (int32)", True),
        Api("syncthreads_or", _G_SYNC, "`(pred)`: barrier; 1 if any thread's pred != 0 (int32)", True),
        Api(
            "syncwarp",
            _G_SYNC,
            "`syncwarp(mask=0xffffffff)`: warp barrier",
            True,
            "ends a region: writes before it are seen by the wave after it",
        ),
        Api(
            "threadfence",
            _G_SYNC,
            "device-wide memory fence",
            True,
            "a sequentially consistent fence; ends a region like syncwarp",
        ),
        Api("threadfence_block", _G_SYNC, "block-wide memory fence", True, "as threadfence"),
        Api("threadfence_system", _G_SYNC, "system-wide memory fence", True, "as threadfence"),
        Api(
            "shfl_sync",
            _G_WARP,
            "`(mask, value, src_lane)`: value of lane src_lane & 31",
            True,
            "value: 32/64-bit int or float (numba.cuda's rule); mask: an integer; the selector's "
            "low five bits, as the GPU reads them (`shfl.sync`); a source lane that is inactive, "
            "has exited or is past a partial wave gives the lane's own value, one outside the mask "
            "but active its value, where PTX leaves both undefined (`debug=True` reports them: "
            "item 13 above)",
            False,
        ),
        Api(
            "shfl_up_sync",
            _G_WARP,
            "`(mask, value, delta)`: value of lane laneid - (delta & 31), own value below lane 0",
            True,
            "as shfl_sync (a delta of -1 reads lane laneid - 31, 33 reads laneid - 1)",
            False,
        ),
        Api(
            "shfl_down_sync",
            _G_WARP,
            "`(mask, value, delta)`: value of lane laneid + (delta & 31), own value past lane 31",
            True,
            "as shfl_sync (a delta of 33 reads laneid + 1)",
            False,
        ),
        Api(
            "shfl_xor_sync",
            _G_WARP,
            "`(mask, value, lane_mask)`: value of lane laneid ^ (lane_mask & 31)",
            True,
            "as shfl_sync",
            False,
        ),
        Api(
            "all_sync",
            _G_WARP,
            "`(mask, pred)`: all lanes of mask (bool)",
            True,
            "mask: an integer; pred: an integer or bool",
            False,
        ),
        Api("any_sync", _G_WARP, "`(mask, pred)`: any lane of mask (bool)", True, "as all_sync", False),
        Api(
            "eq_sync", _G_WARP, "`(mask, pred)`: pred the same in every lane of mask (bool)", True, "as all_sync", False
        ),
        Api("ballot_sync", _G_WARP, "`(mask, pred)`: ballot word of mask (int32)", True, "as all_sync", False),
        Api(
            "match_any_sync",
            _G_WARP,
            "`(mask, value)`: lanes of mask holding this lane's value (int32)",
            True,
            "values compared bit for bit in numba.cuda's value type (floats by their bits; a uint64 as a "
            "float64, so values that round to one double match)",
            False,
        ),
        Api(
            "match_all_sync",
            _G_WARP,
            "`(mask, value)`: `(mask if all equal else 0, all equal)` (tuple of int32, bool)",
            True,
            "as match_any_sync; the mask returned is the lanes of mask "
            "that take part (a full mask in a partial wave gives the wave's lanes), as ballot_sync's",
            False,
        ),
        Api(
            "activemask",
            _G_WARP,
            "lanes active here (uint32)",
            True,
            "the lanes of the wave that reach the call together (docs/semantics.md)",
            False,
        ),
        Api("lanemask_lt", _G_WARP, "bits of the lanes below this one (uint32)", True, "", False),
    ]
    t += _atomic_rows()
    t += [
        Api(
            "popc",
            _G_MATH,
            "`popc(x)`: set bits of integer x, in x's type (also numba.cuda's `x.bit_count()` method)",
            True,
        ),
        Api(
            "brev",
            _G_MATH,
            "`brev(x)`: bits reversed; uint64 for uint64 x, else uint32 (an int64's "
            "low 32 bits, as numba.cuda resolves it)",
            True,
        ),
        Api(
            "clz", _G_MATH, "`clz(x)`: leading zeros of integer x in its width, in x's type (clz(0) is the width)", True
        ),
        Api("ffs", _G_MATH, "`ffs(x)`: 1-based position of the lowest set bit, 0 for 0 (uint32)", True),
        Api(
            "fma",
            _G_MATH,
            "`fma(a, b, c)`: a * b + c rounded once (float32 if each is float32, "
            "bool, int8, int16 or uint8, as numba.cuda resolves it, else float64)",
            True,
            "LLVM `llvm.fma`",
        ),
        Api(
            "cbrt",
            _G_MATH,
            "`cbrt(x)`: cube root (float32 for float32, bool, int8, int16, uint8 x, else float64)",
            True,
            "the C library's cbrt",
        ),
        Api(
            "selp",
            _G_MATH,
            "`selp(pred, a, b)`: a if pred else b; a and b of one type ((u)int16..64, float32, float64)",
            True,
        ),
        Api(
            "math.*",
            _G_MATH,
            "`math.sin`, `math.exp`, `math.fmod`, `math.modf`, `math.remainder`, "
            "`math.nextafter`, ... (libdevice on the GPU)",
            True,
            "typed as numba.cuda types them (`math.floor`, `ceil`, `trunc` are floats, not int64; "
            "`math.pow(float32, int32)` is float32); `sin`, `cos`, `exp`, `exp2`, `expm1`, `sinh`, "
            "`atan2` of float64 and `sin`, `cos`, `log`, `log2`, `log10`, `atan2`, `hypot` (`expm1` with "
            "some libdevice versions) of float32 run libdevice's own code on the CPU (the GPU's bits, "
            "also as NumPy ufuncs of scalars and inside `cmath`; numquad/cpu/libdevice.py), "
            "the others Numba's CPU math and the C library: results may differ in the last bit "
            "from libdevice",
            False,
        ),
        Api(
            "random.xoroshiro128p_*",
            _G_MISC,
            "`xoroshiro128p_uniform_float32(states, i)`, `_float64`, `normal_*`, `next`, `jump`: "
            "random numbers from a per-thread state",
            True,
            "numba.cuda's own functions, compiled from their Python source as on the GPU (integer "
            "arithmetic: the GPU's numbers; `normal_*` read `math.log` of a float32 and `math.cos`, "
            "which the CPU target computes with libdevice's own code: docs/semantics.md). "
            "Without a GPU make the states with `np.empty(n, dtype=xoroshiro128p_dtype)` and "
            "`init_xoroshiro128p_states_cpu(states, seed, 0)`, the states `create_xoroshiro128p_states(n, seed)` "
            "copies to a GPU",
            False,
        ),
        Api(
            "literal_unroll",
            _G_MISC,
            "`for x in literal_unroll(t)`: loop over a heterogeneous tuple (also `numba.literal_unroll`)",
            True,
            "written out once per element at compile time: `t` a "
            "global or closure tuple, a tuple argument or a tuple display; no `break`/`continue` in the loop",
            False,
        ),
        Api("nanosleep", _G_MISC, "`nanosleep(ns)`: sleep about ns nanoseconds", True, "a no-op"),
    ]
    for n in ("ldca", "ldcg", "ldcs", "ldlu", "ldcv"):
        t.append(
            Api(
                n,
                _G_MISC,
                f"`{n}(array, i)`: load with a cache hint",
                True,
                "a plain load `array[i]`, bounds-checked; numba.cuda's type checks",
                False,
            )
        )
    for n in ("stcg", "stcs", "stwb", "stwt"):
        t.append(
            Api(
                n,
                _G_MISC,
                f"`{n}(array, i, value)`: store with a cache hint",
                True,
                "a plain store `array[i] = value` (a statement), bounds-checked; numba.cuda's type checks",
                False,
            )
        )
    t += [
        Api(
            "cg.this_grid",
            _G_NO,
            "cooperative groups: `this_grid().sync()` grid barrier",
            False,
            "split the kernel at the grid barrier into two launches",
            False,
        ),
        Api("fp16.*", _G_NO, "half precision (`hadd`, `hfma`, ...) and float16 arrays", False, "use float32", False),
        Api("bf16.*", _G_NO, "bfloat16", False, "use float32", False),
        Api("libdevice.*", _G_NO, "direct libdevice calls (`libdevice.sinf`, ...)", False, "use `math.*`", False),
        Api(
            "float32x4",
            _G_NO,
            "vector types (`float32x4`, `int2`, ...)",
            False,
            "use separate scalars or a small local array",
            False,
        ),
        Api(
            "shared.array(extension type)",
            _G_NO,
            "shared/local arrays of extension (struct-model) types",
            False,
            "use a record (structured) dtype",
            False,
        ),
        Api(
            "declare_device",
            _G_NO,
            "external (C/PTX) device functions, `link=`",
            False,
            "write the function in Python",
            False,
        ),
    ]
    return t


API = _rows()

#: Barriers with a block-wide reduction: name -> reduction.
BARRIER_REDUCE = {"syncthreads_count": "count", "syncthreads_and": "and", "syncthreads_or": "or"}
#: Statements that end a region (writes before them are seen by every lane after).
REGION_ENDS = ("syncwarp", "threadfence", "threadfence_block", "threadfence_system")
#: Builtins whose value is the same in every lane when their arguments are.
PURE_BUILTINS = ("popc", "brev", "clz", "ffs", "fma", "cbrt", "selp", "const.array_like")

_GROUPS = ("threadIdx", "blockIdx", "blockDim", "gridDim", "shared", "local", "const", "atomic")
#: The numba.cuda names the front end maps to xpu builtins (besides frontend's own).
_EXTRA_BUILTINS = tuple(_xpu.CUDA_FUNCTIONS) + ("const", "const.array_like")
#: numba.cuda's cache-hint loads and stores: the front end writes them as subscripts
#: (cpu/spellings.py), so release builds' bounds checks see them
HINTS = _xpu.CUDA_CACHE_HINTS


def _cuda():
    return sys.modules.get("numba.cuda")


def _path(obj, path):
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def extra_aliases(cuda):
    """{id(numba.cuda object): (object, builtin name)} for the names this module lowers."""
    out = {}
    for n in _EXTRA_BUILTINS + HINTS:
        obj = _path(cuda, n)
        if obj is not None:
            out[id(obj)] = (obj, n)
    return out


def _supported_ids(cuda):
    ids = set()
    for a in API:
        if not a.cpu or "*" in a.name:
            continue
        base = a.name.split(".")[0] if a.name.split(".")[0] in _GROUPS else a.name
        for p in {a.name, base}:
            obj = _path(cuda, p)
            if obj is not None:
                ids.add(id(obj))
    for g in _GROUPS:
        obj = getattr(cuda, g, None)
        if obj is not None:
            ids.add(id(obj))
    return ids


_SUPPORTED = None
_DENY_MODULES = ("cg", "fp16", "bf16", "fp8", "libdevice", "vector_types", "ffi", "simulator")


def _is_cuda_thing(obj):
    mod = getattr(obj, "__module__", None)
    if not isinstance(mod, str):
        return None
    if not (mod == "numba.cuda" or mod.startswith("numba.cuda.")):
        return None
    if mod.startswith("numba.cuda.tests."):
        return None  # numba-cuda's own tests: user code (the yardstick of docs/numba-cuda.md)
    return mod


def denied_name(obj):
    """``libdevice.sinf`` for a function of a numba.cuda module numquad runs on no
    CPU-side target (libdevice, cooperative groups, fp16, ...), else None."""
    mod = _is_cuda_thing(obj)
    if mod is None or not callable(obj):
        return None
    parts = mod.split(".")
    if len(parts) > 2 and parts[2] in _DENY_MODULES:
        return f"{parts[2]}.{getattr(obj, '__name__', '?')}"
    return None


def _api_name(obj, node, fe):
    """The `cuda.X` spelling of *obj* as the user wrote it."""
    if isinstance(node, ast.Attribute):
        parts = []
        n = node
        while isinstance(n, ast.Attribute):
            parts.append(n.attr)
            n = n.value
        parts.reverse()
        base = fe.env.resolve(n) if isinstance(n, ast.Name) else None
        if isinstance(base, _pytypes.ModuleType) and base.__name__.startswith("numba.cuda"):
            sub = base.__name__[len("numba.cuda") :].lstrip(".")
            return ".".join(([sub] if sub else []) + parts)
        if isinstance(base, _pytypes.ModuleType) and base.__name__ == "numba" and parts[:1] == ["cuda"]:
            parts = parts[1:]  # numba.cuda.libdevice.sinf
        return ".".join(parts)
    mod = _is_cuda_thing(obj) or ""
    sub = mod[len("numba.cuda") :].lstrip(".")
    name = getattr(obj, "__name__", None) or getattr(node, "id", "?")
    return f"{sub}.{name}" if sub in _DENY_MODULES else name


def _check_dim3_values(fe):
    """``threadIdx`` (or ``blockIdx``, ``blockDim``, ``gridDim``) used as a value,
    not through ``.x``, ``.y`` or ``.z``: numquad/_desugar.py reads a name bound to
    one through the builtin; what is left is one clear error."""
    parents = {}
    for node in ast.walk(fe.fn):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in ast.walk(fe.fn):
        if not isinstance(node, (ast.Name, ast.Attribute)) or not isinstance(node.ctx, ast.Load):
            continue
        group = fe.builtin_of(node)
        if group not in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
            continue
        up = parents.get(id(node))
        if isinstance(up, ast.Attribute) and up.attr in ("x", "y", "z"):
            continue
        fe.error(
            f"`{group}` as a value (a dim3) is not supported by numquad's CPU target: read "
            f"`{group}.x`, `.y` or `.z` where it is used, or bind it to a name that is only "
            f"read so (`t = cuda.{group}` ... `t.x`)",
            node,
        )


_CPU_OVERLOADS = {}  # id(function) -> (function, its overload functions copied)


def _overload_for_the_cpu(fn):
    """Register, for Numba's CPU target, each overload of *fn* made for numba.cuda
    (``numba.cuda.extending.overload``, whose registry the CPU target's typing does
    not read, or ``numba.extending.overload(..., target="cuda")``): the same
    overload function, options and inlining. Its implementation is compiled by
    Numba's CPU target, without numquad's rewrites (docs/numba-cuda.md). True when
    *fn* has such an overload now."""
    from ..xpu import overload_templates

    templates = [
        t
        for t, by_cuda in overload_templates(fn)
        if by_cuda or (getattr(t, "metadata", None) or {}).get("target") == "cuda"
    ]
    if not templates:
        return False
    done = _CPU_OVERLOADS.get(id(fn))
    copied = set(done[1]) if done is not None and done[0] is fn else set()
    for template in templates:
        func = template._overload_func
        if id(func) in copied:
            continue
        options = {
            k: v
            for k, v in (getattr(template, "_jit_options", None) or {}).items()
            if k not in ("no_cpython_wrapper", "nopython", "inline")
        }
        inline = getattr(getattr(template, "_inline", None), "value", "never")
        # a generic overload stays generic and a CUDA one becomes a CPU one, so that the
        # CPU's typing prefers the CUDA one as numba.cuda's does (the more specific)
        target = (getattr(template, "metadata", None) or {}).get("target", "generic")

        @functools.wraps(func)
        def copy(*args, _func=func, **kwargs):
            return _func(*args, **kwargs)

        copy._nq_copy = True  # (not the user's: xpu.numba_overload_targets)
        overload(
            fn,
            jit_options=options,
            strict=getattr(template, "_strict", True),
            inline=inline,
            prefer_literal=getattr(template, "prefer_literal", False),
            target="generic" if target == "generic" else "cpu",
        )(copy)
        _only_for_numquad(fn, copy)
        copied.add(id(func))
    _CPU_OVERLOADS[id(fn)] = (fn, frozenset(copied))
    return bool(copied)


def _only_for_numquad(fn, copy):
    """Make the CPU copy *copy* of a numba.cuda overload of *fn* invisible to any
    compile but numquad's: registered in Numba's one CPU typing registry, it would
    otherwise be picked, as the more specific overload, by a user's plain
    ``numba.njit`` code calling *fn* later in the process (the CUDA implementation
    where Numba's CPU target takes the generic one). Numba tries the next overload
    when one raises a TypingError."""
    from ..xpu import overload_templates

    for template, _ in overload_templates(fn):
        if template._overload_func is not copy or getattr(template, "_nq_gated", False):
            continue
        ungated = template.generic

        def generic(self, args, kws, _ungated=ungated):
            if not in_numquad_compile():
                raise TypingError(
                    f"numquad's CPU copy of a numba.cuda overload of "
                    f"{getattr(fn, '__name__', fn)} is for numquad's kernels only"
                )
            return _ungated(self, args, kws)

        template.generic = generic
        template._nq_gated = True


def _global_loads(fe):
    """(node, the object it names, or ``_control.MISSING``) for each name or attribute
    chain *fe*'s function reads that is not a local."""
    for node in ast.walk(fe.fn):
        if not isinstance(node, (ast.Name, ast.Attribute)) or not isinstance(node.ctx, ast.Load):
            continue
        if isinstance(node, ast.Name) and node.id in fe.env.locals:
            continue
        yield node, fe.env.resolve(node)


def _check_overloads(fe):
    """The user's functions *fe*'s function names that Numba compiles through an
    ``overload``: numba.cuda's are registered for the CPU (:func:`_overload_for_the_cpu`);
    one for ``target="cpu"``, which numba.cuda never uses, is one line."""
    from .._control import MISSING as _MISSING
    from ..xpu import numba_overload_targets

    for node, obj in _global_loads(fe):
        if obj is _MISSING:
            continue
        copied = _overload_for_the_cpu(obj)  # (a user's function: xpu.overload_templates)
        overloads = numba_overload_targets(obj)
        if "cpu" in overloads:
            # numba.cuda never uses it (a CUDA one or a generic one, else none): the
            # CPU target would, so it is one line rather than another function's result
            name = node.id if isinstance(node, ast.Name) else node.attr
            fe.error(
                f'`{name}` has a numba `overload` for target="cpu", which numba.cuda does not '
                f"use and numquad's CPU target follows numba.cuda: register it for target="
                f'"generic" or "cuda"',
                node,
            )
        if overloads and not overloads & {"generic", "cpu"} and not copied:
            name = node.id if isinstance(node, ast.Name) else node.attr
            fe.error(
                f"`{name}` is compiled through a numba `overload` for the CUDA target only, which "
                f'numquad\'s CPU target does not support: register it without `target="cuda"`, or '
                f"write it as a device function (@cuda.jit(device=True) or @xpu.jit)",
                node,
            )


def check_supported(fe):
    """One clear error for the first numba.cuda name in *fe*'s function that the CPU
    target does not support (instead of Numba's "Unknown attribute")."""
    global _SUPPORTED
    _check_dim3_values(fe)
    _check_overloads(fe)
    cuda = _cuda()
    if cuda is None:
        return
    if _SUPPORTED is None:
        _SUPPORTED = _supported_ids(cuda)
        from .spellings import cuda_function_names

        for obj, _ in (cuda_function_names() or {}).values():
            _SUPPORTED.add(id(obj))
    from .._control import MISSING as _MISSING
    from ..xpu import Dispatcher, is_foreign_device_function, is_numba_function

    for node, obj in _global_loads(fe):
        if obj is _MISSING:
            if isinstance(node, ast.Attribute):
                base = fe.env.resolve(node.value)
                if (
                    base is cuda
                    or (isinstance(base, _pytypes.ModuleType) and base.__name__.startswith("numba.cuda."))
                    or (isinstance(base, type) and _is_cuda_thing(base) == "numba.cuda.stubs")
                ):
                    fe.error(unsupported(_api_name(None, node, fe)), node)
            continue
        foreign = getattr(obj, "_numquad_foreign", obj)  # as_xpu's original
        if is_numba_function(foreign) and not foreign._can_compile:
            name = node.id if isinstance(node, ast.Name) else node.attr
            fe.typing_error(
                f"Untyped global name '{name}': using cpu function on device: `{name}` is a plain "
                f"Numba function with an explicit signature, which turns its compiling off, so "
                f"numba.cuda cannot compile it for the GPU; drop the signature, or make it a device "
                f"function (@cuda.jit(device=True) or @xpu.jit)",
                node,
            )
        if id(obj) in _SUPPORTED or obj is cuda or isinstance(obj, (types.Type, Dispatcher)):
            continue
        if isinstance(obj, _pytypes.ModuleType):
            name = obj.__name__
            if name.startswith("numba.cuda.") and name.split(".")[2] in _DENY_MODULES:
                fe.error(unsupported(name.split(".", 2)[2] + ".*"), node)
            continue
        if is_foreign_device_function(obj):
            continue
        mod = _is_cuda_thing(obj)
        if mod is not None and type(obj).__name__ == "ExternFunction":
            fe.error(
                f"`{_api_name(obj, node, fe)}` is an external function (cuda.declare_device), "
                f"which numquad's CPU target cannot call: write it in Python",
                node,
            )
        if mod is None or not (callable(obj) or isinstance(obj, type)):
            continue
        if isinstance(obj, type) and issubclass(obj, types.Type):
            continue
        fe.error(unsupported(_api_name(obj, node, fe)), node)


# ---------------------------------------------------------------------------
# Named constants (shapes, selectors)
# ---------------------------------------------------------------------------


def _int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def constant_value(fe, node):
    """The int or tuple of ints *node* stands for at compile time, else None."""
    v = fe._constant_int(node)
    if v is not None:
        return v
    if isinstance(node, ast.Tuple):
        vals = [fe._constant_int(e) for e in node.elts]
        return tuple(vals) if all(x is not None for x in vals) else None
    if isinstance(node, ast.Name) and node.id in fe.consts:
        return fe.consts[node.id]
    if isinstance(node, (ast.Name, ast.Attribute)):
        from .._control import MISSING as _MISSING

        if isinstance(node, ast.Name) and node.id in fe.env.locals:
            return None
        obj = fe.env.resolve(node)
        if obj is not _MISSING and isinstance(obj, tuple) and all(_int(x) for x in obj):
            return tuple(int(x) for x in obj)
    return None


def compile_time_object(fe, node):
    """The object an argument names when it is known at compile time and is not a
    plain value: a builtin (``cuda.atomic.add``), a device function, a dtype."""
    from .._control import MISSING as _MISSING
    from .resolve import builtin_name
    from ..xpu import Dispatcher

    if not isinstance(node, (ast.Name, ast.Attribute)):
        return None
    if isinstance(node, ast.Name) and node.id in fe.env.locals:
        return None
    obj = fe.env.resolve(node)
    if obj is _MISSING:
        return None
    if (
        builtin_name(obj) is not None
        or isinstance(obj, (Dispatcher, types.Type, np.dtype))
        or (isinstance(obj, type) and issubclass(obj, np.generic))
    ):
        return obj
    return None


def constant_shape(fe, node):
    """A shared/local array shape as a list of ints (None where not constant)."""
    v = constant_value(fe, node)
    if isinstance(v, int):
        return [v]
    if isinstance(v, tuple):
        return list(v)
    if isinstance(node, ast.Tuple):
        return [fe._constant_int(e) for e in node.elts]
    return [None]


def allocation_wording(error, kind, call, pyfunc, argtypes):
    """numba.cuda's words for the ``shared.array``/``local.array`` (*kind*) *call* of
    *pyfunc* that *error* refuses, appended to its message: "No implementation of
    function ... found for signature: >>> array(...)", the arguments as Numba types
    them at *argtypes*. Nothing without numba-cuda, or when an argument cannot be
    typed alone (it reads a local)."""
    cuda = sys.modules.get("numba.cuda")
    if cuda is None:
        return
    from numba.core.compiler_lock import global_compiler_lock
    from .typing import expression_types

    with global_compiler_lock:
        tys = expression_types(pyfunc, argtypes, list(call.args) + [k.value for k in call.keywords])
    if tys is None:
        return
    n = len(call.args)
    sig = ", ".join([str(t) for t in tys[:n]] + [f"{k.arg}={t}" for k, t in zip(call.keywords, tys[n:])])
    error.args = (
        f"{error.args[0]}\nnumba.cuda: No implementation of function "
        f"Function({getattr(cuda, kind).array!r}) found for signature:\n \n >>> array({sig})",
    ) + error.args[1:]


def invariant_aliases(body, uniform):
    """ids of the target Names of ``x = y`` where x has no other store and y is uniform
    and never assigned (a parameter or a shared array): x holds y's value in every
    lane that ran the store, in any position."""
    stores = {}
    for n in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
    aliases = [
        n
        for n in ast.walk(ast.Module(body=body, type_ignores=[]))
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and isinstance(n.value, ast.Name)
        and stores.get(n.targets[0].id) == 1
        and getattr(n, "_nq_op", None) is None
    ]
    invariant = {n for n in uniform if not stores.get(n)}
    out = set()
    changed = True
    while changed:  # aliases of aliases (nested inlining)
        changed = False
        for n in aliases:
            if id(n.targets[0]) not in out and n.value.id in invariant and n.targets[0].id in uniform:
                out.add(id(n.targets[0]))
                invariant.add(n.targets[0].id)
                changed = True
    return out


def local_constants(fe, bindings=None):
    """{name: int or tuple of ints} for the locals of *fe*'s function assigned exactly
    once, by a top-level statement, to a constant (``N = 16``, ``SHAPE = (N, 2 * N)``),
    and for parameters an inlining call site binds to constants (*bindings*), unless
    the body assigns them."""
    stores = {}
    for n in ast.walk(fe.fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
    consts = {}
    for k, v in (bindings or {}).items():
        if k not in fe.env.params or stores.get(k):
            continue
        if _int(v) or (isinstance(v, tuple) and all(_int(x) for x in v)):
            consts[k] = v
        else:
            # a compile-time object (a device function, a builtin such as cuda.atomic.add,
            # a dtype): the parameter names it, as a global would
            fe.env.closure[k] = v
            fe.env.locals.discard(k)
    fe.consts = consts
    for s in fe.fn.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            name = s.targets[0].id
            if stores.get(name) == 1 and name not in fe.env.params:
                v = constant_value(fe, s.value)
                if v is not None:
                    consts[name] = v
    return consts


# ---------------------------------------------------------------------------
# Scalar intrinsics (numba.cuda's result types)
# ---------------------------------------------------------------------------


def _intr(builder, name, args, retty):
    fnty = ir.FunctionType(retty, [a.type for a in args])
    return builder.call(cgutils.get_or_insert_function(builder.module, fnty, name), args)


def _int_arg(name, x):
    x = types.unliteral(x)
    if isinstance(x, types.Boolean):
        return types.int8
    if not isinstance(x, types.Integer):
        raise TypingError(f"cuda.{name}(x): x got {x}; it takes an integer")
    return x


@intrinsic
def _popc(typingctx, x):
    ty = _int_arg("popc", x)

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[0], sig.args[0], ty)
        return _intr(builder, f"llvm.ctpop.i{ty.bitwidth}", [v], v.type)

    return ty(x), codegen


@intrinsic
def _clz(typingctx, x):
    ty = _int_arg("clz", x)

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[0], sig.args[0], ty)
        return _intr(builder, f"llvm.ctlz.i{ty.bitwidth}", [v, ir.Constant(ir.IntType(1), 0)], v.type)

    return ty(x), codegen


@intrinsic
def _brev(typingctx, x):
    ty = _int_arg("brev", x)
    # numba.cuda has a uint32 and a uint64 case and resolves every other integer to
    # the uint32 one, an int64 too (its low 32 bits): the GPU's bits, kept here
    res = types.uint64 if ty == types.uint64 else types.uint32

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[0], sig.args[0], res)
        return _intr(builder, f"llvm.bitreverse.i{res.bitwidth}", [v], v.type)

    return res(x), codegen


@intrinsic
def _ffs(typingctx, x):
    ty = _int_arg("ffs", x)
    wide = (types.int32 if ty.signed else types.uint32) if ty.bitwidth <= 32 else ty

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[0], sig.args[0], wide)
        tz = _intr(builder, f"llvm.cttz.i{wide.bitwidth}", [v, ir.Constant(ir.IntType(1), 0)], v.type)
        pos = builder.add(tz, v.type(1))
        r = builder.select(builder.icmp_unsigned("==", v, v.type(0)), v.type(0), pos)
        return builder.trunc(r, ir.IntType(32)) if wide.bitwidth > 32 else r

    return types.uint32(x), codegen


# numba.cuda types cbrt and fma with a float32 and a float64 case; Numba takes the
# float32 one unless an argument converts to float32 only unsafely (tests/
# test_numba_cuda_compat.py compares both targets' result types)
_SAFE_TO_FLOAT32 = (types.float32, types.boolean, types.int8, types.int16, types.uint8)


def _float_res(name, *tys):
    out = types.float32
    for t in tys:
        t = types.unliteral(t)
        if not isinstance(t, (types.Integer, types.Float, types.Boolean)):
            raise TypingError(
                f"cuda.{name}: got {t}; it takes float32 or float64 (an integer or bool "
                f"becomes float32 when it fits float32 safely: bool, int8, int16, uint8)"
            )
        if t not in _SAFE_TO_FLOAT32:
            out = types.float64
    return out


@intrinsic
def _fma(typingctx, a, b, c):
    res = _float_res("fma", a, b, c)

    def codegen(context, builder, sig, args):
        vs = [context.cast(builder, v, t, res) for v, t in zip(args, sig.args)]
        return _intr(builder, f"llvm.fma.f{res.bitwidth}", vs, vs[0].type)

    return res(a, b, c), codegen


@intrinsic
def _cbrt(typingctx, x):
    res = _float_res("cbrt", x)

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[0], sig.args[0], res)
        return _intr(builder, "cbrtf" if res == types.float32 else "cbrt", [v], v.type)

    return res(x), codegen


_SELP_TYPES = (
    types.float64,
    types.float32,
    types.int16,
    types.uint16,
    types.int32,
    types.uint32,
    types.int64,
    types.uint64,
)


@intrinsic
def _selp(typingctx, test, a, b):
    ta, tb = types.unliteral(a), types.unliteral(b)
    if ta != tb or ta not in _SELP_TYPES:
        raise TypingError(
            f"cuda.selp(pred, a, b): a and b got {ta} and {tb}; it takes two values of "
            f"one type: {', '.join(str(t) for t in _SELP_TYPES)}"
        )

    def codegen(context, builder, sig, args):
        c = context.cast(builder, args[0], sig.args[0], types.boolean)
        va = context.cast(builder, args[1], sig.args[1], ta)
        vb = context.cast(builder, args[2], sig.args[2], ta)
        return builder.select(c, va, vb)

    return ta(test, a, b), codegen


@intrinsic
def _nanosleep(typingctx, ns):
    if not isinstance(types.unliteral(ns), types.Integer):
        raise TypingError(f"cuda.nanosleep(ns): ns got {ns}; it takes an integer")

    def codegen(context, builder, sig, args):
        return context.get_dummy_value()

    return types.none(ns), codegen


@intrinsic
def _fence(typingctx):
    def codegen(context, builder, sig, args):
        builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.none(), codegen


# numba.cuda's math functions that Numba's CPU target lacks (libdevice on the GPU; the
# C library, or LLVM's frem, here): math.fmod, math.modf, math.remainder, math.nextafter


def _libm2(name):
    @intrinsic
    def impl(typingctx, x, y):
        res = _float_res(f"math.{name}", x, y)

        def codegen(context, builder, sig, args):
            a = context.cast(builder, args[0], sig.args[0], res)
            b = context.cast(builder, args[1], sig.args[1], res)
            if name == "fmod":
                return builder.frem(a, b)
            return _intr(builder, name + ("f" if res == types.float32 else ""), [a, b], a.type)

        return res(x, y), codegen

    return impl


@intrinsic
def _modf(typingctx, x):
    res = _float_res("math.modf", x)
    tup = types.UniTuple(res, 2)

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[0], sig.args[0], res)
        sfx = f"f{res.bitwidth}"
        ip = _intr(builder, f"llvm.trunc.{sfx}", [v], v.type)
        inf = builder.fcmp_ordered("==", _intr(builder, f"llvm.fabs.{sfx}", [v], v.type), v.type(float("inf")))
        frac = builder.select(inf, v.type(0.0), builder.fsub(v, ip))
        frac = _intr(builder, f"llvm.copysign.{sfx}", [frac, v], v.type)
        return context.make_tuple(builder, tup, [frac, ip])

    return tup(x), codegen


def scalar_call(env, node, bind):
    """The call *node* (an ``ast.Call``, its arguments rewritten already) as every CPU
    compile writes it, else None. A kernel's frontend (cpu/spellings.py) and a device
    function's checked copy (cpu/devicefn.py) both use it, so that a function computes
    the same inlined into a kernel as compiled on its own:

    - ``hasattr(M, "name")`` of a module or class: Python's answer (numquad/_control.py);
    - ``round(x, ndigits)``: numba.cuda's algorithm (:func:`round_to`);
    - ``x.bit_count()`` of an integer: ``cuda.popc(x)``, as numba.cuda types it.

    *env* resolves the function's names (``_control.Env``); *bind(name, value)* makes
    *name* reach *value* in the generated code."""
    from .._control import hasattr_constant, is_bit_count

    f = node.func
    if is_bit_count(node, env.resolve):
        try:
            from numba import cuda
        except ImportError:  # no numba-cuda: Numba's own error stands
            return None
        return _call_of(node, "_nq_bit_count", cuda.popc, [f.value], bind)
    folded = hasattr_constant(env, node)
    if folded is not None:
        return folded
    if len(node.args) == 2 and not node.keywords and env.resolve(f) is round:
        # a float32 x rounds in float64, as on the GPU
        return _call_of(node, "_nq_round_to", round_to, node.args, bind)
    if len(node.args) == 2 and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args):
        fn = env.resolve(f)
        if fn is max or fn is min:
            # two floats: libdevice's fmax/fmin on the GPU (a NaN loses)
            return _call_of(node, f"_nq_cuda_{fn.__name__}", cuda_max if fn is max else cuda_min, node.args, bind)
    return None


def cuda_max(a, b):
    """``max(a, b)`` as numba.cuda computes it: of two floats (float32 and float64 in
    any mix, in the wider type) libdevice's ``fmax``, PTX ``max.f32``/``max.f64``: a
    NaN operand loses to a number and +0.0 is above -0.0, the combine rule of
    docs/semantics.md; of anything else Numba's ``max`` (Python's: ``max(nan, 1.0)``
    is NaN, which numba.cuda's ``max(x, 0)`` and three-argument ``max`` give too).
    Numba's CPU ``max`` of two floats kept a NaN first operand: ``max(nan, 1.0)``
    was NaN on the CPU and 1.0 on the GPU."""
    return max(a, b)


def cuda_min(a, b):
    """``min(a, b)`` as numba.cuda computes it (:func:`cuda_max`: libdevice's
    ``fmin`` of two floats, -0.0 below +0.0)."""
    return min(a, b)


def _float_minmax(name):
    @intrinsic
    def minmax(typingctx, a, b):
        ty = types.float64 if 64 in (a.bitwidth, b.bitwidth) else types.float32

        def codegen(context, builder, sig, args):
            from .._llvmops import float_minmax

            x, y = (context.cast(builder, v, t, ty) for v, t in zip(args, sig.args))
            return float_minmax(builder, name, x, y)

        return ty(a, b), codegen

    return minmax


def _overload_minmax(fn, builtin, name):
    floats = _float_minmax(name)

    @overload(fn)
    def impl(a, b):
        if isinstance(a, types.Float) and isinstance(b, types.Float):
            return lambda a, b: floats(a, b)
        return lambda a, b: builtin(a, b)


_overload_minmax(cuda_max, max, "max")
_overload_minmax(cuda_min, min, "min")
# numba.cuda's own arithmetic under numquad's names: no side effects (numquad/_desugar.py, _kind)
cuda_max._nq_pure = cuda_min._nq_pure = True


def _call_of(node, name, value, args, bind):
    bind(name, value)
    return ast.copy_location(
        ast.Call(func=ast.copy_location(ast.Name(name, ast.Load()), node.func), args=args, keywords=[]), node
    )


def round_to(x, ndigits):
    """``round(x, ndigits)`` as numba.cuda computes it (its ``round_to_impl``): in
    float64, ``y = x * 10**ndigits`` rounded to an int64 (half to even,
    saturating: ``-0.0`` rounds to ``+0.0``, ``|y| >= 2**63`` to the int64 limit),
    then divided back. Numba's CPU ``round`` rounds a float32 ``x`` in float32 and
    keeps ``y`` a float: ``round(np.float32(0.3425), 3)`` was 0.342 on the CPU and
    0.343 on the GPU."""
    return round(x, ndigits)


round_to._nq_pure = True


def _round_ndigits(x, ndigits):
    # numba-cuda's algorithm, step for step; round(y) is an int64 here, converted
    # as the GPU converts (numquad/_conversions.py)
    if math.isinf(x) or math.isnan(x):
        return np.float64(x)
    if ndigits >= 0:
        if ndigits > 22:
            pow1 = 10.0 ** (ndigits - 22)
            pow2 = 1e22
        else:
            pow1 = 10.0**ndigits
            pow2 = 1.0
        y = (x * pow1) * pow2
        if math.isinf(y):
            return np.float64(x)
    else:
        pow1 = 10.0 ** (-ndigits)
        pow2 = 1.0
        y = x / pow1
    z = np.float64(round(y))
    if math.fabs(y - z) == 0.5:
        z = 2.0 * round(y / 2.0)
    if ndigits >= 0:
        return (z / pow2) / pow1
    return z * pow1


@overload(round_to)
def _round_to(x, ndigits):
    if isinstance(x, types.Float):
        nb_round = numba.njit(inline="always")(_round_ndigits)
        dt = np.float32 if x.bitwidth == 32 else np.float64
        return lambda x, ndigits: dt(nb_round(x, ndigits))
    return lambda x, ndigits: round(x, ndigits)


# math functions that numba.cuda types otherwise than Numba's CPU target: its case
# lists (numba-cuda's cudamath.py), picked from by Numba's overload resolution, the
# rules both use. math.floor/ceil/trunc are floats there (math.floor(nan) is NaN, not
# an int64), pow(float32, int32) and ldexp(float32, n) float32, an int8 argument
# float32 where it converts safely.
_F32, _F64, _I32 = types.float32, types.float64, types.int32
_CUDA_MATH_CASES = {
    "floor": [_F64(types.int64), _F64(types.uint64), _F32(_F32), _F64(_F64)],
    "pow": [_F32(_F32, _F32), _F64(_F64, _F64), _F32(_F32, _I32), _F64(_F64, _I32)],
    "ldexp": [_F32(_F32, _I32), _F64(_F64, _I32)],
}
_CUDA_MATH_CASES["ceil"] = _CUDA_MATH_CASES["trunc"] = _CUDA_MATH_CASES["floor"]


def _cuda_case(typingctx, name, args):
    """The case numba.cuda's typing picks for ``math.<name>(*args)``, or a
    TypingError naming what it takes."""
    cases = _CUDA_MATH_CASES[name]
    args = tuple(types.unliteral(a) for a in args)
    if all(isinstance(a, (types.Integer, types.Float, types.Boolean)) for a in args):
        sig = typingctx.resolve_overload(f"math.{name}", cases, args, {})
        if sig is not None:
            return sig
    raise TypingError(
        f"math.{name}: got {', '.join(str(a) for a in args)}; it takes "
        f"{' or '.join('(' + ', '.join(str(t) for t in c.args) + ')' for c in cases)}"
    )


def _rounding(name):
    @intrinsic
    def impl(typingctx, x):
        sig = _cuda_case(typingctx, name, (x,))

        def codegen(context, builder, sig_, args):
            # an integer case (int64 or uint64 -> float64) converts to the float first
            v = context.cast(builder, args[0], sig_.args[0], sig.args[0])
            v = context.cast(builder, v, sig.args[0], sig.return_type)
            return _intr(builder, f"llvm.{name}.f{sig.return_type.bitwidth}", [v], v.type)

        return sig.return_type(x), codegen

    return impl


def _pow_like(name):
    @intrinsic
    def impl(typingctx, x, y):
        sig = _cuda_case(typingctx, name, (x, y))

        def codegen(context, builder, sig_, args):
            a = context.cast(builder, args[0], sig_.args[0], sig.args[0])
            b = context.cast(builder, args[1], sig_.args[1], sig.args[1])
            f32 = sig.return_type == types.float32
            if name == "ldexp":
                return _intr(builder, "ldexpf" if f32 else "ldexp", [a, b], a.type)
            if sig.args[1] == types.int32:
                # numba.cuda's powi case, as ``x ** n`` (numquad/_power.py). Not llvm.powi:
                # LLVM lowers a runtime exponent to compiler-rt's __powidf2, which Numba's
                # JIT does not link (a segmentation fault, or an abort naming the symbol)
                impl = _power.float_power(sig.return_type, True)
                return context.compile_internal(builder, impl, sig.return_type(sig.args[0], types.int32), [a, b])
            return _intr(builder, "powf" if f32 else "pow", [a, b], a.type)

        return sig.return_type(x, y), codegen

    return impl


@intrinsic
def _frexp_arg(typingctx, x):
    # numba.cuda's frexp has a float32 and a float64 case: an int8 takes the float32 one
    res = _float_res("math.frexp", x)

    def codegen(context, builder, sig, args):
        return context.cast(builder, args[0], sig.args[0], res)

    return res(x), codegen


@numba.njit(inline="always")
def _frexp(x):
    return math.frexp(_frexp_arg(x))


_MATH_EXTRA = {
    "fmod": _libm2("fmod"),
    "remainder": _libm2("remainder"),
    "frexp": _frexp,
    "nextafter": _libm2("nextafter"),
    "modf": _modf,
    "floor": _rounding("floor"),
    "ceil": _rounding("ceil"),
    "trunc": _rounding("trunc"),
    "pow": _pow_like("pow"),
    "ldexp": _pow_like("ldexp"),
}
_MATH_PROXY = None


def math_module():
    """``math`` with numba.cuda's extra functions, for generated CPU code."""
    global _MATH_PROXY
    if _MATH_PROXY is None:
        import math

        m = _pytypes.ModuleType("math", math.__doc__)
        m.__dict__.update({k: v for k, v in vars(math).items() if not k.startswith("__")})
        m.__dict__.update(_MATH_EXTRA)
        _MATH_PROXY = m
    return _MATH_PROXY


def cpu_global(value):
    """The CPU meaning of a global the generated code or a device function reads: the
    math module and its functions Numba lacks become numquad's; anything else as is."""
    import math

    if value is math:
        return math_module()
    if callable(value) and getattr(value, "__module__", None) == "math":
        name = getattr(value, "__name__", None)
        if name in _MATH_EXTRA and getattr(math, name, None) is value:
            return _MATH_EXTRA[name]
    return value


# ---------------------------------------------------------------------------
# Warp functions: numba.cuda's type checks, match_any_sync / match_all_sync
# ---------------------------------------------------------------------------


def _uint32_of(name, what, low_bits=None):
    """An integer argument of ``cuda.<name>`` as uint32 (numba.cuda requires an
    integer: anything else is its TypingError, naming *what*); with *low_bits*, only
    that many low bits of it."""

    @intrinsic
    def check(typingctx, x):
        t = types.unliteral(x)
        if not isinstance(t, types.Integer):
            raise TypingError(f"cuda.{name}: {what} must be an integer. Got {x}")

        def codegen(context, builder, sig, args):
            v = context.cast(builder, args[0], t, types.uint32)
            return v if low_bits is None else builder.and_(v, v.type((1 << low_bits) - 1))

        return types.uint32(x), codegen

    return check


def _mask_check(name):
    return _uint32_of(name, "Mask type")


def _pred_check(name):
    @intrinsic
    def check(typingctx, pred):
        p = types.unliteral(pred)
        if not isinstance(p, (types.Integer, types.Boolean)):
            raise TypingError(f"cuda.{name}: Predicate must be an integer or boolean. Got {pred}")

        def codegen(context, builder, sig, args):
            return args[0]

        return p(pred), codegen

    return check


def _shfl_check(name):
    @intrinsic
    def check(typingctx, mask, value):
        m = types.unliteral(mask)
        if not isinstance(m, types.Integer):
            raise TypingError(f"cuda.{name}: Mask type must be an integer. Got {mask}")
        v = types.unliteral(value)
        complaint = _shfl_value_check(name)(v)
        if complaint is not None:
            raise TypingError(complaint)

        def codegen(context, builder, sig, args):
            return args[1]

        return v(mask, value), codegen

    return check


def _shfl_value_check(name):
    """numba.cuda's rule for the value of shuffle *name*, as a complaint or None."""

    def check(v):
        if v in (types.int32, types.int64, types.float32, types.float64):
            return None
        return _desugar.shuffle_value_complaint(name, v)

    return check


#: numba.cuda's shuffles and the Wave ops they become on the CPU target
SHUFFLE_OPS = {
    "shfl_sync": "shuffle",
    "shfl_up_sync": "shuffleUp",
    "shfl_down_sync": "shuffleDown",
    "shfl_xor_sync": "shuffleXor",
}

#: the typing stand-ins of those ops where a shuffle wrote them (the frontend's
#: XLCall.spelled): the value typed by numba.cuda's rule before the op's own
_SHFL_STANDINS = {
    name: _typing.checked_standin(f"Wave.{op}", _shfl_value_check(name)) for name, op in SHUFFLE_OPS.items()
}


def _lane_bits(name):
    """The selector of a numba.cuda shuffle as the GPU reads it: its low five bits
    (PTX's ``shfl.sync`` takes ``bval[4:0] = b[4:0]``), as uint32."""
    what = "src_lane" if name == "shfl_sync" else "lane_mask" if name == "shfl_xor_sync" else "delta"
    return _uint32_of(name, what, low_bits=5)


def _match_value(name):
    @intrinsic
    def check(typingctx, value):
        v = types.unliteral(value)
        if not isinstance(v, (types.Integer, types.Float, types.Boolean)):
            raise TypingError(f"cuda.{name}: value got {v}; it takes an integer or a float")
        # numba.cuda's signatures: the value becomes int32, int64, float32 or float64
        res = numpy_support.from_dtype(_xpu.match_value_dtype(numpy_support.as_dtype(v)))

        def codegen(context, builder, sig, args):
            return context.cast(builder, args[0], sig.args[0], res)

        return res(value), codegen

    return check


#: The whole-wave op behind match_any_sync: bits of the active lanes whose value
#: has the same bits as this lane's (uint32). Not in ops.py: CPU only.
MATCH_OP = _ops.Op(
    "cuda", "match_any_sync", "ballot", ("value",), "lanes holding the same bits", "", types="value", vote="match"
)
_MATCH_FN = _ops.function_for(MATCH_OP)


@intrinsic
def _match_standin(typingctx, x):
    x = types.unliteral(x)
    if not isinstance(x, (types.Integer, types.Float, types.Boolean)):
        raise TypingError(f"cuda.match_any_sync: value got {x}; it takes an integer or a float")

    def codegen(context, builder, sig, args):  # never lowered
        raise AssertionError("shadow stand-ins are typing-only")

    return types.uint32(x), codegen


@intrinsic
def _match_xl(typingctx, mask, out, x):
    from . import intrinsics as _in

    def codegen(context, builder, sig, args):
        m = _in._load_mask(context, builder, sig.args[0], args[0])
        v = _in._load(context, builder, sig.args[2], args[2])
        el = v.type.element
        if isinstance(el, (ir.FloatType, ir.DoubleType)):
            v = builder.bitcast(v, ir.VectorType(ir.IntType(32 if isinstance(el, ir.FloatType) else 64), _in.W))
        i32 = ir.IntType(32)
        acc = ir.Constant(ir.VectorType(i32, _in.W), [0] * _in.W)
        for j in range(_in.W):
            vj = _in._splat(builder, builder.extract_element(v, i32(j)))
            mj = _in._splat(builder, builder.extract_element(m, i32(j)))
            hit = builder.and_(builder.icmp_unsigned("==", v, vj), mj)
            bit = builder.shl(builder.zext(hit, acc.type), _in._const_vec(i32, [j] * _in.W))
            acc = builder.or_(acc, bit)
        _in._store_masked(context, builder, sig.args[1], args[1], m, acc)
        return context.get_dummy_value()

    return types.none(mask, out, x), codegen


def _hint_index(name):
    """The index of a cache hint ``cuda.<name>(array, index, ...)``, checked as
    numba.cuda checks it (its words): an integer or integer tuple, one index per
    dimension, an integer or float array."""

    @intrinsic
    def check(typingctx, array, index):
        if not isinstance(array, types.Array):
            raise TypingError(f"cuda.{name}: {name} operates on arrays or pointers. Got type {array}")
        if not isinstance(array.dtype, (types.Integer, types.Float)) or isinstance(array.dtype, types.Boolean):
            raise TypingError(f"cuda.{name}: {name} requires array of integer or float type, got {array.dtype}")
        i = types.unliteral(index)
        if isinstance(i, types.Integer):
            if array.ndim != 1:
                raise TypingError(f"cuda.{name}: Expected {array.ndim} indices, got a scalar")
        elif isinstance(i, types.UniTuple) and isinstance(i.dtype, types.Integer):
            if i.count != array.ndim:
                raise TypingError(f"cuda.{name}: Expected {array.ndim} indices, got {i.count}")
        elif isinstance(i, types.UniTuple) and i.count != array.ndim:
            raise TypingError(f"cuda.{name}: Expected {array.ndim} indices, got {i.count}")
        else:
            raise TypingError(f"cuda.{name}: {i} is not a valid index")

        def codegen(context, builder, sig, args):
            return args[1]

        return i(array, index), codegen

    return check


def _vote_all(b, a, m):
    return (b & m) == (a & m)


def _vote_eq(b, a, m):
    bm = b & m
    return (bm == 0) | (bm == (a & m))


def _vote_match_all(x, a, m):
    eq = (x & m) == (a & m)
    return (np.int32((a & m) * np.uint32(eq)), eq)


def _vote(fn, restype):
    """A numba.cuda vote's result from the ballot of its predicate (or match_any's
    bits), the wave's active lanes and the mask: each given once, so the spelling
    (cpu/spellings.py) evaluates each argument once."""

    @intrinsic
    def combine(typingctx, b, a, m):
        def codegen(context, builder, sig, args):
            return context.compile_internal(builder, fn, sig, args)

        return restype(b, a, m), codegen

    return combine


# ---------------------------------------------------------------------------
# debug=True: numba.cuda's mask rules at each warp function
# ---------------------------------------------------------------------------
#
# numba.cuda's ``*_sync`` functions take a lane mask, and CUDA leaves a call undefined
# (a GPU may give any value, or hang) where (c) the calling lane is not in its mask,
# (b) the mask names a lane that has not exited but does not make the same call with
# the same mask (it is in another branch or loop iteration), or (a) a shuffle reads a
# lane outside the mask, one that is inactive, has exited, or is past a partial wave.
# The CPU gives defined values there (docs/numba-cuda.md), so the two targets may
# differ: a debug build checks each call and raises NumquadRuntimeError naming the
# rule, the lane and the mask.


@numba.njit
def _no_source(lane, sel):
    return -1  # a vote reads no other lane


_SOURCES = {}


def _source_of(op):
    """The op's ``pattern`` (numquad/ops.py: (lane, sel) -> source lane) compiled, for
    the check below; a source outside 0..31 reads no lane (the lane's own value)."""
    fn = _SOURCES.get(op.qualname)
    if fn is None:
        fn = _SOURCES[op.qualname] = numba.njit(op.pattern)
    return fn


@numba.njit
def _sync_check(act, live, mvals, sels, sel0, per_lane, source):
    """0, or the first broken rule of one wave's call: rule << 48 | lane << 40 |
    other lane << 32 | mask. *act*, *live*: the wave's active and not-exited lanes;
    *mvals*: each lane's mask; the selector is ``sels[k]`` (*per_lane*) or *sel0*;
    *source*: (lane, selector) -> the lane a shuffle reads (:func:`_source_of`)."""
    for k in range(32):
        if not act[k]:
            continue
        m = np.int64(mvals[k]) & 0xFFFFFFFF
        if not (m >> k) & 1:
            return (np.int64(3) << 48) | (np.int64(k) << 40) | m
        for j in range(32):
            if (m >> j) & 1 and live[j] and (not act[j] or (np.int64(mvals[j]) & 0xFFFFFFFF) != m):
                return (np.int64(2) << 48) | (np.int64(k) << 40) | (np.int64(j) << 32) | m
        src = np.int64(source(k, np.int64(sels[k]) if per_lane else np.int64(sel0)))
        if 0 <= src < 32 and not (act[src] and (m >> src) & 1):
            return (np.int64(1) << 48) | (np.int64(k) << 40) | (np.int64(src) << 32) | m
    return np.int64(0)


_SYNC_RULES = {
    3: "lane {0} calls it with mask {1:#010x}, which leaves that lane out",
    2: "the mask {1:#010x} of lane {0} names lane {2}, which has not exited but does not make "
    "this call with the same mask (it is in another branch or loop iteration, or its mask differs): "
    "a GPU may hang here",
    1: "lane {0} reads lane {2}, which is outside the mask {1:#010x}, inactive here, exited or "
    "past a partial wave: the GPU's value is undefined (the CPU gives lane {0} its own value)",
}


def gen_sync_check(gen, it, mask, args, out):
    """The debug check of numba.cuda's mask rules before the cross-lane call of
    *it* (an XLCall whose ``check`` is (function name, mask temporary)); *args* the
    call's arguments, *out* the statements before it (a splat of the mask goes
    there). One statement: a call of :func:`_sync_check` per wave, and a raise."""
    name, tmp = it.check
    mvals = gen._lane_operand(tmp, out)
    shuffle = name.startswith("shfl") and it.op.pattern is not None
    sel = args[3] if shuffle and len(args) > 3 else _ab.const(0)
    per_lane = isinstance(sel, ast.Name) and sel.id.startswith("_nq_v_")
    source = f"_nq_cu_src_{it.op.namespace}_{it.op.name}" if shuffle else "_nq_cu_nosrc"
    gen.fe.env.closure[source] = _source_of(it.op) if shuffle else _no_source
    code = _ab.name("_nq_synck", ast.Store)
    where = [_ab.name("_nq_bix"), _ab.name("_nq_biy"), _ab.name("_nq_biz"), _ab.const("thread")]
    lane = ast.BinOp(ast.BinOp(_ab.name("_nq_synck"), ast.RShift(), _ab.const(40)), ast.BitAnd(), _ab.const(255))
    other = ast.BinOp(ast.BinOp(_ab.name("_nq_synck"), ast.RShift(), _ab.const(32)), ast.BitAnd(), _ab.const(255))
    mval = ast.BinOp(_ab.name("_nq_synck"), ast.BitAnd(), _ab.const(0xFFFFFFFF))
    thread = ast.BinOp(ast.BinOp(_ab.name("_nq_w"), ast.Mult(), _ab.const(32)), ast.Add(), copy.deepcopy(lane))
    head = f'File "{gen.fe.filename}", line {it.node.lineno}: cuda.{name}(mask, ...): '.replace("{", "{{").replace(
        "}", "}}"
    )
    tail = " (a debug=True check of numba.cuda's mask rules: docs/numba-cuda.md)"
    raises = []
    for rule, text in _SYNC_RULES.items():
        exc = _ab.call(
            "_nq_RuntimeError",
            _ab.const(head + text + tail),
            *copy.deepcopy(where),
            copy.deepcopy(thread),
            copy.deepcopy(lane),
            copy.deepcopy(mval),
            copy.deepcopy(other),
        )
        raises.append(
            ast.If(
                test=ast.Compare(
                    ast.BinOp(_ab.name("_nq_synck"), ast.RShift(), _ab.const(48)), [ast.Eq()], [_ab.const(rule)]
                ),
                body=[ast.Raise(exc=exc, cause=None)],
                orelse=[],
            )
        )
    return [
        _ab.assign(
            code,
            _ab.call(
                "_nq_cu_syncchk",
                _ab.name(mask),
                _ab.name("_nq_m_entry"),
                mvals,
                sel if per_lane else copy.deepcopy(mvals),
                _ab.const(0) if per_lane else sel,
                _ab.const(per_lane),
                _ab.name(source),
            ),
        ),
        ast.If(test=ast.Compare(_ab.name("_nq_synck"), [ast.NotEq()], [_ab.const(0)]), body=raises, orelse=[]),
    ]


#: numba.cuda's warp functions that take a lane mask (each checked by a debug build)
SYNC_NAMES = tuple(n for n in _desugar.CUDA_WARP_FUNCTIONS if n.endswith("_sync"))


def spelling_helpers():
    """Names the front end's rewrite of numba.cuda's warp functions refers to."""
    out = {
        "_nq_cu_match": _MATCH_FN,
        "_nq_cu_vote_all": _vote(_vote_all, types.boolean),
        "_nq_cu_vote_eq": _vote(_vote_eq, types.boolean),
        "_nq_cu_vote_match_all": _vote(_vote_match_all, types.Tuple((types.int32, types.boolean))),
        "_nq_cu_syncchk": _sync_check,
    }
    for n in SYNC_NAMES:
        out[f"_nq_cu_mask_{n}"] = _mask_check(n)
        out[f"_nq_cu_pred_{n}"] = _pred_check(n)
        out[f"_nq_cu_shfl_{n}"] = _shfl_check(n)
        out[f"_nq_cu_lane_{n}"] = _lane_bits(n)
        out[f"_nq_cu_mval_{n}"] = _match_value(n)
    out.update({f"_nq_cu_hint_{n}": _hint_index(n) for n in HINTS})
    return out


_HELPERS = None


def helpers():
    global _HELPERS
    if _HELPERS is None:
        _HELPERS = spelling_helpers()
    return _HELPERS


# ---------------------------------------------------------------------------
# syncthreads_count / _and / _or
# ---------------------------------------------------------------------------


def _sync_pred(name):
    @intrinsic
    def check(typingctx, pred):
        if not isinstance(types.unliteral(pred), types.Integer):
            raise TypingError(
                f"cuda.{name}(pred): pred got {pred}; it takes an integer "
                f"(numba.cuda does not take a bool: write int32(pred))"
            )

        def codegen(context, builder, sig, args):
            v = context.cast(builder, args[0], sig.args[0], types.int32)
            return builder.zext(builder.icmp_unsigned("!=", v, v.type(0)), v.type)

        return types.int32(pred), codegen

    return check


_SYNC_PRED = {n: _sync_pred(n) for n in BARRIER_REDUCE}


def gen_barrier_reduce(gen, it, mask):
    """Block-mode code for ``target = syncthreads_count/_and/_or(arg)``: every thread
    of the block is in step here (lane loops run over the whole block), so the
    reduction is one pass over the block's lanes under the current mask."""
    out = gen.barrier_check(mask, it.node.lineno, f"xpu.{it.kind}()") if gen.debug else []
    operand = gen._lane_operand(it.arg, out)
    kind = BARRIER_REDUCE[it.kind]
    pred = _ab.call(f"_nq_cu_syncpred_{it.kind}", _ab.sub(operand.id))
    count = [
        ast.AugAssign(_ab.name("_nq_bred", ast.Store), ast.Add(), pred),
        ast.AugAssign(_ab.name("_nq_bact", ast.Store), ast.Add(), _ab.const(1)),
    ]
    out += [
        _ab.assign(_ab.name("_nq_bred", ast.Store), _ab.call("_nq_i32", _ab.const(0))),
        _ab.assign(_ab.name("_nq_bact", ast.Store), _ab.call("_nq_i32", _ab.const(0))),
        _ab.lane_loop([ast.If(test=_ab.sub(mask), body=count, orelse=[])]),
    ]
    if kind == "count":
        res = _ab.name("_nq_bred")
    elif kind == "and":
        res = _ab.call("_nq_i32", ast.Compare(_ab.name("_nq_bred"), [ast.Eq()], [_ab.name("_nq_bact")]))
    else:
        res = _ab.call("_nq_i32", ast.Compare(_ab.name("_nq_bred"), [ast.Gt()], [_ab.const(0)]))
    out.append(_ab.lane_loop([ast.If(test=_ab.sub(mask), body=[_ab.store(f"_nq_v_{it.target}", res)], orelse=[])]))
    return _ab.located(out, it.node.lineno)


# ---------------------------------------------------------------------------
# Dynamic shared memory
# ---------------------------------------------------------------------------


@numba.njit
def _dyn_alloc(nbytes):
    # 16-byte aligned, as CUDA aligns dynamic shared memory
    return np.zeros((nbytes + 15) // 16 + 1, np.complex128).view(np.uint8)


@numba.njit(inline="always")
def _dyn_view(buf, nbytes, dtype, itemsize):
    return buf[: (nbytes // itemsize) * itemsize].view(dtype)


# ---------------------------------------------------------------------------
# Lowering of builtin calls, and the names the generated code refers to
# ---------------------------------------------------------------------------

_ARITY = {
    "popc": 1,
    "brev": 1,
    "clz": 1,
    "ffs": 1,
    "fma": 3,
    "cbrt": 1,
    "selp": 3,
    "nanosleep": 1,
    "threadfence": 0,
    "threadfence_block": 0,
    "threadfence_system": 0,
    "const.array_like": 1,
}

_IMPLS = {
    "popc": _popc,
    "brev": _brev,
    "clz": _clz,
    "ffs": _ffs,
    "fma": _fma,
    "cbrt": _cbrt,
    "selp": _selp,
    "nanosleep": _nanosleep,
}


def lower_call(subst, b, node):
    """The CPU code for a call of builtin *b* (ast), or None if *b* is not ours."""
    if b in BARRIER_REDUCE:
        subst.fe.error(
            f"cuda.{b}(pred) cannot be used here; assign its result to a variable in a statement of its own", node
        )
    if b not in _ARITY:
        return None
    if node.keywords or len(node.args) != _ARITY[b]:
        subst.fe.error(
            f"cuda.{b} takes {_ARITY[b]} positional argument(s); got {len(node.args) + len(node.keywords)}", node
        )
    args = [subst.visit(a) for a in node.args]
    if b == "const.array_like":
        return args[0]
    if b.startswith("threadfence"):
        return _ab.call("_nq_cu_fence")
    return _ab.call(f"_nq_cu_{b}", *args)


def namespace():
    """The names generated block and shadow functions refer to."""
    ns = {f"_nq_cu_{n}": f for n, f in _IMPLS.items()}
    ns.update(
        {
            "_nq_cu_fence": _fence,
            "_nq_cu_dynalloc": _dyn_alloc,
            "_nq_cu_dynview": _dyn_view,
            "_nq_XL_cuda_match_any_sync": _match_xl,
            "_nq_SH_cuda_match_any_sync": _match_standin,
        }
    )
    ns.update({f"_nq_SH_cuda_{n}": f for n, f in _SHFL_STANDINS.items()})
    ns.update({f"_nq_cu_syncpred_{n}": f for n, f in _SYNC_PRED.items()})
    return ns


# ---------------------------------------------------------------------------
# numba.cuda device functions
# ---------------------------------------------------------------------------


def is_view(expr):
    """``a[i, :]``, ``a[lo:hi]``: a subscript with a slice (an array view, never a load)."""
    if not isinstance(expr, ast.Subscript) or not isinstance(expr.value, ast.Name):
        return False
    sl = expr.slice
    parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    return any(isinstance(p, ast.Slice) for p in parts)


def is_numba_scalar_type(obj):
    """A Numba scalar type used as a conversion (``float32(x)``)."""
    return isinstance(obj, (types.Integer, types.Float, types.Boolean))


def caster(closure, prefix):
    """cast(expr, numba type) -> ``T(expr)`` for a scalar type (else expr unchanged),
    with T bound in *closure* under a name starting with *prefix*."""

    def cast(expr, ty):
        if not isinstance(ty, (types.Integer, types.Float, types.Boolean)):
            return expr
        name = f"{prefix}T_{ty}"
        closure[name] = ty
        return ast.copy_location(ast.Call(func=ast.Name(name, ast.Load()), args=[expr], keywords=[]), expr)

    return cast


_PICKERS = {}


def signature_picker(name, sigs, nargs):
    """(pick, result): two functions for a lane function *name* inlined with several
    declared signatures *sigs* ([(argument types, return type)]), for Numba's typing
    to choose the signature as numba.cuda's dispatcher does (:func:`_rating`):
    ``pick(k, a0, ..., an)`` is argument *k* converted to that signature's type,
    ``result(v, a0, ..., an)`` the value *v* converted to its return type. No fit or
    two equal fits are Numba's "No matching definition" / "Ambiguous overloading"."""
    key = (name, tuple((tuple(a), r) for a, r in sigs), nargs)
    hit = _PICKERS.get(key)
    if hit is not None:
        return hit
    from numba.core import errors as _errors
    from numba.core.extending import overload as _overload

    params = ", ".join(f"a{j}" for j in range(nargs))

    def choose(argtypes):
        argtypes = [types.unliteral(a) for a in argtypes]
        rated = sorted(
            (r, j)
            for j, (decl, _) in enumerate(sigs)
            if len(decl) == nargs and (r := _rating(argtypes, decl)) is not None
        )
        got = ", ".join(str(t) for t in argtypes)
        if not rated:
            raise _errors.TypingError(
                f"No matching definition for argument type(s) {got} of {name}: "
                f"it is declared for " + ", ".join(f"({', '.join(str(t) for t in d)})" for d, _ in sigs)
            )
        if len(rated) > 1 and rated[0][0] == rated[1][0]:
            raise _errors.TypingError(
                f"Ambiguous overloading for {name} ({got}): "
                f"{sigs[rated[0][1]][0]} and {sigs[rated[1][1]][0]} fit equally"
            )
        return sigs[rated[0][1]]

    def converter(ty, source):
        if isinstance(ty, (types.Integer, types.Float, types.Boolean)):
            return f"    return T({source})\n", ty
        return f"    return {source}\n", None

    def generated(source, namespace):
        exec(source, namespace)  # noqa: S102 - generated text, no user text in it
        return namespace["f"]

    pick_stub = generated(f"def f(k, {params}):\n    pass\n", {})
    result_stub = generated(f"def f(v, {params}):\n    pass\n", {})
    pick_stub.__name__ = pick_stub.__qualname__ = f"pick_{name}"
    result_stub.__name__ = result_stub.__qualname__ = f"result_{name}"

    def pick(k, *args):
        if not isinstance(k, types.IntegerLiteral):
            return None
        decl, _ = choose(args)
        body, ty = converter(decl[k.literal_value], f"a{k.literal_value}")
        return generated(f"def f(k, {params}):\n{body}", {"T": ty})

    def result(v, *args):
        _, ret = choose(args)
        body, ty = converter(ret, "v") if ret is not None else ("    return v\n", None)
        return generated(f"def f(v, {params}):\n{body}", {"T": ty})

    _overload(pick_stub, prefer_literal=True)(
        generated(f"def f(k, {params}):\n    return pick(k, {params})\n", {"pick": pick})
    )
    _overload(result_stub)(generated(f"def f(v, {params}):\n    return result(v, {params})\n", {"result": result}))
    _PICKERS[key] = pick_stub, result_stub
    return _PICKERS[key]


def cuda_signatures(obj):
    """[(argtypes, return type)] a numba.cuda dispatcher was declared with (numquad/xpu.py)."""
    from ..xpu import cuda_signatures as _sigs

    return _sigs(obj)


def as_xpu(obj):
    """numquad/xpu.py ``as_xpu``: the ``@xpu.jit`` Dispatcher of a numba.cuda or plain
    Numba device function or a ``register_jitable`` function; anything else unchanged."""
    from ..xpu import as_xpu as _as_xpu

    return _as_xpu(obj)


def cpu_pyfunc(pyfunc, scalar_of):
    """(a copy of *pyfunc* whose globals and closure hold, for every device function
    (numba.cuda's or ``@xpu.jit``), its CPU scalar function ``scalar_of(dispatcher)``;
    how it calls itself: the global names, and the closure cells (empty), to be bound
    to its own CPU function by the caller)."""
    from ..xpu import Dispatcher

    code = pyfunc.__code__
    names = code_names(code)

    def sub(v, depth=0):
        if isinstance(v, _pytypes.ModuleType) and depth < 4:
            return module(v, depth)
        v2 = as_xpu(v)
        if isinstance(v2, Dispatcher) and v2.py_func is not pyfunc:
            return scalar_of(v2)
        return cpu_global(v)

    def module(m, depth):
        # helpers.scale(x): a device function reached through a module attribute. Numba
        # types a module attribute by getattr on the module object, so the function
        # reads a copy of the module whose device functions are their CPU functions
        return module_copy(m, names, lambda v: sub(v, depth + 1), cpu_global)

    glbls = dict(pyfunc.__globals__)
    changed = False
    self_names = []
    for n in names:
        if n in glbls:
            v = glbls[n]
            if (as_xpu(v) is not v or isinstance(v, Dispatcher)) and getattr(v, "py_func", None) is pyfunc:
                # recursion: the CPU function itself, set by the caller (an @xpu.jit one
                # with declared signatures too, which compiles before anything could
                # set it later)
                self_names.append(n)
                changed = True
                continue
            new = sub(glbls[n])
            if new is not glbls[n]:
                glbls[n] = new
                changed = True
    cells = None
    if pyfunc.__closure__:
        cells = []
        for c in pyfunc.__closure__:
            try:
                v = c.cell_contents
            except ValueError:
                cells.append(c)
                continue
            if (
                as_xpu(v) is not v
                and getattr(v, "py_func", None) is pyfunc
                or isinstance(v, Dispatcher)
                and v.py_func is pyfunc
            ):
                cell = _pytypes.CellType()  # recursion through the closure
                self_names.append(cell)
                cells.append(cell)
                changed = True
                continue
            new = sub(v)
            changed |= new is not v
            cells.append(_pytypes.CellType(new))
        cells = tuple(cells)
    if not changed:
        return pyfunc, []
    fn = _pytypes.FunctionType(code, glbls, pyfunc.__name__, pyfunc.__defaults__, cells)
    fn.__qualname__ = pyfunc.__qualname__
    fn.__module__ = pyfunc.__module__
    return fn, self_names


# ---------------------------------------------------------------------------
# Signatures: xpu.jit("void(float32[:], int32)"), as numba.cuda's cuda.jit(sig)
# ---------------------------------------------------------------------------


def parse_signatures(sig):
    """[(argument types, return type or None)] from a signature string, a Numba
    Signature, a tuple of types, or a list of those (numba.cuda's forms)."""
    from numba.core import sigutils

    sigs = sig if isinstance(sig, list) else [sig]
    out = []
    for s in sigs:
        try:
            if not sigutils.is_signature(s):
                raise TypeError(f"not a signature: {s!r}")
            args, ret = sigutils.normalize_signature(s)
        except Exception as e:  # noqa: BLE001 - one message for every bad form
            raise TypeError(
                f"xpu.jit: {s!r} is not a signature: give a function, a signature string "
                f'like "void(float32[:], int32)", a tuple of Numba types, or a list of '
                f"those ({e})"
            ) from None
        out.append((tuple(args), ret))
    return out


def check_arity(d, sigs):
    """A TypeError naming *d*'s definition where one of *sigs* ([(argument types,
    return type)]) has another number of arguments than *d* takes."""
    fewest, most = d._arity
    for args, _ in sigs:
        if not fewest <= len(args) <= (most if most is not None else len(args)):
            takes = (
                f"{fewest}" if fewest == most else f"{fewest} to {most}" if most is not None else f"at least {fewest}"
            )
            raise TypeError(
                f"{d.where}: the signature ({', '.join(map(str, args))}) of {d.__name__} has "
                f"{len(args)} argument type(s); {d.__name__} takes {takes} argument(s)"
            )


def declare_signatures(d, sigs):
    """Declare *sigs* on the xpu Dispatcher *d*; a kernel compiles for them now on
    the CPU (unless its target is "cuda").

    With ``target="auto"`` a kernel that the CPU target cannot compile but CUDA can
    (float16, a method only numba.cuda has) must still launch on CUDA: the CPU's
    error is then raised by the first CPU launch, which compiles again. An error
    of the kernel itself (CUDA cannot compile it either, or CUDA is not there to
    ask) is raised here, at decoration, as numba.cuda's ``cuda.jit(sig)`` does."""
    check_arity(d, sigs)
    d._declared = list(sigs)
    if d.is_kernel:
        for args, ret in sigs:
            if ret is not None and ret != types.none:
                raise TypeError(
                    f"{d.where}: CUDA kernel must have void return type; {d.__name__} is declared to return {ret}"
                )
        if d.target != "cuda":
            t = d._target("cpu")
            for args, _ in sigs:
                try:
                    t.compile(tuple(args), False).block.disable_compile()
                except (NumquadTypeError, NumquadCompileError):
                    if d.target == "cpu" or not _cuda_compiles(d, args):
                        raise


def _cuda_compiles(d, args):
    """Does the CUDA target compile *d* for *args* (to PTX; no GPU needed)?"""
    try:
        d.inspect_ptx(tuple(args))
    except Exception:  # noqa: BLE001 - any failure, CUDA missing included, means no
        return False
    return True


class _FloatForInteger(Exception):
    """A float launch argument for an integer parameter (numba.cuda's ctypes refuses it)."""


def _convert(value, ty):
    """A launch argument converted to the declared scalar type, as numba.cuda's
    launch converts it (``ctypes.c_int32(v)``): integers wrap, a bool is 0 or 1, a
    float for an integer type is refused (_FloatForInteger), as ctypes refuses it."""
    from numba.np.numpy_support import as_dtype

    dt = as_dtype(ty)
    if isinstance(value, (bool, np.bool_)) or dt.kind == "b":
        return dt.type(bool(value)) if dt.kind == "b" else np.array(int(value)).astype(dt)[()]
    if isinstance(value, (int, np.integer)):
        v = int(value)
        src = np.uint64 if v >= 2**63 else np.int64
        return np.array(v, dtype=src).astype(dt)[()]
    if dt.kind in "iu":
        raise _FloatForInteger
    with np.errstate(all="ignore"):
        return np.array(value).astype(dt)[()]


def _convert_value(x, t, path):
    """*x* converted to *t* where numba.cuda's launch converts it: a scalar, and each
    element of a plain tuple (its launch marshals them one by one, with ctypes);
    *path* collects the element indices for the error."""
    if isinstance(t, (types.Number, types.Boolean)) and not isinstance(t, types.Array):
        return _convert(x, t)
    if isinstance(t, (types.UniTuple, types.Tuple)) and type(x) is tuple and len(x) == len(t):
        out = []
        for k, (e, et) in enumerate(zip(x, t)):
            path.append(k)
            out.append(_convert_value(e, et, path))
            path.pop()
        return tuple(out)
    return x


def _converted(d, where, args, decl):
    """*args* converted to the types *decl* (arrays and other objects untouched)."""
    out = []
    for j, (x, t) in enumerate(zip(args, decl)):
        path = []
        try:
            out.append(_convert_value(x, t, path))
        except _FloatForInteger:
            from ..errors import NumquadTypeError

            names = list(d.py_func.__code__.co_varnames[: d.py_func.__code__.co_argcount])
            name = f" ({names[j]})" if j < len(names) else ""
            what, got, ty = f"argument {j}{name}", x, t
            for k in path:
                what, got, ty = f"element {k} of {what}", got[k], ty[k]
            raise NumquadTypeError(
                f"{where}: {what} of {d.__name__} is declared {ty}; got the float "
                f"{got!r}, which numba.cuda refuses for an integer parameter (its launch "
                f"converts with ctypes): pass an integer, e.g. int(v)"
            ) from None
    return tuple(out)


def _array_fits(actual, declared):
    if not isinstance(actual, types.Array) or actual.ndim != declared.ndim or actual.dtype != declared.dtype:
        return False
    return declared.layout == "A" or declared.layout == actual.layout


def _rating(argtypes, decl):
    """How well arguments of *argtypes* fit the declared types *decl*, as Numba rates
    an overload ((unsafe, safe, promoting) conversions; fewer is better), or None
    where one does not fit: an array only of its dtype and dimensions (a C array
    fits an "A" declaration), a complex value never a real type (numba.cuda's
    ctypes refuses it)."""
    from numba.core.registry import cpu_target
    from numba.core.typeconv import Conversion

    ctx = cpu_target.typing_context
    unsafe = safe = promote = 0
    for a, t in zip(argtypes, decl):
        if isinstance(t, types.Array) or isinstance(a, types.Array):
            if not _array_fits(a, t):
                return None
            # numba.cuda's type manager rates a C array for an "A" declaration a safe
            # conversion, as any other argument's
            safe += a != t
            continue
        if isinstance(types.unliteral(a), types.Complex) and not isinstance(t, types.Complex):
            return None
        conv = ctx.can_convert(a, t)
        if conv is None:
            return None
        unsafe += conv == Conversion.unsafe
        safe += conv == Conversion.safe
        promote += conv == Conversion.promote
    return unsafe, safe, promote


def match_signature(d, argtypes, args):
    """(declared argument types, converted arguments) for the declared signature that
    fits *args* best, as numba.cuda's dispatcher picks one (Numba's overload rating:
    ``k[1, 1](r, 1, 2**-25)`` of ``float32`` and ``float64`` signatures takes the
    ``float64`` one); TypeError when none fits (an array of another dtype included,
    but for one signature given as a string or tuple, whose arrays are read as its
    dtypes as numba.cuda does) or when two fit equally well."""
    argtypes = [types.unliteral(a) for a in argtypes]
    rated = []
    for decl, _ in d._declared:
        if len(decl) == len(args):
            r = _rating(argtypes, decl)
            if r is not None:
                rated.append((r, tuple(decl)))
    shown = ", ".join(f"({', '.join(str(t) for t in s)})" for s, _ in d._declared)
    got = ", ".join(str(t) for t in argtypes)
    if not rated and getattr(d, "specialized", False) and len(d._declared) == 1:
        # one signature in the string or tuple form (numba.cuda's "specialized" kernel,
        # not a list): an array of another dtype of the same item size is read as the
        # declared dtype, as numba.cuda passes the buffer (numba-cuda's own atomic
        # tests launch an int32 kernel on uint32 arrays); on every target alike
        decl = tuple(d._declared[0][0])
        conv = []
        for x, a, t in zip(args, argtypes, decl):
            if isinstance(t, types.Array):
                if not (isinstance(a, types.Array) and a.ndim == t.ndim and (t.layout == "A" or t.layout == a.layout)):
                    break
                from numba.np.numpy_support import as_dtype

                dt = as_dtype(t.dtype)
                if dt.itemsize != x.dtype.itemsize:
                    break
                conv.append(x.view(dt))
            elif _rating([a], [t]) is not None:
                conv.append(x)
            else:
                break
        else:
            return decl, _converted(d, _where(d), conv, decl)
    # numba.cuda's words (a TypeError), as a NumquadTypeError naming the user's call
    from ..errors import NumquadTypeError

    where = _where(d)
    if not rated:
        raise NumquadTypeError(
            f"{where}: No matching definition for argument type(s) ({got}) of {d.__name__}; it is declared for {shown}"
        )
    rated.sort(key=lambda x: x[0])
    best, decl = rated[0]
    tied = [s for r, s in rated if r == best]
    if len(tied) > 1:
        raise NumquadTypeError(
            f"{where}: Ambiguous overloading for {d.__name__} ({got}): "
            + "; ".join(f"({', '.join(map(str, s))})" for s in tied)
        )
    return decl, _converted(d, where, args, decl)


def _where(d):
    """The user's launch of *d*, for an error: its file and line."""
    from .._sites import call_site, defined_at

    site = call_site(d)
    return site if site == d.where else f"{site}: {d.__name__} ({defined_at(d, site)})"


def convert_scalars(d, args):
    """*args* with scalars converted to the declared signature that fits best
    (:func:`match_signature`; arrays untouched): the share of the CUDA and python
    targets, which compile for the converted arguments' types."""
    from numba import typeof

    try:
        argtypes = [typeof(a) for a in args]
    except ValueError:
        return args
    return match_signature(d, argtypes, args)[1]


# ---------------------------------------------------------------------------
# docs/numba-cuda.md
# ---------------------------------------------------------------------------


def _ported_counts(root):
    """(test functions, expected to fail on the CPU) in tests/ported, by an AST scan."""
    import pathlib

    total = failing = 0
    files = 0
    for p in sorted(pathlib.Path(root).glob("test_*.py")):
        files += 1
        tree = ast.parse(p.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                total += 1
                for d in node.decorator_list:
                    # cpu_xfail, and numba-cuda's own unittest.expectedFailure, by the
                    # decorator's name (not its reason's words: expected_failure_on_cuda
                    # may quote "expectedFailure")
                    name = ast.unparse(d.func if isinstance(d, ast.Call) else d)
                    if "xfail" in name or "expectedFailure" in name:
                        failing += 1
                        break
    return files, total, failing


def render_md(ported_root=None):
    import pathlib

    root = pathlib.Path(ported_root or pathlib.Path(__file__).resolve().parents[2] / "tests" / "ported")
    files, total, failing = _ported_counts(root) if root.is_dir() else (0, 0, 0)
    lines = [
        "# numba.cuda code on numquad",
        "",
        f"Generated from `numquad/cpu/cudaapi.py` by `python -m numquad.cpu.cudaapi > {DOC}`;",
        "a test checks that this file matches the code.",
        "",
        "numba.cuda kernels run on numquad's CPU target with the kernel's decorator changed",
        "(`@cuda.jit` -> `@xpu.jit`) and host (NumPy) arrays. On the CUDA target numquad",
        "compiles the kernel with numba.cuda itself, so every name below works there as in",
        "numba.cuda; the *CPU* column is numquad's CPU wave compiler. Names marked *xpu*",
        "are also spelled `xpu.<name>`.",
        "",
        "## Porting a kernel",
        "",
        '1. `@cuda.jit` -> `@xpu.jit` on kernels (signatures work: `@xpu.jit("void(float32[:])")`',
        "   compiles eagerly for the CPU). Device functions may keep `@cuda.jit(device=True)`",
        "   or plain `@cuda.jit` (a function a kernel calls is a device function, as numba.cuda",
        "   compiles it; with or without a signature, `inline=...` too, recursive ones too, but",
        "   not a recursive one that uses a warp function or `Wave`/`Quad` op, which is inlined",
        "   and so refused in one line): the CPU and python targets run them from their Python",
        "   source, with their signature; on the CUDA target numba.cuda compiles them itself, so",
        "   there they may use numba.cuda's names only (`xpu.quad_grid` in one was a compile",
        "   error on an H100; numquad's `xpu`, `Wave` and `Quad` names need `@xpu.jit`); or",
        "   use `@xpu.jit` for them. A plain `@numba.njit` function a kernel calls is a device",
        "   function too, run from its source with its accesses checked; with an explicit",
        "   signature it is refused, as numba.cuda refuses it. A `register_jitable` helper",
        "   (`numba.extending` or `numba.cuda.extending`) is a device function too. An `overload`",
        "   runs on the CPU target (a CUDA one preferred to a generic one, as numba.cuda does; a",
        '   `target="cpu"` one is refused), its implementation compiled by Numba\'s CPU target',
        "   with Numba's CPU semantics (`math.floor` gives an int there, `round` and `**` differ,",
        "   no bounds checks; a float-to-integer conversion saturates as on the GPU, as in the",
        "   kernel); the python target refuses an `overload` stub in one line. What numquad",
        "   compiles for an overload (its CPU copy of a CUDA one, the implementations it compiles",
        "   with the GPU's conversions) is its own: plain `numba.njit` code in the same process",
        "   keeps Numba's choices and bits (numquad/cpu/compiling.py).",
        "   `t = cuda.threadIdx` (a dim3) works where `t` is read as `t.x`, `t.y`, `t.z`.",
        "2. `cuda.to_device(a)` -> `a`, `d.copy_to_host()` -> `d`: NumPy arrays launch on the",
        "   CPU (device arrays launch on the GPU). `kernel[grid, block, stream, nbytes]`,",
        "   `kernel.forall(n)`, `kernel.specialize(*args)`, `kernel.overloads`, `signatures` and",
        "   `specializations` work as in numba.cuda (argument types compiled on any target;",
        "   a lane function lists its declared signatures). `get_regs_per_thread()`,",
        "   `get_shared_mem_per_block()` and the other `get_*` figures are the CUDA target's:",
        "   a kernel that ran on the CPU only has none (`{}`, or a KeyError for a signature).",
        "3. Shapes of `shared.array`/`local.array` must be constants: literals, global or",
        "   closure names, module attributes (`config.TPB`), a local assigned once, or",
        "   arithmetic on those; a helper's shape parameter works when the call passes a constant.",
        "   One name may take two `local.array`s of the same shape and dtype (in two branches);",
        "   other names need one array each on the CPU. A dtype may be a kernel argument's",
        "   (`dtype=ary.dtype`), or in a device function its array parameter's; a view may be",
        "   taken in the allocating statement",
        "   (`cuda.shared.array(0, np.int32)[1:]`).",
        "4. A name in the *Not supported* section stops compilation with one line naming it.",
        "5. Kernel arguments on the CPU: NumPy arrays (record, datetime64, timedelta64 and",
        "   string dtypes too; such a value is not kept across a cross-lane op), scalars, tuples and",
        "   namedtuples of those (nested too; the same in every lane: indexed, unpacked, `len(t)`,",
        "   `for v in t`, `enumerate(t)`, `zip(t, u)`, around cross-lane ops too; a per-lane index only",
        "   into a tuple of one type, as in Numba), and a single",
        "   record (`arr[0]` of a structured array), read and written by field in the caller's array;",
        "   `Enum`/`IntEnum` members too (`==`, `!=`, `is`; an `IntEnum` member is also an int);",
        "   not `None`, which numba.cuda types but its launch cannot pass (NotImplementedError:",
        "   every target refuses it in one line). A loop around cross-lane ops may iterate over",
        "   `range(...)` itself or over a tuple or an array: a parameter, a local, a tuple display",
        "   (`for v in (a[i], b[i]):`, a different tuple in each lane too) or an array row, directly",
        "   or through `enumerate(...)`/`zip(...)` of those (not of a `range`: numquad refuses",
        "   `enumerate(range(n))` there, which numba.cuda compiles); the sequence is evaluated once,",
        "   before the loop, as in Python. An atomic's index converts to intp as numba.cuda converts it: an",
        "   integer, a bool, a float (truncated) or an Optional of one (None raises).",
        "6. `raise` and `assert` in a kernel raise on the host on the CPU and python targets,",
        "   `debug=True` or not: a failing check stops the launch (its other threads may not have",
        "   run) and names the user's line. numba.cuda reports them only with `debug=True`; a",
        "   release GPU build ends the failing thread and goes on. The message starts as",
        "   numba.cuda's debug build starts it: `In function 'k', file /path/k.py, line 7,",
        "   tid=[z, y, x] ctaid=[z, y, x]: ` before the first argument, the others kept (a lane",
        "   function called on arrays: `element k: `), a failed `assert` too; an exception",
        "   class with its own `__init__` or `__new__` is raised as it is. On the CPU target a",
        "   `raise` in a function compiled on its own (a device function; a lane function with",
        "   no cross-lane op or thread builtin, called from a kernel or on arrays) keeps its own",
        "   message, without the thread (the python target names it). Exceptions Numba's",
        "   own code raises (a ZeroDivisionError with `debug=True`) keep their message. After",
        "   a launch raises (a `raise`, a failed bounds check), its output arrays hold whatever",
        "   the threads that ran stored, which differs between targets and builds (a release",
        "   CPU build may have finished the failing lane's statement with 0 in place of the",
        "   load out of bounds).",
        "   `try` is refused on every target (numba.cuda cannot compile it).",
        "7. A `def` inside a kernel or device function, or a `lambda` assigned to a name",
        "   (numba.cuda inlines them as closures), runs on the CPU target: it is lifted out as",
        "   a function that takes what it reads of the enclosing function at each call",
        "   (numquad/cpu/nested.py). numba.cuda's warp functions work inside one; a shared",
        "   array inside one is one per call site (numba.cuda inlines the closure). Refused in",
        "   one line: using it other than by calling it, defining it twice, a decorator,",
        "   `nonlocal`, calling itself or each other, a default value that is not a constant,",
        "   `Wave`/`Quad` ops inside it (as on the CUDA target), a lambda around a call that",
        "   binds a name the callee reads, a call with keyword arguments (numba.cuda ignores",
        "   them: Numba issue #5000). The python target refuses nested functions.",
        "8. NumPy in a kernel follows numba.cuda on every target (numquad/_numpy_calls.py), so",
        "   that a kernel tested on the CPU compiles for the GPU: array attributes, indexing,",
        "   the scalar types (`np.float32(x)`, `np.iinfo`), reductions such as `np.sum`,",
        "   `np.mean`, `np.argmax`, `np.any`, and these ufuncs: "
        + ", ".join(f"`np.{u}`" for u in sorted(_numpy_calls.CUDA_UFUNCS))
        + ".",
        "   Others (`np.sqrt`, `np.exp`, `np.abs`, `np.floor`, `np.add`: numba-cuda 0.30.4 fails",
        "   on them with a bare `KeyError`) are refused in one line naming the `math` function or",
        "   operator to use. Without numba.cuda's NRT (`numba.cuda.config.CUDA_ENABLE_NRT`, off",
        "   by default) array creation (`np.zeros`, ...), functions returning a new array",
        "   (`np.cumsum`, ...) and `np.max`, `np.min`, `np.where`, `np.clip`, `np.median`",
        "   are refused too; `np.sort`, `np.round`, `np.dot`, `np.random.*`, `np.linalg.*` and",
        "   `np.fft.*` always are. Python's `float`, `int`, `bool` and `complex` are no",
        "   `shared.array`/`local.array` dtype (use `np.float64`, ...).",
        "9. Python and array constructs follow numba.cuda too, so a kernel the CPU target",
        "   runs also compiles for the GPU (each checked against numba-cuda 0.30.4 by",
        "   tests/test_cuda_refusals.py). Refused in one line naming the user's line: dict",
        "   and set displays; a list display other than what a `for` iterates or an `in`",
        "   tests; `sorted`, `str`, `list`, `dict`, `set`, `hash`, `chr`, `getattr`, `repr`,",
        "   `format` (numquad/_desugar.py; every target). On the CPU target, by type",
        "   (numquad/cpu/typing.py): whole-array arithmetic (`o * 2`, `o += 1`, `-o`, `o > 0`),",
        "   NumPy calls returning a new array (`np.sin(o)`), array methods other than `view`,",
        "   `transpose`, `reshape` (of a contiguous array), `item`, `fill` and the reductions",
        "   `sum`, `prod`, `mean`, `var`, `std`, `argmax`, `argmin`, `all`, `any` without",
        "   arguments; a reduction along an axis (`np.sum(o, 0)`); `.imag` of a real array;",
        "   string methods; `print` of an array; an array stored into a slice",
        "   (`o[1:3] = o[3:5]`; a scalar is fine); `max`/`min` of a boolean and a number or",
        "   of three or more booleans (numba.cuda takes numbers, exactly two booleans, or one",
        "   tuple of one type). With numba.cuda's NRT on",
        "   (`numba.cuda.config.CUDA_ENABLE_NRT`) only what numba.cuda still refuses is refused",
        "   (dicts, sets, `sorted`, `str`, `print` of an array, `o + 1` and other operators whose",
        "   ufunc numba.cuda lacks, `.sort()`, reductions along an axis). The python target",
        "   checks only the first group.",
        "10. Same bits as numquad's CUDA target, not as a plain `@cuda.jit` build: numquad",
        "   compiles for the GPU without FMA contraction (docs/semantics.md), where numba.cuda",
        "   by default fuses `a * b + c` into one `fma` (and Numba's complex division uses",
        "   `fma` in its own code). A float result of an existing `@cuda.jit` kernel may so",
        "   differ from numquad's (CPU or CUDA) in its last bits; compare against",
        "   `kernel.cuda[...]` of the ported kernel.",
        "11. Waves of a block run one after another on the CPU, and blocks in chunks: a",
        "   thread that spins on a flag another wave or another block sets (an atomic",
        "   handshake across warps, a hand-written grid barrier) never sees it set, and the",
        "   launch runs until Ctrl-C stops it (CUDA promises no progress across blocks",
        "   either). Within a block, hand the value over through shared memory and",
        "   `syncthreads()`.",
        "12. Import numquad (or `from numquad import xpu`) before the module that defines",
        '   `@cuda.jit("sig", device=True)` functions: numba.cuda compiles those for a GPU when',
        "   they are defined, which fails on a machine without one unless numquad is loaded.",
        "13. numba.cuda's `*_sync` warp functions take a lane mask, and CUDA leaves a call",
        "   undefined (a GPU may return any value, or hang) where the calling lane is not in",
        "   its mask; where the mask names a lane that has not exited but does not make the",
        "   same call with the same mask (`if i < n:` around a call with mask `0xffffffff`,",
        "   a loop whose lanes run different trip counts); or where a shuffle reads a lane",
        "   outside the mask, inactive, exited or past a partial warp (`shfl_down_sync` in a",
        "   block of 40 threads). The CPU gives defined values there, so the GPU's may differ.",
        "   A `debug=True` build on the CPU checks every such call and raises",
        "   `NumquadRuntimeError` naming the line, the rule, the lane and the mask (a lane",
        "   whose value is discarded later is reported too; a mask computed by a call other",
        "   than a numba.cuda warp function or a conversion such as `np.uint32(m)` is not",
        "   checked; the python target gives the CPU's values unchecked). Exited lanes named in",
        "   the mask are fine, as CUDA allows; a lane that exits only later, in a branch the",
        "   call is not in (`if lane < 16: <call> else: return`), counts as not exited (PTX",
        "   would let the call go on once it exits): return before the call. numquad's own",
        "   `Wave`/`Quad` ops are defined in every case, on both targets (docs/semantics.md).",
        "14. What the CPU target keeps across a cross-lane op or a barrier is a value per lane",
        "   (bool, integer, float, tuples of them) or one value for the wave. An array",
        "   (a parameter, a view, a shared array) may live across only as one value for the wave:",
        "   rebound under control that is the same in every thread (`if s > 0: cur = b`,",
        "   `cur = b if it % 2 == 0 else a`, a loop over a uniform range) it is, in a kernel or",
        "   an inlined function; rebound under a lane-varying test it is refused, also where",
        "   the rebinding is uniform inside a lane-varying guard (`if i < n: cur = b if c else a`:",
        "   rebind before the guard). A variable whose values have several types gets a name per",
        "   top-level assignment, or per `if` branch where it is named only inside branches",
        "   (`m = cuda.activemask()` here, `m = 0xAAAAAAAA` there), as Numba types it; inside an",
        "   inlined device or lane function the per-branch names are not made: give each value",
        "   its own name. Each refusal names the variable and its line.",
        "",
        f"Ported numba-cuda tests (`tests/ported/`, {files} files): {total} test functions, "
        f"{total - failing} pass on the CPU, {failing} fail (marked `xfail` with the reason).",
        "Each also runs on the CUDA target where a GPU is present; the recorded H200 runs",
        "(docs/GPU.md) give their results.",
        "",
    ]
    group = None
    for a in API:
        if a.group != group:
            group = a.group
            lines += [
                "",
                f"## {group}",
                "",
                "| `cuda.` name | numba.cuda | CPU | CUDA | CPU notes |",
                "|---|---|---|---|---|",
            ]
        name = f"`{a.name}`" + (" (xpu)" if a.xpu and a.cpu else "")
        cpu = "yes" if a.cpu else "no"
        cells = [c.replace("|", "\\|") for c in (name, a.numba_cuda, cpu, "yes", a.note)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(render_md())
