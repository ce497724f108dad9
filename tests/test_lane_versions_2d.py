"""Lane loops in two versions for 2-D launches and tuple indices
(numquad/cpu/versioning.py ``plan_rows``, numquad/cpu/checkedloads.py ``_versioned_region``).

A 2-D block whose waves are whole rows of threads runs a region as rows of
threads outside and ``threadIdx.x`` inside; ``x, y = cuda.grid(2)`` is recomputed
there (codegen ``_remat``), so ``img[y, x]`` reads ``y`` once per row and ``x``
rising by one. Each axis of such an index is tested once before the loop, and the
loop's fast version (accesses unchecked, guards gone) runs only where every
lane's access is inside and every guard holds.

Every kernel here runs where the fast version applies to some waves and not to
others: images whose size is not a multiple of the block, offsets that reach past
an edge or go negative, guards that cut a row. Outputs are poisoned, inputs
random, and the expected values come from a per-thread model in NumPy written
here; the generated source is checked for the fast version where it must be there.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import cuda

from numquad import Quad, Wave, xpu
from numquad.errors import NumquadIndexError

RNG = np.random.default_rng(20261207)
POISON = -9999.0

BLOCKS = [(16, 16), (32, 8), (8, 4), (64, 2), (4, 8), (12, 4)]


def _launch(kernel, h, w, block, *args):
    grid = ((w + block[0] - 1) // block[0], (h + block[1] - 1) // block[1])
    kernel[grid, block](*args)


def _run(kernel, h, w, block):
    """A random h x w image and a poisoned output, *kernel* launched over them."""
    img = RNG.standard_normal((h, w))
    out = np.full((h, w), POISON)
    _launch(kernel, h, w, block, img, out)
    return img, out


def _threads(h, w, block):
    """Every (y, x) a launch covering h x w with *block* gives a thread."""
    gx = (w + block[0] - 1) // block[0] * block[0]
    gy = (h + block[1] - 1) // block[1] * block[1]
    return [(y, x) for y in range(gy) for x in range(gx)]


def _source(kernel, block, *args):
    tgt = kernel._targets["cpu"]
    shape = tuple(block) + (1,) * (3 - len(block))
    return tgt.compile(tuple(numba.typeof(a) for a in args), shape).source


@xpu.jit
def k_copy2d(img, out):
    x, y = cuda.grid(2)
    h, w = img.shape
    if y < h and x < w:
        out[y, x] = img[y, x] * 2.0 + 1.0


@xpu.jit
def k_shift(img, out, dy, dx):
    x, y = cuda.grid(2)
    if y < img.shape[0] and x < img.shape[1]:
        out[y + dy, x + dx] = img[y, x]


@xpu.jit
def k_transpose(img, out):
    x, y = cuda.grid(2)
    if y < img.shape[0] and x < img.shape[1]:
        out[x, y] = img[y, x]  # x on the first axis: strided, still tested once


@xpu.jit
def k_rgb(img, out):
    x, y = cuda.grid(2)
    if x < img.shape[1] and y < img.shape[0]:
        out[y, x] = img[y, x, 0] * 0.25 + img[y, x, 1] * 0.5 + img[y, x, 2] * 0.25


@xpu.jit
def k_no_guard(img, out):
    x, y = cuda.grid(2)
    out[y, x] = img[y, x] + 1.0  # no guard: threads past the edge raise


@xpu.jit
def k_window(img, out, y0, y1, x0, x1):
    x, y = cuda.grid(2)
    inside = y >= y0 and y < y1 and x >= x0 and x < x1
    if inside:
        out[y - y0, x - x0] = img[y, x]


@xpu.jit
def k_or_guard(img, out, c):
    x, y = cuda.grid(2)
    if y < img.shape[0] and x < img.shape[1]:
        if x < c or y < c:  # ``or``: no guard of the fast version, a masked branch
            out[y, x] = img[y, x]


@xpu.jit
def k_tile(img, out):
    tile = cuda.shared.array((8, 32), np.float64)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x, y = cuda.grid(2)
    h, w = img.shape
    v = 0.0
    if y < h and x < w:
        v = img[y, x]
    tile[ty, tx] = v
    cuda.syncthreads()
    if y < h and x < w:
        out[y, x] = tile[ty, tx] - tile[ty, (tx + 1) % 32]


@xpu.jit
def k_quads(img, out):
    x, y = xpu.quad_grid(2)
    h, w = img.shape
    v = img[min(y, h - 1), min(x, w - 1)]
    d = Quad.swapHorizontal(v)
    if y < h and x < w:
        out[y, x] = v - d


@xpu.jit
def k_after_op(img, out):
    x, y = cuda.grid(2)
    h, w = img.shape
    v = img[min(y, h - 1), min(x, w - 1)]
    s = cuda.shfl_xor_sync(0xFFFFFFFF, v, 1)  # a cross-lane op: x and y recomputed after it
    if y < h and x < w:
        out[y, x] = v + s + img[y, x]


@xpu.jit
def k_row_of_2d(x, out, k):
    i = cuda.grid(1)
    if i < x.shape[1]:
        out[k, i] = x[k, i] + x[k + 1, i]  # a 1-D launch, a uniform row


def _model_copy(img):
    return img * 2.0 + 1.0


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("h, w", [(37, 70), (32, 64), (5, 3)])
def test_a_guarded_2d_copy(block, h, w):
    img, out = _run(k_copy2d, h, w, block)
    np.testing.assert_array_equal(out, _model_copy(img))


@pytest.mark.parametrize("block", [(16, 16), (32, 8), (64, 2)])
def test_the_rows_loop_gets_a_fast_version(block):
    img = RNG.standard_normal((40, 70))
    out = np.full_like(img, POISON)
    _launch(k_copy2d, 40, 70, block, img, out)
    src = _source(k_copy2d, block, img, out)
    assert "_nq_lx" in src and "_nq_lrok((_nq_shp(img)[1],)" in src
    fast = src.split("_nq_lrok", 1)[1].split("else:", 1)[0]
    assert "_nq_lck(" not in fast and "_nq_six(" not in fast


@pytest.mark.parametrize("block", [(16, 16), (32, 8), (8, 4)])
@pytest.mark.parametrize("dy, dx", [(0, 0), (1, 2), (-1, -3), (0, -40), (3, 0)])
def test_shifted_stores_inside_the_output(block, dy, dx):
    h, w = 29, 45
    img = RNG.standard_normal((h, w))
    out = np.full((h + 3, w + 2), POISON)  # room for the positive shifts
    _launch(k_shift, h, w, block, img, out, dy, dx)
    want = np.full_like(out, POISON)
    for y in range(h):
        for x in range(w):
            want[y + dy, x + dx] = img[y, x]  # negative: from the end, as NumPy
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("block", [(16, 16), (32, 8)])
@pytest.mark.parametrize("dy, dx", [(4, 0), (0, 3), (-40, 0)])
def test_shifted_stores_past_the_edge_raise(block, dy, dx):
    h, w = 29, 45
    img = RNG.standard_normal((h, w))
    out = np.full((h + 3, w + 2), POISON)
    with pytest.raises(NumquadIndexError):
        _launch(k_shift, h, w, block, img, out, dy, dx)


@pytest.mark.parametrize("block", [(16, 16), (32, 8), (4, 8)])
def test_a_transposed_store(block):
    h, w = 23, 50
    img = RNG.standard_normal((h, w))
    out = np.full((w, h), POISON)
    _launch(k_transpose, h, w, block, img, out)
    np.testing.assert_array_equal(out, img.T)


@pytest.mark.parametrize("block", [(16, 16), (32, 8)])
def test_three_axes_with_a_constant_last(block):
    h, w = 33, 47
    img = RNG.standard_normal((h, w, 3))
    out = np.full((h, w), POISON)
    _launch(k_rgb, h, w, block, img, out)
    np.testing.assert_array_equal(out, img[:, :, 0] * 0.25 + img[:, :, 1] * 0.5 + img[:, :, 2] * 0.25)


@pytest.mark.parametrize("block", [(16, 16), (32, 8)])
def test_no_guard_on_an_exact_image(block):
    h, w = 64, 96
    img, out = _run(k_no_guard, h, w, block)
    np.testing.assert_array_equal(out, img + 1.0)


@pytest.mark.parametrize("block", [(16, 16), (32, 8)])
@pytest.mark.parametrize("h, w", [(44, 96), (64, 90)])
def test_no_guard_past_the_edge_raises_and_writes_nothing_outside(block, h, w):
    img = RNG.standard_normal((h, w))
    buf = np.full((h + 2, w), POISON)
    out = buf[:h]  # the rows after it must stay poisoned
    with pytest.raises(NumquadIndexError):
        _launch(k_no_guard, h, w, block, img, out)
    assert (buf[h:] == POISON).all()


@pytest.mark.parametrize("block", [(16, 16), (32, 8), (8, 4)])
@pytest.mark.parametrize("y0, y1, x0, x1", [(0, 40, 0, 70), (3, 20, 5, 37), (16, 32, 32, 64), (10, 5, 0, 70)])
def test_a_window_guard_through_a_name(block, y0, y1, x0, x1):
    h, w = 40, 70
    img = RNG.standard_normal((h, w))
    out = np.full((h, w), POISON)
    _launch(k_window, h, w, block, img, out, y0, y1, x0, x1)
    want = np.full_like(out, POISON)
    for y, x in _threads(h, w, block):
        if y0 <= y < y1 and x0 <= x < x1:
            want[y - y0, x - x0] = img[y, x]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("block", [(16, 16), (32, 8)])
@pytest.mark.parametrize("c", [0, 7, 20, 100])
def test_an_or_is_no_guard(block, c):
    h, w = 36, 52
    img = RNG.standard_normal((h, w))
    out = np.full((h, w), POISON)
    _launch(k_or_guard, h, w, block, img, out, c)
    want = np.full_like(out, POISON)
    for y in range(h):
        for x in range(w):
            if x < c or y < c:
                want[y, x] = img[y, x]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("h, w", [(16, 64), (19, 70)])
def test_a_shared_tile_in_a_kernel_with_barriers(h, w):
    img = RNG.standard_normal((h, w))
    out = np.full((h, w), POISON)
    _launch(k_tile, h, w, (32, 8), img, out)
    want = np.full_like(out, POISON)
    gx = (w + 31) // 32 * 32
    gy = (h + 7) // 8 * 8
    pad = np.zeros((gy, gx))
    pad[:h, :w] = img
    for y in range(h):
        for x in range(w):
            nx = x - x % 32 + (x % 32 + 1) % 32  # the next thread of the tile's row
            want[y, x] = pad[y, x] - pad[y, nx]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("block", [(16, 16), (32, 8), (8, 4)])
@pytest.mark.parametrize("h, w", [(32, 64), (31, 45)])
def test_quads_with_recomputed_pixels(block, h, w):
    img, out = _run(k_quads, h, w, block)
    e = np.pad(img, ((0, h % 2), (0, w % 2)), mode="edge")
    other = e.reshape(e.shape[0], -1, 2)[:, :, ::-1].reshape(e.shape)  # the pixel beside, in the 2 x 2 tile
    np.testing.assert_array_equal(out, (e - other)[:h, :w])


@pytest.mark.parametrize("block", [(16, 16), (32, 8)])
def test_indices_recomputed_after_a_cross_lane_op(block):
    h, w = 40, 70
    img, out = _run(k_after_op, h, w, block)
    gx = (w + block[0] - 1) // block[0] * block[0]
    gy = (h + block[1] - 1) // block[1] * block[1]
    # a thread's lane: its index in the block, row-major; its wave partner: lane ^ 1
    v = np.empty((gy, gx))
    for y in range(gy):
        for x in range(gx):
            v[y, x] = img[min(y, h - 1), min(x, w - 1)]
    want = np.empty((h, w))
    for y in range(h):
        for x in range(w):
            bx, by = x // block[0] * block[0], y // block[1] * block[1]
            lane = (y - by) * block[0] + (x - bx)
            p = lane ^ 1
            want[y, x] = v[y, x] + v[by + p // block[0], bx + p % block[0]] + img[y, x]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("n, k", [(100, 0), (256, 2), (31, 3), (40, 4)])
def test_a_uniform_row_in_a_1d_launch(n, k):
    x = RNG.integers(-1000, 1000, (5, n)).astype(np.int64)
    out = np.full((5, n), -1, np.int64)
    cuda_grid = ((n + 63) // 64, 64)
    if k + 1 >= 5:
        with pytest.raises(NumquadIndexError):
            k_row_of_2d[cuda_grid](x, out, k)
        return
    k_row_of_2d[cuda_grid](x, out, k)
    want = np.full_like(out, -1)
    want[k] = x[k] + x[k + 1]
    np.testing.assert_array_equal(out, want)


@xpu.jit
def k_halo(u, out):
    tile = cuda.shared.array((10, 34), np.float64)  # blocks of (32, 8), one cell of halo
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x, y = cuda.grid(2)
    h, w = u.shape
    inside = y < h and x < w  # recomputed in each region: a guard through a name
    if inside:
        tile[ty + 1, tx + 1] = u[y, x]
        if tx == 0 and x > 0:  # branches some lanes take: tested for every lane
            tile[ty + 1, 0] = u[y, x - 1]
        if tx == 31 and x + 1 < w:
            tile[ty + 1, 33] = u[y, x + 1]
        if ty == 0 and y > 0:
            tile[0, tx + 1] = u[y - 1, x]
        if ty == 7 and y + 1 < h:
            tile[9, tx + 1] = u[y + 1, x]
    cuda.syncthreads()
    if inside:
        if y > 0 and y < h - 1 and x > 0 and x < w - 1:
            out[y, x] = tile[ty, tx + 1] + tile[ty + 2, tx + 1] + tile[ty + 1, tx] + tile[ty + 1, tx + 2]
        else:
            out[y, x] = tile[ty + 1, tx + 1]


@pytest.mark.parametrize("h, w", [(16, 64), (37, 70), (8, 32), (3, 100)])
def test_a_halo_loaded_in_branches(h, w):
    u = RNG.standard_normal((h, w))
    out = np.full((h, w), POISON)
    _launch(k_halo, h, w, (32, 8), u, out)
    want = u.copy()
    want[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
    np.testing.assert_array_equal(out, want)
    src = _source(k_halo, (32, 8), u, out)
    assert src.count("_nq_lrok") >= 2  # both regions have a fast version


@xpu.jit
def k_halo_1d(x, out):
    sh = cuda.shared.array(66, np.int64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.shape[0]
    if i < n:
        sh[t + 1] = x[i]
        if t == 0 and i > 0:
            sh[0] = x[i - 1]
        if t == 63 and i + 1 < n:
            sh[65] = x[i + 1]
    cuda.syncthreads()
    if i > 0 and i < n - 1:
        out[i] = sh[t] - 2 * sh[t + 1] + sh[t + 2]


@pytest.mark.parametrize("n", [64, 128, 100, 65, 2])
def test_a_1d_halo_loaded_in_branches(n):
    x = RNG.integers(-1000, 1000, n).astype(np.int64)
    out = np.full(n, -1, np.int64)
    k_halo_1d[(n + 63) // 64, 64](x, out)
    want = np.full(n, -1, np.int64)
    want[1:-1] = x[:-2] - 2 * x[1:-1] + x[2:]
    np.testing.assert_array_equal(out, want)


@xpu.jit
def k_quad_stream(x, out):
    i = cuda.grid(1)
    v = x[i]
    out[i] = v + Quad.swapHorizontal(v)


@pytest.mark.parametrize("blocks, tpb", [(4, 64), (5, 50)])
def test_a_masked_loop_gets_no_fast_version_of_its_own(blocks, tpb):
    """A region keeps two loops: its masked loop (every access under ``if lane
    active``) is no third, versioned copy, which would only cost compile time."""
    x = RNG.standard_normal(256)
    out = np.full(256, POISON)
    n = blocks * tpb
    k_quad_stream[blocks, tpb](x, out)
    want = x + x.reshape(-1, 2)[:, ::-1].ravel()  # (50 threads a block: quads stay whole)
    np.testing.assert_array_equal(out[:n], want[:n])
    assert (out[n:] == POISON).all()
    src = k_quad_stream.inspect_cpu_source(tuple(numba.typeof(a) for a in (x, out)))
    assert "_nq_lrok" in src and "elif _nq_lrok" not in src


@xpu.jit
def k_tid_operands(img, out):
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    s = Wave.prefixSum(tx * 100 + ty)  # threadIdx as a whole wave's operand
    if y < img.shape[0] and x < img.shape[1]:
        out[y, x] = img[y, x] + s + cuda.threadIdx.x - 2 * cuda.threadIdx.y


@pytest.mark.parametrize("block", [(16, 16), (32, 8), (8, 4), (12, 4), (5, 7)])
def test_thread_ids_recomputed_per_lane_or_kept_for_an_op(block):
    h, w = 29, 45
    img, out = _run(k_tid_operands, h, w, block)
    bx, by = block
    want = np.empty((h, w))
    for y in range(h):
        for x in range(w):
            tx, ty = x % bx, y % by
            lane = ty * bx + tx
            first = lane - lane % 32  # the wave's first thread of the block
            s = sum((t % bx) * 100 + t // bx for t in range(first, lane))
            want[y, x] = img[y, x] + s + tx - 2 * ty
    np.testing.assert_array_equal(out, want)
    copy = np.full_like(img, POISON)
    _launch(k_copy2d, h, w, block, img, copy)
    np.testing.assert_array_equal(copy, _model_copy(img))
    src = _source(k_copy2d, block, img, copy)
    assert "_nq_tx = " not in src and "_nq_ty = " not in src  # (no wave stores them)
