"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_userexc.py (see _port.py).

Adapted: cuda.jit -> self.jit (xpu.jit on one target).
"""

from numba import cuda  # noqa: F401  (numba-cuda's imports)

from _port import PortedCase, on_cuda


class MyError(Exception):
    pass


regex_pattern = r'In function [\'"]test_exc[\'"], file [\:\.\/\\\-a-zA-Z_0-9]+, line \d+'


class TestUserExc(PortedCase):
    def test_user_exception(self):
        @self.jit("void(int32)", debug=True, opt=False)
        def test_exc(x):
            if x == 1:
                raise MyError
            elif x == 2:
                raise MyError("foo")

        test_exc[1, 1](0)  # no raise
        with self.assertRaises(MyError) as cm:
            test_exc[1, 1](1)
        self.assertRegex(str(cm.exception), regex_pattern)
        self.assertIn("tid=[0, 0, 0] ctaid=[0, 0, 0]", str(cm.exception))
        with self.assertRaises(MyError) as cm:
            test_exc[1, 1](2)
        self.assertRegex(str(cm.exception), regex_pattern)
        self.assertRegex(str(cm.exception), regex_pattern)
        self.assertIn("tid=[0, 0, 0] ctaid=[0, 0, 0]: foo", str(cm.exception))


TestUserExcOnCuda = on_cuda(TestUserExc)
