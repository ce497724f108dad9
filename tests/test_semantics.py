"""Regression tests for silent wrong results under lane-varying control flow,
barriers, selectors and float edge cases (docs/semantics.md is the spec).

Each kernel runs on every available target with release and debug builds;
outputs are poisoned first and inputs are random. Expected values are computed
here with NumPy, lane by lane, or by ops.py's reference.
"""

import math

import numpy as np
import pytest

from numquad import Wave, ops, xpu

from conftest import cuda_available

POISON = -7777


def _run(fn, target, debug, grid, block, *args):
    """Launch a fresh @xpu.jit(debug=...) copy of *fn* on NumPy arrays (the CUDA
    target copies them to the device and back, as numba.cuda does)."""
    k = xpu.jit(debug=debug)(fn)
    getattr(k, target)[grid, block](*args)
    return list(args)


VARIANTS = [
    ("cpu", False),
    ("cpu", True),
    pytest.param("cuda", False, marks=pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU")),
]


# -- uniform values after per-lane loop exits ------------------------------------


def k_while_vote(out):
    i = xpu.grid(1)
    c = 0
    while Wave.any(c < 1):
        c += 1
    out[i] = c


def k_break_reads_loop_var(out):
    i = xpu.grid(1)
    j = 0
    for j in range(4):
        x = Wave.prefixSum(np.int32(1))  # noqa: F841 - the issue's reproducer
        if Wave.laneId() < 5:
            break
    out[i] = j


def k_continue_before_acc(out):
    i = xpu.grid(1)
    acc = 0
    for j in range(4):
        if Wave.laneId() < 5:
            continue
        acc += 1
        x = Wave.prefixSum(np.int32(1))  # noqa: F841 - the issue's reproducer
    out[i] = acc


def k_while_break_per_lane(out, lim):
    i = xpu.grid(1)
    c = 0
    while c < 6:
        c += 1
        y = Wave.reduceSum(np.int32(1))  # noqa: F841 - the issue's reproducer
        if c >= lim[i]:
            break
    out[i] = c


@pytest.mark.slow
@pytest.mark.parametrize("target,debug", VARIANTS)
def test_uniform_values_after_per_lane_exits(target, debug):
    lanes = np.arange(32)
    (out,) = _run(k_while_vote, target, debug, 1, 32, np.full(32, POISON, np.int64))
    np.testing.assert_array_equal(out, 1)
    (out,) = _run(k_break_reads_loop_var, target, debug, 1, 32, np.full(32, POISON, np.int64))
    np.testing.assert_array_equal(out, np.where(lanes < 5, 0, 3))
    (out,) = _run(k_continue_before_acc, target, debug, 1, 32, np.full(32, POISON, np.int64))
    np.testing.assert_array_equal(out, np.where(lanes < 5, 0, 4))
    lim = np.random.default_rng(3).integers(1, 8, 64).astype(np.int64)
    out, _ = _run(k_while_break_per_lane, target, debug, 2, 32, np.full(64, POISON, np.int64), lim)
    np.testing.assert_array_equal(out, np.minimum(lim, 6))


def k_trip_scan(out, trip):
    i = xpu.grid(1)
    acc = np.int64(0)
    for j in range(trip[i]):
        acc += Wave.prefixSum(np.int64(1))
    out[i] = acc


@pytest.mark.slow
@pytest.mark.parametrize("target,debug", VARIANTS)
def test_scan_in_loop_with_per_lane_trip_counts(target, debug):
    trip = np.random.default_rng(11).integers(0, 5, 64).astype(np.int64)
    out, _ = _run(k_trip_scan, target, debug, 1, 64, np.full(64, POISON, np.int64), trip)
    want = np.zeros(64, np.int64)
    t = trip.reshape(2, 32)
    for j in range(5):
        active = t > j
        want += np.where(active, np.cumsum(active, axis=1) - 1, 0).reshape(-1)
    np.testing.assert_array_equal(out, want)


# -- expressions after a barrier: per wave, not per block --------------------------


def k_barrier_selector(out, v):
    i = xpu.grid(1)
    xpu.syncthreads()
    out[i] = Wave.shuffleXor(v[i], i % 3)


def k_barrier_ballot(out):
    i = xpu.grid(1)
    xpu.syncthreads()
    out[i] = Wave.ballot(i & 2)


@pytest.mark.slow
@pytest.mark.parametrize("target,debug", VARIANTS)
@pytest.mark.parametrize("n", [64, 544, 1024])
def test_operands_after_barrier(target, debug, n):
    v = np.random.default_rng(n).integers(-1000, 1000, n).astype(np.int32)
    out, _ = _run(k_barrier_selector, target, debug, 1, n, np.full(n, POISON, np.int32), v)
    t = np.arange(n)
    np.testing.assert_array_equal(out, v[(t & ~31) | ((t & 31) ^ (t % 3))])
    (out,) = _run(k_barrier_ballot, target, debug, 1, n, np.full(n, 7, np.uint32))
    np.testing.assert_array_equal(out, np.uint32(0xCCCCCCCC))


# -- shared-memory indices that wrap inside a wave ---------------------------------


def _shared_kernel(expr):
    src = (
        "def k(out, s_in):\n"
        "    s = xpu.shared.array(64, np.int32)\n"
        "    t = xpu.threadIdx.x\n"
        "    if t < 64:\n"
        "        s[t] = s_in[t]\n"
        "    xpu.syncthreads()\n"
        f"    out[t] = s[{expr}]\n"
    )
    import linecache

    name = f"<test_semantics shared {expr}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"xpu": xpu, "np": np}
    exec(compile(src, name, "exec"), ns)
    return ns["k"]


SHARED_INDICES = [
    "t & 7",
    "t % 8",
    "(t ^ 5) & 63",
    "63 - t % 64",
    "(t * 7 + 3) & 63",
    "t >> 2",
    "t & 15",
    "(t & 7) + 8",
]


@pytest.mark.parametrize("target,debug", VARIANTS)
@pytest.mark.parametrize("expr", SHARED_INDICES)
def test_shared_index_expressions(target, debug, expr):
    n = 256
    s_in = np.random.default_rng(5).integers(-(10**6), 10**6, 64).astype(np.int32)
    out, _ = _run(_shared_kernel(expr), target, debug, 1, n, np.full(n, POISON, np.int32), s_in)
    t = np.arange(n)
    np.testing.assert_array_equal(out, s_in[eval(expr, {"t": t})])


# -- syncwarp orders memory between the lanes of a wave ---------------------------


def k_syncwarp(out, x):
    i = xpu.grid(1)
    sm = xpu.shared.array(64, np.int32)
    t = xpu.threadIdx.x
    sm[t] = x[i]
    xpu.syncwarp()
    out[i] = sm[(t & 32) + 31 - (t & 31)]


@pytest.mark.parametrize("target,debug", VARIANTS)
def test_syncwarp_is_a_wave_barrier(target, debug):
    x = np.random.default_rng(9).integers(-100, 100, 128).astype(np.int32)
    out, _ = _run(k_syncwarp, target, debug, 2, 64, np.full(128, POISON, np.int32), x)
    t = np.arange(128)
    np.testing.assert_array_equal(out, x[(t & ~31) + 31 - (t & 31)])


# -- runtime selectors use their exact value -------------------------------------


def k_down(out, v, k):
    i = xpu.grid(1)
    out[i] = Wave.shuffleDown(v[i], k)


def k_up(out, v, k):
    i = xpu.grid(1)
    out[i] = Wave.shuffleUp(v[i], k)


def k_up_lane(out, v, k):
    i = xpu.grid(1)
    out[i] = Wave.shuffleUp(v[i], k[i])


def k_down_lane(out, v, k):
    i = xpu.grid(1)
    out[i] = Wave.shuffleDown(v[i], k[i])


SELECTORS = [
    np.int64(2**32 + 4),
    np.int64(-1),
    np.int64(-5),
    np.int32(-31),
    np.int32(-32),
    np.uint32(4294967295),
    np.uint64(2**64 - 1),
    np.uint64(2**63),
    np.int64(-(2**63)),
    np.int8(-3),
    np.uint8(255),
    np.int64(3),
]


@pytest.mark.slow
@pytest.mark.parametrize("target,debug", VARIANTS)
@pytest.mark.parametrize("sel", SELECTORS, ids=lambda s: f"{type(s).__name__}({int(s)})")
def test_runtime_selectors_exact(target, debug, sel):
    v = np.random.default_rng(1).integers(-1000, 1000, 32).astype(np.int32)
    active = np.ones((1, 32), bool)
    for fn, name in ((k_down, "Wave.shuffleDown"), (k_up, "Wave.shuffleUp")):
        want = ops.get(name).reference(v[None, :], _sel_array(sel), active=active)[0]
        out, _, _ = _run(fn, target, debug, 1, 32, np.full(32, POISON, np.int32), v, sel)
        np.testing.assert_array_equal(out, want, err_msg=f"{name}({sel!r})")
        ks = np.full(32, sel, dtype=np.asarray(sel).dtype)
        lane_fn = k_down_lane if fn is k_down else k_up_lane
        out, _, _ = _run(lane_fn, target, debug, 1, 32, np.full(32, POISON, np.int32), v, ks)
        np.testing.assert_array_equal(out, want, err_msg=f"{name}(per-lane {sel!r})")


def _sel_array(sel):
    """The selector's exact value as an object array (uint64 2**64-1 stays positive)."""
    return np.array([[int(sel)]], dtype=object)


def test_reference_selectors_are_exact():
    v = np.arange(32)[None, :]
    active = np.ones((1, 32), bool)
    down = ops.get("Wave.shuffleDown").reference(v, _sel_array(np.uint64(2**64 - 1)), active=active)
    np.testing.assert_array_equal(down, v)
    up = ops.get("Wave.shuffleUp").reference(v, _sel_array(np.int64(-1)), active=active)
    np.testing.assert_array_equal(up[0, :31], np.arange(1, 32))


# -- scans over non-prefix masks, float min/max zeros and NaN ------------------------


def k_scan_if(out, x, p):
    i = xpu.grid(1)
    if p[i]:
        out[i] = Wave.prefixSum(x[i])


def k_pmin_if(out, x, p):
    i = xpu.grid(1)
    if p[i]:
        out[i] = Wave.prefixMin(x[i])


def k_rmax_if(out, x, p):
    i = xpu.grid(1)
    if p[i]:
        out[i] = Wave.reduceMax(x[i])


def k_rmin_if(out, x, p):
    i = xpu.grid(1)
    if p[i]:
        out[i] = Wave.reduceMin(x[i])


def _bits_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f":
        both_nan = np.isnan(a) & np.isnan(b)
        return bool(np.all((a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}")) | both_nan))
    return np.array_equal(a, b)


@pytest.mark.parametrize("target,debug", VARIANTS)
@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "float64"])
@pytest.mark.parametrize(
    "kernel,name",
    [
        (k_scan_if, "Wave.prefixSum"),
        (k_pmin_if, "Wave.prefixMin"),
        (k_rmax_if, "Wave.reduceMax"),
        (k_rmin_if, "Wave.reduceMin"),
    ],
)
def test_gappy_masks_zeros_and_nan(target, debug, dtype, kernel, name):
    rng = np.random.default_rng(abs(hash((dtype, name))) % 2**32)
    n = 128
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = (rng.standard_normal(n) * 10).astype(dt)
        pick = rng.integers(0, 5, n)
        x[pick == 0] = 0.0
        x[pick == 1] = -0.0
        x[rng.random(n) < 0.05] = np.nan
    else:
        x = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, n, endpoint=True).astype(dt)
    p = rng.random(n) < 0.6
    p[0] = False  # lane 0 inactive: the scan starts at a later lane
    poison = np.zeros(n, dt) + dt.type(99)
    out, _, _ = _run(kernel, target, debug, 1, n, poison.copy(), x, p)
    want = ops.get(name).reference(x.reshape(-1, 32), active=p.reshape(-1, 32)).reshape(-1).astype(dt)
    assert _bits_equal(out[p], want[p])
    assert _bits_equal(out[~p], poison[~p])


def test_reference_min_max_zero_ties():
    mn = ops.get("Wave.reduceMin").reference(np.array([[0.0, -0.0] * 16]), active=np.ones((1, 32), bool))
    mx = ops.get("Wave.reduceMax").reference(np.array([[-0.0, 0.0] * 16]), active=np.ones((1, 32), bool))
    assert np.all(np.signbit(mn)) and not np.any(np.signbit(mx))
    first = ops.get("Wave.prefixSum").reference(np.ones((1, 32), np.float32), active=np.arange(32)[None, :] >= 3)
    assert first[0, 3] == 0.0 and not np.signbit(first[0, 3])  # the first active lane gets +0.0


# -- atomics keep numba.cuda's float max/min semantics -----------------------------


def k_atomic_minmax(a, b, v, old_a, old_b):
    i = xpu.grid(1)
    old_a[i] = xpu.atomic.max(a, i, v[i])
    old_b[i] = xpu.atomic.min(b, i, v[i])


@pytest.mark.parametrize("target,debug", VARIANTS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_atomic_float_max_keeps_nan(target, debug, dtype):
    a0 = np.array([np.nan, 1.0, 5.0, 0.0, -0.0, 3.0, np.nan, 2.0], dtype)
    v = np.array([5.0, np.nan, 7.0, -0.0, 0.0, 1.0, np.nan, 2.0], dtype)
    a, b, _, old_a, old_b = _run(
        k_atomic_minmax, target, debug, 1, 8, a0.copy(), a0.copy(), v, np.zeros(8, dtype), np.zeros(8, dtype)
    )
    # numba.cuda: nothing is stored when the value or the element is NaN
    want_a = np.where(np.isnan(a0) | np.isnan(v), a0, np.where(a0 < v, v, a0))
    want_b = np.where(np.isnan(a0) | np.isnan(v), a0, np.where(a0 > v, v, a0))
    assert _bits_equal(a, want_a) and _bits_equal(b, want_b)
    assert _bits_equal(old_a, a0) and _bits_equal(old_b, a0)


# -- generated names never collide with the helpers of generated code ------------


def test_fresh_temporaries_never_shadow_generated_helpers():
    """The 32nd masked-loop counter was once ``_nq_i32``, the name of np.int32 in
    generated code: Numba failed with NotDefinedError on valid kernels."""
    from numquad.cpu import generated
    from numquad.cpu.names import RESERVED

    def k(out, x):
        i = xpu.grid(1)
        out[i] = Wave.prefixSum(x[i])

    fe = xpu.jit(k)._target("cpu").frontend()
    helpers = set(generated.namespace(fe)) | {"_nq_i32", "_nq_i64", "_nq_u32"}
    for stem in ("a", "x", "c", "i", "e", "s", "cv", "f"):
        names = {fe.fresh(stem) for _ in range(200)}
        assert not names & helpers
    assert RESERVED == "_nq_"


# -- found by the fuzzer on the H200 (seed 1, kernel 270), not yet re-run there ----


@xpu.jit
def _lf_while_ops(x):
    r = Wave.reduceMin(Wave.prefixMin(np.uint32(Wave.laneId())))
    w = np.int32(0)
    while w < np.int32(Wave.laneId() & np.uint32(3)):
        w = np.int32(w + np.int32(1))
        r = np.uint32(r ^ Wave.reduceProduct(Wave.prefixMin(np.uint32(37))))
    return r + x


def k_lane_fn_while(out, x):
    t = np.int32(xpu.threadIdx.x + xpu.threadIdx.y * xpu.blockDim.x)
    out[t] = _lf_while_ops(x[t])


@pytest.mark.parametrize(
    "target", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU"))]
)
def test_lane_function_with_per_lane_while_around_ops(target):
    x = np.random.default_rng(270).integers(0, 2**32, 35, dtype=np.uint64).astype(np.uint32)
    want = np.full(35, 5, np.uint32)
    xpu.jit(k_lane_fn_while).python[1, (5, 7)](want, x)
    out = np.full(35, 5, np.uint32)
    getattr(xpu.jit(k_lane_fn_while), target)[1, (5, 7)](out, x)
    np.testing.assert_array_equal(out, want)


# -- float / // % (docs/semantics.md "Integer and float arithmetic") ----------------


def k_float_div(a, b, q, fq, r):
    i = xpu.grid(1)
    if i < a.size:
        q[i] = a[i] / b[i]
        fq[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


@pytest.mark.slow
@pytest.mark.parametrize("target,debug", VARIANTS + [("python", False)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_division_by_zero_and_specials_give_numpys_results(target, debug, dtype, rng):
    special = np.array([0.0, -0.0, 1.0, -1.0, 5.5, -5.5, np.inf, -np.inf, np.nan], dtype)
    noise = (rng.standard_normal(23) * 10.0 ** rng.integers(-3, 30, 23)).astype(dtype)
    vals = np.concatenate([special, noise])
    a, b = np.repeat(vals, vals.size), np.tile(vals, vals.size)
    outs = [np.full(a.size, POISON, dtype) for _ in range(3)]
    if debug:
        # debug=True divides with Numba's python error model, as numba.cuda's debug
        # build: a zero divisor raises (docs/semantics.md); the rest as a release build
        with pytest.raises(ZeroDivisionError):
            _run(k_float_div, target, debug, (a.size + 127) // 128, 128, a, b, *outs)
        a, b = a[b != 0], b[b != 0]
        outs = [np.full(a.size, POISON, dtype) for _ in range(3)]
    _run(k_float_div, target, debug, (a.size + 127) // 128, 128, a, b, *outs)
    with np.errstate(all="ignore"):
        want = [np.divide(a, b), np.floor_divide(a, b), np.remainder(a, b)]
    for got, ref, name in zip(outs, want, ["/", "//", "%"]):
        same = (got.view(np.uint8).reshape(a.size, -1) == ref.view(np.uint8).reshape(a.size, -1)).all(1)
        same |= np.isnan(got) & np.isnan(ref)
        bad = np.flatnonzero(~same)
        assert bad.size == 0, (name, [(a[j], b[j], got[j], ref[j]) for j in bad[:5]])


# -- the math functions inside the bit-for-bit promise (docs/semantics.md) ------------


def k_exact_math(a, b, o):
    i = xpu.grid(1)
    if i < a.size:
        o[0, i] = math.sqrt(a[i])
        o[1, i] = abs(a[i])
        o[2, i] = math.fmod(a[i], b[i])
        o[3, i] = math.copysign(a[i], b[i])
        o[4, i] = a[i] * b[i] + a[i] / b[i]  # no FMA contraction


@pytest.mark.parametrize("target,debug", VARIANTS + [("python", False)])
def test_exact_math_functions_give_numpys_bits(target, debug, rng):
    special = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, np.inf, -np.inf, np.nan, 5e-324])
    vals = np.concatenate([special, rng.standard_normal(40) * 10.0 ** rng.integers(-5, 12, 40)])
    a, b = np.repeat(vals, vals.size), np.tile(vals, vals.size)
    if debug:  # (a zero divisor raises there: above)
        a, b = a[b != 0], b[b != 0]
    o = np.full((5, a.size), POISON, np.float64)
    _run(k_exact_math, target, debug, (a.size + 127) // 128, 128, a, b, o)
    with np.errstate(all="ignore"):
        want = [np.sqrt(a), np.abs(a), np.fmod(a, b), np.copysign(a, b), a * b + a / b]
    for row, (got, ref) in enumerate(zip(o, want)):
        same = (got.view(np.int64) == ref.view(np.int64)) | (np.isnan(got) & np.isnan(ref))
        bad = np.flatnonzero(~same)
        assert bad.size == 0, (row, [(a[j], b[j], got[j], ref[j]) for j in bad[:5]])
