"""Block-level numba.cuda kernels on numquad's CPU target, as ratios.

    python benchmarks/bench_block.py [--quick] [--json PATH] [--only abc]

Two sum reductions written exactly as numba.cuda code (``from numba import
cuda``), only the decorator changed to ``@xpu.jit``:

- ``shared_sum``: numba.cuda's documented shared-memory reduction (the
  ``array_sum`` example of its docs: interleaved tree ``tid % (2 * s) == 0``,
  ``cuda.syncthreads()`` after every step) over a grid of blocks: its
  ``if tid < size`` guard dropped (n is a multiple of the block size), the
  block's sum added with one ``cuda.atomic.add``;
- ``warp_sum``: a ``cuda.shfl_down_sync`` warp reduction (``offset = 16;
  while offset > 0: ... offset //= 2``), ``cuda.atomic.add`` from lane 0.

(a) both on 2^24 int64 (exact sums), all threads and 1 thread, vs a plain
    ``@njit(parallel=True)`` prange sum (bar: >= 0.5x its speed), the serial
    ``@njit`` sum and ``np.sum``
(b) the same reductions in other spellings (informational): the sequential
    addressing tree (``tid < s``), shfl_down with literal offsets, and
    ``Wave.reduceSum``, to show what the time of (a) is made of
(c) numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1, a subprocess) on the same
    kernel source: threads/s of ``shared_sum``, and what it does with
    ``warp_sum`` (it has no shfl_down_sync)

Timings are best-of-N after one warm-up call, all in this one run; N and sizes
are printed with each section. This is a script, not a test.
"""

from __future__ import annotations

import inspect
import os
import sys

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import best_of, one_line, run_python, run_sections  # noqa: E402

try:  # numba-cuda: the kernels below spell numba.cuda's API
    from numba import cuda  # noqa: E402
except ImportError:
    cuda = None

from numquad import Wave, xpu  # noqa: E402

TPB = 256  # threads per block for every launch here


# ---------------------------------------------------------------------------
# numba.cuda kernels (module level: xpu.jit reads their source, and section
# (c) sends the same source to the simulator with @cuda.jit)
# ---------------------------------------------------------------------------


@xpu.jit
def shared_sum(data, out):
    tid = cuda.threadIdx.x
    i = cuda.grid(1)

    # Declare an array in shared memory
    shr = cuda.shared.array(TPB, np.int64)
    shr[tid] = data[i]

    # Ensure writes to shared memory are visible
    # to all threads before reducing
    cuda.syncthreads()

    s = 1
    while s < cuda.blockDim.x:
        if tid % (2 * s) == 0:
            # Stride by `s` and add
            shr[tid] += shr[tid + s]
        s *= 2
        cuda.syncthreads()

    # After the loop, the zeroth element contains the block's sum
    if tid == 0:
        cuda.atomic.add(out, 0, shr[0])


@xpu.jit
def warp_sum(data, out):
    i = cuda.grid(1)
    v = data[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


# -- (b) other spellings of the same reductions ------------------------------


@xpu.jit
def shared_sum_seq(data, out):
    tid = cuda.threadIdx.x
    shr = cuda.shared.array(TPB, np.int64)
    shr[tid] = data[cuda.grid(1)]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            shr[tid] += shr[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, shr[0])


@xpu.jit
def warp_sum_literal(data, out):
    i = cuda.grid(1)
    v = data[i]
    v += cuda.shfl_down_sync(0xFFFFFFFF, v, 16)
    v += cuda.shfl_down_sync(0xFFFFFFFF, v, 8)
    v += cuda.shfl_down_sync(0xFFFFFFFF, v, 4)
    v += cuda.shfl_down_sync(0xFFFFFFFF, v, 2)
    v += cuda.shfl_down_sync(0xFFFFFFFF, v, 1)
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


@xpu.jit
def wave_sum(data, out):
    i = xpu.grid(1)
    v = Wave.reduceSum(data[i])
    if xpu.laneid == 0:
        xpu.atomic.add(out, 0, v)


# -- plain Numba ---------------------------------------------------------------


@numba.njit(nogil=True, parallel=True)
def prange_sum(data):
    s = 0
    for i in numba.prange(data.size):
        s += data[i]
    return s


@numba.njit(nogil=True)
def serial_sum(data):
    s = 0
    for i in range(data.size):
        s += data[i]
    return s


# ---------------------------------------------------------------------------


def _data(n):
    rng = np.random.default_rng(4)
    return rng.integers(-1000, 1000, n, dtype=np.int64)


def _nq_runner(kernel, data, out, want):
    """A callable that launches *kernel* once; the first launch is checked."""
    launch = kernel[data.size // TPB, TPB]

    def run():
        out[0] = 0
        launch(data, out)
        return out[0]

    got = run()
    if got != want:
        raise AssertionError(f"{kernel.__name__}: sum {got}, want {want}")
    return run


def section_a(rows, quick):
    n = 1 << 24
    rep = 3 if quick else 7
    allt = numba.config.NUMBA_NUM_THREADS
    rows.header(
        f"(a) sum of {n} int64 (2^24, values in [-1000, 1000): exact), launch "
        f"[n/{TPB}, {TPB}], {allt} threads and 1 thread, best of {rep}"
    )
    if cuda is None:
        raise RuntimeError("numba-cuda is not installed (the kernels spell numba.cuda's API)")
    data = _data(n)
    want = int(data.sum())
    out = np.zeros(1, np.int64)
    for f in (prange_sum, serial_sum):
        if f(data) != want:
            raise AssertionError(f"{f.__name__}: wrong sum")
    rows.note(f"every sum is checked exactly against np.sum ({want}) before it is timed")
    kernels = {
        "sh": ("shared", "shared-memory block sum", "shared_sum (numba.cuda docs style)", shared_sum),
        "wp": ("warp", "shfl_down warp sum", "warp_sum (shfl_down_sync loop)", warp_sum),
    }
    runs, errors = {}, {}
    numba.set_num_threads(allt)
    for key, (_, _, _, kernel) in kernels.items():
        try:
            runs[key] = _nq_runner(kernel, data, out, want)
        except Exception as e:  # noqa: BLE001 - reported as rows
            errors[key] = e
    t = {}
    for nt in (allt, 1):
        numba.set_num_threads(nt)
        for key, run in runs.items():
            t[(key, nt)] = best_of(run, rep)[0]
        t[("pr", nt)] = best_of(lambda: prange_sum(data), rep)[0]
    numba.set_num_threads(1)
    t_serial = best_of(lambda: serial_sum(data), rep)[0]
    t_np = best_of(lambda: data.sum(), rep)[0]
    numba.set_num_threads(allt)
    gbs = lambda s: f"{data.nbytes / s / 1e9:.1f} GB/s read"  # noqa: E731
    for nt in (allt, 1):
        th = f"{nt} thread" + ("s" if nt > 1 else "")
        for key, (name, _, kname, _) in kernels.items():
            if key in runs:
                rows.add(f"a.t_{name}_{nt}", f"numquad {kname}, {th}", t[(key, nt)], "s", detail=gbs(t[(key, nt)]))
        rows.add(
            f"a.t_prange_{nt}",
            f"plain @njit(parallel=True) prange sum, {th}",
            t[("pr", nt)],
            "s",
            detail=gbs(t[("pr", nt)]),
        )
    rows.add("a.t_serial", "plain @njit serial sum", t_serial, "s", detail=gbs(t_serial))
    rows.add("a.t_numpy", "np.sum (int64)", t_np, "s", detail=gbs(t_np))
    for key, (name, what, kname, _) in kernels.items():
        metric = f"{what}: numquad / prange ({allt} threads, speed)"
        if key in errors:
            rows.fail(f"a.ratio_{name}", metric, errors[key], bar=">= 0.5")
            continue
        rows.add(f"a.ratio_{name}", metric, t[("pr", allt)] / t[(key, allt)], "x", bar=">= 0.5")
        rows.add(f"a.ratio_{name}_1", f"{what}: numquad / prange (1 thread, speed)", t[("pr", 1)] / t[(key, 1)], "x")
        rows.add(
            f"a.ratio_{name}_serial", f"{what}: numquad ({allt} threads) / serial @njit", t_serial / t[(key, allt)], "x"
        )
        rows.add(f"a.scaling_{name}", f"{what}: numquad 1 thread / {allt} threads", t[(key, 1)] / t[(key, allt)], "x")
    rows.add(
        "a.scaling_prange",
        f"plain prange sum: 1 thread / {allt} threads (memory-bound)",
        t[("pr", 1)] / t[("pr", allt)],
        "x",
    )


def section_b(rows, quick):
    n = 1 << 24
    rep = 3 if quick else 7
    allt = numba.config.NUMBA_NUM_THREADS
    rows.header(f"(b) the same sums in other spellings, {n} int64, {allt} threads, best of {rep} (informational)")
    if cuda is None:
        raise RuntimeError("numba-cuda is not installed (the kernels spell numba.cuda's API)")
    data = _data(n)
    want = int(data.sum())
    out = np.zeros(1, np.int64)
    numba.set_num_threads(allt)
    t_pr = best_of(lambda: prange_sum(data), rep)[0]
    for id_, metric, kernel, why in (
        (
            "shared_seq",
            "shared tree, sequential addressing (`if tid < s`)",
            shared_sum_seq,
            "the CUDA samples' reduction #3; fewer taken branches, same number of lane steps",
        ),
        (
            "warp_literal",
            "shfl_down_sync with literal offsets 16, 8, 4, 2, 1",
            warp_sum_literal,
            "each shuffle one shufflevector; a runtime offset is a per-lane gather",
        ),
        (
            "wave_sum",
            "Wave.reduceSum, xpu.atomic.add from lane 0",
            wave_sum,
            "numquad's own spelling: one whole-wave butterfly",
        ),
    ):
        try:
            run = _nq_runner(kernel, data, out, want)
            t = best_of(run, rep)[0]
        except Exception as e:  # noqa: BLE001 - reported as a row
            rows.fail(f"b.t_{id_}", f"numquad {metric}", e)
            continue
        rows.add(f"b.t_{id_}", f"numquad {metric}", t, "s", detail=why)
        rows.add(f"b.ratio_{id_}", f"{id_}: numquad / prange ({allt} threads, speed)", t_pr / t, "x")


_SIM_CODE = r"""
import json, time
import numpy as np
from numba import cuda
TPB = {tpb}
{shared_src}
{warp_src}
n = {n}
data = np.random.default_rng(4).integers(-1000, 1000, n, dtype=np.int64)
out = np.zeros(1, np.int64)
shared_sum[1, TPB](data[:TPB], out)             # warm-up (one block)
out[0] = 0
times = []
for _ in range({rep}):
    out[0] = 0
    t0 = time.perf_counter()
    shared_sum[n // TPB, TPB](data, out)
    times.append(time.perf_counter() - t0)
ok = int(out[0]) == int(data.sum())
try:
    out[0] = 0
    warp_sum[1, 64](data[:64], out)
    err = "no error: shfl_down_sync ran, result " + (
        "ok" if int(out[0]) == int(data[:64].sum()) else "wrong")
except BaseException as e:
    err = type(e).__name__ + ": " + str(e).strip().splitlines()[-1][:200]
print(json.dumps({{"t": min(times), "ok": ok, "warp_error": err}}))
"""


def _cuda_source(kernel):
    src = inspect.getsource(kernel.py_func)
    return src.replace("@xpu.jit", "@cuda.jit", 1)


def section_c(rows, quick):
    n_sim = 1 << (10 if quick else 12)
    rep_sim = 1 if quick else 2
    rep = 3 if quick else 7
    n = 1 << 24
    rows.header(
        f"(c) numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1) on the same kernel source: "
        f"simulator {n_sim} threads best of {rep_sim}, numquad {n} threads 1 thread "
        f"best of {rep}"
    )
    if cuda is None:
        raise RuntimeError("numba-cuda is not installed (the kernels spell numba.cuda's API)")
    numba.set_num_threads(1)
    data = _data(n)
    out = np.zeros(1, np.int64)
    run = _nq_runner(shared_sum, data, out, int(data.sum()))
    t_nq = best_of(run, rep)[0]
    rows.add("c.numquad_tps", "numquad shared_sum, threads/s (1 thread)", n / t_nq, "thr/s")
    code = _SIM_CODE.format(
        tpb=TPB, n=n_sim, rep=rep_sim, shared_src=_cuda_source(shared_sum), warp_src=_cuda_source(warp_sum)
    )
    try:
        r = run_python(code, env={"NUMBA_ENABLE_CUDASIM": "1"})
    except Exception as e:  # noqa: BLE001 - reported as a row
        rows.fail("c.sim_tps", "CUDA simulator shared_sum, threads/s", e)
        rows.fail("c.ratio", "shared_sum: numquad (1 thread) / CUDA simulator (threads/s)", e)
        return
    sim_tps = n_sim / r["t"]
    rows.add(
        "c.sim_tps",
        "CUDA simulator shared_sum, threads/s",
        sim_tps,
        "thr/s",
        detail=("sum ok" if r["ok"] else "sum WRONG") + f"; {n_sim} threads in {r['t']:.2f} s",
    )
    rows.add("c.ratio", "shared_sum: numquad (1 thread) / CUDA simulator (threads/s)", n / t_nq / sim_tps, "x")
    rows.add(
        "c.sim_warp",
        "CUDA simulator runs warp_sum (shfl_down_sync) (1 = yes)",
        1.0 if r["warp_error"].startswith("no error") else 0.0,
        "",
        detail=r["warp_error"],
    )
    small = data[:64]
    o = np.zeros(1, np.int64)
    try:
        warp_sum[1, 64](small, o)
        res = "ok" if int(o[0]) == int(small.sum()) else "WRONG result"
    except Exception as e:  # noqa: BLE001
        res = one_line(e)
    rows.add(
        "c.numquad_warp", "numquad CPU runs the same warp_sum (1 = yes)", 1.0 if res == "ok" else 0.0, "", detail=res
    )


SECTIONS = {"a": section_a, "b": section_b, "c": section_c}


def main(argv=None):
    return run_sections("bench_block", SECTIONS, argv, "abc")


if __name__ == "__main__":
    main()
