"""Where the host time of a kernel launch goes (run on the GPU machine): numquad's
``k.cuda[g, b](...)`` and ``k[g, b](...)`` against the same kernel written for
numba.cuda, interleaved rounds, then a cProfile of each.

    python3 tools/gpu_launch_profile.py
"""

import cProfile
import os
import pstats
import sys
import time

import numpy as np
from numba import cuda

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
from bench_gpu import hand_quad, nq_quad  # noqa: E402  (the benchmark's own kernels)


def main():
    n, tpb = 1 << 16, 256
    ds = cuda.to_device(np.random.default_rng(1).standard_normal(n).astype(np.float32))
    dd = cuda.device_array_like(ds)
    launches = {
        "numquad k.cuda[g, b]": lambda: nq_quad.cuda[n // tpb, tpb](ds, dd),
        "numquad k[g, b]": lambda: nq_quad[n // tpb, tpb](ds, dd),
        "numba.cuda k[g, b]": lambda: hand_quad[n // tpb, tpb](ds, dd),
    }
    best = {name: float("inf") for name in launches}
    for _ in range(10):
        for name, fn in launches.items():
            for _ in range(10):
                fn()
            cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(100):
                fn()
            best[name] = min(best[name], (time.perf_counter() - t0) / 100)
            cuda.synchronize()
    for name, t in best.items():
        print(f"{name:24s} {t * 1e6:7.1f} us per launch (best of 10 x 100)")
    for name in ("numquad k.cuda[g, b]", "numba.cuda k[g, b]"):
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(1000):
            launches[name]()
        cuda.synchronize()
        pr.disable()
        print(f"--- {name}")
        pstats.Stats(pr).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main()
