"""Rows of threads in the waves of 2-D and 3-D blocks (kernels without barriers).

A wave whose 32 lanes are whole rows of a block (blockDim.x divides 32) or part of
one row (32 divides blockDim.x) runs its all-active regions as two loops, the rows
outside and threadIdx.x inside (numquad/cpu/codegen.py, ``_wave_rows_loop``), so
that ``img[y, x]`` is a contiguous vector load. Lanes must keep their numbers:
lane = thread id % 32 as on the GPU. Expected values come from the python target
(the interpreter) and NumPy, on random inputs with poisoned outputs.
"""

import numpy as np
import pytest
from numba import cuda

from numquad import Quad, Wave, xpu

POISON = -777


def _rows(img, out, lanes, ids):
    x, y, z = cuda.grid(3)
    tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    h, w = img.shape[0], img.shape[1]
    v = img[min(y, h - 1), min(x, w - 1)] * (z + 1)
    s = Wave.prefixSum(v) + Quad.swapVertical(v) * 3 - Wave.shuffleXor(v, 5)
    t = tx + cuda.blockDim.x * (ty + cuda.blockDim.y * tz)
    if y < h and x < w and z < out.shape[0]:
        out[z, y, x] = s + img[y, x] - img[min(y + 1, h - 1), x]
        lanes[z, y, x] = Wave.laneId() * 1000 + cuda.laneid * 10 + (t % 32 == Wave.laneId())
        ids[z, y, x] = t + 100000 * (x + y + z)


@pytest.mark.slow
@pytest.mark.parametrize(
    "block, debug",
    [
        ((16, 16, 1), False),
        ((8, 4, 1), False),
        ((64, 2, 1), False),
        ((32, 3, 1), False),
        ((8, 4, 2), False),
        ((4, 2, 4), False),
        ((128, 1, 1), False),
        ((12, 8, 1), False),
        ((5, 7, 1), False),
        ((16, 16, 1), True),
        ((8, 4, 2), True),
    ],
)
def test_wave_rows_keep_lane_numbers_and_values(block, debug, rng):
    h, w, d = 37, 70, 3  # no multiple of any block: guarded tails
    img = rng.integers(-50, 50, (h, w)).astype(np.int64)
    grid = tuple(-(-n // b) for n, b in zip((w, h, d), block))
    k = xpu.jit(_rows, debug=debug)
    outs = {}
    for target in ("python", "cpu"):
        o = [np.full((d, h, w), POISON, np.int64) for _ in range(3)]
        getattr(k, target)[grid, block](img, *o)
        outs[target] = o
    for want, got in zip(outs["python"], outs["cpu"]):
        np.testing.assert_array_equal(got, want)
    lanes = outs["cpu"][1]
    assert (lanes % 10 == 1).all()  # lane == thread id % 32
    assert (lanes // 1000 == (lanes // 10) % 100).all()  # Wave.laneId() == cuda.laneid


@pytest.mark.slow
def test_the_rows_loop_is_generated_only_where_rows_fit_waves():
    from numba import types

    k = xpu.jit(_rows)
    sig = (types.int64[:, ::1],) + (types.int64[:, :, ::1],) * 3
    target = k._target("cpu")
    for block, rows in (
        ((16, 16, 1), True),
        ((64, 2, 1), True),
        ((8, 4, 2), True),
        ((12, 8, 1), False),
        ((5, 7, 1), False),
    ):
        src = target.compile(sig, block).source
        assert ("for _nq_lx in _nq_range(" in src) == rows, block
