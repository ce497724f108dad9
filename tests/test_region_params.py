"""An array parameter that the kernel reassigns (``a = a[1:]``, ``arr =
arr.reshape(6)``), lane by lane, where no cross-lane op or divergent branch
separates its stores from its loads: each lane starts again from the argument, as
each GPU thread does (cpu/codegen.py, ``region_params``). Expected values from NumPy,
outputs poisoned, random inputs."""

import numpy as np
import pytest
from numba import cuda

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


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
def test_each_lane_starts_from_the_argument(target):
    rng = np.random.default_rng(23)
    a = rng.integers(-1000, 1000, 60)
    n = int(rng.integers(0, 50))
    idx = np.arange(70)
    want1 = np.where(idx % 3 == 0, a[1:][idx % 5], np.where(idx % 3 == 1, a[::2][idx % 5], a[idx % 5])) * 10 + n
    want2 = a[idx % 4] - a[idx % 4 + 1]
    b = rng.standard_normal((3, 4))  # (a loop's entry and exit types must unify, as in Numba)
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


# -- a value the same in every lane, read and then assigned lane by lane in one
# region (a probe of this session's changes found these silently wrong: each lane ran
# on from the value the lane before left, so every other lane swapped back) --------


@xpu.jit
def k_swap_params(a, b, out):
    i = xpu.grid(1)
    a, b = b, a
    out[i] = a[i % a.size] * 1000 + b[i % b.size]


@xpu.jit
def k_swap_locals(a, b, out):
    i = xpu.grid(1)
    c = a
    d = b
    c, d = d, c
    out[i] = c[i % c.size] * 1000 + d[i % d.size]


@xpu.jit
def k_ping_pong(src, dst, iters):
    i = xpu.grid(1)
    for _ in range(iters):
        dst[i] = src[i] * 2 + 1
        cuda.syncthreads()
        src, dst = dst, src


@xpu.jit
def k_other_param_under_a_branch(a, b, out):
    i = xpu.grid(1)
    if i % 2:
        a = b
    out[i] = a[i] * 10
    a[i] = -a[i]


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
def test_a_value_the_same_in_every_lane_starts_each_lane_from_its_entry_value(target):
    rng = np.random.default_rng(29)

    def run(k, *args, grid=(2, 40)):
        if target == "cpu-debug":
            k = xpu.jit(debug=True)(k.py_func)
        getattr(k, "cpu" if target.startswith("cpu") else target)[grid](*args)

    n = 80
    idx = np.arange(n)
    a, b = rng.integers(-99, 99, 7), rng.integers(-99, 99, 5)
    for k in (k_swap_params, k_swap_locals):
        out = np.full(n, -123456)
        run(k, a, b, out)
        np.testing.assert_array_equal(out, b[idx % 5] * 1000 + a[idx % 7])
    for iters in (1, 2, 3):
        src0 = rng.integers(-1000, 1000, 64)
        src, dst = src0.copy(), np.full(64, -5)
        run(k_ping_pong, src, dst, iters, grid=(1, 64))
        s, d = src0.copy(), np.full(64, -5)
        for _ in range(iters):  # the model: whole-array steps, swapped names
            d[:] = s * 2 + 1
            s, d = d, s
        # after the loop the kernel's src names the array that s names here
        np.testing.assert_array_equal(src if iters % 2 == 0 else dst, s)
        np.testing.assert_array_equal(dst if iters % 2 == 0 else src, d)
    a, b = rng.integers(-99, 99, n).astype(np.int64), rng.integers(-99, 99, n).astype(np.int64)
    a0, b0 = a.copy(), b.copy()
    out = np.full(n, -123456)
    run(k_other_param_under_a_branch, a, b, out)
    odd = idx % 2 == 1
    np.testing.assert_array_equal(out, np.where(odd, b0, a0) * 10)
    np.testing.assert_array_equal(a, np.where(odd, a0, -a0))
    np.testing.assert_array_equal(b, np.where(odd, -b0, b0))
