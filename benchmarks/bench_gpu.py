"""GPU performance contract of numquad (docs/architecture.md section 6), for an NVIDIA H200.

    python benchmarks/bench_gpu.py [--quick] [--json PATH] [--n-log2 26] [--sass-dir DIR]

(1) device-to-device copy bandwidth: a numba.cuda copy kernel and
    ``d_dst.copy_to_device(d_src)`` (cuMemcpyDtoD); bytes = read + write
(2) numquad's streaming quad kernel (``k.cuda[...]`` on device arrays), 2^26
    float32, as % of the best copy bandwidth (bar >= 85%), and vs a hand-written
    ``cuda.shfl_xor_sync`` quad swap; (2b) the same as a lane function called on a
    device array, with and without ``out=``, as % of cuMemcpyDtoD (bar >= 90%)
(3) Wave.prefixSum vs a hand-written numba.cuda ``shfl_up_sync`` log-step
    exclusive scan, int32 and float32 (bar: hand / numquad time >= 1.0)
(4) Wave.reduceSum vs a hand-written ``shfl_xor_sync`` butterfly, and a
    shuffle-heavy kernel (five Wave.shuffleXor steps) vs ``shfl_xor_sync``
(5) host-side launch overhead: numquad ``k.cuda[...]`` vs the numba.cuda kernel
(6) code: shfl.sync in the PTX and SHFL in the SASS (cuobjdump -sass or
    nvdisasm on a cubin linked from the PTX) of numquad's quad swap (float32,
    float64), prefix scans, reduction and shuffle kernels vs the hand-written
    ones, with registers and spill stores from
    nvJitLink's verbose log. Needs no GPU, so it also runs where timings are
    skipped.

Timing: CUDA events on the default stream. One run = one untimed launch (keeps
the GPU busy while the host enqueues), then ``inner`` launches between two
events; time per launch = elapsed / inner; the row is the median over ``rep``
runs (>= 20) after warm-up, with min..max in the detail. Timings are skipped
with a clear message when ``numba.cuda.is_available()`` is False.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import Rows, one_line, parser  # noqa: E402

from numba import cuda  # noqa: E402
from numba.core import types  # noqa: E402

from numquad import Quad, Wave, ops, xpu  # noqa: E402

TPB = 256
FULL = 0xFFFFFFFF


# ---------------------------------------------------------------------------
# numquad kernels
# ---------------------------------------------------------------------------


@xpu.jit
def nq_quad(src, dst):
    i = xpu.grid(1)
    v = src[i]
    dst[i] = v + Quad.swapHorizontal(v)


@xpu.jit
def lane_quad(v):
    return v + Quad.swapHorizontal(v)


@xpu.jit
def nq_prefix(src, dst):
    i = xpu.grid(1)
    dst[i] = Wave.prefixSum(src[i])


@xpu.jit
def nq_reduce(src, dst):
    i = xpu.grid(1)
    dst[i] = Wave.reduceSum(src[i])


@xpu.jit
def nq_shuffles(src, dst):
    i = xpu.grid(1)
    v = src[i]
    v = v + Wave.shuffleXor(v, 1)
    v = v + Wave.shuffleXor(v, 3)
    v = v + Wave.shuffleXor(v, 7)
    v = v + Wave.shuffleXor(v, 15)
    v = v + Wave.shuffleXor(v, 31)
    dst[i] = v


# ---------------------------------------------------------------------------
# Hand-written numba.cuda kernels (compiled lazily, at first use)
# ---------------------------------------------------------------------------


@cuda.jit
def hand_copy(src, dst):
    i = cuda.grid(1)
    dst[i] = src[i]


@cuda.jit
def hand_quad(src, dst):
    i = cuda.grid(1)
    v = src[i]
    dst[i] = v + cuda.shfl_xor_sync(FULL, v, 1)


def _hand_prefix(T):
    """Log-step (Kogge-Stone) inclusive scan with shfl_up_sync, shifted up one
    lane for the exclusive result: 6 shuffles. ``T(...)`` keeps int32 sums in
    int32 (Numba types int32 + int32 as int64, which would shuffle twice)."""

    def hand_prefix(src, dst):
        i = cuda.grid(1)
        lane = cuda.laneid
        x = src[i]
        y = cuda.shfl_up_sync(FULL, x, 1)
        if lane >= 1:
            x = T(x + y)
        y = cuda.shfl_up_sync(FULL, x, 2)
        if lane >= 2:
            x = T(x + y)
        y = cuda.shfl_up_sync(FULL, x, 4)
        if lane >= 4:
            x = T(x + y)
        y = cuda.shfl_up_sync(FULL, x, 8)
        if lane >= 8:
            x = T(x + y)
        y = cuda.shfl_up_sync(FULL, x, 16)
        if lane >= 16:
            x = T(x + y)
        e = cuda.shfl_up_sync(FULL, x, 1)
        if lane == 0:
            e = T(0)
        dst[i] = e

    return cuda.jit(hand_prefix)


hand_prefix_int32 = _hand_prefix(numba.int32)
hand_prefix_float32 = _hand_prefix(numba.float32)


@cuda.jit
def hand_reduce(src, dst):
    i = cuda.grid(1)
    x = src[i]
    x = x + cuda.shfl_xor_sync(FULL, x, 1)
    x = x + cuda.shfl_xor_sync(FULL, x, 2)
    x = x + cuda.shfl_xor_sync(FULL, x, 4)
    x = x + cuda.shfl_xor_sync(FULL, x, 8)
    x = x + cuda.shfl_xor_sync(FULL, x, 16)
    dst[i] = x


@cuda.jit
def hand_shuffles(src, dst):
    i = cuda.grid(1)
    v = src[i]
    v = v + cuda.shfl_xor_sync(FULL, v, 1)
    v = v + cuda.shfl_xor_sync(FULL, v, 3)
    v = v + cuda.shfl_xor_sync(FULL, v, 7)
    v = v + cuda.shfl_xor_sync(FULL, v, 15)
    v = v + cuda.shfl_xor_sync(FULL, v, 31)
    dst[i] = v


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------


def gpu_time(launch, rep, inner, warmup=3):
    """Median, min, max seconds per launch of *launch* (enqueues one kernel/copy)."""
    for _ in range(warmup):
        launch()
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    per = []
    for _ in range(rep):
        launch()  # GPU busy while the timed batch is enqueued
        start.record()
        for _ in range(inner):
            launch()
        end.record()
        end.synchronize()
        per.append(start.elapsed_time(end) * 1e-3 / inner)
    return statistics.median(per), min(per), max(per)


def _spread(t):
    med, lo, hi = t
    return f"median {med * 1e6:.1f} us (min {lo * 1e6:.1f}, max {hi * 1e6:.1f})"


def _check(name, got, want, exact=True):
    if exact:
        ok = np.array_equal(got, want)
    else:
        ok = np.allclose(got, want, rtol=1e-5, atol=1e-5)
    if not ok:
        bad = np.flatnonzero(got != want)[:3]
        raise AssertionError(f"{name}: wrong result at {bad.tolist()}: {got[bad].tolist()} != {want[bad].tolist()}")


def _reference(opname, x):
    """ops.py's NumPy reference on a full-wave array (checks use a 2^20 prefix)."""
    x2 = x.reshape(-1, 32)
    return np.asarray(ops.get(opname).reference(x2, active=np.ones(x2.shape, bool))).ravel()


def timings(rows, args):
    n = 1 << args.n_log2
    rep = 20 if args.quick else 30
    inner = 5 if args.quick else 10
    blocks = n // TPB
    dev = cuda.get_current_device()
    name = getattr(dev, "name", "?")
    name = name.decode() if isinstance(name, bytes) else name
    rows.note(f"device: {name}, cc {getattr(dev, 'compute_capability', '?')}")
    rows.header(
        f"GPU timings: n = 2^{args.n_log2} = {n}, [{blocks}, {TPB}] launches, "
        f"median of {rep} runs x {inner} launches (CUDA events)"
    )
    rng = np.random.default_rng(4)
    h_f = rng.standard_normal(n, dtype=np.float32)
    h_i = rng.integers(-1000, 1000, n, dtype=np.int32)
    d_f = cuda.to_device(h_f)
    d_i = cuda.to_device(h_i)
    d_of = cuda.device_array(n, np.float32)
    d_oi = cuda.device_array(n, np.int32)
    m = min(n, 1 << 20)  # prefix of the output that is checked
    bytes_rw = 2 * n * 4

    def bw(t):
        return bytes_rw / t[0] / 1e9

    results = {}

    def row(id_, metric, launch, check=None, bar=None):
        """Time one launch; returns the timing tuple or None (row 'not available')."""
        try:
            launch()
            cuda.synchronize()
            if check is not None:
                check()
            t = gpu_time(launch, rep, inner)
        except Exception as e:  # noqa: BLE001 - one failing row must not stop the others
            rows.fail(id_, metric, e)
            return None
        results[id_] = t
        rows.add(id_, metric, t[0], "s", detail=f"{bw(t):.0f} GB/s (read+write); {_spread(t)}")
        return t

    def ratio(id_, metric, num, den, bar=None, unit="x", scale=1.0):
        a, b = results.get(num), results.get(den)
        if a is None or b is None:
            rows.fail(id_, metric, "a timing above is not available", bar=bar, unit=unit)
        else:
            rows.add(id_, metric, scale * a[0] / b[0], unit, bar=bar)

    # (1) copy bandwidth
    rows.header("(1) device-to-device copy")
    row(
        "copy_kernel",
        "numba.cuda copy kernel dst[i] = src[i]",
        lambda: hand_copy[blocks, TPB](d_f, d_of),
        check=lambda: _check("copy kernel", d_of[:m].copy_to_host(), h_f[:m]),
    )
    row(
        "copy_d2d",
        "d_dst.copy_to_device(d_src) (cuMemcpyDtoD)",
        lambda: d_of.copy_to_device(d_f),
        check=lambda: _check("copy_to_device", d_of[:m].copy_to_host(), h_f[:m]),
    )
    best_copy = [k for k in ("copy_kernel", "copy_d2d") if k in results]
    if best_copy:
        results["copy"] = min((results[k] for k in best_copy), key=lambda t: t[0])
        rows.add("copy_bw", "best device-to-device copy bandwidth", bw(results["copy"]), "GB/s")

    # (2) streaming quad kernel
    rows.header("(2) streaming quad kernel dst[i] = v + swapHorizontal(v), float32")
    want_quad = h_f[:m] + h_f[:m].reshape(-1, 2)[:, ::-1].ravel()
    row(
        "nq_quad",
        "numquad quad_stream (k.cuda on device arrays)",
        lambda: nq_quad.cuda[blocks, TPB](d_f, d_of),
        check=lambda: _check("numquad quad", d_of[:m].copy_to_host(), want_quad),
    )
    row(
        "hand_quad",
        "hand-written shfl_xor_sync quad swap",
        lambda: hand_quad[blocks, TPB](d_f, d_of),
        check=lambda: _check("hand quad", d_of[:m].copy_to_host(), want_quad),
    )
    ratio(
        "quad_pct_copy",
        "numquad quad stream, % of copy bandwidth",
        "copy",
        "nq_quad",
        bar=">= 85",
        unit="%",
        scale=100.0,
    )
    ratio("quad_vs_hand", "quad swap: hand-written / numquad time", "hand_quad", "nq_quad")

    # (2b) the same work as a lane function on device arrays (numquad writes the kernel)
    rows.header("(2b) lane function on device arrays: lane_quad(d_x, out=d_out) and lane_quad(d_x)")
    row(
        "lane_out",
        "numquad lane_quad(d_x, out=d_out)",
        lambda: lane_quad(d_f, out=d_of),
        check=lambda: _check("lane call, out=", d_of[:m].copy_to_host(), want_quad),
    )
    row(
        "lane_alloc",
        "numquad lane_quad(d_x) (allocates its result)",
        lambda: lane_quad(d_f),
        check=lambda: _check("lane call", lane_quad(d_f)[:m].copy_to_host(), want_quad),
    )
    ratio(
        "lane_out_pct_d2d",
        "lane call with out=, % of cuMemcpyDtoD bandwidth",
        "copy_d2d",
        "lane_out",
        bar=">= 90",
        unit="%",
        scale=100.0,
    )
    ratio(
        "lane_alloc_pct_d2d",
        "lane call without out=, % of cuMemcpyDtoD bandwidth",
        "copy_d2d",
        "lane_alloc",
        unit="%",
        scale=100.0,
    )

    # (3) prefix scans
    rows.header("(3) Wave.prefixSum vs hand-written shfl_up_sync exclusive scan")
    for name, d_in, d_out, h_in, hand in (
        ("int32", d_i, d_oi, h_i, hand_prefix_int32),
        ("float32", d_f, d_of, h_f, hand_prefix_float32),
    ):
        want = _reference("Wave.prefixSum", h_in[:m])
        row(
            f"nq_prefix_{name}",
            f"numquad Wave.prefixSum {name}",
            lambda d_in=d_in, d_out=d_out: nq_prefix.cuda[blocks, TPB](d_in, d_out),
            check=lambda d_out=d_out, want=want, name=name: _check(
                f"numquad prefixSum {name}", d_out[:m].copy_to_host(), want
            ),
        )
        row(
            f"hand_prefix_{name}",
            f"hand-written shfl_up scan {name}",
            lambda d_in=d_in, d_out=d_out, hand=hand: hand[blocks, TPB](d_in, d_out),
            check=lambda d_out=d_out, want=want, name=name: _check(
                f"hand prefix {name}", d_out[:m].copy_to_host(), want
            ),
        )
        ratio(
            f"prefix_vs_hand_{name}",
            f"prefixSum {name}: hand-written / numquad time",
            f"hand_prefix_{name}",
            f"nq_prefix_{name}",
            bar=">= 1.0",
        )
        ratio(
            f"prefix_pct_copy_{name}",
            f"prefixSum {name}, % of copy bandwidth",
            "copy",
            f"nq_prefix_{name}",
            unit="%",
            scale=100.0,
        )

    # (4) reduction and a shuffle-heavy kernel
    rows.header("(4) Wave.reduceSum and five Wave.shuffleXor steps, float32")
    want_red = _reference("Wave.reduceSum", h_f[:m])
    row(
        "nq_reduce",
        "numquad Wave.reduceSum float32",
        lambda: nq_reduce.cuda[blocks, TPB](d_f, d_of),
        check=lambda: _check("numquad reduceSum", d_of[:m].copy_to_host(), want_red),
    )
    row(
        "hand_reduce",
        "hand-written shfl_xor_sync butterfly",
        lambda: hand_reduce[blocks, TPB](d_f, d_of),
        check=lambda: _check("hand reduce", d_of[:m].copy_to_host(), want_red),
    )
    ratio("reduce_vs_hand", "reduceSum: hand-written / numquad time", "hand_reduce", "nq_reduce")
    v = h_f[:m].reshape(-1, 32)
    lanes = np.arange(32)
    for mask in (1, 3, 7, 15, 31):
        v = v + v[:, lanes ^ mask]
    want_sh = v.ravel()
    row(
        "nq_shuffles",
        "numquad 5 x Wave.shuffleXor float32",
        lambda: nq_shuffles.cuda[blocks, TPB](d_f, d_of),
        check=lambda: _check("numquad shuffles", d_of[:m].copy_to_host(), want_sh),
    )
    row(
        "hand_shuffles",
        "hand-written 5 x shfl_xor_sync",
        lambda: hand_shuffles[blocks, TPB](d_f, d_of),
        check=lambda: _check("hand shuffles", d_of[:m].copy_to_host(), want_sh),
    )
    ratio("shuffles_vs_hand", "5 x shuffleXor: hand-written / numquad time", "hand_shuffles", "nq_shuffles")

    # (5) host-side launch overhead
    rows.header(
        "(5) host-side launch overhead (Python time per launch, no sync, 2^16 threads; "
        "best of 10 interleaved rounds of 100)"
    )
    small = 1 << 16
    ds, dd = d_f[:small], d_of[:small]
    launches = (
        ("launch_nq", "numquad nq_quad.cuda[g, b](...) per launch", lambda: nq_quad.cuda[small // TPB, TPB](ds, dd)),
        (
            "launch_nq_auto",
            "numquad nq_quad[g, b](...) (auto target) per launch",
            lambda: nq_quad[small // TPB, TPB](ds, dd),
        ),
        ("launch_hand", "numba.cuda hand_quad[g, b](...) per launch", lambda: hand_quad[small // TPB, TPB](ds, dd)),
    )
    # rounds interleaved (the host's speed drifts), best round of 100 launches each
    best = {}
    for _ in range(10):
        for id_, metric, launch in launches:
            if best.get(id_, 0.0) is None:
                continue
            try:
                for _ in range(10):
                    launch()
                cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(100):
                    launch()
                t = (time.perf_counter() - t0) / 100
                cuda.synchronize()
                best[id_] = min(best.get(id_, float("inf")), t)
            except Exception as e:  # noqa: BLE001
                rows.fail(id_, metric, e)
                best[id_] = None
    for id_, metric, _ in launches:
        if best.get(id_) is not None:
            results[id_] = (best[id_],)
            rows.add(id_, metric, best[id_], "s")
    ratio("launch_overhead", "launch overhead: numquad / numba.cuda", "launch_nq", "launch_hand")


# ---------------------------------------------------------------------------
# Code inspection (no GPU needed)
# ---------------------------------------------------------------------------


def _find_tool(name):
    path = shutil.which(name)
    if path:
        return path
    try:
        from cuda import pathfinder

        path = pathfinder.find_nvidia_binary_utility(name)
        if path:
            return path
    except Exception:  # noqa: BLE001 - optional
        pass
    for root in ("/usr/local/cuda/bin", "/usr/local/cuda-13.0/bin", "/usr/local/cuda-12/bin"):
        cand = os.path.join(root, name)
        if os.path.exists(cand):
            return cand
    return None


def _sass(cubin_path):
    """SASS text of a cubin via cuobjdump -sass or nvdisasm; (text, tool) or raises."""
    for tool, flags in (("cuobjdump", ["-sass"]), ("nvdisasm", [])):
        exe = _find_tool(tool)
        if exe:
            p = subprocess.run([exe, *flags, cubin_path], capture_output=True, text=True, timeout=60)
            if p.returncode == 0 and p.stdout.strip():
                return p.stdout, tool
    raise RuntimeError("neither cuobjdump nor nvdisasm found (CUDA toolkit binaries)")


def _link_cubin(ptx, cc):
    """Link PTX into a cubin with nvJitLink (cuda.core, as numba.cuda does); no GPU
    needed. Returns (cubin bytes, "N registers, M bytes spill stores" or "")."""
    try:
        try:
            from cuda.core import Linker, LinkerOptions, ObjectCode
        except ImportError:
            from cuda.core.experimental import Linker, LinkerOptions, ObjectCode
        linker = Linker(
            ObjectCode.from_ptx(ptx.encode()), options=LinkerOptions(arch=f"sm_{cc[0]}{cc[1]}", verbose=True)
        )
        code = linker.link("cubin").code
        log = linker.get_info_log() or ""
    except (ImportError, AttributeError, TypeError):
        from numba.cuda.cudadrv import driver

        linker = driver._Linker(cc=cc)
        linker.add_ptx(ptx.encode())
        code = linker.complete().code
        log = ""
    regs = re.findall(r"Used (\d+) registers", log)
    spill = re.findall(r"(\d+) bytes spill stores", log)
    stats = f"{regs[-1]} registers, {spill[-1]} bytes spill stores" if regs and spill else ""
    return bytes(code), stats


_SASS_INSN = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)")


def code_inspection(rows, args):
    cc = (9, 0)
    if cuda.is_available():
        try:
            cc = tuple(cuda.get_current_device().compute_capability)
        except Exception:  # noqa: BLE001
            pass
    rows.header(
        f"(6) shuffles in the generated code of the launches above (blocks of {TPB}), cc {cc[0]}.{cc[1]} "
        f"(PTX shfl.sync; SASS SHFL via a cubin linked from that PTX)"
    )
    f32 = (types.float32[::1], types.float32[::1])
    i32 = (types.int32[::1], types.int32[::1])
    f64 = (types.float64[::1], types.float64[::1])
    items = [
        ("quad", "numquad quad swap", lambda: nq_quad.inspect_ptx(f32, cc=cc, blockdim=TPB)),
        ("quad_hand", "hand-written quad swap", lambda: _ptx(hand_quad, f32, cc)),
        ("prefix_i32", "numquad prefixSum int32", lambda: nq_prefix.inspect_ptx(i32, cc=cc, blockdim=TPB)),
        ("prefix_i32_hand", "hand-written scan int32", lambda: _ptx(hand_prefix_int32, i32, cc)),
        ("prefix_f32", "numquad prefixSum float32", lambda: nq_prefix.inspect_ptx(f32, cc=cc, blockdim=TPB)),
        ("prefix_f32_hand", "hand-written scan float32", lambda: _ptx(hand_prefix_float32, f32, cc)),
        ("quad_f64", "numquad quad swap float64", lambda: nq_quad.inspect_ptx(f64, cc=cc, blockdim=TPB)),
        ("quad_f64_hand", "hand-written quad swap float64", lambda: _ptx(hand_quad, f64, cc)),
        ("reduce", "numquad reduceSum float32", lambda: nq_reduce.inspect_ptx(f32, cc=cc, blockdim=TPB)),
        ("reduce_hand", "hand-written butterfly float32", lambda: _ptx(hand_reduce, f32, cc)),
        ("shuffles", "numquad 5 x shuffleXor float32", lambda: nq_shuffles.inspect_ptx(f32, cc=cc, blockdim=TPB)),
        ("shuffles_hand", "hand-written 5 x shfl_xor float32", lambda: _ptx(hand_shuffles, f32, cc)),
    ]
    outdir = args.sass_dir or tempfile.mkdtemp(prefix="numquad-sass-")
    os.makedirs(outdir, exist_ok=True)
    for key, what, get_ptx in items:
        try:
            ptx = get_ptx()
        except Exception as e:  # noqa: BLE001
            rows.fail(f"ptx_shfl_{key}", f"{what}: shfl.sync in PTX", e)
            continue
        ptx_path = os.path.join(outdir, f"{key}.ptx")
        with open(ptx_path, "w") as f:
            f.write(ptx)
        n_shfl = len(re.findall(r"\bshfl\.sync\b", ptx))
        try:
            cubin, stats = _link_cubin(ptx, cc)
        except Exception as e:  # noqa: BLE001
            cubin, stats = None, f"link to cubin failed: {one_line(e)}"
        rows.add(f"ptx_shfl_{key}", f"{what}: shfl.sync in PTX", n_shfl, "", detail=stats)
        if cubin is None:
            rows.fail(f"sass_shfl_{key}", f"{what}: SHFL in SASS", stats)
            continue
        try:
            cubin_path = os.path.join(outdir, f"{key}.cubin")
            with open(cubin_path, "wb") as f:
                f.write(cubin)
            sass, tool = _sass(cubin_path)
        except Exception as e:  # noqa: BLE001
            rows.fail(f"sass_shfl_{key}", f"{what}: SHFL in SASS", e)
            continue
        with open(os.path.join(outdir, f"{key}.sass"), "w") as f:
            f.write(sass)
        insns = [m.group(2) for m in _SASS_INSN.finditer(sass)]
        n_shfl = sum(1 for op in insns if op.startswith("SHFL"))
        rows.add(
            f"sass_shfl_{key}",
            f"{what}: SHFL in SASS",
            n_shfl,
            "",
            detail=f"{len(insns)} SASS instructions ({tool}); {outdir}/{key}.sass",
        )


def _ptx(dispatcher, sig, cc):
    ptx, _ = cuda.compile_ptx(dispatcher.py_func, sig, cc=cc)
    return ptx


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--n-log2", type=int, default=26, help="elements = 2**N (default 26)")
    p.add_argument("--sass-dir", help="keep the PTX/cubin/SASS files here (default: a temp dir)")
    args = p.parse_args(argv)
    if args.n_log2 < 16:
        p.error("--n-log2 must be >= 16")
    rows = Rows("bench_gpu", args)
    if cuda.is_available():
        try:
            timings(rows, args)
        except Exception as e:  # noqa: BLE001
            rows.fail("timings", "GPU timings", e)
    else:
        msg = (
            "skipped: numba.cuda.is_available() is False (no CUDA GPU or driver here); "
            "run this script on the GPU machine. The code inspection below needs no GPU."
        )
        print(f"bench_gpu: GPU timings {msg}", flush=True)
        rows.note(f"GPU timings {msg}")
    try:
        code_inspection(rows, args)
    except Exception as e:  # noqa: BLE001
        rows.fail("code", "code inspection", one_line(e))
    rows.summary()
    return rows


if __name__ == "__main__":
    main()
