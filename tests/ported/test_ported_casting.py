"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_casting.py (see _port.py).

Adapted: the wrapper kernel's cuda.jit -> self.jit (xpu.jit on one target); the
device functions keep cuda.jit(device=True). Each numba-cuda test loops over
float16 and wider types in one test: here the float16 cases run as
``<test>_fp16`` (cpu_xfail: float16 is out of scope on the CPU) and the others
as ``<test>`` (same kernels, inputs and assertions). test_literal_to_float16
(cuda.fp16.hmul) is float16 only. Left out: the PTX tests
(test_float16_to_int_ptx, test_float16_to_uint_ptx, test_int_to_float16_ptx,
test_uint_to_float16_ptx, test_float16_to_float_ptx, test_native_cast:
``compile_ptx`` text checks).
"""

import pytest
import numpy as np

from numba import cuda
from numba.cuda import types
import itertools

from _port import PortedCase, on_cuda, cpu_xfail, fp16_xfail


def native_cast(x):
    return float(x)


def to_int8(x):
    return np.int8(x)


def to_int16(x):
    return np.int16(x)


def to_int32(x):
    return np.int32(x)


def to_int64(x):
    return np.int64(x)


def to_uint8(x):
    return np.uint8(x)


def to_uint16(x):
    return np.uint16(x)


def to_uint32(x):
    return types.uint32(x)


def to_uint64(x):
    return types.uint64(x)


def to_float16(x):
    # When division and operators on float16 types are supported, this should
    # be changed to match the implementation in to_float32.
    return np.float16(x) * np.float16(0.5)


def to_float32(x):
    return np.float32(x) / np.float32(2)


def to_float64(x):
    return np.float64(x) / np.float64(2)


def to_complex64(x):
    return np.complex64(x)


def to_complex128(x):
    return np.complex128(x)


def cuda_int_literal_to_float16(x):
    # Note that we need to use `2` and not `np.float16(2)` to ensure that this
    # types as a literal int and not a const float16.
    return cuda.fp16.hmul(np.float16(x), 2)


def reference_int_literal_to_float16(x):
    return np.float16(x) * np.float16(2)


def cuda_float_literal_to_float16(x):
    # Note that `2.5` types as a const float64 and not a literal float, but
    # this case is provided in case that changes in future.
    return cuda.fp16.hmul(np.float16(x), 2.5)


def reference_float_literal_to_float16(x):
    return np.float16(x) * np.float16(2.5)


FLOATS = (np.float16, np.float32, np.float64)


class TestCasting(PortedCase):
    def _create_wrapped(self, pyfunc, intype, outtype):
        wrapped_func = cuda.jit(device=True)(pyfunc)

        @self.jit
        def cuda_wrapper_fn(arg, res):
            res[0] = wrapped_func(arg[0])

        def wrapper_fn(arg):
            argarray = np.zeros(1, dtype=intype)
            argarray[0] = arg
            resarray = np.zeros(1, dtype=outtype)
            cuda_wrapper_fn[1, 1](argarray, resarray)
            return resarray[0]

        return wrapper_fn

    # -- test_float_to_int --
    def _float_to_int(self, fromtys):
        pyfuncs = (to_int8, to_int16, to_int32, to_int64)
        totys = (np.int8, np.int16, np.int32, np.int64)

        for pyfunc, toty in zip(pyfuncs, totys):
            for fromty in fromtys:
                with self.subTest(fromty=fromty, toty=toty):
                    cfunc = self._create_wrapped(pyfunc, fromty, toty)
                    self.assertEqual(cfunc(12.3), pyfunc(12.3))
                    self.assertEqual(cfunc(12.3), int(12.3))
                    self.assertEqual(cfunc(-12.3), pyfunc(-12.3))
                    self.assertEqual(cfunc(-12.3), int(-12.3))

    @pytest.mark.slow
    def test_float_to_int(self):
        self._float_to_int(FLOATS[1:])

    @fp16_xfail
    def test_float_to_int_fp16(self):
        self._float_to_int(FLOATS[:1])

    # -- test_float_to_uint --
    def _float_to_uint(self, fromtys):
        pyfuncs = (to_int8, to_int16, to_int32, to_int64)
        totys = (np.uint8, np.uint16, np.uint32, np.uint64)

        for pyfunc, toty in zip(pyfuncs, totys):
            for fromty in fromtys:
                with self.subTest(fromty=fromty, toty=toty):
                    cfunc = self._create_wrapped(pyfunc, fromty, toty)
                    self.assertEqual(cfunc(12.3), pyfunc(12.3))
                    self.assertEqual(cfunc(12.3), int(12.3))

    @pytest.mark.slow
    def test_float_to_uint(self):
        self._float_to_uint(FLOATS[1:])

    @fp16_xfail
    def test_float_to_uint_fp16(self):
        self._float_to_uint(FLOATS[:1])

    # -- test_int_to_float --
    def _int_to_float(self, pyfuncs, totys):
        for pyfunc, toty in zip(pyfuncs, totys):
            with self.subTest(toty=toty):
                cfunc = self._create_wrapped(pyfunc, np.int64, toty)
                self.assertEqual(cfunc(321), pyfunc(321))

    @pytest.mark.slow
    def test_int_to_float(self):
        self._int_to_float((to_float32, to_float64), FLOATS[1:])

    @fp16_xfail
    def test_int_to_float_fp16(self):
        self._int_to_float((to_float16,), FLOATS[:1])

    @fp16_xfail
    def test_literal_to_float16(self):
        cudafuncs = (cuda_int_literal_to_float16, cuda_float_literal_to_float16)
        hostfuncs = (
            reference_int_literal_to_float16,
            reference_float_literal_to_float16,
        )

        for cudafunc, hostfunc in zip(cudafuncs, hostfuncs):
            with self.subTest(func=cudafunc):
                cfunc = self._create_wrapped(cudafunc, np.float16, np.float16)
                self.assertEqual(cfunc(321), hostfunc(321))

    # -- test_float_to_float --
    def _float_to_float(self, cases):
        for (pyfunc, fromty), toty in cases:
            with self.subTest(fromty=fromty, toty=toty):
                cfunc = self._create_wrapped(pyfunc, fromty, toty)
                # For this test we cannot use the pyfunc for comparison because
                # the CUDA target doesn't yet implement division (or operators)
                # for float16 values, so we test by comparing with the computed
                # expression instead.
                np.testing.assert_allclose(cfunc(12.3), toty(12.3) / toty(2), rtol=0.0003)
                np.testing.assert_allclose(cfunc(-12.3), toty(-12.3) / toty(2), rtol=0.0003)

    def _float_to_float_cases(self):
        pyfuncs = (to_float16, to_float32, to_float64)
        tys = FLOATS
        return list(itertools.product(zip(pyfuncs, tys), tys))

    @pytest.mark.slow
    def test_float_to_float(self):
        self._float_to_float([c for c in self._float_to_float_cases() if np.float16 not in (c[0][1], c[1])])

    @fp16_xfail
    def test_float_to_float_fp16(self):
        self._float_to_float([c for c in self._float_to_float_cases() if np.float16 in (c[0][1], c[1])])

    # -- test_float_to_complex --
    def _float_to_complex(self, fromtys):
        pyfuncs = (to_complex64, to_complex128)
        totys = (np.complex64, np.complex128)

        for pyfunc, toty in zip(pyfuncs, totys):
            for fromty in fromtys:
                with self.subTest(fromty=fromty, toty=toty):
                    cfunc = self._create_wrapped(pyfunc, fromty, toty)
                    # Here we need to explicitly cast the input to the pyfunc
                    # to match the casting that is automatically applied when
                    # passing the input to the cfunc as part of wrapping it in
                    # an array of type fromtype.
                    np.testing.assert_allclose(cfunc(3.21), pyfunc(fromty(3.21)))
                    np.testing.assert_allclose(cfunc(-3.21), pyfunc(fromty(-3.21)) + 0j)

    @pytest.mark.slow
    def test_float_to_complex(self):
        self._float_to_complex(FLOATS[1:])

    @fp16_xfail
    def test_float_to_complex_fp16(self):
        self._float_to_complex(FLOATS[:1])


TestCastingOnCuda = on_cuda(TestCasting)
