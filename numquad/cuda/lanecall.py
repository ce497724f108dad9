"""Lane functions called on arrays, on the CUDA target: the generated lane-call kernel.

``f(*args, out=None)`` on the GPU (docs/architecture.md, section 1): the plan
both targets follow comes from numquad/_lanecall.py; here device arrays are
checked for the full broadcast shape, NumPy arrays are broadcast and copied to
the device, a device ``out=`` that overlaps an input is unaliased, and a 1-D
kernel written as source (:func:`lane_call_kernel`) runs the lane function's
device function once per element, element k as lane k % 32 of wave k // 32.
:class:`LaneCalls` is the part of ``CUDATarget`` (numquad/cuda/dispatch.py)
that does this; the CPU target's counterpart is numquad/cpu/arraycall.py.
"""

from __future__ import annotations

import re

import numpy as np

from numba import cuda
from numba.cuda.cudadrv.devicearray import DeviceNDArray
from numba.cuda.np import numpy_support

from .. import _lanecall
from ..errors import NumquadTypeError
from .intrinsics import HELPERS
from .._source import exec_source

__all__ = ["CALL_SLOTS", "LaneCalls", "lane_call_kernel"]

#: Threads per block of the generated lane-call kernel (a multiple of the wave).
_CALL_BLOCK = 256
#: Elements per thread of the generated lane-call kernel (see lane_call_kernel).
CALL_SLOTS = 4


def _is_device(a):
    return hasattr(a, "__cuda_array_interface__")


def _extent(a):
    """(first byte, end byte, itemsize) of the C-contiguous device array *a*."""
    cai = a.__cuda_array_interface__
    start = cai["data"][0]
    itemsize = np.dtype(cai["typestr"]).itemsize
    size = 1
    for extent in cai["shape"]:
        size *= extent
    return start, start + size * itemsize, itemsize


def _unalias_device(kargs, is_array, out):
    """Copy each device input that overlaps ``out`` other than element for element
    (``f(d[:-1], d[1:], out=d[1:])``): NumPy's rule, as if nothing overlapped; the
    kernel loads a thread's elements before it stores, so an input that is ``out``
    itself is safe."""
    o0, o1, osize = _extent(out)
    for k, (a, arr) in enumerate(zip(kargs, is_array)):
        if not arr:
            continue
        a0, a1, asize = _extent(a)
        if a0 < o1 and o0 < a1 and not (a0 == o0 and asize == osize):
            copy = cuda.device_array(a.shape, a.dtype)
            copy.copy_to_device(a)
            kargs[k] = copy


def _cai_shape(a):
    return tuple(a.__cuda_array_interface__["shape"])


def _lane_call_source(name, is_array, masked, slots):
    """The source of the lane-call kernel (see :func:`lane_call_kernel`)."""
    params = [f"a{k}" for k in range(len(is_array))]
    lines = [
        f"def {name}(n, out, {', '.join(params)}):",
        "    s = cuda.gridsize(1)",
        "    i0 = cuda.grid(1)",
        "    last = n - 1",
    ]
    if masked:
        lines.append("    e = _nq_entry_mask()")
    lines += [f"    i{j} = i{j - 1} + s" for j in range(1, slots)]
    # every load first, at an index clamped into the array (the stores below are
    # guarded): the loads of all slots are in flight together, and no store can
    # come between them (``out`` may be an input: each element is loaded and
    # stored by the same thread, so that is safe)
    for j in range(slots):
        for p, arr in zip(params, is_array):
            if arr:
                lines.append(f"    {p}_{j} = {p}[min(i{j}, last)]")
    for j in range(slots):
        args = ", ".join(f"{p}_{j}" if arr else p for p, arr in zip(params, is_array))
        if masked:
            # the member mask of slot j: the lanes of the wave whose element exists
            lines.append(f"    m{j} = _nq_ballot(e, i{j} < n)")
            args += f", _nq_mask=m{j}"
        lines.append(f"    if i{j} < n:")
        lines.append(f"        out[i{j}] = f({args})")
    return "\n".join(lines) + "\n"


def lane_call_kernel(device_fn, name, is_array, fastmath, masked=False, slots=None):
    """The 1-D kernel that runs *device_fn* once per element (``n`` of them).

    Element k is lane k % 32 of wave k // 32, as on the CPU. Thread t of the
    grid (of ``T`` threads) takes the elements ``t + j * T`` for ``j < slots``:
    each slot's 32 lanes are 32 consecutive elements, so every wave of every slot
    is a wave of the call, and the ``k < n`` guard leaves only the last partial.
    A thread loads all its slots before it computes and stores: with one element
    per thread a streaming call reached about the bandwidth of a one-element copy
    kernel, about 64 % of ``cuMemcpyDtoD`` on the H200 (docs/BENCHMARKS.md).
    *masked*: the function takes the member mask, the lanes whose element exists.
    """
    slots = CALL_SLOTS if slots is None else slots
    name = re.sub(r"[^0-9A-Za-z_]", "_", name)  # "<lambda>_lane_call"
    src = _lane_call_source(name, is_array, masked, slots)
    filename = f"<numquad lane call {name}>"
    scope = {"cuda": cuda, "f": device_fn, **HELPERS}
    exec_source(src, filename, scope)
    return cuda.jit(scope[name], fastmath=fastmath, lto=False)


class LaneCalls:
    """The lane-call half of ``CUDATarget`` (numquad/cuda/dispatch.py), a mixin: it
    uses the target's ``dispatcher``, ``_lock``, ``needs_mask``, ``return_type``,
    ``device_function`` and ``_compile_with_settings``."""

    def __init__(self):
        self._calls = {}
        self._call_plans = {}

    def call(self, args, out):
        """``f(*args, out=None)`` on the GPU (docs/architecture.md, section 1).

        NumPy arrays and scalars broadcast together with device arrays; NumPy
        arrays are broadcast on the host and copied to the device. A device
        array must already have the full broadcast shape and be C-contiguous
        (it is used in place; broadcasting it would need a copy, so that is a
        TypeError). Element k of the flattened (C order) broadcast is lane
        k % 32 of wave k // 32. Returns a numba.cuda device array of the
        broadcast shape and the function's return dtype; ``out`` (a device or
        NumPy array of that shape and dtype) is filled and returned instead.
        Every check runs before any GPU work.
        """
        d = self.dispatcher
        p = _lanecall.plan(d, args, device=True)
        shape, is_array = p.shape, p.is_array
        kargs = []
        for k, (v, arr) in enumerate(zip(p.values, is_array)):
            if not arr:
                kargs.append(v)
                continue
            if type(v) is DeviceNDArray:  # numba.cuda's own: no interface dict
                ok = v.shape == shape and v.is_c_contiguous()
            elif _is_device(v):
                cai = v.__cuda_array_interface__
                ok = tuple(cai["shape"]) == shape and _lanecall.cai_c_contiguous(cai)
            else:
                kargs.append(v)  # a NumPy array: broadcast and copied below
                continue
            if not ok:
                raise NumquadTypeError(
                    f"{d.where}: argument {k} of {d.__name__} is a device array of shape "
                    f"{_cai_shape(v)}; on CUDA a device array must have the full broadcast "
                    f"shape {shape} and be C-contiguous (NumPy arrays and scalars are "
                    f"broadcast)"
                )
            kargs.append(v)
        resdtype, kernel = self._call_plan(p.dtypes, is_array)
        _lanecall.check_out(d, out, shape, resdtype, device=True, strided_ok=False)

        # GPU work from here on
        n = 1
        for extent in shape:
            n *= extent
        for k, (a, arr) in enumerate(zip(kargs, is_array)):
            if not arr:
                continue
            if type(a) is not DeviceNDArray:
                a = (
                    cuda.to_device(np.ascontiguousarray(np.broadcast_to(a, shape)))
                    if isinstance(a, np.ndarray)
                    else cuda.as_cuda_array(a)
                )
            kargs[k] = a if a.ndim == 1 else a.reshape(n)
        host_out = out if out is not None and not _is_device(out) else None
        if out is None or host_out is not None:
            result = cuda.device_array(shape, dtype=resdtype)
        else:
            result = out if type(out) is DeviceNDArray else cuda.as_cuda_array(out)
        if n and out is not None and host_out is None:  # a device out=
            _unalias_device(kargs, is_array, result)
        if n:
            flat = result if result.ndim == 1 else result.reshape(n)
            per_block = _CALL_BLOCK * CALL_SLOTS
            kernel[(n + per_block - 1) // per_block, _CALL_BLOCK](np.int64(n), flat, *kargs)
        if host_out is not None:
            result.copy_to_host(host_out)
        return result if out is None else out

    def _call_plan(self, dtypes, is_array):
        """(result dtype, lane-call kernel) of a call on arguments of *dtypes*;
        typed (and its errors raised) on the first call of each."""
        key = (dtypes, is_array)
        plan = self._call_plans.get(key)
        if plan is None:
            elemtypes = tuple(numpy_support.from_dtype(dt) for dt in dtypes)
            restype = self.return_type(elemtypes)
            try:
                resdtype = np.dtype(numpy_support.as_dtype(restype))
            except Exception:  # noqa: BLE001 - a tuple, an array, None...
                resdtype = None
            if resdtype is None or resdtype.kind not in "biuf":
                raise _lanecall.not_a_scalar(self.dispatcher, restype, elemtypes) from None
            plan = self._call_plans[key] = (resdtype, self._lane_call(is_array))
        return plan

    def _lane_call(self, is_array):
        with self._lock:
            k = self._calls.get(is_array)
            if k is None:
                name = f"{self.dispatcher.__name__}_lane_call"
                k = self._calls[is_array] = lane_call_kernel(
                    self.device_function(), name, is_array, self.dispatcher.fastmath, masked=self.needs_mask
                )
                self._compile_with_settings(k)
            return k
