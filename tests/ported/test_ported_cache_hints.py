"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_cache_hints.py (see _port.py).

Adapted: cuda.jit on the kernels -> self.jit (xpu.jit on one target). Each
numba-cuda test loops over float16 and wider types in one test: here the float16
cases run as ``<test>_fp16`` (cpu_xfail: float16 is out of scope on the CPU) and
the others as ``<test>`` (same kernels, inputs and assertions). test_bad_indices
and test_unsupported_dtypes compile with ``cuda.compile_ptx`` on the CUDA target, as
numba-cuda, and with ``xpu.jit(sig)`` (an eager compile) on the CPU, which raises
NumquadTypeError for numba.cuda's TypingError. Left out: the PTX checks
(``inspect_asm`` for ``ld.global.<hint>`` / ``st.global.<hint>``) and the
``cpointer`` subtests (``compile_ptx`` of a ``CPointer`` argument, PTX text only).
"""

import pytest
from numba import cuda, errors, typeof, types
import numpy as np

from numquad.errors import NumquadTypeError

from _port import PortedCase, on_cuda, cpu_xfail, fp16_xfail

tested_types = (
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
)
# tested_types without / with only float16 (the <test> and <test>_fp16 halves)
wide_types = tuple(ty for ty in tested_types if ty is not np.float16)
fp16_types = (np.float16,)

load_operators = (
    (cuda.ldca, "ca"),
    (cuda.ldcg, "cg"),
    (cuda.ldcs, "cs"),
    (cuda.ldlu, "lu"),
    (cuda.ldcv, "cv"),
)
store_operators = (
    (cuda.stcg, "cg"),
    (cuda.stcs, "cs"),
    (cuda.stwb, "wb"),
    (cuda.stwt, "wt"),
)


class TestCacheHints(PortedCase):
    def _loads(self, tested_types):
        for operator, modifier in load_operators:

            @self.jit
            def f(r, x):
                for i in range(len(r)):
                    r[i] = operator(x, i)  # noqa: B023

            for ty in tested_types:
                x = np.arange(5).astype(ty)
                numba_type = typeof(x)
                bitwidth = numba_type.dtype.bitwidth

                with self.subTest(operator=operator, ty=ty, input_type="array"):
                    r = np.zeros_like(x)
                    f[1, 1](r, x)
                    np.testing.assert_equal(r, x)

    @pytest.mark.slow
    def test_loads(self):
        self._loads(wide_types)

    @fp16_xfail
    def test_loads_fp16(self):
        self._loads(fp16_types)

    def _loads_2d(self, tested_types):
        for operator, modifier in load_operators:

            @self.jit
            def f(r, x):
                for i in range(x.shape[0]):
                    for j in range(x.shape[1]):
                        r[i, j] = operator(x, (i, j))  # noqa: B023

            for ty in tested_types:
                x = np.arange(12).reshape(3, 4).astype(ty)
                numba_type = typeof(x)
                bitwidth = numba_type.dtype.bitwidth

                with self.subTest(operator=operator, ty=ty, dims=2):
                    r = np.zeros_like(x)
                    f[1, 1](r, x)
                    np.testing.assert_equal(r, x)

    @pytest.mark.slow
    def test_loads_2d(self):
        self._loads_2d(wide_types)

    @fp16_xfail
    def test_loads_2d_fp16(self):
        self._loads_2d(fp16_types)

    def _stores(self, tested_types):
        for operator, modifier in store_operators:

            @self.jit
            def f(r, x):
                for i in range(len(r)):
                    operator(r, i, x[i])  # noqa: B023

            for ty in tested_types:
                x = np.arange(5).astype(ty)
                numba_type = typeof(x)
                bitwidth = numba_type.dtype.bitwidth

                with self.subTest(operator=operator, ty=ty):
                    r = np.zeros_like(x)
                    f[1, 1](r, x)
                    np.testing.assert_equal(r, x)

    @pytest.mark.slow
    def test_stores(self):
        self._stores(wide_types)

    @fp16_xfail
    def test_stores_fp16(self):
        self._stores(fp16_types)

    def _stores_2d(self, tested_types):
        for operator, modifier in store_operators:

            @self.jit
            def f(r, x):
                for i in range(x.shape[0]):
                    for j in range(x.shape[1]):
                        operator(r, (i, j), x[i, j])  # noqa: B023

            for ty in tested_types:
                x = np.arange(12).reshape(3, 4).astype(ty)
                numba_type = typeof(x)
                bitwidth = numba_type.dtype.bitwidth

                with self.subTest(operator=operator, ty=ty):
                    r = np.zeros_like(x)
                    f[1, 1](r, x)
                    np.testing.assert_equal(r, x)

    @pytest.mark.slow
    def test_stores_2d(self):
        self._stores_2d(wide_types)

    @fp16_xfail
    def test_stores_2d_fp16(self):
        self._stores_2d(fp16_types)

    def compile_ptx(self, pyfunc, sig):
        """numba-cuda's cuda.compile_ptx on the CUDA target; an eager xpu.jit(sig)
        compile on the CPU."""
        if self.target == "cuda":
            return cuda.compile_ptx(pyfunc, sig)
        return self.jit(sig)(pyfunc)

    @pytest.mark.slow
    def test_bad_indices(self):
        typing_errors = (errors.TypingError, NumquadTypeError)

        def float_indices(x):
            cuda.ldcs(x, 1.0)

        sig_1d = (types.float32[::1],)

        msg = "float64 is not a valid index"
        with self.assertRaisesRegex(typing_errors, msg):
            self.compile_ptx(float_indices, sig_1d)

        def too_long_indices(x):
            cuda.ldcs(x, (1, 2))

        msg = "Expected 1 indices, got 2"
        with self.assertRaisesRegex(typing_errors, msg):
            self.compile_ptx(too_long_indices, sig_1d)

        def too_short_indices_scalar(x):
            cuda.ldcs(x, 1)

        def too_short_indices_tuple(x):
            cuda.ldcs(x, (1,))

        sig_2d = (types.float32[:, ::1],)

        msg = "Expected 2 indices, got a scalar"
        with self.assertRaisesRegex(typing_errors, msg):
            self.compile_ptx(too_short_indices_scalar, sig_2d)

        msg = "Expected 2 indices, got 1"
        with self.assertRaisesRegex(typing_errors, msg):
            self.compile_ptx(too_short_indices_tuple, sig_2d)

    def test_unsupported_dtypes(self):
        typing_errors = (errors.TypingError, NumquadTypeError)

        def load_complex(r, x):
            r[0] = cuda.ldcs(x, 0)

        # complex types are not supported (not integer or float)
        numba_type = typeof(np.zeros(1, dtype=np.complex64))
        sig = (numba_type, numba_type)

        msg = "ldcs requires array of integer or float type"
        with self.assertRaisesRegex(typing_errors, msg):
            self.compile_ptx(load_complex, sig)


TestCacheHintsOnCuda = on_cuda(TestCacheHints)
