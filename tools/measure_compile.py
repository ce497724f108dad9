"""Compile cost of the CPU target: memory kept per kernel, and compiles from threads.

    python tools/measure_compile.py memory [N]     # RSS growth per distinct kernel (default 200)
    python tools/measure_compile.py threads [N]    # N kernels compiled serially, then by N threads

memory: N distinct kernels (one module written to a temporary directory, so
they have source) are compiled one after another; after a warm-up of 20, the
RSS growth (VmRSS, after gc.collect() and malloc_trim) per kernel is printed,
next to the same for N trivial @numba.njit functions. Each mode starts with
fresh processes, so the two measurements do not share caches.

threads: N distinct kernels compiled one after another, then N other distinct
kernels compiled by N threads at once (one each); wall-clock and process CPU
times (the CPU time is the fairer figure on a shared machine). Numbers
from this script are recorded in docs/RELIABILITY.md; no test depends on them.
"""

import ctypes
import gc
import importlib
import os
import subprocess
import sys
import tempfile
import threading
import time

KERNEL = """
@xpu.jit
def k{n}(a, out):
    i = xpu.grid(1)
    if i < a.size:
        v = a[i] * {n}
        out[i] = v + Wave.prefixSum(v) + Quad.swapHorizontal(a[i])
"""

NJIT = """
@numba.njit
def k{n}(a, out):
    out[0] = a[0] * {n}
"""


def _module(kind, n, stem):
    d = tempfile.mkdtemp(prefix="nq_measure_")
    body = KERNEL if kind == "xpu" else NJIT
    src = "import numba\nfrom numquad import xpu, Wave, Quad\n" + "".join(body.format(n=k) for k in range(n))
    with open(os.path.join(d, f"{stem}.py"), "w") as f:
        f.write(src)
    sys.path.insert(0, d)
    return importlib.import_module(stem)


def _rss_kib():
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def _memory_child(kind, n):
    import numpy as np

    mod = _module(kind, n, f"nq_measure_mem_{kind}")
    a = np.ones(32, np.float64)
    out = np.zeros(32, np.float64)
    warm = 20
    for k in range(n):
        fn = getattr(mod, f"k{k}")
        if kind == "xpu":
            fn.cpu[1, 32](a, out)
        else:
            fn(a, out)
        if k == warm - 1:
            r0 = _rss_kib()
    r1 = _rss_kib()
    per = (r1 - r0) / (n - warm)
    print(
        f"{kind}: {n - warm} kernels after a warm-up of {warm}: RSS +{(r1 - r0) / 1024:.1f} MiB, "
        f"{per / 1024:.2f} MiB per kernel (RSS now {r1 / 1024:.0f} MiB)"
    )


def _threads_child(n):
    import numpy as np

    mod = _module("xpu", 2 * n + 1, "nq_measure_threads")
    a = np.ones(32, np.float64)
    out = np.zeros(32, np.float64)
    mod.k0.cpu[1, 32](a, out)  # warm-up: numba's first compile
    t, c = time.perf_counter(), time.process_time()
    for k in range(1, n + 1):
        getattr(mod, f"k{k}").cpu[1, 32](a, out)
    serial, serial_cpu = time.perf_counter() - t, time.process_time() - c
    errors = []

    def work(k):
        try:
            o = np.zeros(32, np.float64)
            getattr(mod, f"k{k}").cpu[1, 32](a, o)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n + 1, 2 * n + 1)]
    t, c = time.perf_counter(), time.process_time()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    par, par_cpu = time.perf_counter() - t, time.process_time() - c
    print(
        f"{n} kernels: {serial:.2f} s ({serial_cpu:.2f} s CPU) one after another, "
        f"{par:.2f} s ({par_cpu:.2f} s CPU) from {n} threads"
        f"{'; errors: ' + repr(errors) if errors else ''}"
    )


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "memory"
    if mode == "_mem":
        _memory_child(sys.argv[2], int(sys.argv[3]))
        return
    if mode == "_thr":
        _threads_child(int(sys.argv[2]))
        return
    n = int(sys.argv[2]) if len(sys.argv) > 2 else (200 if mode == "memory" else 8)
    if mode == "memory":
        for kind in ("njit", "xpu"):
            subprocess.run([sys.executable, __file__, "_mem", kind, str(n)], check=True)
    elif mode == "threads":
        subprocess.run([sys.executable, __file__, "_thr", str(n)], check=True)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
