"""Ported from numba-cuda 0.30.4 (BSD-2-Clause, Copyright (c) 2025 NVIDIA CORPORATION &
AFFILIATES; see _port.py): numba/cuda/tests/cudapy/test_frexp_ldexp.py,
test_complex_kernel.py, test_cuda_jit_no_types.py, test_mandel.py and test_enums.py.

Adapted: cuda.jit on kernels -> self.jit, device arrays and streams -> host arrays
and stream 0. test_mandel compiles its device function with ``compile_ptx``; here a
kernel calls it (the CPU target has no PTX) and the result is checked against the
same function run as Python. Left out: test_jit_debug_simulator (the simulator's
config), test_enums.py's test_vectorize (cuda.vectorize, a host-side API).
"""

import pytest
import enum
import math

import numpy as np
from numba import cuda
from numba.cuda import float32, float64, int16, int32, uint32, void

from _port import PortedCase, on_cuda


def simple_frexp(aryx, aryexp, arg):
    aryx[0], aryexp[0] = math.frexp(arg)


def simple_ldexp(aryx, arg, exp):
    aryx[0] = math.ldexp(arg, exp)


class TestCudaFrexpLdexp(PortedCase):
    def template_test_frexp(self, nptype, nbtype):
        compiled = self.jit(void(nbtype[:], int32[:], nbtype))(simple_frexp)
        arg = 3.1415
        aryx = np.zeros(1, dtype=nptype)
        aryexp = np.zeros(1, dtype=np.int32)
        compiled[1, 1](aryx, aryexp, arg)
        np.testing.assert_array_equal(aryx, nptype(0.785375))
        self.assertEqual(aryexp, 2)

        arg = np.inf
        compiled[1, 1](aryx, aryexp, arg)
        np.testing.assert_array_equal(aryx, nptype(np.inf))
        self.assertEqual(aryexp, 0)  # np.frexp gives -1

        arg = np.nan
        compiled[1, 1](aryx, aryexp, arg)
        np.testing.assert_array_equal(aryx, nptype(np.nan))
        self.assertEqual(aryexp, 0)  # np.frexp gives -1

    def template_test_ldexp(self, nptype, nbtype):
        compiled = self.jit(void(nbtype[:], nbtype, int32))(simple_ldexp)
        arg = 0.785375
        exp = 2
        aryx = np.zeros(1, dtype=nptype)
        compiled[1, 1](aryx, arg, exp)
        np.testing.assert_array_equal(aryx, nptype(3.1415))

        arg = np.inf
        compiled[1, 1](aryx, arg, exp)
        np.testing.assert_array_equal(aryx, nptype(np.inf))

        arg = np.nan
        compiled[1, 1](aryx, arg, exp)
        np.testing.assert_array_equal(aryx, nptype(np.nan))

    def test_frexp_f4(self):
        self.template_test_frexp(np.float32, float32)

    def test_ldexp_f4(self):
        self.template_test_ldexp(np.float32, float32)

    def test_frexp_f8(self):
        self.template_test_frexp(np.float64, float64)

    def test_ldexp_f8(self):
        self.template_test_ldexp(np.float64, float64)


class TestCudaComplex(PortedCase):
    def test_cuda_complex_arg(self):
        @self.jit("void(complex128[:], complex128)")
        def foo(a, b):
            i = cuda.grid(1)
            a[i] += b

        a = np.arange(5, dtype=np.complex128)
        a0 = a.copy()
        foo[1, a.shape](a, 2j)
        self.assertTrue(np.allclose(a, a0 + 2j))


class TestCudaJitNoTypes(PortedCase):
    def test_device_array(self):
        @self.jit
        def foo(x, y):
            i = cuda.grid(1)
            y[i] = x[i]

        x = np.arange(10)
        y = np.empty_like(x)
        foo[10, 1](x, y)
        self.assertTrue(np.all(x == y))

    @pytest.mark.slow
    def test_device_jit(self):
        @cuda.jit(device=True)
        def mapper(args):
            a, b, c = args
            return a + b + c

        @cuda.jit(device=True)
        def reducer(a, b):
            return a + b

        @self.jit
        def driver(A, B):
            i = cuda.grid(1)
            if i < B.size:
                args = A[i], A[i] + B[i], B[i]
                B[i] = reducer(mapper(args), 1)

        A = np.arange(100, dtype=np.float32)
        B = np.arange(100, dtype=np.float32)
        Acopy = A.copy()
        Bcopy = B.copy()
        driver[1, 100](A, B)
        np.testing.assert_allclose(Acopy + Acopy + Bcopy + Bcopy + 1, B)

    def test_device_jit_2(self):
        @cuda.jit(device=True)
        def inner(arg):
            return arg + 1

        @self.jit
        def outer(argin, argout):
            argout[0] = inner(argin[0]) + inner(2)

        a = np.zeros(1)
        b = np.zeros(1)
        outer[1, 1, 0](a, b)
        self.assertEqual(b[0], (a[0] + 1) + (2 + 1))


def mandel(tid, min_x, max_x, min_y, max_y, width, height, iters):
    pixel_size_x = (max_x - min_x) / width
    pixel_size_y = (max_y - min_y) / height

    x = tid % width
    y = tid / width

    real = min_x + x * pixel_size_x
    imag = min_y + y * pixel_size_y

    c = complex(real, imag)
    z = 0.0j

    for i in range(iters):
        z = z * z + c
        if (z.real * z.real + z.imag * z.imag) >= 4:
            return i
    return iters


class TestCudaMandel(PortedCase):
    @pytest.mark.slow
    def test_mandel(self):
        """numba-cuda compiles the device function (compile_ptx); here a kernel runs it."""
        dev = cuda.jit((uint32, float64, float64, float64, float64, uint32, uint32, uint32), device=True)(mandel)

        @self.jit
        def kernel(out):
            tid = cuda.grid(1)
            if tid < out.size:
                out[tid] = dev(np.uint32(tid), -2.0, 1.0, -1.0, 1.0, np.uint32(16), np.uint32(8), np.uint32(20))

        out = np.full(128, -1, np.int64)
        kernel[4, 32](out)
        expect = [mandel(t, -2.0, 1.0, -1.0, 1.0, 16, 8, 20) for t in range(128)]
        np.testing.assert_array_equal(out, expect)


# test_enums.py's enums (numba/cuda/tests/cudapy/enum_usecases.py), here at module
# level: the kernels read them as globals


class Color(enum.Enum):
    red = 1
    green = 2
    blue = 3


class Shape(enum.IntEnum):
    circle = 1
    square = 2


class RequestError(enum.IntEnum):
    dummy = 2
    not_found = 404
    internal_error = 500


class TestEnums(PortedCase):
    def test_compare(self):
        def f(a, b, out):
            out[0] = a == b
            out[1] = a != b
            out[2] = a is b
            out[3] = a is not b

        cuda_f = self.jit(f)
        for a, b in [(Color.red, Color.red), (Color.red, Color.green)]:
            got = np.zeros((4,), dtype=np.bool_)
            expected = got.copy()
            cuda_f[1, 1](a, b, got)
            f(a, b, expected)
            self.assertPreciseEqual(expected, got)

    def test_getattr_getitem(self):
        def f(out):
            # Lookup of an enum member on its class
            out[0] = Color.red == Color.green
            out[1] = Color["red"] == Color["green"]

        cuda_f = self.jit(f)
        got = np.zeros((2,), dtype=np.bool_)
        expected = got.copy()
        cuda_f[1, 1](got)
        f(expected)
        self.assertPreciseEqual(expected, got)

    def test_int_coerce(self):
        def f(x, out):
            # Implicit coercion of intenums to ints
            if x > RequestError.internal_error:
                out[0] = x - RequestError.not_found
            else:
                out[0] = x + Shape.circle

        cuda_f = self.jit(f)
        for x in [300, 450, 550]:
            got = np.zeros((1,), dtype=np.int32)
            expected = got.copy()
            cuda_f[1, 1](x, got)
            f(x, expected)
            self.assertPreciseEqual(expected, got)

    def test_int_cast(self):
        def f(x, out):
            # Explicit coercion of intenums to ints
            if x > int16(RequestError.internal_error):
                out[0] = x - int32(RequestError.not_found)
            else:
                out[0] = x + int16(Shape.circle)

        cuda_f = self.jit(f)
        for x in [300, 450, 550]:
            got = np.zeros((1,), dtype=np.int32)
            expected = got.copy()
            cuda_f[1, 1](x, got)
            f(x, expected)
            self.assertEqual(expected, got)


TestCudaFrexpLdexpOnCuda = on_cuda(TestCudaFrexpLdexp)
TestCudaComplexOnCuda = on_cuda(TestCudaComplex)
TestCudaJitNoTypesOnCuda = on_cuda(TestCudaJitNoTypes)
TestCudaMandelOnCuda = on_cuda(TestCudaMandel)
TestEnumsOnCuda = on_cuda(TestEnums)
