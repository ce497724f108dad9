"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_inline.py (see _port.py).

Adapted: the kernel's cuda.jit -> self.jit (xpu.jit on one target); the called
function keeps numba-cuda's ``cuda.jit(inline=...)`` / ``cuda.jit(forceinline=...)``
(no ``device=True``, as numba-cuda writes it). Left out: the LLVM IR checks of
_test_call_inline and _test_call_forceinline (whether numba.cuda's IR has a call
or ``alwaysinline``: codegen; the launch and its result stay), and
test_compile_forceinline_ltoir_only and test_compile_forceinline (``cuda.compile``
to LTO-IR, a host API with no kernel launch).
"""

import pytest
import numpy as np
from numba import cuda
from numba.cuda import types

from _port import PortedCase, on_cuda


class TestCudaInline(PortedCase):
    def _test_call_inline(self, inline, inline_expected):
        """Test @cuda.jit(inline=...)"""
        a = np.ones(2, dtype=np.int32)

        sig = (types.int32[::1],)

        @cuda.jit(inline=inline)
        def set_zero(a):
            a[0] = 0

        @self.jit(sig)
        def call_set_zero(a):
            set_zero(a)

        call_set_zero[1, 2](a)

        expected = np.arange(2, dtype=np.int32)
        self.assertTrue(np.all(a == expected))

    def test_call_inline_always(self):
        self._test_call_inline("always", True)

    def test_call_inline_never(self):
        self._test_call_inline("never", False)

    def test_call_inline_true(self):
        self._test_call_inline(True, True)

    def test_call_inline_false(self):
        self._test_call_inline(False, False)

    def test_call_inline_costmodel_false(self):
        def cost_model(expr, caller_info, callee_info):
            return False

        self._test_call_inline(cost_model, False)

    def test_call_inline_costmodel_true(self):
        def cost_model(expr, caller_info, callee_info):
            return True

        self._test_call_inline(cost_model, True)

    def _test_call_forceinline(self, forceinline):
        """Test @cuda.jit(forceinline=...)"""
        a = np.ones(2, dtype=np.int32)

        sig = (types.int32[::1],)

        @cuda.jit(forceinline=forceinline)
        def set_zero(a):
            a[0] = 0

        @self.jit(sig)
        def call_set_zero(a):
            set_zero(a)

        call_set_zero[1, 2](a)

        expected = np.arange(2, dtype=np.int32)
        self.assertTrue(np.all(a == expected))

    @pytest.mark.slow
    def test_call_forceinline_true(self):
        self._test_call_forceinline(True)

    @pytest.mark.slow
    def test_call_forceinline_false(self):
        self._test_call_forceinline(False)


TestCudaInlineOnCuda = on_cuda(TestCudaInline)
