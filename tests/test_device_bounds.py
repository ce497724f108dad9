"""A release build checks the loads and stores of the device functions a kernel calls
(cpu/devicefn.py, cpu/bounds.py), and a lane loop's stores without an exit.

numba.cuda's ``@cuda.jit(device=True)`` functions and ``@xpu.jit`` functions a kernel
calls compile on their own; they used to read and write past an array unchecked in
a release build (garbage, or a crash), where the kernel's own accesses were checked.
Expected values come from NumPy; outputs are poisoned first.
"""

import inspect
import re

import numba
import numpy as np
import pytest
from numba import cuda

from numquad import xpu
from numquad.errors import NumquadIndexError

POISON = -999.0


def _line(fn, text):
    fn = getattr(fn, "py_func", fn)
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, s in enumerate(lines) if text in s)


@cuda.jit(device=True)
def get(a, j):
    return a[j]


@cuda.jit(device=True)
def get_plus_one(a, j):
    return get(a, j) + 1.0  # a device function calling another


@cuda.jit(device=True)
def put(a, j, v):
    a[j] = v


@xpu.jit
def get_xpu(a, j):
    return a[j]


@xpu.jit
def k_nested(out, a, off):
    i = xpu.grid(1)
    if i < out.size:
        out[i] = get_plus_one(a, i + off)


@xpu.jit
def k_xpu_callee(out, a, off):
    i = xpu.grid(1)
    if i < out.size:
        out[i] = get_xpu(a, i + off)


@xpu.jit
def k_store(out, a, off):
    i = xpu.grid(1)
    if i < a.size:
        put(out, i + off, a[i])


@xpu.jit
def k_uniform(out, a, off):
    v = get(a, off)  # outside the lane loops: the kernel's uniform code
    i = xpu.grid(1)
    if i < out.size:
        out[i] = v


@pytest.mark.parametrize("off", [64, -65, 1 << 40])
@pytest.mark.parametrize("kern", [k_nested, k_xpu_callee], ids=["cuda_device", "xpu_callee"])
def test_a_device_functions_load_past_the_array_raises_at_the_call(rng, kern, off):
    a, out = rng.random(64).astype(np.float32), np.full(64, POISON, np.float32)
    with pytest.raises(NumquadIndexError) as e:
        kern[2, 32](out, a, off)
    msg = str(e.value)
    line = _line(kern, "out[i] = ")
    callee = "get_plus_one" if kern is k_nested else "get_xpu"
    assert (
        f"line {line}: {callee}, a device function called by {kern.__name__} here, reads or writes out of bounds" in msg
    )
    assert "launch [2, 32]" in msg and "debug=True names its line and index" in msg


@pytest.mark.parametrize("off", [64, -65])
def test_debug_names_the_device_functions_line_and_index(rng, off):
    k = xpu.jit(debug=True)(k_nested.py_func)
    a = rng.random(64).astype(np.float32)
    with pytest.raises(NumquadIndexError) as e:
        k[2, 32](np.full(64, POISON, np.float32), a, off)
    msg = str(e.value)
    assert f'File "{__file__}", line {_line(get, "return a[j]")}, in get: get loads out of bounds' in msg
    assert f"index {off} on axis 0 of an array of size 64" in msg


@pytest.mark.parametrize("debug", [False, True])
def test_a_device_functions_store_past_the_array_raises_and_writes_nothing_outside(rng, debug):
    buf = np.full(80, POISON, np.float32)
    out = buf[8:72]  # 64 elements with sentinels on both sides
    a = rng.random(64).astype(np.float32)
    k = xpu.jit(debug=True)(k_store.py_func) if debug else k_store
    with pytest.raises(NumquadIndexError) as e:
        k[2, 32](out, a, 3)
    msg = str(e.value)
    if debug:
        assert f"line {_line(put, 'a[j] = v')}, in put: put stores out of bounds (called by k_store" in msg
        assert "index 64 on axis 0 of an array of size 64" in msg
    else:  # the store masked, its failure raised after the loop
        assert (
            f"line {_line(k_store, 'put(out')}: put, a device function called by k_store here, reads or "
            "writes out of bounds" in msg
        )
    np.testing.assert_array_equal(buf[:8], POISON)
    np.testing.assert_array_equal(buf[72:], POISON)


def test_a_uniform_device_call_is_checked(rng):
    a = rng.random(64).astype(np.float32)
    with pytest.raises(NumquadIndexError, match=f"line {_line(k_uniform, 'v = get(')}: get, a device function"):
        k_uniform[2, 32](np.full(64, POISON, np.float32), a, 64)
    out = np.full(64, POISON, np.float32)
    k_uniform[2, 32](out, a, -3)
    np.testing.assert_array_equal(out, np.full(64, a[-3]))


@pytest.mark.parametrize("off", [0, -64, -17, 5])
def test_device_calls_inside_the_arrays_give_numpys_values(rng, off):
    n = 64 - max(off, 0)
    a = rng.random(64).astype(np.float32)
    for kern, want in ((k_nested, a[np.arange(n) + off] + np.float32(1)), (k_xpu_callee, a[np.arange(n) + off])):
        out = np.full(n, POISON, np.float32)
        kern[2, 32](out, a, off)
        np.testing.assert_array_equal(out, want)
    out = np.full(64, POISON, np.float32)
    k_store[2, 32](out, a[: 64 - max(off, 0)], off)
    want = np.full(64, POISON, np.float32)
    want[np.arange(n) + off] = a[:n]
    np.testing.assert_array_equal(out, want)


# -- the forms device functions take --------------------------------------------------


@cuda.jit("float32(float32[:], int64)", device=True)
def get_declared(a, j):
    return a[j]


def _closure_get(scale):
    @cuda.jit(device=True)
    def inner(a, j):
        return a[j] * scale

    return inner


get_scaled = _closure_get(np.float32(3))


@cuda.jit(device=True)
def tri_sum(a, j):  # recursive: a[j] + a[j - 1] + ... + a[0]
    if j <= 0:
        return a[j]
    return a[j] + tri_sum(a, j - 1)


@cuda.jit(device=True)
def get_default(a, j, k=2):
    return a[j, k]


@cuda.jit(device=True)
def row_sum(a, j):  # a view, then a loop over it
    r = a[j]
    s = 0.0
    for t in range(r.shape[0]):
        s += r[t]
    return s


@xpu.jit
def k_forms(out, a, b, off):
    i = xpu.grid(1)
    if i < out.shape[0]:
        out[i, 0] = get_declared(a, i + off)
        out[i, 1] = get_scaled(a, i + off)
        out[i, 2] = tri_sum(a, (i + off) % 4)
        out[i, 3] = get_default(b, i + off)
        out[i, 4] = row_sum(b, i + off)


@pytest.mark.slow
def test_declared_closure_recursive_default_and_view_device_functions(rng):
    a = rng.random(64).astype(np.float32)
    b = rng.random((64, 3)).astype(np.float32)
    out = np.full((64, 5), POISON, np.float32)
    k_forms[2, 32](out, a, b, 0)
    np.testing.assert_array_equal(out[:, 0], a)
    np.testing.assert_array_equal(out[:, 1], a * np.float32(3))
    cums = [a[0]]
    for t in range(1, 4):
        cums.append(np.float32(a[t] + cums[-1]))
    np.testing.assert_allclose(out[:, 2], np.array(cums)[np.arange(64) % 4], rtol=1e-6)
    np.testing.assert_array_equal(out[:, 3], b[:, 2])
    np.testing.assert_allclose(out[:, 4], b.astype(np.float64).sum(axis=1), rtol=1e-6)
    for off in (64, -65):  # every form's load is checked
        with pytest.raises(NumquadIndexError, match="a device function called by k_forms here"):
            k_forms[2, 32](np.full((64, 5), POISON, np.float32), a, b, off)


# -- a lane loop's stores --------------------------------------------------------------


def test_a_lane_loops_store_past_the_array_raises_after_the_loop(rng):
    a, b = rng.random(64).astype(np.float32), rng.random(64).astype(np.float32)
    buf = np.full(60, POISON, np.float32)
    out = buf[4:36]  # 32 elements; lanes 32..63 store past it
    with pytest.raises(NumquadIndexError, match="k_guarded_wrong stores out of bounds"):
        k_guarded_wrong[2, 32](out, a, b)
    np.testing.assert_array_equal(buf[:4], POISON)
    np.testing.assert_array_equal(buf[36:], POISON)


@xpu.jit
def k_guarded_wrong(out, a, b):
    i = xpu.grid(1)
    if i < a.shape[0]:  # the wrong array's size
        out[i] = a[i] * np.float32(2) + b[i]


@xpu.jit
def k_scatter_store(out, idx, a):
    i = xpu.grid(1)
    if i < a.shape[0]:
        out[idx[i]] = a[i]


def test_only_a_contiguous_lane_store_is_masked(rng):
    """A store at the lane plus a uniform value is masked (a masked vector store); a
    scatter keeps the raise at once (LLVM would scalarise a masked scatter inside the
    vector loop), which names the index."""
    arr, iarr = numba.float32[::1], numba.int64[::1]
    src = k_scatter_store.inspect_cpu_source((arr, iarr, arr))
    assert "_nq_six(" in src and "_nq_sok(" not in src
    a = rng.random(64).astype(np.float32)
    idx = rng.permutation(64).astype(np.int64)
    out = np.full(64, POISON, np.float32)
    k_scatter_store[2, 32](out, idx, a)
    want = np.full(64, POISON, np.float32)
    want[idx] = a
    np.testing.assert_array_equal(out, want)
    idx[5] = 64
    with pytest.raises(NumquadIndexError, match="index 64 on axis 0 of an array of size 64"):
        k_scatter_store[2, 32](np.full(64, POISON, np.float32), idx, a)


@xpu.jit
def k_while_test(out, a, off):
    i = xpu.grid(1)
    n = 0
    while get(a, off + n) > np.float32(-1) and n < 1000000:  # a's values are >= 0
        n += 1
    if i < out.size:
        out[i] = n


@xpu.jit
def k_while_load(out, a, off):
    i = xpu.grid(1)
    n = 0
    while a[off + n] > np.float32(-1) and n < 1000000:
        n += 1
    if i < out.size:
        out[i] = n


@pytest.mark.parametrize("kern", [k_while_test, k_while_load], ids=["device_call", "load"])
def test_a_load_in_a_while_test_raises_before_looping_on(rng, kern):
    """A failed load gives 0; without a check in the loop the test would stay true
    (0 > -1) and the loop would run to its limit (for ever without one)."""
    a = rng.random(64).astype(np.float32)
    with pytest.raises(NumquadIndexError, match="loads out of bounds|a device function called by"):
        kern[2, 32](np.full(64, -1, np.int64), a, 60)
    src = kern.inspect_cpu_source((numba.int64[::1], numba.float32[::1], numba.int64))
    body = src.split("while ")[1]
    assert re.search(r"_nq_l(cc|bc)\(", body[: body.index("n += 1")])


_TABLE = np.arange(10.0)


@xpu.jit
def _lane_look(i):
    return _TABLE[i] * 2.0


def test_a_lane_call_reading_out_of_bounds_names_the_lane_function_in_every_layout(rng):
    """A probe (thirty-seventh session): a lane function called on arrays that reads
    out of bounds was reported at a line of numquad's wrapper kernel, as "f, a device
    function called by f", and in "the launch [1, 256]" for inputs that were not
    C-contiguous (the wrapper's own launch). Now: the lane function's line, and the
    call on arrays, whatever the layout; nothing is returned."""
    idx = rng.integers(0, 10, 20)
    np.testing.assert_array_equal(_lane_look(idx), _TABLE[idx] * 2.0)
    idx[int(rng.integers(0, 20))] = 15
    line = _lane_look.py_func.__code__.co_firstlineno
    want = f'File "{__file__}", line {line}: _lane_look reads or writes out of bounds in _lane_look(...) on arrays'
    for arg in (idx, np.asfortranarray(idx.reshape(4, 5)), idx[::-1], list(idx)):
        with pytest.raises(NumquadIndexError) as e:
            _lane_look(arg)
        assert str(e.value).startswith(want), str(e.value)
