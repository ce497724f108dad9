"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_sm_creation.py (see _port.py).

Adapted: cuda.jit -> self.jit (xpu.jit on one target). test_global_constants,
test_global_build_tuple and test_global_constant_tuple are in test_ported_sm.py
(ported earlier, the same code). The typemap checks
(``check_dtype`` reads numba.cuda's ``overloads[...]._type_annotation``, a compiler
internal) compile the kernel for the target instead (``inspect_llvm`` on the CPU).
"""

import numpy as np
from numba import cuda
from numba.cuda import float32, int32, void
from numba.core.errors import TypingError
from numba.cuda.tests.cudapy.extensions_usecases import struct_model_type

from _port import PortedCase, on_cuda, cpu_xfail

GLOBAL_CONSTANT = 5
GLOBAL_CONSTANT_2 = 6


def udt_global_build_list(A):
    sa = cuda.shared.array(shape=[GLOBAL_CONSTANT, GLOBAL_CONSTANT_2], dtype=float32)
    i, j = cuda.grid(2)
    A[i, j] = sa[i, j]


def udt_invalid_1(A):
    sa = cuda.shared.array(shape=A[0], dtype=float32)
    i = cuda.grid(1)
    A[i] = sa[i]


def udt_invalid_2(A):
    sa = cuda.shared.array(shape=(1, A[0]), dtype=float32)
    i, j = cuda.grid(2)
    A[i, j] = sa[i, j]


def udt_invalid_3(A):
    sa = cuda.shared.array(shape=(1, A[0]), dtype=float32)
    i = cuda.grid(1)
    A[i] = sa[i, 0]


class TestSharedMemoryCreation(PortedCase):
    def test_global_build_list(self):
        with self.assertRaises(TypingError) as raises:
            self.jit((float32[:, :],))(udt_global_build_list)

        self.assertIn(
            "No implementation of function Function(<function shared.array",
            str(raises.exception),
        )
        self.assertIn(
            "found for signature:\n \n >>> array(shape=list(int64)<iv=[5, 6]>, dtype=class(float32)",
            str(raises.exception),
        )

    def test_invalid_1(self):
        # Scalar shape cannot be a floating point value
        with self.assertRaises(TypingError) as raises:
            self.jit((float32[:],))(udt_invalid_1)

        self.assertIn(
            "No implementation of function Function(<function shared.array",
            str(raises.exception),
        )
        self.assertIn(
            "found for signature:\n \n >>> array(shape=float32, dtype=class(float32))",
            str(raises.exception),
        )

    def test_invalid_2(self):
        # Tuple shape cannot contain a floating point value
        with self.assertRaises(TypingError) as raises:
            self.jit((float32[:, :],))(udt_invalid_2)

        self.assertIn(
            "No implementation of function Function(<function shared.array",
            str(raises.exception),
        )
        self.assertIn(
            "found for signature:\n \n "
            ">>> array(shape=Tuple(Literal[int](1), "
            "array(float32, 1d, A)), dtype=class(float32))",
            str(raises.exception),
        )

    def test_invalid_3(self):
        # Scalar shape must be literal
        with self.assertRaises(TypingError) as raises:
            self.jit((int32[:],))(udt_invalid_1)

        self.assertIn(
            "No implementation of function Function(<function shared.array",
            str(raises.exception),
        )
        self.assertIn(
            "found for signature:\n \n >>> array(shape=int32, dtype=class(float32))",
            str(raises.exception),
        )

    def test_invalid_4(self):
        # Tuple shape must contain only literals
        with self.assertRaises(TypingError) as raises:
            self.jit((int32[:],))(udt_invalid_3)

        self.assertIn(
            "No implementation of function Function(<function shared.array",
            str(raises.exception),
        )
        self.assertIn(
            "found for signature:\n \n >>> array(shape=Tuple(Literal[int](1), int32), dtype=class(float32))",
            str(raises.exception),
        )

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

    def test_numba_dtype(self):
        # Check that Numba types can be used as the dtype of a shared array
        @self.jit(void(int32[::1]))
        def f(x):
            s = cuda.shared.array(10, dtype=int32)
            s[0] = x[0]
            x[0] = s[0]

        self.check_dtype(f, int32)

    def test_numpy_dtype(self):
        # Check that NumPy types can be used as the dtype of a shared array
        @self.jit(void(int32[::1]))
        def f(x):
            s = cuda.shared.array(10, dtype=np.int32)
            s[0] = x[0]
            x[0] = s[0]

        self.check_dtype(f, int32)

    def test_string_dtype(self):
        # Check that strings can be used to specify the dtype of a shared array
        @self.jit(void(int32[::1]))
        def f(x):
            s = cuda.shared.array(10, dtype="int32")
            s[0] = x[0]
            x[0] = s[0]

        self.check_dtype(f, int32)

    def test_invalid_string_dtype(self):
        # Check that strings of invalid dtypes cause a typing error
        re = ".*Invalid NumPy dtype specified: 'int33'.*"
        with self.assertRaisesRegex(TypingError, re):

            @self.jit(void(int32[::1]))
            def f(x):
                s = cuda.shared.array(10, dtype="int33")
                s[0] = x[0]
                x[0] = s[0]

    @cpu_xfail("shared arrays of extension (struct model) types are not supported on the CPU")
    def test_type_with_struct_data_model(self):
        @self.jit(void(struct_model_type[::1]))
        def f(x):
            s = cuda.shared.array(10, dtype=struct_model_type)
            s[0] = x[0]
            x[0] = s[0]

        self.check_dtype(f, struct_model_type)


TestSharedMemoryCreationOnCuda = on_cuda(TestSharedMemoryCreation)
