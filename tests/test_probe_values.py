"""What a probe of special values and mixed types found (twenty-fifth session): a
Python int passed to a lane function beside int64 and uint64 arrays became float64
(NumPy promotes the two to float64), so a selector was refused and an integer
product was computed in floating point. Expected values come from Python's exact
integers."""

import numpy as np
import pytest

from numquad import NumquadTypeError, Wave, xpu


@xpu.jit
def scale(x, y, k):
    return x * k + y


@xpu.jit
def pick(x, y, lane):
    return Wave.shuffle(x, lane) + y


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_python_int_beside_int64_and_uint64_arrays_stays_an_integer(target, rng):
    x = rng.integers(2**59, 2**60, 64, dtype=np.int64) | 1
    y = rng.integers(0, 1000, 64).astype(np.uint64)
    r = getattr(scale, target)(x, y, 3)
    assert r.dtype.kind in "iu"
    assert [int(v) for v in r] == [3 * int(a) + int(b) for a, b in zip(x, y)]
    xs = rng.integers(-1000, 1000, 64)
    p = getattr(pick, target)(xs, np.zeros(64, np.uint64), 3)
    assert [int(v) for v in p] == [int(xs[(k // 32) * 32 + 3]) for k in range(64)]


def test_a_python_int_too_large_alone_says_int64():
    with pytest.raises(NumquadTypeError) as e:
        scale(2**63, 1, 1)
    msg = str(e.value)
    assert "with no integer array in the call a Python int is int64" in msg and __file__ in msg
