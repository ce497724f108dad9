"""Loops over constant tuples around cross-lane ops that numba.cuda compiles and the
CPU target used to refuse ("must iterate over range(...)"): a loop a lane leaves by
``return``, and loops over float or bool constants (cpu/unroll.py, ``Unroller``
and ``_same_kind_constants``). Expected values from NumPy, outputs poisoned, random
inputs, every target."""

import numpy as np
import pytest

from numquad import Wave, xpu

from conftest import cuda_available

TARGETS = [
    "cpu",
    "cpu-debug",
    "python",
    pytest.param("cuda", marks=pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU")),
]

SCALES = (0.5, -1.25, 3.0)


@xpu.jit
def k_return_in_const_loop(x, o):
    i = xpu.grid(1)
    for c in (3, 5, 7):
        if x[i] % c == 0:
            return
    o[i] = Wave.prefixSum(np.int64(1))


@xpu.jit
def k_float_consts(x, o):
    i = xpu.grid(1)
    s = 0.0
    for c in (0.5, -1.25, 3.0):
        s += Wave.shuffleXor(x[i] * c, 1)
    o[i] = s


@xpu.jit
def k_global_float_consts(x, o):
    i = xpu.grid(1)
    s = 0.0
    for c in SCALES:
        if x[i] > c:
            s += Wave.broadcast(x[i] * c, 3)
    o[i] = s


@xpu.jit
def k_bool_consts(x, o):
    i = xpu.grid(1)
    n = np.int64(0)
    for flag in (True, False, True):
        n = n * 10 + Wave.countBits((x[i] > 0) == flag)
    o[i] = n


@xpu.jit
def smallest_factor(v):
    for c in (2, 3, 5, 7):
        if v % c == 0:
            return np.int64(c)
    return np.int64(Wave.countBits(True))


@xpu.jit
def k_lane_fn_return(x, o):
    i = xpu.grid(1)
    o[i] = smallest_factor(np.int64(x[i]))


def _launch(k, target, *args):
    if target == "cpu-debug":
        k = xpu.jit(debug=True)(k.py_func)
    getattr(k, "cpu" if target.startswith("cpu") else target)[2, 32](*args)


def _waves(a):
    return a.reshape(-1, 32)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_a_lane_returns_from_a_loop_over_constants_before_an_op(target, rng):
    x = rng.integers(1, 200, 64).astype(np.int32)
    o = np.full(64, -99, np.int64)
    _launch(k_return_in_const_loop, target, x, o)
    live = (x % 3 != 0) & (x % 5 != 0) & (x % 7 != 0)
    want = np.full(64, -99, np.int64)
    for w in range(2):
        sl = slice(32 * w, 32 * w + 32)
        want[sl] = np.where(live[sl], np.cumsum(live[sl]) - 1, -99)
    np.testing.assert_array_equal(o, want)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_loops_over_float_constants(target, rng):
    x = rng.standard_normal(64) * 2
    o = np.full(64, np.nan)
    _launch(k_float_consts, target, x, o)
    want = np.zeros(64)
    for c in (0.5, -1.25, 3.0):
        want += (x * c)[np.arange(64) ^ 1]
    np.testing.assert_array_equal(o, want)

    o = np.full(64, np.nan)
    _launch(k_global_float_consts, target, x, o)
    want = np.zeros(64)
    for c in SCALES:
        b = np.repeat(_waves(x * c)[:, 3], 32)
        src_active = np.repeat(_waves(x > c)[:, 3], 32)
        # an inactive source lane gives the reader's own value (docs/ops.md)
        want += np.where(x > c, np.where(src_active, b, x * c), 0.0)
    np.testing.assert_array_equal(o, want)


@pytest.mark.parametrize("target", TARGETS)
def test_a_loop_over_bool_constants(target, rng):
    x = rng.integers(-5, 5, 64)
    o = np.full(64, -99, np.int64)
    _launch(k_bool_consts, target, x, o)
    pos = _waves(x > 0).sum(axis=1)
    want = np.repeat(pos * 100 + (32 - pos) * 10 + pos, 32)
    np.testing.assert_array_equal(o, want)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_a_lane_function_returns_from_a_loop_over_constants(target, rng):
    x = rng.integers(1, 400, 64).astype(np.int32)
    o = np.full(64, -99, np.int64)
    _launch(k_lane_fn_return, target, x, o)
    want = np.full(64, -1, np.int64)
    for c in (7, 5, 3, 2):
        want = np.where(x % c == 0, c, want)
    rest = want == -1
    for w in range(2):
        sl = slice(32 * w, 32 * w + 32)
        want[sl][rest[sl]] = rest[sl].sum()
    np.testing.assert_array_equal(o, want)


@pytest.mark.slow
def test_a_lane_function_with_such_a_loop_on_arrays(rng):
    x = rng.integers(1, 400, 70)
    got = smallest_factor(x)
    want = np.full(70, -1, np.int64)
    for c in (7, 5, 3, 2):
        want = np.where(x % c == 0, c, want)
    rest = want == -1
    for w in range(0, 70, 32):
        sl = slice(w, min(w + 32, 70))
        want[sl][rest[sl]] = rest[sl].sum()
    np.testing.assert_array_equal(got, want)
