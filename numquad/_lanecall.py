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
- declared signatures (``@xpu.jit("int32(int32)")``): each array has a declared
  dtype, and a Python int fits its declared integer type;
- ``out=``: an array of the broadcast shape and of the function's return dtype,
  writable; one error per mistake, the same on both targets.

Errors name the line that called the function, where the function is defined,
what was passed and what is taken.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect

import numpy as np

from ._sites import call_site, defined_at
from .errors import NumquadLaunchError, NumquadTypeError

__all__ = ["Plan", "plan", "check_out", "not_a_scalar", "cai_c_contiguous", "is_dask", "dask_call", "signature_args"]

_OK_KINDS = "biuf"


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a lane call runs on: one entry per argument, and the broadcast shape."""

    values: tuple  #: arrays (host or device) and NumPy scalars, weak ones converted
    dtypes: tuple  #: the element dtype of each argument
    is_array: tuple  #: True where the argument is an array of at least one dimension
    shape: tuple  #: the broadcast shape, the shape of the result


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


def _site(d):
    """Where an error of a call of lane function *d* belongs: the user's line that
    called it (as a launch error names the launch), and where *d* is defined."""
    site = call_site(d)
    if site == d.where:
        return site
    return f"{site}: call of {d.__name__} ({defined_at(d, site)})"


def _param_names(d):
    names = d.__dict__.get("_nq_param_names")
    if names is None:
        try:
            names = list(inspect.signature(d.py_func).parameters)
        except (TypeError, ValueError):
            names = [f"arg{i}" for i in range(d.py_func.__code__.co_argcount)]
        d.__dict__["_nq_param_names"] = names
    return names


def _check_dtype(d, name, dtype, device):
    """A lane call's argument of *dtype*: bool, integer, float32 or float64 (float16 on
    the GPU only: Numba's CPU backend has none, and no target has a longer float);
    else the error naming the argument (Numba's own was a bare NotImplementedError)."""
    if dtype.kind in _OK_KINDS and dtype.itemsize <= 8 and (device or dtype != np.float16):
        return
    raise NumquadTypeError(
        f"{_site(d)}: argument '{name}' of {d.__name__} has dtype {dtype}; lane functions "
        f"take bool, integer, float32 and float64 arrays and scalars (float16 on the CUDA target only)"
    )


def plan(d, args, *, device=False):
    """Check the arguments of lane function *d* called on *args*; a :class:`Plan`.

    *device*: the call runs on the GPU, so CUDA device arrays are arguments too.
    """
    names = _param_names(d)
    if len(args) != len(names):
        raise NumquadTypeError(
            f"{_site(d)}: {d.__name__}({', '.join(names)}) takes {len(names)} arguments; got {len(args)}"
        )
    values, dtypes, is_array, shapes = [], [], [], []
    for name, a in zip(names, args):
        if hasattr(a, "__cuda_array_interface__"):
            if not device:
                raise NumquadTypeError(
                    f"{_site(d)}: argument '{name}' of {d.__name__} is a CUDA device array but "
                    f"this call runs on the CPU; pass host arrays, or call "
                    f"{d.__name__}.cuda(...) with device arrays"
                )
            cai = a.__cuda_array_interface__
            dt = np.dtype(cai["typestr"])
            _check_dtype(d, name, dt, device)
            shape = tuple(cai["shape"])
            values.append(a)
            dtypes.append(dt)
            is_array.append(True)  # used in place, never as a scalar
            shapes.append(shape)
            continue
        if a is None:
            default = names.index(name) >= len(names) - len(d.py_func.__defaults__ or ())
            raise NumquadTypeError(
                f"{_site(d)}: argument '{name}' of {d.__name__} is None{' (its default)' if default else ''}; "
                f"a lane function called on arrays takes bool, integer and float arrays and scalars "
                f"for every parameter: pass {name}, or call {d.__name__} from a kernel, where None "
                f"is a constant"
            )
        if isinstance(a, (bool, int, float)) and not isinstance(a, np.generic):
            values.append(a)  # weak: typed below
            dtypes.append(None)
            is_array.append(False)
            continue
        if isinstance(a, np.generic):
            _check_dtype(d, name, a.dtype, device)
            values.append(a)
            dtypes.append(a.dtype)
            is_array.append(False)
            continue
        if isinstance(a, np.ma.MaskedArray):
            raise NumquadTypeError(
                f"{_site(d)}: argument '{name}' of {d.__name__} is a masked array (numpy.ma); a "
                f"lane function reads every element and would ignore the mask: pass "
                f"{name}.filled(value) (or {name}.data) and apply the mask to the result"
            )
        try:
            arr = a if isinstance(a, np.ndarray) else np.asarray(a)
        except (ValueError, TypeError) as e:  # a ragged list: NumPy's words, the call named
            raise NumquadTypeError(
                f"{_site(d)}: argument '{name}' of {d.__name__} ({type(a).__name__}) is not an array "
                f"NumPy can make: {str(e).rstrip('.')}; a lane function called on arrays takes bool, integer and "
                f"float arrays (or what np.asarray makes one of) and scalars"
            ) from None
        _check_dtype(d, name, arr.dtype, device)
        if not arr.dtype.isnative:  # read as NumPy's ufuncs read it
            arr = arr.astype(arr.dtype.newbyteorder("="))
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
    except ValueError as e:  # NumPy's own words name the arguments and shapes
        raise NumquadLaunchError(
            f"{_site(d)}: {d.__name__}(...): the arguments do not broadcast together: {e}"
        ) from None
    strong = [dt for dt in dtypes if dt is not None]
    for k, (name, v) in enumerate(zip(names, values)):
        if dtypes[k] is not None:
            continue
        if isinstance(v, bool):
            dt = np.dtype(np.bool_)
        else:
            kinds = "f" if isinstance(v, float) else "iu"
            same = [t for t in strong if t.kind in kinds]
            # (with none, int64 or float64 as NumPy 2 reads a Python scalar alone: 2**63
            # does not fit, where np.result_type(2**63) would be uint64)
            dt = np.result_type(*same, v) if same else np.dtype(np.float64 if kinds == "f" else np.int64)
            if kinds == "iu" and dt.kind not in kinds:
                # int64 and uint64 arrays promote to float64 in NumPy; a Python int stays
                # an integer (a selector, a trip count, a shift): int64, as alone
                dt = np.dtype(np.int64)
        try:
            if dt.kind not in _OK_KINDS:
                raise OverflowError
            with np.errstate(over="ignore"):  # a float too large is inf, as in NumPy
                values[k] = dt.type(v)
        except OverflowError:
            held = (
                "which fits neither int64 nor uint64"
                if dt.kind not in _OK_KINDS or isinstance(v, int) and not -(2**63) <= v < 2**64
                else f"which {dt} cannot hold"
            )
            rule = (
                "a Python scalar takes the type of the call's arrays of its kind"
                if same
                else f"with no {'float' if kinds == 'f' else 'integer'} array in the call a Python "
                f"{type(v).__name__} is {dt}"
            )
            raise NumquadTypeError(
                f"{_site(d)}: argument '{name}' of {d.__name__} is the Python "
                f"{type(v).__name__} {v!r}, {held}; {rule} (pass a NumPy scalar to choose "
                f"another)"
            ) from None
        dtypes[k] = dt
    if getattr(d, "_declared", None):
        _check_declared(d, names, values, dtypes, is_array)
    return Plan(tuple(values), tuple(dtypes), tuple(is_array), shape)


def _check_declared(d, names, values, dtypes, is_array):
    """A lane function with declared signatures (``@xpu.jit("int32(int32)")``): each
    array argument must have a declared dtype (docs/api.md), as a kernel's arrays
    must; a Python int must fit the integer type it is declared as. Scalars are then
    converted to the signature that fits best, as in a kernel launch. Without this the
    elements were cast silently (float64 NaN to int32 -2147483648, int64 wrapped)."""
    from numba.core import types as _nbt
    from numba.np.numpy_support import as_dtype

    def dtype_of(t):
        try:
            return as_dtype(t) if isinstance(t, (_nbt.Boolean, _nbt.Integer, _nbt.Float)) else None
        except NotImplementedError:
            return None

    sigs = [tuple(a) for a, _ in d._declared if len(a) == len(values)]
    fits = [s for s in sigs if all(not arr or dtype_of(t) == dt for t, dt, arr in zip(s, dtypes, is_array))]
    declared = "; ".join("(" + ", ".join(str(t) for t in s) + ")" for s in sigs) or "other argument counts"
    if not fits:
        for k, (name, dt, arr) in enumerate(zip(names, dtypes, is_array)):
            want = {dtype_of(s[k]) for s in sigs} - {None}
            if arr and dt not in want:
                hint = f" (pass {name}.astype(np.{sorted(want, key=str)[0]}))" if len(want) == 1 else ""
                article = "an" if str(dt)[0] in "aeio" else "a"
                raise NumquadTypeError(
                    f"{_site(d)}: argument '{name}' of {d.__name__} is {article} {dt} array; "
                    f"{d.__name__} is declared for {declared}, and an array must have the "
                    f"declared dtype{hint}"
                )
        return
    for k, (name, a) in enumerate(zip(names, values)):
        if is_array[k]:
            continue
        want = {dtype_of(s[k]) for s in fits}
        if len(want) != 1 or None in want:
            continue
        (dt,) = want
        if dt.kind in "iu" and isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
            info = np.iinfo(dt)
            if not info.min <= int(a) <= info.max:
                raise NumquadTypeError(
                    f"{_site(d)}: argument '{name}' of {d.__name__} is {int(a)!r}, which {dt} "
                    f"cannot hold; {d.__name__} is declared for {declared}"
                )


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
                f"{_site(d)}: out= of {d.__name__} is a CUDA device array but this call runs "
                f"on the CPU; out= must be {takes}"
            )
        cai = out.__cuda_array_interface__
        oshape, odtype = tuple(cai["shape"]), np.dtype(cai["typestr"])
        contiguous, writeable, host = cai_c_contiguous(cai), not cai["data"][1], False
    elif isinstance(out, np.ndarray):
        oshape, odtype = out.shape, out.dtype
        contiguous, writeable, host = out.flags.c_contiguous, out.flags.writeable, True
    else:
        raise NumquadTypeError(f"{_site(d)}: out= of {d.__name__} is a {type(out).__name__}; out= must be {takes}")
    if oshape != tuple(shape):
        raise NumquadLaunchError(f"{_site(d)}: out= has shape {oshape}; {d.__name__}(...) gives shape {tuple(shape)}")
    if odtype != dtype:
        raise NumquadTypeError(f"{_site(d)}: out= has dtype {odtype}; {d.__name__}(...) returns {dtype} here")
    if not writeable:
        raise NumquadLaunchError(f"{_site(d)}: out= is read-only; {d.__name__}(...) writes its result there")
    if not contiguous and not (host and strided_ok):
        raise NumquadLaunchError(f"{_site(d)}: out= is not C-contiguous; on this target out= must be")


def not_a_scalar(d, restype, argtypes):
    """The error for a lane function that returns no scalar (a tuple, an array, None)."""
    return NumquadTypeError(
        f"{_site(d)}: {d.__name__} returns {restype} for arguments of types "
        f"({', '.join(map(str, argtypes))}); a lane function called on arrays must return "
        f"a bool, integer or float scalar"
    )


# ---------------------------------------------------------------------------
# dask arrays: a lazy call, one lane-function call per block
# ---------------------------------------------------------------------------


def is_dask(a):
    """Is *a* a dask array (without importing dask)?"""
    t = type(a)
    return t is not np.ndarray and t.__module__.startswith("dask.array") and hasattr(a, "chunks")


def _block_call(call, *blocks):
    return call(blocks)


def _ndim(a):
    try:
        return np.ndim(a)
    except Exception:  # noqa: BLE001 - not array-like: the plan's own error later
        return 0


def dask_call(d, args, out, call):
    """``d(*args)`` with dask arrays among *args*: a lazy dask array whose blocks are
    ``call(block_args)``. Equal to one call on the whole arrays only when every block
    starts on a wave boundary of the whole array's C order, so the chunking is
    checked: dask arrays of one shape and chunking, split along the first axis only,
    every block but the last a multiple of 32 elements. Anything else is an error
    that says how to rechunk, never a silently different answer."""
    import dask.array as da

    names = _param_names(d)
    if out is not None:
        raise NumquadTypeError(
            f"{_site(d)}: {d.__name__}(...) on dask arrays returns a new lazy dask array; "
            f"it takes no out= (use dask's da.store to write the result)"
        )
    first = None
    for name, a in zip(names, args):
        if is_dask(a):
            if first is None:
                first = (name, a)
            elif a.shape != first[1].shape or a.chunks != first[1].chunks:
                raise NumquadLaunchError(
                    f"{_site(d)}: {d.__name__}(...): dask arguments '{first[0]}' and '{name}' "
                    f"differ in shape or chunks ({first[1].shape} {first[1].chunks} vs "
                    f"{a.shape} {a.chunks}); give them the same chunks (a.rechunk(b.chunks))"
                )
        elif _ndim(a) > 0:
            # (a list too: broadcast block by block, it gave each block another shape
            # than the lazy array's)
            kind = "a NumPy array" if isinstance(a, np.ndarray) else f"a {type(a).__name__} of values"
            raise NumquadTypeError(
                f"{_site(d)}: {d.__name__}(...): argument '{name}' is {kind} beside "
                f"dask arrays; pass it as a dask array with the same chunks "
                f"(da.from_array({name}, chunks=...)) or as a scalar"
            )
    name, a = first
    row = int(np.prod(a.shape[1:], dtype=np.int64))
    whole_rows = all(len(c) == 1 for c in a.chunks[1:])
    starts_ok = all((c * row) % 32 == 0 for c in a.chunks[0][:-1]) if a.ndim else True
    if not (whole_rows and starts_ok):
        rows = 32 // int(np.gcd(32, max(row, 1)))  # rows per block: a multiple of this
        size = -(-a.chunks[0][0] // rows) * rows
        hint = ", ".join([f"0: {size}"] + [f"{k}: -1" for k in range(1, a.ndim)])
        raise NumquadLaunchError(
            f"{_site(d)}: {d.__name__}(...): the chunks of dask argument '{name}' {a.chunks} "
            f"do not start on wave boundaries (element k of the whole array, in C order, "
            f"is lane k % 32 of wave k // 32): split the first axis only, in blocks of a "
            f"multiple of {rows} row(s), e.g. {name}.rechunk({{{hint}}})"
        )
    probe = [np.empty((0,) + x.shape[1:], x.dtype) if is_dask(x) else x for x in args]
    dtype = call(tuple(probe)).dtype
    return da.map_blocks(functools.partial(_block_call, call), *args, dtype=dtype)


def signature_args(text, name, method):
    """The argument types of a signature string (``"void(float32[:], int32)"``), for
    the inspect methods of both targets; *name*.*method* words the error."""
    from numba.core import sigutils

    try:
        args, _ = sigutils.normalize_signature(text)
    except Exception as e:
        raise NumquadTypeError(
            f"{name}.{method}: cannot read the signature {text!r} ({e}); it takes "
            f"argument types, e.g. (numba.float32[:], numba.int32), or a string such as "
            f"'void(float32[:], int32)'"
        ) from None
    return args
