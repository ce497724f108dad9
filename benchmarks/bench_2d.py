"""2-D kernels without barriers on the CPU target, by block shape, vs Numba ``prange``.

What a numba.cuda user writes for an image: ``x, y = cuda.grid(2)`` and a guard, in
blocks of 16 x 16 or 32 x 8. Two kernels, each against the ``@njit(parallel=True)``
loop a user would write instead (same results, checked bit for bit first):

- ``scale``: ``out[y, x] = img[y, x] * 2 + 1`` (a 2-D map);
- ``blur``: a 3 x 3 box blur read from global memory, clamped at the edges.

Each runs in blocks of 16 x 16 and 32 x 8, whose waves are whole rows of threads or
one row (numquad/cpu/codegen.py runs them as rows: ``img[y, x]`` is a contiguous
vector load), and of 12 x 8, whose rows straddle waves (the flat lane loop, where
``threadIdx.x`` is ``lane % 12``). Median of the runs, numquad and Numba
alternating; ratio = Numba time / numquad time.

    python benchmarks/bench_2d.py [--quick] [--json PATH]
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numba
import numpy as np
from numba import cuda, prange

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import Rows, parser  # noqa: E402

from numquad import xpu  # noqa: E402

BLOCKS = ((16, 16), (32, 8), (12, 8))


@xpu.jit
def scale_nq(img, out):
    x, y = cuda.grid(2)
    if y < img.shape[0] and x < img.shape[1]:
        out[y, x] = img[y, x] * np.float32(2) + np.float32(1)


@numba.njit(parallel=True)
def scale_nb(img, out):
    for y in prange(img.shape[0]):
        for x in range(img.shape[1]):
            out[y, x] = img[y, x] * np.float32(2) + np.float32(1)


@xpu.jit
def blur_nq(img, out):
    x, y = cuda.grid(2)
    h, w = img.shape[0], img.shape[1]
    if y < h and x < w:
        s = np.float32(0)
        for dy in range(-1, 2):
            for dx in range(-1, 2):
                s += img[min(max(y + dy, 0), h - 1), min(max(x + dx, 0), w - 1)]
        out[y, x] = s / np.float32(9)


@numba.njit(parallel=True)
def blur_nb(img, out):
    h, w = img.shape
    for y in prange(h):
        for x in range(w):
            s = np.float32(0)
            for dy in range(-1, 2):
                for dx in range(-1, 2):
                    s += img[min(max(y + dy, 0), h - 1), min(max(x + dx, 0), w - 1)]
            out[y, x] = s / np.float32(9)


def _median_pair(f_nq, f_nb, repeat):
    f_nq()
    f_nb()
    t = {f_nq: [], f_nb: []}
    for i in range(repeat):
        for f in (f_nq, f_nb) if i % 2 == 0 else (f_nb, f_nq):
            t0 = time.perf_counter()
            f()
            t[f].append(time.perf_counter() - t0)
    return statistics.median(t[f_nq]), statistics.median(t[f_nb])


def main(argv=None):
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    rows = Rows("bench_2d", args)
    h, w = (239, 319) if args.quick else (1079, 1919)
    repeat = 5 if args.quick else 15
    rng = np.random.default_rng(5)
    img = rng.random((h, w), dtype=np.float32)
    rows.header(
        f"2-D kernels without barriers, {h} x {w} float32, {numba.get_num_threads()} threads, "
        f"median of {repeat}; ratio = Numba prange time / numquad time"
    )
    for name, k_nq, k_nb in (("scale", scale_nq, scale_nb), ("blur", blur_nq, blur_nb)):
        want = np.full_like(img, np.nan)
        k_nb(img, want)
        for bx, by in BLOCKS:
            out = np.full_like(img, np.nan)
            grid = (-(-w // bx), -(-h // by))
            k_nq[grid, (bx, by)](img, out)
            if not np.array_equal(out, want):
                print(f"FAIL {name} {bx}x{by}: numquad differs from Numba", flush=True)
                sys.exit(1)
            print(f"check {name} {bx}x{by}: OK", flush=True)
            t_nq, t_nb = _median_pair(lambda: k_nq[grid, (bx, by)](img, out), lambda: k_nb(img, want), repeat)
            rows.add(
                f"{name}_{bx}x{by}",
                f"{name}, blocks of {bx} x {by}: Numba / numquad",
                t_nb / t_nq,
                "x",
                detail=f"numquad {t_nq * 1e3:.2f} ms, Numba {t_nb * 1e3:.2f} ms",
            )
    rows.summary()


if __name__ == "__main__":
    main()
