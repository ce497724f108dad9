"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_alignment.py (see _port.py).

Adapted: cuda.jit -> self.jit (xpu.jit on one target).
"""

import numpy as np
from numba import cuda
from numba.cuda.np.numpy_support import from_dtype

from _port import PortedCase, on_cuda, cpu_xfail


class TestAlignment(PortedCase):
    def test_record_alignment(self):
        rec_dtype = np.dtype([("a", "int32"), ("b", "float64")], align=True)
        rec = from_dtype(rec_dtype)

        @self.jit((rec[:],))
        def foo(a):
            i = cuda.grid(1)
            a[i].a = a[i].b

        a_recarray = np.recarray(3, dtype=rec_dtype)
        for i in range(a_recarray.size):
            a_rec = a_recarray[i]
            a_rec.a = 0
            a_rec.b = (i + 1) * 123

        foo[1, 3](a_recarray)

        self.assertTrue(np.all(a_recarray.a == a_recarray.b))

    @cpu_xfail(
        "the CPU target compiles a kernel on an unaligned record (numba.cuda: 'type float64 is not "
        "aligned'); target='auto' compiles a signature for the CPU first",
        cuda_too=True,
    )
    def test_record_alignment_error(self):
        rec_dtype = np.dtype([("a", "int32"), ("b", "float64")])
        rec = from_dtype(rec_dtype)

        with self.assertRaises(Exception) as raises:

            @self.jit((rec[:],))
            def foo(a):
                i = cuda.grid(1)
                a[i].a = a[i].b

        self.assertTrue("type float64 is not aligned" in str(raises.exception))


TestAlignmentOnCuda = on_cuda(TestAlignment)
