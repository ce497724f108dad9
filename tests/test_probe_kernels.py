"""Regression tests for silent wrong results found by hand-written probe kernels
(docs/semantics.md is the spec).

Each kernel runs on the CPU target (release and debug=True builds) and on the
python target (numquad/simt.py); outputs are poisoned with a sentinel first and
inputs are random. Expected values are computed here with NumPy.
"""

import numpy as np
import pytest
from numba import cuda

from numquad import Wave, xpu

POISON = -7777
RNG = np.random.default_rng(20261202)

TARGETS = [("cpu", False), ("cpu", True), ("python", False)]


def _launch(fn, target, debug, grid, block, *args):
    getattr(xpu.jit(debug=debug)(fn), target)[grid, block](*args)


# -- a parameter the kernel assigns starts from the argument in every wave --------

def k_param_augassign(out, k):
    i = cuda.grid(1)
    k += 1
    out[i] = k + Wave.prefixSum(k)


def k_param_array_view(out, a):
    i = cuda.grid(1)
    a = a[1:]
    s = Wave.reduceSum(1)
    out[i] = a[i % 8] + s


def k_param_across_barrier(out, k):
    i = cuda.grid(1)
    sh = cuda.shared.array(64, np.int64)
    t = cuda.threadIdx.x
    sh[t] = t + k
    k = k * 2
    cuda.syncthreads()
    out[i] = sh[(t + 1) % 64] + k + Wave.reduceSum(k)


@pytest.mark.parametrize("target,debug", TARGETS)
def test_a_reassigned_parameter_restarts_from_the_argument_in_every_wave(target, debug):
    # the CPU target kept the first wave's k = k + 1 for the next waves and blocks
    k = int(RNG.integers(-50, 50))
    out = np.full(120, POISON, np.int64)
    _launch(k_param_augassign, target, debug, 3, 40, out, k)
    lane = np.arange(120) % 40 % 32
    np.testing.assert_array_equal(out, (k + 1) + lane * (k + 1))

    a = RNG.integers(-1000, 1000, 10)
    out = np.full(128, POISON, np.int64)
    _launch(k_param_array_view, target, debug, 2, 64, out, a)
    np.testing.assert_array_equal(out, a[1:][np.arange(128) % 8] + 32)

    out = np.full(192, POISON, np.int64)
    _launch(k_param_across_barrier, target, debug, 3, 64, out, k)
    t = np.arange(192) % 64
    np.testing.assert_array_equal(out, (t + 1) % 64 + k + 2 * k + 32 * 2 * k)
