"""The CPU target's math functions: libdevice's code (the GPU's bits) against the
C library's, and against what a user would write instead.

    python benchmarks/bench_math.py [--n-log2 22] [--repeat 7]

numquad/cpu/libdevice.py compiles NVIDIA's libdevice for the host, so that
``math.sin`` & co give the GPU's bits on the CPU. Each row times one kernel over
2**n elements (best of --repeat launches after one warm-up), side by side in one
run:

- numquad, libdevice: the CPU target as shipped;
- numquad, C library: the same kernel in a fresh process with libdevice turned off
  (Numba's CPU lowering, what the CPU target did before);
- plain Numba: ``@njit(parallel=True)`` with ``prange`` over the same expression.

Kernels: ``sin(x) + exp(0.1 x)`` in float64 (both libdevice functions exact) and
``sin(x) + log(|x| + 1)`` in float32 (both exact), x standard normal times 3.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap

_CHILD = textwrap.dedent(
    """
    import json, math, sys, time
    import numba, numpy as np
    from numquad import xpu

    mode, n_log2, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if mode == "clib":
        import numquad.cpu.libdevice as L
        L.exact_function = lambda name: False

    @xpu.jit
    def k64(out, x):
        i = xpu.grid(1)
        if i < x.size:
            out[i] = math.sin(x[i]) + math.exp(x[i] * 0.1)

    @xpu.jit
    def k32(out, x):
        i = xpu.grid(1)
        if i < x.size:
            out[i] = math.sin(x[i]) + math.log(abs(x[i]) + np.float32(1))

    @numba.njit(parallel=True)
    def p64(out, x):
        for i in numba.prange(x.size):
            out[i] = math.sin(x[i]) + math.exp(x[i] * 0.1)

    @numba.njit(parallel=True)
    def p32(out, x):
        for i in numba.prange(x.size):
            out[i] = math.sin(x[i]) + math.log(abs(x[i]) + np.float32(1))

    def best(fn):
        fn()
        ts = []
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        return min(ts) * 1e3

    res = {}
    for dt, k, p in ((np.float64, k64, p64), (np.float32, k32, p32)):
        x = (np.random.default_rng(1).standard_normal(1 << n_log2) * 3).astype(dt)
        out = np.empty_like(x)
        res[dt.__name__] = best(lambda: k[x.size // 256, 256](out, x))
        if mode == "libdevice":
            res[dt.__name__ + "_prange"] = best(lambda: p(out, x))
    print(json.dumps(res))
    """
)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-log2", type=int, default=22)
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args(argv)
    out = {}
    # a file: xpu.jit reads a kernel's source
    with tempfile.NamedTemporaryFile("w", suffix="_bench_math_child.py", delete=False) as f:
        f.write(_CHILD)
    for mode in ("libdevice", "clib"):
        r = subprocess.run(
            [sys.executable, f.name, mode, str(a.n_log2), str(a.repeat)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if r.returncode:
            sys.exit(r.stderr[-3000:])
        out[mode] = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"2**{a.n_log2} elements, best of {a.repeat} (ms)")
    print(f"{'kernel':<28}{'libdevice':>11}{'C library':>11}{'prange':>9}{'ld/clib':>9}{'ld/prange':>11}")
    for dt, what in (("float64", "sin(x) + exp(0.1x)"), ("float32", "sin(x) + log(|x| + 1)")):
        ld, cl, pr = out["libdevice"][dt], out["clib"][dt], out["libdevice"][dt + "_prange"]
        print(f"{what + ' ' + dt:<28}{ld:>11.2f}{cl:>11.2f}{pr:>9.2f}{cl / ld:>8.2f}x{pr / ld:>10.2f}x")


if __name__ == "__main__":
    main()
