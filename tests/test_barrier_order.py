"""A block vote (``cuda.syncthreads_count/_and/_or``) inside a statement, and the
loads Python evaluates before it.

The CPU target runs such a barrier before the rest of its statement, then the
statement lane by lane. A load to its left in Python's order then ran after the
barrier and could read another thread's store made after it: a probe (thirty-
second session) found ``s[t] = s[t ^ 1] + 0 * cuda.syncthreads_count(1)`` giving
``[1, 1, 3, 3, ...]`` where numba.cuda (its PTX loads, then ``bar.red.popc``, then
stores) and the python target give the swap ``[1, 0, 3, 2, ...]``. Such a statement
is refused with one line saying what to write instead; a load after the barrier
in Python's order runs as before. Expected values from NumPy; outputs poisoned.
"""

import numpy as np
import pytest
from numba import cuda, int32

from numquad import NumquadCompileError, xpu


@cuda.jit(device=True)
def _barrier_one():
    cuda.syncthreads()
    return 1


def _swap(out):
    s = cuda.shared.array(32, int32)
    t = cuda.threadIdx.x
    s[t] = t
    cuda.syncthreads()
    s[t] = s[t ^ 1] + 0 * cuda.syncthreads_count(1)
    cuda.syncthreads()
    out[t] = s[t]


def _swap_through_device_function(out):
    s = cuda.shared.array(32, int32)
    t = cuda.threadIdx.x
    s[t] = t
    cuda.syncthreads()
    s[t] = s[t ^ 1] + 0 * _barrier_one()
    cuda.syncthreads()
    out[t] = s[t]


def _or_in_augmented(out):
    s = cuda.shared.array(32, int32)
    t = cuda.threadIdx.x
    s[t] = t
    cuda.syncthreads()
    acc = 0
    acc += s[t ^ 1] * cuda.syncthreads_or(1)
    s[t] = 7
    out[t] = acc


@pytest.mark.parametrize("fn", [_swap, _swap_through_device_function, _or_in_augmented])
def test_a_load_before_a_barrier_in_its_statement_is_refused_on_the_cpu(fn):
    with pytest.raises(NumquadCompileError, match=r"test_barrier_order.py.*runs before the rest of its statement"):
        xpu.jit(fn)[1, 32](np.full(32, -1, np.int32))


def test_the_python_target_swaps():
    out = np.full(32, -1, np.int32)
    xpu.jit(_swap).python[1, 32](out)
    np.testing.assert_array_equal(out, np.arange(32) ^ 1)


@xpu.jit
def _count_then_load(x, out):
    s = cuda.shared.array(64, int32)
    t = cuda.threadIdx.x
    s[t] = x[t]
    cuda.syncthreads()
    out[t] = cuda.syncthreads_count(np.int32(s[t] > 3)) + s[t ^ 1]


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_load_after_the_barrier_runs(target):
    x = np.random.default_rng(5).integers(-10, 10, 64).astype(np.int32)
    out = np.full(64, -1, np.int64)
    getattr(_count_then_load, target)[1, 64](x, out)
    np.testing.assert_array_equal(out, np.count_nonzero(x > 3) + x[np.arange(64) ^ 1])


@cuda.jit(device=True)
def _warp_sum(v):
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        cuda.syncwarp()
        off //= 2
    return v


@xpu.jit
def _not_memory_reads(x, out):
    s = cuda.shared.array(64, int32)
    loc = cuda.local.array(2, int32)
    t = cuda.threadIdx.x
    s[t] = x[t]
    loc[0] = x[t] * 2
    cuda.syncthreads()
    # a shape and a thread's own local array are no memory other threads write
    out[0, t] = s.shape[0] + cuda.syncthreads_count(np.int32(s[t] > 0))
    out[1, t] = loc[0] + cuda.syncthreads_or(np.int32(t == 5))
    # the warp-reduce idiom (a syncwarp in a device function): no barrier of the block
    out[2, t] = x[t] + _warp_sum(x[t])


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_shapes_local_arrays_and_syncwarp_are_not_refused(target):
    # a probe of the refusal above found these refused (false positives)
    x = np.random.default_rng(6).integers(-10, 10, 64).astype(np.int32)
    out = np.full((3, 64), -1, np.int64)
    getattr(_not_memory_reads, target)[1, 64](x, out)
    np.testing.assert_array_equal(out[0], 64 + np.count_nonzero(x > 0))
    np.testing.assert_array_equal(out[1], 2 * x.astype(np.int64) + 1)
    sums = np.repeat(x.reshape(2, 32).sum(axis=1), 32)  # lane 0 of each wave has the sum
    lanes = np.arange(64) % 32
    np.testing.assert_array_equal(out[2][lanes == 0], (x + sums)[lanes == 0])
