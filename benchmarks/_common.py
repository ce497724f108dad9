"""Shared helpers for the numquad benchmark scripts (not a test module).

Every script measures its rows in one run, prints a short table and can write
the rows as JSON (``--json PATH``) for ``run_all.py``. A row is a dict::

    {"script": "bench_cpu", "id": "a.ratio_plain", "metric": "...",
     "value": 0.93, "unit": "x", "bar": ">= 0.8", "ok": True,
     "detail": "free text: sizes, N, raw times", "error": None}

``ok`` is True/False for a row with a bar, None for an informational row; a
row whose measurement raised has ``value`` None, ``ok`` False (when it has a
bar) and the error text in ``error`` ("not available: ...").
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

__all__ = [
    "run_sections",
    "parser",
    "best_of",
    "Rows",
    "machine_info",
    "run_python",
    "fmt_time",
    "one_line",
    "cpu_busy",
    "busy_note",
]

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# benchmark the numquad of this checkout, not whichever one is installed
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def parser(description):
    """The common command line: ``--quick`` and ``--json PATH``."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="fewer repetitions / smaller sizes (a smoke run)")
    p.add_argument("--json", metavar="PATH", help="also write the rows as JSON to PATH")
    return p


def best_of(fn, repeat, warmup=1):
    """Run *fn* ``warmup`` times, then *repeat* times; returns (best, median) seconds."""
    for _ in range(warmup):
        fn()
    times = []
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    finally:
        if gc_was:
            gc.enable()
    return min(times), statistics.median(times)


def fmt_time(s):
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def one_line(exc, limit=300):
    """An exception (or text) as one readable line: ANSI colours dropped, and for
    a Numba typing error the line that says what went wrong."""
    text = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
    text = _ANSI.sub("", text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    key = [
        ln
        for ln in lines
        if ln.startswith(("Unknown attribute", "No implementation", "Untyped global", "Cannot", "Invalid use"))
    ]
    text = lines[0] if lines else ""
    if key and key[0] not in text:
        text = f"{text} ... {key[0]}"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check(value, bar):
    if bar is None or value is None:
        return None if bar is None else False
    op, thr = bar.split()
    thr = float(thr)
    return value >= thr if op == ">=" else value <= thr


class Rows:
    """Collects the rows of one script, prints them, writes JSON."""

    def __init__(self, script, args):
        self.script = script
        self.args = args
        self.rows = []
        self.notes = []
        self.busy = []  # other processes' share of the cores, sampled (busy_note)
        self.t0 = time.perf_counter()

    def add(self, id, metric, value, unit="", bar=None, detail="", error=None):
        """One row; *bar* is ``">= 0.8"`` / ``"<= 3"`` or None (informational)."""
        row = {
            "script": self.script,
            "id": id,
            "metric": metric,
            "value": None if value is None else float(value),
            "unit": unit,
            "bar": bar,
            "ok": _check(value, bar),
            "detail": detail,
            "error": error,
        }
        self.rows.append(row)
        self._print_row(row)
        return row

    def fail(self, id, metric, exc, bar=None, unit=""):
        """A row whose measurement raised: printed as 'not available: <error>'."""
        text = one_line(exc)
        return self.add(id, metric, None, unit=unit, bar=bar, error=f"not available: {text}")

    def note(self, text):
        self.notes.append(text)
        print(f"  note: {text}", flush=True)

    def header(self, title):
        print(f"\n== {title}", flush=True)

    @staticmethod
    def _value_text(row):
        if row["error"]:
            return row["error"]
        v = row["value"]
        u = row["unit"]
        if u == "s":
            return fmt_time(v)
        if u == "" and float(v).is_integer():
            s = f"{int(v)}"
        elif abs(v) >= 1e5:
            s = f"{v:.3g}"
        elif abs(v) >= 100:
            s = f"{v:.0f}"
        elif abs(v) >= 10:
            s = f"{v:.1f}"
        else:
            s = f"{v:.2f}"
        return f"{s} {u}".rstrip()

    @staticmethod
    def _status(row):
        if row["bar"] is None:
            return ""
        return "PASS" if row["ok"] else "FAIL"

    def _print_row(self, row):
        val = self._value_text(row)
        bar = f"bar {row['bar']}" if row["bar"] else ""
        print(f"  {row['metric']:<58} {val:>16}  {bar:<10} {self._status(row)}", flush=True)
        if row["detail"]:
            print(f"  {'':<58}   {row['detail']}", flush=True)

    def summary(self):
        """Print the rows that have a bar, and write JSON if asked."""
        barred = [r for r in self.rows if r["bar"] is not None]
        if barred:
            print(f"\n== {self.script}: bars", flush=True)
            for r in barred:
                print(f"  {r['metric']:<58} {self._value_text(r):>16}  bar {r['bar']:<7} {self._status(r)}")
        print(f"\n({self.script}: {time.perf_counter() - self.t0:.1f} s wall)", flush=True)
        if self.args.json:
            out = {
                "script": self.script,
                "quick": bool(self.args.quick),
                "machine": machine_info(),
                "rows": self.rows,
                "notes": self.notes,
                "busy": self.busy,
                "wall_s": time.perf_counter() - self.t0,
            }
            with open(self.args.json, "w") as f:
                json.dump(out, f, indent=1)


def _cpu_times():
    with open("/proc/stat") as f:
        parts = f.readline().split()[1:]
    vals = [int(v) for v in parts]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)  # idle + iowait
    return sum(vals), idle


def cpu_busy(interval=0.5):
    """Fraction of all cores busy during *interval* seconds (None off Linux).

    Called while this process sleeps, it measures what other processes use:
    timings, and above all core scaling, are unreliable when it is high."""
    try:
        t0, i0 = _cpu_times()
        time.sleep(interval)
        t1, i1 = _cpu_times()
    except (OSError, ValueError, IndexError):
        return None
    return 1.0 - (i1 - i0) / max(1, t1 - t0)


def busy_note(rows, where):
    """Add a note with the other processes' CPU use; warn when it is above 15%."""
    b = cpu_busy()
    if b is None:
        return None
    msg = f"other processes used {100 * b:.0f}% of the cores just before {where}"
    if b > 0.15:
        msg += " -- WARNING: the machine is not idle, timings (scaling above all) are unreliable"
    rows.note(msg)
    rows.busy.append(round(b, 3))
    return b


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return [x for x in ("avx2", "fma", "avx512f") if x in flags]
    except OSError:
        pass
    return []


def machine_info():
    import llvmlite
    import numba
    import numpy

    info = {
        "cpu": _cpu_model(),
        "cpu_flags": " ".join(_cpu_flags()),
        "cores": os.cpu_count(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numba": numba.__version__,
        "numpy": numpy.__version__,
        "llvmlite": llvmlite.__version__,
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    }
    try:
        from importlib.metadata import version

        info["numba_cuda"] = version("numba-cuda")
    except Exception:  # noqa: BLE001 - optional package
        info["numba_cuda"] = None
    try:
        import numquad

        info["numquad"] = numquad.__version__
        info["numquad_path"] = os.path.dirname(numquad.__file__)
        rev = subprocess.run(
            ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        )
        info["git"] = rev.stdout.strip() or None
        if info["git"]:
            dirty = subprocess.run(
                ["git", "-C", ROOT, "status", "--porcelain", "numquad"], capture_output=True, text=True, timeout=10
            )
            if dirty.stdout.strip():
                info["git"] += " + uncommitted changes in numquad/"
    except Exception:  # noqa: BLE001
        pass
    return info


def run_python(code, env=None, timeout=300):
    """Run *code* in a fresh ``python -c`` process (cwd: the repo root; the repo
    root and benchmarks/ on PYTHONPATH).

    Returns the JSON object the code printed on its last stdout line; raises
    RuntimeError with the tail of stderr if the process failed.
    """
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join([ROOT, HERE, full_env.get("PYTHONPATH", "")])
    if env:
        full_env.update(env)
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=full_env, cwd=ROOT, timeout=timeout
    )
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    if p.returncode != 0 or not lines:
        tail = (p.stderr or p.stdout).strip().splitlines()[-5:]
        raise RuntimeError(f"subprocess failed (rc={p.returncode}): " + " | ".join(tail))
    return json.loads(lines[-1])


def run_sections(name, sections, argv, default, sample_before=None):
    """The ``main`` of a sectioned script: parse ``--only``, run each section with
    a busy-cores note first (unless the section samples itself), keep going past a
    failing section, restore the thread count, print the summary; the Rows."""
    import numba

    p = parser(sys.modules["__main__"].__doc__.splitlines()[0] if sys.modules["__main__"].__doc__ else name)
    p.add_argument("--only", default=default, help=f"sections to run, e.g. --only {default[:2]}")
    args = p.parse_args(argv)
    rows = Rows(name, args)
    threads0 = numba.get_num_threads()
    print(f"{name}: {os.cpu_count()} cores, NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}, quick={args.quick}")
    for s in args.only:
        if sample_before is None or s in sample_before:
            busy_note(rows, f"section ({s})")
        try:
            sections[s](rows, args.quick)
        except Exception as e:  # noqa: BLE001 - keep the other sections
            rows.fail(f"{s}.error", f"section ({s})", e)
        finally:
            numba.set_num_threads(threads0)
    rows.summary()
    return rows
