"""``python -m numquad``: compile and check every op on its types, on every target.

For each op of the catalogue (numquad/ops.py) and each type it is checked with,
this compiles the op's check kernel (numquad/opcheck.py; one kernel per op and
target, applying the op to all those types), runs it on random inputs under
four launch shapes (full waves, blocks of 48, a guarded tail, a divergent
branch), checks every active lane against the NumPy reference bit for bit (and
that inactive lanes were not written), and measures throughput on a larger
launch. By default each op is checked on a representative set of its types
(:data:`REPRESENTATIVE`); ``--full`` checks every type it takes. It prints one
op x type matrix per target and exits 1 if any check fails.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import platform
import shutil
import statistics
import sys
import time

__all__ = ["main", "REPRESENTATIVE", "check_types"]

#: The types a default run checks, where an op takes them: one of each kind
#: (bool, signed, unsigned, float) plus the 64-bit widths of signed ints and floats.
REPRESENTATIVE = ("bool", "int32", "uint32", "int64", "float32", "float64")

_NO_OPERAND = "-"  # the type column of ops without an operand (queries)


def check_types(op, full=False):
    """The operand type names the main job checks *op* with: every type it takes
    under *full*, else those in :data:`REPRESENTATIVE`, plus the first type it
    takes of any kind (``np.dtype.kind``) that list leaves out. () for an op
    without an operand."""
    accepted = [d for d in op.accepted]
    if full:
        return tuple(d.name for d in accepted)
    picked = [d for d in accepted if d.name in REPRESENTATIVE]
    for d in accepted:
        if d.kind not in {p.kind for p in picked}:
            picked.append(d)
    return tuple(d.name for d in accepted if d in picked)


def _versions():
    from importlib import metadata

    def v(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    import numquad

    out = [("numquad", numquad.__version__)]
    out += [(d, v(d) or "not installed") for d in ("numba", "llvmlite", "numpy", "numba-cuda")]
    return out


def _version_line():
    (_, nq), *rest = _versions()
    return f"numquad {nq} ({', '.join(f'{d} {ver}' for d, ver in rest)}; Python {platform.python_version()})"


def _cuda_ok():
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


class _Progress:
    """A one-line progress bar with an estimate of the time left, on a TTY only.

    Each task has a weight (its expected share of the work); the estimate is the
    elapsed time scaled by the weight still to do over the weight done."""

    def __init__(self, weights, stream):
        self.on = hasattr(stream, "isatty") and stream.isatty()
        self.stream = stream
        self.total, self.wtotal = len(weights), float(sum(weights))
        self.done, self.wdone, self.tdone = 0, 0.0, 0.0
        self.t0 = time.perf_counter()

    def finished(self, weight):
        self.done += 1
        self.wdone += weight
        self.tdone = time.perf_counter() - self.t0

    def show(self, label=""):
        if not self.on:
            return
        el = time.perf_counter() - self.t0
        frac = self.wdone / self.wtotal if self.wtotal else 1.0
        bar = "#" * int(20 * frac)
        # the rate up to the last finished task, counting down between tasks
        left = self.tdone * (self.wtotal - self.wdone) / self.wdone - (el - self.tdone) if self.wdone else 0
        eta = f"~{max(0.0, left):.0f} s left" if self.wdone else "estimating"
        line = f"[{bar:<20}] {self.done}/{self.total} ops, {el:.0f} s, {eta}  {label}"
        width = shutil.get_terminal_size((80, 24)).columns - 1
        self.stream.write("\r" + line[:width] + "\033[K")
        self.stream.flush()

    def close(self):
        if self.on:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _abbr(name):
    """A column header: bool, i8..i64, u8..u64, f32, f64."""
    if name == _NO_OPERAND or name == "bool":
        return name
    import numpy as np

    d = np.dtype(name)
    return f"{d.kind}{8 * d.itemsize}" if d.kind in "iuf" else name


def _run(tasks, weights, jobs, progress):
    """Run the tasks; their result rows, in task order."""
    by_task = [None] * len(tasks)
    from numquad import opcheck

    if jobs == 1:
        for k, t in enumerate(tasks):
            progress.show(f"{t[0]} on {t[2]}")
            by_task[k] = opcheck.run_task(t)
            progress.finished(weights[k])
        progress.show()
    else:
        # the heaviest tasks first, so that no worker is left with a long one at the end
        order = sorted(range(len(tasks)), key=lambda k: -weights[k])
        ctx = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
            futs = {pool.submit(opcheck.run_task, tasks[k]): k for k in order}
            pending = set(futs)
            while pending:
                done, pending = concurrent.futures.wait(
                    pending, timeout=1.0 if progress.on else None, return_when=concurrent.futures.FIRST_COMPLETED
                )
                for f in done:
                    k = futs[f]
                    by_task[k] = f.result()
                    progress.finished(weights[k])
                    last = tasks[k]
                    progress.show(f"checked {last[0]} on {last[2]}")
                if not done:
                    progress.show()
    progress.close()
    return [r for rows in by_task for r in rows]


def _matrix(results, target, catalogue, out):
    """Print one target's op x type matrix with each op's throughput; the ops' rates."""
    rows = [r for r in results if r[2] == target]
    order = {d.name: i for i, d in enumerate(catalogue.VALUE_DTYPES)}
    types = sorted({r[1] for r in rows if r[1] != _NO_OPERAND}, key=lambda n: (order.get(n, 99), n))
    if any(r[1] == _NO_OPERAND for r in rows):
        types.append(_NO_OPERAND)
    heads = [_abbr(t) for t in types]
    widths = [max(4, len(h)) for h in heads]
    opw = max([len("op")] + [len(r[0]) for r in rows])
    print(f"{target:<{opw}} " + " ".join(f"{h:>{w}}" for h, w in zip(heads, widths)) + "  Glanes/s", file=out)
    cells = {(r[0], r[1]): r for r in rows}
    rates = []
    for q in dict.fromkeys(r[0] for r in rows):
        line = []
        for t, w in zip(types, widths):
            r = cells.get((q, t))
            line.append(f"{'.' if r is None else 'ok' if r[3] else 'FAIL':>{w}}")
        mine = [r for r in rows if r[0] == q]
        rate = mine[0][5] if all(r[3] for r in mine) else 0.0
        if rate:
            rates.append(rate)
        print(f"{q:<{opw}} " + " ".join(line) + (f"  {rate / 1e9:8.3f}" if rate else f"  {'-':>8}"), file=out)
    return rates


_EPILOG = f"""\
types: by default each op is checked on the types it takes among
  {", ".join(REPRESENTATIVE)}
(plus its first type of any kind that list lacks), so every op is checked
with every kind it takes: bool, signed and unsigned integers, floats. --full
checks every type it takes (bool, int8..int64, uint8..uint64, float32,
float64). Ops without an operand (Quad.laneId, ...) are in the '{_NO_OPERAND}' column.

output: per target, a matrix with one line per op and one column per type:
'ok' (bit for bit equal to the NumPy reference of numquad/ops.py under four
launch shapes, inactive lanes untouched), 'FAIL', or '.' (not taken / not run),
and the op's throughput in Glanes/s (one launch of --size lanes applying the op
to all its checked types, lanes counted once per type); then a summary line and
the detail of each failure. Exit status 0 if all pass, 1 on any failure, 2 on
a usage error. A progress bar goes to stderr when it is a terminal.

--json PATH writes one row per op x type x target: op, type, target, ok,
detail, lanes_per_s (the op's throughput), seconds (the op's compile and check).
"""


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m numquad",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compile and run every numquad op on representative types (--full: every "
        "type) and every target, check each result against the NumPy reference "
        "and print an op x type matrix.",
        epilog=_EPILOG,
    )
    p.add_argument(
        "--target",
        choices=("cpu", "cuda", "all"),
        default="all",
        help="targets to check; 'all' (default) is cpu plus cuda where a GPU is present",
    )
    p.add_argument(
        "--full", action="store_true", help="check every type each op takes (default: the representative types below)"
    )
    p.add_argument("--size", type=int, default=1 << 20, help="lanes in the throughput launch (default 2**20)")
    p.add_argument("--ops", default="", help="comma-separated op names to check (default: all)")
    p.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="worker processes (default: one per core); 1 runs in this process",
    )
    p.add_argument("--json", metavar="PATH", help="also write every result row to PATH as JSON")
    p.add_argument(
        "--version",
        action="store_true",
        help="print the versions of numquad, numba, llvmlite, numpy and numba-cuda and exit",
    )
    args = p.parse_args(argv)
    if args.version:
        print(_version_line())
        return 0
    if args.size < 1:
        p.error("--size must be >= 1")
    if args.jobs < 1:
        p.error("--jobs must be >= 1")

    from numquad import ops, opcheck

    targets = ["cpu", "cuda"] if args.target == "all" else [args.target]
    if "cuda" in targets and not _cuda_ok():
        if args.target == "cuda":
            print("numquad: --target cuda, but numba.cuda finds no GPU", file=sys.stderr)
            return 2
        targets.remove("cuda")
    # the catalogue is read at run time: a new row of ops.OPS is checked as it lands
    wanted = {s.strip() for s in args.ops.split(",") if s.strip()}
    unknown = wanted - set(ops.OPS)
    if unknown:
        import difflib

        hints = []
        for u in sorted(unknown):
            close = difflib.get_close_matches(u, list(ops.OPS), n=1, cutoff=0.6) or [
                q for q in ops.OPS if q.lower() == u.lower()
            ]
            hints.append(f"{u} (did you mean {close[0]}?)" if close else u)
        p.error(f"unknown op(s): {', '.join(hints)}; known: {', '.join(ops.OPS)}")
    tasks, weights = [], []
    for target in targets:
        for q, op in ops.OPS.items():
            if wanted and q not in wanted:
                continue
            names = check_types(op, args.full)
            tasks.append((q, opcheck.sel_modes(op)[0], target, args.size, names))
            # a kernel's compile has a fixed part and a part per type (numquad/opcheck.py's
            # kernel_for applies the op once per type)
            weights.append(8 + max(1, len(names)))
    ncells = sum(max(1, len(t[4])) for t in tasks)
    nfull = sum(max(1, len(check_types(ops.get(t[0]), True))) for t in tasks)

    import numba
    import numpy

    how = "every type" if args.full else f"representative types ({nfull} cells with --full)"
    print(
        f"numquad {_versions()[0][1]}: {len(tasks) // len(targets)} ops, {ncells} op x type "
        f"cells on {', '.join(targets)}, {how}; {platform.machine()}, {os.cpu_count()} cores, "
        f"numba {numba.__version__}, numpy {numpy.__version__}"
    )
    t0 = time.perf_counter()
    jobs = max(1, min(args.jobs, len(tasks)))
    results = _run(tasks, weights, jobs, _Progress(weights, sys.stderr))
    wall = time.perf_counter() - t0

    rates = {}
    for target in targets:
        print()
        rates[target] = _matrix(results, target, ops, sys.stdout)
    failed = [r for r in results if not r[3]]
    print(
        f"\n{len(results)} checked, {len(failed)} failed, {wall:.0f} s (--jobs {jobs}, "
        f"{'every type' if args.full else f'representative types; --full checks {nfull}'})"
    )
    for target, rs in rates.items():
        if rs:
            print(
                f"throughput on {target}: median {statistics.median(rs) / 1e9:.3f} Glanes/s "
                f"over {len(rs)} ops (min {min(rs) / 1e9:.3f}, max {max(rs) / 1e9:.3f}; "
                f"--size {args.size})"
            )
    if failed:
        print("\nfailures:")
        for q, dt, target, _, detail, _, _ in failed:
            print(f"  {q} {dt} on {target}: {detail}")
    if args.json:
        doc = {
            "numquad": _versions()[0][1],
            "targets": targets,
            "full": args.full,
            "size": args.size,
            "seconds": wall,
            "rows": [
                dict(op=q, type=dt, target=tg, ok=bool(ok), detail=detail, lanes_per_s=float(rate), seconds=float(secs))
                for q, dt, tg, ok, detail, rate, secs in results
            ],
        }
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
