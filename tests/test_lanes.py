"""docs/lanes.md: 2 x 2 pixel quads in a 2-D launch, and shader-style derivatives
built from quad swaps, against NumPy on every target."""

import numpy as np
import pytest

from numquad import Quad, xpu


@xpu.jit
def k_derivatives(img, dx, dy, cx, cy):
    t = xpu.threadIdx.x + xpu.threadIdx.y * xpu.blockDim.x
    q, j = t >> 2, t & 3
    w = xpu.blockDim.x >> 1
    x = xpu.blockIdx.x * xpu.blockDim.x + 2 * (q % w) + (j & 1)
    y = xpu.blockIdx.y * xpu.blockDim.y + 2 * (q // w) + (j >> 1)
    v = img[y, x]
    h = Quad.swapHorizontal(v)
    s = Quad.swapVertical(v)
    dx[y, x] = h - v if (j & 1) == 0 else v - h
    dy[y, x] = s - v if (j & 2) == 0 else v - s
    cx[y, x] = Quad.broadcast(v, 1) - Quad.broadcast(v, 0)
    cy[y, x] = Quad.broadcast(v, 2) - Quad.broadcast(v, 0)


def _reference(img):
    tl, tr = img[0::2, 0::2], img[0::2, 1::2]
    bl, br = img[1::2, 0::2], img[1::2, 1::2]
    dx, dy, cx, cy = (np.empty_like(img) for _ in range(4))
    for a in (dx, dy, cx, cy):
        a[...] = np.nan
    dx[0::2, 0::2] = dx[0::2, 1::2] = tr - tl  # per row
    dx[1::2, 0::2] = dx[1::2, 1::2] = br - bl
    dy[0::2, 0::2] = dy[1::2, 0::2] = bl - tl  # per column
    dy[0::2, 1::2] = dy[1::2, 1::2] = br - tr
    for r in (0, 1):
        for c in (0, 1):
            cx[r::2, c::2] = tr - tl  # the top row's
            cy[r::2, c::2] = bl - tl  # the left column's
    return dx, dy, cx, cy


@pytest.mark.slow
@pytest.mark.parametrize("block", [(16, 16), (8, 4), (32, 2)])
def test_two_by_two_quads_and_derivatives(target, rng, block):
    H, W = 32, 64
    img = rng.standard_normal((H, W)).astype(np.float32)
    outs = [np.full((H, W), np.nan, np.float32) for _ in range(4)]
    grid = (W // block[0], H // block[1])
    getattr(k_derivatives, target)[grid, block](img, *outs)
    for got, exp in zip(outs, _reference(img)):
        np.testing.assert_array_equal(got, exp)


def test_the_python_target_agrees(rng):
    img = rng.standard_normal((16, 16)).astype(np.float32)
    for_py = [np.full((16, 16), np.nan, np.float32) for _ in range(4)]
    k_derivatives.python[(2, 2), (8, 8)](img, *for_py)
    for got, exp in zip(for_py, _reference(img)):
        np.testing.assert_array_equal(got, exp)
