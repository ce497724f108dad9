"""The disk cache: a second process's first launch against the first process's.

    python benchmarks/bench_cache.py [--repeat N] [--json PATH]

Issue 14's bar: with ``cache=True`` a second process's first launch takes at most
0.15x the first process's (the first compiles and writes the machine code; the
second loads it). Each process is fresh (``python -c``), its imports are not
timed, and both share one new ``NUMQUAD_CACHE_DIR``. Kernels:

- small: a 12-line kernel with a loop, a ``Wave.prefixSum`` and a ``Wave.reduceMax``;
- large: benchmarks/large_kernels/random_159.py (159 lines, about 1,700 lines of
  wave code), given ``cache=True``.

Beside them, the same measure for a plain ``@numba.njit(cache=True)`` function
doing the small kernel's arithmetic (Numba's own cache, what a user compares with).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

_SMALL = """
import numpy as np
from numquad import xpu, Wave

@xpu.jit(cache=True)
def kern(x, out, n):
    i = xpu.grid(1)
    acc = x[i]
    for k in range(n):
        acc = acc * 0.5 + k
    s = Wave.prefixSum(acc)
    m = Wave.reduceMax(s)
    if i < out.size:
        out[i] = s - m
"""

_NJIT = """
import numpy as np
import numba

@numba.njit(cache=True)
def kern(x, out, n):
    for i in range(out.size):
        acc = x[i]
        for k in range(n):
            acc = acc * 0.5 + k
        out[i] = acc
"""

_CHILD = r"""
import importlib.util, sys, time
import numpy as np
spec = importlib.util.spec_from_file_location(sys.argv[2], sys.argv[1])
m = importlib.util.module_from_spec(spec)
sys.modules[sys.argv[2]] = m  # importable by name: Numba's cache rebuilds a module's globals from it
sys.path.insert(0, __import__("os").path.dirname(sys.argv[1]))
spec.loader.exec_module(m)
kind = sys.argv[3]
if kind == "large":
    from numquad import xpu
    k = xpu.jit(cache=True)(m.kern.py_func)
    args = (np.zeros((256, 64), np.int64), np.zeros((256, 64)), np.zeros((256, 64), np.int64),
            np.zeros((256, 64)), 100)
    t = time.perf_counter()
    k[2, 64](*args)
elif kind == "small":
    x = np.arange(256.0); out = np.zeros(256)
    t = time.perf_counter()
    m.kern[2, 128](x, out, 3)
else:
    x = np.arange(256.0); out = np.zeros(256)
    t = time.perf_counter()
    m.kern(x, out, 3)
print(time.perf_counter() - t)
"""


def _first_launch(path, modname, kind, cache_dir):
    env = dict(os.environ, NUMQUAD_CACHE_DIR=cache_dir, NUMBA_CACHE_DIR=cache_dir)
    r = subprocess.run(
        [sys.executable, "-c", _CHILD, path, modname, kind], capture_output=True, text=True, timeout=1800, env=env
    )
    if r.returncode != 0:
        raise RuntimeError(f"{kind}: the child failed:\n{r.stderr[-2000:]}")
    return float(r.stdout.strip().splitlines()[-1])


def measure(kind, repeat):
    """(first process's first launch, second process's) for *kind*: the medians of
    *repeat* pairs, each pair in a new cache directory."""
    firsts, seconds = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="nq-bench-cache-") as d:
            if kind == "large":
                path, mod = os.path.join(HERE, "large_kernels", "random_159.py"), "random_159"
            else:
                # the source file lives in the cache's directory: a new file each pair,
                # as a user's script that is run twice
                path, mod = os.path.join(d, f"bench_cache_{kind}.py"), f"bench_cache_{kind}"
                with open(path, "w") as f:
                    f.write(_NJIT if kind == "njit" else _SMALL)
            firsts.append(_first_launch(path, mod, kind, os.path.join(d, "cache")))
            seconds.append(_first_launch(path, mod, kind, os.path.join(d, "cache")))
    return statistics.median(firsts), statistics.median(seconds)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3, help="pairs of processes per kernel (default 3)")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the rows as JSON")
    args = p.parse_args(argv)
    print(f"bench_cache: {sys.executable}, {os.cpu_count()} cores; medians of {args.repeat} pairs of processes")
    print(f"  {'kernel':<28} {'1st process s':>14} {'2nd process s':>14} {'ratio':>7}  bar <= 0.15x")
    rows = {}
    for kind, label in (
        ("small", "small kernel (numquad)"),
        ("large", "random_159 (numquad)"),
        ("njit", "@numba.njit(cache=True)"),
    ):
        first, second = measure(kind, args.repeat)
        r = second / first
        rows[kind] = {"first_s": first, "second_s": second, "ratio": r}
        verdict = "" if kind == "njit" else ("PASS" if r <= 0.15 else "FAIL")
        print(f"  {label:<28} {first:>14.3f} {second:>14.3f} {r:>6.2f}x  {verdict}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
