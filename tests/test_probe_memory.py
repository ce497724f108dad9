"""What a probe of array arguments and memory found (twenty-fourth session): a float
launch argument of an integer-declared kernel parameter was cast as x86 casts
(1e20 -> -2**31) where numba.cuda refuses it; two Python ints in a lane call were
typed apart (2**63 + 1 wrapped); two mappings of one file hid a thread's own atomic
from it (private atomic copies); a Numba library error in a kernel named no line of
the user's. Expected values come from NumPy and numba.cuda's rules; outputs are
poisoned first.
"""

import os
import sys

import numpy as np
import pytest

from numba import cuda

from numquad import NumquadTypeError, xpu


@xpu.jit("void(int32[:], int32)")
def k_store(out, v):
    i = xpu.grid(1)
    if i < out.size:
        out[i] = v


@pytest.mark.parametrize("target", ["cpu", "python"])
@pytest.mark.parametrize("value", [1e20, 3e9, float("inf"), float("nan"), 2.0, np.float32(5.0)])
def test_a_float_for_an_integer_parameter_is_refused_as_numba_cuda_refuses_it(target, value):
    # numba.cuda's launch converts with ctypes.c_int32(v): a TypeError for a float
    out = np.full(32, -7, np.int32)
    with pytest.raises(NumquadTypeError) as e:
        getattr(k_store, target)[1, 32](out, value)
    msg = str(e.value)
    assert "argument 1 (v) of k_store is declared int32; got the float" in msg
    assert f'File "{__file__}", line' in msg
    assert (out == -7).all()


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_an_integer_for_an_integer_parameter_wraps_as_ctypes_does(target, rng):
    v = int(rng.integers(2**31, 2**32))
    out = np.full(32, -7, np.int32)
    getattr(k_store, target)[1, 32](out, v)
    assert (out == np.array(v, np.int64).astype(np.int32)).all()


@xpu.jit
def add(x, y):
    return x + y


@pytest.mark.slow
def test_python_ints_alone_are_int64_as_numpy_reads_them(rng):
    a = int(rng.integers(0, 2**40))
    np.testing.assert_array_equal(add(a, 1), np.add(a, 1))
    # NumPy: OverflowError; it was int64(-9223372036854775807) here
    with pytest.raises(NumquadTypeError, match="9223372036854775808, which int64 cannot hold"):
        add(2**63, 1)
    assert add(np.uint64(2**63), 1) == np.uint64(2**63) + np.uint64(1)
    x = rng.integers(0, 2**62, 5, dtype=np.uint64)
    np.testing.assert_array_equal(add(x, 2**63), x + np.uint64(2**63))


@xpu.jit
def k_hist_alias(h, g, out):
    i = xpu.grid(1)
    if i < out.size:
        xpu.atomic.add(h, i, 1)  # only thread i touches element i
        out[i] = g[i]  # ... and reads it back through the other mapping


@pytest.mark.slow
def test_two_mappings_of_one_file_see_each_others_atomics(tmp_path, rng):
    path = os.fspath(tmp_path / "h.bin")
    start = rng.integers(0, 100, 16)
    start.tofile(path)
    h = np.memmap(path, dtype=np.int64, mode="r+", shape=(16,))
    g = np.memmap(path, dtype=np.int64, mode="r+", shape=(16,))
    assert not np.may_share_memory(h, g)
    out = np.full(16, -7, np.int64)
    k_hist_alias.cpu[1, 16](h, g, out)
    np.testing.assert_array_equal(out, start + 1)
    np.testing.assert_array_equal(np.fromfile(path, np.int64), start + 1)
    del h, g


@xpu.jit
def k_reshape(src, dst):
    i = xpu.grid(1)
    if i < dst.size:
        dst[i] = src.reshape(20)[i]


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are Python 3.11+")
def test_a_numba_library_error_in_a_kernel_names_the_kernel():
    m = np.arange(20.0).reshape(4, 5)
    with pytest.raises(NotImplementedError) as e:
        k_reshape.cpu[1, 32](m.T, np.zeros(20))
    notes = "\n".join(getattr(e.value, "__notes__", []))
    assert f'File "{__file__}", line {k_reshape.firstlineno}, in k_reshape' in notes
    out = np.full(20, np.nan)
    k_reshape.cpu[1, 32](m, out)  # a C-contiguous array reshapes
    np.testing.assert_array_equal(out, m.reshape(20))


@xpu.jit(debug=True)
def k_div_debug(r, x, y):
    i = xpu.grid(1)
    r[i] = y[i] / x[i]


@xpu.jit(debug=True)
def k_floordiv_debug(r, x, y):
    i = xpu.grid(1)
    r[i] = y[i] // x[i]


@xpu.jit
def k_div_release(r, x, y):
    i = xpu.grid(1)
    r[i] = y[i] / x[i]


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_debug_division_by_zero_raises_as_numba_cuda_debug_builds_do(target, rng):
    # numba.cuda compiles debug=True with Numba's "python" error model
    x = rng.integers(1, 9, 64)
    x[int(rng.integers(0, 64))] = 0
    with pytest.raises(ZeroDivisionError):
        getattr(k_div_debug, target)[2, 32](np.zeros(64), x.astype(np.float64), rng.random(64))
    with pytest.raises(ZeroDivisionError):
        getattr(k_floordiv_debug, target)[2, 32](np.zeros(64, np.int64), x, rng.integers(0, 9, 64))
    y = rng.random(64)
    r = np.full(64, -7.0)
    getattr(k_div_release, target)[2, 32](r, x.astype(np.float64), y)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(r, y / x)


@cuda.jit(device=True)
def _hint_load(x, j):
    return cuda.ldcs(x, j)


@xpu.jit
def k_hint_load(out, x, off):
    i = xpu.grid(1)
    if i < out.size:
        out[i] = cuda.ldcg(x, i + off) + _hint_load(x, i + off)


@xpu.jit
def k_hint_store(out, x, off):
    i = xpu.grid(1)
    if i < x.size:
        cuda.stcs(out, i + off, x[i])


@pytest.mark.slow
@pytest.mark.parametrize("debug", [False, True])
def test_cache_hint_loads_and_stores_are_bounds_checked(rng, debug):
    # they were plain helper calls past the bounds checks: a read past the array gave
    # garbage, a write past it corrupted the heap (glibc aborted the interpreter)
    from numquad.errors import NumquadIndexError

    load = xpu.jit(debug=debug)(k_hint_load.py_func)
    store = xpu.jit(debug=debug)(k_hint_store.py_func)
    x = rng.random(8)
    out = np.full(8, np.nan)
    load.cpu[1, 32](out, x, 0)
    np.testing.assert_array_equal(out, x + x)
    out = np.full(8, np.nan)
    store.cpu[1, 32](out, x, 0)
    np.testing.assert_array_equal(out, x)
    with pytest.raises(NumquadIndexError, match="out of bounds"):
        load.cpu[1, 32](np.full(8, np.nan), x, 5)
    big = np.full(16, -7.0)
    with pytest.raises(NumquadIndexError, match="out of bounds"):
        store.cpu[1, 32](big[:8], x, 5)
    np.testing.assert_array_equal(big[8:], -7.0)  # nothing past the view was written
