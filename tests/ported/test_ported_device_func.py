"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_device_func.py (see _port.py).

The rest of TestDeviceFunc: test_use_add2f, test_indirect_add2f,
test_cpu_dispatcher, test_cpu_dispatcher_other_module and test_device_casting are
ported in test_ported_examples.py. Adapted: cuda.jit on kernels -> self.jit
(xpu.jit on one target); test_device_func_as_kernel_disallowed's device function
is ``self.jit(device=True)`` (launched on the target). Left out:
test_inspect_llvm, test_inspect_asm and test_inspect_sass_disallowed
(numba.cuda's compile_device / inspect_* of a device function: codegen
introspection), and TestDeclareDevice / TestDeclareDeviceCABI (``cuda.declare_device``
and linking CUDA C/PTX sources: not supported on the CPU, docs/numba-cuda.md).
"""

import re

import numpy as np

from numba import cuda, jit
from numba.cuda.core.errors import TypingError

from _port import PortedCase, on_cuda
from test_ported_examples import TestDeviceFunc as _PortedEarlier


class TestDeviceFunc(PortedCase):
    _check_cpu_dispatcher = _PortedEarlier._check_cpu_dispatcher

    def test_cpu_dispatcher_invalid(self):
        # Test invalid usage
        # Explicit signature disables compilation, which also disable
        # compiling on CUDA.
        @jit("(i4, i4)")
        def add(a, b):
            return a + b

        # Check that the right error message is provided.
        with self.assertRaises(TypingError) as raises:
            self._check_cpu_dispatcher(add)
        msg = "Untyped global name 'add':.*using cpu function on device"
        expected = re.compile(msg)
        self.assertTrue(expected.search(str(raises.exception)) is not None)

    def test_device_func_as_kernel_disallowed(self):
        @self.jit(device=True)
        def f():
            pass

        with self.assertRaises(RuntimeError) as raises:
            f[1, 1]()

        self.assertIn(
            "Cannot compile a device function as a kernel",
            str(raises.exception),
        )


TestDeviceFuncOnCuda = on_cuda(TestDeviceFunc)
