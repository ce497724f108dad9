"""CUDA target errors, without a GPU: typing errors name the op, the type it got,
the types it takes and the user's file and line; bad launches fail before any GPU work."""

import inspect
import os

import numpy as np
import pytest

pytest.importorskip("numba_cuda")  # the numba-cuda package (numba.cuda alone may be a shim)

from numba.cuda import types  # noqa: E402

from numquad import (  # noqa: E402
    NumquadCompileError,
    NumquadLaunchError,
    NumquadTypeError,
    Quad,
    Wave,
    xpu,
)

HERE = os.path.basename(__file__)
VALUE_WORDS = "it takes a bool, int8..int64, uint8..uint64, float32 or float64 scalar"
PRED_WORDS = "it takes a bool or integer scalar (nonzero is true)"


def line_of(fn, text):
    """The file line number of the first line of *fn* containing *text*."""
    lines, start = inspect.getsourcelines(fn.py_func)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(f"{text!r} not in {fn.__name__}")


@xpu.jit
def swap_array(src, dst):
    i = xpu.grid(1)
    dst[i] = Quad.swapHorizontal(src)


@xpu.jit
def swap_tuple(src, dst):
    i = xpu.grid(1)
    dst[i] = Quad.swapHorizontal((src[i], src[i]))[0]


@xpu.jit
def swap_value(src, dst):
    i = xpu.grid(1)
    dst[i] = Quad.swapHorizontal(src[i])


@xpu.jit
def ballot_value(src, dst):
    i = xpu.grid(1)
    dst[i] = Wave.ballot(src[i])


@xpu.jit
def broadcast_5(src, dst):
    i = xpu.grid(1)
    dst[i] = Quad.broadcast(src[i], 5)


@xpu.jit
def broadcast_float_index(src, dst):
    i = xpu.grid(1)
    dst[i] = Quad.broadcast(src[i], src[i])


f32 = types.float32[::1]
c64 = types.complex64[::1]


def _check(err, fn, call, *words):
    msg = str(err.value)
    assert HERE in msg, msg
    assert f"line {line_of(fn, call)}" in msg, msg
    for w in words:
        assert w in msg, msg


def test_array_operand():
    with pytest.raises(NumquadTypeError) as err:
        swap_array.inspect_ptx((f32, f32))
    _check(
        err,
        swap_array,
        "Quad.swapHorizontal(src)",
        "Quad.swapHorizontal(value)",
        "got array(float32, 1d, C)",
        VALUE_WORDS,
    )


def test_tuple_operand():
    with pytest.raises(NumquadTypeError) as err:
        swap_tuple.inspect_ptx((f32, f32))
    _check(
        err, swap_tuple, "Quad.swapHorizontal(", "Quad.swapHorizontal(value)", "got UniTuple(float32 x 2)", VALUE_WORDS
    )


def test_complex_operand():
    with pytest.raises(NumquadTypeError) as err:
        swap_value.inspect_ptx((c64, c64))
    _check(err, swap_value, "Quad.swapHorizontal(", "Quad.swapHorizontal(value)", "got complex64", VALUE_WORDS)


def test_float_predicate():
    with pytest.raises(NumquadTypeError) as err:
        ballot_value.inspect_ptx((f32, types.uint32[::1]))
    _check(err, ballot_value, "Wave.ballot(", "Wave.ballot(pred)", "got float32", PRED_WORDS)


def test_constant_index_out_of_range():
    with pytest.raises(NumquadCompileError) as err:
        broadcast_5.inspect_ptx((f32, f32))
    _check(err, broadcast_5, "Quad.broadcast(", "Quad.broadcast", "constant index 5", "it takes 0..3", "broadcast_5")
    assert err.value.filename.endswith(HERE)
    assert err.value.lineno == line_of(broadcast_5, "Quad.broadcast(")


def test_constant_error_survives_a_cached_runtime_signature():
    """A runtime index typed first must not make a later bad constant compile as runtime."""

    @xpu.jit
    def runtime_index(src, idx, dst):
        i = xpu.grid(1)
        dst[i] = Quad.broadcast(src[i], idx[i])

    runtime_index.inspect_ptx((f32, types.int64[::1], f32))
    with pytest.raises(NumquadCompileError):
        broadcast_5.inspect_ptx((types.float64[::1], types.float64[::1]))


def test_float_selector():
    with pytest.raises(NumquadTypeError) as err:
        broadcast_float_index.inspect_ptx((f32, f32))
    _check(
        err,
        broadcast_float_index,
        "Quad.broadcast(",
        "Quad.broadcast(value, index)",
        "argument 'index' got float32",
        "integer",
    )


def test_error_in_a_lane_function_points_at_its_line():
    @xpu.jit
    def lane(x):
        return Wave.ballot(x)

    @xpu.jit
    def k(src, dst):
        i = xpu.grid(1)
        dst[i] = lane(src[i])

    with pytest.raises(NumquadTypeError) as err:
        k.inspect_ptx((f32, f32))
    _check(err, lane, "Wave.ballot(", "Wave.ballot(pred)", "got float32")


# ---------------------------------------------------------------------------
# Launch configuration: rejected before any GPU work (CI has no GPU)
# ---------------------------------------------------------------------------


@xpu.jit
def copy(src, dst):
    i = xpu.grid(1)
    dst[i] = src[i]


@pytest.mark.parametrize(
    "griddim,blockdim,exc",
    [
        (1, 0, ValueError),
        (1, (0, 1), ValueError),
        (1, 1025, ValueError),
        (1, (32, 32, 2), ValueError),
        (1, (1, 1, 1, 1), ValueError),
        ((1, 1, 1, 1), 32, ValueError),
        (1, 32.0, TypeError),
        (1, "32", TypeError),
    ],
)
def test_bad_launch_configuration(griddim, blockdim, exc):
    a = np.zeros(4, np.float32)
    with pytest.raises(exc) as err:
        copy.cuda[griddim, blockdim](a, a)
    assert "CUDA" not in type(err.value).__name__
    assert "launch of copy" in str(err.value)


def test_kernel_called_without_configuration():
    with pytest.raises(TypeError) as err:
        copy.cuda(np.zeros(4), np.zeros(4))
    assert "copy[griddim, blockdim]" in str(err.value)


# ---------------------------------------------------------------------------
# Lane functions on arrays: argument checks before any GPU work
# ---------------------------------------------------------------------------


class FakeDeviceArray:
    """Only a __cuda_array_interface__: enough for the checks that precede GPU work."""

    def __init__(self, shape, dtype=np.float32, strides=None):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": np.dtype(dtype).str,
            "data": (0, False),
            "strides": strides,
            "version": 3,
        }


@xpu.jit
def scale(x, y):
    return x * y + Quad.swapVertical(x)


@xpu.jit
def pair(x):
    return x, x


def test_lane_call_shapes_must_broadcast():
    with pytest.raises(NumquadLaunchError) as err:  # a ValueError, as NumPy's
        scale.cuda(np.ones(3, np.float32), np.ones(4, np.float32))
    assert "do not broadcast" in str(err.value) and "scale" in str(err.value)


def test_lane_call_device_array_must_have_the_full_shape():
    with pytest.raises(NumquadTypeError) as err:
        scale.cuda(FakeDeviceArray((3,)), np.ones((2, 3), np.float32))
    assert "full broadcast shape (2, 3)" in str(err.value)
    with pytest.raises(NumquadTypeError) as err:
        scale.cuda(FakeDeviceArray((2, 3), strides=(4, 8)), np.ones((2, 3), np.float32))
    assert "C-contiguous" in str(err.value)


def test_lane_call_out_is_checked():
    x = np.ones(3, np.float32)
    with pytest.raises(NumquadTypeError) as err:
        scale.cuda(x, 2.0, out=np.empty(3, np.float64))  # 2.0 is weak: float32
    assert "out= has dtype float64" in str(err.value) and "returns float32" in str(err.value)
    with pytest.raises(NumquadLaunchError) as err:
        scale.cuda(x, np.float32(2), out=FakeDeviceArray((4,)))
    assert "out= has shape (4,)" in str(err.value) and "gives shape (3,)" in str(err.value)
    with pytest.raises(NumquadTypeError) as err:
        scale.cuda(x, np.float32(2), out=[0.0, 0.0, 0.0])
    assert "out= of scale is a list" in str(err.value)


@xpu.jit
def second(x, y):
    return y


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_lane_call_plan_is_the_same_on_both_targets(target):
    """One rule (numquad/_lanecall.py), one error, both targets: checked before GPU work."""
    x = np.ones(3, np.float32)
    cases = [
        ((x, 2.0), "float32"),  # a Python float is weak
        ((x, np.float64(2)), "float64"),  # a NumPy scalar is not
        ((x.astype(np.int16), 3), "int16"),  # a Python int takes the ints' type
        ((x, 3), "int64"),  # ... and stays an int
        ((x.astype(np.int16), True), "bool"),  # a Python bool stays a bool
    ]
    for args, dtype in cases:
        out = np.empty(3, np.complex64)  # never the right dtype
        with pytest.raises(NumquadTypeError) as err:
            getattr(second, target)(*args, out=out)
        assert f"second(...) returns {dtype} here" in str(err.value), (args, str(err.value))
        assert HERE in str(err.value)
    call = getattr(scale, target)
    with pytest.raises(NumquadLaunchError) as err:
        call(x, np.float32(2), out=np.empty(4, np.float32))
    assert "out= has shape (4,); scale(...) gives shape (3,)" in str(err.value)
    with pytest.raises(NumquadLaunchError) as err:
        call(np.ones(3, np.float32), np.ones(4, np.float32))
    assert "do not broadcast" in str(err.value)
    with pytest.raises(NumquadTypeError) as err:
        call(np.ones(3, np.int8), 300)
    assert "Python int 300, which int8 cannot hold" in str(err.value)
    with pytest.raises(NumquadTypeError) as err:
        call(x)
    assert "scale(x, y) takes 2 arguments; got 1" in str(err.value)
    with pytest.raises(NumquadLaunchError) as err:
        call(x, np.float32(2), out=_read_only(np.empty(3, np.float32)))
    assert "out= is read-only" in str(err.value)


def _read_only(a):
    a.flags.writeable = False
    return a


def test_lane_call_needs_a_scalar_result():
    with pytest.raises(NumquadTypeError) as err:
        pair.cuda(np.ones(3, np.float32))
    assert "must return a bool, integer or float scalar" in str(err.value)
