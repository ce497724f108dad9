"""Bounds checks of views made inside a kernel, arrays inside tuples and records, and
atomics (a probe of the twenty-second session, each form wrote or read past its
array in a release build: memory corruption, or a segfault at the next garbage
collection). Every array here sits inside a larger buffer of sentinels, so a write
past it shows; in-bounds results are checked against NumPy."""

import numpy as np
import pytest
from numba import cuda

from numquad import xpu
from numquad.errors import NumquadIndexError

SENT = 777.0


def _framed(shape, dtype=np.float64):
    """(buffer, a view of *shape* in its middle, zeroed): elements outside the view
    keep SENT, so any write past the view shows in the buffer."""
    n = int(np.prod(shape))
    buf = np.full(3 * max(n, 1), SENT, dtype)
    view = buf[max(n, 1) : max(n, 1) + n].reshape(shape)
    view[...] = 0
    return buf, view


def _outside(buf, view):
    n = view.size
    start = max(n, 1)
    return np.concatenate([buf[:start], buf[start + n :]])


@xpu.jit
def k_T(a, v):
    i = xpu.grid(1)
    a.T[0, i] = v


@xpu.jit
def k_transpose(a, v):
    i = xpu.grid(1)
    np.transpose(a)[0, i] = v


@xpu.jit
def k_swapaxes(a, v):
    i = xpu.grid(1)
    np.swapaxes(a, 0, 1)[0, i] = v


@xpu.jit
def k_ravel(a, v):
    i = xpu.grid(1)
    a.ravel()[i + 40] = v


@xpu.jit
def k_reshape(a, v):
    i = xpu.grid(1)
    a.reshape(-1)[i + 40] = v


@cuda.jit(device=True)
def _put_T(a, i, v):
    a.T[0, i] = v


@xpu.jit
def k_device_T(a, v):
    i = xpu.grid(1)
    _put_T(a, i, v)


@pytest.mark.slow
@pytest.mark.parametrize(
    "k, fits", [(k_T, 16), (k_transpose, 16), (k_swapaxes, 16), (k_ravel, 24), (k_reshape, 24), (k_device_T, 16)]
)
def test_a_store_through_a_view_made_in_the_kernel_is_checked(k, fits, monkeypatch):
    # a is (16, 4): a.T is (4, 16), so threads 16.. of a 32-thread launch store past
    # it; a.ravel() has 64 elements, so i + 40 is past it from thread 24 on.
    # (np.transpose, np.swapaxes and .ravel() compile on numba.cuda only with its NRT,
    # so the CPU target takes them only then: tests/test_cuda_refusals.py)
    monkeypatch.setattr(cuda.config, "CUDA_ENABLE_NRT", True)
    buf, a = _framed((16, 4))
    with pytest.raises(NumquadIndexError, match="out of bounds"):
        k[1, 32](a, 5.0)
    np.testing.assert_array_equal(_outside(buf, a), SENT)
    buf, a = _framed((16, 4))
    k[1, fits](a, 5.0)  # in bounds: NumPy's view of the same stores
    want = np.zeros((16, 4))
    if k in (k_ravel, k_reshape):
        want.ravel()[40 : 40 + fits] = 5.0
    else:
        want.T[0, :fits] = 5.0
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(_outside(buf, a), SENT)


@xpu.jit
def k_load_T(a, out):
    i = xpu.grid(1)
    out[i] = a.T[0, i] + a.ravel()[i + 40]


@xpu.jit
def k_tuple_load(t, out):
    i = xpu.grid(1)
    out[i] = t[1][i + 10]


@pytest.mark.slow
def test_a_load_through_a_view_or_a_tuple_is_checked(rng, monkeypatch):
    monkeypatch.setattr(cuda.config, "CUDA_ENABLE_NRT", True)  # (.ravel(): as above)
    a = rng.normal(size=(16, 4))
    out = np.full(32, SENT)
    with pytest.raises(NumquadIndexError, match="out of bounds"):
        k_load_T[1, 32](a, out)
    out = np.full(16, SENT)
    k_load_T[1, 16](a, out)
    np.testing.assert_array_equal(out, a.T[0, :16] + a.ravel()[40:56])
    x, y = rng.normal(size=8), rng.normal(size=40)
    out = np.full(32, SENT)
    with pytest.raises(NumquadIndexError, match="out of bounds"):
        k_tuple_load[1, 32]((x, y), out)
    out = np.full(30, SENT)
    k_tuple_load[1, 30]((x, y), out)
    np.testing.assert_array_equal(out, y[10:40])


REC = np.dtype([("x", np.float64), ("v", np.float64, (4,))])


@xpu.jit
def k_field(r, v):
    i = xpu.grid(1)
    r.x[i + 5] = v


@xpu.jit
def k_subarray(r, v):
    i = xpu.grid(1)
    r[i].v[i] = v


@xpu.jit
def k_subarray_load(r, out):
    i = xpu.grid(1)
    out[i] = r[i]["v"][i]


@pytest.mark.slow
def test_record_fields_and_subarrays_are_checked():
    for k, ok in ((k_field, 3), (k_subarray, 4)):
        buf = np.zeros(24, REC)
        buf["x"], buf["v"] = SENT, SENT
        r = buf[8:16]
        r["x"], r["v"] = 0, 0
        with pytest.raises(NumquadIndexError, match="out of bounds"):
            k[1, 8](r, 5.0)
        assert (buf["x"][:8] == SENT).all() and (buf["x"][16:] == SENT).all()
        assert (buf["v"][:8] == SENT).all() and (buf["v"][16:] == SENT).all()
        r["x"], r["v"] = 0, 0
        k[1, ok](r, 5.0)
        want = np.zeros(8, REC)
        if k is k_field:
            want["x"][5 : 5 + ok] = 5.0
        else:
            for i in range(ok):
                want["v"][i, i] = 5.0
        np.testing.assert_array_equal(r, want)
    r = np.zeros(8, REC)
    r["v"] = np.arange(32.0).reshape(8, 4)
    with pytest.raises(NumquadIndexError, match="out of bounds"):
        k_subarray_load[1, 8](r, np.zeros(8))
    out = np.full(4, SENT)
    k_subarray_load[1, 4](r, out)
    np.testing.assert_array_equal(out, [r["v"][i, i] for i in range(4)])


@xpu.jit
def k_cas(a, o):
    o[0] = cuda.atomic.compare_and_swap(a, 0, 7)


@xpu.jit
def k_atomic_in_store(hist, res):
    i = xpu.grid(1)
    res[0] = cuda.atomic.add(hist, i + 10, 1)


def test_atomics_are_checked_and_named():
    big = np.zeros(100, np.int32)
    empty = big[50:50]  # size 0, its data pointer inside big
    o = np.full(1, -5, np.int32)
    with pytest.raises(NumquadIndexError, match=r"an atomic of k_cas is out of bounds .* size 0"):
        k_cas[1, 1](empty, o)
    assert not big.any() and o[0] == -5
    a = np.zeros(1, np.int32)
    k_cas[1, 1](a, o)
    assert a[0] == 7 and o[0] == 0
    hist, res = np.zeros(32, np.int64), np.zeros(1, np.int64)
    # the message names the atomic's array, not the statement's store target
    with pytest.raises(
        NumquadIndexError,
        match=r"an atomic of k_atomic_in_store is out of bounds .* guard the "
        r"atomic \(e\.g\. `if i < hist\.shape\[0\]:`\)",
    ):
        k_atomic_in_store[1, 32](hist, res)


# -- a.flat[j] (twenty-second session's list of what was left: a flat iterator had no
# shape for the checks, so its loads and stores were never checked) -------------------


def _flat_store(a, j, v):
    a.flat[j] = v


_device_flat_store = cuda.jit(device=True)(_flat_store)


@xpu.jit
def k_flat(a, b, off, boff, out):
    i = xpu.grid(1)
    a.flat[i + off] = b.flat[i]  # a store and a load in the lane loop
    out[i] = b.flat[boff]  # a load with a uniform index


@xpu.jit
def k_flat_device(a, off, v):
    i = xpu.grid(1)
    _device_flat_store(a, i + off, v)


@pytest.mark.parametrize("debug", [False, True])
def test_flat_loads_and_stores_are_checked(rng, debug):
    k = xpu.jit(debug=debug)(k_flat.py_func)
    b = rng.normal(size=(5, 4))[:, ::2]  # not contiguous: 10 elements
    # in bounds: NumPy's flat order of the same accesses
    buf, a = _framed((4, 6))
    out = np.full(10, SENT)
    k[1, 10](a, b, 7, 7, out)
    want = np.zeros((4, 6))
    want.flat[7:17] = b.flat[:10]
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(out, b.flat[7])
    np.testing.assert_array_equal(_outside(buf, a), SENT)
    # past the end (a store from thread 17 on, a load from thread 10 on), and a
    # negative index, which Numba's a.flat[j] (CPU and numba.cuda) does not wrap
    for n, off, boff, what in (
        (24, 0, 0, "load"),
        (10, 17, 0, "store"),
        (10, -1, 0, "store"),
        (8, 0, -3, "load"),
        (8, 0, 10, "load"),
    ):
        buf, a = _framed((4, 6))
        with pytest.raises(NumquadIndexError, match=f"{what}s out of bounds") as e:
            k[1, n](a, b, off, boff, np.full(n, SENT))
        assert ".size" in str(e.value) and ".flat" in str(e.value)
        np.testing.assert_array_equal(_outside(buf, a), SENT)


def test_flat_in_a_device_function_is_checked():
    buf, a = _framed((3, 5))
    k_flat_device[1, 15](a, 0, 2.5)
    np.testing.assert_array_equal(a, np.full((3, 5), 2.5))
    for off in (1, -1):
        buf, a = _framed((3, 5))
        with pytest.raises(NumquadIndexError, match="out of bounds"):
            k_flat_device[1, 15](a, off, 2.5)
        np.testing.assert_array_equal(_outside(buf, a), SENT)
