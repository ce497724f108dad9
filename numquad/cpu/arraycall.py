"""Lane functions called on arrays, on the CPU (docs/architecture.md, section 1).

``f(*args, out=None)``: the arguments broadcast together by NumPy's rules and
are flattened in C order; element k is lane k % 32 of wave k // 32, and the
last wave may be partial; numquad/_lanecall.py checks the arguments and out=
as on CUDA. This runs a generated kernel through the wave
compiler (the lane function is inlined into it), spread over all cores.
"""

from __future__ import annotations

import linecache
import re
import threading
import weakref

import numba
import numpy as np

from .. import _lanecall
from . import launch as _launch
from .._source import exec_source

__all__ = ["call_lane_function", "prepare_args", "result_dtype"]

_THREADS = 256
_lock = threading.Lock()


def prepare_args(d, args):
    """Check the arguments (numquad/_lanecall.py); (values, broadcast shape, is_array flags)."""
    p = _lanecall.plan(d, args)
    return list(p.values), p.shape, p.is_array


def _flat(a, shape):
    if a.shape == shape and a.flags.c_contiguous:
        return a.reshape(-1)
    return np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1)


def _memo(d):
    """This module's caches for lane function *d*, kept on *d* itself: a module-level
    cache keyed by dispatchers would keep every lane function (and its compiled
    wrappers) alive for good."""
    memo = d.__dict__.get("_nq_lanecall")
    if memo is None:
        with _lock:
            memo = d.__dict__.setdefault("_nq_lanecall", {})
    return memo


def _memoised(fn):
    def cached(d, *key):
        memo = _memo(d)
        k = (fn.__name__,) + key
        try:
            return memo[k]
        except KeyError:
            pass
        value = memo[k] = fn(d, *key)
        return value

    cached.__name__ = fn.__name__
    cached.__doc__ = fn.__doc__
    return cached


@_memoised
def _wrappers(d, is_arr):
    """(kernel, return-type probe) wrapping lane function *d* for this arg layout."""
    from ..xpu import jit

    n = len(is_arr)
    params = [f"a{k}" for k in range(n)]
    call = ", ".join(f"a{k}[i]" if arr else f"a{k}" for k, arr in enumerate(is_arr))
    fname = f"lanecall_{re.sub(r'[^0-9A-Za-z_]', '_', d.__name__)}"  # "<lambda>"
    src = (
        f"def {fname}({', '.join(params + ['out', 'n'])}):\n"
        f"    i = xpu.grid(1)\n"
        f"    if i < n:\n"
        f"        out[i] = f({call})\n"
        f"def {fname}_rt({', '.join(params)}):\n"
        f"    r = f({', '.join(params)})\n"
        f"    return r\n"
    )
    # one file name per argument layout: each wrapper compiles from its own source
    # (numquad reads a function's source back by its file name when it compiles it)
    layout = "".join("a" if arr else "s" for arr in is_arr)
    filename = f"<numquad lane call of {d.__name__} at {d.filename}:{d.firstlineno} ({layout})>"
    from .. import xpu

    # __name__: the module Numba's disk cache imports to rebuild the wrapper's
    # environment (cache=True); the lane function's own, which is loaded
    ns = {"xpu": xpu, "f": d, "__name__": getattr(d.py_func, "__module__", None) or __name__}
    exec_source(src, filename, ns)
    # two dispatchers of one function share the name (and the text): the source
    # stays while either lives
    _SOURCE_USERS[filename] = _SOURCE_USERS.get(filename, 0) + 1
    weakref.finalize(d, _forget_source, filename)
    kernel = jit(ns[fname], debug=d.debug, fastmath=d.fastmath, cache=d.cache)
    kernel._nq_lane_of = d  # (its errors name the lane function: cpu/dispatch.py)
    return kernel, ns[fname + "_rt"]


_SOURCE_USERS = {}  # a wrapper's file name -> the live dispatchers whose it is


def _forget_source(filename):
    _SOURCE_USERS[filename] -= 1
    if not _SOURCE_USERS[filename]:
        del _SOURCE_USERS[filename]
        linecache.cache.pop(filename, None)


def result_dtype(d, vals, is_arr):
    """The dtype of lane function *d*'s result on a plan's *vals* (numquad/_lanecall.py):
    Numba's type of its return value, as the compiled targets give it (the python
    target's too: a value's own type can be narrower than the function's)."""
    types = tuple(numba.from_dtype(v.dtype) if arr else numba.typeof(v) for v, arr in zip(vals, is_arr))
    return _return_dtype(d, tuple(is_arr), types)


@_memoised
def _return_dtype(d, is_arr, argtypes):
    from . import shadow as _shadow
    from .typing import shadow_types
    from ..xpu import Dispatcher

    kernel, rt = _wrappers(d, is_arr)
    probe = Dispatcher(rt)
    tgt = probe._target("cpu")
    fe = tgt.frontend()
    shadow = _shadow.generate_shadow(fe, tgt._cpu_fn_for)
    try:
        typemap = shadow_types(shadow, argtypes)
    except numba.core.errors.TypingError as e:
        from .dispatch import _typing_error

        raise _typing_error(d, e) from None
    except numba.core.errors.UnsupportedBytecodeError as e:
        from .._numbatext import unsupported_construct

        raise unsupported_construct(d, e) from None
    ty = typemap.get("r")
    try:
        dt = np.dtype(numba.np.numpy_support.as_dtype(ty))
    except Exception:  # noqa: BLE001 - a tuple, an array, None...
        dt = None
    if dt is None or dt.kind not in "biuf":
        raise _lanecall.not_a_scalar(d, ty, argtypes) from None
    return dt


def _fast_key(d, args, out):
    """The memo key of a call in the common form (C-contiguous arrays of one shape,
    NumPy scalars, ``out`` None or a matching C-contiguous array), else None."""
    if d.debug or d._declared:
        # (declared types: each scalar's value is checked against its type on every
        # call, numquad/_lanecall.py; the memo keys on types only)
        return None
    shape = None
    key = []
    for a in args:
        t = type(a)
        if t is np.ndarray:
            if shape is None:
                shape = a.shape
            elif a.shape != shape:
                return None
            f = a.flags
            if not f.c_contiguous or not f.aligned:
                return None
            key.append((a.dtype, f.writeable))
        elif isinstance(a, np.generic):
            key.append(t)
        else:
            return None
    if shape is None or 0 in shape:
        return None
    if out is not None and not (
        type(out) is np.ndarray
        and out.shape == shape
        and out.flags.c_contiguous
        and out.flags.writeable
        and out.flags.aligned
    ):
        return None
    return tuple(key)


def _fast_plan(d, key, args):
    """(result dtype, compiled block function) for a call of *key*'s form, or None
    when the arguments need the full plan (a conversion, an error to raise)."""
    memo = _memo(d)
    k = ("fast", key)
    hit = memo.get(k)
    if hit is not None:
        return hit or None
    vals, shape, is_arr = prepare_args(d, args)
    if any(v is not a for v, a in zip(vals, args)):
        memo[k] = ()  # the plan converts an argument: not this path
        return None
    scalar_types = tuple(numba.from_dtype(v.dtype) if arr else numba.typeof(v) for v, arr in zip(vals, is_arr))
    restype = _return_dtype(d, is_arr, scalar_types)
    kernel, _ = _wrappers(d, tuple(is_arr))
    from .dispatch import typeof_args

    probe = [v.reshape(-1) if arr else v for v, arr in zip(vals, is_arr)]
    argtypes = typeof_args(kernel, probe + [np.empty(1, restype), 1])
    block = kernel._target("cpu").compile(argtypes, False).block
    hit = memo[k] = (restype, block)
    return hit


def _same_elements(a, out):
    """Is array *a* the very elements of *out* (so element k is read and written by
    the same lane: safe in place)?"""
    return (
        a.__array_interface__["data"][0] == out.__array_interface__["data"][0]
        and a.shape == out.shape
        and a.strides == out.strides
        and a.dtype.itemsize == out.dtype.itemsize
    )


def _unaliased(args, out):
    """*args* with each array that overlaps ``out`` in any other way copied first:
    NumPy computes ``np.add(a[:-1], a[1:], out=a[1:])`` as if nothing overlapped,
    while lanes storing before later lanes load would give a running sum."""
    if not isinstance(out, np.ndarray):
        return args
    fixed = None
    for k, a in enumerate(args):
        if not isinstance(a, np.ndarray) and (
            isinstance(a, memoryview) or hasattr(a, "__array__") or hasattr(a, "__array_interface__")
        ):
            # an array-like (a memoryview, an object with __array__) over the same
            # memory: the array it stands for, so that the overlap is seen
            a = np.asarray(a)
            if a.ndim and np.may_share_memory(a, out) and not _same_elements(a, out):
                fixed = list(args) if fixed is None else fixed
                fixed[k] = a.copy()
            continue
        if isinstance(a, np.ndarray) and a.ndim and np.may_share_memory(a, out) and not _same_elements(a, out):
            fixed = list(args) if fixed is None else fixed
            fixed[k] = a.copy()
    return args if fixed is None else tuple(fixed)


def call_lane_function(d, args, out):
    if out is not None:
        args = _unaliased(args, out)
    key = _fast_key(d, args, out)
    if key is not None:
        # the common call: one memo lookup, then the compiled block function (the
        # same code as the general path below, without re-planning and re-typing)
        plan = _fast_plan(d, key, args)
        if plan is not None and (out is None or out.dtype == plan[0]):
            restype, block = plan
            shape = next(a.shape for a in args if type(a) is np.ndarray)
            result = out if out is not None else np.empty(shape, restype)
            size = result.size
            flat = [a.reshape(-1) if type(a) is np.ndarray else a for a in args]
            blocks = -(-size // _THREADS)
            try:
                _launch.run_grid(block, flat + [result.reshape(-1), size], (blocks, 1, 1), (_THREADS, 1, 1))
            except Exception as e:
                # the user's own raise with its element, a bounds check in the user's
                # words: as the general path's launch of the wrapper kernel says them
                kernel = _wrappers(d, tuple(type(a) is np.ndarray for a in args))[0]
                dims = ((blocks, 1, 1), (_THREADS, 1, 1), 1, 1)
                err = kernel._target("cpu").launch_error(e, dims)
                if err is None:
                    raise
                raise err from None
            return result
    vals, shape, is_arr = prepare_args(d, args)
    restype = result_dtype(d, vals, is_arr)
    _lanecall.check_out(d, out, shape, restype)
    size = int(np.prod(shape, dtype=np.int64))
    result = out if out is not None else np.empty(shape, restype)
    if size == 0:
        return result
    # (an ndarray subclass such as np.matrix keeps its shape in reshape: its base view)
    base = result.view(np.ndarray) if type(result) is not np.ndarray else result
    flat_out = base.reshape(-1) if base.flags.c_contiguous else np.empty(size, restype)
    flat = [_flat(np.asarray(v), shape) if arr else v for v, arr in zip(vals, is_arr)]
    kernel, _ = _wrappers(d, is_arr)
    blocks = -(-size // _THREADS)
    kernel.cpu[blocks, _THREADS](*flat, flat_out, size)
    if not base.flags.c_contiguous:
        base[...] = flat_out.reshape(shape)
    return result
