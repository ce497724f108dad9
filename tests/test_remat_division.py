"""A value assigned once at the kernel's top level is recomputed in later regions
(numquad/cpu/codegen.py ``_BlockGen._remat``) in every lane of the wave, also in
lanes that never ran the assignment: threads that returned, the missing lanes of a
partial wave. A division there by a value that is zero only in such lanes raised a
false ZeroDivisionError in ``debug=True`` builds; such a value is now kept, and
only divisions by a positive constant are recomputed. Expected values: a per-thread
model written here; outputs poisoned, inputs random."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

from numquad import Wave, xpu

RNG = np.random.default_rng(20261207)


def k_after_return(out, n):
    i = cuda.grid(1)
    if i >= n:
        return
    c = 100 // (n - i)  # no thread that runs this has i == n
    out[i] = c + Wave.reduceSum(c)


def k_partial_wave(out, n):
    i = cuda.grid(1)
    c = 1000 // (i - n)  # launched with n threads: i - n is never 0
    out[i] = c + Wave.reduceSum(c)


def k_float_and_mod(out, f, k):
    i = cuda.grid(1)
    if i == k:
        return
    a = 1.0 / (i - k)
    b = 100 % (i - k)
    w = i // 32  # a positive constant: still recomputed
    f[i] = a + Wave.reduceMax(a)  # (a max: no order of a float sum to model)
    out[i] = b + Wave.reduceSum(b) + w


def _wave_sums(vals, live, tpb, combine=sum):
    """Per thread: *combine* (the sum) over its wave's live lanes of vals (a dict
    thread -> value)."""
    out = {}
    for t in live:
        w0 = t // tpb * tpb + (t % tpb) // 32 * 32
        out[t] = combine([vals[u] for u in live if w0 <= u < w0 + 32 and u // tpb == t // tpb])
    return out


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("n", [40, 33, 64])
def test_a_division_after_a_return(debug, n):
    out = np.full(64, -7, np.int64)
    xpu.jit(debug=debug)(k_after_return)[2, 32](out, n)
    live = [t for t in range(64) if t < n]
    c = {t: 100 // (n - t) for t in live}
    s = _wave_sums(c, live, 32)
    want = np.full(64, -7, np.int64)
    for t in live:
        want[t] = c[t] + s[t]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("n", [48, 100])
def test_a_division_in_a_partial_wave(debug, n):
    out = np.full(n, -7, np.int64)
    xpu.jit(debug=debug)(k_partial_wave)[1, n](out, n)
    live = list(range(n))
    c = {t: 1000 // (t - n) for t in live}
    s = _wave_sums(c, live, n)
    np.testing.assert_array_equal(out, [c[t] + s[t] for t in live])


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("k", [5, int(RNG.integers(0, 64))])
def test_float_division_and_modulo_after_a_return(debug, k):
    out = np.full(64, -7, np.int64)
    f = np.full(64, np.nan)
    xpu.jit(debug=debug)(k_float_and_mod)[1, 64](out, f, k)
    live = [t for t in range(64) if t != k]
    a = {t: 1.0 / (t - k) for t in live}
    b = {t: 100 % (t - k) for t in live}
    sa, sb = _wave_sums(a, live, 64, max), _wave_sums(b, live, 64)
    for t in range(64):
        if t == k:
            assert out[t] == -7 and np.isnan(f[t])
        else:
            assert out[t] == b[t] + sb[t] + t // 32
            assert f[t] == a[t] + sa[t]
