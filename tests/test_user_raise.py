"""A user's exception raised in a kernel names the raising thread, as numba.cuda does
with debug=True: ``In function 'k', file F, line N, tid=[z, y, x] ctaid=[z, y, x]: msg``
(numquad/_userraise.py). The thread is found from random data, and checked
against NumPy's first element over the threshold."""

import os

import numpy as np
import pytest
from numba import cuda

from numquad import Wave, xpu

HERE = os.path.abspath(__file__)


class Plain(Exception):
    pass


class OwnInit(Exception):
    def __init__(self, what):
        super().__init__(what)


def _line(fn, text):
    """The line of *text* in function *fn*'s source."""
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, s in enumerate(lines) if text in s)


@xpu.jit
def k_1d(x, limit):
    i = xpu.grid(1)
    s = Wave.reduceSum(x[i])
    if x[i] > limit:
        raise Plain("over", x[i], s)


@xpu.jit
def k_2d(x):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    cuda.syncthreads()
    if x[cuda.blockIdx.y, cuda.blockIdx.x, ty, tx] != 0:
        raise ValueError


@xpu.jit
def lane_checked(v):
    if v < 0:
        raise ArithmeticError("negative", v)
    return v + Wave.prefixSum(v)


@xpu.jit
def k_calls_lane(x, out):
    i = xpu.grid(1)
    out[i] = lane_checked(x[i])


@xpu.jit
def k_own_init(x):
    i = xpu.grid(1)
    if x[i] > 0:
        raise OwnInit("kept")


def _targets():
    return ["cpu", "python"]


@pytest.mark.parametrize("target", _targets())
@pytest.mark.parametrize("debug", [False, True])
def test_the_raising_thread_and_line_prefix_the_message(target, debug):
    rng = np.random.default_rng(11 + debug)
    k = xpu.jit(debug=True)(k_1d.py_func) if debug else k_1d
    x = rng.integers(0, 900, 256).astype(np.int64)
    hot = int(rng.integers(0, 256))
    x[hot] = 5000
    with pytest.raises(Plain) as e:
        getattr(k, target)[4, 64](x, 4000)
    # x[hot] is the only element over the limit: its block and thread
    sums = x.reshape(-1, 32).sum(axis=1)
    line = _line(k_1d.py_func, "raise Plain")
    want = f"In function 'k_1d', file {HERE}, line {line}, tid=[0, 0, {hot % 64}] ctaid=[0, 0, {hot // 64}]: over"
    assert e.value.args[0] == want
    assert [int(v) for v in e.value.args[1:]] == [5000, int(sums[hot // 32])]
    assert type(e.value) is Plain


@pytest.mark.parametrize("target", _targets())
def test_a_2d_block_names_x_y_z_as_numba_cuda_lists_them(target):
    x = np.zeros((2, 3, 5, 4), np.int32)  # grid (3, 2), block (4, 5)
    rng = np.random.default_rng(5)
    by, bx, ty, tx = (int(rng.integers(0, n)) for n in x.shape)
    x[by, bx, ty, tx] = 1
    with pytest.raises(ValueError) as e:
        getattr(k_2d, target)[(3, 2), (4, 5)](x)
    line = _line(k_2d.py_func, "raise ValueError")
    assert e.value.args == (f"In function 'k_2d', file {HERE}, line {line}, tid=[0, {ty}, {tx}] ctaid=[0, {by}, {bx}]",)


@pytest.mark.parametrize("target", _targets())
def test_a_raise_in_a_lane_function_names_its_line_in_a_kernel_and_the_element_on_arrays(target):
    rng = np.random.default_rng(7)
    x = rng.uniform(0, 10, 96)
    bad = int(rng.integers(0, 96))
    x[bad] = -1.5
    line = _line(lane_checked.py_func, "raise ArithmeticError")
    with pytest.raises(ArithmeticError) as e:
        getattr(k_calls_lane, target)[3, 32](x, np.full(96, np.nan))
    assert e.value.args[0] == (
        f"In function 'lane_checked', file {HERE}, line {line}, "
        f"tid=[0, 0, {bad % 32}] ctaid=[0, 0, {bad // 32}]: negative"
    )
    assert float(e.value.args[1]) == -1.5
    with pytest.raises(ArithmeticError) as e:
        getattr(lane_checked, target)(x)
    assert e.value.args[0].endswith(f"element {bad}: negative") and float(e.value.args[1]) == -1.5


@pytest.mark.parametrize("target", _targets())
def test_a_class_with_its_own_init_is_raised_as_it_is(target):
    # its __init__ takes one argument: the thread cannot be passed through it
    x = np.zeros(32, np.int64)
    x[np.random.default_rng(3).integers(0, 32)] = 4
    with pytest.raises(OwnInit) as e:
        getattr(k_own_init, target)[1, 32](x)
    assert e.value.args == ("kept",)


@pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU")
def test_cuda_debug_gives_the_same_message_as_the_cpu():
    k = xpu.jit(debug=True, opt=False)(k_2d.py_func)
    x = np.zeros((2, 3, 5, 4), np.int32)
    x[1, 2, 3, 1] = 1
    msgs = []
    for target in ("cpu", "cuda"):
        with pytest.raises(ValueError) as e:
            getattr(k, target)[(3, 2), (4, 5)](x if target == "cpu" else cuda.to_device(x))
        msgs.append(e.value.args)
    assert msgs[0] == msgs[1]


@xpu.jit
def k_assert(x):
    i = xpu.grid(1)
    assert x[i] < 50, "too big"
    assert x[i] > -5


@pytest.mark.parametrize("target", _targets())
def test_a_failed_assert_names_the_thread_too(target):
    rng = np.random.default_rng(17)
    x = rng.integers(0, 50, 64)
    hot = int(rng.integers(0, 64))
    x[hot] = 77
    with pytest.raises(AssertionError) as e:
        getattr(k_assert, target)[2, 32](x)
    line = _line(k_assert.py_func, "too big")
    assert e.value.args == (
        f"In function 'k_assert', file {HERE}, line {line}, tid=[0, 0, {hot % 32}] ctaid=[0, 0, {hot // 32}]: too big",
    )
    x[hot] = -9
    with pytest.raises(AssertionError) as e:
        getattr(k_assert, target)[2, 32](x)
    assert e.value.args == (
        f"In function 'k_assert', file {HERE}, line {line + 1}, tid=[0, 0, {hot % 32}] ctaid=[0, 0, {hot // 32}]",
    )


@xpu.jit
def k_system_exit(x):
    i = xpu.grid(1)
    if x[i] > 0:
        raise SystemExit("stop", i)


@pytest.mark.parametrize("target", _targets())
def test_a_base_exception_that_is_not_an_exception_is_raised_as_it_is(target):
    # (its thread's ids leaked into its arguments: the launch rebuilds only Exceptions)
    x = np.zeros(32, np.int64)
    x[9] = 1
    with pytest.raises(SystemExit) as e:
        getattr(k_system_exit, target)[1, 32](x)
    assert [e.value.args[0], int(e.value.args[1])] == ["stop", 9]
