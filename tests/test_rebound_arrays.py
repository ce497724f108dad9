"""A shared or local array's name bound to another array (``sh = out``, ``loc =
loc[c:]``): the bounds checks of a release build take the shape the name holds
at the access, not the allocation's constant shape (numquad/cpu/codegen.py
``_BlockGen.const_shapes``). Before, such accesses were checked against the
allocation's shape, and memory past the smaller array was written and read with
no error. Also: a branch whose only statement allocates a local array compiles.

Each kernel compiles under numba.cuda; the expected values are written here per
thread, and the arrays sit inside poisoned buffers whose edges must stay poisoned.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

from numquad import xpu
from numquad.errors import NumquadIndexError

RNG = np.random.default_rng(20261207)


def k_store_into_argument(out, c):
    sh = cuda.shared.array(64, np.float64)
    if c > 0:
        sh = out
    t = cuda.threadIdx.x
    sh[t] = 5.0


def k_load_from_argument(x, out):
    loc = cuda.local.array(64, np.float64)
    loc = out
    t = cuda.threadIdx.x
    x[t] = loc[t]


def k_local_slice(out, c):
    loc = cuda.local.array(8, np.int64)
    for q in range(8):
        loc[q] = q * 3
    loc = loc[c:]
    t = cuda.threadIdx.x
    out[t] = loc[t % 8]


def k_shared_slice(out, c):
    sh = cuda.shared.array(64, np.float64)
    sh = sh[c:]
    t = cuda.threadIdx.x
    sh[t] = 1.0 * t
    cuda.syncthreads()
    out[t] = sh[t]


def k_alloc_in_a_branch(x, out):
    loc = cuda.local.array(4, np.float64)
    t = cuda.threadIdx.x
    if t > 3:
        loc = cuda.local.array(4, np.float64)  # the branch's only statement
    loc[1] = x[t]
    out[t] = loc[1] * 2.0


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("threads, raises", [(10, False), (16, True), (32, True)])
def test_a_store_through_a_name_rebound_to_an_argument(debug, threads, raises):
    buf = np.full(60, -9.0)
    out = buf[5:15]
    k = xpu.jit(debug=debug)(k_store_into_argument)
    if raises:
        with pytest.raises(NumquadIndexError, match="line"):
            k[1, threads](out, 1)
    else:
        k[1, threads](out, 1)
        assert (out == 5.0).all()
    assert (buf[:5] == -9.0).all() and (buf[15:] == -9.0).all()


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("threads", [10, 16])
def test_a_load_through_a_name_rebound_to_an_argument(debug, threads):
    buf = np.full(30, -9.0)
    buf[5:15] = RNG.standard_normal(10)
    out = buf[5:15]
    x = np.full(threads, 0.5)
    k = xpu.jit(debug=debug)(k_load_from_argument)
    if threads > 10:
        with pytest.raises(NumquadIndexError):
            k[1, threads](x, out)
    else:
        k[1, threads](x, out)
        np.testing.assert_array_equal(x, out)


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("c", [0, 4])
def test_a_local_array_sliced_into_its_own_name(debug, c):
    out = np.full(32, -7, np.int64)
    k = xpu.jit(debug=debug)(k_local_slice)
    if c:
        with pytest.raises(NumquadIndexError):
            k[1, 32](out, c)
    else:
        k[1, 32](out, c)
        np.testing.assert_array_equal(out, (np.arange(32) % 8) * 3)


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("c, threads", [(0, 64), (48, 16), (48, 64)])
def test_a_shared_array_sliced_into_its_own_name(debug, c, threads):
    out = np.full(threads, -1.0)
    k = xpu.jit(debug=debug)(k_shared_slice)
    if threads > 64 - c:
        with pytest.raises(NumquadIndexError, match="line 52"):
            k[1, threads](out, c)
    else:
        k[1, threads](out, c)
        np.testing.assert_array_equal(out, np.arange(threads, dtype=np.float64))


def test_a_branch_that_only_allocates_a_local_array():
    x = RNG.standard_normal(32)
    out = np.full(32, np.nan)
    xpu.jit(k_alloc_in_a_branch)[1, 32](x, out)
    np.testing.assert_array_equal(out, x * 2.0)
