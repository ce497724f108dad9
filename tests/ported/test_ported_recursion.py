"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_recursion.py (see _port.py).

Adapted: cuda.jit on kernels -> self.jit (xpu.jit on one target); the recursive
device functions are numba-cuda's own (numba.cuda.tests.cudapy.recursion_usecases,
cuda.jit(device=True)); its module-level kernel raise_self_kernel is
re-jitted from its py_func with its options. test_type_change and
test_optional_return are ``unittest.skip`` in numba-cuda and are left out.
test_raise is ``unittest.expectedFailure`` in numba-cuda (numba issue #8036):
it stays an expected failure on the CUDA target only.
"""

import numpy as np
import pytest
from numba.cuda.core.errors import TypingError
from numba import cuda  # noqa: F401  (numba-cuda's imports)

from _port import PortedCase, on_cuda, expected_failure_on_cuda


class TestSelfRecursion(PortedCase):
    def setUp(self):
        # Avoid importing this module at the top level, as it triggers
        # compilation and can therefore fail
        from numba.cuda.tests.cudapy import recursion_usecases

        self.mod = recursion_usecases
        super().setUp()

    def check_fib(self, cfunc):
        @self.jit
        def kernel(r, x):
            r[0] = cfunc(x[0])

        x = np.asarray([10], dtype=np.int64)
        r = np.zeros_like(x)
        kernel[1, 1](r, x)

        actual = r[0]
        expected = 55
        self.assertPreciseEqual(actual, expected)

    @pytest.mark.slow
    def test_global_explicit_sig(self):
        self.check_fib(self.mod.fib1)

    @pytest.mark.slow
    def test_inner_explicit_sig(self):
        self.check_fib(self.mod.fib2)

    @pytest.mark.slow
    def test_global_implicit_sig(self):
        self.check_fib(self.mod.fib3)

    def test_runaway(self):
        with self.assertRaises(TypingError) as raises:
            cfunc = self.mod.runaway_self

            @self.jit("void()")
            def kernel():
                cfunc(1)

        self.assertIn("cannot type infer runaway recursion", str(raises.exception))

    @pytest.mark.slow
    @expected_failure_on_cuda("numba issue #8036: exceptions raised in device functions are not reported")
    def test_raise(self):
        raise_self_kernel = self.jit(debug=True, opt=False)(self.mod.raise_self_kernel.py_func)
        with self.assertRaises(ValueError) as raises:
            raise_self_kernel[1, 1](3)

        self.assertEqual(str(raises.exception), "raise_self")

    @pytest.mark.slow
    def test_growing_return_tuple(self):
        cfunc = self.mod.make_growing_tuple_case(cuda.jit)

        with self.assertRaises(TypingError) as raises:

            @self.jit("void()")
            def kernel():
                cfunc(100)

        self.assertIn(
            "Return type of recursive function does not converge",
            str(raises.exception),
        )


TestSelfRecursionOnCuda = on_cuda(TestSelfRecursion)
