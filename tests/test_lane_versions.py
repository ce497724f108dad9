"""Lane loops in two versions (numquad/cpu/versioning.py): a contiguous access is
checked once before the loop, and the loop's fast version runs only where every
lane's access is inside its array and every guard holds in every lane.

Each kernel runs where the fast version applies to some waves and not to others
(a partial last wave, a guard that splits a wave, indices that wrap or go
negative), with poisoned outputs and random inputs; the expected values are
NumPy's, per thread, written here. A test that only looked at speed could not
fail: these compare every element, and check the generated source for the fast
version where it must be there."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import cuda

from numquad import xpu

RNG = np.random.default_rng(20261206)
POISON = -7777


def _poisoned(n, dtype=np.int64):
    return np.full(n, POISON, dtype)


def _int8(v):
    """*v* wrapped to int8, as ``np.int8(v)`` of an int64 in a kernel."""
    return (v + 128) % 256 - 128


def _source(kernel, *args):
    return kernel.inspect_cpu_source(tuple(numba.typeof(a) for a in args))


@xpu.jit
def k_copy(x, out):
    i = cuda.grid(1)
    out[i] = x[i] * 3 + 1


@xpu.jit
def k_guarded(x, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = x[i] - 5


@xpu.jit
def k_named_guard(x, out, lo, hi):
    i = cuda.grid(1)
    inside = i >= lo and i < hi  # the guard through a name, as real code writes it
    if inside:
        out[i] = x[i] + 1


@xpu.jit
def k_window(x, out, out2, lo, hi):
    i = cuda.grid(1)
    if i >= lo and hi > i:
        j = i - lo
        out[j] = x[i]
    k = 0
    k = i
    out2[k] = x[k] + 1  # assigned twice: checked per lane in both versions


@xpu.jit
def k_offset(x, out, off):
    i = cuda.grid(1)
    j = i + off
    out[j] = x[i]  # a negative j counts from the end, as in NumPy


@xpu.jit
def k_int8_index(x, out, base):
    i = cuda.grid(1)
    j = np.int8(base + i)  # wraps at 128 inside a wave
    out[j] = x[i]


@xpu.jit
def k_int8_guard(x, out, base):
    i = cuda.grid(1)
    j = np.int8(base + i)
    if j < 126:  # at base 100, true at a wave's first and last lanes, not between
        out[i] = x[i]


@xpu.jit
def k_uint64_index(x, out, base):
    i = cuda.grid(1)
    j = np.uint64(base) + np.uint64(i)
    out[j] = x[i]


@xpu.jit
def k_shared(x, out):
    sh = cuda.shared.array(128, np.int64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    sh[tid] = x[i] * 2
    cuda.syncthreads()
    out[i] = sh[tid] + sh[0]


def test_the_fast_version_is_generated_for_contiguous_stores():
    x = RNG.integers(-1000, 1000, 256)
    src = _source(k_copy, x, _poisoned(256))
    assert "_nq_lrok(" in src and "_nq_sok(" in src  # both versions
    src = _source(k_guarded, x, _poisoned(256), 3)
    assert "_nq_lrise(" in src and "_nq_lrok(" in src


@pytest.mark.parametrize("n", [256, 250, 33, 1])
def test_copy_with_a_partial_last_wave(n):
    x = RNG.integers(-(2**40), 2**40, n)
    out = _poisoned(n)
    k_copy[(n + 63) // 64, 64](x, out) if n % 64 == 0 else k_copy[1, n](x, out)
    np.testing.assert_array_equal(out, x * 3 + 1)


def test_a_store_past_the_end_still_raises():
    x = RNG.integers(-100, 100, 256)
    out = _poisoned(250)
    with pytest.raises(IndexError):
        k_copy[4, 64](x, out)
    # the waves before the last wrote their elements
    np.testing.assert_array_equal(out[:224], x[:224] * 3 + 1)


@pytest.mark.parametrize("n", [0, 5, 31, 32, 33, 100, 255, 256, 300])
def test_a_guard_that_splits_a_wave(n):
    x = RNG.integers(-(2**62), 2**62, 256)
    out = _poisoned(256)
    k_guarded[2, 128](x, out, n)
    want = _poisoned(256)
    m = min(n, 256)
    want[:m] = x[:m] - 5
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("lo, hi", [(0, 256), (0, 250), (32, 96), (7, 200), (100, 90)])
def test_a_guard_through_a_name(lo, hi):
    x = RNG.integers(-1000, 1000, 256)
    out = _poisoned(256)
    k_named_guard[4, 64](x, out, lo, hi)
    want = _poisoned(256)
    for i in range(256):
        if i >= lo and i < hi:
            want[i] = x[i] + 1
    np.testing.assert_array_equal(out, want)
    assert "_nq_lrise(" in _source(k_named_guard, x, out, lo, hi)


@pytest.mark.parametrize("lo, hi", [(0, 256), (32, 96), (7, 200), (40, 41), (100, 90), (-5, 300)])
def test_a_window_guard(lo, hi):
    x = RNG.integers(-1000, 1000, 256)
    out, out2 = _poisoned(512), _poisoned(256)
    k_window[4, 64](x, out, out2, lo, hi)
    want = _poisoned(512)
    for i in range(256):  # per thread
        if i >= lo and hi > i:
            want[i - lo] = x[i]
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(out2, x + 1)


@pytest.mark.parametrize("off", [0, 3, -5, -40, -256])
def test_negative_offsets_count_from_the_end(off):
    n = 256
    x = RNG.integers(-1000, 1000, n)
    out = _poisoned(n)
    if off > 0:
        with pytest.raises(IndexError):
            k_offset[4, 64](x, out, off)
        np.testing.assert_array_equal(out[off : off + 192], x[:192])
        return
    k_offset[4, 64](x, out, off)
    want = _poisoned(n)
    for i in range(n):
        want[i + off] = x[i]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("base", [0, 100, 120, -128, 60])
def test_an_index_that_wraps_inside_a_wave(base):
    n = 256
    x = RNG.integers(-1000, 1000, n)
    out = _poisoned(n)
    k_int8_index[4, 64](x, out, base)
    want = _poisoned(n)
    for i in range(n):
        want[_int8(base + i)] = x[i]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("base", [100, 0, -128, 90])
def test_a_guard_on_an_index_that_wraps(base):
    n = 256
    x = RNG.integers(-1000, 1000, n)
    out = _poisoned(n)
    k_int8_guard[4, 64](x, out, base)
    want = _poisoned(n)
    for i in range(n):
        if _int8(base + i) < 126:
            want[i] = x[i]
    np.testing.assert_array_equal(out, want)
    assert "_nq_lrise(_nq_T_int8(" in _source(k_int8_guard, x, out, base)


@pytest.mark.parametrize("base", [0, 10, 2**64 - 16, 2**64 - 40])
def test_an_unsigned_index_that_wraps(base):
    n = 128
    x = RNG.integers(-1000, 1000, n)
    out = _poisoned(n)
    if base == 0:
        k_uint64_index[2, 64](x, out, np.uint64(base))
        np.testing.assert_array_equal(out, x)
        return
    with pytest.raises(IndexError):  # lanes past the end (2**64 - 16 is not -16)
        k_uint64_index[2, 64](x, out, np.uint64(base))
    # what the launch wrote before it stopped is right, element by element
    written = np.flatnonzero(out != POISON)
    src = [(int(w) - base) % 2**64 for w in written]
    np.testing.assert_array_equal(out[written], x[src])


def test_shared_memory_in_a_kernel_with_barriers():
    n = 512
    x = RNG.integers(-(2**40), 2**40, n)
    out = _poisoned(n)
    k_shared[4, 128](x, out)
    want = np.empty(n, np.int64)
    for b in range(4):
        blk = x[b * 128 : (b + 1) * 128] * 2
        want[b * 128 : (b + 1) * 128] = blk + blk[0]
    np.testing.assert_array_equal(out, want)
