"""Ported from numba-cuda 0.30.4 numba/cuda/tests/cudapy/test_flow_control.py (see _port.py).

Adapted: cuda.jit on the kernels -> self.jit (xpu.jit on one target); numba-cuda's
``TestCase`` -> PortedCase. The kernels take four intp scalars and store nothing
(their results are locals), so each test checks that the kernel compiles and runs
wherever the Python function runs, and raises the same exception type where it
raises, as numba-cuda's run_test does. Left out: TestCFGraph and
TestRealCodeDomFront (numba.cuda's compiler internals, ``CFGraph`` and
``ControlFlowAnalysis`` on Python bytecode, no kernel), and try_except_usecase
(used by no test). numba-cuda's ``unittest.expectedFailure`` test_for_loop8 and
test_for_loop8_npm pass on the CPU (``range(1, 0, 0)`` raises ValueError in the
kernel, as in Python): expected failures on the CUDA target only.
"""

import pytest
import itertools

import unittest
from numba.cuda import types

from _port import PortedCase, on_cuda, expected_failure_on_cuda


def for_loop_usecase1(x, y, res1, res2):
    result = 0
    for i in range(x):
        result += i
    res1 = result  # noqa: F841


def for_loop_usecase2(x, y, res1, res2):
    result = 0
    for i, j in enumerate(range(x, y, -1)):
        result += i * j
    res1 = result  # noqa: F841


def for_loop_usecase4(x, y, res1, res2):
    result = 0
    for i in range(10):
        for j in range(10):
            result += 1
    res1 = result  # noqa: F841


def for_loop_usecase5(x, y, res1, res2):
    result = 0
    for i in range(x):
        result += 1
        if result > y:
            break
    res1 = result  # noqa: F841


def for_loop_usecase6(x, y, res1, res2):
    result = 0
    for i in range(x):
        if i > y:
            continue
        result += 1
    res1 = result  # noqa: F841


def for_loop_usecase7(x, y, res1, res2):
    for i in range(x):
        x = 0
        for j in range(x):
            res1 = 1  # noqa: F841
        else:
            pass
    res1 = 0  # noqa: F841


def for_loop_usecase8(x, y, res1, res2):
    result = 0
    for i in range(x, y, y - x + 1):
        result += 1
    res1 = result  # noqa: F841


def for_loop_usecase9(x, y, res1, res2):
    z = 0
    for i in range(x):
        x = 0
        for j in range(x):
            if j == x / 2:
                z += j
                break
        else:
            z += y

    res1 = z  # noqa: F841


def for_loop_usecase10(x, y, res1, res2):
    for i in range(x):
        if i == y:
            z = y
            break
    else:
        z = i * 2
    res1 = z  # noqa: F841


def while_loop_usecase1(x, y, res1, res2):
    result = 0
    i = 0
    while i < x:
        result += i
        i += 1
    res1 = result  # noqa: F841


def while_loop_usecase2(x, y, res1, res2):
    result = 0
    while result != x:
        result += 1
    res1 = result  # noqa: F841


def while_loop_usecase3(x, y, res1, res2):
    result = 0
    i = 0
    j = 0
    while i < x:
        while j < y:
            result += i + j
            i += 1
            j += 1
    res1 = result  # noqa: F841


def while_loop_usecase4(x, y, res1, res2):
    result = 0
    while True:
        result += 1
        if result > x:
            break
    res1 = result  # noqa: F841


def while_loop_usecase5(x, y, res1, res2):
    result = 0
    while result < x:
        if result > y:
            result += 2
            continue
        result += 1
    res1 = result  # noqa: F841


def ifelse_usecase1(x, y, res1, res2):
    if x > 0:
        pass
    elif y > 0:
        pass
    else:
        pass
    res1 = True  # noqa: F841


def ifelse_usecase2(x, y, res1, res2):
    if x > y:
        res1 = 1  # noqa: F841
    elif x == 0 or y == 0:
        res1 = 2  # noqa: F841
    else:
        res1 = 3  # noqa: F841


def ifelse_usecase3(x, y, res1, res2):
    if x > 0:
        if y > 0:
            res1 = 1  # noqa: F841
        elif y < 0:
            res1 = 1  # noqa: F841
        else:
            res1 = 0  # noqa: F841
    elif x < 0:
        res1 = 1  # noqa: F841
    else:
        res1 = 0  # noqa: F841


def ifelse_usecase4(x, y, res1, res2):
    if x == y:
        res1 = 1  # noqa: F841


def ternary_ifelse_usecase1(x, y, res1, res2):
    res1 = True if x > y else False  # noqa: F841


def double_infinite_loop(x, y, res1, res2):
    L = x
    i = y

    while True:
        while True:
            if i == L - 1:
                break
            i += 1
        i += 1
        if i >= L:
            break

    res1 = i  # noqa: F841
    res2 = L  # noqa: F841


class TestFlowControl(PortedCase):
    def run_test(
        self,
        pyfunc,
        x_operands,
        y_operands,
        res1_operands,
        res2_operands,
    ):
        cfunc = self.jit((types.intp, types.intp, types.intp, types.intp))(pyfunc)
        for x, y, res1, res2 in itertools.product(x_operands, y_operands, res1_operands, res2_operands):
            pyerr = None
            cerr = None
            try:
                pyfunc(x, y, res1, res2)
            except Exception as e:
                pyerr = e

            cres1 = 0
            cres2 = 0
            try:
                cfunc[1, 1](x, y, cres1, cres2)
            except Exception as e:
                if pyerr is None:
                    raise
                cerr = e
                self.assertEqual(type(pyerr), type(cerr))
            else:
                if pyerr is not None:
                    self.fail("Invalid for pure-python but numba-cuda works\n" + str(pyerr))
                self.assertEqual(res1, cres1)
                self.assertEqual(res2, cres2)

    def test_for_loop1(self):
        self.run_test(for_loop_usecase1, [-10, 0, 10], [0], [0], [0])

    def test_for_loop1_npm(self):
        self.test_for_loop1()

    def test_for_loop2(self):
        self.run_test(for_loop_usecase2, [-10, 0, 10], [-10, 0, 10], [0], [0])

    def test_for_loop2_npm(self):
        self.test_for_loop2()

    def test_for_loop4(self):
        self.run_test(for_loop_usecase4, [10], [10], [0], [0])

    def test_for_loop4_npm(self):
        self.test_for_loop4()

    @pytest.mark.slow
    def test_for_loop5(self):
        self.run_test(for_loop_usecase5, [100], [50], [0], [0])

    def test_for_loop5_npm(self):
        self.test_for_loop5()

    def test_for_loop6(self):
        self.run_test(for_loop_usecase6, [100], [50], [0], [0])

    def test_for_loop6_npm(self):
        self.test_for_loop6()

    def test_for_loop7(self):
        self.run_test(for_loop_usecase7, [5], [0], [0], [0])

    def test_for_loop7_npm(self):
        self.test_for_loop7()

    @expected_failure_on_cuda("numba-cuda's expectedFailure (range() with a zero step raises no ValueError)")
    def test_for_loop8(self):
        self.run_test(for_loop_usecase8, [0, 1], [0, 2, 10], [0], [0])

    @expected_failure_on_cuda("numba-cuda's expectedFailure (range() with a zero step raises no ValueError)")
    def test_for_loop8_npm(self):
        self.test_for_loop8()

    def test_for_loop9(self):
        self.run_test(for_loop_usecase9, [0, 1], [0, 2, 10], [0], [0])

    def test_for_loop9_npm(self):
        self.test_for_loop9()

    def test_for_loop10(self):
        self.run_test(for_loop_usecase10, [5], [2, 7], [0], [0])

    def test_for_loop10_npm(self):
        self.test_for_loop10()

    def test_while_loop1(self):
        self.run_test(while_loop_usecase1, [10], [0], [0], [0])

    def test_while_loop1_npm(self):
        self.test_while_loop1()

    @pytest.mark.slow
    def test_while_loop2(self):
        self.run_test(while_loop_usecase2, [10], [0], [0], [0])

    def test_while_loop2_npm(self):
        self.test_while_loop2()

    def test_while_loop3(self):
        self.run_test(while_loop_usecase3, [10], [10], [0], [0])

    def test_while_loop3_npm(self):
        self.test_while_loop3()

    def test_while_loop4(self):
        self.run_test(while_loop_usecase4, [10], [0], [0], [0])

    def test_while_loop4_npm(self):
        self.test_while_loop4()

    def test_while_loop5(self):
        self.run_test(while_loop_usecase5, [0, 5, 10], [0, 5, 10], [0], [0])

    def test_while_loop5_npm(self):
        self.test_while_loop5()

    def test_ifelse1(self):
        self.run_test(ifelse_usecase1, [-1, 0, 1], [-1, 0, 1], [0], [0])

    def test_ifelse1_npm(self):
        self.test_ifelse1()

    def test_ifelse2(self):
        self.run_test(ifelse_usecase2, [-1, 0, 1], [-1, 0, 1], [0], [0])

    def test_ifelse2_npm(self):
        self.test_ifelse2()

    def test_ifelse3(self):
        self.run_test(ifelse_usecase3, [-1, 0, 1], [-1, 0, 1], [0], [0])

    def test_ifelse3_npm(self):
        self.test_ifelse3()

    def test_ifelse4(self):
        self.run_test(ifelse_usecase4, [-1, 0, 1], [-1, 0, 1], [0], [0])

    def test_ifelse4_npm(self):
        self.test_ifelse4()

    def test_ternary_ifelse1(self):
        self.run_test(
            ternary_ifelse_usecase1,
            [-1, 0, 1],
            [-1, 0, 1],
            [0],
            [0],
        )

    def test_ternary_ifelse1_npm(self):
        self.test_ternary_ifelse1()

    @pytest.mark.slow
    def test_double_infinite_loop(self):
        self.run_test(double_infinite_loop, [10], [0], [0], [0])

    def test_double_infinite_loop_npm(self):
        self.test_double_infinite_loop()


TestFlowControlOnCuda = on_cuda(TestFlowControl)
