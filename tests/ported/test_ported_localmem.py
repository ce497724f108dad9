"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_localmem.py (see _port.py).

Adapted: cuda.jit -> self.jit (xpu.jit on one target). test_local_array,
test_local_array_1_tuple and test_local_array_complex are in test_ported_sm.py
(ported earlier, the same code). Left out: the typemap checks of test_numba_dtype, test_numpy_dtype, test_string_dtype
and test_type_with_struct_data_model (``check_dtype`` reads numba.cuda's
``overloads[...]._type_annotation``, a compiler internal): ``check_dtype``
compiles those kernels for the target instead (``inspect_llvm`` on the CPU).
The extension type (struct model) and the float16 tests are numba-cuda's as they are.
"""

import pytest
import numpy as np

from numba import cuda
from numba.cuda import int32, void
from numba.cuda import types
from numba.core.errors import TypingError
from numba.cuda.tests.cudapy.extensions_usecases import struct_model_type, MyStruct

from _port import PortedCase, on_cuda, cpu_xfail


class TestCudaLocalMem(PortedCase):
    def check_dtype(self, f, dtype):
        # numba-cuda reads the typemap of the compiled kernel here (a compiler
        # internal); the port compiles the kernel for the target instead (an
        # xpu.jit(sig) kernel that CUDA compiles defers a CPU error to its first
        # CPU launch: inspect_llvm compiles it for the CPU now)
        sig = f.signatures[0]  # numba.cuda's form: the first overload's argument types
        if self.target == "cpu":
            f.inspect_llvm(sig)
        else:
            f.inspect_ptx(sig)

    @pytest.mark.slow
    def test_numba_dtype(self):
        # Check that Numba types can be used as the dtype of a local array
        @self.jit(void(int32[::1]))
        def f(x):
            l = cuda.local.array(10, dtype=int32)
            l[0] = x[0]
            x[0] = l[0]

        self.check_dtype(f, int32)

    def test_numpy_dtype(self):
        # Check that NumPy types can be used as the dtype of a local array
        @self.jit(void(int32[::1]))
        def f(x):
            l = cuda.local.array(10, dtype=np.int32)
            l[0] = x[0]
            x[0] = l[0]

        self.check_dtype(f, int32)

    def test_string_dtype(self):
        # Check that strings can be used to specify the dtype of a local array
        @self.jit(void(int32[::1]))
        def f(x):
            l = cuda.local.array(10, dtype="int32")
            l[0] = x[0]
            x[0] = l[0]

        self.check_dtype(f, int32)

    def test_invalid_string_dtype(self):
        # Check that strings of invalid dtypes cause a typing error
        re = ".*Invalid NumPy dtype specified: 'int33'.*"
        with self.assertRaisesRegex(TypingError, re):

            @self.jit(void(int32[::1]))
            def f(x):
                l = cuda.local.array(10, dtype="int33")
                l[0] = x[0]
                x[0] = l[0]

    @cpu_xfail("local arrays of extension (struct model) types are not supported on the CPU")
    def test_type_with_struct_data_model(self):
        @self.jit(void(struct_model_type[::1]))
        def f(x):
            l = cuda.local.array(10, dtype=struct_model_type)
            l[0] = x[0]
            x[0] = l[0]

        self.check_dtype(f, struct_model_type)

    @cpu_xfail("local arrays of extension (struct model) types are not supported on the CPU")
    def test_struct_model_type_arr(self):
        @self.jit(void(int32[::1], int32[::1]))
        def f(outx, outy):
            # Test creation
            arr = cuda.local.array(10, dtype=struct_model_type)
            # Test set to arr
            for i in range(len(arr)):
                obj = MyStruct(int32(i), int32(i * 2))
                arr[i] = obj
            # Test get from arr
            for i in range(len(arr)):
                outx[i] = arr[i].x
                outy[i] = arr[i].y

        arrx = np.array((10,), dtype="int32")
        arry = np.array((10,), dtype="int32")

        f[1, 1](arrx, arry)

        for i, x in enumerate(arrx):
            self.assertEqual(x, i)
        for i, y in enumerate(arry):
            self.assertEqual(y, i * 2)

    def _check_local_array_size_fp16(self, shape, expected, ty):
        @self.jit
        def s(a):
            arr = cuda.local.array(shape, dtype=ty)
            a[0] = arr.size

        result = np.zeros(1, dtype=np.float16)
        s[1, 1](result)
        self.assertEqual(result[0], expected)

    @cpu_xfail("float16 is not supported by the CPU target")
    def test_issue_fp16_support(self):
        self._check_local_array_size_fp16(2, 2, types.float16)
        self._check_local_array_size_fp16(2, 2, np.float16)


TestCudaLocalMemOnCuda = on_cuda(TestCudaLocalMem)
