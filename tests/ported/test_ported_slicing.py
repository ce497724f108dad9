"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_slicing.py (see _port.py).

Adapted: cuda.jit on the kernel -> self.jit (xpu.jit on one target); the device
function keeps cuda.jit(device=True). test_assign_empty_slice is left out: it
tests host-side DeviceNDArray slice assignment (cuda.device_array, cuda.to_device),
no kernel.
"""

import pytest
import numpy as np
from numba import cuda

from _port import PortedCase, on_cuda


def foo(inp, out):
    for i in range(out.shape[0]):
        out[i] = inp[i]


def copy(inp, out):
    i = cuda.grid(1)
    cufoo(inp[i, :], out[i, :])


class TestCudaSlicing(PortedCase):
    @pytest.mark.slow
    def test_slice_as_arg(self):
        global cufoo
        cufoo = cuda.jit("void(int32[:], int32[:])", device=True)(foo)
        cucopy = self.jit("void(int32[:,:], int32[:,:])")(copy)

        inp = np.arange(100, dtype=np.int32).reshape(10, 10)
        out = np.zeros_like(inp)

        cucopy[1, 10](inp, out)


TestCudaSlicingOnCuda = on_cuda(TestCudaSlicing)
