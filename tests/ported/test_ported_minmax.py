"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_minmax.py (see _port.py).

Adapted: cuda.jit -> self.jit (xpu.jit on one target); the PTX check of each
test (``max.f64`` etc. in inspect_asm) is numba.cuda codegen and is left out,
the numerical check stays.
"""

import pytest
import numpy as np

from numba import cuda
from numba.cuda import float64

from _port import PortedCase, on_cuda


def builtin_max(A, B, C):
    i = cuda.grid(1)

    if i >= len(C):
        return

    C[i] = float64(max(A[i], B[i]))


def builtin_min(A, B, C):
    i = cuda.grid(1)

    if i >= len(C):
        return

    C[i] = float64(min(A[i], B[i]))


class TestCudaMinMax(PortedCase):
    def _run(
        self,
        kernel,
        numpy_equivalent,
        ptx_instruction,
        dtype_left,
        dtype_right,
        n=5,
    ):
        kernel = self.jit(kernel)

        c = np.zeros(n, dtype=np.float64)
        a = np.arange(n, dtype=dtype_left) + 0.5
        b = np.full(n, fill_value=2, dtype=dtype_right)

        kernel[1, c.shape](a, b, c)
        np.testing.assert_allclose(c, numpy_equivalent(a, b))

    @pytest.mark.slow
    def test_max_f8f8(self):
        self._run(builtin_max, np.maximum, "max.f64", np.float64, np.float64)

    @pytest.mark.slow
    def test_max_f4f8(self):
        self._run(builtin_max, np.maximum, "max.f64", np.float32, np.float64)

    @pytest.mark.slow
    def test_max_f8f4(self):
        self._run(builtin_max, np.maximum, "max.f64", np.float64, np.float32)

    @pytest.mark.slow
    def test_max_f4f4(self):
        self._run(builtin_max, np.maximum, "max.f32", np.float32, np.float32)

    @pytest.mark.slow
    def test_min_f8f8(self):
        self._run(builtin_min, np.minimum, "min.f64", np.float64, np.float64)

    @pytest.mark.slow
    def test_min_f4f8(self):
        self._run(builtin_min, np.minimum, "min.f64", np.float32, np.float64)

    @pytest.mark.slow
    def test_min_f8f4(self):
        self._run(builtin_min, np.minimum, "min.f64", np.float64, np.float32)

    @pytest.mark.slow
    def test_min_f4f4(self):
        self._run(builtin_min, np.minimum, "min.f32", np.float32, np.float32)


TestCudaMinMaxOnCuda = on_cuda(TestCudaMinMax)
