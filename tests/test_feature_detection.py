"""``if hasattr(Wave, "x"): Wave.x(v)`` compiles on every target: the probe is
Python's answer on numquad's own module (numquad/_control.py, ``fold_hasattr``),
the side it rules out is dropped before anything types it, and a name read only
under such a probe is not an unknown name (numquad/xpu.py, ``_hasattr_probes``).
Expected values from NumPy; outputs poisoned first."""

import numba
import numpy as np
import pytest

from numquad import Wave, xpu
from numquad.errors import NumquadCompileError

from conftest import cuda_available

POISON = -999.0


@xpu.jit
def k_probe_missing(out, x):
    i = xpu.grid(1)
    v = x[i]
    if hasattr(Wave, "reduceMean"):  # no such op: the other side runs
        v = Wave.reduceMean(v)
    else:
        v = Wave.reduceSum(v)
    out[i] = v


@xpu.jit
def k_probe_present(out, x):
    i = xpu.grid(1)
    v = x[i]
    if hasattr(Wave, "reduceMax"):
        v = Wave.reduceMax(v)
    else:
        v = Wave.reduceSum(v)
    out[i] = v


@xpu.jit
def k_unprobed(out, x):
    i = xpu.grid(1)
    out[i] = Wave.reduceMean(x[i])


def _want(x, f):
    return np.repeat([f(w) for w in x.reshape(-1, 32)], 32)


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_probe_picks_the_side_that_exists(rng, target):
    x = rng.integers(-100, 100, 64).astype(np.float64)
    for k, f in ((k_probe_missing, np.sum), (k_probe_present, np.max)):
        out = np.full(64, POISON)
        getattr(k, target)[2, 32](out, x)
        np.testing.assert_array_equal(out, _want(x, f))


def test_a_probe_compiles_for_cuda():
    sig = (numba.float64[::1], numba.float64[::1])
    for k in (k_probe_missing, k_probe_present):
        ptx = k.inspect_ptx(sig, cc=(9, 0))
        assert "redux" in ptx or "shfl.sync" in ptx


@pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU")
def test_a_probe_on_the_gpu(rng):
    from numba import cuda

    x = rng.integers(-100, 100, 64).astype(np.float64)
    for k, f in ((k_probe_missing, np.sum), (k_probe_present, np.max)):
        out = cuda.to_device(np.full(64, POISON))
        k.cuda[2, 32](out, cuda.to_device(x))
        np.testing.assert_array_equal(out.copy_to_host(), _want(x, f))


def test_an_unprobed_unknown_op_is_still_an_error():
    with pytest.raises(NumquadCompileError, match="Wave.reduceMean is not a Wave op"):
        k_unprobed[1, 32](np.zeros(32), np.zeros(32))
