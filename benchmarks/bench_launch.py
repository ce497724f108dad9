"""CPU launch overhead: a small kernel launch and a lane call on 1,000 elements vs an @njit call.

    python benchmarks/bench_launch.py [--quick] [--json PATH]

    k[8, 128](x, out)          # 1,024 threads: out[i] = x[i] * 2.0 (a launch seen before)
    lane(a, b)                 # a * 2.0 + b on 1,000 float64 (a call seen before)
    njit_loop(x, out)          # @numba.njit doing the kernel's work in a loop

Bars (issue 14): a kernel launch <= 10 us, a lane call on 1,000 elements <= 25 us.
Each row is the best of 5 rounds of N calls, in process CPU time (the box is
shared: CPU time does not count other processes' turns), with the @njit call's
time beside it in the same run. Informational rows: a 2-D launch, a launch with a
scalar argument, a lane call with ``out=``.
"""

from __future__ import annotations

import os
import sys
import time

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import Rows, busy_note, parser  # noqa: E402

from numquad import xpu  # noqa: E402


@xpu.jit
def k_scale(x, out):
    i = xpu.grid(1)
    if i < x.size:
        out[i] = x[i] * 2.0


@xpu.jit
def k_scale_by(x, s, out):
    i = xpu.grid(1)
    if i < x.size:
        out[i] = x[i] * s


@xpu.jit
def k_2d(img, out):
    x, y = xpu.grid(2)
    if y < img.shape[0] and x < img.shape[1]:
        out[y, x] = img[y, x] + 1.0


@xpu.jit
def lane(a, b):
    return a * 2.0 + b


@numba.njit
def njit_loop(x, out):
    for i in range(x.size):
        out[i] = x[i] * 2.0


def _per_call(fn, n, rounds=5):
    """Best of *rounds* rounds of *n* calls, seconds per call of process CPU time."""
    fn()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(n):
            fn()
        best = min(best, (time.process_time() - t0) / n)
    return best


def main(argv=None):
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    rows = Rows("bench_launch", args)
    busy_note(rows, "this run")
    n = 500 if args.quick else 3000
    rng = np.random.default_rng(7)
    x = rng.standard_normal(1024)
    out = np.full_like(x, np.nan)
    a, b = rng.standard_normal(1000), rng.standard_normal(1000)
    r = np.full_like(a, np.nan)
    img = rng.standard_normal((32, 48))
    img_out = np.full_like(img, np.nan)
    # the results first: each call computes what NumPy does
    k_scale[8, 128](x, out)
    njit_want = np.empty_like(x)
    njit_loop(x, njit_want)
    assert np.array_equal(out, x * 2.0) and np.array_equal(njit_want, x * 2.0)
    assert np.array_equal(lane(a, b), a * 2.0 + b)
    k_2d[(6, 8), (8, 4)](img, img_out)
    assert np.array_equal(img_out, img + 1.0)

    rows.header(f"per call, process CPU time, best of 5 x {n} calls")
    t_njit = _per_call(lambda: njit_loop(x, out), n)
    rows.add("njit", "@numba.njit loop over 1,024 elements (same run)", t_njit, "s")
    t_launch = _per_call(lambda: k_scale[8, 128](x, out), n)
    rows.add(
        "launch",
        "kernel launch k[8, 128](x, out), 1,024 threads",
        t_launch * 1e6,
        "us",
        bar="<= 10",
        detail=f"{t_launch / t_njit:.1f}x the @njit call",
    )
    t = _per_call(lambda: k_scale_by[8, 128](x, 3.0, out), n)
    rows.add("launch_scalar", "kernel launch with a float argument k[8, 128](x, 3.0, out)", t * 1e6, "us")
    t = _per_call(lambda: k_2d[(6, 8), (8, 4)](img, img_out), n)
    rows.add("launch_2d", "2-D kernel launch k[(6, 8), (8, 4)](img, out)", t * 1e6, "us")
    t_lane = _per_call(lambda: lane(a, b), n)
    rows.add(
        "lane",
        "lane call lane(a, b) on 1,000 float64 (allocates its result)",
        t_lane * 1e6,
        "us",
        bar="<= 25",
        detail=f"{t_lane / t_njit:.1f}x the @njit call",
    )
    t = _per_call(lambda: lane(a, b, out=r), n)
    rows.add("lane_out", "lane call lane(a, b, out=r) on 1,000 float64", t * 1e6, "us")
    rows.summary()
    return rows


if __name__ == "__main__":
    main()
