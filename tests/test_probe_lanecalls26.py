"""What a probe of lane functions called on arrays found (twenty-sixth session), each
against NumPy: a declared signature's range check skipped after the first call (a
silent wrap), omitted defaults typed as weak Python scalars, the python target's
result dtype taken from the values, a list beside a dask array."""

import numpy as np
import pytest

from numquad import NumquadTypeError, Wave, xpu


@xpu.jit("int32(int32, int32)")
def add_declared(x, s):
    return x + s


def test_a_declared_int_is_range_checked_on_every_call(rng):
    x = rng.integers(-100, 100, 40).astype(np.int32)
    big = np.int64(2**32 + 7)
    for _ in range(2):  # before and after a call that fits
        with pytest.raises(NumquadTypeError, match="which int32 cannot hold"):
            add_declared(x, big)
        np.testing.assert_array_equal(add_declared(x, np.int64(5)), x + 5)


@xpu.jit
def scale(x, eps=0.1):
    return x + eps + Wave.prefixSum(x) * 0


@xpu.jit
def shift(x, n=300):
    return x + n


@xpu.jit
def opt(x, y=None):
    return x if y is None else x + y


@xpu.jit
def k_defaults(x, xi, out1, out2):
    i = xpu.grid(1)
    out1[i] = scale(x[i])
    out2[i] = shift(xi[i])


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_an_omitted_default_is_typed_as_numba_types_the_constant(target, rng):
    x = np.concatenate([[1.0, 2.0**24], rng.uniform(-5, 5, 30)]).astype(np.float32)
    xi = rng.integers(-100, 100, 32).astype(np.int8)
    got1 = getattr(scale, target)(x)
    got2 = getattr(shift, target)(xi)
    assert got1.dtype == np.float64 and got2.dtype == np.int64
    np.testing.assert_array_equal(got1, x.astype(np.float64) + 0.1)  # 16777216.1, not float32's
    np.testing.assert_array_equal(got2, xi.astype(np.int64) + 300)
    # as the kernel's call of the same functions
    o1, o2 = np.full(32, np.nan), np.full(32, -1, np.int64)
    getattr(k_defaults, target)[1, 32](x, xi, o1, o2)
    np.testing.assert_array_equal(o1, got1)
    np.testing.assert_array_equal(o2, got2)
    with pytest.raises(NumquadTypeError, match="argument 'y' of opt is None .its default.; .* pass y"):
        getattr(opt, target)(x)


@xpu.jit
def unify_returns(x):
    if x > 0:
        return np.uint8(200)
    return np.int8(-1)


@xpu.jit
def int_or_count(x):
    s = 0
    if x > 100:
        s = Wave.countBits(True)
    return s


@pytest.mark.parametrize("data", ["positive", "negative", "mixed"])
def test_the_python_target_gives_the_function_s_result_dtype(data, rng):
    x = {
        "positive": rng.integers(101, 500, 40),
        "negative": rng.integers(-500, 1, 40),
        "mixed": rng.integers(-500, 500, 40),
    }[data]
    for f, want in ((unify_returns, np.int16), (int_or_count, np.int64)):
        cpu, py = f.cpu(x), f.python(x)
        assert cpu.dtype == py.dtype == want, (f.__name__, cpu.dtype, py.dtype)
        np.testing.assert_array_equal(cpu, py)
    np.testing.assert_array_equal(unify_returns.python(x), np.where(x > 0, 200, -1))
    out = np.full(40, -9, np.int64)
    int_or_count.python(x, out=out)  # was refused where every lane took one side
    np.testing.assert_array_equal(out, int_or_count.cpu(x))


def test_a_list_beside_a_dask_array_is_refused_at_the_call():
    da = pytest.importorskip("dask.array")

    @xpu.jit
    def f(x, y):
        return Wave.prefixSum(x) + y

    x = np.random.default_rng(2).integers(0, 9, 64)
    for y in ([1000, 2000, 3000, 4000, 5000], ([0], [1000]), np.arange(64)):
        with pytest.raises(NumquadTypeError, match="argument 'y' is a .* beside dask arrays"):
            f(da.from_array(x.reshape(64, 1) if isinstance(y, list) else x, chunks=32), y)
    got = f(da.from_array(x, chunks=32), 7).compute()
    want = np.concatenate([np.cumsum(w) - w for w in x.reshape(-1, 32)]) + 7
    np.testing.assert_array_equal(got, want)
