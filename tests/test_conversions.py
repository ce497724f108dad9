"""Float-to-integer conversions give the GPU's bits on every target
(docs/semantics.md, "Conversions"): toward zero, saturating to the integer's
range, NaN to 0, and an 8-bit result saturating to 16 bits and keeping the low
8 bits (PTX's ``cvt.rzi``; NVPTX converts to 8-bit types through 16 bits).

Before, the CPU target gave x86's answers for NaN and out-of-range values
(``np.uint32(-1.0)`` was 4294967295 on the CPU and 0 on the H200), and the CUDA
target left the output of a constant out of range unwritten (NVVM folded the
conversion to poison and dropped the store). The expected
values come from :func:`_expected`, written here from the rule above with
Python integers; NumPy's own casts are x86's and are not used.
"""

import math

import numpy as np
import pytest

from numquad import xpu

from conftest import cuda_available

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
SPECIAL = [
    0.0,
    -0.0,
    0.5,
    -0.5,
    1.5,
    -1.5,
    2.5,
    127.9,
    128.0,
    -129.0,
    200.0,
    255.5,
    256.0,
    -1.0,
    32767.5,
    32768.0,
    40000.0,
    65535.9,
    65536.0,
    -40000.0,
    2.0**31,
    -(2.0**31) - 1e3,
    3e9,
    4.3e9,
    -3e9,
    2.0**63,
    1e19,
    2.0**64,
    1e20,
    -1e19,
    -1e20,
    1e30,
    -1e30,
    np.inf,
    -np.inf,
    np.nan,
    -np.nan,
    1e-30,
    9.007199254740993e15,
]


def _expected(dt, values):
    """*values* (a float32 or float64 array) converted to *dt* by the rule above; a
    NaN gives what the H200 gives (measured, docs/GPU.md): 0x80...0 of the width
    from float64 into 16, 32 and 64 bits and from float32 into 64 bits, else 0."""
    info = np.iinfo(dt)
    if info.bits == 8:
        lo, hi = (-(2**15), 2**15 - 1) if info.kind == "i" else (0, 2**16 - 1)
    else:
        lo, hi = info.min, info.max
    nan = 1 << (info.bits - 1) if info.bits > 8 and (values.dtype == np.float64 or info.bits == 64) else 0
    out = []
    for v in values:
        v = float(v)
        r = nan if math.isnan(v) else max(lo, min(hi, math.trunc(v) if math.isfinite(v) else (hi if v > 0 else lo)))
        r &= (1 << info.bits) - 1
        if info.kind == "i" and r >= 1 << (info.bits - 1):
            r -= 1 << info.bits
        out.append(r)
    return np.array(out, dtype=dt)


def _inputs(fdt, seed):
    rng = np.random.default_rng(seed)
    rand = rng.standard_normal(160) * rng.choice([1.0, 300.0, 7e4, 5e9, 3e19], 160)
    vals = np.concatenate([np.array(SPECIAL), rand, -np.array(SPECIAL)])
    return vals.astype(fdt)


def k_explicit(x, o_int8, o_int16, o_int32, o_int64, o_uint8, o_uint16, o_uint32, o_uint64):
    i = xpu.grid(1)
    if i < x.size:
        o_int8[i] = np.int8(x[i])
        o_int16[i] = np.int16(x[i])
        o_int32[i] = np.int32(x[i])
        o_int64[i] = np.int64(x[i])
        o_uint8[i] = np.uint8(x[i])
        o_uint16[i] = np.uint16(x[i])
        o_uint32[i] = np.uint32(x[i])
        o_uint64[i] = np.uint64(x[i])


def k_implicit(x, o_int8, o_int16, o_int32, o_int64, o_uint8, o_uint16, o_uint32, o_uint64):
    i = xpu.grid(1)
    if i < x.size:
        v = x[i]
        o_int8[i] = v
        o_int16[i] = v
        o_int32[i] = v
        o_int64[i] = v
        o_uint8[i] = v
        o_uint16[i] = v
        o_uint32[i] = v
        o_uint64[i] = v


def k_python_int(x, out):
    i = xpu.grid(1)
    if i < x.size:
        out[i] = int(x[i]) ^ np.int64(0x5A5A)


TARGETS = [
    ("cpu", False),
    ("cpu", True),
    ("python", False),
    pytest.param("cuda", False, marks=pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU")),
]


def _launch(fn, target, debug, x, outs):
    k = xpu.jit(debug=debug)(fn)
    n = x.size
    getattr(k, target)[(n + 63) // 64, 64](x, *outs)


@pytest.mark.parametrize("target,debug", TARGETS)
@pytest.mark.parametrize("fdt", ["float32", "float64"])
@pytest.mark.parametrize("fn", [k_explicit, k_implicit], ids=["explicit", "implicit"])
def test_float_to_int(fn, fdt, target, debug):
    x = _inputs(fdt, 11)
    outs = [np.full(x.size, 0x55, dtype=dt) for dt in INTS]  # poisoned
    _launch(fn, target, debug, x, outs)
    for dt, got in zip(INTS, outs):
        want = _expected(dt, x)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, f"{fdt} -> {dt}: at {x[bad[:5]]} got {got[bad[:5]]}, want {want[bad[:5]]}"


@pytest.mark.parametrize("target,debug", TARGETS)
def test_python_int_of_a_float(target, debug):
    x = _inputs("float64", 12)
    out = np.full(x.size, 0x55, dtype=np.int64)
    _launch(k_python_int, target, debug, x, [out])
    want = _expected("int64", x) ^ np.int64(0x5A5A)
    np.testing.assert_array_equal(out, want)


@pytest.mark.slow
def test_the_cpu_ir_converts_saturating():
    """The mechanism: no fptosi/fptoui is left in the wave code's IR."""
    from numba import types

    k = xpu.jit(k_explicit)
    sig = (types.float32[::1],) + tuple(getattr(types, dt)[::1] for dt in INTS)
    ir = k.inspect_llvm(sig)
    assert "llvm.fptosi.sat" in ir and "llvm.fptoui.sat" in ir
    assert " fptosi " not in ir and " fptoui " not in ir


def test_the_ptx_converts_with_cvt_rzi():
    """The GPU side of the rule: PTX's saturating cvt.rzi, 8-bit types via 16 bits."""
    import re
    from numba import types

    k = xpu.jit(k_explicit)
    sig = (types.float64[::1],) + tuple(getattr(types, dt)[::1] for dt in INTS)
    ptx = k.inspect_ptx(sig, cc=(9, 0))
    cvts = set(re.findall(r"cvt\.rzi\.([su]\d+)\.f64", ptx))
    assert cvts == {"s16", "s32", "s64", "u16", "u32", "u64"}, cvts


def test_rewrite_keeps_other_ir():
    from llvmlite import binding as ll

    from numquad._conversions import cvt_rzi, rewrite

    text = (
        'define i32 @f(double %"x", <4 x float> %"v") {\n'
        '  %".2" = fptosi double %"x" to i32\n'
        '  %".3" = fptoui double %"x" to i8\n'
        '  %".4" = fptosi <4 x float> %"v" to <4 x i64>\n'
        '  %".5" = sitofp i32 %".2" to double\n'
        '  ret i32 %".2"\n}\n'
    )
    out = rewrite(text)
    assert 'call i32 @llvm.fptosi.sat.i32.f64(double %"x")' in out
    assert '%".2" = select i1 ' in out and "i32 -2147483648" in out  # a float64 NaN
    assert 'call i16 @llvm.fptoui.sat.i16.f64(double %"x")' in out
    assert '%".3" = trunc i16 ' in out  # 8 bits: NaN gives 0
    assert 'call <4 x i64> @llvm.fptosi.sat.v4i64.v4f32(<4 x float> %"v")' in out
    assert '%".4" = select <4 x i1> ' in out
    assert '%".5" = sitofp i32 %".2" to double' in out
    assert out.count("declare") == 3
    ll.parse_assembly(out).verify()
    ptx = cvt_rzi(text)
    assert '%".2" = call i32 asm "cvt.rzi.s32.f64 $0, $1;", "=r,d"(double %"x")' in ptx
    assert 'asm "cvt.rzi.u16.f64 $0, $1;", "=h,d"' in ptx and "to i8" in ptx
    assert '%".4" = fptosi <4 x float>' in ptx  # NVVM IR has no vectors here


def test_the_ptx_keeps_a_constant_conversion():
    from numba import types

    ptx = xpu.jit(k_constant).inspect_ptx((types.int32[::1],), cc=(9, 0))
    assert "cvt.rzi.s32.f64" in ptx


def k_rounding(x, o_floor, o_ceil, o_trunc, o_round, o_round2, o_roundm1):
    i = xpu.grid(1)
    if i < x.size:
        o_floor[i] = math.floor(x[i])
        o_ceil[i] = math.ceil(x[i])
        o_trunc[i] = math.trunc(x[i])
        o_round[i] = round(x[i])
        o_round2[i] = round(x[i], 2)
        o_roundm1[i] = round(x[i], -1)


def _round_nd(x, nd):
    """round(x, nd) of numba.cuda's lowering, written out with NumPy: in float64,
    y = x * 10**nd (x / 10**-nd), rounded half to even to an int64 that saturates
    (so -0.0 gives +0.0 and |y| >= 2**63 the int64 limit), then divided back; inf
    and NaN pass through, and so does x where y overflows to inf (H200, docs/GPU.md)."""
    v = x.astype(np.float64)
    p = np.float64(10.0) ** abs(nd)
    with np.errstate(all="ignore"):
        y = v * p if nd >= 0 else v / p
        z = np.clip(np.rint(y), -(2.0**63), 2.0**63 - 1024)  # int64 saturation, in float64
        z = np.where(z >= 2.0**63 - 1024, np.float64(2**63 - 1), z) + 0.0  # -0.0 -> +0.0
        r = z / p if nd >= 0 else z * p
        r = np.where(np.isfinite(v) & np.isfinite(y), r, v)
    return r.astype(x.dtype)


@pytest.mark.slow
@pytest.mark.parametrize("target,debug", TARGETS)
@pytest.mark.parametrize("fdt", ["float32", "float64"])
def test_floor_ceil_trunc_round(fdt, target, debug):
    x = _inputs(fdt, 13)
    x[::7] = (np.arange(x[::7].size) - 20.5).astype(fdt) / 4  # ties: .125, .375, .5, ...
    ints = [np.full(x.size, 0x55, dtype=np.int64) for _ in range(4)]
    flts = [np.full(x.size, np.nan, dtype=fdt) for _ in range(2)]
    _launch(k_rounding, target, debug, x, ints + flts)
    xd = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        for name, fn, got in zip(("floor", "ceil", "trunc", "round"), (np.floor, np.ceil, np.trunc, np.rint), ints):
            np.testing.assert_array_equal(got, _expected("int64", fn(xd)), err_msg=name)
    np.testing.assert_array_equal(flts[0].view(f"u{x.itemsize}"), _round_nd(x, 2).view(f"u{x.itemsize}"))
    np.testing.assert_array_equal(flts[1].view(f"u{x.itemsize}"), _round_nd(x, -1).view(f"u{x.itemsize}"))


def k_constant(out):
    i = xpu.grid(1)
    if i < out.size:
        out[i] = np.int32(np.float32(-2.25) * np.float64(1e10)) + np.int32(i & 1)


@pytest.mark.parametrize("target,debug", TARGETS)
def test_a_constant_out_of_range(target, debug):
    """Fuzz seed 11 #302 (H200): NVVM folded this conversion to poison and the
    store was dropped, leaving the poisoned output in place."""
    out = np.full(70, 0x55, dtype=np.int32)
    getattr(xpu.jit(debug=debug)(k_constant), target)[2, 64](out)
    np.testing.assert_array_equal(out, np.int32(-(2**31)) + (np.arange(70) & 1).astype(np.int32))


def k_augmented(x, o_int32, o_uint8):
    i = xpu.grid(1)
    if i < x.size:
        o_int32[i] += x[i]
        o_uint8[i] -= x[i] * np.float64(0.5)


@pytest.mark.parametrize("target,debug", TARGETS)
def test_augmented_store_of_a_float(target, debug):
    """``a[i] += f`` into an integer array: the sum is a float, converted by the rule."""
    x = _inputs("float64", 14)
    o32 = np.random.default_rng(3).integers(-1000, 1000, x.size).astype(np.int32)
    o8 = np.random.default_rng(4).integers(0, 256, x.size).astype(np.uint8)
    w32 = _expected("int32", o32.astype(np.float64) + x)
    w8 = _expected("uint8", o8.astype(np.float64) - x * 0.5)
    _launch(k_augmented, target, debug, x, [o32, o8])
    np.testing.assert_array_equal(o32, w32)
    np.testing.assert_array_equal(o8, w8)
