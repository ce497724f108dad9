"""``cuda.local.array`` and ``cuda.shared.array`` with numba.cuda's ``alignment=``.

numba-cuda's test_array_alignment.py (BSD-2-Clause) declares arrays with an
alignment and checks numba.cuda's errors for bad ones; the CPU target refused the
keyword. Now every target takes it (an array's address does not change what a
kernel computes) and refuses what numba.cuda refuses, in its words: a value that
is not a constant int ("RequireLiteralValue: alignment must be a constant
integer"), one not positive, not a power of 2 or not a multiple of 8 (a
ValueError). Expected values come from NumPy; outputs are poisoned first.
"""

import numpy as np
import pytest
from numba import cuda

from numquad import NumquadCompileError, xpu

from conftest import TARGETS


def _kernel(alignment):
    @xpu.jit
    def k(out, x, which):
        i = cuda.grid(1)
        if which == 0:
            a = cuda.local.array(shape=(2, 3), dtype=np.float32, alignment=alignment)
            a[1, 2] = x[i] * 3
            out[i] = a[1, 2]
        else:
            s = cuda.shared.array(shape=64, dtype=np.float32, alignment=alignment)
            s[i] = x[i] * 2
            cuda.syncthreads()
            out[i] = s[(i + 1) % 64]

    return k


@pytest.mark.parametrize("target", TARGETS + ["python"])
@pytest.mark.parametrize("alignment", [None, 8, 16, 64, 256])
def test_an_aligned_array_computes_as_any_other(target, alignment):
    x = np.random.default_rng(4).standard_normal(64).astype(np.float32)
    k = _kernel(alignment)
    for which, want in ((0, x * 3), (1, np.roll(x * 2, -1))):
        out = np.full(64, np.nan, np.float32)
        getattr(k, target)[1, 64](out, x, which)
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("target", ["cpu", "python"])
@pytest.mark.parametrize(
    "alignment,why", [(0, "positive"), (-8, "positive"), (24, "a power of 2"), (4, "a multiple of 8")]
)
def test_a_bad_alignment_is_numba_cuda_s_value_error(target, alignment, why):
    k = _kernel(alignment)
    with pytest.raises(ValueError, match=rf"Alignment must be {why}; got {alignment}"):
        getattr(k, target)[1, 64](np.zeros(64, np.float32), np.zeros(64, np.float32), 0)


@pytest.mark.parametrize("target", ["cpu", "python"])
@pytest.mark.parametrize("alignment", ["16", 1.5])
def test_an_alignment_that_is_not_a_constant_int_is_a_typing_error(target, alignment):
    k = _kernel(alignment)
    with pytest.raises(NumquadCompileError, match="RequireLiteralValue: alignment must be a constant integer"):
        getattr(k, target)[1, 64](np.zeros(64, np.float32), np.zeros(64, np.float32), 0)


def test_the_ptx_keeps_numba_cuda_s_alignment():
    ptx = _kernel(256).inspect_ptx("void(float32[:], float32[:], int64)", cc=(9, 0))
    assert ".align 256" in ptx
