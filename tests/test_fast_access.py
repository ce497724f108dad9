"""The fast lane loops' accesses with no-alias scopes (numquad/cpu/fastaccess.py).

A fast version whose accesses carry the scopes may run only where no two of its
arrays overlap: these kernels pass one array twice, views of one buffer that
interleave, and arrays inside poisoned buffers, and compare with NumPy. The IR
test checks what the scopes are for: the 2-D copy's loads and stores are vectors.
"""

import re

import numpy as np
import numba
import pytest
from numba import cuda

from numquad import Wave, xpu
from numquad.cpu import fastaccess

POISON = -7777.0


@xpu.jit
def _scale2d(img, bias, out):
    x, y = cuda.grid(2)
    if x < img.shape[1] and y < img.shape[0]:
        out[y, x] = img[y, x] * 2.0 + bias[x]  # (a third array, of one axis)


@xpu.jit
def _scale1d(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = a[i] * 2.0 + 1.0


@xpu.jit
def _accumulate(a, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = out[i] + a[i] * 3.0
    s = Wave.reduceSum(1)  # a second region
    if i < out.shape[0]:
        out[i] = out[i] - a[i] + s


def _inside(rng, shape, dtype=np.float64, pad=5):
    """An array of *shape* inside a poisoned buffer: (the array, the buffer)."""
    buf = np.full(int(np.prod(shape)) + 2 * pad, POISON, dtype)
    view = buf[pad : pad + int(np.prod(shape))].reshape(shape)
    view[...] = rng.standard_normal(shape)
    return view, buf


@pytest.mark.parametrize("block", [(16, 16), (32, 8), (8, 4), (12, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_2d_kernel_over_separate_arrays(block, dtype, rng):
    shape = (37, 71)
    img = rng.standard_normal(shape).astype(dtype)
    out, buf = _inside(rng, shape, dtype)
    out[...] = POISON
    grid = ((shape[1] + block[0] - 1) // block[0], (shape[0] + block[1] - 1) // block[1])
    bias = rng.standard_normal(shape[1]).astype(dtype)
    _scale2d[grid, block](img, bias, out)
    np.testing.assert_array_equal(out, img * dtype(2) + bias)
    assert (buf[:5] == POISON).all() and (buf[-5:] == POISON).all()


@pytest.mark.parametrize("block", [(16, 16), (32, 8)])
def test_a_2d_kernel_over_one_array_passed_twice(block, rng):
    img = rng.standard_normal((40, 64))
    bias = rng.standard_normal(64)
    want = img * 2.0 + bias
    _scale2d[(64 // block[0], 40 // block[1] + 1), block](img, bias, img)
    np.testing.assert_array_equal(img, want)


@pytest.mark.parametrize("transpose", [False, True])
def test_a_2d_kernel_over_layouts(transpose, rng):
    img = rng.standard_normal((48, 48))
    src = img.T if transpose else img
    out = np.full((48, 48), POISON, order="F" if transpose else "C")
    bias = np.ones(48)
    _scale2d[(3, 6), (16, 8)](src, bias, out)
    np.testing.assert_array_equal(out, src * 2.0 + 1.0)


def test_a_1d_kernel_over_one_array_passed_twice_and_interleaved_views(rng):
    a = rng.standard_normal(1000)
    want = a * 2.0 + 1.0
    _scale1d[4, 256](a, a)
    np.testing.assert_array_equal(a, want)
    # the even and odd elements of one buffer: their spans overlap, their bytes do not
    buf = rng.standard_normal(2000)
    even = buf[0::2].copy()
    _scale1d[4, 256](buf[0::2], buf[1::2])
    np.testing.assert_array_equal(buf[1::2], even * 2.0 + 1.0)
    np.testing.assert_array_equal(buf[0::2], even)


@pytest.mark.parametrize("n", [1, 31, 32, 100, 1000])
def test_a_kernel_that_reads_and_writes_one_array_beside_another(n, rng):
    a = rng.standard_normal(n)
    out, buf = _inside(rng, (n,))
    start = out.copy()
    _accumulate[(n + 63) // 64, 64](a, out)
    s = 32.0  # the sum of ones over a wave: every wave of a 64-thread block is whole
    np.testing.assert_array_equal(out, start + a * 3.0 - a + s)
    assert (buf[:5] == POISON).all() and (buf[-5:] == POISON).all()


def test_disjoint_never_says_so_of_arrays_that_share_bytes(rng):
    buf = np.arange(200.0)
    views = [
        buf,
        buf[:0],
        buf[:100],
        buf[100:],
        buf[99:101],
        buf[::2],
        buf[1::2],
        buf[::-1],
        buf[150:50:-3],
        buf[:150].reshape(10, 15),
        buf[:150].reshape(10, 15).T,
        buf[:150].reshape(10, 15)[:, 3:5],
        buf[50:].reshape(6, 25)[::-2, ::3],
        np.zeros(7),
    ]

    @numba.njit
    def disjoint(a, b):
        return fastaccess.disjoint(a, b)

    seen = set()
    for a in views:
        for b in views:
            got = disjoint(a, b)
            if np.shares_memory(a, b):
                assert not got, (a.shape, a.strides, b.shape, b.strides)
            seen.add(got)
    assert disjoint(buf[:100], buf[100:]) and not disjoint(buf[::2], buf[1::2])  # (spans: conservative)
    assert seen == {True, False}


def test_the_2d_copy_s_fast_loop_is_vector_loads_and_stores(rng):
    img = rng.standard_normal((64, 64))
    out = np.zeros_like(img)
    bias = rng.standard_normal(64)
    _scale2d[(2, 4), (32, 16)](img, bias, out)
    np.testing.assert_array_equal(out, img * 2.0 + bias)
    compiled = _scale2d._targets["cpu"].compile(tuple(numba.typeof(v) for v in (img, bias, out)), (32, 16, 1))
    ir = "\n".join(compiled.block.inspect_llvm().values())
    assert "!alias.scope" in ir and "!noalias" in ir
    assert re.search(r"load <\d+ x double>", ir) and re.search(r"store <\d+ x double>", ir), "the fast loop is scalar"


@xpu.jit
def _tile_sum(x, out):
    tile = cuda.shared.array((8, 33), np.float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    xx, yy = cuda.grid(2)
    tile[ty, tx] = x[yy, xx]
    cuda.syncthreads()
    out[yy, xx] = tile[ty, tx] + tile[7 - ty, tx] * 2.0


@xpu.jit
def _two_dynamic_views(x, out):
    a = cuda.shared.array(0, np.float64)
    b = cuda.shared.array(0, np.float64)  # the same bytes as a (numba.cuda)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    a[t] = 1.0
    cuda.syncthreads()
    v = b[t]
    a[t] = x[i]
    out[i] = b[t] + v  # the thread's own store, read back through the other view


def test_a_static_shared_tile_between_barriers(rng):
    x = rng.standard_normal((16, 64))
    out = np.full_like(x, POISON)
    _tile_sum[(2, 2), (32, 8)](x, out)
    tiles = x.reshape(2, 8, 2, 32)
    want = (tiles + tiles[:, ::-1] * 2.0).reshape(16, 64)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("block", [32, 64, 256])
def test_dynamic_shared_arrays_view_one_buffer(block, rng):
    n = block * 3
    x = rng.standard_normal(n)
    out = np.full(n, POISON)
    _two_dynamic_views[3, block, 0, block * 8](x, out)
    np.testing.assert_array_equal(out, x + 1.0)


@xpu.jit
def _reload(a, out, res):
    i = cuda.grid(1)
    if i < a.shape[0]:
        v = a[i]
        out[i] = v + 1.0
        res[i] = a[i] + v  # a reload: the store above may have changed a[i]


@pytest.mark.parametrize("block", [32, 64, 256])
def test_a_load_after_a_store_to_the_same_array_under_another_name(block, rng):
    n = block * 2
    a = rng.standard_normal(n)
    old = a.copy()
    res = np.full(n, POISON)
    _reload[2, block](a, a, res)
    np.testing.assert_array_equal(res, (old + 1.0) + old)
    b = rng.standard_normal(n)  # apart: the same values from the fast loop
    out, res2 = np.full(n, POISON), np.full(n, POISON)
    _reload[2, block](b, out, res2)
    np.testing.assert_array_equal(res2, 2 * b)
    np.testing.assert_array_equal(out, b + 1.0)


@xpu.jit
def _augmented(a, out, acc):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] += a[i] * 2.0
        acc[i] -= out[i]  # the element just stored, read again through its own name
        out[i] *= a[i]


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint8])
def test_augmented_stores_in_fast_loops(dtype, rng):
    n = 200
    a = rng.integers(0, 9, n).astype(dtype)
    out, acc = rng.integers(0, 9, n).astype(dtype), rng.integers(50, 99, n).astype(dtype)
    o0, c0 = out.copy(), acc.copy()
    _augmented[4, 64](a, out, acc)
    want = (o0 + a * 2.0).astype(dtype)  # each store converts to the array's type
    np.testing.assert_array_equal(acc, (c0 - want).astype(dtype))
    np.testing.assert_array_equal(out, (want * a).astype(dtype))
    same = rng.integers(0, 9, n).astype(dtype)  # one array as a and out: out[i] += out[i] * 2
    s0 = same.copy()
    acc = rng.integers(50, 99, n).astype(dtype)
    c0 = acc.copy()
    _augmented[4, 64](same, same, acc)
    want = (s0 + s0 * 2.0).astype(dtype)
    np.testing.assert_array_equal(acc, (c0 - want).astype(dtype))
    np.testing.assert_array_equal(same, (want * want).astype(dtype))
