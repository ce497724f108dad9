"""A launch inside a launch on the same thread (from a signal handler that runs
between the outer launch's pieces, or while its workers run) gets its own stop flag
(cpu/interrupt.py ``new_flag``). A probe found them sharing the thread's one flag: a
failing inner launch set it, and the outer launch's loops returned early, leaving
elements never computed without an error (on the worker pool), or raised a
KeyboardInterrupt no one pressed (on the calling thread). The first version of this
test then deadlocked in a fresh process: the handler's launch asked the worker pool
for threads while the interrupted outer launch held the pool's lock in its submit; a
launch inside a pool launch now runs on the calling thread (cpu/launch.py,
``_on_pool``). Expected values from NumPy; outputs poisoned; random inputs."""

import signal
import sys

import numpy as np
import pytest

from numquad import xpu

pytestmark = pytest.mark.skipif(sys.platform == "win32" or not hasattr(signal, "setitimer"), reason="needs SIGALRM")


@xpu.jit
def _work(src, dst, n, iters):
    i = xpu.grid(1)
    if i < n:
        acc = src[i]
        j = 0
        while j < iters:
            acc = (acc * 1103515245 + 12345) & 0x7FFFFFFF
            j += 1
        dst[i] = acc


@xpu.jit
def _oob(dst):
    i = xpu.grid(1)
    dst[i] = 1  # no guard: the last block stores out of bounds


@pytest.mark.slow
@pytest.mark.parametrize("n, block", [(1 << 17, 256), (4000, 64)], ids=["pool", "calling-thread"])
def test_a_failing_launch_in_a_signal_handler_leaves_the_outer_launch_whole(n, block):
    fired = []

    def handler(signum, frame):
        with pytest.raises(IndexError):
            _oob[(70000 + 255) // 256 + 1, 256](np.zeros(70000, np.int64))  # pool-sized, fails
        fired.append(True)

    _work[1, 32](np.zeros(32, np.int64), np.zeros(32, np.int64), 32, 1)  # compile both first
    with pytest.raises(IndexError):
        _oob[2, 32](np.zeros(32, np.int64))
    rng = np.random.default_rng(31)
    iters = 3000 if n > 10000 else 400_000
    src = rng.integers(0, 1 << 30, n).astype(np.int64)
    want = src.copy()
    for _ in range(iters):
        want = (want * 1103515245 + 12345) & 0x7FFFFFFF
    dst = np.full(n, -1, np.int64)
    old = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        _work[(n + block - 1) // block, block](src, dst, n, iters)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    np.testing.assert_array_equal(dst, want)
    assert fired  # (the handler ran: during the launch, or just after it)
