"""A release build checks every load of a kernel's arrays (cpu/bounds.py).

A load outside its array raises NumquadIndexError at the load's line, with the
index, the axis and the size, instead of reading other memory or killing the
process; loads inside their arrays give the python target's values (an oracle that
shares no code with the CPU compiler) and the lane loops around them stay vector
code. Store checks are in tests/test_robustness.py.
"""

import re

import numba
import numpy as np
import pytest

from numquad import Wave, xpu
from numquad.errors import NumquadIndexError

POISON = -999.0


def _line(fn, text):
    """The file line of the first source line of *fn* holding *text*."""
    import inspect

    lines, first = inspect.getsourcelines(fn.py_func)
    return first + next(k for k, s in enumerate(lines) if text in s)


@xpu.jit
def k_shifted(out, a, k):
    i = xpu.grid(1)
    if i < out.shape[0]:
        out[i] = a[i + k] * 2.0  # a is shorter than out when k > 0


@pytest.mark.parametrize("k", [1, -65, 1 << 40])
def test_a_load_past_the_array_raises_at_its_line(rng, k):
    a, out = rng.normal(size=64), np.full(64, POISON)
    with pytest.raises(NumquadIndexError) as e:
        k_shifted[2, 32](out, a, k)
    msg = str(e.value)
    assert f"line {_line(k_shifted, 'out[i] = a[i + k]')}: k_shifted loads out of bounds" in msg
    assert "an index on axis 0 outside its size 64" in msg
    assert "nothing past the array was read" in msg


def test_loads_inside_the_array_and_negative_wrap_give_the_oracles_values(rng):
    a = rng.normal(size=64)
    for k in (0, -64, -40, -1):
        got, want = np.full(64, POISON), np.full(64, POISON)
        k_shifted[2, 32](got, a, k)
        k_shifted.python[2, 32](want, a, k)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, a[np.arange(64) + k] * 2.0)


@xpu.jit
def k_guarded_tail(out, a):
    i = xpu.grid(1)
    v = a[i] if i < a.shape[0] else -1.0  # evaluated only where it is inside
    out[i] = v + Wave.prefixSum(v)


def test_a_load_not_evaluated_is_not_checked(rng):
    a = rng.normal(size=40)
    got, want = np.full(64, POISON), np.full(64, POISON)
    k_guarded_tail[2, 32](got, a)
    k_guarded_tail.python[2, 32](want, a)
    np.testing.assert_array_equal(got, want)


@xpu.jit
def k_operand(out, a):
    i = xpu.grid(1)
    out[i] = Wave.prefixSum(a[i + 3])


def test_a_cross_lane_operand_load_is_checked(rng):
    out = np.full(64, POISON)
    with pytest.raises(NumquadIndexError, match=r"an index on axis 0 outside its size 64"):
        k_operand[2, 32](out, rng.normal(size=64))
    a = rng.normal(size=67)
    got, want = np.full(64, POISON), np.full(64, POISON)
    k_operand[2, 32](got, a)
    k_operand.python[2, 32](want, a)
    np.testing.assert_array_equal(got, want)


@xpu.jit
def k_2d(out, img, dx):
    x, y = xpu.grid(2)
    if x < out.shape[1] and y < out.shape[0]:
        out[y, x] = img[y, x + dx] - img[y, x]


def test_a_2d_load_names_its_axis(rng):
    img = rng.normal(size=(16, 16))
    got, want = np.full((16, 16), POISON), np.full((16, 16), POISON)
    k_2d[(2, 2), (8, 8)](got, img, 0)
    k_2d.python[(2, 2), (8, 8)](want, img, 0)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(NumquadIndexError, match=r"an index on axis 1 outside its size 16"):
        k_2d[(2, 2), (8, 8)](got, img, 1)


@xpu.jit
def k_row_view(out, m, r):
    i = xpu.grid(1)
    row = m[i % 4 + r]  # a view: its index is checked too
    out[i] = row[1] - row[0]


@pytest.mark.slow
def test_a_view_index_is_checked(rng):
    m = rng.normal(size=(4, 3))
    got, want = np.full(32, POISON), np.full(32, POISON)
    k_row_view[1, 32](got, m, 0)
    k_row_view.python[1, 32](want, m, 0)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(NumquadIndexError, match=r"an index on axis 0 outside its size 4"):
        k_row_view[1, 32](got, m, 1)


@xpu.jit
def k_uniform(out, tab):
    i = xpu.grid(1)
    t = tab[xpu.blockIdx.x * 10]  # the same in every lane: checked at once
    out[i] = t + Wave.laneId()


def test_a_uniform_load_is_checked(rng):
    tab = rng.normal(size=11)
    got, want = np.full(64, POISON), np.full(64, POISON)
    k_uniform[2, 32](got, tab)
    k_uniform.python[2, 32](want, tab)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(NumquadIndexError, match=r"index 20 on axis 0 of an array of size 11"):
        k_uniform[3, 32](np.full(96, POISON), tab)


@xpu.jit
def k_shared(out, a, off):
    s = xpu.shared.array(64, np.float64)
    t = xpu.threadIdx.x
    s[t] = a[t]
    xpu.syncthreads()
    out[t] = s[(t + off) & 127]  # past s[63] when off > 0


@pytest.mark.slow
def test_a_shared_load_is_checked(rng):
    a = rng.normal(size=64)
    got, want = np.full(64, POISON), np.full(64, POISON)
    k_shared[1, 64](got, a, 0)
    k_shared.python[1, 64](want, a, 0)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(NumquadIndexError, match=r"an index on axis 0 outside its size 64"):
        k_shared[1, 64](got, a, 64)


@xpu.jit
def k_local(out, a, j):
    i = xpu.grid(1)
    loc = xpu.local.array(4, np.float64)
    for q in range(4):
        loc[q] = a[i] + q
    out[i] = loc[j] + Wave.prefixSum(loc[0])


@pytest.mark.slow
def test_a_local_load_is_checked(rng):
    a = rng.normal(size=32)
    got, want = np.full(32, POISON), np.full(32, POISON)
    k_local[1, 32](got, a, 3)
    k_local.python[1, 32](want, a, 3)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(NumquadIndexError, match=r"an index on axis 0 outside its (size 4|array)"):
        k_local[1, 32](got, a, 4)


@xpu.jit
def k_unsigned(out, a, off):
    i = xpu.grid(1)
    out[i] = a[np.uint64(i) + off]


def test_an_unsigned_load_index_does_not_wrap(rng):
    a = rng.normal(size=32)
    got = np.full(32, POISON)
    k_unsigned[1, 32](got, a, np.uint64(0))
    np.testing.assert_array_equal(got, a)
    with pytest.raises(NumquadIndexError, match="loads out of bounds"):
        k_unsigned[1, 32](got, a, np.uint64(2**64 - 1))  # -1 as int64 would wrap


def test_debug_builds_name_the_line_and_the_index(rng):
    # (Numba's boundscheck named neither: "index is out of bounds" at the kernel's
    # def line; a probe of user errors, twenty-first session)
    k = xpu.jit(debug=True)(k_shifted.py_func)
    with pytest.raises(
        NumquadIndexError,
        match=r"line \d+: k_shifted loads out of bounds in the launch "
        r"\[2, 32\]: index 64 on axis 0 of an array of size 64",
    ):
        k[2, 32](np.full(64, POISON), rng.normal(size=64), 1)


@xpu.jit
def k_stream(out, a, b):
    i = xpu.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] * 2.0 + b[i]


def test_checked_loads_keep_the_lane_loop_vector_code():
    """The checks are branch-free reductions and a masked load: the guarded lane loop
    still vectorises (the all-active copy and the masked one)."""
    arr = numba.float64[::1]
    ir = k_stream.inspect_llvm((arr, arr, arr))
    assert re.search(r"@llvm\.masked\.load\.v(4|8|16)f64|load <(4|8|16) x double>", ir)
    assert re.search(r"fmul <(4|8|16) x double>", ir)
    src = k_stream.inspect_cpu_source((arr, arr, arr))
    assert "_nq_lck(a, i, _nq_lb" in src and "_nq_lbc(_nq_lb" in src
    # the store's check notes a flag and masks the store (no exit in the loop, which
    # kept LLVM from vectorising every guarded lane loop that stores;
    # tests/test_device_bounds.py has its error)
    assert re.search(r"@llvm\.masked\.store\.v(4|8|16)f64|store <(4|8|16) x double>", ir)
    assert "_nq_sok(" in src and "_nq_lsc(_nq_lb" in src


@xpu.jit
def k_row_past_the_end(img, out):
    x, y = xpu.grid(2)
    out[y, x] = img[y, x + 1] + Wave.reduceSum(img[y, x])  # the last column reads past


@pytest.mark.slow
def test_a_release_bounds_error_names_the_array_its_axis_and_the_statement():
    img = np.random.default_rng(4).standard_normal((4, 32))
    out = np.full((4, 32), np.nan)
    with pytest.raises(IndexError) as e:
        k_row_past_the_end[(1, 1), (32, 4)](img, out)
    msg = str(e.value)
    assert "k_row_past_the_end loads out of bounds" in msg and "on axis 1 outside its size 32" in msg
    assert "`if i < img.shape[1]:`" in msg, msg
    assert msg.endswith("the statement: `out[y, x] = img[y, x + 1] + Wave.reduceSum(img[y, x])`"), msg
    assert "\n" not in msg
