"""Tuples of scalars that live across cross-lane ops and masked branches.

``p = cuda.grid(2)`` read after a ``Wave`` op, ``t = (a, b)`` built before an op
and unpacked after it, a tuple assigned in a lane-varying branch, carried around a
loop with per-lane exits, a ``match_all_sync`` result kept across an op: the CPU
target keeps each element in a lane array of its own (numquad/cpu/codegen.py,
``_tuple_parts``); until the eighth session it refused every such tuple. Expected
values come from the python target (the interpreter) or NumPy, on random inputs with
poisoned outputs, on CPU release and debug builds and CUDA where a GPU exists.
"""

import numpy as np
import pytest
from numba import cuda

from numquad import NumquadCompileError, Quad, Wave, xpu

POISON = -777


def _grid2_index_after_an_op(x, out):
    p = cuda.grid(2)
    s = Wave.prefixSum(x[p])
    out[p] = s * 3 + p[0] - p[1]


def _tuple_across_ops_and_branches(x, y, out, out2):
    i = xpu.grid(1)
    t = (x[i], y[i] * 0.5)  # Tuple(int64, float64)
    if x[i] % 3 == 0:  # lane-varying
        t = (t[0] + Wave.reduceSum(x[i]), t[1] - 1.0)
    u = (np.int32(i), x[i] > 0, y[i])  # Tuple(int32, bool, float64)
    a, b = t
    a += Quad.swapDiagonal(a)
    c, pos, f = u
    out[i] = a + c + (1 if pos else 0)
    out2[i] = b + f + Quad.broadcast(b, 2)


def _tuple_in_a_loop_with_per_lane_exits(x, trip, out, out2):
    i = xpu.grid(1)
    acc = (np.int64(0), np.float64(1.0))
    for j in range(trip[i]):
        acc = (acc[0] + Wave.prefixSum(np.int64(j + 1)), acc[1] * 1.5)
        if x[i] == j:
            break
        if x[i] + j > 6:
            continue
        acc = (acc[0] - 1, acc[1] + Wave.shuffleXor(acc[1], 1))
    out[i] = acc[0]
    out2[i] = acc[1]


def _match_all_across_an_op(x, out, out2):
    i = xpu.grid(1)
    m = cuda.match_all_sync(0xFFFFFFFF, x[i] // 4)
    s = Wave.reduceSum(x[i])
    out[i] = np.int64(m[0]) + s
    out2[i] = np.float64(m[1])


def _run(fn, target, debug, grid, block, *ins, nouts=2, shape=None, dtypes=()):
    k = xpu.jit(fn, debug=debug)
    shape = ins[0].shape if shape is None else shape
    want, got = [], []
    for j in range(nouts):
        dt = dtypes[j] if j < len(dtypes) else np.int64
        want.append(np.full(shape, POISON, dt))
        got.append(np.full(shape, POISON, dt))
    k.python[grid, block](*ins, *want)
    getattr(k, target)[grid, block](*ins, *got)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
        assert (w != POISON).all()
    return want


@pytest.mark.parametrize("debug", [False, True])
def test_a_grid2_tuple_indexes_after_an_op(debug, target, rng):
    if debug and target == "cuda":
        pytest.skip("debug builds: CPU")
    x = rng.integers(-100, 100, (20, 12)).astype(np.int64)  # x[p]: p = (x index, y index)
    (want,) = _run(_grid2_index_after_an_op, target, debug, (2, 1), (10, 12), x, nouts=1, shape=(20, 12))
    # NumPy: in block bx, thread (tx, ty) has id t = ty * 10 + tx, lane t % 32 of wave t // 32
    exp = np.empty((20, 12), np.int64)
    for bx in range(2):
        v = x[bx * 10 : bx * 10 + 10, :].T.ravel()  # in thread-id order
        s = np.concatenate([np.concatenate([[0], np.cumsum(v[w : w + 32])[:-1]]) for w in range(0, v.size, 32)])
        exp[bx * 10 : bx * 10 + 10, :] = s.reshape(12, 10).T
    exp = exp * 3 + np.arange(20)[:, None] - np.arange(12)[None, :]
    np.testing.assert_array_equal(want, exp)


@pytest.mark.slow
@pytest.mark.parametrize("debug", [False, True])
def test_tuples_across_ops_and_masked_branches(debug, target, rng):
    if debug and target == "cuda":
        pytest.skip("debug builds: CPU")
    n = 100  # a partial last wave
    x = rng.integers(-50, 50, n).astype(np.int64)
    y = rng.standard_normal(n)
    _run(_tuple_across_ops_and_branches, target, debug, 2, 50, x, y, dtypes=(np.int64, np.float64))


@pytest.mark.slow
@pytest.mark.parametrize("debug", [False, True])
def test_a_tuple_carried_around_a_loop_with_per_lane_exits(debug, target, rng):
    if debug and target == "cuda":
        pytest.skip("debug builds: CPU")
    n = 96
    x = rng.integers(0, 6, n).astype(np.int64)
    trip = rng.integers(0, 6, n).astype(np.int32)
    _run(_tuple_in_a_loop_with_per_lane_exits, target, debug, 3, 32, x, trip, dtypes=(np.int64, np.float64))


@pytest.mark.slow
def test_a_match_all_result_kept_across_an_op(target, rng):
    x = rng.integers(0, 8, 64).astype(np.int64)
    x[:32] = 5  # wave 0: all equal; wave 1: random
    want = _run(_match_all_across_an_op, target, False, 2, 32, x, dtypes=(np.int64, np.float64))
    sums = x.reshape(2, 32).sum(axis=1).repeat(32)
    np.testing.assert_array_equal(want[0][:32], 0xFFFFFFFF - 2**32 + sums[:32])  # int32 -1
    assert (want[1][:32] == 1.0).all()


def test_a_tuple_of_arrays_is_uniform_and_a_mixed_one_still_refused(rng):
    @xpu.jit
    def k_arrays(x, out):
        i = xpu.grid(1)
        t = (x, out)  # the same in every lane: stays scalar
        s = Wave.reduceSum(x[i])
        t[1][i] = s

    @xpu.jit
    def k_mixed(x, out):
        i = xpu.grid(1)
        t = (out, x[i])  # an array and a lane value
        s = Wave.reduceSum(x[i])
        t[0][i] = s + t[1]

    x = rng.integers(-9, 9, 64).astype(np.int64)
    out = np.full(64, POISON, np.int64)
    k_arrays.cpu[2, 32](x, out)
    np.testing.assert_array_equal(out, x.reshape(2, 32).sum(axis=1).repeat(32))
    with pytest.raises(NumquadCompileError, match="lives across a cross-lane op") as e:
        k_mixed.cpu[2, 32](x, out)
    assert "test_tuple_lanes.py" in str(e.value) and "tuples of them" in str(e.value)


@pytest.mark.slow
def test_the_generated_code_keeps_one_lane_array_per_element():
    k = xpu.jit(_tuple_across_ops_and_branches)
    src = k.inspect_cpu_source("void(int64[::1], float64[::1], int64[::1], float64[::1])")
    for name in ("_nq_v_t__0", "_nq_v_t__1", "_nq_v_u__0", "_nq_v_u__1", "_nq_v_u__2"):
        assert name in src
    assert "_nq_v_t =" not in src and "_nq_v_u =" not in src


def test_the_cuda_target_compiles_them_without_local_memory():
    for fn, sig in (
        (_tuple_across_ops_and_branches, "void(int64[::1], float64[::1], int64[::1], float64[::1])"),
        (_tuple_in_a_loop_with_per_lane_exits, "void(int64[::1], int32[::1], int64[::1], float64[::1])"),
        (_grid2_index_after_an_op, "void(int64[:, ::1], int64[:, ::1])"),
    ):
        ptx = xpu.jit(fn).inspect_ptx(sig, cc=(9, 0))
        assert "shfl.sync" in ptx and ".local" not in ptx
