"""Histogram with atomics: one atomic per element vs one atomic per distinct value in a wave.

* ``k_hist_atomic``: every thread adds 1 to its bin with ``xpu.atomic.add``.
* ``k_hist_wave``: warp aggregation. The lanes of a wave loop together: the first
  lane still in the loop names a value (``Wave.readFirst``), ``Wave.countBits`` counts
  the lanes holding it, that first lane adds the count to the bin with one
  ``xpu.atomic.add``, and the lanes that were counted leave the loop. A wave does
  one atomic per distinct value it holds instead of one per lane, which pays off
  when values repeat within a wave (a peaked distribution, or sorted runs); on a
  GPU it also removes the serialisation of same-address atomics.

Both are checked bin for bin against ``np.bincount`` on two uint8 inputs (uniform
over 256 bins, and a peaked one), and timed against ``np.bincount`` and a Numba
``@njit(parallel=True)`` version with one private histogram per chunk.

With ``--target cuda`` the kernels run on the GPU on numba.cuda device arrays
(examples/_target.py); the histogram is copied to the host for the check.

    python examples/histogram.py                  # 8 M uint8 values
    python examples/histogram.py --small          # a quick check
    python examples/histogram.py --target cuda    # the same on a GPU
"""

import argparse
import sys

import numba
import numpy as np
from numba import prange

import _target  # examples/_target.py
from _timing import median_time  # examples/_timing.py
from numquad import Wave, xpu

TPB = 256
BINS = 256


@xpu.jit
def k_hist_atomic(x, hist):
    i = xpu.grid(1)
    if i < x.shape[0]:
        xpu.atomic.add(hist, x[i], np.uint32(1))


@xpu.jit
def k_hist_wave(x, hist):
    i = xpu.grid(1)
    if i < x.shape[0]:
        v = x[i]
        lane = Wave.laneId()
        while True:
            cur = Wave.readFirst(v)  # a value some lane still holds
            same = v == cur
            count = Wave.countBits(same)  # lanes holding it
            if lane == Wave.readFirst(lane):  # the first lane left (it holds cur)
                xpu.atomic.add(hist, cur, count)
            if same:
                break  # counted: leave; the others go round again


def hist_numquad(kernel, x, hist):
    """Add the counts of x to hist (the kernels add: hist is not cleared)."""
    kernel[(x.size + TPB - 1) // TPB, TPB](x, hist)


@numba.njit(parallel=True)
def hist_numba(x):
    chunks = 4 * numba.get_num_threads()
    n = x.size
    local = np.zeros((chunks, BINS), np.int64)
    for c in prange(chunks):
        for j in range(n * c // chunks, n * (c + 1) // chunks):
            local[c, x[j]] += 1
    return local.sum(axis=0)


def fail(msg):
    print(f"FAIL histogram: {msg}")
    sys.exit(1)


def run_input(tgt, name, x, rng, repeats):
    n = x.size
    dx = tgt.to_device(x)  # x itself on the CPU
    want = np.bincount(x, minlength=BINS)
    waves = np.sort(x[: n // 32 * 32].reshape(-1, 32), axis=1)
    per_wave = 1 + np.count_nonzero(np.diff(waves, axis=1), axis=1)  # distinct values per wave
    for kernel in (k_hist_atomic, k_hist_wave):
        # the kernels add to hist, so instead of a sentinel it starts at random counts:
        # a bin that is overwritten instead of added to, or a lost count, shows
        start = rng.integers(0, 1000, BINS).astype(np.uint32)
        hist = tgt.to_device(start.copy())
        hist_numquad(kernel, dx, hist)
        got = tgt.to_host(hist) - start
        if not np.array_equal(got, want):
            bad = np.flatnonzero(got != want)
            fail(f"{kernel.__name__} on {name} input: bins {bad[:5]} got {got[bad[:5]]}, want {want[bad[:5]]}")
    if not np.array_equal(hist_numba(x), want):
        fail(f"the Numba version differs from np.bincount on {name} input")

    def fresh(kernel):
        tgt.assign(hist, 0)
        hist_numquad(kernel, dx, hist)

    timings = [
        ("numquad, 1 atomic per element", tgt.median_time(lambda: fresh(k_hist_atomic), repeats)),
        ("numquad, 1 atomic per value/wave", tgt.median_time(lambda: fresh(k_hist_wave), repeats)),
        ("NumPy np.bincount", median_time(lambda: np.bincount(x, minlength=BINS), repeats)),
        ("Numba njit(parallel=True)", median_time(lambda: hist_numba(x), repeats)),
    ]
    base = timings[2][1]
    print(f" {name} input: {np.mean(per_wave):.1f} distinct values per wave on average")
    for label, sec in timings:
        print(f"  {label:34s} {sec * 1e3:9.3f} ms   {sec / base:6.2f}x NumPy's time")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a small input, for a quick check")
    _target.add_option(ap)
    args = ap.parse_args()
    tgt = _target.from_args(args, "histogram")
    n = 200_001 if args.small else 8_000_001  # a partial last wave
    repeats = 3 if args.small else 7

    rng = np.random.default_rng(7)
    inputs = {
        "uniform": rng.integers(0, BINS, n, dtype=np.uint8),
        # most values within a few bins of 128: many repeats in each wave
        "peaked": np.clip(np.rint(rng.normal(128.0, 2.0, n)), 0, BINS - 1).astype(np.uint8),
    }
    if tgt.is_cuda:
        print(f"numquad kernels on the GPU: {tgt.device_name()}")
    print(f"histogram of {n:,} uint8 values into {BINS} bins ({numba.get_num_threads()} threads, median of {repeats})")
    for name, x in inputs.items():
        run_input(tgt, name, x, rng, repeats)
    print(f"OK histogram: both numquad kernels match np.bincount on both inputs [target {tgt}]")


if __name__ == "__main__":
    main()
