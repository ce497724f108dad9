"""Run numquad's benchmark scripts and print one summary table.

    python benchmarks/run_all.py [--quick] [--json PATH] [--gpu] [--wait-idle S] [--summary-only]

Runs bench_cpu.py, bench_lanefn.py, bench_block.py, bench_wave_cpu.py,
bench_kernels.py and bench_launch.py (and bench_gpu.py with ``--gpu``), each in its own process, one after the other
(never in parallel: they time cores), collects their ``--json`` rows and
prints machine info and a table of every row with a bar (metric, value, bar,
PASS/FAIL) plus a few informational rows that put the bars in context.
``--json PATH`` writes everything collected.
Exit status: 0 when every script ran (whatever the bars say), 1 otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import HERE, ROOT, Rows, cpu_busy, machine_info, parser  # noqa: E402

CPU_SCRIPTS = [
    "bench_cpu.py",
    "bench_lanefn.py",
    "bench_block.py",
    "bench_wave_cpu.py",
    "bench_kernels.py",
    "bench_launch.py",
]
GPU_SCRIPTS = ["bench_gpu.py"]

#: Informational rows shown in the summary next to the bars (script, id).
CONTEXT = [
    ("bench_cpu", "a.ratio_plain_checked"),
    ("bench_cpu", "b.ratio_dtype_int32"),
    ("bench_cpu", "b.ratio_plain_int32"),
    ("bench_cpu", "c.scaling_plain"),
    ("bench_cpu", "c.ratio_plain_1"),
    ("bench_cpu", "d.ratio_prange_typical"),
    ("bench_cpu", "d.ratio_njit_typical_warm"),
    ("bench_cpu", "e.ratio"),
    ("bench_cpu", "e.sim_shfl"),
    ("bench_cpu", "e.numquad_shfl"),
    ("bench_lanefn", "lanefn_out_ratio"),
    ("bench_lanefn", "kernel_ratio"),
    ("bench_block", "a.ratio_shared_1"),
    ("bench_block", "a.ratio_warp_1"),
    ("bench_block", "a.scaling_shared"),
    ("bench_block", "a.scaling_prange"),
    ("bench_block", "b.ratio_shared_seq"),
    ("bench_block", "b.ratio_warp_literal"),
    ("bench_block", "b.ratio_wave_sum"),
    ("bench_block", "c.ratio"),
    ("bench_block", "c.sim_warp"),
    ("bench_wave_cpu", "ratio_numpy_reduce"),
    ("bench_wave_cpu", "ratio_numpy_shuffles"),
    ("bench_wave_cpu", "ratio_plain_shuffles_literal"),
    ("bench_wave_cpu", "ratio_loop_literal"),
    ("bench_launch", "njit"),
    ("bench_gpu", "copy_bw"),
    ("bench_gpu", "quad_vs_hand"),
    ("bench_gpu", "reduce_vs_hand"),
    ("bench_gpu", "shuffles_vs_hand"),
    ("bench_gpu", "launch_overhead"),
    ("bench_gpu", "ptx_shfl_quad"),
    ("bench_gpu", "sass_shfl_quad"),
    ("bench_gpu", "sass_shfl_quad_hand"),
    ("bench_gpu", "sass_shfl_prefix_i32"),
    ("bench_gpu", "sass_shfl_prefix_i32_hand"),
]


def wait_idle(limit_s, threshold=0.15):
    """Wait up to *limit_s* seconds for other processes to leave the cores idle."""
    t0 = time.perf_counter()
    while True:
        b = cpu_busy(1.0)
        if b is None or b <= threshold:
            return b
        if time.perf_counter() - t0 > limit_s:
            print(f"run_all: cores still {100 * b:.0f}% busy after {limit_s:.0f} s; running anyway", flush=True)
            return b
        time.sleep(2.0)


def run_script(name, quick, quiet):
    fd, path = tempfile.mkstemp(suffix=".json", prefix=name[:-3] + "-")
    os.close(fd)
    cmd = [sys.executable, os.path.join(HERE, name), "--json", path]
    if quick:
        cmd.append("--quick")
    print(f"\n######## {' '.join([os.path.basename(cmd[0])] + cmd[1:])}", flush=True)
    t0 = time.perf_counter()
    p = subprocess.run(
        cmd, cwd=ROOT, stdout=subprocess.PIPE if quiet else None, stderr=subprocess.STDOUT if quiet else None, text=True
    )
    wall = time.perf_counter() - t0
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        data = None
    finally:
        os.unlink(path)
    if p.returncode != 0 or data is None:
        tail = (p.stdout or "").strip().splitlines()[-5:] if quiet else []
        print(f"{name}: FAILED (exit {p.returncode})" + ("\n" + "\n".join(tail) if tail else ""))
        return None, wall
    return data, wall


def _value(row):
    return Rows._value_text(row)


def main(argv=None):
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--gpu", action="store_true", help="also run bench_gpu.py")
    p.add_argument(
        "--wait-idle",
        type=float,
        default=0,
        metavar="S",
        help="before each script, wait up to S seconds for the cores to be idle (on a shared machine)",
    )
    p.add_argument("--summary-only", action="store_true", help="hide the scripts' own output, print only the summary")
    args = p.parse_args(argv)
    scripts = CPU_SCRIPTS + (GPU_SCRIPTS if args.gpu else [])
    results = {}
    walls = {}
    ok = True
    for name in scripts:
        if args.wait_idle > 0:
            wait_idle(args.wait_idle)
        data, wall = run_script(name, args.quick, args.summary_only)
        walls[name] = wall
        if data is None:
            ok = False
        else:
            results[data["script"]] = data

    info = machine_info()
    print("\n" + "=" * 96)
    print("numquad benchmarks: summary" + (" (--quick)" if args.quick else ""))
    print(
        f"  machine : {info['cpu']} ({info['cpu_flags']}), {info['cores']} cores, "
        f"NUMBA_NUM_THREADS={info['numba_threads']}, {info['platform']}"
    )
    print(
        f"  versions: Python {info['python']}, numba {info['numba']}, numpy {info['numpy']}, "
        f"llvmlite {info['llvmlite']}, numba-cuda {info.get('numba_cuda')}, "
        f"numquad {info.get('numquad')} ({info.get('git')})"
    )
    print(f"  date    : {info['date']}")
    print("  wall    : " + ", ".join(f"{k} {v:.0f} s" for k, v in walls.items()))
    busy = {k: max(v.get("busy") or [0]) for k, v in results.items()}
    if busy:
        print(
            "  others  : other processes' share of the cores when sampled (max): "
            + ", ".join(f"{k} {100 * v:.0f}%" for k, v in busy.items())
            + ("  -- WARNING: not idle, figures unreliable" if max(busy.values()) > 0.15 else "")
        )
    print()
    print(f"  {'metric':<60} {'value':>14}  {'bar':<8} result")
    print(f"  {'-' * 60} {'-' * 14}  {'-' * 8} ------")
    n_pass = n_fail = 0
    for script in results.values():
        for r in script["rows"]:
            if r["bar"] is None:
                continue
            status = "PASS" if r["ok"] else "FAIL"
            n_pass += r["ok"] is True
            n_fail += r["ok"] is not True
            val = _value(r) if not r["error"] else "n/a"
            print(f"  {r['metric'][:60]:<60} {val:>14}  {r['bar']:<8} {status}")
            if r["error"]:
                print(f"  {'':<60}   {r['error'][:120]}")
    print()
    print("  context (no bar):")
    for script, id_ in CONTEXT:
        rows = results.get(script, {}).get("rows", [])
        for r in rows:
            if r["id"] == id_:
                val = _value(r) if not r["error"] else "n/a"
                print(f"  {r['metric'][:60]:<60} {val:>14}")
    for name in scripts:
        if name[:-3] not in results:
            print(f"  {name}: did not produce results")
    print(f"\n  {n_pass} bars pass, {n_fail} fail")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "quick": bool(args.quick), "walls": walls, "results": results}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
