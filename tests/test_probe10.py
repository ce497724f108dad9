"""Regression tests for the tenth probe round (hand-written kernels beside the
fuzzer's; docs/RELIABILITY.md's table has a row for each).

Each kernel runs on the CPU target (release and debug=True builds) and on the
python target (numquad/simt.py); outputs are poisoned first and the expected
values come from Python or NumPy.
"""

import math

import numpy as np
import pytest
from numba import cuda

from numquad import Wave, xpu

POISON = -7777
TARGETS = [("cpu", False), ("cpu", True), ("python", False)]


def _launch(fn, target, debug, grid, block, *args):
    getattr(xpu.jit(debug=debug)(fn), target)[grid, block](*args)


# -- hasattr of a module or class the kernel reads ---------------------------------


def k_hasattr(out):
    i = cuda.grid(1)
    out[i, 0] = hasattr(Wave, "prefixSum")
    out[i, 1] = hasattr(cuda, "grid")
    out[i, 2] = hasattr(xpu, "syncthreads")
    out[i, 3] = hasattr(math, "sqrt")
    out[i, 4] = hasattr(Wave, "noSuchOp")
    out[i, 5] = Wave.reduceSum(1) if hasattr(Wave, "reduceSum") else -1


@pytest.mark.parametrize("target,debug", TARGETS)
def test_hasattr_of_a_module_or_class_is_pythons_answer(target, debug):
    # the CPU target gave 0 for the first three (Numba's view of the object is not the
    # user's) and failed inside Numba's typing with an AttributeError for the fifth
    out = np.full((40, 6), POISON, np.int64)
    _launch(k_hasattr, target, debug, 1, 40, out)
    lanes = np.where(np.arange(40) < 32, 32, 8)
    want = np.stack([np.ones(40), np.ones(40), np.ones(40), np.ones(40), np.zeros(40), lanes], axis=1)
    np.testing.assert_array_equal(out, want.astype(np.int64))


# -- the interpreter's integer unary operators and mixed-sign comparisons -----------


def k_unary_narrow(i8, u8, out):
    i = cuda.grid(1)
    out[i, 0] = Wave.reduceSum(-i8[i])
    out[i, 1] = Wave.reduceSum(~u8[i])
    out[i, 2] = Wave.reduceSum(-u8[i])


@pytest.mark.slow
def test_unary_operators_of_narrow_integers_widen_as_numba_does_in_the_interpreter():
    rng = np.random.default_rng(10)
    i8 = rng.integers(-128, 128, 32).astype(np.int8)
    u8 = rng.integers(0, 256, 32).astype(np.uint8)
    want = np.array([(-i8).astype(np.int64).sum(), (~u8).astype(np.int64).sum(), (-u8).astype(np.int64).sum()])
    for target, debug in TARGETS:
        out = np.full((32, 3), POISON, np.int64)
        _launch(k_unary_narrow, target, debug, 1, 32, i8, u8, out)
        np.testing.assert_array_equal(out, np.broadcast_to(want, (32, 3)), err_msg=target)


def k_mixed_sign_cmp(u, s, out):
    i = cuda.grid(1)
    out[i, 0] = u[i] == s[i]
    out[i, 1] = u[i] != s[i]
    out[i, 2] = u[i] < s[i]
    out[i, 3] = s[i] <= u[i]
    out[i, 4] = Wave.reduceSum(np.int64(u[i] > s[i]))
    out[i, 5] = u[i] >= s[i]


@pytest.mark.slow
def test_uint64_compared_with_int64_in_float64_in_the_interpreter():
    # Numba compares a uint64 with an int64 in float64 on both compiled targets
    # (2**63 + 1 == 2**63 - 1 is True); the interpreter used NumPy 2's exact compare
    rng = np.random.default_rng(11)
    u = np.uint64(2**63) + rng.integers(-4, 5, 40).astype(np.int64).astype(np.uint64)
    s = np.int64(2**63 - 1) - rng.integers(0, 3, 40)
    s[:4] = -1
    fu, fs = u.astype(np.float64), s.astype(np.float64)
    want = np.stack([fu == fs, fu != fs, fu < fs, fs <= fu, np.zeros(40), fu >= fs], axis=1)
    want = want.astype(np.int64)
    gt = (fu > fs).astype(np.int64)
    want[:32, 4], want[32:, 4] = gt[:32].sum(), gt[32:].sum()
    assert want[:, 0].any() and not want[:, 0].all()  # the data tells the rules apart
    for target, debug in TARGETS:
        out = np.full((40, 6), POISON, np.int64)
        _launch(k_mixed_sign_cmp, target, debug, 1, 40, u, s, out)
        np.testing.assert_array_equal(out, want, err_msg=target)
