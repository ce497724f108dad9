"""What a probe of device functions found (twenty-fifth session): a numba.cuda device
function compiled once (not ``inline="always"``) shares its shared arrays between
calls, as numba.cuda does; but numba.cuda compiles it once per literal argument, so a
shared array whose shape is a parameter is one array per shape. The CPU target gave
every call the array of the last shape: a wrong ``.size``, or a false bounds error.
Expected values come from the shapes the calls pass."""

import numba
import numpy as np
import pytest
from numba import cuda

from numquad import xpu


@cuda.jit(device=True)
def count_slots(n):
    sm = cuda.shared.array(n, numba.int32)
    return sm.size


@cuda.jit(device=True)
def tile(rows, cols, out, col):
    sm = cuda.shared.array((rows, cols), numba.int32)
    if cuda.threadIdx.x == 0:
        for r in range(rows):
            for c in range(cols):
                sm[r, c] = r * 10 + c
    cuda.syncthreads()
    out[cuda.threadIdx.x, col] = sm.shape[0] * 100 + sm.shape[1] + sm[rows - 1, cols - 1] * 1000
    cuda.syncthreads()


@xpu.jit
def k_sizes(out):
    i = cuda.grid(1)
    out[i, 0] = count_slots(4)
    out[i, 1] = count_slots(9)
    out[i, 2] = count_slots(4)


@xpu.jit
def k_tiles(out):
    tile(2, 3, out, 0)
    tile(3, 2, out, 1)


@pytest.mark.slow
def test_a_shared_array_shaped_by_a_parameter_is_one_per_shape():
    # (the python target refuses a shape parameter: docs/RELIABILITY.md, left)
    out = np.full((64, 3), -1, np.int64)
    k_sizes.cpu[2, 32](out)
    np.testing.assert_array_equal(out, np.tile([4, 9, 4], (64, 1)))


@pytest.mark.slow
def test_a_shared_tile_shaped_by_parameters_has_its_calls_shape():
    out = np.full((32, 2), -1, np.int64)
    k_tiles.cpu[1, 32](out)
    np.testing.assert_array_equal(out, np.tile([12 * 1000 + 203, 21 * 1000 + 302], (32, 1)))


@cuda.jit("int32(int32)", device=True)
def _sig1(v):
    return v + 1


@xpu.jit
def _k_sig_mismatch(a, out):
    i = cuda.grid(1)
    out[i] = _sig1(a)


def test_a_device_function_given_the_wrong_types_is_named():
    """The message named numquad's wrapper, ``type(_ScalarDispatcher(<function _sig1
    at 0x...>))``."""
    from numquad import NumquadTypeError

    with pytest.raises(NumquadTypeError) as e:
        _k_sig_mismatch.cpu[1, 32](np.zeros(32, np.int32), np.zeros(32, np.int32))
    msg = str(e.value)
    assert "the device function _sig1 with parameters (array(int32, 1d, C))" in msg, msg
    assert "_ScalarDispatcher" not in msg and f'File "{__file__}", line' in msg


@cuda.jit(device=True)
def _rev(a, t):
    la = cuda.local.array(2, dtype=a.dtype)
    la[0] = a[t]
    la[1] = a[63 - t]
    return la[1]


@xpu.jit
def _stage(a, t):
    sm = cuda.shared.array(64, dtype=a.dtype)
    sm[t] = a[t]
    cuda.syncthreads()
    return sm[63 - t]


@xpu.jit
def _k_dtype_of_an_argument(a, o, p):
    t = cuda.threadIdx.x
    o[t] = _rev(a, t)
    p[t] = _stage(a, t)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint8])
def test_a_device_functions_array_takes_the_dtype_of_its_argument(dtype, rng):
    """``cuda.local.array(2, dtype=a.dtype)`` inside a device function: numba.cuda
    types ``a.dtype`` of an array argument; the CPU target refused it ("unsupported
    dtype a.dtype"), where the kernel's own body took it."""
    a = rng.integers(0, 100, 64).astype(dtype)
    o = np.full(64, 7, dtype)
    p = np.full(64, 7, dtype)
    _k_dtype_of_an_argument.cpu[1, 64](a, o, p)
    np.testing.assert_array_equal(o, a[::-1])
    np.testing.assert_array_equal(p, a[::-1])


@cuda.jit(device=True)
def _plus1(v):
    return v + 1


@cuda.jit(device=True)
def _times2(v):
    return v * 2


_FUNCS = (_plus1, _times2)


@xpu.jit
def _k_unroll_functions(x, o):
    i = cuda.grid(1)
    if i < x.size:
        acc = 0
        for f in numba.literal_unroll(_FUNCS):
            acc = acc * 1000 + f(x[i])
        o[i] = acc


@xpu.jit
def _k_index_functions(x, o):
    i = cuda.grid(1)
    if i < x.size:
        o[i] = _FUNCS[0](x[i]) * 1000 + _FUNCS[1](x[i])


@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaExperimentalFeatureWarning")
@pytest.mark.parametrize("k", [_k_unroll_functions, _k_index_functions])
def test_device_functions_in_a_tuple(k, rng):
    """A tuple of numba.cuda device functions (``literal_unroll(FUNCS)``, ``FUNCS[0]``)
    failed on the CPU target with numba-cuda's "no GPU" error: Numba's CPU typing
    compiled numba.cuda's own dispatchers, which needs a driver."""
    x = rng.integers(-100, 100, 40)
    o = np.full(40, -1, np.int64)
    k.cpu[1, 64](x, o)
    np.testing.assert_array_equal(o, (x + 1) * 1000 + 2 * x)
