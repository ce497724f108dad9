"""Kernels for bench_cpu's compile-time section (d), imported in fresh processes.

Each numquad kernel has a plain Numba equivalent doing the same work without
cross-lane ops (``src[i ^ 1]`` for the quad swap, a sequential per-32 exclusive
scan for ``Wave.prefixSum``; float32 data), as an ``@njit`` loop and as an
``@njit(parallel=True)`` ``prange`` loop. Defining them compiles nothing:
both numquad and Numba compile lazily at the first call.
"""

import numba
import numpy as np
from numba import prange

from numquad import Quad, Wave, xpu

__all__ = ["nq_quad", "nj_quad", "np_quad", "nq_typical", "nj_typical", "np_typical"]


# -- the README example: a streaming quad kernel --------------------


@xpu.jit
def nq_quad(src, dst):
    i = xpu.grid(1)
    v = src[i]
    dst[i] = v + Quad.swapHorizontal(v)


@numba.njit(nogil=True)
def nj_quad(src, dst):
    for i in range(src.size):
        dst[i] = src[i] + src[i ^ 1]


@numba.njit(nogil=True, parallel=True)
def np_quad(src, dst):
    for i in prange(src.size):
        dst[i] = src[i] + src[i ^ 1]


# -- a typical kernel: bounds check, a quad swap, a wave scan --------------


@xpu.jit
def nq_typical(src, dst):
    i = xpu.grid(1)
    if i < src.size:
        v = src[i]
        w = v + Quad.swapHorizontal(v)
        dst[i] = Wave.prefixSum(w)


@numba.njit(nogil=True)
def nj_typical(src, dst):
    n = src.size
    for w0 in range(0, n, 32):
        acc = np.float32(0)
        for i in range(w0, min(w0 + 32, n)):
            v = src[i] + src[i ^ 1]
            dst[i] = acc
            acc += v


@numba.njit(nogil=True, parallel=True)
def np_typical(src, dst):
    n = src.size
    for w in prange((n + 31) // 32):
        acc = np.float32(0)
        for i in range(w * 32, min(w * 32 + 32, n)):
            v = src[i] + src[i ^ 1]
            dst[i] = acc
            acc += v
