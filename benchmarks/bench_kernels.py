"""The examples' kernels on numquad's CPU target vs plain Numba ``@njit(parallel=True)``.

    python benchmarks/bench_kernels.py [--quick] [--json PATH] [--svg PATH] [--repeat N] [--threads T] [--only K,K]

Nine kernels, none copied here: seven come from the example scripts (examples/*.py,
imported with ``examples/`` on sys.path), two (the shared-memory tree sum and the
``shfl_down_sync`` warp sum) from benchmarks/bench_block.py. Each is paired with the
``@njit(parallel=True)`` version of the same work that its example (or bench_block)
already times:

=============  =================================================  =====================
kernel         numquad                                            plain Numba
=============  =================================================  =====================
compaction     stream_compaction.compact_ordered (2 kernels +     compact_numba
               a NumPy scan: exactly x[x > t])
derivatives    image_derivatives.derivatives_numquad (quads:      derivatives_numba
               ddx, ddy, Sobel)
block_scan     block_scan_radix.k_block_scan                      scan_numba
radix_pass     block_scan_radix.radix_pass (counts + NumPy scan   radix_pass_numba
               + scatter)
histogram      histogram.k_hist_atomic (uniform uint8, 256 bins)  hist_numba
matmul         matmul_and_warp_sum.fast_matmul (16 x 16 tiles)    matmul_numba
stencil        stencil_2d.heat_numquad (shared tile + halo)       heat_numba
tree_sum       bench_block.shared_sum (int64)                     bench_block.prange_sum
warp_sum       bench_block.warp_sum (int64)                       bench_block.prange_sum
=============  =================================================  =====================

For each kernel: random inputs; numquad and Numba run once and are checked against
each other and NumPy (bit for bit where the example checks bit for bit; the matmul
within the example's float32 error bound); a mismatch prints ``FAIL`` and exits
with status 1, before anything is timed. Then both run once more as a warm-up and
N times each, alternating numquad and Numba in this one process; the table shows
the medians and ratio = Numba time / numquad time (> 1: numquad is faster). Bars:
every kernel >= 0.5x, the geometric mean of the nine ratios >= 0.8x. A second,
informational table gives the median process CPU time per run (all threads): it
leaves out the time a thread is descheduled (on a loaded machine that can dominate
the wall time), but counts a thread that waits on the CPU (spinning or yielding),
so it reads most plainly with ``--threads 1``. The script
exits 0 whatever the bars say (benchmarks/_common.py). ``--quick``: small inputs,
3 runs (a smoke run for tests/test_benchmarks.py; its ratios mean little).
``--threads T`` runs both sides on T threads (``numba.set_num_threads``; numquad's
launches split the grid over that many workers, numquad/cpu/launch.py).
"""

from __future__ import annotations

import html
import json
import math
import os
import statistics
import sys
import time

import numba
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

from _common import Rows, busy_note, machine_info, parser  # noqa: E402

import _target  # noqa: E402  examples/_target.py
import bench_block  # noqa: E402  benchmarks/bench_block.py
import block_scan_radix as ex_scan  # noqa: E402  examples/block_scan_radix.py
import histogram as ex_hist  # noqa: E402  examples/histogram.py
import image_derivatives as ex_deriv  # noqa: E402  examples/image_derivatives.py
import matmul_and_warp_sum as ex_mm  # noqa: E402  examples/matmul_and_warp_sum.py
import stencil_2d as ex_stencil  # noqa: E402  examples/stencil_2d.py
import stream_compaction as ex_compact  # noqa: E402  examples/stream_compaction.py

SCRIPT = "bench_kernels"
BAR_EACH = 0.5
BAR_GEOMEAN = 0.8
CPU = _target.Target("cpu")


class Mismatch(Exception):
    """A result that differs: the script stops before timing anything."""


def same(name, got, want, what):
    """Raise Mismatch unless *got* equals *want* bit for bit (arrays or scalars)."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        raise Mismatch(f"{name}: {what}: shape {got.shape}, want {want.shape}")
    if not np.array_equal(got, want):
        bad = np.argwhere(got != want)
        p = tuple(int(i) for i in bad[0]) if bad.size else ()
        raise Mismatch(f"{name}: {what}: differs at {len(bad)} places, first {p}: got {got[p]}, want {want[p]}")


# ---------------------------------------------------------------------------
# the nine cases: each returns (size text, check text, numquad callable, Numba callable)
# after checking the first runs
# ---------------------------------------------------------------------------


def case_compaction(quick, rng):
    n = 200_003 if quick else 4_000_037  # a partial last wave, as the example
    x = rng.standard_normal(n).astype(np.float32)
    t = np.float32(0.5)
    want = ex_compact.compact_numpy(x, t)
    out = np.full(n, np.nan, np.float32)
    counts = np.full((n + ex_compact.TPB - 1) // ex_compact.TPB, -1, np.int64)
    out_nb = np.full(n, np.nan, np.float32)
    got = ex_compact.compact_ordered(CPU, x, t, out, counts)
    got_nb = ex_compact.compact_numba(x, t, out_nb)
    same("compaction", got, want.size, "numquad count vs NumPy")
    same("compaction", got_nb, want.size, "Numba count vs NumPy")
    same("compaction", out[:got], want, "numquad vs x[x > t]")
    same("compaction", out_nb[:got_nb], out[:got], "Numba vs numquad")
    return (
        f"{n:,} float32, keep x > 0.5",
        "numquad == Numba == NumPy x[x > t] (bit for bit)",
        lambda: ex_compact.compact_ordered(CPU, x, t, out, counts),
        lambda: ex_compact.compact_numba(x, t, out_nb),
    )


def case_derivatives(quick, rng):
    h, w = (239, 319) if quick else (719, 1279)  # odd: half tiles at two edges
    img = ex_deriv.make_image(h, w, rng)
    nq = (
        np.full((h, w), np.nan, np.float32),
        np.full((h, w), np.nan, np.float32),
        np.full((h, w, 3), np.nan, np.float32),
    )
    nb = tuple(np.full_like(a, np.nan) for a in nq)
    ex_deriv.derivatives_numquad(img, *nq)
    ex_deriv.derivatives_numba(img, *nb)
    for what, a, b, c in zip(("ddx", "ddy", "Sobel"), nq, nb, ex_deriv.derivatives_numpy(img)):
        same("derivatives", a, c, f"numquad {what} vs NumPy")
        same("derivatives", b, a, f"Numba {what} vs numquad")
    return (
        f"{h} x {w} float32 image: ddx, ddy, Sobel gx, gy, magnitude",
        "numquad == Numba == NumPy (bit for bit)",
        lambda: ex_deriv.derivatives_numquad(img, *nq),
        lambda: ex_deriv.derivatives_numba(img, *nb),
    )


def case_block_scan(quick, rng):
    tpb = ex_scan.TPB
    nblocks = 1_000 if quick else 16_384
    x = rng.integers(-1000, 1000, nblocks * tpb).astype(np.int32)
    out = np.full(x.size, np.iinfo(np.int64).min, np.int64)
    out_nb = out.copy()
    k = ex_scan.k_block_scan[nblocks, tpb]
    k(x, out)
    ex_scan.scan_numba(x, out_nb)
    want = ex_scan.scan_numpy(x)
    same("block_scan", out, want, "numquad vs np.cumsum per block")
    same("block_scan", out_nb, out, "Numba vs numquad")
    return (
        f"{nblocks:,} blocks of {tpb} int32 -> int64, exclusive",
        "numquad == Numba == NumPy cumsum per block (exact)",
        lambda: k(x, out),
        lambda: ex_scan.scan_numba(x, out_nb),
    )


def case_radix_pass(quick, rng):
    tpb = ex_scan.TPB
    n = 200_003 if quick else 500_003  # a partial last block and wave
    keys = rng.integers(0, 2**32, n, dtype=np.uint32)
    kb = (n + tpb - 1) // tpb
    counts = np.full((ex_scan.RADIX, kb), -1, np.int64)
    out_keys = np.full(n, 0xFFFFFFFF, np.uint32)
    out_index = np.full(n, -1, np.int64)
    nb_keys = out_keys.copy()
    nb_index = out_index.copy()
    ex_scan.radix_pass(CPU, keys, counts, out_keys, out_index)
    ex_scan.radix_pass_numba(keys, nb_keys, nb_index)
    want_keys, want_index = ex_scan.radix_pass_numpy(keys)
    same("radix_pass", out_index, want_index, "numquad permutation vs argsort(kind='stable')")
    same("radix_pass", out_keys, want_keys, "numquad keys vs NumPy")
    same("radix_pass", nb_index, out_index, "Numba permutation vs numquad")
    same("radix_pass", nb_keys, out_keys, "Numba keys vs numquad")
    return (
        f"{n:,} uint32 keys, stable pass on bits {ex_scan.SHIFT}..{ex_scan.SHIFT + 3}",
        "numquad == Numba == NumPy argsort(kind='stable') (exact)",
        lambda: ex_scan.radix_pass(CPU, keys, counts, out_keys, out_index),
        lambda: ex_scan.radix_pass_numba(keys, nb_keys, nb_index),
    )


def case_histogram(quick, rng):
    n = 200_001 if quick else 8_000_001
    x = rng.integers(0, ex_hist.BINS, n, dtype=np.uint8)
    hist = np.zeros(ex_hist.BINS, np.uint32)
    kernel = ex_hist.k_hist_atomic

    def run_nq():
        hist[:] = 0  # the kernel adds to hist
        ex_hist.hist_numquad(kernel, x, hist)

    run_nq()
    got_nb = ex_hist.hist_numba(x)
    want = np.bincount(x, minlength=ex_hist.BINS)
    same("histogram", hist.astype(np.int64), want, "numquad vs np.bincount")
    same("histogram", got_nb, want, "Numba vs np.bincount")
    return (
        f"{n:,} uniform uint8 into {ex_hist.BINS} bins, 1 atomic per element",
        "numquad == Numba == np.bincount (exact)",
        run_nq,
        lambda: ex_hist.hist_numba(x),
    )


def case_matmul(quick, rng):
    m, kk, n = (100, 70, 130) if quick else (250, 300, 200)  # not multiples of 16
    A = rng.standard_normal((m, kk)).astype(np.float32)
    B = rng.standard_normal((kk, n)).astype(np.float32)
    C = np.full((m, n), np.nan, np.float32)
    C_nb = C.copy()
    ex_mm.matmul_numquad(A, B, C)
    ex_mm.matmul_numba(A, B, C_nb)
    same("matmul", C, ex_mm.matmul_k_order(A, B), "numquad vs the k-ordered NumPy loop")
    P = A @ B
    bound = 2.0 * ex_mm.gamma(kk) * (np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64))
    for who, got in (("numquad", C), ("Numba", C_nb)):
        err = np.abs(got.astype(np.float64) - P)
        if not (err <= bound).all():  # NaN (unwritten) fails this too
            raise Mismatch(
                f"matmul: {who} differs from A @ B beyond the float32 bound at "
                f"{np.count_nonzero(~(err <= bound))} places"
            )
    diff = np.abs(C.astype(np.float64) - C_nb.astype(np.float64))
    if not (diff <= bound).all():
        raise Mismatch("matmul: numquad and Numba differ by more than the float32 bound")
    exact = "bit for bit" if np.array_equal(C, C_nb) else f"within the bound, max diff {diff.max():.2e}"
    return (
        f"{m} x {kk} @ {kk} x {n} float32",
        f"numquad == k-ordered NumPy loop (bit for bit); numquad, Numba within the float32 bound "
        f"of A @ B; numquad vs Numba {exact}",
        lambda: ex_mm.matmul_numquad(A, B, C),
        lambda: ex_mm.matmul_numba(A, B, C_nb),
    )


def case_stencil(quick, rng):
    h, w, steps = (70, 100, 5) if quick else (410, 500, 6)  # not multiples of 16
    alpha = 0.2
    u0 = rng.random((h, w))
    u0[0, :] = 1.0
    a = np.full((h, w), np.nan, np.float64)
    b = np.full((h, w), np.nan, np.float64)
    got, got_change = ex_stencil.heat_numquad(CPU, u0, alpha, steps, a, b)
    nb_u, nb_change = ex_stencil.heat_numba(u0, alpha, steps)
    want, want_change = ex_stencil.heat_numpy(u0, alpha, steps)
    same("stencil", got, want, "numquad grid vs NumPy")
    same("stencil", got_change, want_change, "numquad last max change vs NumPy")
    same("stencil", nb_u, got, "Numba grid vs numquad")
    same("stencil", nb_change, got_change, "Numba last max change vs numquad")
    return (
        f"{h} x {w} float64, {steps} steps",
        "numquad == Numba == NumPy, grid and last max change (bit for bit)",
        lambda: ex_stencil.heat_numquad(CPU, u0, alpha, steps, a, b),
        lambda: ex_stencil.heat_numba(u0, alpha, steps),
    )


def _block_sum(kernel, name, quick, rng):
    tpb = bench_block.TPB
    n = (1 << 18) if quick else (1 << 21)
    data = rng.integers(-1000, 1000, n, dtype=np.int64)
    out = np.zeros(1, np.int64)
    launch = kernel[n // tpb, tpb]

    def run_nq():
        out[0] = 0  # the kernel adds to out[0]
        launch(data, out)

    run_nq()
    want = int(data.sum())
    same(name, int(out[0]), want, "numquad vs np.sum")
    same(name, int(bench_block.prange_sum(data)), want, "Numba prange sum vs np.sum")
    return (
        f"{n:,} int64 (2^{n.bit_length() - 1}), [n/{tpb}, {tpb}]",
        "numquad == Numba == np.sum (exact)",
        run_nq,
        lambda: bench_block.prange_sum(data),
    )


def case_tree_sum(quick, rng):
    return _block_sum(bench_block.shared_sum, "tree_sum", quick, rng)


def case_warp_sum(quick, rng):
    return _block_sum(bench_block.warp_sum, "warp_sum", quick, rng)


CASES = [
    ("compaction", case_compaction),
    ("derivatives", case_derivatives),
    ("block_scan", case_block_scan),
    ("radix_pass", case_radix_pass),
    ("histogram", case_histogram),
    ("matmul", case_matmul),
    ("stencil", case_stencil),
    ("tree_sum", case_tree_sum),
    ("warp_sum", case_warp_sum),
]


def time_pair(f_nq, f_nb, repeat):
    """One warm-up call of each, then *repeat* calls of each, alternating. Returns the
    median wall times and the median process CPU times (all threads), in seconds:
    (wall numquad, wall Numba, cpu numquad, cpu Numba)."""
    f_nq()
    f_nb()
    t = {f_nq: ([], []), f_nb: ([], [])}
    for i in range(repeat):
        for f in (f_nq, f_nb) if i % 2 == 0 else (f_nb, f_nq):
            c0 = time.process_time()
            t0 = time.perf_counter()
            f()
            t[f][0].append(time.perf_counter() - t0)
            t[f][1].append(time.process_time() - c0)
    med = statistics.median
    return med(t[f_nq][0]), med(t[f_nb][0]), med(t[f_nq][1]), med(t[f_nb][1])


def _svg_chart(bars, title):
    """A horizontal bar chart of (*name*, ratio) pairs on a log axis from 0.01x to
    10x, with the bars' lines at 0.5x and 0.8x and 1x, as one SVG document."""
    left, width, row_h, top = 110, 520, 22, 40
    lo, hi = math.log10(0.01), math.log10(10.0)

    def x(r):
        return left + width * (min(max(math.log10(r), lo), hi) - lo) / (hi - lo)

    h = top + row_h * len(bars) + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 80}" height="{h}" '
        f'font-family="sans-serif" font-size="12">',
        f'<text x="8" y="18" font-size="13">{html.escape(title)}</text>',
    ]
    for k, (name, r) in enumerate(bars):
        y = top + row_h * k
        color = "#4a7" if r >= (BAR_GEOMEAN if name == "geomean" else BAR_EACH) else "#c64"
        out.append(f'<text x="{left - 6}" y="{y + 15}" text-anchor="end">{html.escape(name)}</text>')
        out.append(f'<rect x="{left}" y="{y + 3}" width="{x(r) - left:.1f}" height="{row_h - 6}" fill="{color}"/>')
        out.append(f'<text x="{x(r) + 4:.1f}" y="{y + 15}">{r:.2f}x</text>')
    for r, label in ((BAR_EACH, f"bar {BAR_EACH}x"), (BAR_GEOMEAN, f"geomean bar {BAR_GEOMEAN}x"), (1.0, "1x")):
        out.append(
            f'<line x1="{x(r):.1f}" y1="{top - 4}" x2="{x(r):.1f}" y2="{h - 30}" stroke="#333" stroke-dasharray="4 3"/>'
        )
        out.append(f'<text x="{x(r):.1f}" y="{h - 16}" text-anchor="middle" font-size="10">{label}</text>')
    for r in (0.01, 0.1, 1.0, 10.0):
        out.append(f'<text x="{x(r):.1f}" y="{h - 4}" text-anchor="middle" font-size="10">{r:g}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument(
        "--repeat", type=int, default=None, metavar="N", help="timed runs of each side (default 15, --quick 3)"
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="T",
        help="numba.set_num_threads(T) first: both sides run on T threads (default: all, NUMBA_NUM_THREADS)",
    )
    p.add_argument(
        "--only",
        default=None,
        metavar="K,K",
        help="run only these kernels (names as in the table: " + ", ".join(n for n, _ in CASES) + ")",
    )
    p.add_argument("--svg", default=None, metavar="PATH", help="also draw the ratios as a bar chart (an SVG file)")
    args = p.parse_args(argv)
    repeat = args.repeat or (3 if args.quick else 15)
    only = args.only.split(",") if args.only else [n for n, _ in CASES]
    unknown = sorted(set(only) - {n for n, _ in CASES})
    if unknown:
        p.error(f"--only: no kernel {', '.join(unknown)}")
    if args.threads:
        numba.set_num_threads(args.threads)  # numquad's launches read it too (numquad/cpu/launch.py)
    rows = Rows(SCRIPT, args)
    rows._print_row = lambda row: None  # the table below is this script's output
    info = machine_info()
    print(
        f"{SCRIPT}: {info['cpu']} ({info['cpu_flags']}), {os.cpu_count()} cores, "
        f"numba.get_num_threads() = {numba.get_num_threads()} (numquad and Numba alike), "
        f"quick={args.quick}"
    )
    print(
        f"  numba {info['numba']}, numpy {info['numpy']}, numquad {info.get('numquad')} "
        f"({info.get('git')}), {info['date']}"
    )
    rng = np.random.default_rng(2026)

    # every check first: a mismatch stops the script before any timing
    cases = []
    for name, make in CASES:
        if name not in only:
            continue
        try:
            size, check, f_nq, f_nb = make(args.quick, rng)
        except Mismatch as e:
            print(f"FAIL {SCRIPT}: {e}", flush=True)
            return 1
        print(f"check {name}: OK, {check} [{size}]", flush=True)
        cases.append((name, size, f_nq, f_nb))

    busy_note(rows, "timing")
    print(
        f"\n  median of {repeat} runs after 1 warm-up, numquad and Numba alternating; "
        f"ratio = Numba time / numquad time (> 1: numquad faster)"
    )
    head = f"  {'kernel':<12} {'numquad ms':>11} {'Numba par. ms':>14} {'ratio':>7}  bar >= {BAR_EACH}x"
    print(head)
    print("  " + "-" * (len(head) - 2))
    ratios = []
    cpu = []
    for name, size, f_nq, f_nb in cases:
        t_nq, t_nb, c_nq, c_nb = time_pair(f_nq, f_nb, repeat)
        cpu.append((name, c_nq, c_nb))
        r = t_nb / t_nq
        ratios.append(r)
        row = rows.add(
            f"ratio_{name}",
            f"{name}: Numba parallel / numquad time",
            r,
            "x",
            bar=f">= {BAR_EACH}",
            detail=f"{size}; numquad {t_nq * 1e3:.2f} ms, Numba {t_nb * 1e3:.2f} ms, median of {repeat}",
        )
        rows.add(f"t_numquad_{name}", f"{name}: numquad", t_nq, "s")
        rows.add(f"t_numba_{name}", f"{name}: Numba @njit(parallel=True)", t_nb, "s")
        rows.add(f"cpu_numquad_{name}", f"{name}: numquad, process CPU time", c_nq, "s")
        rows.add(f"cpu_numba_{name}", f"{name}: Numba, process CPU time", c_nb, "s")
        print(
            f"  {name:<12} {t_nq * 1e3:>11.2f} {t_nb * 1e3:>14.2f} {r:>6.2f}x  {'PASS' if row['ok'] else 'FAIL'}",
            flush=True,
        )
    gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    row = rows.add("geomean", f"geometric mean of the {len(ratios)} ratios", gm, "x", bar=f">= {BAR_GEOMEAN}")
    print("  " + "-" * (len(head) - 2))
    print(f"  {'geomean':<12} {'':>11} {'':>14} {gm:>6.2f}x  bar >= {BAR_GEOMEAN}x {'PASS' if row['ok'] else 'FAIL'}")
    n_fail = sum(1 for r in ratios if r < BAR_EACH)
    print(
        f"\n  {len(ratios) - n_fail} of {len(ratios)} kernels >= {BAR_EACH}x; "
        f"geometric mean {'>=' if row['ok'] else '<'} {BAR_GEOMEAN}x"
    )
    # context, no bar: CPU time does not count the time a thread waits for a core, so on
    # a loaded machine it shows the work each side does where wall times show the scheduler
    print("\n  context (no bar): median process CPU time per run, all threads")
    print(f"  {'kernel':<12} {'numquad ms':>11} {'Numba par. ms':>14} {'ratio':>7}")
    for name, c_nq, c_nb in cpu:
        r = c_nb / c_nq if c_nq > 0 else float("nan")
        print(f"  {name:<12} {c_nq * 1e3:>11.2f} {c_nb * 1e3:>14.2f} {r:>6.2f}x")
    busy_note(rows, "the end")
    if args.svg:
        title = f"numquad CPU kernel suite: Numba parallel time / numquad time ({info['date']}, {info.get('git')})"
        with open(args.svg, "w") as f:
            f.write(_svg_chart([(name, r) for (name, *_), r in zip(cases, ratios)] + [("geomean", gm)], title))
    wall = time.perf_counter() - rows.t0
    print(f"({SCRIPT}: {wall:.1f} s wall)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "script": SCRIPT,
                    "quick": bool(args.quick),
                    "machine": info,
                    "rows": rows.rows,
                    "notes": rows.notes,
                    "busy": rows.busy,
                    "wall_s": wall,
                },
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
