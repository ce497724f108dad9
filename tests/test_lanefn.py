"""Lane functions called on arrays (docs/architecture.md, section 1), and through dask."""

import numpy as np
import pytest

from numquad import NumquadCompileError, NumquadLaunchError, NumquadTypeError, Quad, Wave, ops, xpu

R = {q: op.reference for q, op in ops.OPS.items()}


@xpu.jit
def fma_swap(x, y):
    return x * y + Quad.swapHorizontal(x)


@xpu.jit
def running(x):
    return Wave.prefixSum(x) + Wave.laneId()


@xpu.jit
def plain(x, y):
    if x > y:
        return x - y
    return y - x


def _swap_ref(flat):
    act = np.ones(len(flat), bool)
    pad = -len(flat) % 32
    xs = np.concatenate([flat, np.zeros(pad, flat.dtype)]).reshape(-1, 32)
    am = np.concatenate([act, np.zeros(pad, bool)]).reshape(-1, 32)
    return R["Quad.swapHorizontal"](xs, active=am).ravel()[: len(flat)]


def test_broadcast_scalar_and_dtype(rng):
    x = rng.standard_normal(1000).astype(np.float32)
    r = fma_swap(x, 2.0)
    assert r.dtype == np.float32 and r.shape == x.shape  # 2.0 is weak, as in NumPy
    np.testing.assert_array_equal(r, x * np.float32(2) + _swap_ref(x))


@xpu.jit
def _second(x, y):
    return y


@pytest.mark.parametrize(
    "x_dtype, y, exp",
    [
        (np.float32, 2.5, np.float32(2.5)),  # a Python float takes the floats' type
        (np.int16, 2.5, np.float64(2.5)),  # ... float64 when there are none
        (np.uint8, 7, np.uint8(7)),  # a Python int takes the integers' type
        (np.float32, 7, np.int64(7)),  # ... int64 when there are none: it stays an int
        (np.float32, True, np.bool_(True)),  # a Python bool stays a bool
    ],
)
def test_python_scalars_are_weak_but_keep_their_kind(rng, x_dtype, y, exp):
    x = rng.integers(0, 100, 40).astype(x_dtype)
    r = _second(x, y)
    assert r.dtype == exp.dtype and (r == exp).all()


def test_broadcast_2d_in_c_order(rng):
    x = rng.standard_normal((7, 1)).astype(np.float64)
    y = rng.standard_normal((1, 9)).astype(np.float64)
    r = fma_swap(x, y)
    bx, by = np.broadcast_arrays(x, y)
    flat = bx.ravel()
    np.testing.assert_array_equal(r.ravel(), (flat * by.ravel()) + _swap_ref(flat))
    assert r.shape == (7, 9)


def test_partial_last_wave_is_inactive(rng):
    x = rng.integers(-100, 100, 70).astype(np.int64)  # waves of 32, 32 and 6 lanes
    r = running(x)
    xs = np.concatenate([x, np.zeros(26, np.int64)]).reshape(-1, 32)
    act = (np.arange(96) < 70).reshape(-1, 32)
    exp = (R["Wave.prefixSum"](xs, active=act) + np.arange(32)).ravel()[:70]
    np.testing.assert_array_equal(r, exp)


def test_strided_and_transposed_inputs(rng):
    base = rng.standard_normal((40, 64)).astype(np.float32)
    for x in (base[:, ::2], base.T, base[::3, 1:]):
        r = fma_swap(x, np.float32(3))
        flat = np.ascontiguousarray(x).ravel()
        np.testing.assert_array_equal(r.ravel(), flat * np.float32(3) + _swap_ref(flat))


def test_out_argument(rng):
    x = rng.standard_normal(100).astype(np.float32)
    out = np.full(100, np.nan, np.float32)
    r = fma_swap(x, np.float32(1), out=out)
    assert r is out and not np.isnan(out).any()
    with pytest.raises(ValueError, match="shape"):
        fma_swap(x, np.float32(1), out=np.zeros(99, np.float32))
    with pytest.raises(TypeError, match="dtype"):
        fma_swap(x, np.float32(1), out=np.zeros(100, np.float64))
    strided = np.zeros(200, np.float32)[::2]
    fma_swap(x, np.float32(1), out=strided)
    np.testing.assert_array_equal(strided, r)


@pytest.mark.slow
def test_every_call_form_gives_the_same_bits(rng):
    """The common call (C-contiguous arrays of one shape, NumPy scalars) takes a
    memoised path (numquad/cpu/arraycall.py); every other form plans the call in
    full. Both must give the same bits, write out= in place, and keep the errors."""
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    want = x * y + _swap_ref(x)
    ro = x.copy()
    ro.flags.writeable = False
    strided = np.empty(2 * n, np.float32)[::2]
    strided[:] = x
    forms = {
        "arrays": (x, y),
        "again": (x, y),
        "readonly": (ro, y),
        "strided": (strided, y),
        "2-d": (x.reshape(40, 25), y.reshape(40, 25)),
    }
    for name, args in forms.items():
        got = fma_swap(*args)
        np.testing.assert_array_equal(got.reshape(-1), want, err_msg=name)
    s = np.float32(rng.standard_normal())
    want_s = x * s + _swap_ref(x)
    for y_s in (s, float(s)):  # a NumPy scalar, a weak Python float
        np.testing.assert_array_equal(fma_swap(x, y_s), want_s)
    out = np.full(n, np.nan, np.float32)  # poisoned
    r = fma_swap(x, y, out=out)
    assert r is out
    np.testing.assert_array_equal(out, want)
    with pytest.raises(NumquadTypeError, match="out"):
        fma_swap(x, y, out=np.zeros(n, np.float64))
    with pytest.raises(NumquadLaunchError):
        fma_swap(x, y, out=np.zeros(n + 1, np.float32))
    odd = rng.standard_normal(77).astype(np.float64)  # another type, a partial last wave
    np.testing.assert_array_equal(fma_swap(odd, odd), odd * odd + _swap_ref(odd))


@pytest.mark.slow
def test_zero_d_and_empty():
    r = plain(np.float64(3), 5.0)
    # a NumPy scalar, as a ufunc on scalars gives (it was a 0-d array)
    assert type(r) is np.float64 and r == 2.0
    r = plain(np.array(np.float32(3)), np.float32(5))
    assert type(r) is np.float32 and r == 2.0
    out = np.zeros((), np.float64)
    assert plain(np.float64(3), 5.0, out=out) is out and out == 2.0
    e = fma_swap(np.zeros((0, 3), np.float32), np.float32(1))
    assert e.shape == (0, 3) and e.dtype == np.float32


@xpu.jit
def _widening(x, y):
    return x * 2 + Wave.prefixSum(y)  # float32 * int64 is float64 (Numba's typing)


@pytest.mark.parametrize("n", [0, 5])
def test_every_target_types_an_empty_call_as_a_full_one(n, rng):
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.integers(-5, 5, n).astype(np.int16)
    for target in ("cpu", "python"):
        r = getattr(_widening, target)(x, y)
        assert r.shape == (n,) and r.dtype == np.float64, (target, r.dtype)


def test_plain_lane_function_on_arrays():
    r = plain(np.arange(6), 3)
    np.testing.assert_array_equal(r, np.abs(np.arange(6) - 3))


@pytest.mark.parametrize(
    "bad",
    [
        np.array(["a"]),
        np.array([object()]),
        np.zeros(3, np.complex64),
        np.ones(3, np.float16),
        np.ones(3, np.longdouble),
        np.float16(1.0),
    ],
)
def test_unsupported_dtypes(bad):
    # float16 and longdouble were a bare NotImplementedError from Numba's lowering
    with pytest.raises(TypeError) as e:
        fma_swap(bad, 1.0)
    assert "'x'" in str(e.value) and str(bad.dtype) in str(e.value) and __file__ in str(e.value)


def test_shape_mismatch_uses_numpy_wording():
    with pytest.raises(ValueError) as e:
        fma_swap(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError) as ref:
        np.broadcast_shapes((3,), (4,))
    assert str(e.value).endswith(str(ref.value)) and "fma_swap(...)" in str(e.value)
    assert "do not broadcast" in str(e.value) and __file__ in str(e.value)


def test_wrong_argument_count():
    with pytest.raises(TypeError, match="takes 2 argument"):
        fma_swap(np.zeros(3))


def test_explicit_cpu_target_and_multicore_equal(rng):
    import numba

    x = rng.standard_normal(1 << 18).astype(np.float32)
    one = None
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = fma_swap.cpu(x, np.float32(2))
    finally:
        numba.set_num_threads(old)
    many = fma_swap.cpu(x, np.float32(2))
    np.testing.assert_array_equal(one, many)


def test_dask_map_blocks_matches_one_call(rng):
    da = pytest.importorskip("dask.array")
    x = rng.standard_normal(32 * 1000).astype(np.float32)
    dx = da.from_array(x, chunks=32 * 125)
    got = dx.map_blocks(fma_swap, np.float32(0.5), dtype=np.float32).compute()
    np.testing.assert_array_equal(got, fma_swap(x, np.float32(0.5)))
    r = da.from_array(rng.integers(0, 9, 32 * 40).astype(np.int64), chunks=32 * 8)
    got = r.map_blocks(running, dtype=np.int64).compute()
    np.testing.assert_array_equal(got, running(r.compute()))


@pytest.mark.slow
def test_dask_arrays_give_a_lazy_array_equal_to_one_call(rng):
    da = pytest.importorskip("dask.array")
    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    r = fma_swap(da.from_array(x, chunks=256), da.from_array(y, chunks=256))
    assert isinstance(r, da.Array) and r.dtype == np.float32  # nothing computed yet
    np.testing.assert_array_equal(r.compute(), fma_swap(x, y))
    np.testing.assert_array_equal(running(da.from_array(x, chunks=96)).compute(), running(x))
    s = np.float32(rng.standard_normal())
    np.testing.assert_array_equal(fma_swap(da.from_array(x, chunks=512), s).compute(), fma_swap(x, s))
    m = rng.standard_normal((40, 6))  # 16 rows x 6 = 3 waves a block
    np.testing.assert_array_equal(fma_swap(da.from_array(m, chunks=(16, 6)), 2.0).compute(), fma_swap(m, 2.0))


def test_dask_chunks_off_the_wave_grid_are_an_error(rng):
    da = pytest.importorskip("dask.array")
    x = rng.standard_normal(1000)
    with pytest.raises(NumquadLaunchError, match=r"do not start on wave boundaries.*x\.rechunk\(\{0: 128\}\)"):
        fma_swap(da.from_array(x, chunks=100), 2.0)
    m = rng.standard_normal((40, 6))
    with pytest.raises(NumquadLaunchError, match=r"multiple of 16 row.*rechunk\(\{0: 16, 1: -1\}\)"):
        fma_swap(da.from_array(m, chunks=(10, 3)), 1.0)
    with pytest.raises(NumquadLaunchError, match="differ in shape or chunks"):
        fma_swap(da.from_array(x, chunks=256), da.from_array(x, chunks=512))
    with pytest.raises(NumquadTypeError, match="NumPy array beside dask"):
        fma_swap(da.from_array(x, chunks=256), x)
    with pytest.raises(NumquadTypeError, match="out="):
        fma_swap(da.from_array(x, chunks=256), 1.0, out=np.empty(1000))


@pytest.mark.slow
def test_dask_example_runs():
    import importlib.util
    import pathlib

    pytest.importorskip("dask.array")
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "dask_lane_function.py"
    spec = importlib.util.spec_from_file_location("dask_example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main([]) == 0
    assert mod.main(["--small"]) == 2  # it takes no options (it ignored them)


@xpu.jit
def _add_overlap(x, y):
    return x + y


@xpu.jit
def _scan_overlap(x, y):
    return Wave.prefixSum(x) + y


@pytest.mark.slow
@pytest.mark.parametrize(
    "fn, ref",
    [
        (_add_overlap, lambda x, y: x + y),
        (_scan_overlap, None),
    ],
)
def test_out_overlapping_an_input_is_numpys_rule(fn, ref, rng):
    """A day-one probe: ``add(a[:-1], a[1:], out=a[1:])`` gave a running sum (lanes
    stored before later lanes loaded). NumPy computes as if nothing overlapped: so
    do the CPU and python targets; ``out`` that is an input itself is in place."""
    x = rng.standard_normal(1000)
    for target in ("cpu", "python"):
        call = getattr(fn, target)
        for a_sl, b_sl, o_sl in (
            (slice(None, -1), slice(1, None), slice(1, None)),
            (slice(1, None), slice(None, -1), slice(None, -1)),
            (slice(None, -2), slice(2, None), slice(1, -1)),
        ):
            a = x.copy()
            want = fn.python(x[a_sl].copy(), x[b_sl].copy())
            if ref is not None:
                np.testing.assert_array_equal(want, ref(x[a_sl], x[b_sl]))
            call(a[a_sl], a[b_sl], out=a[o_sl])
            np.testing.assert_array_equal(a[o_sl], want)
        a = x.copy()
        call(a, a, out=a)  # in place
        np.testing.assert_array_equal(a, fn.python(x.copy(), x.copy()))
        a = x.reshape(10, 100).copy()
        call(a[0:1], a, out=a)  # a broadcast row that out overwrites
        np.testing.assert_array_equal(a, fn.python(x.reshape(10, 100)[0:1].copy(), x.reshape(10, 100).copy()))


@pytest.mark.slow
def test_each_argument_layout_compiles_from_its_own_source():
    """A day-one probe: the wrapper of each layout (array/scalar arguments) was
    registered under one file name, so a wrapper compiled after another layout's was
    made read that one's source (a NumquadTypeError naming the generated code)."""

    @xpu.jit
    def scale(x, y):
        return x * y

    assert scale(np.zeros(0, np.float32), 2.0).shape == (0,)  # (array, scalar): made
    assert scale(np.float32(2.0), np.float32(3.0)) == 6.0  # (scalar, scalar)
    np.testing.assert_array_equal(scale(np.arange(5, dtype=np.float32), 2.0), np.arange(5, dtype=np.float32) * 2)


@xpu.jit
def _index_a_scalar(x):
    return x[0]


def test_indexing_an_element_of_a_lane_call_says_so():
    """A lane call passes one element of each array: ``x[0]`` is an error that says
    so, at the user's line (it named numquad's internal ``device_load``)."""
    with pytest.raises(TypeError) as e:
        _index_a_scalar(np.ones(4))
    msg = str(e.value)
    assert "cannot index a float64 value" in msg and "device_load" not in msg and __file__ in msg


def _some_paths_return(x):
    if x > 0:
        return Wave.prefixSum(x)


def _bare_return(x):
    v = Wave.reduceSum(x)
    if x < 0:
        return
    return v


@pytest.mark.parametrize("fn", [_some_paths_return, _bare_return])
@pytest.mark.parametrize("target", ["cpu", "python", "cuda-ptx"])
def test_a_lane_function_returning_none_on_a_path_is_an_error(fn, target):
    # a lane function with a cross-lane op that ran off its end gave 0 on the CPU
    # for those elements (the python target: "a cross-lane op got NoneType")
    f = xpu.jit(fn)
    x = np.arange(-2, 5)
    with pytest.raises(
        NumquadCompileError,
        match=rf"{fn.__name__} returns a value \(line \d+\) but None on "
        r"another path .*add a final return",
    ):
        if target == "cuda-ptx":
            f.inspect_ptx("int64(int64)", cc=(9, 0))
        else:
            getattr(f, target)(x)


def test_out_overlapping_an_array_like_input_computes_as_numpy_does(rng):
    # a memoryview or an __array__ object over the same memory as out= was not seen as
    # overlapping: the CPU gave a running sum
    @xpu.jit
    def add(x, y):
        return x + y

    class Like:
        def __init__(self, a):
            self.a = a

        def __array__(self, dtype=None, copy=None):
            return self.a

    base = rng.integers(-100, 100, 50)
    for wrap in (memoryview, Like):
        a = base.copy()
        want = a[:-1] + a[1:]
        add(wrap(a[:-1]), wrap(a[1:]), out=a[1:])
        np.testing.assert_array_equal(a[1:], want, err_msg=wrap.__name__)


@xpu.jit
def _butterfly_step(v):
    return v + Wave.shuffleXor(v, 1)


def test_a_loop_over_a_tuple_calling_a_lane_function_with_ops_runs(rng):
    # found by a probe: refused with "a loop around cross-lane ops must iterate over
    # range(...)" (the loop's test did not see the inlined call's op); numba.cuda runs it
    @xpu.jit
    def k(x, out):
        i = xpu.grid(1)
        v = x[i]
        s = 0
        for m in (1, 2):
            s += _butterfly_step(v) * m
        out[i] = s

    x = rng.integers(-1000, 1000, 64).astype(np.int32)
    out = np.full(64, -7, np.int64)
    k[2, 32](x, out)
    pair = x.astype(np.int64) + x[np.arange(64) ^ 1]
    np.testing.assert_array_equal(out, 3 * pair)


@xpu.jit
def _scaled_by_default(a, s=np.float32(0.1)):  # noqa: B008
    return a * s


@xpu.jit
def _sum_with_tuple_default(a, t=(np.int8(-3), 2)):  # noqa: B008
    return Wave.reduceSum(a * t[0]) + t[1]


@xpu.jit
def _calls_with_defaults(x, o, o2):
    i = xpu.grid(1)
    o[i] = _scaled_by_default(x[i])
    o2[i] = _sum_with_tuple_default(x[i])


_ONES = np.ones(2)


@xpu.jit
def _list_default(a, s=_ONES):
    return a + s[0]


@xpu.jit
def _calls_list_default(x, o):
    i = xpu.grid(1)
    o[i] = _list_default(x[i])


def test_numpy_scalar_defaults_of_an_inlined_lane_function_keep_their_type(target, rng):
    # found by a probe of argument typing: np.float32(0.1) as a default was refused
    # ("number, bool, None or string defaults only"), though Numba reads it as a float32
    x = rng.integers(-100, 100, 64).astype(np.int32)
    o, o2 = np.full(64, np.nan), np.full(64, -777777, np.int64)
    getattr(_calls_with_defaults, target)[2, 32](x, o, o2)
    np.testing.assert_array_equal(o, x * np.float32(0.1))  # int32 * float32: float64, as Numba
    np.testing.assert_array_equal(o2, (x.astype(np.int64) * -3).reshape(2, 32).sum(1).repeat(32) + 2)


def test_a_default_that_is_no_scalar_is_refused_in_one_line(rng):
    x = rng.integers(-100, 100, 32).astype(np.int64)
    with pytest.raises(
        NumquadCompileError,
        match=r"_list_default\(\): the default of 's' is a ndarray; .* "
        r"pass 's' explicitly",
    ):
        _calls_list_default[1, 32](x, np.zeros(32, np.int64))
