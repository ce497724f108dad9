"""Regression tests for silent wrong results found by hand-written probe kernels
(docs/semantics.md is the spec).

Each kernel runs on the CPU target (release and debug=True builds) and on the
python target (numquad/simt.py); outputs are poisoned with a sentinel first and
inputs are random. Expected values are computed here with NumPy.
"""

import numpy as np
import pytest
from numba import cuda

from numquad import Wave, xpu

POISON = -7777
RNG = np.random.default_rng(20261202)

TARGETS = [("cpu", False), ("cpu", True), ("python", False)]


def _launch(fn, target, debug, grid, block, *args):
    getattr(xpu.jit(debug=debug)(fn), target)[grid, block](*args)


# -- a parameter the kernel assigns starts from the argument in every wave --------


def k_param_augassign(out, k):
    i = cuda.grid(1)
    k += 1
    out[i] = k + Wave.prefixSum(k)


def k_param_array_view(out, a):
    i = cuda.grid(1)
    a = a[1:]
    s = Wave.reduceSum(1)
    out[i] = a[i % 8] + s


def k_param_across_barrier(out, k):
    i = cuda.grid(1)
    sh = cuda.shared.array(64, np.int64)
    t = cuda.threadIdx.x
    sh[t] = t + k
    k = k * 2
    cuda.syncthreads()
    out[i] = sh[(t + 1) % 64] + k + Wave.reduceSum(k)


@pytest.mark.slow
@pytest.mark.parametrize("target,debug", TARGETS)
def test_a_reassigned_parameter_restarts_from_the_argument_in_every_wave(target, debug):
    # the CPU target kept the first wave's k = k + 1 for the next waves and blocks
    k = int(RNG.integers(-50, 50))
    out = np.full(120, POISON, np.int64)
    _launch(k_param_augassign, target, debug, 3, 40, out, k)
    lane = np.arange(120) % 40 % 32
    np.testing.assert_array_equal(out, (k + 1) + lane * (k + 1))

    a = RNG.integers(-1000, 1000, 10)
    out = np.full(128, POISON, np.int64)
    _launch(k_param_array_view, target, debug, 2, 64, out, a)
    np.testing.assert_array_equal(out, a[1:][np.arange(128) % 8] + 32)

    out = np.full(192, POISON, np.int64)
    _launch(k_param_across_barrier, target, debug, 3, 64, out, k)
    t = np.arange(192) % 64
    np.testing.assert_array_equal(out, (t + 1) % 64 + k + 2 * k + 32 * 2 * k)


# -- a value recomputed from thread ids reads the uniforms it was made with -------


def k_remat_uniform_reassigned(out, k):
    i = cuda.grid(1)
    t = i + k
    k = 5
    s = Wave.reduceSum(k)
    out[i] = t + s


def k_remat_uniform_in_loop(out, k):
    i = cuda.grid(1)
    t = i + k
    s = 0
    for q in range(3):
        k = k + q
        s = Wave.reduceSum(k)
    out[i] = t + s + k


@pytest.mark.slow
@pytest.mark.parametrize("target,debug", TARGETS)
def test_a_value_built_from_thread_ids_keeps_the_uniform_it_was_computed_with(target, debug):
    # t = i + k was recomputed after the op with the new k
    k = int(RNG.integers(-50, 50))
    i = np.arange(64)
    out = np.full(64, POISON, np.int64)
    _launch(k_remat_uniform_reassigned, target, debug, 1, 64, out, k)
    np.testing.assert_array_equal(out, i + k + 32 * 5)

    out = np.full(64, POISON, np.int64)
    _launch(k_remat_uniform_in_loop, target, debug, 1, 64, out, k)
    np.testing.assert_array_equal(out, i + k + 32 * (k + 3) + (k + 3))


def k_view_index_reassigned(out, a, k):
    i = cuda.grid(1)
    row = a[(i % 2) + k, :]
    k = 0
    s = Wave.reduceSum(k)
    out[i] = row[i % 4] + s


def k_view_in_loop_read_later(out, a, n):
    i = cuda.grid(1)
    acc = 0
    have = False
    for j in range(n):
        m = j * 2
        if (i + j) % 3 == 0:
            row = a[i + m, :]
            have = True
        s = Wave.reduceSum(1)
        if have:
            acc += row[0] + s
    out[i] = acc


def k_view_of_loop_variable(out, a, n):
    i = cuda.grid(1)
    acc = 0
    for j in range(n):
        row = a[(i % 2) + j, :]
        j += 1
        s = Wave.reduceSum(j)
        acc += row[i % 4] + s
    out[i] = acc


@pytest.mark.slow
@pytest.mark.parametrize("target,debug", TARGETS)
def test_an_array_view_read_after_an_op_is_the_view_it_was_made_as(target, debug):
    # row = a[i + j, :] was recomputed after the op from the operands' new values
    a = RNG.integers(-1000, 1000, (100, 4))
    i = np.arange(32)
    k = int(RNG.integers(0, 8))
    out = np.full(32, POISON, np.int64)
    _launch(k_view_index_reassigned, target, debug, 1, 32, out, a, k)
    np.testing.assert_array_equal(out, a[i % 2 + k, i % 4])

    n = 4
    want = np.zeros(32, np.int64)
    for lane in range(32):
        row = None
        for j in range(n):
            if (lane + j) % 3 == 0:
                row = a[lane + 2 * j]
            if row is not None:
                want[lane] += row[0] + 32
    out = np.full(32, POISON, np.int64)
    _launch(k_view_in_loop_read_later, target, debug, 1, 32, out, a, n)
    np.testing.assert_array_equal(out, want)

    want = sum(a[i % 2 + j, i % 4] + 32 * (j + 1) for j in range(n))
    out = np.full(32, POISON, np.int64)
    _launch(k_view_of_loop_variable, target, debug, 1, 32, out, a, n)
    np.testing.assert_array_equal(out, want)


# -- after every lane of a wave has left, the rest of the kernel does not run ----


def k_uniform_load_after_return(out, tab, n):
    i = cuda.grid(1)
    if i >= n:
        return
    t = tab[cuda.blockIdx.x * 100000000]
    out[i] = t + Wave.countBits(True)


def k_uniform_load_after_continue(out, tab, n):
    i = cuda.grid(1)
    acc = 0
    for j in range(n):
        if j >= 1:
            if i >= 0:
                continue
        if tab[j * 100000000] > -5000:
            acc += tab[0] + Wave.countBits(True)
    out[i] = acc


@pytest.mark.slow
@pytest.mark.parametrize("target,debug", TARGETS)
def test_uniform_code_after_every_lane_left_does_not_run(target, debug):
    # the CPU target ran t = tab[blockIdx.x * 100000000] in the waves whose lanes had
    # all returned: a segmentation fault in a release build, an IndexError with debug
    tab = RNG.integers(-1000, 1000, 1)
    out = np.full(128, POISON, np.int64)
    _launch(k_uniform_load_after_return, target, debug, 4, 32, out, tab, 32)
    np.testing.assert_array_equal(out, np.r_[np.full(32, tab[0] + 32), np.full(96, POISON)])

    out = np.full(64, POISON, np.int64)
    _launch(k_uniform_load_after_continue, target, debug, 1, 64, out, tab, 5)
    np.testing.assert_array_equal(out, np.full(64, tab[0] + 32))


# -- an op beside a call that writes memory: Python's order, or a refusal -------


@cuda.jit(device=True)
def _bump(buf, i):
    buf[i] += 10
    return buf[i]


@xpu.jit
def _bump_lane(buf, i):
    buf[i] += 100
    return 1


def k_device_write_then_op(out, buf):
    i = cuda.grid(1)
    out[i] = _bump(buf, i) + Wave.reduceSum(buf[i])


def k_lane_write_then_op(out, buf):
    i = cuda.grid(1)
    out[i] = _bump_lane(buf, i) + Wave.prefixSum(buf[i])


def k_atomic_then_op(out, buf):
    i = cuda.grid(1)
    out[i] = cuda.atomic.add(buf, i, 5) + Wave.prefixSum(buf[i])


def k_device_write_then_conditional_op(out, buf):
    i = cuda.grid(1)
    out[i] = _bump(buf, i) + (Wave.reduceSum(buf[i]) if i % 2 == 0 else 0)


def k_write_beside_op_in_order(out, buf, c):
    i = cuda.grid(1)
    # an op whose operands read nothing beside an atomic, an op inside a writing
    # call's arguments, and a write in a statement of its own: accepted
    acc = cuda.atomic.add(c, 0, 1) * 0 + Wave.prefixSum(1)
    cuda.atomic.add(c, 1, Wave.reduceSum(buf[i]))
    x = _bump(buf, i)
    out[i] = x + Wave.reduceSum(buf[i]) + acc


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize(
    "kernel", [k_device_write_then_op, k_lane_write_then_op, k_atomic_then_op, k_device_write_then_conditional_op]
)
def test_an_op_beside_a_call_that_writes_what_it_reads_is_refused_on_the_cpu(kernel, debug):
    # the CPU target ran the op (and its operand buf[i]) before the call: the old
    # buf[i] where Python, the python target and CUDA read the new one
    from numquad.errors import NumquadCompileError

    buf = RNG.integers(-100, 100, 64)
    out = np.full(64, POISON, np.int64)
    with pytest.raises(NumquadCompileError, match="statement (of its own|first)"):
        _launch(kernel, "cpu", debug, 1, 64, out, buf)
    np.testing.assert_array_equal(out, POISON)


@pytest.mark.parametrize("target,debug", TARGETS)
def test_an_op_beside_a_call_that_writes_runs_in_pythons_order(target, debug):
    buf0 = RNG.integers(-100, 100, 64)
    buf, c = buf0.copy(), np.zeros(2, np.int64)
    out = np.full(64, POISON, np.int64)
    _launch(k_write_beside_op_in_order, target, debug, 1, 64, out, buf, c)
    lane = np.arange(64) % 32
    new = buf0 + 10
    sums = np.repeat(new.reshape(2, 32).sum(axis=1), 32)
    np.testing.assert_array_equal(out, new + sums + lane)
    np.testing.assert_array_equal(buf, new)
    np.testing.assert_array_equal(c, [64, 32 * buf0.sum()])
    if target == "python":  # the oracle: the order the CPU target refuses, computed
        buf = buf0.copy()
        out = np.full(64, POISON, np.int64)
        xpu.jit(k_device_write_then_op).python[1, 64](out, buf)
        np.testing.assert_array_equal(out, new + sums)


# -- a view made under a bounds guard is not made in the lanes the guard turns off --


def k_row_view_under_guard(out, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i]
        s = 0.0
        for j in range(row.shape[0]):
            s += row[j]
        out[i] = s


def k_views_under_guard_across_an_op(out, a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i, :]
    if i < a.shape[1]:
        col = a[:, i]
    s = Wave.prefixSum(np.int64(1))
    if i < a.shape[0]:
        out[i, 0] = row[1] + s
    if i < a.shape[1]:
        out[i, 1] = col[2] - s


@pytest.mark.slow
@pytest.mark.parametrize("target,debug", TARGETS)
def test_a_view_under_a_bounds_guard_is_not_checked_where_the_guard_is_false(target, debug):
    """``if i < a.shape[0]: row = a[i]`` with more threads than rows raised a
    NumquadIndexError on the CPU (release and debug): each region that reads a view
    recomputes it, and did so in every lane, the guarded-off ones too (a day-one probe)."""
    a = RNG.standard_normal((20, 7))
    out = np.full(20, float(POISON))
    _launch(k_row_view_under_guard, target, debug, 1, 32, out, a)
    np.testing.assert_array_equal(out, [sum(r) for r in a])  # the kernel's order
    b = RNG.integers(-1000, 1000, (37, 23))
    out = np.full((64, 2), POISON, np.int64)
    _launch(k_views_under_guard_across_an_op, target, debug, 2, 32, out, b)
    s = np.arange(64) % 32 + 0  # prefixSum(1): the lane
    want = np.full((64, 2), POISON, np.int64)
    want[:37, 0] = b[:, 1] + s[:37]
    want[:23, 1] = b[2, :] - s[:23]
    np.testing.assert_array_equal(out, want)


# -- 0-d arrays and a kernel's ``return None`` (a probe of user errors) -------------


def k_zero_d(a, s, total, out):
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return None
    v = a[i] * s[()] + Wave.prefixSum(np.int64(1))
    if i == 0:
        total[()] = s[()] + 1.5
    out[i] = v
    return None


@pytest.mark.parametrize("target,debug", TARGETS)
def test_zero_d_arrays_and_return_none_in_a_kernel(target, debug):
    """``a[()]`` of a 0-d array failed on the CPU with "NameError: name '_nq_lb' is
    not defined" (its load check had no axis to check); ``return None`` in a kernel
    was refused as a value-returning lane function (numba.cuda: void)."""
    a = RNG.standard_normal(40)
    s = np.array(RNG.standard_normal())
    total = np.array(float(POISON))
    out = np.full(40, float(POISON))
    _launch(k_zero_d, target, debug, 2, 32, a, s, total, out)
    np.testing.assert_array_equal(out, a * s + np.arange(40) % 32)
    assert total[()] == s + 1.5


# -- locals named like the builtins generated code calls ------------------------------


def k_shadowing_locals(a, head, out):
    i = cuda.grid(1)
    range = 0.5
    len = np.int64(3)
    bool = a[i % 8]
    acc = 0.0
    for v in head:  # a loop over an array (range(len(head)) inside)
        if i % 3 == 0:  # a masked if with an op inside
            acc += v * Wave.reduceSum(np.int64(1))
    out[i] = acc + range + len + bool + Wave.prefixSum(np.int64(1))


@pytest.mark.slow
@pytest.mark.parametrize("target,debug", TARGETS)
def test_locals_named_range_len_bool(target, debug):
    """A kernel with a local named ``range`` failed on the CPU with Numba's raw
    NotDefinedError naming no line: the generated lane loops call ``range`` (and
    ``len``, ``bool``), which the local shadowed (a probe of user errors)."""
    a = RNG.standard_normal(64)
    out = np.full(64, float(POISON))
    _launch(k_shadowing_locals, target, debug, 2, 32, a, a[:4].copy(), out)
    lane = np.arange(64) % 32
    active = (np.arange(64) % 3 == 0).reshape(2, 32).sum(1).repeat(32)
    acc = np.where(np.arange(64) % 3 == 0, sum(float(v) * active for v in a[:4]), 0.0)
    np.testing.assert_allclose(out, acc + 0.5 + 3 + a[np.arange(64) % 8] + lane, rtol=1e-12)


def test_locals_named_range_len_bool_compile_for_cuda():
    """The CUDA target's masked rewrite (numquad/_control.py) called ``len`` and
    ``bool`` too: "Invalid use of float64 with parameters (bool)" there."""
    ptx = xpu.jit(k_shadowing_locals).inspect_ptx("void(float64[:], float64[:], float64[:])")
    assert "shfl.sync" in ptx or "redux.sync" in ptx


# -- twenty-first session: real numba.cuda code (NVIDIA's Ising example, the DLI course) --


def k_unpacked_shape(a, out):
    n, m = a.shape  # a tuple target in the region that reads it
    tid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = tid // m
    j = tid % m
    if i < n:
        out[i, j] = a[i, j] + 1 + Wave.reduceSum(np.int64(1))


@pytest.mark.slow
@pytest.mark.parametrize("target, debug", TARGETS)
def test_a_value_recomputed_from_a_tuple_unpacked_shape(target, debug):
    """``n, m = a.shape`` then ``i = tid // m``: the value recomputed in each region
    (``i``) was placed at the top of the region that unpacks ``m``: Numba's
    "Variable 'm' is not defined" on a valid kernel (NVIDIA's ising-gpu)."""
    a = RNG.integers(-100, 100, (5, 7))
    out = np.full((5, 7), POISON)
    _launch(k_unpacked_shape, target, debug, 2, 32, a, out)
    want = a + 1 + np.where(np.arange(35).reshape(5, 7) < 32, 32, 3)
    np.testing.assert_array_equal(out, want)


def k_chained_add(a, b, out):
    x, y = cuda.grid(2)
    if y < out.shape[0] and x < out.shape[1]:
        out[y][x] = a[y][x] + b[1][y][x] + a[y][1:][x - 1] + a[y][-1]


def k_chained_store_unguarded(a, out):
    x, y = cuda.grid(2)
    out[y][x] = a[y, x % 6]  # <- chained store


def k_chained_load_unguarded(a, out):
    x, y = cuda.grid(2)
    if y < out.shape[0] and x < out.shape[1]:
        out[y, x] = a[y][x + 1]  # <- chained load


@pytest.mark.slow
@pytest.mark.parametrize("target, debug", TARGETS)
def test_chained_indexing_is_checked_like_a_tuple_index(target, debug):
    """``out[y][x] = v`` and ``a[y][x]`` (the DLI course's matrix kernels): the row's
    index went unchecked in a release build, and a launch rounded up past a row
    wrote into the memory after it (the next columns of a larger buffer)."""
    a, b = RNG.standard_normal((8, 6)), RNG.standard_normal((2, 8, 6))
    out = np.full((8, 6), np.nan)
    _launch(k_chained_add, target, debug, (1, 1), (8, 8), a, b, out)
    shifted = a.copy()
    shifted[:, 0] = a[:, -1]  # a[y][1:][x - 1], x = 0: a[y][-1]
    want = a + b[1] + shifted + a[:, -1:]
    np.testing.assert_array_equal(out, want)
    for fn, marker in ((k_chained_store_unguarded, "<- chained store"), (k_chained_load_unguarded, "<- chained load")):
        buf = np.full((8, 8), -7.0)
        with pytest.raises(IndexError) as e:
            _launch(fn, target, debug, (1, 1), (8, 8), a, buf[:, :6])
        assert (buf[:, 6:] == -7.0).all()  # nothing written past a row
        if target == "cpu":
            line = next(
                n for n, t in enumerate(open(__file__).read().splitlines(), 1) if marker in t and "marker" not in t
            )
            assert f"line {line}" in str(e.value)
            if debug:  # every check raises at once
                assert "index 6 on axis 0 of an array of size 6" in str(e.value), str(e.value)


def k_local_array_twice(x, out):
    tid = cuda.threadIdx.x
    if tid == 0:
        tmp = cuda.local.array(4, dtype=np.uint32)
        for i in range(4):
            tmp[i] = x[i] * np.uint32(2)
        out[0] = tmp[0] + tmp[3]
    if tid < 4:
        tmp = cuda.local.array(4, dtype=np.uint32)  # the same name, shape and dtype
        for i in range(4):
            tmp[i] = x[i] + np.uint32(tid)
        out[tid + 1] = tmp[tid] + Wave.reduceSum(np.uint32(1))


@pytest.mark.slow
@pytest.mark.parametrize("target, debug", TARGETS)
def test_one_name_for_two_local_arrays_of_one_shape(target, debug):
    """A MiMC hashing kernel allocates ``tmp = cuda.local.array(4, uint32)`` in two
    branches: refused on the CPU ("tmp is assigned two arrays"); numba.cuda types the
    name once. The two share the thread's storage, as a loop's allocation does."""
    x = RNG.integers(0, 2**20, 4).astype(np.uint32)
    out = np.full(5, 7777, np.uint32)
    _launch(k_local_array_twice, target, debug, 1, 32, x, out)
    want = np.concatenate([[x[0] * 2 + x[3] * 2], x + np.arange(4, dtype=np.uint32) + 4])
    np.testing.assert_array_equal(out, want.astype(np.uint32))
