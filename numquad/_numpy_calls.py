"""What of NumPy a kernel or lane function may call: numba.cuda's rules, on every
target, so that a kernel tested on the CPU also compiles for the GPU
(docs/numba-cuda.md, "Porting a kernel", item 8).

numba.cuda compiles array attributes, indexing, the scalar types (``np.float32(x)``,
``np.iinfo``), a few reductions (``np.sum``, ``np.mean``, ``np.argmax``, ``np.any``,
...) and the NumPy ufuncs of its ufunc table (:data:`CUDA_UFUNCS`; ``np.sqrt`` and
``np.exp`` are not among them: numba-cuda 0.30.4 fails on them with a bare
``KeyError``). Without its NRT (off by default) it allocates no arrays in a kernel,
so array creation and functions that return a new array are refused
(:data:`REFUSED`), as are ``np.random``'s functions. Numba's CPU target compiles
all of these and the python target runs them: without this check a kernel ran on
the CPU and failed only on the GPU.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

__all__ = ["CUDA_UFUNCS", "REFUSED", "complaint", "cuda_nrt"]

#: The NumPy ufuncs numba.cuda compiles in a kernel: the keys of numba-cuda's
#: ``numba.cuda.ufuncs.ufunc_db()`` (0.30.4; tests/test_user_errors.py checks the
#: two agree where numba-cuda is installed).
CUDA_UFUNCS = frozenset(
    {
        "arccos",
        "arccosh",
        "arcsin",
        "arcsinh",
        "arctan",
        "arctan2",
        "arctanh",
        "bitwise_and",
        "bitwise_or",
        "bitwise_xor",
        "conjugate",
        "cos",
        "cosh",
        "deg2rad",
        "degrees",
        "divide",
        "equal",
        "fmax",
        "fmin",
        "greater",
        "greater_equal",
        "hypot",
        "invert",
        "isnan",
        "left_shift",
        "less",
        "less_equal",
        "log",
        "log10",
        "log2",
        "logical_and",
        "logical_not",
        "logical_or",
        "logical_xor",
        "maximum",
        "minimum",
        "not_equal",
        "rad2deg",
        "radians",
        "right_shift",
        "sin",
        "sinh",
        "tan",
        "tanh",
    }
)

#: The creators of a new array of a shape or like another one: a kernel's per-thread
#: one is ``cuda.local.array(shape, dtype)``.
_LOCAL_ARRAY_LIKE = (
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "array",
)
_CREATE = _LOCAL_ARRAY_LIKE + (
    "asarray",
    "ascontiguousarray",
    "asfortranarray",
    "arange",
    "linspace",
    "logspace",
    "geomspace",
    "eye",
    "identity",
    "copy",
    "frombuffer",
    "fromiter",
    "tri",
    "tril",
    "triu",
    "diag",
    "meshgrid",
    "indices",
)
_NEW_ARRAY = (
    "concatenate",
    "stack",
    "hstack",
    "vstack",
    "dstack",
    "column_stack",
    "cumsum",
    "cumprod",
    "diff",
    "unique",
    "repeat",
    "tile",
    "outer",
    "append",
    "insert",
    "delete",
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "rot90",
    "convolve",
    "correlate",
    "interp",
    "histogram",
    "bincount",
    "nonzero",
    "argwhere",
    "flatnonzero",
    "kron",
    "cross",
)
_NEEDS_NRT = (
    "max",
    "min",
    "amax",
    "amin",
    "nanmax",
    "nanmin",
    "ptp",
    "median",
    "nanmedian",
    "percentile",
    "quantile",
    "where",
    "clip",
    "nan_to_num",
    "trace",
)
_NO_IMPL = ("sort", "argsort", "round", "around", "dot", "vdot")

#: NumPy functions (not ufuncs) numba.cuda refuses in a kernel, by name, with why
#: (each checked with ``inspect_ptx(..., cc=(9, 0))`` against numba-cuda 0.30.4):
#: array creation, functions returning a new array, and reductions numba.cuda
#: implements only with its NRT (``numba.cuda.config.CUDA_ENABLE_NRT``, off by
#: default; with it on, numba.cuda compiles them and so does every target here),
#: and functions it compiles in no configuration (``np.sort``: no lowering;
#: ``np.round``: invalid NVVM IR; ``np.dot``). Every function of ``np.linalg``,
#: ``np.fft`` and ``np.random`` is refused too.
REFUSED = {
    **{n: "creates an array" for n in _CREATE},
    **{n: "returns a new array" for n in _NEW_ARRAY},
    **{n: "is implemented by numba.cuda only with its NRT" for n in _NEEDS_NRT},
    **{n: "has no numba.cuda implementation" for n in _NO_IMPL},
}
_MODULES = {
    "numpy.linalg": "has no numba.cuda implementation (no LAPACK on the GPU)",
    "numpy.fft": "has no numba.cuda implementation",
    "numpy.random": "draws random numbers, which numba.cuda cannot do with NumPy",
}


def cuda_nrt():
    """Is numba.cuda's NRT on (``numba.cuda.config.CUDA_ENABLE_NRT``, or the
    environment's ``NUMBA_CUDA_ENABLE_NRT`` before numba.cuda is imported)?"""
    config = getattr(sys.modules.get("numba.cuda"), "config", None)
    if config is not None and hasattr(config, "CUDA_ENABLE_NRT"):
        return bool(config.CUDA_ENABLE_NRT)
    return os.environ.get("NUMBA_CUDA_ENABLE_NRT", "0") not in ("", "0")


def _suggestion(name):
    if name in ("absolute", "abs"):
        return "abs(x)"
    if name in ("power", "float_power", "pow"):
        return "x ** y"
    if name in (
        "add",
        "subtract",
        "multiply",
        "negative",
        "positive",
        "floor_divide",
        "remainder",
        "mod",
        "true_divide",
        "square",
    ):
        return "the operator (+, -, *, //, %, x * x)"
    if name == "sign":
        return "(x > 0) - (x < 0)"
    if name in ("max", "amax", "nanmax", "min", "amin", "nanmin"):
        return "a loop, or max()/min() of scalars"
    if name == "where":
        return "a conditional expression (a if c else b)"
    if name in ("round", "around"):
        return "round(x) (half to even, as np.round) or math.floor(x + 0.5)"
    if name in _LOCAL_ARRAY_LIKE or name == "copy":
        return "cuda.local.array(shape, dtype) (xpu.local.array) for a per-thread array"
    if hasattr(math, name):
        return f"math.{name}(x)"
    return None


def complaint(obj, shown):
    """Why a kernel may not call *obj* (written *shown* in the source), or None."""
    if isinstance(obj, np.ufunc):
        if obj.__name__ in CUDA_UFUNCS:
            return None
        why = (
            f"{shown} is not among the NumPy ufuncs numba.cuda compiles in a kernel "
            f"(np.sin, np.log, np.maximum, ...: docs/numba-cuda.md)"
        )
        hint = _suggestion(obj.__name__)
        return why + (f"; use {hint}" if hint else "")
    owner = getattr(obj, "__self__", None)
    module = getattr(obj, "__module__", None) or ""
    if isinstance(owner, (np.random.RandomState, np.random.Generator)):
        module = "numpy.random"
    for prefix, why in _MODULES.items():
        if module == prefix or module.startswith(prefix + "."):
            hint = (
                ("draw them on the host and pass them in, or use numba.cuda.random's xoroshiro128p functions")
                if prefix == "numpy.random"
                else "compute it on the host, or write the loop"
            )
            return f"{shown} {why} in a kernel; {hint}"
    name = getattr(obj, "__name__", None)
    if module.split(".")[0] != "numpy" or name not in REFUSED or getattr(np, name, None) is not obj:
        return None
    why = REFUSED[name]
    if why == "has no numba.cuda implementation":
        why += " in a kernel"
    elif cuda_nrt():
        return None  # numba.cuda allocates with its NRT on
    else:
        why += (
            " in a kernel, which numba.cuda does only with its NRT on "
            "(numba.cuda.config.CUDA_ENABLE_NRT, off by default)"
        )
    hint = _suggestion(name)
    return f"{shown} {why}" + (f"; use {hint}" if hint else "")
