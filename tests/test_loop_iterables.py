"""Loops over ``enumerate(...)`` and ``zip(...)`` of kernel parameters, and over
local tuples, tuple displays and array rows, around cross-lane ops.

numba.cuda compiles ``for j, c in enumerate(w):`` and ``for a, b in zip(w, t):``
around warp functions; the CPU target refused them ("a loop around cross-lane ops
must iterate over range(...)") and the CUDA target's mask rewrite took ``len`` of
the enumerate object. Both targets now loop by index, each argument evaluated once,
as Python does; a sequence other than a parameter is evaluated once before the loop.
Expected values come from a NumPy model of the waves written here
(integers, so that no summation order matters); outputs are poisoned first.
"""

import numpy as np
import pytest
from numba import cuda, typeof

from numquad import NumquadTypeError, Wave, xpu

from conftest import TARGETS

W = 32


def _waves(v):
    return v.reshape(-1, W)


@xpu.jit
def k_enumerate(x, w, s0, out):
    i = cuda.grid(1)
    acc = 0
    for j, c in enumerate(w, s0):
        acc += Wave.prefixSum(x[i] * c) * j
    out[i] = acc


@xpu.jit
def k_zip_break(x, w, t, out):
    i = cuda.grid(1)
    acc = 0
    for a, b in zip(w, t):
        if x[i] > a:  # lanes leave the loop at different times
            break
        acc += Wave.reduceSum(x[i] * b)
    out[i] = acc


@xpu.jit
def k_enumerate_pair(x, w, out):
    i = cuda.grid(1)
    acc = 0
    for p in enumerate(w):
        acc += Wave.shuffleXor(x[i] + p[1], p[0] & 7)
    out[i] = acc


def _exclusive(v):
    return np.cumsum(_waves(v), axis=1) - _waves(v)


def _want_enumerate(x, w, s0):
    acc = np.zeros_like(x)
    for j, c in enumerate(w, s0):
        acc += (_exclusive(x * c) * j).ravel()
    return acc


def _want_zip_break(x, w, t):
    acc = np.zeros_like(x)
    live = np.ones(x.shape, bool)
    for a, b in zip(w, t):
        live &= ~(x > a)
        v = np.where(live, x * b, 0)
        acc += np.where(live, np.repeat(_waves(v).sum(axis=1), W), 0)
    return acc


def _want_enumerate_pair(x, w):
    acc = np.zeros_like(x)
    lanes = np.arange(x.size)
    for j, c in enumerate(w):
        acc += (x + c)[lanes ^ (j & 7)]
    return acc


def _inputs(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, 96).astype(np.int64)
    w = rng.integers(-9, 9, 6).astype(np.int64)
    return x, w


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_enumerate_with_a_start(target):
    x, w = _inputs(1)
    out = np.full(x.size, -777, np.int64)
    getattr(k_enumerate, target)[3, 32](x, w, np.int64(-3), out)
    np.testing.assert_array_equal(out, _want_enumerate(x, w, -3))


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_zip_of_an_array_and_a_shorter_tuple_with_a_lane_varying_break(target):
    x, w = _inputs(2)
    t = (3, -1, 2, 7)  # zip stops at the shorter one
    out = np.full(x.size, -777, np.int64)
    getattr(k_zip_break, target)[3, 32](x, w + 40, t, out)
    want = _want_zip_break(x, w + 40, t)
    assert np.count_nonzero(want) > 10  # some lanes stay in the loop
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_enumerate_into_one_name(target):
    x, w = _inputs(3)
    out = np.full(x.size, -777, np.int64)
    getattr(k_enumerate_pair, target)[3, 32](x, w, out)
    np.testing.assert_array_equal(out, _want_enumerate_pair(x, w))


def test_the_ptx_loops_with_shuffles():
    x, w = _inputs(4)
    sig = (typeof(x), typeof(w), typeof((3, -1, 2, 7)), typeof(x))
    ptx = k_zip_break.inspect_ptx(sig, cc=(9, 0))
    assert "shfl.sync" in ptx or "redux.sync" in ptx
    ptx = k_enumerate.inspect_ptx((typeof(x), typeof(w), typeof(np.int64(1)), typeof(x)), cc=(9, 0))
    assert "shfl.sync" in ptx


@xpu.jit
def k_local_tuple(x, y, out):
    i = cuda.grid(1)
    t = (x[i], y[i], x[i] * 2)  # a different tuple in every lane
    acc = 0
    for v in t:
        if v > -20:  # lanes take part in some iterations only
            acc += Wave.prefixSum(v)
    out[i] = acc


@xpu.jit
def k_enumerate_local(x, y, out):
    i = cuda.grid(1)
    ws = (x[i], y[i])
    acc = 0
    for j, c in enumerate(ws, i % 3):  # a lane-varying start, read once
        acc += Wave.shuffleXor(c * j, 5)
    out[i] = acc


@xpu.jit
def k_zip_display(x, y, out):
    i = cuda.grid(1)
    t = (x[i], y[i])
    acc = 0
    for a, b in zip(t, (y[i], Wave.reduceMax(x[i]))):  # an op in the iterable
        acc += Wave.reduceSum(a - b)
        t = (acc, acc)  # the loop iterates over the tuple of its start, as Python
    out[i] = acc + t[0]


@xpu.jit
def k_row(m, out):
    i = cuda.grid(1)
    acc = 0
    for v in m[i % 4]:  # a row that differs between lanes
        acc += Wave.prefixSum(v)
    out[i] = acc


@cuda.jit(device=True)
def _pair(a, b):
    return (a + b, a - b)


@xpu.jit
def _triple(a):
    return (a, a * 3, -a)


@xpu.jit
def k_calls(x, out):
    i = cuda.grid(1)
    acc = 0
    for v in _pair(x[i], i):  # a numba.cuda device function's tuple
        acc += Wave.prefixSum(v)
    for j, v in enumerate(_triple(x[i])):  # an xpu.jit function's
        acc += Wave.reduceSum(v) * j
    out[i] = acc


def _want_calls(x):
    lanes = np.arange(x.size)
    acc = _exclusive(x + lanes).ravel() + _exclusive(x - lanes).ravel()
    for j, v in enumerate((x, x * 3, -x)):
        acc += np.repeat(_waves(v).sum(axis=1), W) * j
    return acc


@xpu.jit
def k_enumerate_zip(x, y, out):
    i = cuda.grid(1)
    acc = 0
    for j, (p, q) in enumerate(zip((x[i], x[i] + 1), (y[i] * 2, y[i] * 3)), 1):
        acc += Wave.shuffleXor(p * j - q, 7)
    for j, pq in enumerate(zip((x[i],), (y[i],))):
        acc += Wave.reduceSum(pq[0] + pq[1] + j)
    out[i] = acc


def _want_enumerate_zip(x, y):
    lanes = np.arange(x.size)
    acc = np.zeros_like(x)
    for j, (p, q) in enumerate(zip((x, x + 1), (y * 2, y * 3)), 1):
        acc += (p * j - q)[lanes ^ 7]
    return acc + np.repeat(_waves(x + y).sum(axis=1), W)


@xpu.jit
def k_arrays(x, y, out):
    i = cuda.grid(1)
    acc = 0
    for arr in (x, y):  # a tuple of arrays: the same in every lane, so is arr
        acc += cuda.shfl_xor_sync(0xFFFFFFFF, arr[i], 7) * 3 + arr[i]
    out[i] = acc


def _want_arrays(x, y):
    lanes = np.arange(x.size)
    return (x[lanes ^ 7] * 3 + x) + (y[lanes ^ 7] * 3 + y)


def _want_local_tuple(x, y):
    acc = np.zeros_like(x)
    for v in (x, y, x * 2):
        live = v > -20
        w = np.where(live, v, 0)
        acc += np.where(live, _exclusive(w).ravel(), 0)
    return acc


def _want_enumerate_local(x, y):
    lanes = np.arange(x.size)
    acc = np.zeros_like(x)
    for k in range(2):
        c = (x, y)[k] * (lanes % 3 + k)
        acc += c[lanes ^ 5]
    return acc


def _want_zip_display(x, y):
    rmax = np.repeat(_waves(x).max(axis=1), W)
    acc = np.zeros_like(x)
    for a, b in ((x, y), (y, rmax)):
        acc = acc + np.repeat(_waves(a - b).sum(axis=1), W)
    return acc + acc


def _want_row(m, n):
    acc = np.zeros(n, m.dtype)
    rows = m[np.arange(n) % 4]
    for k in range(m.shape[1]):
        acc += _exclusive(rows[:, k]).ravel()
    return acc


#: (kernel, its model) of loops over sequences other than parameters, each kernel
#: taking two random int64 lane arrays x and y (k_calls x only) and out
_SEQUENCE_CASES = {
    "a local tuple of lane values": (k_local_tuple, _want_local_tuple),
    "enumerate of a local tuple with a lane-varying start": (k_enumerate_local, _want_enumerate_local),
    "zip of a reassigned local and a display holding an op": (k_zip_display, _want_zip_display),
    "tuples that device functions return": (k_calls, lambda x, y: _want_calls(x)),
    "enumerate of zip": (k_enumerate_zip, _want_enumerate_zip),
    "a tuple of arrays": (k_arrays, _want_arrays),
}


@pytest.mark.parametrize("case", list(_SEQUENCE_CASES))
@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_loops_over_local_sequences(target, case):
    kernel, model = _SEQUENCE_CASES[case]
    seed = list(_SEQUENCE_CASES).index(case)
    x, _ = _inputs(20 + seed)
    y = np.random.default_rng(40 + seed).integers(-50, 50, x.size)
    args = (x,) if kernel is k_calls else (x, y)
    out = np.full(x.size, -777, np.int64)
    getattr(kernel, target)[3, 32](*args, out)
    np.testing.assert_array_equal(out, model(x, y))


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_a_row_of_a_2d_parameter(target):
    m = np.random.default_rng(13).integers(-99, 99, (4, 5))
    out = np.full(96, -777, np.int64)
    getattr(k_row, target)[3, 32](m, out)
    np.testing.assert_array_equal(out, _want_row(m, 96))


def test_local_sequences_compile_to_shuffles_for_the_gpu():
    x, _ = _inputs(14)
    for k in (k_local_tuple, k_enumerate_local, k_zip_display, k_enumerate_zip):
        ptx = k.inspect_ptx((typeof(x), typeof(x), typeof(x)), cc=(9, 0))
        assert "shfl.sync" in ptx or "redux.sync" in ptx, k.__name__


@xpu.jit
def k_negative_start(x, w, out):
    i = cuda.grid(1)
    acc = 0
    for j, c in enumerate(w, -2):
        acc += Wave.prefixSum(x[i] * c) * j
    out[i] = acc


@xpu.jit
def k_float_start(x, w, s0, out):
    i = cuda.grid(1)
    acc = 0.0
    for j, c in enumerate(w, s0):
        acc += Wave.readFirst(x[i] * c) * j
    out[i] = acc


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_enumerate_with_a_negative_literal_start(target):
    x, w = _inputs(5)
    out = np.full(x.size, -777, np.int64)
    getattr(k_negative_start, target)[3, 32](x, w, out)
    np.testing.assert_array_equal(out, _want_enumerate(x, w, -2))


def test_a_float_start_is_refused_as_numba_refuses_it():
    # a probe: the loop by index computed float indices where Python raises TypeError
    # and Numba refuses "Only integers supported as start value in enumerate"
    x, w = _inputs(6)
    x = x.astype(np.float64)
    with pytest.raises(NumquadTypeError, match=r"test_loop_iterables.py.*Only integers supported as start value"):
        k_float_start[3, 32](x, w, 1.5, np.zeros(x.size))
    sig = (typeof(x), typeof(w), typeof(1.5), typeof(x))
    with pytest.raises(NumquadTypeError, match=r"Only integers supported as start value"):
        k_float_start.inspect_ptx(sig, cc=(9, 0))


def test_a_loop_over_a_tuple_of_two_types_says_so():
    """Numba iterates a tuple of one item type only; the loop by index named a
    subscript the user did not write ("No implementation of function getitem(Tuple(
    float64, int64), int64)"). The CPU target now says what is wrong with the loop."""

    @xpu.jit
    def k(t, out):
        i = cuda.grid(1)
        s = 0.0
        for v in t:
            s += Wave.reduceSum(v)
        out[i] = s

    with pytest.raises(NumquadTypeError, match=r"test_loop_iterables.py.*Tuple\(float64, int64\), a tuple of items of"):
        k[1, 32]((1.0, 2), np.zeros(32))


def test_enumerate_or_zip_of_a_range_around_an_op_says_what_to_write():
    """A probe (thirty-eighth session): the refusal read as if ``enumerate(range(n))``
    were allowed ("range(...), ... directly or through enumerate(...) or zip(...)");
    it now says ``range`` itself, names the iterable and what to write instead."""
    from numquad.errors import NumquadCompileError

    @xpu.jit
    def k(x, out, s):
        i = cuda.grid(1)
        acc = x[i]
        for a, b in zip(range(s), range(s + 1)):
            acc += Wave.reduceSum(acc) % 7 + a + b
        out[i] = acc

    with pytest.raises(
        NumquadCompileError,
        match=r"test_loop_iterables.py.*range\(\.\.\.\) itself.*got zip\(range\(s\), range\(s \+ 1\)\): loop over",
    ):
        k[1, 32](np.ones(32, np.int64), np.zeros(32, np.int64), 3)
