"""Loops over ``enumerate(...)`` and ``zip(...)`` of kernel parameters around
cross-lane ops.

numba.cuda compiles ``for j, c in enumerate(w):`` and ``for a, b in zip(w, t):``
around warp functions; the CPU target refused them ("a loop around cross-lane ops
must iterate over range(...)") and the CUDA target's mask rewrite took ``len`` of
the enumerate object. Both targets now loop by index, each argument evaluated once,
as Python does. Expected values come from a NumPy model of the waves written here
(integers, so that no summation order matters); outputs are poisoned first.
"""

import numpy as np
import pytest
from numba import cuda, typeof

from numquad import NumquadCompileError, NumquadTypeError, Wave, xpu

from conftest import TARGETS

W = 32


def _waves(v):
    return v.reshape(-1, W)


@xpu.jit
def k_enumerate(x, w, s0, out):
    i = cuda.grid(1)
    acc = 0
    for j, c in enumerate(w, s0):
        acc += Wave.prefixSum(x[i] * c) * j
    out[i] = acc


@xpu.jit
def k_zip_break(x, w, t, out):
    i = cuda.grid(1)
    acc = 0
    for a, b in zip(w, t):
        if x[i] > a:  # lanes leave the loop at different times
            break
        acc += Wave.reduceSum(x[i] * b)
    out[i] = acc


@xpu.jit
def k_enumerate_pair(x, w, out):
    i = cuda.grid(1)
    acc = 0
    for p in enumerate(w):
        acc += Wave.shuffleXor(x[i] + p[1], p[0] & 7)
    out[i] = acc


def _exclusive(v):
    return np.cumsum(_waves(v), axis=1) - _waves(v)


def _want_enumerate(x, w, s0):
    acc = np.zeros_like(x)
    for j, c in enumerate(w, s0):
        acc += (_exclusive(x * c) * j).ravel()
    return acc


def _want_zip_break(x, w, t):
    acc = np.zeros_like(x)
    live = np.ones(x.shape, bool)
    for a, b in zip(w, t):
        live &= ~(x > a)
        v = np.where(live, x * b, 0)
        acc += np.where(live, np.repeat(_waves(v).sum(axis=1), W), 0)
    return acc


def _want_enumerate_pair(x, w):
    acc = np.zeros_like(x)
    lanes = np.arange(x.size)
    for j, c in enumerate(w):
        acc += (x + c)[lanes ^ (j & 7)]
    return acc


def _inputs(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, 96).astype(np.int64)
    w = rng.integers(-9, 9, 6).astype(np.int64)
    return x, w


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_enumerate_with_a_start(target):
    x, w = _inputs(1)
    out = np.full(x.size, -777, np.int64)
    getattr(k_enumerate, target)[3, 32](x, w, np.int64(-3), out)
    np.testing.assert_array_equal(out, _want_enumerate(x, w, -3))


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_zip_of_an_array_and_a_shorter_tuple_with_a_lane_varying_break(target):
    x, w = _inputs(2)
    t = (3, -1, 2, 7)  # zip stops at the shorter one
    out = np.full(x.size, -777, np.int64)
    getattr(k_zip_break, target)[3, 32](x, w + 40, t, out)
    want = _want_zip_break(x, w + 40, t)
    assert np.count_nonzero(want) > 10  # some lanes stay in the loop
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_enumerate_into_one_name(target):
    x, w = _inputs(3)
    out = np.full(x.size, -777, np.int64)
    getattr(k_enumerate_pair, target)[3, 32](x, w, out)
    np.testing.assert_array_equal(out, _want_enumerate_pair(x, w))


def test_the_ptx_loops_with_shuffles():
    x, w = _inputs(4)
    sig = (typeof(x), typeof(w), typeof((3, -1, 2, 7)), typeof(x))
    ptx = k_zip_break.inspect_ptx(sig, cc=(9, 0))
    assert "shfl.sync" in ptx or "redux.sync" in ptx
    ptx = k_enumerate.inspect_ptx((typeof(x), typeof(w), typeof(np.int64(1)), typeof(x)), cc=(9, 0))
    assert "shfl.sync" in ptx


def test_enumerate_of_a_local_tuple_is_refused_in_one_line():
    @xpu.jit
    def k(x, out):
        i = cuda.grid(1)
        ws = (x[0], x[1])
        acc = 0
        for j, c in enumerate(ws):
            acc += Wave.prefixSum(x[i] * c)
        out[i] = acc

    x = np.arange(32, dtype=np.int64)
    with pytest.raises(NumquadCompileError, match=r"test_loop_iterables.py.*over parameters.*enumerate.*zip"):
        k[1, 32](x, np.zeros(32, np.int64))


@xpu.jit
def k_negative_start(x, w, out):
    i = cuda.grid(1)
    acc = 0
    for j, c in enumerate(w, -2):
        acc += Wave.prefixSum(x[i] * c) * j
    out[i] = acc


@xpu.jit
def k_float_start(x, w, s0, out):
    i = cuda.grid(1)
    acc = 0.0
    for j, c in enumerate(w, s0):
        acc += Wave.readFirst(x[i] * c) * j
    out[i] = acc


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_enumerate_with_a_negative_literal_start(target):
    x, w = _inputs(5)
    out = np.full(x.size, -777, np.int64)
    getattr(k_negative_start, target)[3, 32](x, w, out)
    np.testing.assert_array_equal(out, _want_enumerate(x, w, -2))


def test_a_float_start_is_refused_as_numba_refuses_it():
    # a probe: the loop by index computed float indices where Python raises TypeError
    # and Numba refuses "Only integers supported as start value in enumerate"
    x, w = _inputs(6)
    x = x.astype(np.float64)
    with pytest.raises(NumquadTypeError, match=r"test_loop_iterables.py.*Only integers supported as start value"):
        k_float_start[3, 32](x, w, 1.5, np.zeros(x.size))
    sig = (typeof(x), typeof(w), typeof(1.5), typeof(x))
    with pytest.raises(NumquadTypeError, match=r"Only integers supported as start value"):
        k_float_start.inspect_ptx(sig, cc=(9, 0))
