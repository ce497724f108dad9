"""Wave.reduceSum and a shuffle-heavy kernel on the CPU target, one core, as ratios.

    python benchmarks/bench_wave_cpu.py [--quick] [--json PATH]

The CPU side of bench_gpu.py's section (4), on 2^24 float32, launch [n/256, 256]:

    @xpu.jit
    def nq_reduce(src, dst):               # one whole-wave butterfly
        i = xpu.grid(1)
        dst[i] = Wave.reduceSum(src[i])

    @xpu.jit
    def nq_shuffles(src, dst):             # five shuffleXor steps in a loop
        i = xpu.grid(1)
        v = src[i]
        for k in range(5):
            v += Wave.shuffleXor(v, 1 << k)
        dst[i] = v

Both compute the same butterfly (``v[l] += v[l ^ d]``, d = 1, 2, 4, 8, 16), so
both are compared with the same plain Numba loop (per group of 32: a local copy,
the five xor steps, store) and with NumPy formulations of it (fancy indexing
as ops.py's reference, and reshaped views); also informational: a sequential
sum per 32 in Numba and ``x2.sum(axis=1)`` in NumPy (less arithmetic, another
rounding), and the shuffle kernel with its five steps written out with literal
masks. Every result is checked bit for bit against ops.py's reference on a
sample (the first 2^16 elements) before it is timed, except the rows marked
"other rounding", whose max difference is printed.

Bar (proposed here, by analogy with the streaming-kernel bar): each
numquad kernel runs at >= 0.8x the plain Numba loop doing the same arithmetic.
Timings are best-of-N after one warm-up call, all in this one run.
"""

from __future__ import annotations

import os
import sys

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import Rows, best_of, busy_note, parser  # noqa: E402

from numquad import Wave, ops, xpu  # noqa: E402

TPB = 256
SAMPLE = 1 << 16  # elements checked against ops.py's reference


@xpu.jit
def nq_reduce(src, dst):
    i = xpu.grid(1)
    dst[i] = Wave.reduceSum(src[i])


@xpu.jit
def nq_shuffles(src, dst):
    i = xpu.grid(1)
    v = src[i]
    for k in range(5):
        v += Wave.shuffleXor(v, 1 << k)
    dst[i] = v


@xpu.jit
def nq_shuffles_literal(src, dst):
    i = xpu.grid(1)
    v = src[i]
    v += Wave.shuffleXor(v, 1)
    v += Wave.shuffleXor(v, 2)
    v += Wave.shuffleXor(v, 4)
    v += Wave.shuffleXor(v, 8)
    v += Wave.shuffleXor(v, 16)
    dst[i] = v


@numba.njit(nogil=True)
def plain_butterfly(src, dst):
    """Per group of 32: a local copy, five xor steps v[l] + v[l ^ d], store."""
    t = np.empty(32, src.dtype)
    u = np.empty(32, src.dtype)
    for w0 in range(0, src.size, 32):
        for l in range(32):
            t[l] = src[w0 + l]
        for k in range(5):
            d = 1 << k
            for l in range(32):
                u[l] = t[l] + t[l ^ d]
            for l in range(32):
                t[l] = u[l]
        for l in range(32):
            dst[w0 + l] = t[l]


@numba.njit(nogil=True)
def plain_seqsum(src, dst):
    """Per group of 32: a left-to-right sum, stored in all 32 (other rounding)."""
    for w0 in range(0, src.size, 32):
        s = src[w0]
        for l in range(w0 + 1, w0 + 32):
            s += src[l]
        for l in range(w0, w0 + 32):
            dst[l] = s


_LANES = np.arange(32)


def numpy_fancy(x2):
    """ops.py's formulation: v = v + v[:, lanes ^ d]."""
    v = x2
    for d in (1, 2, 4, 8, 16):
        v = v + v[:, _LANES ^ d]
    return v


def numpy_views(x2):
    """The same butterfly, the partner lanes through a reshaped, flipped view."""
    v = x2
    for d in (1, 2, 4, 8, 16):
        v = v + v.reshape(-1, 2, d)[:, ::-1, :].reshape(-1, 32)
    return v


def numpy_sum(x2):
    """x2.sum(axis=1) broadcast to the 32 lanes (NumPy's pairwise sum: other rounding)."""
    out = np.empty_like(x2)
    out[...] = x2.sum(axis=1, keepdims=True)
    return out


def reference(sample2):
    """ops.py's reference for both kernels on a (waves, 32) sample (the same bits)."""
    act = np.ones(sample2.shape, bool)
    red = np.asarray(ops.get("Wave.reduceSum").reference(sample2, active=act))
    v = sample2
    shx = ops.get("Wave.shuffleXor")
    for k in range(5):
        v = v + np.asarray(shx.reference(v, 1 << k, active=act))
    if not np.array_equal(red.view(np.uint32), v.view(np.uint32)):
        raise AssertionError("ops.py: reduceSum and 5 x shuffleXor references differ")
    return red.ravel()


def main(argv=None):
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    rows = Rows("bench_wave_cpu", args)
    busy_note(rows, "this run")
    n = 1 << 24
    rep = 3 if args.quick else 10
    threads0 = numba.get_num_threads()
    numba.set_num_threads(1)
    rows.header(
        f"Wave.reduceSum and 5 x Wave.shuffleXor, {n} float32 (2^24), launch [n/{TPB}, {TPB}], 1 core, best of {rep}"
    )
    rng = np.random.default_rng(6)
    x = rng.standard_normal(n, dtype=np.float32)
    x2 = x.reshape(-1, 32)
    y = np.empty_like(x)
    want = reference(x2[: SAMPLE // 32])
    rows.note(
        f"results checked on the first {SAMPLE} elements against ops.py's reference "
        f"(bit for bit unless 'other rounding')"
    )

    def check(name, got, exact=True):
        got = np.asarray(got).ravel()[:SAMPLE]
        if exact:
            if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
                bad = int(np.count_nonzero(got.view(np.uint32) != want.view(np.uint32)))
                raise AssertionError(f"{name}: {bad} of {SAMPLE} elements differ from ops.py's reference")
            return "bit-identical to ops.py's reference"
        return f"other rounding: max |diff| {np.abs(got - want).max():.2g} vs the reference"

    times = {}

    def measure(id_, metric, fn, result, exact=True, detail=""):
        """Check *fn*'s result (``result()`` after one call), then time it."""
        try:
            fn()
            note = check(metric, result(), exact)
            t = best_of(fn, rep)[0]
        except Exception as e:  # noqa: BLE001 - reported as a row
            rows.fail(f"t_{id_}", metric, e)
            return None
        times[id_] = t
        bw = f"{2 * x.nbytes / t / 1e9:.1f} GB/s (read+write)"
        rows.add(f"t_{id_}", metric, t, "s", detail="; ".join(d for d in (bw, note, detail) if d))
        return t

    def kernel(k):
        launch = k[n // TPB, TPB]
        return lambda: launch(x, y)

    res = {}

    def keep(key, f):
        def run():
            res[key] = f(x2)

        return run

    measure("nq_reduce", "numquad Wave.reduceSum kernel", kernel(nq_reduce), lambda: y)
    measure("nq_shuffles", "numquad 5 x shuffleXor(v, 1 << k), for-loop", kernel(nq_shuffles), lambda: y)
    measure(
        "nq_shuffles_literal",
        "numquad 5 x shuffleXor, literal masks 1..16",
        kernel(nq_shuffles_literal),
        lambda: y,
        detail="the same steps written out: each one shufflevector",
    )
    measure("plain", "plain numba butterfly on a local copy per 32", lambda: plain_butterfly(x, y), lambda: y)
    measure(
        "plain_seq",
        "plain numba sequential sum per 32",
        lambda: plain_seqsum(x, y),
        lambda: y,
        exact=False,
        detail="31 adds per 32 lanes instead of 160",
    )
    measure(
        "numpy_fancy", "NumPy butterfly v + v[:, lanes ^ d] (ops.py)", keep("fancy", numpy_fancy), lambda: res["fancy"]
    )
    measure(
        "numpy_views",
        "NumPy butterfly through reshaped flipped views",
        keep("views", numpy_views),
        lambda: res["views"],
    )
    measure(
        "numpy_sum", "NumPy x2.sum(axis=1) into all 32 lanes", keep("sum", numpy_sum), lambda: res["sum"], exact=False
    )

    def ratio(id_, metric, base, nq, bar=None, detail=""):
        if base in times and nq in times:
            rows.add(id_, metric, times[base] / times[nq], "x", bar=bar, detail=detail)
        else:
            missing = nq if nq not in times else base
            rows.fail(id_, metric, f"not measured: {missing}", bar=bar)

    numpy_best = min(("numpy_fancy", "numpy_views"), key=lambda k: times.get(k, float("inf")))
    for nq, what in (("nq_reduce", "reduceSum"), ("nq_shuffles", "5 x shuffleXor loop")):
        ratio(f"ratio_plain_{nq[3:]}", f"{what}: numquad / plain numba butterfly (speed)", "plain", nq, bar=">= 0.8")
        ratio(
            f"ratio_numpy_{nq[3:]}",
            f"{what}: numquad / NumPy butterfly (fastest)",
            numpy_best,
            nq,
            detail=f"fastest NumPy formulation: {numpy_best}",
        )
        ratio(f"ratio_numpy_sum_{nq[3:]}", f"{what}: numquad / NumPy x2.sum(axis=1)", "numpy_sum", nq)
    ratio(
        "ratio_plain_shuffles_literal",
        "5 x shuffleXor literal masks: numquad / plain numba",
        "plain",
        "nq_shuffles_literal",
    )
    ratio(
        "ratio_loop_literal",
        "5 x shuffleXor: literal masks / for-loop 1 << k (speed)",
        "nq_shuffles",
        "nq_shuffles_literal",
    )
    numba.set_num_threads(threads0)
    rows.summary()
    return rows


if __name__ == "__main__":
    main()
