"""A variable read by a thread that never assigned it reads 0 of its type.

Numba does not raise Python's UnboundLocalError: a variable no assignment reached
is its ``undef``, lowered as a null constant (0, 0.0, False, a tuple of zeros), in
numba.cuda's lowering as in Numba's. So ``if i < n: v = x[i]`` then
``Wave.reduceSum(v)`` sums 0 for the lanes past ``n`` on the GPU. The CPU target kept
such a variable in a lane array (or a block-function local) that still held another
thread's value: the lanes past ``n`` added another wave's elements, without an error.
Each thread now starts with those variables at 0 (cpu/codegen.py
``_undefined_is_zero``), and each call of a device function numba.cuda compiles
once with its locals at 0 (cpu/inline.py, ``_inline_call``); an inlined function
keeps its local from the call before, as Numba's IR inlining gives on the GPU.
Expected values: NumPy, with ops.py's reference for the ops, on random inputs with
poisoned outputs. The python target raises Python's
UnboundLocalError instead (docs/semantics.md).
"""

import numpy as np
import pytest
from numba import cuda

from numquad import Wave, ops, xpu

R = {q: op.reference for q, op in ops.OPS.items()}
W = 32


def _per_wave(op, v, active=None):
    v = np.asarray(v).reshape(-1, W)
    act = np.ones(v.shape, bool) if active is None else np.asarray(active).reshape(-1, W)
    return R[op](v, active=act).ravel()


@pytest.fixture(params=["release", "debug"])
def build(request):
    return request.param


def _jit(fn, build):
    return xpu.jit(debug=True)(fn) if build == "debug" else xpu.jit(fn)


def partial_reduce(x, out, n):
    i = cuda.grid(1)
    if i < n:
        v = x[i]
    out[i] = Wave.reduceSum(v)


def partial_no_op(x, out, t):
    i = cuda.grid(1)
    if x[i] > t:
        v = x[i] * 2
    out[i] = v


def block_uniform(x, out):
    i = cuda.grid(1)
    if cuda.blockIdx.x == 0:
        t = 1.5
    s = Wave.reduceSum(x[i])
    out[i] = t + s


def block_uniform_no_op(x, out):
    i = cuda.grid(1)
    if cuda.blockIdx.x == 0:
        t = 1.5
    out[i] = t + x[i]


def across_a_barrier(x, out, t):
    i = cuda.grid(1)
    sm = cuda.shared.array(64, np.float64)
    if x[i] > t:
        v = x[i]
    sm[cuda.threadIdx.x] = x[i]
    cuda.syncthreads()
    out[i] = v + sm[63 - cuda.threadIdx.x]


def bool_and_tuple(x, out, t):
    i = cuda.grid(1)
    if x[i] > t:
        b = x[i] > 2 * t
        p = (x[i], np.int64(i))
    w = Wave.ballot(b)
    out[i] = p[0] + p[1] + w


def loop_that_may_not_run(x, m, out):
    i = cuda.grid(1)
    for j in range(m[i]):
        last = x[i] + j
    out[i] = last + Wave.prefixSum(x[i])


@xpu.jit
def _maybe(v, c):
    if c:
        t = v
    return t + Wave.reduceSum(v)


def inlined_callee_in_a_loop(x, out):
    i = cuda.grid(1)
    acc = np.int64(0)
    for j in range(3):
        acc += _maybe(x[i], j == 0)
    out[i] = acc


@cuda.jit(device=True)
def _maybe_device(v, c):
    if c:
        t = v
    return t + cuda.shfl_xor_sync(0xFFFFFFFF, v, 1)


def device_function_in_a_loop(x, out):
    i = cuda.grid(1)
    acc = np.int64(0)
    for j in range(3):
        acc += _maybe_device(x[i], j == 0)
    out[i] = acc


def test_a_lane_that_did_not_assign_adds_zero_to_a_reduction(target, build, rng):
    x = rng.integers(-1000, 1000, 128).astype(np.int64)
    n = int(rng.integers(40, 100))
    out = np.full(128, -777, np.int64)
    getattr(_jit(partial_reduce, build), target)[2, 64](x, out, n)
    np.testing.assert_array_equal(out, _per_wave("Wave.reduceSum", np.where(np.arange(128) < n, x, 0)))


def test_an_unassigned_variable_is_zero_without_an_op(target, build, rng):
    x = rng.random(128).astype(np.float32)
    out = np.full(128, np.nan, np.float32)
    getattr(_jit(partial_no_op, build), target)[4, 32](x, out, np.float32(0.5))
    np.testing.assert_array_equal(out, np.where(x > 0.5, x * np.float32(2), np.float32(0)))


@pytest.mark.parametrize("fn", [block_uniform, block_uniform_no_op])
def test_a_uniform_variable_is_zero_in_the_blocks_that_did_not_assign_it(target, build, fn, rng):
    x = rng.integers(-50, 50, 192).astype(np.float64)  # integers: every sum exact
    out = np.full(192, np.nan)
    getattr(_jit(fn, build), target)[3, 64](x, out)
    t = np.where(np.arange(192) < 64, 1.5, 0.0)
    s = _per_wave("Wave.reduceSum", x) if fn is block_uniform else x
    np.testing.assert_array_equal(out, t + s)


def test_an_unassigned_variable_is_zero_across_a_barrier(target, build, rng):
    x = rng.random(128)
    out = np.full(128, np.nan)
    getattr(_jit(across_a_barrier, build), target)[2, 64](x, out, 0.4)
    sm = x.reshape(2, 64)[:, ::-1].ravel()
    np.testing.assert_array_equal(out, np.where(x > 0.4, x, 0.0) + sm)


def test_an_unassigned_bool_is_false_and_a_tuple_zeros(target, build, rng):
    x = rng.integers(0, 100, 96).astype(np.int64)
    out = np.full(96, -777, np.int64)
    getattr(_jit(bool_and_tuple, build), target)[1, 96](x, out, 40)
    hit = x > 40
    w = _per_wave("Wave.ballot", hit & (x > 80)).astype(np.int64)
    np.testing.assert_array_equal(out, np.where(hit, x + np.arange(96), 0) + w)


def test_a_loop_that_did_not_run_leaves_its_variable_zero(target, build, rng):
    x = rng.integers(-100, 100, 128).astype(np.int64)
    m = rng.integers(0, 3, 128).astype(np.int64)
    out = np.full(128, -777, np.int64)
    getattr(_jit(loop_that_may_not_run, build), target)[2, 64](x, m, out)
    last = np.where(m > 0, x + m - 1, 0)
    np.testing.assert_array_equal(out, last + _per_wave("Wave.prefixSum", x))


def test_each_call_of_a_device_function_starts_with_its_locals_zero(target, build, rng):
    # numba.cuda compiles a @cuda.jit(device=True) function once and calls it: the
    # first call assigns t, the other two read it unassigned (0)
    x = rng.integers(-100, 100, 64).astype(np.int64)
    out = np.full(64, -777, np.int64)
    getattr(_jit(device_function_in_a_loop, build), target)[1, 64](x, out)
    np.testing.assert_array_equal(out, x + 3 * x[np.arange(64) ^ 1])


def test_an_inlined_lane_function_keeps_its_local_from_the_call_before(target, build, rng):
    # an @xpu.jit function is inlined on both targets (on CUDA by Numba's IR inliner,
    # inline="always"), so its t is one variable of the loop: each call reads the
    # value the call before assigned (the H100 gave these bits)
    x = rng.integers(-100, 100, 64).astype(np.int64)
    out = np.full(64, -777, np.int64)
    getattr(_jit(inlined_callee_in_a_loop, build), target)[1, 64](x, out)
    np.testing.assert_array_equal(out, 3 * x + 3 * _per_wave("Wave.reduceSum", x))


def test_the_python_target_names_the_unassigned_variable(rng):
    x = rng.integers(-1000, 1000, 64).astype(np.int64)
    with pytest.raises(UnboundLocalError, match="'v'"):
        xpu.jit(partial_reduce).python[1, 64](x, np.zeros(64, np.int64), 40)


@xpu.jit
def _maybe_plain(v, c):
    if c:
        t = v * 2
    return t + 1


def plain_lane_function_in_a_loop(x, out):
    i = cuda.grid(1)
    acc = np.int64(0)
    for j in range(3):
        acc += _maybe_plain(x[i], j == 0)
    out[i] = acc


def test_a_lane_function_without_ops_keeps_its_local_too(target, build, rng):
    # no cross-lane op, so the CPU target would call it as a function of its own,
    # where each call starts at 0; the CUDA target inlines it in Numba's IR
    # (inline="always"), so the CPU inlines a function that may read a local
    # unassigned: each call reads 2 * x, the value the first call assigned
    x = rng.integers(-100, 100, 64).astype(np.int64)
    out = np.full(64, -777, np.int64)
    getattr(_jit(plain_lane_function_in_a_loop, build), target)[1, 64](x, out)
    np.testing.assert_array_equal(out, 3 * (2 * x + 1))


def uniform_tuple_and_complex(x, out):
    i = cuda.grid(1)
    if cuda.blockIdx.x == 0:
        p = (7, 2.5)
        c = 1.5 + 2j
        s = Wave.reduceSum(x[i])  # noqa: F841 - an op under the branch
    for k in range(2 - cuda.blockIdx.x):
        q = (k + 1, np.float32(0.5))
        s = Wave.reduceSum(x[i])  # noqa: F841 - an op in the loop
    out[i, 0] = p[0] + p[1]
    out[i, 1] = c.imag
    out[i, 2] = q[0] + q[1]


def test_a_uniform_tuple_or_complex_is_zero_in_blocks_that_did_not_assign_it(target, build, rng):
    x = rng.random(96)
    out = np.full((96, 3), np.nan)
    getattr(_jit(uniform_tuple_and_complex, build), target)[3, 32](x, out)
    b = np.arange(96) // 32
    # p is typed (Literal[int](7), float64): Numba reads its literal element as 7
    # where no assignment reached (the H100 gave 7.0 there), its float as 0.0
    want = np.stack(
        [np.where(b == 0, 9.5, 7.0), np.where(b == 0, 2.0, 0.0), np.select([b == 0, b == 1], [2.5, 1.5], 0.0)], axis=1
    )
    np.testing.assert_array_equal(out, want)


def literal_types(x, out):
    i = cuda.grid(1)
    if x[i] > 0.5:
        t = 7
        b = True
        u = 9 + i
    w = Wave.ballot(True)
    out[i, 0] = t + w * 0
    out[i, 1] = b
    out[i, 2] = u


def test_a_variable_typed_as_a_literal_reads_its_literal_where_unassigned(target, build, rng):
    # ``t = 7`` in every assignment: Numba types t Literal[int](7) and reads 7 on every
    # path, as numba.cuda compiles it; ``u = 9 + i`` is an int64, read as 0
    x = rng.random(64)
    out = np.full((64, 3), -777, np.int64)
    getattr(_jit(literal_types, build), target)[2, 32](x, out)
    hit = x > 0.5
    want = np.stack([np.full(64, 7), np.ones(64, np.int64), np.where(hit, 9 + np.arange(64), 0)], axis=1)
    np.testing.assert_array_equal(out, want)


def literal_version_then_float(x, y, o):
    i = cuda.grid(1)
    if y[i] > 0:
        t = -129
    o[i] = x[i] // t  # this version of t is Literal[int](-129)
    t = x[i] * 2.5  # another version, a float64
    o[i] += Wave.reduceSum(t) * 0


def loop_literal(x, n, o):
    i = cuda.grid(1)
    for k in range(n):
        t = 7
    o[i] = x[i] + t  # n == 0: Numba's version is Literal[int](7)
    t = Wave.reduceSum(x[i])


def test_the_literal_of_the_version_a_path_reads_unassigned(target, build, rng):
    # found by a probe's random kernels: the literal was taken only where every
    # version of the variable had it; Numba types each version, and the phi merging
    # the unassigned path is the literal one
    x = (rng.integers(1, 50, 64) * 100 + 1).astype(np.float64)
    y = np.where(np.arange(64) % 2 == 0, 1, -1).astype(np.int32)
    o = np.full(64, np.nan)
    getattr(_jit(literal_version_then_float, build), target)[2, 32](x, y, o)
    np.testing.assert_array_equal(o, x // -129)

    xi = rng.integers(-100, 100, 64).astype(np.int64)
    oi = np.full(64, -777, np.int64)
    getattr(_jit(loop_literal, build), target)[2, 32](xi, 0, oi)
    np.testing.assert_array_equal(oi, xi + 7)
