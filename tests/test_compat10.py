"""numba.cuda compatibility, tenth round: Enum/IntEnum members as kernel arguments
(numba supports them in nopython code) and numba's TypingError on the compile-time
mistakes numba.cuda reports with it. Expected values from NumPy or plain Python."""

import enum
import pickle

import numpy as np
import pytest
from numba import cuda

from numquad import xpu


class Color(enum.Enum):
    red = 1
    green = 2
    blue = 3


class Level(enum.IntEnum):
    low = 3
    mid = 40
    high = 500


@xpu.jit
def k_enum_compare(a, b, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i, 0] = a == b
        out[i, 1] = a != b
        out[i, 2] = a is b
        out[i, 3] = a is not b
        out[i, 4] = a is Color.green


@xpu.jit
def k_intenum_arith(lv, x, out):
    i = cuda.grid(1)
    if i < x.size:
        if x[i] > lv:
            out[i] = x[i] - lv + Level.low
        else:
            out[i] = x[i] * lv


@xpu.jit
def k_enum_tuple(t, x, out):
    lv, c = t
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + lv * (c is Color.blue)


def _np_compare(a, b):
    return [a == b, a != b, a is b, a is not b, a is Color.green]


@pytest.mark.parametrize("tgt", ["cpu", "python"])
@pytest.mark.parametrize(
    "a,b", [(Color.red, Color.red), (Color.red, Color.green), (Color.green, Color.green), (Color.blue, Color.green)]
)
def test_enum_arguments_compare(tgt, a, b):
    out = np.full((37, 5), 7, np.int8)  # poisoned: 7 is neither bool
    getattr(k_enum_compare, tgt)[2, 32](a, b, out)
    np.testing.assert_array_equal(out, np.tile(np.array(_np_compare(a, b), np.int8), (37, 1)))


@pytest.mark.parametrize("tgt", ["cpu", "python"])
@pytest.mark.parametrize("lv", list(Level))
def test_intenum_argument_is_an_int(tgt, lv):
    rng = np.random.default_rng(int(lv))
    x = rng.integers(-1000, 1000, 70).astype(np.int64)
    out = np.full(70, -12345, np.int64)
    getattr(k_intenum_arith, tgt)[3, 32](lv, x, out)
    want = np.where(x > int(lv), x - int(lv) + int(Level.low), x * int(lv))
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("tgt", ["cpu", "python"])
@pytest.mark.parametrize("c", list(Color))
def test_enum_members_in_a_tuple_argument(tgt, c):
    rng = np.random.default_rng(c.value)
    x = rng.integers(-50, 50, 45).astype(np.int64)
    out = np.full(45, -12345, np.int64)
    getattr(k_enum_tuple, tgt)[2, 32]((Level.mid, c), x, out)
    np.testing.assert_array_equal(out, x + int(Level.mid) * (c is Color.blue))


def test_enum_argument_specialises_per_class():
    # one kernel, launched with members of two Enum classes: one specialisation each,
    # and neither launch reads the other's members
    out = np.zeros((1, 5), np.int8)
    k_enum_compare.cpu[1, 1](Level.low, Level.low, out)
    np.testing.assert_array_equal(out[0], [1, 0, 1, 0, 0])
    k_enum_compare.cpu[1, 1](Color.green, Color.red, out)
    np.testing.assert_array_equal(out[0], [0, 1, 0, 1, 1])
    assert pickle.loads(pickle.dumps(Color.green)) is Color.green
