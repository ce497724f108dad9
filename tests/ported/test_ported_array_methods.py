"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_array_methods.py (see _port.py).

Adapted: cuda.jit -> self.jit (xpu.jit on one target), device arrays -> host
arrays; the setUp/tearDown that switch numba.cuda's ``config.CUDA_ENABLE_NRT`` on
(an allocation for ``val.copy()`` on the GPU) stay, for the CUDA target.
"""

import numpy as np
from numba import cuda
import unittest
from numba.cuda import config

from _port import PortedCase, on_cuda


def reinterpret_array_type(byte_arr, start, stop, output):
    # Tested with just one thread
    val = byte_arr[start:stop].view(np.int32)[0]
    output[0] = val


class TestCudaArrayMethods(PortedCase):
    def setUp(self):
        self.old_nrt_setting = config.CUDA_ENABLE_NRT
        config.CUDA_ENABLE_NRT = True
        super().setUp()

    def tearDown(self):
        config.CUDA_ENABLE_NRT = self.old_nrt_setting
        super().tearDown()

    def test_reinterpret_array_type(self):
        """
        Reinterpret byte array as int32 in the GPU.
        """
        pyfunc = reinterpret_array_type
        kernel = self.jit(pyfunc)

        byte_arr = np.arange(256, dtype=np.uint8)
        itemsize = np.dtype(np.int32).itemsize
        for start in range(0, 256, itemsize):
            stop = start + itemsize
            expect = byte_arr[start:stop].view(np.int32)[0]

            output = np.zeros(1, dtype=np.int32)
            kernel[1, 1](byte_arr, start, stop, output)

            got = output[0]
            self.assertEqual(expect, got)

    def test_array_copy(self):
        val = np.array([1, 2, 3])[::-1]

        @self.jit
        def kernel(out):
            q = val.copy()
            for i in range(len(out)):
                out[i] = q[i]

        out = np.zeros(len(val), dtype="float64")

        kernel[1, 1](out)
        for i, j in zip(out, val):
            self.assertEqual(i, j)


TestCudaArrayMethodsOnCuda = on_cuda(TestCudaArrayMethods)
