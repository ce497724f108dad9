"""``python -m numquad``: compile and check every op on every type and target.

For each op of the catalogue (numquad/ops.py) and each type it takes, this
compiles the op's check kernel, runs it on random inputs under four launch
shapes (full waves, blocks of 48, a guarded tail, a divergent branch), checks
every active lane against the NumPy reference bit for bit (and that inactive
lanes were not written), and measures throughput on a larger launch. It prints
one row per op, type and target and exits non-zero if any check fails.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import platform
import sys
import time

__all__ = ["main"]


def _cuda_ok():
    try:
        from numba import cuda
        return bool(cuda.is_available())
    except Exception:
        return False


def _progress(done, total, label, stream=sys.stderr):
    if stream.isatty():
        stream.write(f"\r[{done:3d}/{total}] {label:<60}")
        if done == total:
            stream.write("\n")
    elif done == total or done % max(1, total // 10) == 0:
        stream.write(f"[{done}/{total}] {label}\n")
    stream.flush()


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m numquad",
        description="Compile and run every numquad op on every type and target, check "
                    "each result against the NumPy reference and print a table.")
    p.add_argument("--target", choices=("cpu", "cuda", "all"), default="all",
                   help="targets to check; 'all' (default) is cpu plus cuda where a GPU is present")
    p.add_argument("--size", type=int, default=1 << 20,
                   help="lanes in the throughput launch (default 2**20)")
    p.add_argument("--ops", default="", help="comma-separated op names to check (default: all)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default: one per core)")
    args = p.parse_args(argv)
    if args.size < 1:
        p.error("--size must be >= 1")

    from numquad import ops, opcheck
    targets = ["cpu", "cuda"] if args.target == "all" else [args.target]
    if "cuda" in targets and not _cuda_ok():
        if args.target == "cuda":
            print("numquad: --target cuda, but numba.cuda finds no GPU", file=sys.stderr)
            return 2
        targets.remove("cuda")
    wanted = {s.strip() for s in args.ops.split(",") if s.strip()}
    unknown = wanted - set(ops.OPS)
    if unknown:
        p.error(f"unknown op(s): {', '.join(sorted(unknown))}; known: {', '.join(ops.OPS)}")
    tasks = []
    for target in targets:
        for q, op in ops.OPS.items():
            if wanted and q not in wanted:
                continue
            tasks.append((q, opcheck.sel_modes(op)[0], target, args.size))
    ntypes = sum(len(opcheck.dtypes_for(ops.get(t[0]))) for t in tasks)

    import numba
    import numpy
    print(f"numquad: checking {len(tasks)} ops x {ntypes} types on {', '.join(targets)} "
          f"({platform.machine()}, {os.cpu_count()} cores, "
          f"numba {numba.__version__}, numpy {numpy.__version__})", file=sys.stderr)
    t0 = time.perf_counter()
    results = []
    jobs = max(1, min(args.jobs, len(tasks)))
    if jobs == 1:
        for k, t in enumerate(tasks, 1):
            _progress(k - 1, len(tasks), f"compiling {t[0]} on {t[2]}")
            results.extend(opcheck.run_task(t))
        _progress(len(tasks), len(tasks), "done")
    else:
        ctx = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
            futs = {pool.submit(opcheck.run_task, t): t for t in tasks}
            for k, f in enumerate(concurrent.futures.as_completed(futs), 1):
                t = futs[f]
                results.extend(f.result())
                _progress(k, len(tasks), f"compiled and checked {t[0]} on {t[2]}")
    order = {(t[0], t[2]): i for i, t in enumerate(tasks)}
    results.sort(key=lambda r: order[(r[0], r[2])])

    print(f"{'op':<22} {'type':<8} {'target':<6} {'ok':<4} {'Glanes/s':>9}")
    failed = 0
    last = None
    for q, dt, target, ok, detail, rate, _ in results:
        shown = f"{rate / 1e9:9.3f}" if (q, target) != last else f"{'':>9}"
        last = (q, target)
        print(f"{q:<22} {dt:<8} {target:<6} {'ok' if ok else 'FAIL':<4} {shown}")
        if not ok:
            failed += 1
            print(f"    {detail}")
    print("(Glanes/s: one launch of --size lanes applying the op to all its types at once, "
          "lanes counted once per type)")
    wall = time.perf_counter() - t0
    print(f"\n{len(results) - failed} passed, {failed} failed  ({wall:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
