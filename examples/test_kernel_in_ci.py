"""Test a GPU kernel in CI, where there is no GPU.

The kernel runs on numquad's CPU target (``kernel.cpu[...]``) and is compared with
a NumPy reference written from docs/semantics.md; where ``numba.cuda.is_available()``
the same kernel also runs on the GPU (``kernel.cuda[...]``) and must give the CPU's
bits exactly. Without a GPU (or without the numba-cuda package) the GPU tests are
skipped, so one test file serves both a laptop or CI runner and a GPU machine.

This file is a pytest file in examples/; the project's pytest configuration
collects tests/ only (``testpaths``), so run it by naming it:

    python -m pytest examples/test_kernel_in_ci.py
"""

import numpy as np
import pytest

from numquad import Quad, Wave, xpu

W = 32


@xpu.jit
def k_wave_features(x, out):
    """Per element: exclusive wave sum, wave max, quad neighbour, positives in the wave."""
    i = xpu.grid(1)
    if i < x.shape[0]:
        v = x[i]
        out[i, 0] = Wave.prefixSum(v)
        out[i, 1] = Wave.reduceMax(v)
        out[i, 2] = Quad.swapHorizontal(v)
        out[i, 3] = Wave.countBits(v > 0)


@xpu.jit
def k_float_scan(x, out):
    i = xpu.grid(1)
    out[i] = Wave.prefixSum(x[i])


def features_reference(x):
    """What docs/semantics.md says k_wave_features computes; lanes past the end of x
    are inactive: skipped by scans and reductions, and a swap from one gives the
    lane's own value."""
    n = x.size
    waves = -(-n // W)
    active = np.zeros(waves * W, bool)
    active[:n] = True
    active = active.reshape(waves, W)
    v = np.zeros(waves * W, np.int64)
    v[:n] = x
    v = v.reshape(waves, W)
    out = np.empty((waves, W, 4), np.int64)
    out[:, :, 0] = np.cumsum(v, axis=1) - v
    out[:, :, 1] = np.where(active, v, np.iinfo(np.int64).min).max(axis=1, keepdims=True)
    partner = np.arange(W) ^ 1
    out[:, :, 2] = np.where(active[:, partner], v[:, partner], v)
    out[:, :, 3] = ((v > 0) & active).sum(axis=1, keepdims=True)
    return out.reshape(-1, 4)[:n]


def float_scan_reference(x):
    """The exclusive float scan in the fixed log-step order every target uses:
    inclusive a[r] = a[r - d] + a[r] for d = 1, 2, 4, 8, 16, then shifted by one
    lane with +0.0 in lane 0 (docs/semantics.md, "Scans")."""
    a = x.reshape(-1, W).copy()
    for d in (1, 2, 4, 8, 16):
        nxt = a.copy()
        nxt[:, d:] = a[:, :-d] + a[:, d:]
        a = nxt
    out = np.zeros_like(a)
    out[:, 1:] = a[:, :-1]
    return out.ravel()


def cuda_available():
    try:
        import numba_cuda  # noqa: F401  (numba.cuda alone may be a shim without it)
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:
        return False


needs_gpu = pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU (numba.cuda.is_available() is false)")


@pytest.fixture
def rng():
    return np.random.default_rng(20261201)


def run_features(launcher, x):
    out = np.full((x.size, 4), -7777, np.int64)  # poison: an unwritten slot shows
    launcher[(x.size + 127) // 128, 128](x, out)
    return out


@pytest.mark.parametrize("n", [32, 1000])  # 1000: a partial last wave
def test_features_cpu_matches_numpy(rng, n):
    x = rng.integers(-50, 50, n).astype(np.int64)
    got = run_features(k_wave_features.cpu, x)
    np.testing.assert_array_equal(got, features_reference(x))


def test_float_scan_cpu_matches_numpy_bits(rng):
    x = rng.standard_normal(4096).astype(np.float32)
    out = np.full_like(x, np.nan)
    k_float_scan.cpu[4096 // 256, 256](x, out)
    want = float_scan_reference(x)
    assert np.array_equal(out.view(np.uint32), want.view(np.uint32))  # bits, not a tolerance
    # the log-step order is not a running sum: np.cumsum rounds differently
    assert not np.array_equal(out, (np.cumsum(x.reshape(-1, W), axis=1) - x.reshape(-1, W)).ravel())


@needs_gpu
def test_features_gpu_equals_cpu(rng):
    from numba import cuda

    x = rng.integers(-50, 50, 1000).astype(np.int64)
    cpu = run_features(k_wave_features.cpu, x)
    d_out = cuda.to_device(np.full((x.size, 4), -7777, np.int64))
    k_wave_features.cuda[(x.size + 127) // 128, 128](cuda.to_device(x), d_out)
    np.testing.assert_array_equal(d_out.copy_to_host(), cpu)


@needs_gpu
def test_float_scan_gpu_bits_equal_cpu(rng):
    from numba import cuda

    x = rng.standard_normal(4096).astype(np.float32)
    cpu = np.full_like(x, np.nan)
    k_float_scan.cpu[4096 // 256, 256](x, cpu)
    d_out = cuda.to_device(np.full_like(x, np.nan))
    k_float_scan.cuda[4096 // 256, 256](cuda.to_device(x), d_out)
    assert np.array_equal(d_out.copy_to_host().view(np.uint32), cpu.view(np.uint32))
