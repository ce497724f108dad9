"""numba.cuda's random numbers (``numba.cuda.random``: xoroshiro128+ states, one per
thread) in a kernel, on every target.

The ``xoroshiro128p_*`` functions are plain Numba functions that numba.cuda compiles
for the GPU from their Python source; the CPU target and the interpreter compile
them the same way, as they do a user's ``@numba.njit`` helper (numquad/xpu.py
``is_numba_function``). The expected values come from a model of xoroshiro128+
written here with NumPy's uint64 arithmetic (no numquad or numba.cuda code); the
states are made on the host with numba.cuda's ``init_xoroshiro128p_states_cpu``,
what ``create_xoroshiro128p_states`` copies to a GPU.
"""

import math

import numpy as np
import pytest
from numba import cuda
from numba.cuda.random import (
    init_xoroshiro128p_states_cpu,
    xoroshiro128p_dtype,
    xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64,
    xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64,
)

from numquad import Wave, xpu

M64 = (1 << 64) - 1


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


def _next(s):
    """xoroshiro128+ on one state [s0, s1] (Python ints, changed in place): the
    next 64-bit output."""
    s0, s1 = s
    out = (s0 + s1) & M64
    s1 ^= s0
    s[0] = _rotl(s0, 55) ^ s1 ^ ((s1 << 14) & M64)
    s[1] = _rotl(s1, 36)
    return out


def _unit64(x):
    return np.float64(x >> 11) * np.float64(2.0**-53)


@xpu.jit
def k_draws(states, u32, u64, total, n32, n64):
    i = cuda.grid(1)
    if i < states.size:
        a = xoroshiro128p_uniform_float32(states, i)
        b = xoroshiro128p_uniform_float64(states, i)
        u32[i] = a
        u64[i] = b
        total[i] = Wave.reduceSum(np.int64(a < np.float32(0.5)))  # a cross-lane op on the draws
        n32[i] = xoroshiro128p_normal_float32(states, i)
        n64[i] = xoroshiro128p_normal_float64(states, i)


def _states(n, seed):
    st = np.empty(n, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(st, seed, 0)
    return st


def test_xoroshiro128p_draws_and_states_match_the_model(target, rng):
    _check(target, rng)


def test_xoroshiro128p_draws_and_states_match_the_model_in_the_interpreter(rng):
    _check("python", rng)


def _check(target, rng):
    n = 200  # a partial last wave and a thread past the states
    seed = int(rng.integers(1, 2**62))
    st = _states(n, seed)
    model = [[int(s0), int(s1)] for s0, s1 in zip(st["s0"], st["s1"])]
    u32, u64 = np.full(n, np.nan, np.float32), np.full(n, np.nan)
    total = np.full(n, -1, np.int64)
    n32, n64 = np.full(n, np.nan, np.float32), np.full(n, np.nan)
    getattr(k_draws, target)[2, 128](st, u32, u64, total, n32, n64)

    want32 = np.array([np.float32(_unit64(_next(s))) for s in model], np.float32)
    want64 = np.array([_unit64(_next(s)) for s in model])
    np.testing.assert_array_equal(u32, want32)
    np.testing.assert_array_equal(u64, want64)
    below = (want32 < np.float32(0.5)).astype(np.int64)
    waves = [slice(b + w, min(b + w + 32, n, b + 128)) for b in (0, 128) for w in range(0, 128, 32)]
    want_total = np.empty(n, np.int64)
    for s in waves:
        want_total[s] = below[s].sum()
    np.testing.assert_array_equal(total, want_total)
    # Box-Muller from two float32 draws each; libdevice's log and cos (the CPU
    # target's are its own code: bits as the GPU's), NumPy's here: within an ulp or two
    for out, dt in ((n32, np.float32), (n64, np.float64)):
        u1 = np.array([np.float32(_unit64(_next(s))) for s in model], np.float32)
        u2 = np.array([np.float32(_unit64(_next(s))) for s in model], np.float32)
        want = np.sqrt(dt(-2.0) * np.log(u1)) * np.cos(dt(2 * math.pi) * u2.astype(dt))
        np.testing.assert_allclose(out, want, rtol=2e-6 if dt is np.float32 else 1e-6, atol=1e-6)
    # the states advanced six draws each, as the model's
    np.testing.assert_array_equal(st["s0"], np.array([s[0] for s in model], np.uint64))
    np.testing.assert_array_equal(st["s1"], np.array([s[1] for s in model], np.uint64))


def test_the_cpu_targets_normal_draws_are_the_gpus_bits(rng):
    # where a GPU is: CPU target and numba.cuda's own build of the kernel, bit for bit
    if not cuda.is_available():
        pytest.skip("no CUDA GPU")
    n = 256
    st_c, st_g = _states(n, 7), _states(n, 7)
    outs = {}
    for t, st in (("cpu", st_c), ("cuda", st_g)):
        o = [np.full(n, np.nan, np.float32), np.full(n, np.nan), np.full(n, -1, np.int64)]
        o += [np.full(n, np.nan, np.float32), np.full(n, np.nan)]
        getattr(k_draws, t)[2, 128](st, *o)
        outs[t] = o
    for a, b in zip(outs["cpu"], outs["cuda"]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(st_c, st_g)
