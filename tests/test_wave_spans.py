"""A kernel with barriers runs each stretch of code without a barrier (or a jump)
wave by wave, as a kernel without barriers does, and the block-wide lane loops
only where it must (numquad/cpu/codegen.py ``_BlockGen.gen_span``). What may not
run once per wave stays block-wide: a value the same in every thread that the
stretch reads and then changes (``s //= 2``, ``while s > 0``, a swap of two
arrays), and local arrays, whose rows are the block's lanes. Each kernel below
mixes both, with random inputs, poisoned outputs and blocks of one, several and a
partial last wave; the expected values come from NumPy."""

import numba
import numpy as np
import pytest
from numba import cuda

from numquad import Quad, Wave, xpu

POISON = -987654321


@xpu.jit
def k_tree(a, out):
    # numba.cuda's docs' reduction: a uniform `s` halved between barriers
    sh = xpu.shared.array(256, np.int64)
    tid = xpu.threadIdx.x
    i = xpu.grid(1)
    v = np.int64(0)
    if i < a.size:
        v = a[i]
    sh[tid] = v
    xpu.syncthreads()
    s = xpu.blockDim.x // 2
    while s > 0:
        if tid < s:
            sh[tid] += sh[tid + s]
        xpu.syncthreads()
        s //= 2
    if tid == 0:
        out[xpu.blockIdx.x] = sh[0]


@xpu.jit
def k_scan_then_count(a, out, counts):
    # ops in a loop whose counter is uniform, a wave's total to shared memory, then a
    # barrier and a second stretch that reads every wave's total
    tot = xpu.shared.array(32, np.int64)
    tid = xpu.threadIdx.x
    i = xpu.grid(1)
    d = np.int64(-1)
    if i < a.size:
        d = a[i] % 4
    rank = np.int64(0)
    k = 0
    for r in range(4):
        mine = d == r
        below = Wave.prefixCountBits(mine)
        if mine:
            rank = np.int64(below) + 100 * r
        k += 1  # a uniform counter changed in the stretch: stays block-wide
    c = Wave.countBits(d >= 0)
    if Wave.laneId() == 0:
        tot[tid // 32] = c
    xpu.syncthreads()
    before = np.int64(0)
    for w in range(tid // 32):
        before += tot[w]
    if i < a.size:
        out[i] = rank + 1000 * before + 10**6 * k
    if tid == 0:
        counts[xpu.blockIdx.x] = tot[0]


@xpu.jit
def k_swap(a, b, out):
    # two arrays swapped by every thread between barriers (a value the same in every
    # thread, assigned after it is read)
    tid = xpu.threadIdx.x
    i = xpu.grid(1)
    src, dst = a, b
    for step in range(3):
        if i < a.size:
            dst[i] = src[i] * 2 + Quad.swapHorizontal(src[i])
        xpu.syncthreads()
        src, dst = dst, src
    if i < a.size:
        out[i] = src[i] + tid


@xpu.jit
def k_local(a, out):
    # a local array kept across a barrier: the kernel keeps block-wide lane loops
    buf = xpu.local.array(3, np.int64)
    i = xpu.grid(1)
    x = np.int64(0)
    if i < a.size:
        x = a[i]
    for j in range(3):
        buf[j] = Wave.prefixSum(x) + j
    xpu.syncthreads()
    if i < a.size:
        out[i] = buf[0] + buf[1] * 3 + buf[2] * 7


def _waves(x, block):
    """x padded to whole blocks and split into waves: shape (blocks, waves, 32)."""
    nb = -(-x.size // block)
    w = -(-block // 32)
    pad = np.zeros(nb * block, x.dtype)
    pad[: x.size] = x
    blocks = pad.reshape(nb, block)
    out = np.zeros((nb, w * 32), x.dtype)
    out[:, :block] = blocks
    return out.reshape(nb, w, 32)


def _exists(n, block):
    """Which lanes of _waves(...) hold a thread of the launch (in the array or not)."""
    nb = -(-n // block)
    w = -(-block // 32)
    e = np.zeros((nb, w * 32), bool)
    e[:, :block] = True
    return e.reshape(nb, w, 32)


@pytest.mark.parametrize("block", [32, 100, 256])
def test_a_uniform_value_halved_between_barriers(rng, block):
    n = 5 * block - int(rng.integers(0, 7))
    a = rng.integers(-1000, 1000, n).astype(np.int64)
    nb = -(-n // block)
    out = np.full(nb, POISON, np.int64)
    k_tree[nb, block](a, out)
    # the tree adds the pairs s apart for s = block // 2, block // 4, ..., 1: with a
    # block that is not a power of two, some elements are left out, as on a GPU
    sh = _waves(a, block).reshape(nb, -1)[:, :block].copy()
    s = block // 2
    while s > 0:
        sh[:, :s] += sh[:, s : 2 * s]
        s //= 2
    np.testing.assert_array_equal(out, sh[:, 0])


@pytest.mark.parametrize("block", [64, 100, 256])
def test_ops_in_a_uniform_loop_then_a_barrier(rng, block):
    n = 4 * block - int(rng.integers(1, 40))
    a = rng.integers(0, 1000, n).astype(np.int64)
    nb = -(-n // block)
    out = np.full(n, POISON, np.int64)
    counts = np.full(nb, POISON, np.int64)
    k_scan_then_count[nb, block](a, out, counts)
    exists = _exists(n, block)  # the launch's threads, in the array or past it
    in_array = _waves(np.ones(n, np.int64), block) == 1
    d = np.where(in_array, _waves(a % 4, block), -1)
    rank = np.zeros_like(d)
    for r in range(4):
        mine = (d == r) & exists
        below = np.cumsum(mine, axis=2) - mine
        rank = np.where(mine, below + 100 * r, rank)
    c = ((d >= 0) & exists).sum(axis=2)  # each wave's count
    before = np.cumsum(c, axis=1) - c
    want = rank + 1000 * before[:, :, None] + 4 * 10**6
    np.testing.assert_array_equal(out, want.reshape(nb, -1)[:, :block].reshape(-1)[:n])
    np.testing.assert_array_equal(counts, c[:, 0])


@pytest.mark.parametrize("block", [32, 128, 100])
def test_arrays_swapped_between_barriers(rng, block):
    n = 3 * block - int(rng.integers(0, 5))
    a = rng.integers(-100, 100, n).astype(np.int64)
    b = np.full(n, POISON, np.int64)
    out = np.full(n, POISON, np.int64)
    k_swap[-(-n // block), block](a.copy(), b, out)
    x = a.copy()
    # Quad.swapHorizontal reads lane ^ 1 of the block's lanes; a partner that is no
    # thread of the block, or a thread past the array (inactive), gives the own value
    t = np.arange(n) % block
    partner = np.where((t ^ 1) < block, np.arange(n) - t + (t ^ 1), np.arange(n))
    partner = np.where(partner < n, partner, np.arange(n))
    for _ in range(3):
        x = x * 2 + x[partner]
    np.testing.assert_array_equal(out, x + t)


@pytest.mark.parametrize("block", [64, 100])
def test_a_local_array_kept_across_a_barrier(rng, block):
    n = 3 * block - int(rng.integers(0, 9))
    a = rng.integers(-1000, 1000, n).astype(np.int64)
    out = np.full(n, POISON, np.int64)
    k_local[-(-n // block), block](a, out)
    w = _waves(a, block)
    s = (np.cumsum(w, axis=2) - w).reshape(w.shape[0], -1)[:, :block].reshape(-1)[:n]
    np.testing.assert_array_equal(out, s * 11 + 3 + 14)


def test_a_kernel_with_barriers_runs_its_stretches_wave_by_wave():
    """The generated code: the loop of ops runs inside a loop over the block's waves
    (a span), the stretch after the barrier (one region reading the lane arrays
    `rank`) block-wide; the local-array kernel keeps block-wide lane loops."""
    sig = (numba.int64[::1], numba.int64[::1], numba.int64[::1])
    src = k_scan_then_count.inspect_cpu_source(sig)
    span = "_nq_G = _nq_i32(32)"  # a span's wave: 32 lanes
    assert src.count(span) == 1, src
    assert "_nq_XL_Wave_prefixCountBits" in src[src.index(span) : src.rindex("_nq_G = _nq_GB")]
    assert span not in k_local.inspect_cpu_source(sig[:2])


@xpu.jit
def k_block_scan_tail(x, out):
    # the block scan's shape (examples/block_scan_radix.py): the last stretch is one
    # region reading lane arrays made before the barrier (s, w)
    tot = xpu.shared.array(32, np.int64)
    tid = xpu.threadIdx.x
    i = xpu.grid(1)
    v = x[i]
    s = Wave.prefixSum(v)
    w = tid // 32
    if Wave.laneId() == 31:
        tot[w] = s + v
    xpu.syncthreads()
    out[i] = s + tot[w] * 1000


@pytest.mark.parametrize("block", [64, 256])
def test_a_last_region_reading_lane_arrays_stays_block_wide(rng, block):
    """Such a stretch runs as one block-wide lane loop, not a loop over the waves
    rebinding each array's view (callgrind: the block scan 27 % fewer instructions,
    docs/BENCHMARKS.md); the first stretch, with its op, is still a span."""
    n = 4 * block
    x = rng.integers(-100, 100, n).astype(np.int64)
    out = np.full(n, POISON, np.int64)
    k_block_scan_tail[4, block](x, out)
    w = x.reshape(-1, 32)
    excl = (np.cumsum(w, axis=1) - w).ravel()
    tot = np.repeat(w.sum(axis=1), 32)
    np.testing.assert_array_equal(out, excl + tot * 1000)
    src = k_block_scan_tail.inspect_cpu_source((numba.int64[::1], numba.int64[::1]))
    assert src.count("_nq_G = _nq_i32(32)") == 1, src  # one span: the first stretch
    tail = src[src.rindex("_nq_G = _nq_GB") :]  # after the span: the block's lanes again
    assert "_nq_G = _nq_i32(32)" not in tail and "_nq_fs1(out" in tail, src


# -- found by a probe of the spans (thirty-eighth session): each was wrong in waves
# 1, 2, ... only, so blocks of several waves with the expected value of every thread


@xpu.jit
def k_tuple_after_read(x, out):
    i = xpu.grid(1)
    m = 1
    xpu.syncthreads()
    v = x[i] * m  # every thread reads m == 1
    s = Wave.reduceSum(v)
    m, z = 5, 0  # assigned after the read, in the same stretch
    out[i] = s + m + z


@xpu.jit
def k_for_target_after_read(x, out, flag):
    i = xpu.grid(1)
    r = 7
    xpu.syncthreads()
    s = 0
    if flag:
        v = x[i] * r  # r == 7 in every thread
        s = Wave.reduceSum(v)
        for r in range(2):  # r rebound after the read
            s += Wave.shuffleXor(v, 1)
    out[i] = s


@xpu.jit
def k_loop_reads_its_inner_target(x, out):
    i = xpu.grid(1)
    r = 7
    xpu.syncthreads()
    s = 0
    for q in range(2):
        v = x[i] * r  # q = 0: r == 7; q = 1: r == 1, the inner loop's last value
        s += Wave.reduceSum(v)
        for r in range(2):
            s += Wave.shuffleXor(v, 1) * 0
    out[i] = s


@xpu.jit
def k_range_reads_its_target(x, out, n):
    i = xpu.grid(1)
    r = n  # the same in every thread
    xpu.syncthreads()
    acc = 0
    for r in range(r, r + 2):  # noqa: B020 - range(n, n + 2) in every thread
        acc += Wave.reduceSum(x[i]) * r
    out[i] = acc


@pytest.mark.parametrize("block", [64, 100])
def test_a_loop_whose_range_reads_its_own_target(rng, block):
    x = rng.integers(-50, 50, block).astype(np.int64)
    out = np.full(block, POISON, np.int64)
    k_range_reads_its_target[1, block](x, out, 3)
    w = _waves(x, block)
    total = (w * _exists(block, block)).sum(axis=2, keepdims=True)
    np.testing.assert_array_equal(out, (total * (3 + 4) + 0 * w).reshape(-1)[:block])


def _shfl_down_after_barrier(x, out):
    i = cuda.grid(1)
    cuda.syncthreads()
    out[i] = cuda.shfl_down_sync(0xFFFFFFFF, x[i], 1)


@pytest.mark.parametrize("debug", [False, True], ids=["release", "debug"])
@pytest.mark.parametrize("block", [64, 100, 256])
def test_a_value_read_before_the_stretch_assigns_it_is_the_same_in_every_wave(rng, debug, block):
    x = rng.integers(-50, 50, block).astype(np.int64)
    w = _waves(x, block)
    exists = _exists(block, block)
    total = (w * exists).sum(axis=2, keepdims=True)  # each wave's sum (lanes past the block: none)
    cases = [
        (k_tuple_after_read, (), total + 5 + 0 * w),
        (k_for_target_after_read, (True,), 7 * total + 2 * 7 * _xor1(w, exists)),
        (k_loop_reads_its_inner_target, (), 7 * total + total + 0 * w),
    ]
    for k, extra, want in cases:
        kk = xpu.jit(debug=True)(k.py_func) if debug else k
        out = np.full(block, POISON, np.int64)
        kk[1, block](x, out, *extra)
        np.testing.assert_array_equal(out, want.reshape(-1)[:block], err_msg=k.__name__)


def _xor1(w, exists):
    """Wave.shuffleXor(v, 1): lane ^ 1's value, the own where that lane is no thread."""
    part = w[..., np.arange(32) ^ 1]
    return np.where(exists[..., np.arange(32) ^ 1], part, w)


@pytest.mark.parametrize("block", [64, 96])
def test_a_numba_cuda_shuffle_after_a_barrier_in_a_debug_build(rng, block):
    # the debug build's mask-rule check names the thread with the span's wave
    x = rng.integers(-1000, 1000, block).astype(np.int64)
    out = np.full(block, POISON, np.int64)
    xpu.jit(debug=True)(_shfl_down_after_barrier)[1, block](x, out)
    w = x.reshape(-1, 32)
    want = np.concatenate([w[:, 1:], w[:, -1:]], axis=1).ravel()  # lane 31 reads past: own
    np.testing.assert_array_equal(out, want)
