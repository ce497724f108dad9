"""Stream compaction: keep the elements of an array that satisfy a predicate, in order.

Two numquad kernels do the same work:

* ``k_compact_atomic``: one pass. Within a wave, ``Wave.prefixCountBits(keep)`` is
  each kept element's slot and ``Wave.countBits(keep)`` the wave's total; the
  wave's first active lane reserves that many slots with one ``xpu.atomic.add``
  on a global counter, and ``Wave.readFirst`` hands the base offset to the other
  lanes. The order in which waves reach the counter is not fixed, so the output
  holds the right elements in some wave order: it is checked against NumPy as a
  sorted multiset.
* ``k_block_counts`` + ``k_block_write``: deterministic. A first kernel counts the
  kept elements of each 256-thread block (``Wave.countBits`` per wave, wave
  counts in shared memory, ``Wave.reduceSum`` by the first wave), NumPy takes the
  exclusive scan of the block counts, and a second kernel writes every element at
  its block's offset + its wave's offset in the block (``Wave.prefixSum`` of the
  wave counts) + its slot in the wave. The output equals ``x[x > t]`` exactly.

Both are timed against NumPy's boolean indexing and a two-pass Numba
``@njit(parallel=True)`` version.

With ``--target cuda`` the kernels run on the GPU on numba.cuda device arrays
(examples/_target.py); the scan of the block counts stays a NumPy step on the
host, so the counts go to the host and the offsets back to the GPU in between.

    python examples/stream_compaction.py                  # 4 M float32 elements
    python examples/stream_compaction.py --small          # a quick check
    python examples/stream_compaction.py --target cuda    # the same on a GPU
"""

import argparse
import sys

import numba
import numpy as np
from numba import prange

import _target  # examples/_target.py
from _timing import median_time  # examples/_timing.py
from numquad import Wave, xpu

TPB = 256  # threads per block
WAVES = TPB // 32  # waves per block


@xpu.jit
def k_compact_atomic(x, t, out, counter):
    i = xpu.grid(1)
    if i < x.shape[0]:
        v = x[i]
        keep = v > t
        slot = Wave.prefixCountBits(keep)  # kept lanes below this one
        total = Wave.countBits(keep)  # kept lanes in the wave
        lane = Wave.laneId()
        base = np.int64(0)
        if lane == Wave.readFirst(lane) and total > 0:  # the wave's first active lane
            base = xpu.atomic.add(counter, 0, np.int64(total))
        base = Wave.readFirst(base)  # that lane's reservation, in every lane
        if keep:
            out[base + slot] = v


@xpu.jit
def k_block_counts(x, t, counts):
    wave_count = xpu.shared.array(WAVES, np.int64)
    tid = xpu.threadIdx.x
    i = xpu.grid(1)
    keep = False
    if i < x.shape[0]:
        keep = x[i] > t
    c = Wave.countBits(keep)
    if Wave.laneId() == 0:
        wave_count[tid // 32] = c
    xpu.syncthreads()
    if tid < 32:
        w = np.int64(0)
        if tid < WAVES:
            w = wave_count[tid]
        s = Wave.reduceSum(w)
        if tid == 0:
            counts[xpu.blockIdx.x] = s


@xpu.jit
def k_block_write(x, t, offsets, out):
    wave_base = xpu.shared.array(32, np.int64)
    tid = xpu.threadIdx.x
    i = xpu.grid(1)
    keep = False
    if i < x.shape[0]:
        keep = x[i] > t
    slot = Wave.prefixCountBits(keep)
    c = Wave.countBits(keep)
    if Wave.laneId() == 0:
        wave_base[tid // 32] = c
    xpu.syncthreads()
    if tid < 32:  # the first wave scans the wave counts
        w = np.int64(0)
        if tid < WAVES:
            w = wave_base[tid]
        wave_base[tid] = Wave.prefixSum(w)
    xpu.syncthreads()
    if keep:
        out[offsets[xpu.blockIdx.x] + wave_base[tid // 32] + slot] = x[i]


def compact_atomic(tgt, x, t, out):
    counter = tgt.full(1, 0, np.int64)
    k_compact_atomic[(x.size + TPB - 1) // TPB, TPB](x, t, out, counter)
    return int(tgt.to_host(counter)[0])


def compact_ordered(tgt, x, t, out, counts):
    nblocks = counts.size
    k_block_counts[nblocks, TPB](x, t, counts)
    c = tgt.to_host(counts)  # the NumPy step runs on the host
    offsets = np.cumsum(c) - c  # exclusive scan of the block counts
    k_block_write[nblocks, TPB](x, t, tgt.to_device(offsets), out)
    return int(offsets[-1] + c[-1])


def compact_numpy(x, t):
    return x[x > t]


@numba.njit(parallel=True)
def compact_numba(x, t, out):
    n = x.size
    chunks = 4 * numba.get_num_threads()
    offsets = np.zeros(chunks + 1, np.int64)
    for c in prange(chunks):  # pass 1: count per chunk
        k = 0
        for j in range(n * c // chunks, n * (c + 1) // chunks):
            if x[j] > t:
                k += 1
        offsets[c + 1] = k
    for c in range(chunks):
        offsets[c + 1] += offsets[c]
    for c in prange(chunks):  # pass 2: write at the chunk's offset
        p = offsets[c]
        for j in range(n * c // chunks, n * (c + 1) // chunks):
            if x[j] > t:
                out[p] = x[j]
                p += 1
    return offsets[chunks]


def fail(msg):
    print(f"FAIL stream_compaction: {msg}")
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a small input, for a quick check")
    _target.add_option(ap)
    args = ap.parse_args()
    tgt = _target.from_args(args, "stream_compaction")
    n = 100_003 if args.small else 4_000_037  # not a multiple of 32: a partial last wave
    repeats = 3 if args.small else 7

    rng = np.random.default_rng(2026)
    x = rng.standard_normal(n).astype(np.float32)
    t = np.float32(0.5)
    want = compact_numpy(x, t)
    nblocks = (n + TPB - 1) // TPB
    dx = tgt.to_device(x)  # x itself on the CPU

    # one pass, one atomic per wave: the right multiset, in some wave order
    d_out = tgt.full(n, np.nan, np.float32)  # poison: an unwritten slot stays NaN
    got = compact_atomic(tgt, dx, t, d_out)
    out = tgt.to_host(d_out)
    if got != want.size:
        fail(f"atomic variant kept {got} elements, NumPy keeps {want.size}")
    if not np.isnan(out[got:]).all():
        fail("atomic variant wrote past its count")
    if not np.array_equal(np.sort(out[:got]), np.sort(want)):
        bad = np.flatnonzero(np.sort(out[:got]) != np.sort(want))
        fail(f"atomic variant: sorted output differs from NumPy at {bad.size} places, first {bad[:5]}")

    # two kernels and a NumPy scan: exactly x[x > t]
    d_out2 = tgt.full(n, np.nan, np.float32)
    d_counts = tgt.full(nblocks, -1, np.int64)  # poison: a block that writes no count shows
    got2 = compact_ordered(tgt, dx, t, d_out2, d_counts)
    out2, counts = tgt.to_host(d_out2), tgt.to_host(d_counts)
    if not np.array_equal(counts, np.add.reduceat((x > t).astype(np.int64), np.arange(0, n, TPB))):
        fail("block counts differ from NumPy's")
    if got2 != want.size or not np.isnan(out2[got2:]).all():
        fail(f"ordered variant kept {got2} elements (NumPy {want.size}) or wrote past its count")
    if not np.array_equal(out2[:got2], want):
        bad = np.flatnonzero(out2[:got2] != want)
        fail(
            f"ordered variant differs from x[x > t] at {bad.size} places, first {bad[:5]}: "
            f"got {out2[bad[:5]]}, want {want[bad[:5]]}"
        )

    out3 = np.full(n, np.nan, np.float32)
    got3 = compact_numba(x, t, out3)
    if got3 != want.size or not np.array_equal(out3[:got3], want):
        fail("the Numba version differs from x[x > t]")

    timings = [
        ("numquad, 1 atomic per wave", tgt.median_time(lambda: compact_atomic(tgt, dx, t, d_out), repeats)),
        (
            "numquad, 2 kernels (ordered)",
            tgt.median_time(lambda: compact_ordered(tgt, dx, t, d_out2, d_counts), repeats),
        ),
        ("NumPy x[x > t]", median_time(lambda: compact_numpy(x, t), repeats)),
        ("Numba njit(parallel=True)", median_time(lambda: compact_numba(x, t, out3), repeats)),
    ]
    base = timings[2][1]
    if tgt.is_cuda:
        print(f"numquad kernels on the GPU: {tgt.device_name()}")
    print(
        f"stream compaction of {n:,} float32, keep x > {t}: {want.size:,} kept "
        f"({numba.get_num_threads()} threads, median of {repeats})"
    )
    for name, sec in timings:
        print(f"  {name:30s} {sec * 1e3:9.3f} ms   {sec / base:6.2f}x NumPy's time")
    print(f"OK stream_compaction: both numquad variants match NumPy ({want.size:,} of {n:,} kept) [target {tgt}]")


if __name__ == "__main__":
    main()
