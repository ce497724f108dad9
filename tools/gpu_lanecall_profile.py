"""Where the time of a lane function called on device arrays goes (run on the GPU
machine): host time per call on a small array (GPU time negligible), a cProfile of
those calls, and CUDA-event time per call on 2^26 float32 beside the generated
kernel launched directly and a numba.cuda copy kernel.

    python3 tools/gpu_lanecall_profile.py
"""

import cProfile
import os
import pstats
import sys
import time

import numpy as np
from numba import cuda

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
from bench_gpu import hand_copy as copy, lane_quad  # noqa: E402  (the benchmark's own kernels)

from numquad.cuda.lanecall import lane_call_kernel  # noqa: E402


def _host_us(fn, n=300):
    fn()
    cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def _event_us(fn, n=20):
    fn()
    cuda.synchronize()
    a, b = cuda.event(), cuda.event()
    a.record()
    for _ in range(n):
        fn()
    b.record()
    b.synchronize()
    return cuda.event_elapsed_time(a, b) / n * 1e3


def main():
    small = cuda.to_device(np.random.default_rng(1).standard_normal(1024).astype(np.float32))
    small_out = cuda.device_array_like(small)
    print(
        f"host time per call, 1,024 elements: out= {_host_us(lambda: lane_quad(small, out=small_out)):.1f} us; "
        f"no out= {_host_us(lambda: lane_quad(small)):.1f} us; "
        f"copy kernel launch {_host_us(lambda: copy[8, 128](small, small_out)):.1f} us"
    )
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(300):
        lane_quad(small, out=small_out)
    cuda.synchronize()
    pr.disable()
    st = pstats.Stats(pr)
    st.sort_stats("tottime").print_stats(12)
    st.sort_stats("cumulative").print_stats(30)

    n = 1 << 26
    big = cuda.to_device(np.random.default_rng(2).standard_normal(n).astype(np.float32))
    big_out = cuda.device_array_like(big)
    tgt = lane_quad._target("cuda")
    rows = [
        ("lane_quad(d_x, out=d_out)", lambda: lane_quad(big, out=big_out)),
        ("lane_quad(d_x)", lambda: lane_quad(big)),
        ("numba.cuda copy kernel [n/128, 128]", lambda: copy[n // 128, 128](big, big_out)),
        ("numba.cuda copy kernel [n/256, 256]", lambda: copy[n // 256, 256](big, big_out)),
        ("cuMemcpyDtoD", lambda: big_out.copy_to_device(big)),
    ]
    # the generated kernel's shapes: slots (elements per thread) x threads per block
    # (the eighth session also timed grid-stride loops over 1,056-2,112 blocks: no
    # faster; docs/GPU.md)
    for slots in (1, 4, 8, 16):
        k = lane_call_kernel(tgt.device_function(), "sweep", (True,), False, masked=tgt.needs_mask, slots=slots)
        tgt._compile_with_settings(k)
        for block in (128, 256):
            blocks = -(-n // (block * slots))
            rows.append(
                (
                    f"generated, {slots} slots, [{blocks}, {block}]",
                    lambda k=k, blocks=blocks, block=block: k[blocks, block](np.int64(n), big_out, big),
                )
            )
    for name, fn in rows:
        us = _event_us(fn)
        print(f"{name:52s} {us:8.1f} us  {2 * n * 4 / us / 1e3:6.0f} GB/s  host {_host_us(fn, 50):8.1f} us")
    want = big.copy_to_host()
    want = want + want.reshape(-1, 2)[:, ::-1].ravel()
    for name, fn in [("lane_quad(d_x, out=d_out)", rows[0][1])] + rows[5:]:
        big_out.copy_to_device(np.full(n, np.nan, np.float32))
        fn()
        ok = np.array_equal(big_out.copy_to_host(), want)
        print(f"{name}: {'the NumPy reference' if ok else 'WRONG'}")


if __name__ == "__main__":
    main()
