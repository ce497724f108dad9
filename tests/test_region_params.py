"""An array parameter that the kernel reassigns (``a = a[1:]``, ``arr =
arr.reshape(6)``), lane by lane, where no cross-lane op or divergent branch
separates its stores from its loads: each lane starts again from the argument, as
each GPU thread does (cpu/codegen.py, ``region_params``). Expected values from NumPy,
outputs poisoned, random inputs."""

import numpy as np
import pytest

from numquad import Wave, xpu


@xpu.jit
def k_choose_view(out, a, n):
    i = xpu.grid(1)
    if i % 3 == 0:
        a = a[1:]
    elif i % 3 == 1:
        a = a[::2]
    out[i] = a[i % 5] * 10 + n


@xpu.jit
def k_loop_view(out, a):
    i = xpu.grid(1)
    for _ in range(i % 4):
        a = a[1:]
    out[i] = a[0] - a[1]


@xpu.jit
def k_reshape(out, a):
    i = xpu.grid(1)
    for _ in range(1):
        a = a.reshape(a.size)
        a = a.reshape(3, a.size // 3)
    out[i] = a[i % 3, i % 2]


@xpu.jit
def k_op_between(out, a):
    i = xpu.grid(1)
    if i % 2 == 0:
        a = a[1:]
    s = Wave.reduceSum(np.int64(i))
    out[i] = a[0] + s


@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
def test_each_lane_starts_from_the_argument(target):
    rng = np.random.default_rng(23)
    a = rng.integers(-1000, 1000, 60)
    n = int(rng.integers(0, 50))
    idx = np.arange(70)
    want1 = np.where(idx % 3 == 0, a[1:][idx % 5], np.where(idx % 3 == 1, a[::2][idx % 5], a[idx % 5])) * 10 + n
    want2 = a[idx % 4] - a[idx % 4 + 1]
    b = rng.standard_normal((3, 4))      # (a loop's entry and exit types must unify, as in Numba)
    want3 = b[idx % 3, idx % 2]
    for k, args, want in ((k_choose_view, (a, n), want1), (k_loop_view, (a,), want2), (k_reshape, (b,), want3)):
        if target == "cpu-debug":
            k = xpu.jit(debug=True)(k.py_func)
        out = np.full(70, -7777, want.dtype)
        getattr(k, "cpu" if target.startswith("cpu") else target)[2, 35](out, *args)
        np.testing.assert_array_equal(out, want)


def test_a_view_kept_across_an_op_is_still_refused_in_one_line():
    from numquad import NumquadCompileError
    with pytest.raises(NumquadCompileError, match="a .array.int64, 1d, C.. is an array that differs from lane to lane"):
        k_op_between.cpu[1, 32](np.zeros(32, np.int64), np.arange(40))
