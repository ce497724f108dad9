"""``None`` as a kernel argument: numba.cuda types it (``none``) but its launch
cannot pass it (its dispatcher raises ``NotImplementedError: (none, None)``,
measured on an H100 on 2026-12-06), so every target refuses it in one line naming
the argument and the user's line."""

import numpy as np
import pytest

from numquad import xpu, Wave
from numquad.errors import NumquadTypeError


@xpu.jit
def _maybe_scaled(x, s, o):
    i = xpu.grid(1)
    if s is None:
        o[i] = x[i]
    else:
        o[i] = -x[i] * s
    o[i] += Wave.reduceSum(x[i])


def _wave_sums(x):
    return np.repeat(x.reshape(-1, 32).sum(axis=1, dtype=x.dtype), 32)


@pytest.mark.parametrize("where", ["cpu", "python", "cuda"])
def test_a_none_argument_is_refused_on_every_target(where, rng):
    if where == "cuda":
        from conftest import cuda_available

        if not cuda_available():
            pytest.skip("no CUDA GPU")
    x = rng.integers(-1000, 1000, 64)
    o = np.full(64, -777777, np.int64)
    with pytest.raises(
        NumquadTypeError,
        match=r"argument 1 \(s\) of _maybe_scaled is None, which numba.cuda "
        r"cannot pass to a kernel",
    ) as e:
        getattr(_maybe_scaled, where)[2, 32](x, None, o)
    assert __file__ in str(e.value)
    assert (o == -777777).all()
    getattr(_maybe_scaled, where)[2, 32](x, np.int64(3), o)  # a value runs
    np.testing.assert_array_equal(o, -x * 3 + _wave_sums(x))
