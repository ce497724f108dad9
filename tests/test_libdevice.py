"""The GPU's own math functions on the CPU target (numquad/cpu/libdevice.py).

``math.sin``, ``cos``, ``exp``, ``exp2``, ``expm1``, ``sinh``, ``atan2`` of float64 and
``sinf``, ``cosf``, ``logf``, ``log2f``, ``log10f``, ``expm1f``, ``atan2f``, ``hypotf``
of float32 run libdevice's code compiled for the host, so that the CPU gives the
GPU's bits. Checked here:

- against NumPy (an independent implementation, the C library's) within a few ulp,
  special values (signed zeros, infinities, NaN) exactly: a broken lowering of an
  NVVM intrinsic or of an inline-assembly block gives far more;
- that the kernel's LLVM IR calls no C library function for them;
- on a GPU, that the CPU and CUDA targets give the same bits for every input.

Inputs are random over the whole exponent range, plus the values where the
functions change paths: signed zeros, subnormals, infinities, NaN, huge arguments
(the trig functions' Payne-Hanek reduction), multiples of pi/2, the overflow
thresholds of ``exp``.
"""

import cmath
import math

import numpy as np
import pytest

from numquad import xpu

from conftest import cuda_available
from numquad.cpu import libdevice

pytestmark = pytest.mark.skipif(not libdevice.available(), reason="libdevice not found (numba-cuda[cu13])")

UNARY = ("sin", "cos", "exp", "exp2", "expm1", "sinh", "log", "log2", "log10")
BINARY = ("atan2", "hypot")
_NP = {"atan2": np.arctan2, "exp2": np.exp2}


@xpu.jit
def _unary(out, x):
    i = xpu.grid(1)
    if i < x.size:
        out[0, i] = math.sin(x[i])
        out[1, i] = math.cos(x[i])
        out[2, i] = math.exp(x[i])
        out[3, i] = math.exp2(x[i])
        out[4, i] = math.expm1(x[i])
        out[5, i] = math.sinh(x[i])
        out[6, i] = math.log(x[i])
        out[7, i] = math.log2(x[i])
        out[8, i] = math.log10(x[i])


@xpu.jit
def _binary(out, x, y):
    i = xpu.grid(1)
    if i < x.size:
        out[0, i] = math.atan2(x[i], y[i])
        out[1, i] = math.hypot(x[i], y[i])


def _inputs(dtype, n, seed):
    rng = np.random.default_rng(seed)
    fi = np.finfo(dtype)
    top = 300 if dtype == np.float64 else 36
    mags = 10.0 ** rng.uniform(-top, top, n)
    x = (rng.standard_normal(n) * mags).astype(dtype)
    x[: n // 4] = (rng.standard_normal(n // 4) * 4).astype(dtype)  # the common range
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, fi.tiny, -fi.tiny, fi.smallest_subnormal, fi.max, -fi.max]
    special += [1.0, -1.0, 0.5, 2.0, 1e22, -1e22, 2.0**30 * math.pi, 1e30, math.pi / 2, -math.pi / 2]
    special += [709.78, 709.79, -745.2, 88.72, 88.73, -103.9, 1.0 + 1e-7, 1.0 - 1e-7]
    special += [k * math.pi / 2 for k in range(1, 40)] + [k * math.pi / 2 for k in (10**5, 10**6, 10**9)]
    special = np.array(special, dtype=np.float64).astype(dtype)
    x[n // 4 : n // 4 + special.size] = special
    return x


def _ulps(got, want, dtype):
    """Distance in ulp of *want*'s magnitude (a subnormal's ulp below the normals)."""
    fi = np.finfo(dtype)
    scale = np.maximum(np.abs(want), fi.tiny) * fi.eps
    with np.errstate(all="ignore"):
        return np.abs(got.astype(np.float64) - want) / scale


def _check_against_numpy(got, want, dtype, what):
    want_t = want.astype(dtype)
    nan_g, nan_w = np.isnan(got), np.isnan(want_t)
    assert np.array_equal(nan_g, nan_w), f"{what}: NaN where NumPy has none, or none where it has"
    inf_w = np.isinf(want_t)
    assert np.array_equal(got[inf_w], want_t[inf_w]), f"{what}: infinities differ"
    zero_w = want_t == 0
    # a zero NumPy gives exactly, with its sign (sin(-0.0) is -0.0)
    exact_zero = zero_w & (want == 0)
    assert np.array_equal(np.signbit(got[exact_zero]), np.signbit(want_t[exact_zero])), f"{what}: zero signs"
    fin = ~nan_w & ~inf_w & np.isfinite(got) & (np.abs(want) < np.finfo(dtype).max)
    err = _ulps(got[fin], want[fin], dtype)
    worst = int(np.argmax(err)) if err.size else 0
    assert err.size == 0 or err.max() <= 4, (
        f"{what}: {err.max():.1f} ulp from NumPy at x = {np.flatnonzero(fin)[worst]}"
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_libdevice_math_is_close_to_numpy_with_exact_special_values(dtype):
    x = _inputs(dtype, 4096, 11)
    y = np.random.default_rng(12).permutation(x)
    out = np.full((len(UNARY), x.size), 7.0, dtype)  # poison
    with np.errstate(all="ignore"):
        _unary[x.size // 128, 128](out, x)
        for row, name in enumerate(UNARY):
            want = _NP.get(name, getattr(np, name))(x.astype(np.float64))
            _check_against_numpy(out[row], want, dtype, f"math.{name}({dtype.__name__})")
        out2 = np.full((2, x.size), 7.0, dtype)
        _binary[x.size // 128, 128](out2, x, y)
        for row, name in enumerate(BINARY):
            want = _NP.get(name, getattr(np, name, None))(x.astype(np.float64), y.astype(np.float64))
            _check_against_numpy(out2[row], want, dtype, f"math.{name}({dtype.__name__})")


def test_the_exact_functions_are_the_expected_ones():
    """Which functions are offered follows from libdevice's code; a change of it (a
    new CUDA toolkit) or of the intrinsics lowered here shows up as a difference."""
    names = set(libdevice.exact_names())
    assert {"sin", "cos", "exp", "exp2", "expm1", "sinh", "atan2"} <= names
    # expm1f is exact in CUDA 13.5's libdevice (the box), not in the H100's numba-cuda install
    assert {"sinf", "cosf", "logf", "log2f", "log10f", "atan2f", "hypotf"} <= names
    # approximations in the special function unit: not offered
    assert not names & {"expf", "exp2f", "log", "tanh", "tanhf", "pow", "powf", "tan", "tanf"}


@pytest.mark.parametrize("dtype,fns", [(np.float64, ("sin", "cos", "exp")), (np.float32, ("sinf", "cosf", "logf"))])
def test_the_ir_calls_no_c_library_function(dtype, fns):
    from numba import types

    ty = types.float64 if dtype == np.float64 else types.float32
    ir = _unary.inspect_llvm((types.Array(ty, 2, "C"), types.Array(ty, 1, "C")))
    for f in fns:
        base = f.rstrip("f") if dtype == np.float32 else f
        assert f"@{f}(" not in ir and f"@llvm.{base}." not in ir, f"{f} calls the C library"


@xpu.jit
def _spellings(out, x, y):
    i = xpu.grid(1)
    if i < x.size:
        out[0, i] = math.sin(x[i])
        out[1, i] = np.sin(x[i])
        out[2, i] = math.atan2(x[i], y[i])
        out[3, i] = np.arctan2(x[i], y[i])
        z = complex(y[i], x[i])
        out[4, i] = cmath.phase(z)  # numba.cuda: math.atan2(z.imag, z.real)
        out[5, i] = cmath.exp(z).real  # numba.cuda: math.exp(re) * math.cos(im)
        out[6, i] = math.exp(y[i]) * math.cos(x[i])
        out[7, i] = np.log10(abs(x[i]))
        out[8, i] = math.log10(abs(x[i]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numpy_ufuncs_and_cmath_take_the_same_libdevice_code(dtype):
    """numba.cuda computes ``np.sin(x)`` of a scalar, and the math inside ``cmath``,
    with the libdevice call ``math.sin`` makes: the same bits on the CPU (a probe of
    the thirty-first session found the C library's there, 3-34 % of inputs apart)."""
    x = _inputs(dtype, 1024, 31)
    x = x[np.isfinite(x) & (np.abs(x) < 50)]
    x = x[: x.size // 32 * 32]
    y = np.random.default_rng(32).permutation(x)
    out = np.full((9, x.size), 7.0, np.float64)
    with np.errstate(all="ignore"):
        _spellings[x.size // 32, 32](out, x, y)
    for a, b in ((0, 1), (2, 3), (4, 2), (7, 8)):
        assert np.array_equal(out[a], out[b], equal_nan=True), (a, b)
    if dtype == np.float64:
        assert np.array_equal(out[5], out[6], equal_nan=True)


@pytest.mark.cuda
@pytest.mark.skipif(not cuda_available(), reason="needs an NVIDIA GPU (numba.cuda.is_available() is false)")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cpu_and_gpu_give_the_same_bits(dtype):
    n = 1 << 18
    x = _inputs(dtype, n, 21)
    y = np.random.default_rng(22).permutation(x)
    report = []
    for kernel, args, names in ((_unary, (x,), UNARY), (_binary, (x, y), BINARY)):
        cpu = np.full((len(names), n), 7.0, dtype)
        gpu = cpu.copy()
        with np.errstate(all="ignore"):
            kernel[n // 128, 128](cpu, *args)
        kernel.cuda[n // 128, 128](gpu, *args)
        for row, name in enumerate(names):
            lname = name + ("f" if dtype == np.float32 else "")
            same = (cpu[row].view(np.uint8).reshape(n, -1) == gpu[row].view(np.uint8).reshape(n, -1)).all(1)
            same |= np.isnan(cpu[row]) & np.isnan(gpu[row])
            bad = np.flatnonzero(~same)
            exact = libdevice.exact_function(lname)
            report.append((lname, exact, bad.size))
            if exact:
                assert bad.size == 0, (
                    f"math.{name}({dtype.__name__}): {bad.size} of {n} differ, first x = {x[bad[0]]!r}"
                )
    print("\n".join(f"{n}: {'libdevice' if e else 'Numba CPU'}, {b} differ" for n, e, b in report))


def _sin_of(x):
    return math.sin(x)


def _atan2_of(x, y):
    return math.atan2(x, y)


@pytest.mark.parametrize("dt", ["bool", "int8", "int32", "uint64", "float32", "float64"])
def test_the_cpu_types_these_functions_as_numba_cuda(dt):
    """The CPU target types ``math.sin`` & co with Numba's CPU typing, which is
    numba.cuda's for them (numba.cuda's own typing, through ``cuda.compile_ptx``, as the
    oracle): the float type picks the libdevice function (``sin`` or ``sinf``)."""
    from numba import cuda
    from numba import types as nt

    ty = nt.boolean if dt == "bool" else getattr(nt, dt)
    for fn, args in ((_sin_of, (ty,)), (_atan2_of, (ty, nt.float32))):
        want = np.dtype(str(cuda.compile_ptx(fn, args, device=True, cc=(9, 0))[1]))
        got = xpu.jit(fn)(*[np.ones(4, dt if t is ty else "float32") for t in args]).dtype
        assert got == want, (fn.__name__, dt)
