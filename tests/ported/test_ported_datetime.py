"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_datetime.py (see _port.py):
the two kernel tests. Left out: test_ufunc and test_gufunc (vectorize and
guvectorize, host-side APIs), test_datetime_cupy_inputs (CuPy), the device-array
views (host-side APIs).

Adapted: cuda.jit -> self.jit (xpu.jit on one target).
"""

import pytest
import numpy as np
from numba import cuda

from _port import PortedCase, on_cuda


class TestCudaDateTime(PortedCase):
    @pytest.mark.slow
    def test_basic_datetime_kernel(self):
        @self.jit
        def foo(start, end, delta):
            for i in range(cuda.grid(1), delta.size, cuda.gridsize(1)):
                delta[i] = end[i] - start[i]

        arr1 = np.arange("2005-02", "2006-02", dtype="datetime64[D]")
        arr2 = arr1 + np.random.randint(0, 10000, arr1.size)
        delta = np.zeros_like(arr1, dtype="timedelta64[D]")

        foo[1, 32](arr1, arr2, delta)

        self.assertPreciseEqual(delta, arr2 - arr1)

    @pytest.mark.slow
    def test_scalar_datetime_kernel(self):
        @self.jit
        def foo(dates, target, delta, matches, outdelta):
            for i in range(cuda.grid(1), matches.size, cuda.gridsize(1)):
                matches[i] = dates[i] == target
                outdelta[i] = dates[i] - delta

        arr1 = np.arange("2005-02", "2006-02", dtype="datetime64[D]")
        target = arr1[5]  # datetime
        delta = arr1[6] - arr1[5]  # timedelta
        matches = np.zeros_like(arr1, dtype=np.bool_)
        outdelta = np.zeros_like(arr1, dtype="datetime64[D]")

        foo[1, 32](arr1, target, delta, matches, outdelta)
        where = matches.nonzero()

        self.assertEqual(list(where), [5])
        self.assertPreciseEqual(outdelta, arr1 - delta)


TestCudaDateTimeOnCuda = on_cuda(TestCudaDateTime)
