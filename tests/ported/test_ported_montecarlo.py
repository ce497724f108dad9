"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_montecarlo.py (see _port.py).

Adapted: cuda.jit -> self.jit (xpu.jit on one target). numba-cuda's test only
compiles the kernel (eager, from its signature); so does this one.
"""

import pytest
import math

from numba import cuda

from _port import PortedCase, on_cuda


class TestCudaMonteCarlo(PortedCase):
    @pytest.mark.slow
    def test_montecarlo(self):
        """Just make sure we can compile this"""

        @self.jit("void(double[:], double[:], double, double, double, double[:])")
        def step(last, paths, dt, c0, c1, normdist):
            i = cuda.grid(1)
            if i >= paths.shape[0]:
                return
            noise = normdist[i]
            paths[i] = last[i] * math.exp(c0 * dt + c1 * noise)


TestCudaMonteCarloOnCuda = on_cuda(TestCudaMonteCarlo)
