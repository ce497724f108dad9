"""Every numba.cuda atomic on every element type it takes, on every target.

Each thread updates its own element (so the result does not depend on the order
of the threads), and one kernel also hammers one element from every thread with
an order-independent update. Expected values come from NumPy.
"""

import numpy as np
import pytest

from numquad import xpu

from conftest import TARGETS

_INTS = ["int32", "uint32", "int64", "uint64"]
_ALL = ["float32", "float64"] + _INTS

CASES = [  # name, element types, NumPy model of (element, value) -> new element
    ("add", _ALL, lambda a, v: a + v),
    ("sub", _ALL, lambda a, v: a - v),
    ("and_", _INTS, lambda a, v: a & v),
    ("or_", _INTS, lambda a, v: a | v),
    ("xor", _INTS, lambda a, v: a ^ v),
    ("exch", _INTS, lambda a, v: v),
    ("inc", ["uint32", "uint64"], lambda a, v: np.where(a >= v, 0, a + 1).astype(a.dtype)),
    ("dec", ["uint32", "uint64"], lambda a, v: np.where((a == 0) | (a > v), v, a - 1).astype(a.dtype)),
    (
        "max",
        _ALL,
        lambda a, v: (
            np.where(np.isnan(a) | np.isnan(v), a, np.where(a < v, v, a)) if a.dtype.kind == "f" else np.maximum(a, v)
        ),
    ),
    (
        "min",
        _ALL,
        lambda a, v: (
            np.where(np.isnan(a) | np.isnan(v), a, np.where(a > v, v, a)) if a.dtype.kind == "f" else np.minimum(a, v)
        ),
    ),
    (
        "nanmax",
        _ALL,
        lambda a, v: (
            np.where(np.isnan(v), a, np.where(np.isnan(a) | (a < v), v, a)) if a.dtype.kind == "f" else np.maximum(a, v)
        ),
    ),
    (
        "nanmin",
        _ALL,
        lambda a, v: (
            np.where(np.isnan(v), a, np.where(np.isnan(a) | (a > v), v, a)) if a.dtype.kind == "f" else np.minimum(a, v)
        ),
    ),
]


def _kernel(name):
    src = (
        f"def k(a, v, old):\n    i = xpu.grid(1)\n    if i < a.size:\n        old[i] = xpu.atomic.{name}(a, i, v[i])\n"
    )
    import linecache

    fname = f"<test_atomics {name}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns = {"xpu": xpu}
    exec(compile(src, fname, "exec"), ns)
    return xpu.jit(ns["k"])


def _inputs(rng, dtype, n):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        a = (rng.standard_normal(n) * 4).round().astype(dt)
        v = (rng.standard_normal(n) * 4).round().astype(dt)
        a[rng.random(n) < 0.15] = np.nan
        v[rng.random(n) < 0.15] = np.nan
    else:
        hi = 20
        a = rng.integers(0, hi, n).astype(dt)
        v = rng.integers(0, hi, n).astype(dt)
    return a, v


def _same(x, y):
    if x.dtype.kind == "f":
        return np.array_equal(x, y, equal_nan=True)
    return np.array_equal(x, y)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name,dtypes,model", CASES, ids=[c[0] for c in CASES])
def test_atomic_each_thread_its_element(target, name, dtypes, model, rng):
    k = _kernel(name)
    for dtype in dtypes:
        a, v = _inputs(rng, dtype, 100)
        got, old = a.copy(), np.zeros_like(a)
        getattr(k, target)[2, 64](got, v, old)
        with np.errstate(over="ignore", invalid="ignore"):
            want = model(a, v)
        assert _same(got, want), (name, dtype)
        assert _same(old, a), (name, dtype)


def k_cas(a, old, out):
    i = xpu.grid(1)
    if i < a.size:
        out[i] = xpu.atomic.cas(a, i, old[i], np.int64(i))


def k_compare_and_swap(a, out):
    i = xpu.grid(1)
    if i == 0:
        out[0] = xpu.atomic.compare_and_swap(a, np.int32(5), np.int32(9))


def k_hammer(count, hist, keys):
    i = xpu.grid(1)
    if i < keys.size:
        xpu.atomic.add(count, 0, np.int64(1))
        xpu.atomic.max(count, 1, np.int64(keys[i]))
        xpu.atomic.add(hist, keys[i] & 15, np.uint32(1))


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_cas_and_hammer(target, rng):
    a = rng.integers(0, 3, 96).astype(np.int64)
    old = rng.integers(0, 3, 96).astype(np.int64)
    got, out = a.copy(), np.full(96, -1, np.int64)
    getattr(xpu.jit(k_cas), target)[3, 32](got, old, out)
    np.testing.assert_array_equal(got, np.where(a == old, np.arange(96), a))
    np.testing.assert_array_equal(out, a)
    for first in (5, 4):
        h, out = np.array([first, 1], np.int32), np.zeros(1, np.int32)
        getattr(xpu.jit(k_compare_and_swap), target)[1, 32](h, out)
        np.testing.assert_array_equal(h, [9 if first == 5 else first, 1])
        assert out[0] == first
    keys = rng.integers(0, 1000, 5000).astype(np.int64)
    count, hist = np.zeros(2, np.int64), np.zeros(16, np.uint32)
    getattr(xpu.jit(k_hammer), target)[(5000 + 255) // 256, 256](count, hist, keys)
    assert count[0] == 5000 and count[1] == keys.max()
    np.testing.assert_array_equal(hist, np.bincount(keys & 15, minlength=16))


def test_atomic_names_match_numba_cuda():
    from numquad.cpu.atomics import ATOMIC_NAMES

    assert set(ATOMIC_NAMES) == set(xpu.atomic.__all__)
    try:
        from numba import cuda

        names = [n for n in dir(cuda.atomic) if not n.startswith("_")]
    except Exception:
        pytest.skip("numba.cuda is not importable")
    assert set(names) <= set(xpu.atomic.__all__), set(names) - set(xpu.atomic.__all__)


@xpu.jit(device=True)
def _bin_or_none(v, n):
    b = np.int32(v * n)
    if b < 0 or b >= n:
        return None
    return b


@xpu.jit
def _k_index_kinds(x, h, h2, hc):
    i = xpu.grid(1)
    if i < x.size:
        b = _bin_or_none(x[i], hc.size)  # an Optional(int32)
        if b is not None:
            xpu.atomic.add(hc, b, np.int32(1))
        xpu.atomic.add(h, x[i] * 9.0, np.int32(1))  # a float, truncated
        xpu.atomic.max(h2, (x[i] * 3.5, x[i] > 0.5), np.int64(i))  # a float and a bool


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_an_index_of_the_kinds_numba_cuda_converts(target, rng):
    """numba.cuda's atomics convert a 1-D index to intp, and each part of an n-D one,
    so they compile an Optional (a device function that returns None out of range,
    found in public code), a float or a bool index; the CPU target refused them."""
    x = rng.random(200) * 1.1  # some out of range: None
    h, hc = np.zeros(10, np.int32), np.zeros(10, np.int32)
    h2 = np.full((4, 2), -1, np.int64)
    getattr(_k_index_kinds, target)[4, 64](x, h, h2, hc)
    bins = (x * 10).astype(np.int64)
    np.testing.assert_array_equal(hc, np.bincount(bins[bins < 10], minlength=10))
    np.testing.assert_array_equal(h, np.bincount((x * 9.0).astype(np.int64), minlength=10))
    want = np.full((4, 2), -1, np.int64)
    np.maximum.at(want, ((x * 3.5).astype(np.int64), (x > 0.5).astype(np.int64)), np.arange(x.size))
    np.testing.assert_array_equal(h2, want)
