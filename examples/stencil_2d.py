"""A 2-D heat-equation (Laplace) stencil with a shared-memory tile and halo.

Each step is one 2-D launch with 16 x 16 thread blocks. A block loads its 16 x 16
tile of the float64 grid and a one-cell halo (the threads on the tile's edges load
the neighbours) into ``xpu.shared.array((18, 18))``, waits at
``xpu.syncthreads()``, and each interior point takes the explicit update

    u' = u + alpha * (up + down + left + right - 4 * u)

while boundary points keep their value (fixed boundary). The step also reports the
largest change: ``Wave.reduceMax`` in each wave and one ``xpu.atomic.max`` per wave.

The NumPy reference performs the same IEEE operations in the same order
(((up + down) + left) + right) - 4 * u, then * alpha, then + u, and the CPU target
compiles without FMA contraction (and numquad turns it off on the GPU too), so the
result is checked bit for bit with ``np.array_equal``, not with a tolerance. The
largest change is a max, which does not depend on the order, so it matches exactly too.

With ``--target cuda`` the steps run on the GPU on numba.cuda device arrays
(examples/_target.py); only the last step's largest change and the final grid
come back to the host.

    python examples/stencil_2d.py                  # 1000 x 1200, 20 steps
    python examples/stencil_2d.py --small          # a quick check
    python examples/stencil_2d.py --target cuda    # the same on a GPU
"""

import argparse
import sys

import numba
import numpy as np
from numba import prange

import _target  # examples/_target.py
from _timing import median_time  # examples/_timing.py
from numquad import Wave, xpu

TILE = 16


@xpu.jit
def k_heat_step(u, out, alpha, max_change):
    tile = xpu.shared.array((TILE + 2, TILE + 2), np.float64)
    tx = xpu.threadIdx.x
    ty = xpu.threadIdx.y
    j, i = xpu.grid(2)  # x is the column, y the row
    h = u.shape[0]
    w = u.shape[1]
    inside = i < h and j < w
    if inside:
        tile[ty + 1, tx + 1] = u[i, j]
        if tx == 0 and j > 0:  # the halo: edge threads load the neighbours
            tile[ty + 1, 0] = u[i, j - 1]
        if tx == TILE - 1 and j + 1 < w:
            tile[ty + 1, TILE + 1] = u[i, j + 1]
        if ty == 0 and i > 0:
            tile[0, tx + 1] = u[i - 1, j]
        if ty == TILE - 1 and i + 1 < h:
            tile[TILE + 1, tx + 1] = u[i + 1, j]
    xpu.syncthreads()  # every thread of the block, outside any if
    change = 0.0
    if inside:
        c = tile[ty + 1, tx + 1]
        new = c
        if i > 0 and i < h - 1 and j > 0 and j < w - 1:
            new = c + alpha * (
                tile[ty, tx + 1] + tile[ty + 2, tx + 1] + tile[ty + 1, tx] + tile[ty + 1, tx + 2] - 4.0 * c
            )
        out[i, j] = new
        change = abs(new - c)
    m = Wave.reduceMax(change)
    if Wave.laneId() == 0:
        xpu.atomic.max(max_change, 0, m)


def heat_numquad(tgt, u0, alpha, steps, a, b):
    """*steps* updates of the host array u0 (buffers a and b, on the target, are
    overwritten); returns (u on the target, last max change)."""
    h, w = u0.shape
    grid = ((w + TILE - 1) // TILE, (h + TILE - 1) // TILE)
    tgt.assign(a, u0)
    change = tgt.full(1, 0.0, np.float64)
    for _ in range(steps):
        tgt.assign(change, 0.0)
        k_heat_step[grid, (TILE, TILE)](a, b, alpha, change)
        a, b = b, a
    return a, tgt.to_host(change)[0]


def heat_numpy(u0, alpha, steps):
    u = u0.copy()
    new = u0.copy()
    change = 0.0
    for _ in range(steps):
        c = u[1:-1, 1:-1]
        new[1:-1, 1:-1] = c + alpha * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * c)
        change = float(np.abs(new[1:-1, 1:-1] - c).max())
        u, new = new, u
    return u, change


@numba.njit(parallel=True)
def heat_numba(u0, alpha, steps):
    u = u0.copy()
    new = u0.copy()
    h, w = u.shape
    row_change = np.zeros(h)
    for _ in range(steps):
        for i in prange(1, h - 1):
            m = 0.0
            for j in range(1, w - 1):
                c = u[i, j]
                v = c + alpha * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * c)
                new[i, j] = v
                m = max(m, abs(v - c))
            row_change[i] = m
        u, new = new, u
    return u, row_change.max()


def fail(msg):
    print(f"FAIL stencil_2d: {msg}")
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a small grid, for a quick check")
    _target.add_option(ap)
    args = ap.parse_args()
    tgt = _target.from_args(args, "stencil_2d")
    h, w, steps = (70, 100, 5) if args.small else (1000, 1200, 20)  # not multiples of 16
    repeats = 3 if args.small else 5
    alpha = 0.2  # stable for alpha <= 0.25

    rng = np.random.default_rng(3)
    u0 = rng.random((h, w))
    u0[0, :] = 1.0  # a hot top edge
    a = tgt.full((h, w), np.nan, np.float64)  # poison: an unwritten point stays NaN
    b = tgt.full((h, w), np.nan, np.float64)
    got, got_change = heat_numquad(tgt, u0, alpha, steps, a, b)
    got = tgt.to_host(got)
    want, want_change = heat_numpy(u0, alpha, steps)
    if not np.array_equal(got, want):
        bad = np.argwhere(got != want)
        p = tuple(bad[0])
        fail(f"{len(bad)} points differ from NumPy's bits, first {p}: got {got[p]!r}, want {want[p]!r}")
    if got_change != want_change:
        fail(f"largest change of the last step: got {got_change!r}, NumPy {want_change!r}")
    nb_u, nb_change = heat_numba(u0, alpha, steps)
    if not np.array_equal(nb_u, want) or nb_change != want_change:
        fail("the Numba version differs from NumPy's bits")

    timings = [
        ("numquad, 16x16 tiles + halo", tgt.median_time(lambda: heat_numquad(tgt, u0, alpha, steps, a, b), repeats)),
        ("NumPy slices", median_time(lambda: heat_numpy(u0, alpha, steps), repeats)),
        ("Numba njit(parallel=True)", median_time(lambda: heat_numba(u0, alpha, steps), repeats)),
    ]
    base = timings[1][1]
    if tgt.is_cuda:
        print(f"numquad kernels on the GPU: {tgt.device_name()}")
    print(f"heat stencil on {h} x {w} float64, {steps} steps ({numba.get_num_threads()} threads, median of {repeats})")
    for name, sec in timings:
        print(f"  {name:30s} {sec * 1e3:9.3f} ms   {sec / base:6.2f}x NumPy's time")
    print(f"OK stencil_2d: {steps} steps equal NumPy bit for bit (last max change {got_change:.3e}) [target {tgt}]")


if __name__ == "__main__":
    main()
