"""Where the time of a lane function called on device arrays goes (run on the GPU
machine): host time per call on a small array (GPU time negligible), a cProfile of
those calls, and CUDA-event time per call on 2^26 float32 beside the generated
kernel launched directly and a numba.cuda copy kernel.

    python3 tools/gpu_lanecall_profile.py
"""
import cProfile
import pstats
import time

import numpy as np
from numba import cuda

from numquad import Quad, xpu
from numquad.cuda.dispatch import _lane_call_kernel


@xpu.jit
def lane_quad(v):
    return v + Quad.swapHorizontal(v)


@cuda.jit
def copy(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]


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
    print(f"host time per call, 1,024 elements: out= {_host_us(lambda: lane_quad(small, out=small_out)):.1f} us; "
          f"no out= {_host_us(lambda: lane_quad(small)):.1f} us; "
          f"copy kernel launch {_host_us(lambda: copy[8, 128](small, small_out)):.1f} us")
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
    # the generated kernel's shapes: slots (elements per thread) x threads per block,
    # one element range per thread or a loop over the grid (blocks: per SM x SMs)
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    shapes = [(slots, block, False, -(-n // (block * slots)))
              for slots in (1, 4, 8, 16) for block in (128, 256)]
    shapes += [(slots, block, True, sms * per_sm)
               for slots in (4, 8) for block, per_sm in ((256, 8), (256, 16), (512, 4))]
    kernels = {}
    for slots, block, loop, blocks in shapes:
        k = kernels.get((slots, loop))
        if k is None:
            k = kernels[slots, loop] = _lane_call_kernel(
                tgt.device_function(), "sweep", (True,), False, masked=tgt.needs_mask,
                slots=slots, loop=loop)
            tgt._compile_with_settings(k)
        what = "grid loop" if loop else "one pass"
        rows.append((f"generated, {slots} slots, {what}, [{blocks}, {block}]",
                     lambda k=k, blocks=blocks, block=block: k[blocks, block](np.int64(n), big_out, big)))
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
