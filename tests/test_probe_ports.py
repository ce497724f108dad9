"""What a probe porting numba-cuda's own tests and documentation examples found
(twenty-fourth session): a nested function called with keyword arguments computed
Python's result on the CPU where numba.cuda ignores the keywords (Numba issue
#5000); ``shared.array(N, dtype=ary.dtype)`` and a view of a shared array made in
its statement (docs/source/user/memory.rst) were refused; ``fastmath=True`` with
``debug=True`` raised on a float division by zero where numba.cuda does not.
Expected values come from NumPy; outputs are poisoned first.
"""

import numpy as np
import pytest
from numba import cuda
from numba.core.types import float32

from numquad import NumquadCompileError, xpu


@xpu.jit
def k_closure_keywords(out):
    def inner(a, d1=100, d2=200):
        return a + d1 + d2

    out[0] = inner(1, d2=7)


def test_a_nested_function_called_with_keywords_is_refused_on_every_target():
    # numba.cuda's PTX holds 301 (the defaults), Python gives 108: no target computes
    # either silently
    with pytest.raises(NumquadCompileError) as e:
        k_closure_keywords.cpu[1, 1](np.zeros(1, np.int64))
    assert "keyword argument(s) d2" in str(e.value) and "Numba issue #5000" in str(e.value)
    assert f"line {k_closure_keywords.firstlineno + 5}" in str(e.value)
    with pytest.raises(NumquadCompileError, match="keyword argument"):
        k_closure_keywords.inspect_ptx("void(int64[:])", cc=(9, 0))


N = 10


@xpu.jit
def k_dtype_of_argument(ary):
    sm = cuda.shared.array(N, dtype=ary.dtype)
    lm = cuda.local.array(N, ary.dtype)
    for j in range(N):
        sm[j] = ary[j]
        lm[j] = 2 * ary[j]
    for j in range(N):
        ary[j] = sm[N - 1 - j] + lm[j]


@pytest.mark.parametrize("target", ["cpu", "python"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_shared_and_local_arrays_of_an_arguments_dtype(target, dtype, rng):
    a = rng.integers(0, 100, N).astype(dtype)
    want = a[::-1] + 2 * a
    getattr(k_dtype_of_argument, target)[1, 1](a)
    np.testing.assert_array_equal(a, want)
    assert a.dtype == dtype


def test_shared_array_of_an_arguments_dtype_compiles_for_cuda():
    assert ".shared" in k_dtype_of_argument.inspect_ptx("void(float32[:])", cc=(9, 0))


@xpu.jit
def k_view_in_statement(out, v):
    f32_arr = cuda.shared.array(0, dtype=np.float32)
    i32_arr = cuda.shared.array(0, dtype=np.int32)[1:]
    b = cuda.shared.array(0, dtype=np.uint8).view(np.int16)
    f32_arr[0] = v[0]
    i32_arr[0] = 7
    out[0] = f32_arr[0]
    out[1] = i32_arr[0]
    out[2] = b[2]


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_view_of_dynamic_shared_memory_made_in_its_statement(target, rng):
    # numba-cuda's docs/source/user/memory.rst, f_with_view
    v = rng.random(1).astype(np.float32)
    out = np.full(3, np.nan)
    getattr(k_view_in_statement, target)[1, 1, 0, 8](out, v)
    np.testing.assert_array_equal(out, [v[0], 7, 7])


def _f10(r, x, y):
    r[0] = x / y


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_fastmath_debug_division_by_zero_does_not_raise(target):
    # numba-cuda's test_fastmath.py test_divf_exception
    fast = xpu.jit((float32[::1], float32, float32), fastmath=True, debug=True)(_f10)
    precise = xpu.jit((float32[::1], float32, float32), debug=True)(_f10)
    r = np.full(10, np.nan, np.float32)
    getattr(fast, target)[1, 10](r, 10.0, 0.0)
    assert r[0] == np.inf
    with pytest.raises(ZeroDivisionError):
        getattr(precise, target)[1, 10](r, 10.0, 0.0)


@pytest.mark.slow
def test_launch_bounds_are_checked_as_numba_cuda_checks_them(rng):
    from numquad import NumquadLaunchError

    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = i

    with pytest.raises(ValueError, match="Got 4 launch bounds"):
        xpu.jit(launch_bounds=(128, 2, 4, 8))(k)
    kern = xpu.jit(launch_bounds=(128, 2))(k)
    out = np.full(256, -7, np.int64)
    kern.cpu[2, 128](out)
    np.testing.assert_array_equal(out, np.arange(256))
    with pytest.raises(NumquadLaunchError, match="launch_bounds allow at most 128"):
        kern.cpu[1, 256](out)


def test_numba_cuda_kernel_options_reach_numba_cuda():
    """launch_bounds, lineinfo, opt, max_registers and shared_memory_carveout go on to
    numba.cuda's cuda.jit (the CUDA target ignored them; shared_memory_carveout was a
    TypeError: a probe of ported numba-cuda code, twenty-sixth session)."""
    from numba import types

    def k(x, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[i] * 2

    sig = (types.float32[::1], types.float32[::1])
    bounded = xpu.jit(launch_bounds=96, max_registers=32, shared_memory_carveout="MaxShared")(k)
    assert bounded.cuda_options == {"launch_bounds": 96, "max_registers": 32, "shared_memory_carveout": "MaxShared"}
    assert ".maxntid 96, 1, 1" in bounded.inspect_ptx(sig)
    assert ".maxntid" not in xpu.jit(k).inspect_ptx(sig)
    x = np.random.default_rng(4).random(96).astype(np.float32)
    out = np.full(96, np.nan, np.float32)
    bounded.cpu[1, 96](x, out)
    np.testing.assert_array_equal(out, x * 2)
