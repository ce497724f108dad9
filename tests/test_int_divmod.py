"""Integer ``//`` and ``%`` in lane code with a power-of-two divisor (a shift and a
mask, numquad/cpu/intrinsics.py ``int_mod``) give Numba's bits for every divisor.

numba.cuda's shared-memory tree sum tests ``tid % (2 * s) == 0``; on the CPU that
was an ``idiv`` per lane, two thirds of the kernel's time. A divisor that is a
positive power of two now takes ``a >> k`` and ``a & (2**k - 1)`` (Python's floor
division and remainder), any other (0, negative, odd) Numba's own lowering. The
oracle is plain ``numba.njit(error_model="numpy")`` per element (Numba's release
lowering, as numba.cuda's): 0 for a zero divisor and for the most negative int64
over -1. Inputs random over every bit length, with the edge values; outputs
poisoned.
"""

import numba
import numpy as np
import pytest
from numba import cuda

from numquad import xpu

from conftest import TARGETS

_DIVISORS = [1, 2, 4, 64, 2**31, 2**62, 3, 6, 1279, -1, -2, -4, -(2**63), 0, 2**63 - 1]


@numba.njit(error_model="numpy")
def _oracle(x, d, q, r):
    for i in range(x.size):
        q[i] = x[i] // d
        r[i] = x[i] % d


@xpu.jit
def _kernel(x, d, q, r):
    i = cuda.grid(1)
    if i < x.size:
        q[i] = x[i] // d
        r[i] = x[i] % d


@xpu.jit
def _block_kernel(x, d, q, r):
    # a barrier: the block function's lane loops (2-D: lane_nd)
    t = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    i = cuda.blockIdx.x * cuda.blockDim.x * cuda.blockDim.y + t
    cuda.syncthreads()
    if i < x.size:
        q[i] = x[i] // (d + 0 * t)
        r[i] = x[i] % d


def _values(dtype, rng, n=4096):
    """Random values of every bit length (both signs where signed), the type's edges first."""
    info = np.iinfo(dtype)
    shift = rng.integers(0, 63, n)
    mag = rng.integers(0, np.iinfo(np.int64).max, n, dtype=np.int64) >> shift
    v = np.where(rng.random(n) < 0.5, mag, -mag).astype(dtype)  # wraps into the type
    v[:6] = np.array([info.min, info.max, 0, 1, info.min + 1, info.max - 1], dtype)
    return v


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32, np.int8, np.uint64])
def test_floor_division_and_remainder_match_numba(target, dtype):
    rng = np.random.default_rng(np.dtype(dtype).itemsize)
    x = _values(dtype, rng)
    for d in _DIVISORS:
        if np.dtype(dtype).kind == "u" and d < 0:
            continue
        dv = np.dtype(np.int64 if d < 0 or d > np.iinfo(np.int64).max else np.int64).type(d)
        wq = np.zeros(x.size, np.float64 if dtype == np.uint64 else np.int64)
        wr = wq.copy()
        _oracle(x, dv, wq, wr)
        for k, launch in ((_kernel, (x.size // 64 + 1, 64)), (_block_kernel, ((x.size // 64 + 1, 1), (16, 4)))):
            q = np.full(x.size, -7, wq.dtype)
            r = q.copy()
            getattr(k, target)[launch](x, dv, q, r)
            np.testing.assert_array_equal(q.view(np.int64), wq.view(np.int64), err_msg=f"{dtype.__name__} // {d}")
            np.testing.assert_array_equal(r.view(np.int64), wr.view(np.int64), err_msg=f"{dtype.__name__} % {d}")


def test_the_lane_loop_takes_the_shift_path():
    from numba import typeof

    x = np.arange(64, dtype=np.int64)
    sig = (typeof(x), typeof(np.int64(4)), typeof(x), typeof(x))
    src = _kernel.inspect_cpu_source(sig)
    assert "_nq_ifloordiv(" in src and "_nq_imod(" in src
