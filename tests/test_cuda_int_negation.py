"""Integer negation and ``abs`` wrap as NumPy's do, on the CPU and on the GPU.

ptxas (H200, driver 580) compiles PTX's ``neg.s16``/``abs.s16`` (and ``sub.s16 d, 0,
a``) as if the result could not wrap: ``np.int32(np.int16(-x))`` gave 32768 for
x = -32768 in plain numba.cuda too. The differential fuzzer found it (seed 81,
kernel 138: an int16 ``v = np.int16(np.int16(-8) * v)`` reaching -32768). The CUDA
target rewrites them in the PTX NVVM returns (numquad/cuda/nvvmir.py,
``_neg_abs_ptx``). Expected values come from NumPy; outputs are poisoned first.
"""

import numba
import numpy as np
import pytest

from numquad import xpu
from numquad.cuda.nvvmir import _neg_abs_ptx


def _cuda_available():
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001 - no numba-cuda, no driver: no GPU
        return False


@xpu.jit
def k_neg(out, a):
    i = xpu.grid(1)
    if i < a.size:
        x = a[i]
        out[i, 0] = np.int64(np.int16(-np.int16(x)))
        out[i, 1] = np.int64(np.int16(abs(np.int16(x))))
        out[i, 2] = np.int64(np.int16(np.int16(-8) * np.int16(x)))
        out[i, 3] = np.int64(np.int32(-x))
        out[i, 4] = np.int64(np.int32(abs(x)))
        out[i, 5] = np.int64(np.int32(np.int32(0) - x))
        out[i, 6] = np.int64(np.int8(-np.int8(x)))


def _inputs(rng):
    edge = [-(2**31), -(2**31) + 1, -32768, -32767, -4096, -129, -128, -1, 0, 1, 127, 32767, 2**31 - 1]
    return np.concatenate([np.array(edge, np.int32), rng.integers(-(2**31), 2**31, 51, dtype=np.int32)])


def _want(a):
    a16, a8, a64 = a.astype(np.int16), a.astype(np.int8), a.astype(np.int64)
    return np.stack(
        [
            (-a16.astype(np.int64)).astype(np.int16),
            np.abs(a16.astype(np.int64)).astype(np.int16),
            (np.int64(-8) * a16).astype(np.int16),
            (-a64).astype(np.int32),
            np.abs(a64).astype(np.int32),
            (-a64).astype(np.int32),
            (-a8.astype(np.int64)).astype(np.int8),
        ],
        1,
    ).astype(np.int64)


@pytest.mark.slow
def test_the_cpu_target_wraps_as_numpy(rng):
    a = _inputs(rng)
    out = np.full((64, 7), -7, np.int64)
    k_neg.cpu[1, 64](out, a)
    np.testing.assert_array_equal(out, _want(a))


@pytest.mark.parametrize("fastmath", [False, True])
def test_the_ptx_has_no_integer_neg_or_abs(fastmath):
    """With fastmath=True too (a probe of the thirty-first session): fastmath gives
    up FMA contraction and approximations, not integer arithmetic; the kernel got
    none of numquad's rewrites then."""
    k = xpu.jit(k_neg.py_func, fastmath=fastmath)
    ptx = k.inspect_ptx((numba.int64[:, ::1], numba.int32[::1]), cc=(9, 0))
    for op in ("neg.s16", "abs.s16", "neg.s32", "abs.s32"):
        assert op not in ptx
    assert "not.b16" in ptx and "max.s16" in ptx


@pytest.mark.parametrize(
    "text, want",
    [
        (b"\tneg.s16 \t%rs3, %rs2;", b"\tnot.b16 %rs3, %rs2;\n\tadd.s16 %rs3, %rs3, 1;"),
        (b"\tneg.s32 \t%r5, %r5;", b"\tnot.b32 %r5, %r5;\n\tadd.s32 %r5, %r5, 1;"),
        (b"\tabs.s16 \t%rs2, %rs1;", b"\tnot.b16 %rs2, %rs1;\n\tadd.s16 %rs2, %rs2, 1;\n\tmax.s16 %rs2, %rs2, %rs1;"),
        (b"\tabs.s32 \t%r2, %r2;", b"\tabs.s32 \t%r2, %r2;"),  # no register for -a: left
        (b"\tneg.f32 \t%f2, %f1;\n\tneg.s64 \t%rd2, %rd1;", b"\tneg.f32 \t%f2, %f1;\n\tneg.s64 \t%rd2, %rd1;"),
        (b"\t@%p3 neg.s16 \t%rs3, %rs2;", b"\t@%p3 not.b16 %rs3, %rs2;\n\t@%p3 add.s16 %rs3, %rs3, 1;"),
        (
            b"\t@!%p1 abs.s32 %r2, %r1;",
            b"\t@!%p1 not.b32 %r2, %r1;\n\t@!%p1 add.s32 %r2, %r2, 1;\n\t@!%p1 max.s32 %r2, %r2, %r1;",
        ),
    ],
)
def test_the_rewrite_of_the_ptx_text(text, want):
    assert _neg_abs_ptx(text) == want


@pytest.mark.cuda
@pytest.mark.skipif(not _cuda_available(), reason="needs an NVIDIA GPU (numba.cuda.is_available() is false)")
def test_the_cuda_target_wraps_as_numpy(rng):
    from numba import cuda

    a = _inputs(rng)
    d = cuda.to_device(np.full((64, 7), -7, np.int64))
    k_neg.cuda[1, 64](d, cuda.to_device(a))
    np.testing.assert_array_equal(d.copy_to_host(), _want(a))
