"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_multithreads.py (see _port.py).

Adapted: cuda.jit -> xpu.jit launched on the test's target (check_concurrent_compiling
takes it), device arrays -> host arrays; test_spawn_concurrent_compilation's
``cuda.get_current_device()`` (CUDA context set-up) runs on the CUDA target only.
Left out: test_invalid_context_error_with_d2h and test_invalid_context_error_with_d2d
(copy_to_host / copy_to_device from another thread: host-side device-array APIs,
no kernel).
"""

import pytest
import multiprocessing
import numpy as np
from numba import cuda
import unittest

from concurrent.futures import ThreadPoolExecutor, ProcessPoolExecutor

from _port import PortedCase, on_cuda, jit_for


has_mp_get_context = hasattr(multiprocessing, "get_context")


def check_concurrent_compiling(target="cpu"):
    @jit_for(target)
    def foo(x):
        x[0] += 1

    def use_foo(x):
        foo[1, 1](x)
        return x

    arrays = [np.arange(10) for i in range(10)]
    if target == "cuda":
        arrays = [cuda.to_device(a) for a in arrays]
    expected = np.arange(10)
    expected[0] += 1
    with ThreadPoolExecutor(max_workers=4) as e:
        for ary in e.map(use_foo, arrays):
            if target == "cuda":
                ary = ary.copy_to_host()
            np.testing.assert_equal(ary, expected)


class TestMultiThreadCompiling(PortedCase):
    def test_concurrent_compiling(self):
        check_concurrent_compiling(self.target)

    @pytest.mark.slow
    @unittest.skipIf(not has_mp_get_context, "no multiprocessing.get_context")
    def test_spawn_concurrent_compilation(self):
        # force CUDA context init
        if self.target == "cuda":
            cuda.get_current_device()

        with ProcessPoolExecutor(
            # use "spawn" to avoid inheriting the CUDA context
            mp_context=multiprocessing.get_context("spawn")
        ) as exe:
            future = exe.submit(check_concurrent_compiling, self.target)
        future.result()


TestMultiThreadCompilingOnCuda = on_cuda(TestMultiThreadCompiling)
