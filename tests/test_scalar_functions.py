"""A function with no cross-lane op computes what the same code in a kernel computes.

Such a function (an ``@xpu.jit`` lane function, a numba.cuda device function, a plain
``@numba.njit`` helper) is not inlined into its caller on the CPU target: it compiles
on its own, as a scalar function (cpu/dispatch.py ``scalar_function``). That compile
missed what the kernel's compile does: ``int(inf)`` was -2**63 (docs/semantics.md:
float-to-integer conversions saturate as on the GPU), ``round(x, 2)`` was Numba's
CPU algorithm, ``hasattr(Wave, "prefixSum")`` was 0, both called on arrays and from a
kernel (found by a day-one probe of lane functions on arrays).

The expected values are written here from docs/semantics.md with NumPy: the
saturating conversion, and ``round(x, n)`` as ``rint(float64(x) * 10**n) / 10**n``
with the product converted to int64 as the GPU converts.
"""

import numpy as np
import pytest
from numba import cuda, njit

from numquad import Wave, xpu

from conftest import TARGETS

ALL = TARGETS + ["cpu-debug", "python"]
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def _saturate_i64(x):
    """docs/semantics.md, "Conversions from float to integer": a float to int64."""
    x = np.float64(x)
    if np.isnan(x):
        return I64_MIN
    if x >= 2.0**63:
        return I64_MAX
    if x <= -(2.0**63):
        return I64_MIN
    return int(np.trunc(x))


def _round2(x):
    """numba.cuda's round(x, 2): y = x * 100 in float64, rounded half to even and
    converted to int64 as the GPU converts, divided back."""
    x = np.float64(x)
    if np.isinf(x) or np.isnan(x):
        return x
    y = np.rint(x * 100.0)
    return np.float64(_saturate_i64(y)) / 100.0


@xpu.jit
def lf_int(x):
    return int(x)


@xpu.jit
def lf_round2(x):
    return round(x, 2)


@xpu.jit
def lf_round3(x):
    return round(x, 3)


@xpu.jit
def lf_has(x):
    return x + hasattr(Wave, "prefixSum") + 2 * hasattr(Wave, "noSuchOp")


@xpu.jit
def lf_bits(x):
    return x.bit_count()


@cuda.jit(device=True)
def dev_int(x):
    return int(x)


@njit
def njit_int(x):
    return int(x)


@xpu.jit
def k_scalar_functions(xf, xi, o_int, o_dev, o_njit, o_round, o_has, o_bits):
    i = xpu.grid(1)
    if i < xf.size:
        o_int[i] = lf_int(xf[i])
        o_dev[i] = dev_int(xf[i])
        o_njit[i] = njit_int(xf[i])
        o_round[i] = lf_round2(xf[i])
        o_has[i] = lf_has(xi[i])
        o_bits[i] = lf_bits(xi[i])


def _inputs(rng, n):
    xf = rng.standard_normal(n) * rng.choice([1.0, 1e3, 1e17, 1e19, 1e300], n)
    special = np.array([np.inf, -np.inf, np.nan, 1e19, -1e19, 2.0**63, -(2.0**63), -0.0, 0.125, 2.5, -2.5])
    xf[: special.size] = special
    xf[rng.integers(0, n, n // 4)] = special[rng.integers(0, special.size, n // 4)]
    xi = rng.integers(-(2**62), 2**62, n, dtype=np.int64)
    return xf, xi


def _launch(target, k, *args):
    if target == "cpu-debug":
        k, target = xpu.jit(k.py_func, debug=True), "cpu"
    getattr(k, target)[3, 64](*args)


@pytest.mark.slow
@pytest.mark.parametrize("target", ALL)
def test_functions_without_ops_called_from_a_kernel(target, rng):
    n = 150
    xf, xi = _inputs(rng, n)
    outs = (
        [np.full(n, -7, np.int64) for _ in range(3)] + [np.full(n, 7.5)] + [np.full(n, -7, np.int64) for _ in range(2)]
    )
    _launch(target, k_scalar_functions, xf, xi, *outs)
    o_int, o_dev, o_njit, o_round, o_has, o_bits = outs
    want = np.array([_saturate_i64(x) for x in xf], np.int64)
    np.testing.assert_array_equal(o_int, want)
    np.testing.assert_array_equal(o_dev, want)
    np.testing.assert_array_equal(o_njit, want)
    np.testing.assert_array_equal(o_round, np.array([_round2(x) for x in xf]))
    assert not np.signbit(o_round[xf == 0]).any()  # round(-0.0, 2) is +0.0
    np.testing.assert_array_equal(o_has, xi + 1)
    np.testing.assert_array_equal(o_bits, [bin(int(v) & (2**64 - 1)).count("1") for v in xi])


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_functions_without_ops_called_on_arrays(target, rng):
    xf, xi = _inputs(rng, 100)
    np.testing.assert_array_equal(getattr(lf_int, target)(xf), [_saturate_i64(x) for x in xf])
    np.testing.assert_array_equal(getattr(lf_round2, target)(xf), [_round2(x) for x in xf])
    np.testing.assert_array_equal(getattr(lf_has, target)(xi), xi + 1)
    # documented values (docs/semantics.md): float32 rounds in float64, as on the GPU
    np.testing.assert_array_equal(getattr(lf_round2, target)(np.array([-0.0, 1e19])), [0.0, 9.223372036854776e16])
    f32 = getattr(lf_round3, target)(np.array([0.3425], np.float32))
    np.testing.assert_array_equal(f32, np.array([0.343], np.float32))


# -- functions checked_function cannot give a bounds state: a lambda, *args, x, / ------

lam_round3 = xpu.jit(lambda x: round(x, 3))
lam_inverse = xpu.jit(lambda x: x**-1)


@njit
def njit_round3_varargs(x, *rest):
    return round(x, 3)


@xpu.jit
def lf_round3_posonly(x, /):
    return round(x, 3)


@xpu.jit
def k_odd_signatures(x, o_var, o_pos, o_lam, o_inv):
    i = xpu.grid(1)
    if i < x.size:
        o_var[i] = njit_round3_varargs(x[i])
        o_pos[i] = lf_round3_posonly(x[i])
        o_lam[i] = lam_round3(x[i])
        o_inv[i] = lam_inverse(x[i])


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
def test_lambdas_varargs_and_positional_only_get_the_rewrites_too(target):
    """They compiled as written, without the rewrites: ``round(np.float32(0.3425), 3)``
    was 0.342 (docs/semantics.md: 0.343) and ``0.0 ** -1`` raised ZeroDivisionError
    (docs/semantics.md: inf) on the CPU (a probe of the day)."""
    x = np.array([0.3425, 2.675, 1e19, 0.0, -0.0, 2.0], np.float32)
    outs = [np.full(x.size, 7.5, np.float32) for _ in range(4)]
    _launch(target, k_odd_signatures, x, *outs)
    want = np.float32(np.rint(x.astype(np.float64) * 1000.0) / 1000.0)
    want[2] = np.float32(9223372036854775807 / 1000.0)  # the int64 limit, saturated
    for o in outs[:3]:
        np.testing.assert_array_equal(o, want)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(outs[3], np.float32(1.0) / x)
    if target == "cpu":
        np.testing.assert_array_equal(lam_round3.cpu(x), want)


# -- builtin max/min of two floats: numba.cuda's libdevice fmax/fmin ------------------
# (a probe, twenty-third session: max(nan, 1.0) was NaN on the CPU and python targets,
# 1.0 on the GPU, whose PTX is max.f32; PTX max: a NaN loses, +0.0 > -0.0)


def _fmax_ref(a, b, pick_min=False):
    """PTX max.f32/min.f32 (docs/semantics.md's combine rule), from NumPy: fmax/fmin,
    and for two zeros of opposite signs +0.0 (max) or -0.0 (min)."""
    r = (np.fmin if pick_min else np.fmax)(a, b)
    tie = (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
    return np.where(tie, r.dtype.type(-0.0 if pick_min else 0.0), r)


@cuda.jit(device=True)
def dev_max(a, b):
    return max(a, b)


@xpu.jit
def lf_min(a, b):
    return min(a, b)


@xpu.jit
def k_minmax(a, b, c, o_max, o_min, o_dev, o_lf, o_mixed, o_int, o_three):
    i = xpu.grid(1)
    if i < a.size:
        o_max[i] = max(a[i], b[i])
        o_min[i] = min(a[i], b[i])
        o_dev[i] = dev_max(a[i], b[i])
        o_lf[i] = lf_min(a[i], b[i])
        o_mixed[i] = max(a[i], c[i])  # float32 and float64: in float64
        o_int[i] = max(a[i], 0)  # not two floats: Python's max
        o_three[i] = min(a[i], b[i], np.float32(2.0))


def _minmax_inputs(rng, n):
    pool = np.array([np.nan, -np.nan, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 2.5], np.float32)
    a = np.where(rng.random(n) < 0.6, pool[rng.integers(0, pool.size, n)], rng.standard_normal(n)).astype(np.float32)
    b = np.where(rng.random(n) < 0.6, pool[rng.integers(0, pool.size, n)], rng.standard_normal(n)).astype(np.float32)
    c = np.where(rng.random(n) < 0.3, pool[rng.integers(0, pool.size, n)].astype(np.float64), rng.standard_normal(n))
    return a, b, c


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)  # (a NaN's payload aside)
    np.testing.assert_array_equal(got[~nan].view(np.uint8), want[~nan].view(np.uint8))


@pytest.mark.slow
@pytest.mark.parametrize("target", ALL)
def test_max_min_of_two_floats_follow_numba_cuda(target, rng):
    n = 150
    a, b, c = _minmax_inputs(rng, n)
    outs = (
        [np.full(n, 7.5, np.float32) for _ in range(4)]
        + [np.full(n, 7.5)]
        + [np.full(n, 7.5) for _ in range(1)]
        + [np.full(n, 7.5, np.float32)]
    )
    _launch(target, k_minmax, a, b, c, *outs)
    o_max, o_min, o_dev, o_lf, o_mixed, o_int, o_three = outs
    _same_bits(o_max, _fmax_ref(a, b))
    _same_bits(o_min, _fmax_ref(a, b, pick_min=True))
    _same_bits(o_dev, _fmax_ref(a, b))
    _same_bits(o_lf, _fmax_ref(a, b, pick_min=True))
    _same_bits(o_mixed, _fmax_ref(a.astype(np.float64), c))
    # Python's (and Numba's generic) max/min: the later argument where it compares
    # greater (less); a NaN first argument stays
    want_int = np.array([0.0 if 0 > x else x for x in a.astype(np.float64)])
    _same_bits(o_int, want_int)
    want_three = []
    for x, y in zip(a, b):
        m = x
        for v in (y, np.float32(2.0)):
            m = v if v < m else m
        want_three.append(m)
    _same_bits(o_three, np.array(want_three, np.float32))


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_max_min_of_two_floats_on_arrays(target, rng):
    a, b, _ = _minmax_inputs(rng, 100)
    _same_bits(getattr(lf_min, target)(a, b), _fmax_ref(a, b, pick_min=True))


def test_max_of_two_floats_is_ptx_max():
    ptx = k_minmax.inspect_ptx(
        "void(float32[:], float32[:], float64[:], float32[:], float32[:], float32[:], "
        "float32[:], float64[:], float64[:], float32[:])",
        cc=(9, 0),
    )
    assert "max.f32" in ptx and "min.f32" in ptx and "max.f64" in ptx
