"""A block-wide scan from wave scans, and one pass of a radix sort built on it.

1. ``k_block_scan``: the exclusive prefix sum of each 256-thread block.
   ``Wave.prefixSum`` scans each wave; the last lane of each wave puts the wave's
   total in ``xpu.shared.array``; after ``xpu.syncthreads()`` the first wave scans
   the 8 totals (``Wave.prefixSum`` again); after a second barrier every thread
   adds its wave's offset. Checked against ``np.cumsum`` per block.
2. One radix-sort pass on a 4-bit digit of uint32 keys, stable:
   ``k_digit_counts`` counts each digit per block (``Wave.countBits`` per digit and
   wave, summed over the waves through shared memory), NumPy scans the counts in
   digit-major order (all blocks' 0s, then all 1s, ...) into output offsets, and
   ``k_digit_scatter`` writes each key at its block's offset for its digit + the
   number of keys with that digit in earlier waves of the block + its rank in the
   wave (``Wave.prefixCountBits``). The permutation must equal
   ``np.argsort(digit, kind="stable")``.

Both are timed against NumPy and Numba ``@njit(parallel=True)``.

With ``--target cuda`` the kernels run on the GPU on numba.cuda device arrays
(examples/_target.py); the scan of the digit counts stays a NumPy step on the
host, so the counts go to the host and the offsets back to the GPU in between.

    python examples/block_scan_radix.py                  # 4 M elements
    python examples/block_scan_radix.py --small          # a quick check
    python examples/block_scan_radix.py --target cuda    # the same on a GPU
"""

import argparse
import sys

import numba
import numpy as np
from numba import prange

import _target  # examples/_target.py
from _timing import median_time, report  # examples/_timing.py
from numquad import Wave, xpu

TPB = 256  # threads per block
WAVES = TPB // 32  # waves per block
RADIX = 16  # a 4-bit digit
SHIFT = 4  # the pass sorts on bits 4..7


# -- 1. block-wide exclusive scan --------------------------------------------------------


@xpu.jit
def k_block_scan(x, out):
    wave_sum = xpu.shared.array(32, np.int64)
    tid = xpu.threadIdx.x
    i = xpu.grid(1)
    v = np.int64(x[i])  # x holds whole blocks: no bounds test
    s = Wave.prefixSum(v)  # exclusive scan within the wave
    w = tid // 32
    if Wave.laneId() == 31:
        wave_sum[w] = s + v  # the wave's total
    xpu.syncthreads()
    if tid < 32:  # the first wave scans the wave totals
        t = np.int64(0)
        if tid < WAVES:
            t = wave_sum[tid]
        wave_sum[tid] = Wave.prefixSum(t)
    xpu.syncthreads()
    out[i] = s + wave_sum[w]


@numba.njit(parallel=True)
def scan_numba(x, out):
    for b in prange(x.size // TPB):
        acc = 0
        for j in range(b * TPB, (b + 1) * TPB):
            out[j] = acc
            acc += x[j]


def scan_numpy(x):
    blocks = x.reshape(-1, TPB).astype(np.int64)
    return (np.cumsum(blocks, axis=1) - blocks).ravel()


# -- 2. one stable radix pass on a 4-bit digit -----------------------------------------------


@xpu.jit
def k_digit_counts(keys, counts):
    wave_count = xpu.shared.array((RADIX, WAVES), np.int64)
    tid = xpu.threadIdx.x
    i = xpu.grid(1)
    d = np.int64(-1)  # lanes past the end hold no digit
    if i < keys.shape[0]:
        d = np.int64((keys[i] >> SHIFT) & (RADIX - 1))
    for r in range(RADIX):
        c = Wave.countBits(d == r)  # r is no selector: the CPU keeps this a loop
        if Wave.laneId() == 0:
            wave_count[r, tid // 32] = c
    xpu.syncthreads()
    if tid < RADIX:
        total = np.int64(0)
        for w in range(WAVES):
            total += wave_count[tid, w]
        counts[tid, xpu.blockIdx.x] = total


@xpu.jit
def k_digit_scatter(keys, offsets, out_keys, out_index):
    wave_base = xpu.shared.array((RADIX, WAVES), np.int64)
    tid = xpu.threadIdx.x
    i = xpu.grid(1)
    d = np.int64(-1)
    if i < keys.shape[0]:
        d = np.int64((keys[i] >> SHIFT) & (RADIX - 1))
    rank = np.int64(0)
    for r in range(RADIX):
        mine = d == r
        below = Wave.prefixCountBits(mine)  # lanes below with the same digit
        c = Wave.countBits(mine)
        if mine:
            rank = np.int64(below)
        if Wave.laneId() == 0:
            wave_base[r, tid // 32] = c
    xpu.syncthreads()
    if tid < RADIX:  # per digit: exclusive scan over the waves
        acc = np.int64(0)
        for w in range(WAVES):
            c = wave_base[tid, w]
            wave_base[tid, w] = acc
            acc += c
    xpu.syncthreads()
    if d >= 0:
        dst = offsets[d, xpu.blockIdx.x] + wave_base[d, tid // 32] + rank
        out_keys[dst] = keys[i]
        out_index[dst] = i


def radix_pass(tgt, keys, counts, out_keys, out_index):
    nblocks = counts.shape[1]
    k_digit_counts[nblocks, TPB](keys, counts)
    flat = tgt.to_host(counts).ravel()  # digit-major: digit 0 of every block first
    offsets = (np.cumsum(flat) - flat).reshape(counts.shape)
    k_digit_scatter[nblocks, TPB](keys, tgt.to_device(offsets), out_keys, out_index)


def radix_pass_numpy(keys):
    order = np.argsort((keys >> SHIFT) & (RADIX - 1), kind="stable")
    return keys[order], order


@numba.njit(parallel=True)
def radix_pass_numba(keys, out_keys, out_index):
    n = keys.size
    chunks = 4 * numba.get_num_threads()
    counts = np.zeros((chunks, RADIX), np.int64)
    for c in prange(chunks):
        for j in range(n * c // chunks, n * (c + 1) // chunks):
            counts[c, (keys[j] >> SHIFT) & (RADIX - 1)] += 1
    offsets = np.zeros((chunks, RADIX), np.int64)
    acc = 0
    for r in range(RADIX):  # digit-major, as the kernels
        for c in range(chunks):
            offsets[c, r] = acc
            acc += counts[c, r]
    for c in prange(chunks):
        for j in range(n * c // chunks, n * (c + 1) // chunks):
            r = (keys[j] >> SHIFT) & (RADIX - 1)
            out_keys[offsets[c, r]] = keys[j]
            out_index[offsets[c, r]] = j
            offsets[c, r] += 1


# -- driver -------------------------------------------------------------------------------


def fail(msg):
    print(f"FAIL block_scan_radix: {msg}")
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a small input, for a quick check")
    _target.add_option(ap)
    args = ap.parse_args()
    tgt = _target.from_args(args, "block_scan_radix")
    nblocks = 200 if args.small else 16_384
    n_keys = 100_003 if args.small else 4_000_037  # a partial last block and wave
    repeats = 3 if args.small else 7
    rng = np.random.default_rng(11)
    if tgt.is_cuda:
        print(f"numquad kernels on the GPU: {tgt.device_name()}")
    print(f"({numba.get_num_threads()} threads, median of {repeats})")

    # 1. block scan
    x = rng.integers(-1000, 1000, nblocks * TPB).astype(np.int32)
    dx = tgt.to_device(x)  # x itself on the CPU
    d_out = tgt.full(x.size, np.iinfo(np.int64).min, np.int64)  # poison
    k_block_scan[nblocks, TPB](dx, d_out)
    out = tgt.to_host(d_out)
    want = scan_numpy(x)
    if not np.array_equal(out, want):
        bad = np.flatnonzero(out != want)
        fail(
            f"block scan differs from np.cumsum at {bad.size} places, first {bad[:5]}: "
            f"got {out[bad[:5]]}, want {want[bad[:5]]}"
        )
    out_nb = np.empty_like(out)
    scan_numba(x, out_nb)
    if not np.array_equal(out_nb, want):
        fail("the Numba scan differs from np.cumsum")
    report(
        f"exclusive scan of {nblocks:,} blocks of {TPB} int32 -> int64",
        [
            ("numquad k_block_scan", tgt.median_time(lambda: k_block_scan[nblocks, TPB](dx, d_out), repeats)),
            ("NumPy cumsum(axis=1) - x", median_time(lambda: scan_numpy(x), repeats)),
            ("Numba njit(parallel=True)", median_time(lambda: scan_numba(x, out_nb), repeats)),
        ],
    )

    # 2. one radix pass
    keys = rng.integers(0, 2**32, n_keys, dtype=np.uint32)
    kb = (n_keys + TPB - 1) // TPB
    d_keys = tgt.to_device(keys)
    d_counts = tgt.full((RADIX, kb), -1, np.int64)  # poison
    d_out_keys = tgt.full(n_keys, 0xFFFFFFFF, np.uint32)
    d_out_index = tgt.full(n_keys, -1, np.int64)
    radix_pass(tgt, d_keys, d_counts, d_out_keys, d_out_index)
    counts, out_keys, out_index = tgt.to_host(d_counts), tgt.to_host(d_out_keys), tgt.to_host(d_out_index)
    want_keys, want_index = radix_pass_numpy(keys)
    digits = (keys >> SHIFT) & (RADIX - 1)
    padded = np.full(kb * TPB, -1, np.int64)
    padded[:n_keys] = digits
    want_counts = (padded.reshape(kb, TPB)[:, :, None] == np.arange(RADIX)).sum(axis=1).T
    if not np.array_equal(counts, want_counts):
        fail("per-block digit counts differ from NumPy's")
    if not np.array_equal(out_index, want_index):
        bad = np.flatnonzero(out_index != want_index)
        fail(
            f"radix pass: permutation differs from argsort(kind='stable') at {bad.size} places, "
            f"first {bad[:5]}: got {out_index[bad[:5]]}, want {want_index[bad[:5]]}"
        )
    if not np.array_equal(out_keys, want_keys):
        fail("radix pass: keys are not keys[argsort(digit, kind='stable')]")
    nb_keys = np.empty_like(out_keys)
    nb_index = np.empty_like(out_index)
    radix_pass_numba(keys, nb_keys, nb_index)
    if not (np.array_equal(nb_index, want_index) and np.array_equal(nb_keys, want_keys)):
        fail("the Numba radix pass differs from NumPy's")
    report(
        f"stable radix pass on bits {SHIFT}..{SHIFT + 3} of {n_keys:,} uint32 keys",
        [
            (
                "numquad counts + scatter",
                tgt.median_time(lambda: radix_pass(tgt, d_keys, d_counts, d_out_keys, d_out_index), repeats),
            ),
            ("NumPy argsort(stable) + take", median_time(lambda: radix_pass_numpy(keys), repeats)),
            ("Numba njit(parallel=True)", median_time(lambda: radix_pass_numba(keys, nb_keys, nb_index), repeats)),
        ],
    )
    print(
        f"OK block_scan_radix: block scan equals np.cumsum per block ({nblocks:,} blocks) and the "
        f"radix pass equals argsort(kind='stable') ({n_keys:,} keys) [target {tgt}]"
    )


if __name__ == "__main__":
    main()
