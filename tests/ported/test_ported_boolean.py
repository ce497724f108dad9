"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_boolean.py (see _port.py).

Adapted: cuda.jit -> self.jit (xpu.jit on one target).
"""

import numpy as np

from _port import PortedCase, on_cuda


def boolean_func(A, vertial):
    if vertial:
        A[0] = 123
    else:
        A[0] = 321


class TestCudaBoolean(PortedCase):
    def test_boolean(self):
        func = self.jit("void(float64[:], bool_)")(boolean_func)
        A = np.array([0], dtype="float64")
        func[1, 1](A, True)
        self.assertTrue(A[0] == 123)
        func[1, 1](A, False)
        self.assertTrue(A[0] == 321)


TestCudaBooleanOnCuda = on_cuda(TestCudaBoolean)
