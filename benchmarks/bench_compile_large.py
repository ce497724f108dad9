"""Compile time of large kernels: numquad's CPU target with its bitset liveness
analysis (numquad/cpu/compiling.py) beside the same compile with Numba's own
set-based analysis, each first launch in a fresh process, one after the other.

    python benchmarks/bench_compile_large.py [--repeat N]

The kernels (benchmarks/large_kernels/) come from an independent random generator:
159 and 174 lines that generate about 1,700 and 2,500 lines of wave code. Numba
computes the live variables of every IR block several times a compile; with
thousands of blocks and variables that fixpoint dominated the compile.
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = ["random_159", "random_174"]

_CHILD = r"""
import importlib.util, sys, time
import numpy as np
from numquad.cpu import compiling
if sys.argv[2] == "numba":
    compiling._live_map_bitsets = compiling._NUMBA_LIVE_MAP   # Numba's analysis in numquad's compiles
spec = importlib.util.spec_from_file_location("k", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
xi = np.zeros((256, 64), np.int64); xf = np.zeros((256, 64)); out = np.zeros((256, 64), np.int64)
t = time.perf_counter()
m.kern[2, 64](xi, xf, out, np.zeros((256, 64)), 100)
print(time.perf_counter() - t)
"""


def _first_launch(path, analysis):
    r = subprocess.run([sys.executable, "-c", _CHILD, path, analysis], capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise SystemExit(r.stderr[-2000:])
    return float(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    print(f"{'kernel':<12} {'bitsets s':>10} {'Numba sets s':>13} {'ratio':>7}")
    for name in KERNELS:
        path = os.path.join(HERE, "large_kernels", name + ".py")
        fast = min(_first_launch(path, "bitsets") for _ in range(args.repeat))
        slow = min(_first_launch(path, "numba") for _ in range(args.repeat))
        print(f"{name:<12} {fast:>10.1f} {slow:>13.1f} {slow / fast:>6.2f}x", flush=True)
    print(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


if __name__ == "__main__":
    main()
