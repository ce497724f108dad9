"""Tuple, namedtuple and single-record kernel arguments.

numba.cuda kernels take tuples and namedtuples of scalars and arrays (nested too),
the same in every lane, and a single record (``arr[0]`` of a structured array), a
reference to the caller's record: the kernel reads and writes its fields
(tests/ported/test_ported_array_args.py, tests/ported/test_ported_record_dtype.py).
The CPU target refused both at the launch until numquad/cpu/dispatch.py's
``_passable`` took them. Expected values come from NumPy and the
python target (the interpreter), on random inputs with poisoned outputs, on CPU
release and debug builds and CUDA where a GPU exists.
"""

from collections import namedtuple

import numpy as np
import pytest

from numquad import NumquadTypeError, Quad, Wave, xpu

POISON = -777.0
P3 = namedtuple("P3", ("a", "b", "c"))
REC = np.dtype([("a", "f8"), ("b", "i4"), ("h", "f4", (3,)), ("c", "f8"), ("d", "i8"), ("g", "f8", (2,))], align=True)


def _lane(n, block):
    """Each thread's lane in its wave (1-D blocks of *block* threads)."""
    return (np.arange(n) % block) % 32


def _wave_id(n, block):
    t = np.arange(n)
    return (t // block) * ((block + 31) // 32) + (t % block) // 32


def _wave_sum(v, n, block):
    w = _wave_id(n, block)
    return np.array([v[w == k].sum() for k in w])


def _wave_prefix(v, n, block):
    w = _wave_id(n, block)
    return np.array([v[(w == w[j]) & (np.arange(n) < j)].sum() for j in range(n)])


def _quad_swap_h(v):
    return v[np.arange(v.size) ^ 1]


def _both(fn, target, debug, grid, block, *args, n, copy=lambda a: a):
    """*fn* on the python target and on *target*; the outputs (the last argument, of
    length *n*) poisoned first. Returns (python's output, the target's, and the
    arguments each ran with)."""
    k = xpu.jit(fn, debug=debug)
    want, got = np.full(n, POISON), np.full(n, POISON)
    a_py, a_t = copy(args), copy(args)
    k.python[grid, block](*a_py, want)
    getattr(k, target)[grid, block](*a_t, got)
    assert (want != POISON).all()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    return want, a_py, a_t


def _skip_debug_on_cuda(debug, target):
    if debug and target == "cuda":
        pytest.skip("debug builds: CPU")


# -- tuples ---------------------------------------------------------------------


def _scale_and_prefix(x, t, out):
    i = xpu.grid(1)
    out[i] = t[0] * x[i] + Wave.prefixSum(t[1])


@pytest.mark.parametrize("debug", [False, True])
def test_a_tuple_argument_is_the_same_in_every_lane(debug, target, rng):
    _skip_debug_on_cuda(debug, target)
    n, block = 100, 50  # partial waves
    x = rng.standard_normal(n)
    t = (float(rng.standard_normal()), int(rng.integers(-9, 9)))  # Tuple(float64, int64)
    want, _, _ = _both(_scale_and_prefix, target, debug, 2, block, x, t, n=n)
    np.testing.assert_allclose(want, t[0] * x + _lane(n, block) * t[1], rtol=1e-12)


def _namedtuple_unpacked_and_iterated(x, p, out):
    i = xpu.grid(1)
    a, b, c = p
    s = 0.0
    for v in p:  # around a cross-lane op
        s += Wave.reduceSum(v * x[i])
    for j in range(len(p)):
        s += p[j]
    out[i] = a * x[i] + b - c + len(p) + s + Quad.swapHorizontal(x[i] * p.c)


@pytest.mark.parametrize("debug", [False, True])
def test_a_namedtuple_unpacked_indexed_and_looped_over(debug, target, rng):
    _skip_debug_on_cuda(debug, target)
    n, block = 64, 32
    x = rng.standard_normal(n)
    p = P3(*map(float, rng.standard_normal(3)))
    want, _, _ = _both(_namedtuple_unpacked_and_iterated, target, debug, 2, block, x, p, n=n)
    s = sum(_wave_sum(v * x, n, block) for v in p) + sum(p)
    exp = p.a * x + p.b - p.c + 3 + s + _quad_swap_h(x * p.c)
    np.testing.assert_allclose(want, exp, rtol=1e-12)


def _nested_with_arrays(t, out):
    i = xpu.grid(1)
    xs, ys = t[0]
    w, (lo, k) = t[1], t[2]
    out[i] = w * xs[i] + ys[i] * k + lo + Wave.reduceMax(xs[i] * lo) + len(t[0]) + len(t[2])


@pytest.mark.parametrize("debug", [False, True])
def test_a_nested_tuple_holding_arrays(debug, target, rng):
    _skip_debug_on_cuda(debug, target)
    n, block = 96, 32
    xs, ys = rng.standard_normal(n), rng.standard_normal(n)
    t = ((xs, ys), float(rng.standard_normal()), (float(rng.standard_normal()), int(rng.integers(1, 5))))
    want, _, _ = _both(_nested_with_arrays, target, debug, 3, block, t, n=n)
    lo, k = t[2]
    w = _wave_id(n, block)
    m = np.array([(xs * lo)[w == j].max() for j in w])
    np.testing.assert_allclose(want, t[1] * xs + ys * k + lo + m + 4, rtol=1e-12)


def _loops_over_a_tuple_of_arrays(x, arrays, out):
    i = xpu.grid(1)
    s = 0.0
    for a in arrays:  # no op in the loop
        s += a[i] * 3
    if x[i] > 0:  # under a lane-varying branch
        for b in arrays:
            s += b[i] * x[i]
    for c in arrays:  # around an op
        s += Wave.reduceSum(c[i])
    out[i] = Wave.prefixSum(s)


@pytest.mark.slow
@pytest.mark.parametrize("debug", [False, True])
def test_a_loop_over_a_tuple_of_arrays(debug, target, rng):
    # the loop's target was kept as a lane array, refused for an array ("differs from
    # lane to lane"), where numba.cuda compiles the loop
    _skip_debug_on_cuda(debug, target)
    n, block = 96, 48
    x, ys = rng.standard_normal(n), (rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n))
    want, _, _ = _both(_loops_over_a_tuple_of_arrays, target, debug, 2, block, x, ys, n=n)
    total = sum(ys)
    s = 3 * total + np.where(x > 0, total * x, 0) + _wave_sum(total, n, block)
    np.testing.assert_allclose(want, _wave_prefix(s, n, block), rtol=1e-9, atol=1e-9)


def _per_lane_index(x, t, out):
    i = xpu.grid(1)
    s = 0.0
    for j in range(len(t)):
        s += Wave.prefixSum(t[j] * x[i])
    out[i] = t[i % 3] * x[i] + s + Quad.broadcast(x[i], 2)


@pytest.mark.slow
@pytest.mark.parametrize("debug", [False, True])
def test_a_tuple_of_one_type_read_with_a_per_lane_index(debug, target, rng):
    _skip_debug_on_cuda(debug, target)
    n, block = 64, 64
    x = rng.standard_normal(n)
    t = tuple(map(float, rng.standard_normal(3)))
    want, _, _ = _both(_per_lane_index, target, debug, 1, block, x, t, n=n)
    s = sum(_wave_prefix(v * x, n, block) for v in t)
    exp = np.array(t)[np.arange(n) % 3] * x + s + x[(np.arange(n) & ~3) + 2]
    np.testing.assert_allclose(want, exp, rtol=1e-12)


def _rebound_per_lane(x, t, out):
    i = xpu.grid(1)
    if x[i] > 0:
        t = (x[i], t[1])  # lane-varying from here
    out[i] = t[0] + Wave.prefixSum(t[1])


@pytest.mark.parametrize("debug", [False, True])
def test_a_tuple_parameter_reassigned_in_a_lane_varying_branch(debug, target, rng):
    _skip_debug_on_cuda(debug, target)
    n, block = 64, 32
    x = rng.standard_normal(n)
    t = (float(rng.standard_normal()), 2.5)
    want, _, _ = _both(_rebound_per_lane, target, debug, 2, block, x, t, n=n)
    np.testing.assert_allclose(want, np.where(x > 0, x, t[0]) + _lane(n, block) * 2.5, rtol=1e-12)


def test_what_numba_refuses_stays_one_line(rng):
    @xpu.jit
    def mixed_per_lane(x, t, out):
        i = xpu.grid(1)
        out[i] = t[i % 2] + x[i]  # Tuple(float64, int64)[int64]: Numba refuses

    x, out = rng.standard_normal(32), np.zeros(32)
    with pytest.raises(NumquadTypeError) as e:
        mixed_per_lane.cpu[1, 32](x, (1.0, 2), out)
    msg = str(e.value)
    assert "\n" not in msg and "getitem(Tuple(float64, int64), int64)" in msg
    assert f'File "{__file__}"' in msg
    with pytest.raises(NumquadTypeError) as e:
        _ = xpu.jit(_scale_and_prefix).cpu[1, 32](x, (1.0, "two"), out)
    msg = str(e.value)
    assert "\n" not in msg and "argument 1 (t) of _scale_and_prefix has type tuple" in msg


# -- records --------------------------------------------------------------------


def _record_read_and_written(x, r, out):
    i = xpu.grid(1)
    out[i] = r.a * x[i] + Wave.prefixSum(r.b) + r["h"][1] + Quad.swapHorizontal(x[i] * r.h[2])
    if i == 3:  # fields no lane reads
        r.c = r.a * 2.0
        r["d"] = r.b + 1
        r.g[1] = x[i]


def _record_array(rng):
    arr = np.zeros(3, REC)
    for j in range(3):
        arr[j] = (rng.standard_normal(), rng.integers(-9, 9), rng.standard_normal(3), -1.0, -1, (-1.0, -1.0))
    return arr


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("kind", ["void", "record"])
def test_a_record_argument_is_read_and_written_by_field(kind, debug, target, rng):
    _skip_debug_on_cuda(debug, target)
    n, block = 64, 32
    x = rng.standard_normal(n)
    arr = _record_array(rng)
    arrs = {}

    def run(tgt):
        a = arr.copy()
        rec = a[1] if kind == "void" else a.view(np.recarray)[1]
        assert type(rec) is (np.void if kind == "void" else np.record)
        out = np.full(n, POISON)
        getattr(xpu.jit(_record_read_and_written, debug=debug), tgt)[2, block](x, rec, out)
        arrs[tgt] = a
        return out

    want, got = run("python"), run(target)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    r = arr[1]
    exp = r["a"] * x + _lane(n, block) * r["b"] + np.float32(r["h"][1]) + _quad_swap_h(x * np.float32(r["h"][2]))
    np.testing.assert_allclose(want, exp, rtol=1e-6)
    expect = arr.copy()
    expect[1]["c"] = r["a"] * 2.0
    expect[1]["d"] = r["b"] + 1
    expect[1]["g"][1] = x[3]
    for tgt in ("python", target):
        np.testing.assert_array_equal(arrs[tgt], expect)  # elements 0 and 2 untouched


def _record_and_tuple_with_a_lane_function(x, r, t, out):
    i = xpu.grid(1)
    out[i] = _field_times(r, x[i]) + t[0] * Wave.reduceSum(x[i] * t[1])
    r["g"][0] = t[0]


@xpu.jit
def _field_times(r, v):
    return r.a * v


@pytest.mark.parametrize("debug", [False, True])
def test_a_record_beside_a_tuple_and_passed_to_a_lane_function(debug, target, rng):
    _skip_debug_on_cuda(debug, target)
    n, block = 64, 32
    x = rng.standard_normal(n)
    arr = _record_array(rng)
    t = (float(rng.standard_normal()), float(rng.standard_normal()))
    k = xpu.jit(_record_and_tuple_with_a_lane_function, debug=debug)
    outs, arrs = [], []
    for tgt in ("python", target):
        a, out = arr.copy(), np.full(n, POISON)
        getattr(k, tgt)[2, block](x, a[0], t, out)
        outs.append(out)
        arrs.append(a)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12)
    np.testing.assert_allclose(outs[0], arr[0]["a"] * x + t[0] * _wave_sum(x * t[1], n, block), rtol=1e-12)
    expect = arr.copy()
    expect[0]["g"][0] = t[0]
    for a in arrs:
        np.testing.assert_array_equal(a, expect)


def test_a_float16_inside_a_tuple_is_refused_as_at_the_top_level(rng):
    x, out = rng.standard_normal(32), np.zeros(32)
    with pytest.raises(NumquadTypeError) as e:
        xpu.jit(_scale_and_prefix).cpu[1, 32](x, (1.0, (np.float16(2),)), out)
    assert "float16 is not supported by numquad's CPU target" in str(e.value)
