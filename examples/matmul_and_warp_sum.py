"""numba.cuda code on numquad: a shared-memory tiled matmul and a warp-shuffle sum.

The two kernels follow numba-cuda's documented examples (the shared-memory matrix
multiply with 16 x 16 tiles, and a warp reduction with ``cuda.shfl_down_sync``)
and are written the way numba.cuda code is written, with ``from numba import cuda``:
``cuda.grid``, ``cuda.threadIdx``, ``cuda.shared.array``, ``cuda.syncthreads``,
``cuda.shfl_down_sync``, ``cuda.laneid``, ``cuda.atomic.add``. The one change is the
decorator, ``@xpu.jit`` instead of ``@cuda.jit``, so the same kernels also run on
numquad's CPU target (docs/numba-cuda.md lists the names it understands).

1. ``fast_matmul``: C = A @ B in float32, one 16 x 16 tile of C per 16 x 16 block.
   The block walks along the shared dimension K one tile at a time: each thread
   copies one element of A's tile and one of B's into ``cuda.shared.array``
   (0 past the edges of the matrices), the block waits at ``cuda.syncthreads()``,
   each thread adds the 16 products of its row of A's tile and its column of B's
   tile to its running sum, and the block waits again before the next tiles
   overwrite these.

   Check. The kernel sums each dot product in the order k = 0, 1, ..., K-1, one
   rounding per multiply and one per add; NumPy's ``A @ B`` (BLAS) sums in blocks,
   with vector lanes and FMA, so the two round differently and are compared with a
   tolerance. Any order of summation stays within gamma_K * (|A| @ |B|) of the
   exact product, element by element, with gamma_K = K u / (1 - K u) and
   u = 2**-24 (the standard error bound of a float32 dot product), so
   ``|C - A @ B| <= 2 gamma_K (|A| @ |B|)``; a wrong tile or a missing barrier
   misses that bound by orders of magnitude. Because the kernel's order is the
   plain k loop, C must also equal, bit for bit, a NumPy loop
   ``acc += A[:, k:k+1] * B[k:k+1, :]`` over k (float32, and no FMA contraction on
   either target: docs/architecture.md).

2. ``warp_sum_*``: the sum of a 1-D array. Each thread takes one element (0 past
   the end), five ``cuda.shfl_down_sync(0xffffffff, v, offset)`` steps with offsets
   16, 8, 4, 2, 1 leave the warp's sum in lane 0, and lane 0 adds it to the result
   with one ``cuda.atomic.add``. On int32 data (summed in int64) the result must
   equal NumPy's exactly: integer addition does not depend on the order. On
   float32 data the warps' atomics land in an order nobody fixes (on a GPU), so the
   result is compared with a float64 sum within the bound for that scheme:
   (5 + number of warps) additions in the longest chain, error at most
   gamma_(5 + warps) * sum(|x|).

Both are timed against NumPy (``A @ B``, ``x.sum()``) and Numba
``@njit(parallel=True)`` loops. With ``--target cuda`` they run on the GPU on
numba.cuda device arrays (examples/_target.py).

    python examples/matmul_and_warp_sum.py                  # 600 x 700 @ 700 x 500; 4 M elements
    python examples/matmul_and_warp_sum.py --small          # a quick check
    python examples/matmul_and_warp_sum.py --target cuda    # the same on a GPU
"""

import argparse
import sys

import numba
import numpy as np
from numba import cuda, float32, int64, prange

import _target  # examples/_target.py
from _timing import median_time, report  # examples/_timing.py
from numquad import xpu

TPB = 16  # the matmul's tile: 16 x 16 threads, 16 x 16 elements
WARP_TPB = 256  # threads per block of the sums
U32 = 2.0**-24  # float32's unit roundoff


# -- 1. tiled matmul ----------------------------------------------------------------------


@xpu.jit
def fast_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    col, row = cuda.grid(2)  # x runs along C's columns, y along its rows
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = float32(0.0)
    for tile in range((A.shape[1] + TPB - 1) // TPB):
        k0 = tile * TPB
        a = float32(0.0)  # 0 past the edges: adds nothing
        if row < A.shape[0] and k0 + tx < A.shape[1]:
            a = A[row, k0 + tx]
        sA[ty, tx] = a
        b = float32(0.0)
        if col < B.shape[1] and k0 + ty < B.shape[0]:
            b = B[k0 + ty, col]
        sB[ty, tx] = b
        cuda.syncthreads()  # both tiles loaded
        for k in range(TPB):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()  # everyone done with them before the next load
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


def matmul_numquad(A, B, C):
    grid = ((C.shape[1] + TPB - 1) // TPB, (C.shape[0] + TPB - 1) // TPB)
    fast_matmul[grid, (TPB, TPB)](A, B, C)


def matmul_k_order(A, B):
    """A @ B summed as the kernel sums it: k = 0, 1, ..., one float32 rounding per
    multiply and per add."""
    acc = np.zeros((A.shape[0], B.shape[1]), np.float32)
    for k in range(A.shape[1]):
        acc += A[:, k : k + 1] * B[k : k + 1, :]
    return acc


@numba.njit(parallel=True)
def matmul_numba(A, B, C):
    m, kk = A.shape
    n = B.shape[1]
    for i in prange(m):
        for j in range(n):
            C[i, j] = 0.0
        for k in range(kk):
            a = A[i, k]
            for j in range(n):
                C[i, j] += a * B[k, j]


# -- 2. warp-shuffle sum --------------------------------------------------------------------


@xpu.jit
def warp_reduce(v):
    """The sum of v over the warp, in lane 0 (the other lanes hold partial sums)."""
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    return v


@xpu.jit
def warp_sum_int(x, total):
    i = cuda.grid(1)
    v = int64(0)
    if i < x.shape[0]:
        v = int64(x[i])
    v = warp_reduce(v)
    if cuda.laneid == 0:
        cuda.atomic.add(total, 0, v)


@xpu.jit
def warp_sum_float(x, total):
    i = cuda.grid(1)
    v = float32(0.0)
    if i < x.shape[0]:
        v = x[i]
    v = warp_reduce(v)
    if cuda.laneid == 0:
        cuda.atomic.add(total, 0, v)


def sum_numquad(tgt, kernel, x, total, start=0):
    """The kernel's sum of x added to *start* in total[0] (the kernels add to total)."""
    tgt.assign(total, start)
    kernel[(x.size + WARP_TPB - 1) // WARP_TPB, WARP_TPB](x, total)
    return tgt.to_host(total)[0]


@numba.njit(parallel=True)
def sum_numba(x):
    s = 0
    for i in prange(x.size):
        s += x[i]
    return s


# -- driver ---------------------------------------------------------------------------------


def fail(msg):
    print(f"FAIL matmul_and_warp_sum: {msg}")
    sys.exit(1)


def gamma(n):
    return n * U32 / (1.0 - n * U32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="small inputs, for a quick check")
    _target.add_option(ap)
    args = ap.parse_args()
    tgt = _target.from_args(args, "matmul_and_warp_sum")
    m, kk, n = (100, 70, 130) if args.small else (600, 700, 500)  # not multiples of 16
    size = 100_003 if args.small else 4_000_037  # a partial last warp
    repeats = 3 if args.small else 5
    rng = np.random.default_rng(5)
    if tgt.is_cuda:
        print(f"numquad kernels on the GPU: {tgt.device_name()}")
    print(f"({numba.get_num_threads()} threads, median of {repeats})")

    # 1. matmul
    A = rng.standard_normal((m, kk)).astype(np.float32)
    B = rng.standard_normal((kk, n)).astype(np.float32)
    dA, dB = tgt.to_device(A), tgt.to_device(B)
    dC = tgt.full((m, n), np.nan, np.float32)  # poison: an unwritten element stays NaN
    matmul_numquad(dA, dB, dC)
    C = tgt.to_host(dC)
    if np.isnan(C).any():
        fail(f"matmul left {np.count_nonzero(np.isnan(C))} elements unwritten")
    P = A @ B
    bound = 2.0 * gamma(kk) * (np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64))
    err = np.abs(C.astype(np.float64) - P)
    if not (err <= bound).all():
        p = tuple(int(i) for i in np.unravel_index(np.argmax(err - bound), err.shape))
        fail(
            f"matmul differs from A @ B beyond the float32 bound at {np.count_nonzero(err > bound)} "
            f"places, first {p}: got {C[p]!r}, want {P[p]!r} +- {bound[p]:.3g}"
        )
    want = matmul_k_order(A, B)
    if not np.array_equal(C, want):
        bad = np.argwhere(C != want)
        p = tuple(int(i) for i in bad[0])
        fail(
            f"matmul differs from the k-ordered NumPy loop at {len(bad)} places, first {p}: "
            f"got {C[p]!r}, want {want[p]!r}"
        )
    C_nb = np.empty_like(C)
    matmul_numba(A, B, C_nb)
    if not (np.abs(C_nb.astype(np.float64) - P) <= bound).all():
        fail("the Numba matmul differs from A @ B beyond the float32 bound")
    report(
        f"matmul {m} x {kk} @ {kk} x {n} float32, 16 x 16 shared tiles "
        f"(largest difference from A @ B {err.max():.2e}, bound {bound.max():.2e})",
        [
            ("numquad fast_matmul", tgt.median_time(lambda: matmul_numquad(dA, dB, dC), repeats)),
            ("NumPy A @ B", median_time(lambda: A @ B, repeats)),
            ("Numba njit(parallel=True)", median_time(lambda: matmul_numba(A, B, C_nb), repeats)),
        ],
    )

    # 2. warp sums
    xi = rng.integers(-1_000_000, 1_000_000, size).astype(np.int32)
    dxi = tgt.to_device(xi)
    # the kernels add to total[0], so instead of a poison it starts at a random value:
    # a warp that overwrites the total instead of adding to it shows
    start = int(rng.integers(-(2**40), 2**40))
    total_i = tgt.full(1, -1, np.int64)
    got_i = int(sum_numquad(tgt, warp_sum_int, dxi, total_i, start)) - start
    want_i = int(xi.sum(dtype=np.int64))
    if got_i != want_i:
        fail(f"int32 warp sum: got {got_i}, NumPy {want_i}")
    if sum_numba(xi) != want_i:
        fail("the Numba int32 sum differs from NumPy's")

    xf = rng.standard_normal(size).astype(np.float32)
    dxf = tgt.to_device(xf)
    total_f = tgt.full(1, np.nan, np.float32)
    got_f = float(sum_numquad(tgt, warp_sum_float, dxf, total_f))
    want_f = float(xf.sum(dtype=np.float64))
    warps = (size + 31) // 32
    tol = gamma(5 + warps) * float(np.abs(xf).sum(dtype=np.float64))
    if not abs(got_f - want_f) <= tol:
        fail(f"float32 warp sum: got {got_f!r}, float64 sum {want_f!r}, differs by more than {tol:.3g}")
    report(
        f"warp-shuffle sum of {size:,} int32 (one atomic per warp; float32: {got_f:.6g}, float64 sum {want_f:.6g})",
        [
            ("numquad warp_sum_int", tgt.median_time(lambda: sum_numquad(tgt, warp_sum_int, dxi, total_i), repeats)),
            ("NumPy x.sum()", median_time(lambda: xi.sum(dtype=np.int64), repeats)),
            ("Numba njit(parallel=True)", median_time(lambda: sum_numba(xi), repeats)),
        ],
    )
    print(
        f"OK matmul_and_warp_sum: matmul within the float32 bound of A @ B and equal to the k-ordered "
        f"sum ({m} x {kk} @ {kk} x {n}); warp sums exact (int32) and within the bound (float32) "
        f"({size:,} elements) [target {tgt}]"
    )


if __name__ == "__main__":
    main()
