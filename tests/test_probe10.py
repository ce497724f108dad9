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
