"""CPU performance contract of numquad (docs/architecture.md section 6), measured as ratios.

    python benchmarks/bench_cpu.py [--quick] [--json PATH] [--only abcde]

(a) streaming quad kernel vs a plain Numba loop and np.copyto bandwidth (1 core)
(b) Wave.prefixSum kernel vs NumPy's cumsum over a (-1, 32) view (1 core)
(c) 1 core vs all cores on a compute-bound kernel
(d) first-launch compile time vs plain @njit / @njit(parallel=True) (fresh processes)
(e) numquad's CPU target vs numba's CUDA simulator (threads/s), and the
    simulator on a kernel with cuda.shfl_sync

Timings are best-of-N after one warm-up call, all in this one run; N and
sizes are printed with each section. This is a script, not a test.
"""

from __future__ import annotations

import math
import os
import sys

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import best_of, busy_note, one_line, run_python, run_sections  # noqa: E402

try:  # numba-cuda: only its spellings, in section (e); (a)-(d) run without it
    from numba import cuda  # noqa: E402
except ImportError:
    cuda = None

from numquad import Quad, Wave, ops, xpu  # noqa: E402

TPB = 256  # threads per block for every launch here


# ---------------------------------------------------------------------------
# Kernels (module level: xpu.jit reads their source)
# ---------------------------------------------------------------------------


@xpu.jit
def quad_stream(src, dst):
    i = xpu.grid(1)
    v = src[i]
    dst[i] = v + Quad.swapHorizontal(v)


@xpu.jit
def quad_stream_checked(src, dst):
    i = xpu.grid(1)
    if i < src.size:
        v = src[i]
        dst[i] = v + Quad.swapHorizontal(v)


@numba.njit(nogil=True)
def plain_stream(src, dst):
    for i in range(src.size):
        dst[i] = src[i] + src[i ^ 1]


@xpu.jit
def wave_prefix(src, dst):
    i = xpu.grid(1)
    dst[i] = Wave.prefixSum(src[i])


@numba.njit(nogil=True)
def plain_wave_prefix(src, dst):
    """Sequential exclusive scan per 32 elements (no cross-lane ops)."""
    for w0 in range(0, src.size, 32):
        acc = src[w0] - src[w0]
        for i in range(w0, w0 + 32):
            dst[i] = acc
            acc += src[i]


@xpu.jit
def compute_bound(src, dst, a, b):
    i = xpu.grid(1)
    v = src[i]
    for _ in range(200):
        v = math.sin(v) * a + b
    dst[i] = v + Quad.swapHorizontal(v)


@numba.njit(nogil=True, parallel=True)
def plain_compute_bound(src, dst, a, b):
    for i in numba.prange(src.size // 2):
        j = 2 * i
        u = src[j]
        for _ in range(200):  # one chain after the other, as numquad's lanes
            u = math.sin(u) * a + b
        v = src[j + 1]
        for _ in range(200):
            v = math.sin(v) * a + b
        dst[j] = u + v
        dst[j + 1] = v + u


@xpu.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)  # a numba.cuda kernel, only the decorator changed
    if i < x.size:
        out[i] = a * x[i] + y[i]


@xpu.jit
def shfl_kernel(src, dst):
    i = cuda.grid(1)
    dst[i] = cuda.shfl_sync(0xFFFFFFFF, src[i], (cuda.laneid + 1) % 32)


# ---------------------------------------------------------------------------


def _launch(k, n):
    return k[n // TPB, TPB]


def section_a(rows, quick):
    n = 1 << 24
    rep = 5 if quick else 15
    rows.header(f"(a) streaming quad kernel, {n} float32 (2^24), 1 core, best of {rep}")
    numba.set_num_threads(1)
    rng = np.random.default_rng(0)
    src = rng.random(n, dtype=np.float32)
    dst = np.empty_like(src)
    ref = src + src.reshape(-1, 2)[:, ::-1].ravel()
    nbytes = 2 * n * 4  # read src + write dst

    def t_of(fn, name):
        dst.fill(0)
        fn()
        if name and not np.array_equal(dst, ref):
            raise AssertionError(f"{name}: wrong result")
        return best_of(fn, rep)[0]

    launch = _launch(quad_stream, n)
    launch_c = _launch(quad_stream_checked, n)
    t_nq = t_of(lambda: launch(src, dst), "numquad")
    t_nqc = t_of(lambda: launch_c(src, dst), "numquad checked")
    t_plain = t_of(lambda: plain_stream(src, dst), "plain")
    t_copy = t_of(lambda: np.copyto(dst, src), None)
    for id_, name, t in (
        ("a.t_numquad", "numquad quad_stream (the README example)", t_nq),
        ("a.t_numquad_checked", "numquad quad_stream with `if i < n`", t_nqc),
        ("a.t_plain", "plain numba loop src[i] + src[i ^ 1]", t_plain),
        ("a.t_copyto", "np.copyto(dst, src)", t_copy),
    ):
        rows.add(id_, name, t, "s", detail=f"{nbytes / t / 1e9:.1f} GB/s (read+write)")
    rows.add("a.ratio_plain", "quad stream: numquad / plain numba (speed)", t_plain / t_nq, "x", bar=">= 0.8")
    rows.add("a.ratio_copyto", "quad stream: numquad / np.copyto bandwidth", t_copy / t_nq, "x", bar=">= 0.5")
    rows.add("a.ratio_plain_checked", "quad stream with bounds check / plain numba", t_plain / t_nqc, "x")


def section_b(rows, quick):
    n = 1 << 24
    rep = 5 if quick else 10
    rows.header(f"(b) Wave.prefixSum kernel, {n} elements (2^24), 1 core, best of {rep}")
    numba.set_num_threads(1)
    rng = np.random.default_rng(1)
    op = ops.get("Wave.prefixSum")
    for dt in (np.int32, np.float32):
        name = np.dtype(dt).name
        if dt is np.int32:
            x = rng.integers(-1000, 1000, n, dtype=np.int32)
        else:
            x = rng.standard_normal(n, dtype=np.float32)
        y = np.empty_like(x)
        x2 = x.reshape(-1, 32)
        launch = _launch(wave_prefix, n)
        launch(x, y)
        ref = np.asarray(op.reference(x2, active=np.ones(x2.shape, bool))).ravel()
        if not np.array_equal(y, ref):
            raise AssertionError(f"Wave.prefixSum {name}: differs from ops.py's reference")
        t_nq = best_of(lambda: launch(x, y), rep)[0]

        def numpy_design():  # the cumsum formulation (int32 sums in int64)
            return np.cumsum(x2, axis=1) - x2

        def numpy_samedtype():  # the same, accumulating in the input dtype
            return np.cumsum(x2, axis=1, dtype=x.dtype) - x2

        npy = numpy_design()
        if dt is np.int32:
            assert np.array_equal(npy.ravel(), y)
            note = "exact match"
        else:
            err = np.abs(npy.ravel() - y).max()
            note = (
                f"NumPy sums left to right, numquad log-step: max |diff| {err:.2g} "
                f"(numquad matches ops.py's reference bit for bit)"
            )
        t_np = best_of(numpy_design, rep)[0]
        t_np2 = best_of(numpy_samedtype, rep)[0]
        t_pl = best_of(lambda: plain_wave_prefix(x, y), rep)[0]
        rows.add(
            f"b.t_numquad_{name}",
            f"numquad Wave.prefixSum {name}",
            t_nq,
            "s",
            detail=f"{2 * x.nbytes / t_nq / 1e9:.1f} GB/s (read+write)",
        )
        rows.add(f"b.t_numpy_{name}", f"NumPy cumsum(x2, axis=1) - x2, {name}", t_np, "s", detail=note)
        rows.add(f"b.t_numpy_dtype_{name}", f"NumPy cumsum(x2, axis=1, dtype={name}) - x2", t_np2, "s")
        rows.add(f"b.t_plain_{name}", f"plain numba sequential scan per 32, {name}", t_pl, "s")
        rows.add(f"b.ratio_{name}", f"prefixSum {name}: numquad / NumPy (cumsum formula)", t_np / t_nq, "x", bar=">= 3")
        rows.add(f"b.ratio_dtype_{name}", f"prefixSum {name}: numquad / NumPy (cumsum dtype={name})", t_np2 / t_nq, "x")
        rows.add(f"b.ratio_plain_{name}", f"prefixSum {name}: numquad / plain numba scan", t_pl / t_nq, "x")


def section_c(rows, quick):
    n = 1 << 17
    rep = 3 if quick else 7
    cores = os.cpu_count()
    allt = numba.config.NUMBA_NUM_THREADS
    rows.header(
        f"(c) compute-bound kernel (200 x sin+fma per element, then a quad swap), "
        f"{n} float32, 1 vs {allt} threads, best of {rep}, interleaved"
    )
    rng = np.random.default_rng(2)
    src = rng.random(n, dtype=np.float32)
    dst = np.empty_like(src)
    dst2 = np.empty_like(src)
    a, b = np.float32(0.9), np.float32(0.1)
    launch = _launch(compute_bound, n)
    busy = busy_note(rows, "the scaling runs")
    numba.set_num_threads(1)
    launch(src, dst, a, b)
    plain_compute_bound(src, dst2, a, b)
    err = np.abs(dst - dst2).max()
    times = {("nq", 1): [], ("nq", allt): [], ("pl", 1): [], ("pl", allt): []}
    for _ in range(rep):
        for nt in (1, allt):
            numba.set_num_threads(nt)
            for key, fn in (
                ("nq", lambda: launch(src, dst, a, b)),
                ("pl", lambda: plain_compute_bound(src, dst2, a, b)),
            ):
                times[(key, nt)].append(best_of(fn, 1, warmup=0)[0])
    numba.set_num_threads(allt)
    best = {k: min(v) for k, v in times.items()}
    rows.add("c.t_numquad_1", "numquad compute_bound, 1 thread", best[("nq", 1)], "s")
    rows.add("c.t_numquad_all", f"numquad compute_bound, {allt} threads", best[("nq", allt)], "s")
    rows.add(
        "c.t_plain_1",
        "plain numba prange equivalent, 1 thread",
        best[("pl", 1)],
        "s",
        detail=f"max |numquad - plain| = {err:.2g}",
    )
    rows.add("c.t_plain_all", f"plain numba prange equivalent, {allt} threads", best[("pl", allt)], "s")
    bar = ">= 1.7" if allt == 2 else None
    rows.add(
        "c.scaling",
        f"numquad: 1 thread / {allt} threads ({cores} cores)",
        best[("nq", 1)] / best[("nq", allt)],
        "x",
        bar=bar,
        detail="" if busy is None else f"cores busy with other work before: {100 * busy:.0f}%",
    )
    rows.add(
        "c.scaling_plain",
        f"plain numba prange: 1 / {allt} threads (machine ceiling)",
        best[("pl", 1)] / best[("pl", allt)],
        "x",
    )
    rows.add(
        "c.ratio_plain_1",
        "compute-bound, 1 thread: numquad / plain numba (speed)",
        best[("pl", 1)] / best[("nq", 1)],
        "x",
    )
    if bar is None:
        rows.note(f"the 1.7x bar is for 2 cores; this machine runs {allt} threads")


_COMPILE_CODE = r"""
import json, time
import numpy as np, numba, numquad
import _compile_kernels as K
src = np.arange(4096, dtype=np.float32)
dst = np.empty_like(src)
if {warm}:
    numba.njit(lambda a: a.sum())(src)     # pay Numba's one-time start-up first
f = getattr(K, {name!r})
t0 = time.perf_counter()
if {name!r}.startswith("nq_"):
    f[16, 256](src, dst)
else:
    f(src, dst)
print(json.dumps({{"t": time.perf_counter() - t0}}))
"""


def section_d(rows, quick):
    rep = 1 if quick else 3
    kernels = ["typical"] if quick else ["quad", "typical"]
    rows.header(
        f"(d) first-launch compile time, fresh process per measurement, best of {rep} (4096 float32, launch [16, 256])"
    )
    rows.note(
        "time from the first call to its return, after `import numpy, numba, numquad` "
        "and the kernel module; numquad's lazily imported compiler modules count"
    )

    def measure(name, warm=False):
        code = _COMPILE_CODE.format(name=name, warm=warm)
        return min(run_python(code)["t"] for _ in range(rep))

    for k in kernels:
        t_nq = measure(f"nq_{k}")
        t_nj = measure(f"nj_{k}")
        t_np = measure(f"np_{k}")
        rows.add(f"d.t_numquad_{k}", f"{k}: numquad first launch (cold process)", t_nq, "s")
        rows.add(f"d.t_njit_{k}", f"{k}: plain @njit first call (cold process)", t_nj, "s")
        rows.add(f"d.t_prange_{k}", f"{k}: @njit(parallel=True) prange first call", t_np, "s")
        rows.add(f"d.ratio_njit_{k}", f"{k}: compile numquad / @njit", t_nq / t_nj, "x", bar="<= 3")
        rows.add(f"d.ratio_prange_{k}", f"{k}: compile numquad / @njit(parallel=True)", t_nq / t_np, "x")
    if not quick:
        k = "typical"
        t_nq = measure(f"nq_{k}", warm=True)
        t_nj = measure(f"nj_{k}", warm=True)
        rows.add(f"d.t_numquad_{k}_warm", f"{k}: numquad first launch, Numba warmed up", t_nq, "s")
        rows.add(f"d.t_njit_{k}_warm", f"{k}: @njit first call, Numba warmed up", t_nj, "s")
        rows.add(f"d.ratio_njit_{k}_warm", f"{k}: compile numquad / @njit, Numba warmed up", t_nq / t_nj, "x")


_SIM_CODE = r"""
import json, time, traceback
import numpy as np
from numba import cuda

@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]

@cuda.jit
def shfl_kernel(src, dst):
    i = cuda.grid(1)
    dst[i] = cuda.shfl_sync(0xFFFFFFFF, src[i], (cuda.laneid + 1) % 32)

n = {n}
x = np.ones(n, np.float32); y = np.arange(n, dtype=np.float32); out = np.zeros(n, np.float32)
a = np.float32(2)
saxpy[1, 32](a, x[:32], y[:32], out[:32])          # warm-up
times = []
for _ in range({rep}):
    t0 = time.perf_counter()
    saxpy[n // 256, 256](a, x, y, out)
    times.append(time.perf_counter() - t0)
ok = bool(np.array_equal(out, a * x + y))
err = None
try:
    s = np.arange(64, dtype=np.float32); d = np.zeros_like(s)
    shfl_kernel[1, 64](s, d)
    err = "no error: shfl_sync ran, result " + ("ok" if d[0] == 1 else "wrong")
except BaseException as e:
    err = type(e).__name__ + ": " + str(e).strip().splitlines()[-1][:200]
print(json.dumps({{"t": min(times), "ok": ok, "shfl_error": err}}))
"""


def section_e(rows, quick):
    n_sim = 1 << (10 if quick else 12)
    rep_sim = 1 if quick else 2
    n = 1 << 22
    rep = 5 if quick else 10
    rows.header(
        f"(e) numquad CPU vs numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): saxpy "
        f"with cuda.grid(1); simulator {n_sim} threads best of {rep_sim}, "
        f"numquad {n} threads 1 core best of {rep}"
    )
    if cuda is None:
        raise RuntimeError("numba-cuda is not installed (numba.cuda spellings, CUDA simulator)")
    numba.set_num_threads(1)
    x = np.ones(n, np.float32)
    y = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    a = np.float32(2)
    launch = _launch(saxpy, n)
    launch(a, x, y, out)
    assert np.array_equal(out, a * x + y)
    t_nq = best_of(lambda: launch(a, x, y, out), rep)[0]
    rows.add("e.numquad_tps", "numquad saxpy, threads/s (1 core)", n / t_nq, "thr/s")
    try:
        r = run_python(_SIM_CODE.format(n=n_sim, rep=rep_sim), env={"NUMBA_ENABLE_CUDASIM": "1"})
    except Exception as e:  # noqa: BLE001 - reported as a row
        rows.fail("e.sim_tps", "CUDA simulator saxpy, threads/s", e)
        rows.fail("e.ratio", "saxpy: numquad / CUDA simulator (threads/s)", e)
        return
    sim_tps = n_sim / r["t"]
    rows.add(
        "e.sim_tps",
        "CUDA simulator saxpy, threads/s",
        sim_tps,
        "thr/s",
        detail="result ok" if r["ok"] else "result WRONG",
    )
    rows.add("e.ratio", "saxpy: numquad / CUDA simulator (threads/s)", n / t_nq / sim_tps, "x")
    # numquad runs the same shfl_sync kernel on the CPU (docs/architecture.md section 1)
    s = np.arange(64, dtype=np.float32)
    d = np.zeros_like(s)
    try:
        shfl_kernel[1, 64](s, d)
        want = s.reshape(-1, 32)[:, (np.arange(32) + 1) % 32].ravel()
        res = "ok" if np.array_equal(d, want) else "WRONG result"
    except Exception as e:  # noqa: BLE001
        res = one_line(e)
    rows.add(
        "e.sim_shfl",
        "CUDA simulator runs a cuda.shfl_sync kernel (1 = yes)",
        0.0 if not r["shfl_error"].startswith("no error") else 1.0,
        "",
        detail=r["shfl_error"],
    )
    rows.add(
        "e.numquad_shfl",
        "numquad CPU runs the same cuda.shfl_sync kernel (1 = yes)",
        1.0 if res == "ok" else 0.0,
        "",
        detail=res,
    )


SECTIONS = {"a": section_a, "b": section_b, "c": section_c, "d": section_d, "e": section_e}


def main(argv=None):
    # (c) samples right before its scaling runs
    return run_sections("bench_cpu", SECTIONS, argv, "abcde", sample_before="abde")


if __name__ == "__main__":
    main()
