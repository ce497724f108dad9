"""Block level: barriers, shared and local memory, atomics, and numba.cuda-style
kernels running unchanged under @xpu.jit, on every target."""

import numpy as np
import pytest

from numquad import NumquadCompileError, NumquadRuntimeError, NumquadTypeError, Wave, xpu

pytest.importorskip("numba_cuda")  # the numba-cuda package (numba.cuda alone may be a shim)
from numba import cuda  # noqa: E402


# -- a block scan from wave scans, shared memory and barriers ------------------------


@xpu.jit
def k_block_scan(x, out):
    sh = xpu.shared.array(32, np.int64)
    tid = xpu.threadIdx.x
    i = xpu.grid(1)
    v = x[i]
    s = Wave.prefixSum(v)
    w = tid // 32
    if xpu.laneid == 31:
        sh[w] = s + v
    xpu.syncthreads()
    if tid < 32:
        t = sh[tid] if tid < xpu.blockDim.x // 32 else 0
        sh[tid] = Wave.prefixSum(t)
    xpu.syncthreads()
    out[i] = s + sh[w]


@pytest.mark.parametrize("threads", [256, 1024])
def test_block_scan(target, rng, threads):
    x = rng.integers(-1000, 1000, threads * 6).astype(np.int64)
    out = np.full_like(x, 12345)
    getattr(k_block_scan, target)[6, threads](x, out)
    blocks = x.reshape(6, threads)
    exp = np.cumsum(blocks, axis=1) - blocks
    np.testing.assert_array_equal(out, exp.ravel())


# -- a shared-memory transpose with a 2-D block ---------------------------------------


@xpu.jit
def k_transpose(a, out):
    tile = xpu.shared.array((16, 17), np.float32)
    tx = xpu.threadIdx.x
    ty = xpu.threadIdx.y
    x = xpu.blockIdx.x * 16 + tx
    y = xpu.blockIdx.y * 16 + ty
    if y < a.shape[0] and x < a.shape[1]:
        tile[ty, tx] = a[y, x]
    xpu.syncthreads()
    x2 = xpu.blockIdx.y * 16 + tx
    y2 = xpu.blockIdx.x * 16 + ty
    if y2 < out.shape[0] and x2 < out.shape[1]:
        out[y2, x2] = tile[tx, ty]


def test_shared_transpose(target, rng):
    a = rng.standard_normal((50, 70)).astype(np.float32)
    out = np.full((70, 50), np.nan, np.float32)
    getattr(k_transpose, target)[(5, 4), (16, 16)](a, out)
    np.testing.assert_array_equal(out, a.T)


# -- atomics under heavy contention --------------------------------------------------


@xpu.jit
def k_counter(counter, olds, hist, x, mx, mn):
    i = xpu.grid(1)
    olds[i] = xpu.atomic.add(counter, 0, 1)
    xpu.atomic.add(hist, x[i] % 7, 1.0)
    xpu.atomic.max(mx, 0, x[i])
    xpu.atomic.min(mn, 0, x[i])


def test_atomics_contention(target, rng):
    n = 1 << 17
    counter = np.zeros(1, np.int64)
    olds = np.full(n, -1, np.int64)
    hist = np.zeros(7, np.float64)
    x = rng.integers(-(10**9), 10**9, n).astype(np.int64)
    mx = np.array([x[0]], np.int64)
    mn = np.array([x[0]], np.int64)
    getattr(k_counter, target)[n // 256, 256](counter, olds, hist, x, mx, mn)
    assert counter[0] == n
    np.testing.assert_array_equal(np.sort(olds), np.arange(n))  # every old value once
    np.testing.assert_array_equal(hist, np.bincount(x % 7, minlength=7).astype(np.float64))
    assert mx[0] == x.max() and mn[0] == x.min()


@xpu.jit
def k_cas_exch(slots, got, key):
    i = xpu.grid(1)
    got[i] = xpu.atomic.cas(slots, key[i], 0, i + 1)
    xpu.atomic.exch(slots, 99, i)


def test_cas_and_exch(target, rng):
    n = 4096
    slots = np.zeros(100, np.int32)
    got = np.full(n, -1, np.int32)
    key = rng.integers(0, 50, n).astype(np.int64)
    getattr(k_cas_exch, target)[n // 128, 128](slots, got, key)
    for k in np.unique(key):
        winners = np.flatnonzero((key == k) & (got == 0))
        assert len(winners) == 1  # exactly one thread swapped each slot
        assert slots[k] == winners[0] + 1
    assert 0 <= slots[99] < n


# -- local arrays ----------------------------------------------------------------------


@xpu.jit
def k_local(a, out):
    i = xpu.grid(1)
    t = xpu.local.array(4, np.int64)
    for k in range(4):
        t[k] = a[i] * (k + 1)
    s = Wave.prefixSum(t[3])
    out[i] = s + t[0] + t[1]


def test_local_arrays_across_cross_lane_ops(target, rng):
    a = rng.integers(-100, 100, 96).astype(np.int64)
    out = np.zeros_like(a)
    getattr(k_local, target)[3, 32](a, out)
    t3 = (a * 4).reshape(-1, 32)
    exp = (np.cumsum(t3, axis=1) - t3).ravel() + a * 3
    np.testing.assert_array_equal(out, exp)


# -- numba.cuda-style kernels, unchanged but for the decorator --------------------------


@xpu.jit
def warp_sum(a, out):
    i = cuda.grid(1)
    v = a[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


@xpu.jit
def shared_block_sum(a, out):
    sh = cuda.shared.array(128, dtype=np.float64)
    tid = cuda.threadIdx.x
    sh[tid] = a[cuda.grid(1)]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            sh[tid] += sh[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = sh[0]


@xpu.jit
def cuda_histogram(x, bins):
    i = cuda.grid(1)
    if i < x.shape[0]:
        cuda.atomic.add(bins, x[i], 1)


@xpu.jit
def warp_votes(a, out):
    i = cuda.grid(1)
    p = a[i] > 0
    b = cuda.ballot_sync(0xFFFFFFFF, p)
    up = cuda.shfl_up_sync(0xFFFFFFFF, a[i], 3)
    out[i, 0] = b
    out[i, 1] = up
    out[i, 2] = cuda.any_sync(0xFFFFFFFF, p)
    out[i, 3] = cuda.all_sync(0xFFFFFFFF, p)
    out[i, 4] = cuda.activemask()
    out[i, 5] = cuda.lanemask_lt()
    out[i, 6] = cuda.shfl_xor_sync(0xFFFFFFFF, a[i], 1)


def test_warp_shuffle_reduction(target, rng):
    a = rng.integers(0, 1000, 8192).astype(np.int64)
    out = np.zeros(1, np.int64)
    getattr(warp_sum, target)[32, 256](a, out)
    assert out[0] == a.sum()


def test_shared_memory_block_reduction(target, rng):
    a = rng.integers(-50, 50, 128 * 10).astype(np.float64)
    out = np.zeros(10)
    getattr(shared_block_sum, target)[10, 128](a, out)
    np.testing.assert_array_equal(out, a.reshape(10, 128).sum(axis=1))


def test_histogram(target, rng):
    x = rng.integers(0, 64, 100_000).astype(np.int64)
    bins = np.zeros(64, np.int32)
    getattr(cuda_histogram, target)[(100_000 + 255) // 256, 256](x, bins)
    np.testing.assert_array_equal(bins, np.bincount(x, minlength=64))


@pytest.mark.slow
def test_warp_votes_and_shuffles(target, rng):
    a = rng.integers(-3, 10, 64).astype(np.int64)
    out = np.zeros((64, 7), np.int64)
    getattr(warp_votes, target)[1, 64](a, out)
    w = a.reshape(2, 32)
    p = w > 0
    bits = (p.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
    lane = np.arange(32)
    np.testing.assert_array_equal(out[:, 0], np.repeat(bits.view(np.int32), 32))  # int32, as numba.cuda
    np.testing.assert_array_equal(out[:, 1], np.where(lane >= 3, np.roll(w, 3, axis=1), w).ravel())
    np.testing.assert_array_equal(out[:, 2], np.repeat(p.any(axis=1), 32))
    np.testing.assert_array_equal(out[:, 3], np.repeat(p.all(axis=1), 32))
    np.testing.assert_array_equal(out[:, 4], 0xFFFFFFFF)
    np.testing.assert_array_equal(out[:, 5], np.tile((1 << lane) - 1, 2))
    np.testing.assert_array_equal(out[:, 6], w[:, lane ^ 1].ravel())


# -- bad input ------------------------------------------------------------------------


def test_shared_array_needs_a_constant_shape():
    @xpu.jit
    def k(a, n):
        sh = xpu.shared.array(n, np.float32)
        sh[0] = 1
        a[0] = sh[0]

    with pytest.raises(NumquadCompileError) as e:
        k.cpu[1, 32](np.zeros(4, np.float32), 4)
    assert "shape must be a constant" in str(e.value) and __file__ in str(e.value)


def test_shared_array_dtype():
    @xpu.jit
    def k(a):
        sh = xpu.shared.array(4, object)
        a[0] = sh[0]

    with pytest.raises(NumquadCompileError) as e:
        k.cpu[1, 32](np.zeros(4))
    assert "unsupported dtype" in str(e.value)


@xpu.jit
def k_atomic_on(a, idx):
    xpu.atomic.add(a, idx, 1)


def test_atomic_errors():
    ro = np.zeros(4, np.int64)
    ro.flags.writeable = False
    with pytest.raises(NumquadTypeError, match="read-only"):
        k_atomic_on.cpu[1, 32](ro, 0)
    # a strided array works, as in numba.cuda (the element's address uses the strides)
    strided = np.zeros(8, np.int64)
    k_atomic_on.cpu[1, 32](strided[::2], 1)
    assert strided.tolist() == [0, 0, 32, 0, 0, 0, 0, 0]
    # a float index is truncated, as numba.cuda converts it to intp (tests/test_atomics.py)
    a = np.zeros(4, np.int64)
    k_atomic_on.cpu[1, 32](a, 1.5)
    assert a.tolist() == [0, 32, 0, 0]
    with pytest.raises(NumquadTypeError, match="idx must be"):
        k_atomic_on.cpu[1, 32](np.zeros(4, np.int64), 1.5j)
    with pytest.raises(NumquadTypeError, match="dtype"):
        k_atomic_on.cpu[1, 32](np.zeros(4, np.int8), 0)


@xpu.jit(debug=True)
def k_divergent_barrier(a):
    i = xpu.grid(1)
    if a[i] > 0:
        xpu.syncthreads()
    a[i] = 1


def test_divergent_barrier_is_an_error_in_debug():
    a = np.zeros(64, np.int64)
    a[:10] = 1
    with pytest.raises(NumquadRuntimeError, match="syncthreads") as e:
        k_divergent_barrier.cpu[1, 64](a)
    assert "block (0, 0, 0), thread" in str(e.value) and __file__ in str(e.value)
    b = np.ones(64, np.int64)  # every thread takes the branch: fine
    k_divergent_barrier.cpu[1, 64](b)


@xpu.jit
def warp_sum_tuple(a, out):
    i = cuda.grid(1)
    v = a[i]
    for off in (16, 8, 4, 2, 1):
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


def test_loop_over_constant_offsets(target, rng):
    a = rng.integers(0, 1000, 4096).astype(np.int64)
    out = np.zeros(1, np.int64)
    getattr(warp_sum_tuple, target)[16, 256](a, out)
    assert out[0] == a.sum()
    if target == "cpu":
        import numba

        src = warp_sum_tuple.inspect_cpu_source((numba.int64[::1], numba.int64[::1]))
        assert "_nq_XL_Wave_shuffleDown(_nq_m_entry, _nq_v__nq_x_0, _nq_v_v, 16)" in src
