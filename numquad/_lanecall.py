"""Lane functions called on arrays: the plan both targets follow.

``f(*args, out=None)`` (docs/architecture.md, section 1) is decided here, once,
for the CPU and the CUDA target alike; each target then only runs its kernel:

- the arguments are counted against the function's parameters, and each must be
  a bool, integer or float array or scalar (a NumPy array, anything
  ``np.asarray`` takes, a NumPy or Python scalar, or, on CUDA, a device array);
- arrays broadcast together by NumPy's rules; a 0-d array is a NumPy scalar;
- a Python scalar is *weak*, as in NumPy 2, but keeps its kind: a Python float
  takes the promoted type of the call's float arguments (float64 when there are
  none), a Python int the promoted type of its integer arguments (int64 when
  there are none), a Python bool stays bool. So ``f(x_float32, 2.0)`` computes
  in float32 on both targets, while ``f(x_float32, 3)`` still passes an integer
  (a selector, a trip count, a shift stays one);
- ``out=``: an array of the broadcast shape and of the function's return dtype,
  writable; one error per mistake, the same on both targets.

Errors name the function, its file and line, what was passed and what is taken.
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np

from .errors import NumquadLaunchError, NumquadTypeError

__all__ = ["Plan", "plan", "check_out", "not_a_scalar", "cai_c_contiguous"]

_OK_KINDS = "biuf"


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a lane call runs on: one entry per argument, and the broadcast shape."""

    values: tuple        #: arrays (host or device) and NumPy scalars, weak ones converted
    dtypes: tuple        #: the element dtype of each argument
    is_array: tuple      #: True where the argument is an array of at least one dimension
    shape: tuple         #: the broadcast shape, the shape of the result


def cai_c_contiguous(cai):
    """Is the ``__cuda_array_interface__`` *cai* C-contiguous (strides None, or C's)?"""
    strides = cai.get("strides")
    if strides is None:
        return True
    itemsize = np.dtype(cai["typestr"]).itemsize
    expected = []
    for extent in reversed(cai["shape"]):
        expected.append(itemsize)
        itemsize *= extent
    return all(s == e for s, e, n in zip(strides, reversed(expected), cai["shape"]) if n > 1)


def _param_names(d):
    names = d.__dict__.get("_nq_param_names")
    if names is None:
        try:
            names = list(inspect.signature(d.py_func).parameters)
        except (TypeError, ValueError):
            names = [f"arg{i}" for i in range(d.py_func.__code__.co_argcount)]
        d.__dict__["_nq_param_names"] = names
    return names


def _bad_dtype(d, name, dtype):
    return NumquadTypeError(
        f"{d.where}: argument '{name}' of {d.__name__} has dtype {dtype}; lane functions "
        f"take bool, integer and float arrays and scalars")


def plan(d, args, *, device=False):
    """Check the arguments of lane function *d* called on *args*; a :class:`Plan`.

    *device*: the call runs on the GPU, so CUDA device arrays are arguments too.
    """
    names = _param_names(d)
    if len(args) != len(names):
        raise NumquadTypeError(
            f"{d.where}: {d.__name__}({', '.join(names)}) takes {len(names)} arguments; "
            f"got {len(args)}")
    values, dtypes, is_array, shapes = [], [], [], []
    for name, a in zip(names, args):
        if hasattr(a, "__cuda_array_interface__"):
            if not device:
                raise NumquadTypeError(
                    f"{d.where}: argument '{name}' of {d.__name__} is a CUDA device array but "
                    f"this call runs on the CPU; pass host arrays, or call "
                    f"{d.__name__}.cuda(...) with device arrays")
            cai = a.__cuda_array_interface__
            dt = np.dtype(cai["typestr"])
            if dt.kind not in _OK_KINDS:
                raise _bad_dtype(d, name, dt)
            shape = tuple(cai["shape"])
            values.append(a)
            dtypes.append(dt)
            is_array.append(True)                   # used in place, never as a scalar
            shapes.append(shape)
            continue
        if isinstance(a, (bool, int, float)) and not isinstance(a, np.generic):
            values.append(a)                        # weak: typed below
            dtypes.append(None)
            is_array.append(False)
            continue
        if isinstance(a, np.generic):
            if a.dtype.kind not in _OK_KINDS:
                raise _bad_dtype(d, name, a.dtype)
            values.append(a)
            dtypes.append(a.dtype)
            is_array.append(False)
            continue
        arr = a if isinstance(a, np.ndarray) else np.asarray(a)
        if arr.dtype.kind not in _OK_KINDS:
            raise _bad_dtype(d, name, arr.dtype)
        if arr.ndim == 0:
            values.append(arr[()])
            dtypes.append(arr.dtype)
            is_array.append(False)
            continue
        values.append(arr)
        dtypes.append(arr.dtype)
        is_array.append(True)
        shapes.append(arr.shape)
    try:
        shape = tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError as e:             # NumPy's own words name the arguments and shapes
        raise NumquadLaunchError(
            f"{d.where}: {d.__name__}(...): the arguments do not broadcast together: "
            f"{e}") from None
    strong = [dt for dt in dtypes if dt is not None]
    for k, (name, v) in enumerate(zip(names, values)):
        if dtypes[k] is not None:
            continue
        if isinstance(v, bool):
            dt = np.dtype(np.bool_)
        else:
            kinds = "f" if isinstance(v, float) else "iu"
            same = [t for t in strong if t.kind in kinds]
            dt = np.result_type(*same, v) if same else np.result_type(v)
        try:
            if dt.kind not in _OK_KINDS:
                raise OverflowError
            with np.errstate(over="ignore"):        # a float too large is inf, as in NumPy
                values[k] = dt.type(v)
        except OverflowError:
            raise NumquadTypeError(
                f"{d.where}: argument '{name}' of {d.__name__} is the Python "
                f"{type(v).__name__} {v!r}, which {dt} cannot hold; a Python scalar takes the "
                f"type of the call's arrays of its kind (pass a NumPy scalar to choose "
                f"another)") from None
        dtypes[k] = dt
    return Plan(tuple(values), tuple(dtypes), tuple(is_array), shape)


def check_out(d, out, shape, dtype, *, device=False, strided_ok=True):
    """Check ``out=`` of a lane call returning *dtype* over *shape*.

    *device*: a CUDA device array is accepted. *strided_ok*: a non-contiguous NumPy
    ``out`` is accepted (the CPU target copies into it).
    """
    if out is None:
        return
    takes = "a NumPy array or a CUDA device array" if device else "a NumPy array"
    if hasattr(out, "__cuda_array_interface__"):
        if not device:
            raise NumquadTypeError(
                f"{d.where}: out= of {d.__name__} is a CUDA device array but this call runs "
                f"on the CPU; out= must be {takes}")
        cai = out.__cuda_array_interface__
        oshape, odtype = tuple(cai["shape"]), np.dtype(cai["typestr"])
        contiguous, writeable, host = cai_c_contiguous(cai), not cai["data"][1], False
    elif isinstance(out, np.ndarray):
        oshape, odtype = out.shape, out.dtype
        contiguous, writeable, host = out.flags.c_contiguous, out.flags.writeable, True
    else:
        raise NumquadTypeError(
            f"{d.where}: out= of {d.__name__} is a {type(out).__name__}; out= must be {takes}")
    if oshape != tuple(shape):
        raise NumquadLaunchError(
            f"{d.where}: out= has shape {oshape}; {d.__name__}(...) gives shape {tuple(shape)}")
    if odtype != dtype:
        raise NumquadTypeError(
            f"{d.where}: out= has dtype {odtype}; {d.__name__}(...) returns {dtype} here")
    if not writeable:
        raise NumquadLaunchError(
            f"{d.where}: out= is read-only; {d.__name__}(...) writes its result there")
    if not contiguous and not (host and strided_ok):
        raise NumquadLaunchError(
            f"{d.where}: out= is not C-contiguous; on this target out= must be")


def not_a_scalar(d, restype, argtypes):
    """The error for a lane function that returns no scalar (a tuple, an array, None)."""
    return NumquadTypeError(
        f"{d.where}: {d.__name__} returns {restype} for arguments of types "
        f"({', '.join(map(str, argtypes))}); a lane function called on arrays must return "
        f"a bool, integer or float scalar")
