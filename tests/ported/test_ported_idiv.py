"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_idiv.py (see _port.py).

Adapted: cuda.jit -> self.jit (xpu.jit on one target), device arrays -> host arrays.
"""

import numpy as np
from numba.cuda import float32, float64, int32, void

from _port import PortedCase, on_cuda


class TestCudaIDiv(PortedCase):
    def test_inplace_div(self):
        @self.jit(void(float32[:, :], int32, int32))
        def div(grid, l_x, l_y):
            for x in range(l_x):
                for y in range(l_y):
                    grid[x, y] /= 2.0

        x = np.ones((2, 2), dtype=np.float32)
        grid = x
        div[1, 1](grid, 2, 2)
        y = grid
        self.assertTrue(np.all(y == 0.5))

    def test_inplace_div_double(self):
        @self.jit(void(float64[:, :], int32, int32))
        def div_double(grid, l_x, l_y):
            for x in range(l_x):
                for y in range(l_y):
                    grid[x, y] /= 2.0

        x = np.ones((2, 2), dtype=np.float64)
        grid = x
        div_double[1, 1](grid, 2, 2)
        y = grid
        self.assertTrue(np.all(y == 0.5))


TestCudaIDivOnCuda = on_cuda(TestCudaIDiv)
