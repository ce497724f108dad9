"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_py2_div_issue.py (see _port.py).

Adapted: cuda.jit -> self.jit (xpu.jit on one target).
"""

import numpy as np
from numba import cuda
from numba.cuda import float32, int32, void

from _port import PortedCase, on_cuda


class TestCudaPy2Div(PortedCase):
    def test_py2_div_issue(self):
        @self.jit(void(float32[:], float32[:], float32[:], int32))
        def preCalc(y, yA, yB, numDataPoints):
            i = cuda.grid(1)
            # k is unused, but may be part of the trigger for the bug this
            # tests for.
            k = i % numDataPoints  # noqa: F841

            ans = float32(1.001 * float32(i))

            y[i] = ans
            yA[i] = ans * 1.0
            yB[i] = ans / 1.0

        numDataPoints = 15

        y = np.zeros(numDataPoints, dtype=np.float32)
        yA = np.zeros(numDataPoints, dtype=np.float32)
        yB = np.zeros(numDataPoints, dtype=np.float32)
        preCalc[1, 15](y, yA, yB, numDataPoints)

        self.assertTrue(np.all(y == yA))
        self.assertTrue(np.all(y == yB))


TestCudaPy2DivOnCuda = on_cuda(TestCudaPy2Div)
