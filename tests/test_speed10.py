"""Issue 14 (speed on real kernels): what the CPU target now does faster gives the
same results. Expected values from NumPy or the python target; outputs start
poisoned (random contents the kernel must add onto, or overwrite); random inputs.

Arrays a kernel only adds into with atomics get one private copy per worker thread
(numquad/cpu/reductions.py): the sums, wrap-around included, the return values
where a kernel uses them, and the launches that cannot use copies.
"""

import numba
import numpy as np
import pytest
from numba import types as nbt

from numquad import xpu


@xpu.jit
def _k_hist(x, hist):
    i = xpu.grid(1)
    if i < x.shape[0]:
        xpu.atomic.add(hist, x[i], np.uint32(1))


@xpu.jit
def _k_add_sub_2d(x, w, acc):
    i = xpu.grid(1)
    if i < x.shape[0]:
        r = x[i] % acc.shape[0]
        if w[i] > 0:
            xpu.atomic.add(acc, (r, i % 3), w[i])
        else:
            xpu.atomic.sub(acc, (r, np.int64(2)), -w[i])


@xpu.jit
def _k_hist_old(x, hist, old):
    i = xpu.grid(1)
    if i < x.shape[0]:
        old[i] = xpu.atomic.add(hist, x[i], np.uint32(1))     # the value is used: atomics


@xpu.jit
def _k_hist_reads(x, hist, out):
    i = xpu.grid(1)
    if i < x.shape[0]:
        xpu.atomic.add(hist, x[i], np.uint32(1))
        out[i] = hist[0]                                        # read: atomics


def _bins(rng, n, nbins):
    return rng.integers(0, nbins, n).astype(np.int64)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n", [1, 1000, 300_007])
def test_histogram_into_poisoned_bins_wraps_as_numpy(rng, n, threads):
    x = rng.integers(0, 256, n).astype(np.uint8)
    hist = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    hist[:8] = 2**32 - 3                          # these wrap
    want = hist + np.bincount(x, minlength=256).astype(np.uint32)
    old = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        _k_hist[(n + 255) // 256, 256](x, hist)
    finally:
        numba.set_num_threads(old)
    assert np.array_equal(hist, want)


def test_add_and_sub_on_a_2d_int64_array_match_numpy_and_python(rng):
    n = 200_003
    x = _bins(rng, n, 1000)
    w = rng.integers(-2**62, 2**62, n)
    acc0 = rng.integers(-2**63, 2**63 - 1, (7, 3))
    want = acc0.copy()
    r = x % 7
    pos = w > 0
    np.add.at(want, (r[pos], (np.arange(n) % 3)[pos]), w[pos])      # wraps as int64
    np.subtract.at(want, (r[~pos], np.full((~pos).sum(), 2)), -w[~pos])
    acc = acc0.copy()
    _k_add_sub_2d[(n + 127) // 128, 128](x, w, acc)
    assert np.array_equal(acc, want)
    ref = acc0.copy()
    _k_add_sub_2d.python[(5000 + 127) // 128, 128](x[:5000], w[:5000], ref)
    acc = acc0.copy()
    _k_add_sub_2d[(5000 + 127) // 128, 128](x[:5000], w[:5000], acc)
    assert np.array_equal(acc, ref)


def test_a_used_return_value_keeps_the_atomics_and_each_lane_sees_its_own_count(rng):
    n = 70_001
    x = rng.integers(0, 5, n).astype(np.uint8)
    hist = rng.integers(0, 1000, 256).astype(np.uint32)
    h0 = hist.copy()
    old = np.full(n, 0xDEADBEEF, np.uint32)
    _k_hist_old[(n + 255) // 256, 256](x, hist, old)
    assert np.array_equal(hist, h0 + np.bincount(x, minlength=256).astype(np.uint32))
    for b in range(5):                      # each bin's old values: its start and every count
        got = np.sort(old[x == b])
        assert np.array_equal(got, h0[b] + np.arange((x == b).sum(), dtype=np.uint32))


def test_an_array_the_kernel_reads_is_not_privatised():
    src = _k_hist_reads.inspect_cpu_source((nbt.uint8[::1], nbt.uint32[::1], nbt.uint32[::1]))
    assert "_nq_atomic_add(hist" in src and "_nq_patomic" not in src
    src = _k_hist_old.inspect_cpu_source((nbt.uint8[::1], nbt.uint32[::1], nbt.uint32[::1]))
    assert "_nq_atomic_add(hist" in src and "_nq_patomic" not in src


def test_the_histogram_adds_without_atomics_in_the_ir():
    """The private copy's adds are plain loads and stores: no ``atomicrmw`` (x86
    ``lock``) is left in the block function; a float histogram keeps its atomics."""
    ir = _k_hist.inspect_llvm((nbt.uint8[::1], nbt.uint32[::1]))
    assert "atomicrmw" not in ir and "cmpxchg" not in ir
    src = _k_hist.inspect_cpu_source((nbt.uint8[::1], nbt.uint32[::1]))
    assert "_nq_patomic_add(hist" in src

    @xpu.jit
    def k_fhist(x, hist):
        i = xpu.grid(1)
        if i < x.shape[0]:
            xpu.atomic.add(hist, x[i], np.float32(1))
    assert "atomicrmw" in k_fhist.inspect_llvm((nbt.uint8[::1], nbt.float32[::1]))


def test_overlapping_and_large_arrays_fall_back_to_atomics(rng):
    n = 100_000
    x = rng.integers(0, 64, n).astype(np.uint8)
    # another argument is a view of the bins, read after the barrier (which shows the
    # block's adds): the adds go to the array itself
    @xpu.jit
    def k_view(x, hist, view, out):
        i = xpu.grid(1)
        xpu.atomic.add(hist, x[i], np.uint32(1))
        xpu.syncthreads()
        if i == 0:
            out[0] = view[0]
    buf = rng.integers(0, 100, 8).astype(np.uint32)
    want = buf[:4] + np.bincount(x[:256] & 3, minlength=4).astype(np.uint32)
    out = np.full(1, 0xDEADBEEF, np.uint32)
    k_view[1, 256](x[:256] & np.uint8(3), buf[:4], buf[:1], out)
    assert np.array_equal(buf[:4], want) and out[0] == want[0]
    # more bins than the launch has threads: atomics on the array itself
    big = rng.integers(0, 100, 1 << 18).astype(np.uint32)
    want = big.copy()
    np.add.at(want, x.astype(np.int64), np.uint32(1))
    _k_hist[(n + 255) // 256, 256](x, big)
    assert np.array_equal(big, want)


def test_an_index_error_still_adds_what_ran():
    """An atomic out of bounds raises as before; the copies are merged first."""
    x = np.zeros(100_000, np.uint8)
    x[-1] = 200                         # past 16 bins: the last block's last thread
    hist = np.zeros(16, np.uint32)
    from numquad.errors import NumquadIndexError
    with pytest.raises(NumquadIndexError):
        _k_hist[(x.size + 255) // 256, 256](x, hist)
    assert 0 < hist[0] <= x.size - 1 and hist[1:].sum() == 0
