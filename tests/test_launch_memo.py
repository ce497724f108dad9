"""A launch finds its compiled code from what its arguments' Numba types depend on
(numquad/_launchkey.py ``launch_key``), without typing them again: launches that
alternate dtypes, layouts, read-only arrays and scalar kinds must each run the code
for their own types. Expected values from NumPy; outputs poisoned."""

import numpy as np
import pytest

from numquad import Wave, xpu


@xpu.jit
def k_scaled_scan(x, s, out):
    i = xpu.grid(1)
    if i < x.size:
        out[i] = Wave.prefixSum(x[i]) * s


def _want(x, s):
    w = x.reshape(-1, 32)
    return (np.cumsum(w, axis=1) - w).reshape(-1) * s


@pytest.mark.slow
@pytest.mark.parametrize("rounds", [2])
def test_alternating_argument_types_each_run_their_own_code(rng, rounds):
    cases = []
    for dtype in (np.int32, np.int64, np.float64):
        x = rng.integers(-50, 50, 64).astype(dtype)
        cases += [(x, 3), (x, 2.5), (x, np.int8(-2)), (x, True)]
    strided = rng.integers(-50, 50, 128)[::2]  # layout A
    cases.append((strided, 7))
    ro = rng.integers(-50, 50, 64)
    ro.setflags(write=False)
    cases.append((ro, 4))
    cases.append((rng.integers(-50, 50, 64).astype(np.uint64), 2**63 + 5))  # a uint64 scalar
    for _ in range(rounds):
        for x, s in cases:
            want = _want(x, s)
            out = np.full(64, 987654321, want.dtype)  # (no output reaches it; every dtype holds it)
            k_scaled_scan[2, 32](x, s, out)
            np.testing.assert_array_equal(out, want, err_msg=f"{x.dtype} {type(s).__name__}")
    assert k_scaled_scan._target("cpu")._launches  # the memo was used
