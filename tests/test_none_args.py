"""``None`` as a kernel argument, as numba.cuda takes it (its type is ``none``, and
``x is None`` on it is a constant Numba prunes by): found by a probe of argument
typing, where the CPU and python targets refused it. Expected values from NumPy."""

import numpy as np
import pytest
from numba import cuda

from numquad import xpu, Wave


@cuda.jit(device=True)
def _scale(v, s):
    if s is None:
        return v
    return v * s


@xpu.jit
def _maybe_scaled(x, s, o):
    i = xpu.grid(1)
    if s is None:
        o[i] = x[i]
    else:
        o[i] = -x[i] * s
    o[i] += Wave.reduceSum(x[i])


@xpu.jit
def _through_a_device_function(x, s, o):
    i = xpu.grid(1)
    o[i] = _scale(x[i], s) + Wave.shuffle(x[i], 3)


def _wave_sums(x):
    return np.repeat(x.reshape(-1, 32).sum(axis=1, dtype=x.dtype), 32)


@pytest.mark.parametrize("s", [None, np.int64(3), None], ids=["none", "int", "none-again"])
def test_a_none_argument_takes_its_branch(target, rng, s):
    x = rng.integers(-1000, 1000, 64)
    o = np.full(64, -777777, np.int64)
    getattr(_maybe_scaled, target)[2, 32](x, s, o)
    np.testing.assert_array_equal(o, (x if s is None else -x * s) + _wave_sums(x))


@pytest.mark.parametrize("s", [None, np.float32(0.5)], ids=["none", "float32"])
def test_a_none_argument_reaches_a_device_function(target, rng, s):
    x = rng.random(64).astype(np.float32)
    o = np.full(64, np.nan, np.float32)
    getattr(_through_a_device_function, target)[2, 32](x, s, o)
    shuffled = x.reshape(2, 32)[:, 3].repeat(32)
    np.testing.assert_array_equal(o, (x if s is None else x * s) + shuffled)


def test_the_python_target_takes_none_too(rng):
    x = rng.integers(-1000, 1000, 64)
    o = np.full(64, -777777, np.int64)
    _maybe_scaled.python[2, 32](x, None, o)
    np.testing.assert_array_equal(o, x + _wave_sums(x))
