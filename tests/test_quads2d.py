"""2x2 pixel quads in 2-D launches (docs/lanes.md): ``xpu.quad_grid(2)`` and the
derivatives ``Quad.ddx``/``ddy``/``ddxCoarse``/``ddyCoarse`` (numquad/ops.py),
against NumPy differences on the 2x2 tiles, bit for bit, on the CPU target
(release and debug), the Python interpreter and CUDA where a GPU is present;
the generated code (PTX, CPU IR) and the errors of bad calls."""

import re

import numba
import numpy as np
import pytest
from numba import cuda

from numquad import NumquadCompileError, NumquadLaunchError, NumquadTypeError, Quad, _control, xpu

GRID, BLOCK = (3, 2), (16, 8)
H, W = GRID[1] * BLOCK[1], GRID[0] * BLOCK[0]  # 16 x 48 pixels


def _pixels(img, out_xy, out_lane, out_quad, out_count):
    x, y = xpu.quad_grid(2)
    t = xpu.threadIdx.x + xpu.threadIdx.y * xpu.blockDim.x
    out_xy[y, x, 0] = x
    out_xy[y, x, 1] = y
    out_lane[y, x] = Quad.laneId()
    # the quad's identity: block and wave-wide quad number
    out_quad[y, x] = ((xpu.blockIdx.y * xpu.gridDim.x + xpu.blockIdx.x) * 1024 + t) >> 2
    out_count[y, x] += 1


def _derivatives(img, dx, dy, cx, cy):
    x, y = xpu.quad_grid(2)
    v = img[y, x]
    dx[y, x] = Quad.ddx(v)
    dy[y, x] = Quad.ddy(v)
    cx[y, x] = Quad.ddxCoarse(v)
    cy[y, x] = Quad.ddyCoarse(v)


def _derivatives_diverge(img, on, dx, dy, cx, cy):
    x, y = xpu.quad_grid(2)
    v = img[y, x]
    if on[y, x] != 0:  # lane-dependent
        dx[y, x] = Quad.ddx(v)
        dy[y, x] = Quad.ddy(v)
        cx[y, x] = Quad.ddxCoarse(v)
        cy[y, x] = Quad.ddyCoarse(v)


_KERNELS = {
    mode: {f.__name__: xpu.jit(debug=(mode == "debug"))(f) for f in (_pixels, _derivatives, _derivatives_diverge)}
    for mode in ("release", "debug")
}
_MODES = ["release", "debug"]


def _launch(name, target, mode, *args):
    k = _KERNELS[mode][name]
    getattr(k, target)[GRID, BLOCK](*args)


def _random_image(rng, dtype):
    """Random floats of mixed magnitudes and signs (differences round)."""
    mag = 10.0 ** rng.integers(-3, 4, size=(H, W))
    return (rng.standard_normal((H, W)) * mag).astype(dtype)


def _poisoned(dtype, n=4):
    return [np.full((H, W), np.nan, dtype) for _ in range(n)]


def _bits(a):
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def _tiles(img):
    """The 2x2 tiles: (top-left, top-right, bottom-left, bottom-right), each (H/2, W/2)."""
    return img[0::2, 0::2], img[0::2, 1::2], img[1::2, 0::2], img[1::2, 1::2]


def _per_pixel(tl, tr, bl, br):
    """Four per-tile arrays (one per quad lane) back to the image layout."""
    out = np.empty((H, W), tl.dtype)
    out[0::2, 0::2], out[0::2, 1::2], out[1::2, 0::2], out[1::2, 1::2] = tl, tr, bl, br
    return out


def _expected(img):
    v0, v1, v2, v3 = _tiles(img)
    dx = _per_pixel(v1 - v0, v1 - v0, v3 - v2, v3 - v2)
    dy = _per_pixel(v2 - v0, v3 - v1, v2 - v0, v3 - v1)
    cx = _per_pixel(*[v1 - v0] * 4)
    cy = _per_pixel(*[v2 - v0] * 4)
    return dx, dy, cx, cy


def _expected_diverge(img, on):
    """docs/semantics.md's move rule for each read: an inactive lane gives the
    reader's own value; inactive pixels keep the poison."""
    v = _tiles(img)
    a = _tiles(on != 0)
    poison = np.full(v[0].shape, np.nan, img.dtype)

    def read(src, lane):  # lane `lane` reads quad lane `src`
        return np.where(a[src], v[src], v[lane])

    def lanes(hi_lo):
        return _per_pixel(*[np.where(a[l], read(h, l) - read(lo, l), poison) for l, (h, lo) in enumerate(hi_lo)])

    dx = lanes([(1, 0), (1, 0), (3, 2), (3, 2)])
    dy = lanes([(2, 0), (3, 1), (2, 0), (3, 1)])
    cx = lanes([(1, 0)] * 4)
    cy = lanes([(2, 0)] * 4)
    return dx, dy, cx, cy


# ---------------------------------------------------------------------------
# quad_grid: every pixel once, 2x2 tiles, the lane layout
# ---------------------------------------------------------------------------


def _check_pixels(target, mode):
    xy = np.full((H, W, 2), -1, np.int64)
    lane = np.full((H, W), 99, np.uint32)
    quad = np.full((H, W), -1, np.int64)
    count = np.zeros((H, W), np.int32)
    _launch("_pixels", target, mode, np.zeros((H, W), np.float32), xy, lane, quad, count)
    assert (count == 1).all(), "every pixel of the blocks' rectangles exactly once"
    ys, xs = np.mgrid[0:H, 0:W]
    np.testing.assert_array_equal(xy[..., 0], xs)
    np.testing.assert_array_equal(xy[..., 1], ys)
    # lane 0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right
    np.testing.assert_array_equal(lane, (xs & 1) + 2 * (ys & 1))
    q = _tiles(quad)
    assert all(np.array_equal(q[0], qi) for qi in q[1:]), "a 2x2 tile is one quad"
    assert len(np.unique(q[0])) == q[0].size, "each tile its own quad"
    assert xy.dtype == np.int64


@pytest.mark.slow
@pytest.mark.parametrize("mode", _MODES)
def test_quad_grid_covers_each_pixel_once(target, mode):
    if target == "cuda" and mode == "debug":
        pytest.skip("debug=True is a CPU-target check")
    _check_pixels(target, mode)


@pytest.mark.slow
def test_quad_grid_python_target():
    _check_pixels("python", "release")


# ---------------------------------------------------------------------------
# Derivatives against NumPy, bit for bit
# ---------------------------------------------------------------------------


def _check_derivatives(target, mode, dtype, rng):
    img = _random_image(rng, dtype)
    outs = _poisoned(dtype)
    _launch("_derivatives", target, mode, img, *outs)
    for name, got, exp in zip(("ddx", "ddy", "ddxCoarse", "ddyCoarse"), outs, _expected(img)):
        assert not np.isnan(got).any(), f"{name}: a pixel was not written"
        np.testing.assert_array_equal(_bits(got), _bits(exp), err_msg=f"Quad.{name} {dtype.__name__}")


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", _MODES)
def test_derivatives_equal_numpy(target, mode, dtype, rng):
    if target == "cuda" and mode == "debug":
        pytest.skip("debug=True is a CPU-target check")
    _check_derivatives(target, mode, dtype, rng)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_derivatives_python_target(dtype, rng):
    _check_derivatives("python", "release", dtype, rng)


def _check_diverge(target, mode, dtype, rng):
    img = _random_image(rng, dtype)
    on = (rng.random((H, W)) < 0.6).astype(np.int32)
    outs = _poisoned(dtype)
    _launch("_derivatives_diverge", target, mode, img, on, *outs)
    for name, got, exp in zip(("ddx", "ddy", "ddxCoarse", "ddyCoarse"), outs, _expected_diverge(img, on)):
        np.testing.assert_array_equal(_bits(got), _bits(exp), err_msg=f"Quad.{name} {dtype.__name__}")


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", _MODES)
def test_derivatives_under_divergence(target, mode, dtype, rng):
    if target == "cuda" and mode == "debug":
        pytest.skip("debug=True is a CPU-target check")
    _check_diverge(target, mode, dtype, rng)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_derivatives_under_divergence_python_target(dtype, rng):
    _check_diverge("python", "release", dtype, rng)


def test_inactive_partner_reads_own_value():
    """The documented cases: a lane whose row partner is inactive gets v - v = 0;
    with quad lane 0 inactive, coarse ddx gives lane 1 v1 - v1 and lane 2 v1 - v2."""
    img = np.zeros((H, W), np.float32)
    img[0:2, 0:2] = [[1.0, 3.0], [7.0, 15.0]]  # one tile: v0=1 v1=3 v2=7 v3=15
    on = np.ones((H, W), np.int32)
    on[0, 0] = 0  # quad lane 0 of that tile
    for target in ("cpu", "python"):
        outs = _poisoned(np.float32)
        _launch("_derivatives_diverge", target, "release", img, on, *outs)
        dx, dy, cx, cy = (o[0:2, 0:2] for o in outs)
        assert np.isnan(dx[0, 0]) and np.isnan(cx[0, 0])  # inactive: untouched
        assert dx[0, 1] == 0.0 and dx[1, 0] == 15.0 - 7.0
        assert dy[1, 0] == 0.0 and dy[1, 1] == 15.0 - 3.0
        assert cx[0, 1] == 0.0 and cx[1, 0] == 3.0 - 7.0 and cx[1, 1] == 3.0 - 15.0
        assert cy[1, 0] == 0.0 and cy[0, 1] == 7.0 - 3.0 and cy[1, 1] == 7.0 - 15.0


# ---------------------------------------------------------------------------
# Generated code
# ---------------------------------------------------------------------------


@xpu.jit
def k_ddx(img, out):
    x, y = xpu.quad_grid(2)
    out[y, x] = Quad.ddx(img[y, x])


@xpu.jit
def k_ddy_coarse(img, out):
    x, y = xpu.quad_grid(2)
    out[y, x] = Quad.ddyCoarse(img[y, x])


@xpu.jit
def k_ddx_1d(src, dst):
    i = xpu.grid(1)
    dst[i] = Quad.ddx(src[i])


_SIG2 = (numba.float32[:, ::1], numba.float32[:, ::1])


def _needs_numba_cuda():
    pytest.importorskip("numba_cuda")


def test_ptx_fine_is_one_shuffle_and_one_subtraction():
    _needs_numba_cuda()
    ptx = k_ddx.inspect_ptx(_SIG2)
    assert "shfl.sync" in ptx
    assert ".local" not in ptx
    assert len(re.findall(r"shfl\.sync\.bfly\.b32", ptx)) == 1
    assert len(re.findall(r"sub(\.rn)?\.f32", ptx)) == 1


def test_ptx_coarse_is_two_quad_shuffles():
    _needs_numba_cuda()
    ptx = k_ddy_coarse.inspect_ptx(_SIG2)
    assert ".local" not in ptx
    assert len(re.findall(r"shfl\.sync\.idx\.b32", ptx)) == 2
    assert len(re.findall(r"sub(\.rn)?\.f32", ptx)) == 1


def test_cpu_ir_is_shufflevector():
    ir = k_ddx_1d.inspect_llvm((numba.float32[::1], numba.float32[::1]))
    assert re.search(r"shufflevector <32 x float>", ir)
    assert re.search(r"fsub <\d+ x float>", ir)


def test_quad_grid_is_lane_varying():
    """numquad/_control.py: a branch on quad_grid's result is lane-varying, so the
    CUDA target gives the ops under it a ballot-computed member mask."""

    @xpu.jit
    def k(img, out):
        x, y = xpu.quad_grid(2)
        if x & 1:
            out[y, x] = Quad.ddx(img[y, x])

    a = _control.analyze(k)
    assert "x" not in a.uniform and "y" not in a.uniform
    try:
        import numba_cuda  # noqa: F401
    except ImportError:
        return
    assert "vote.sync.ballot" in k.inspect_ptx(_SIG2)


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


@xpu.jit
def k_ddx_int(src, dst):
    x, y = xpu.quad_grid(2)
    dst[y, x] = Quad.ddx(src[y, x])


@xpu.jit
def k_quad_grid_3(dst):
    x, y = xpu.quad_grid(3)
    dst[y, x] = 1


@pytest.mark.parametrize("where", ["cpu", "python", "ptx"])
def test_ddx_of_int_is_a_type_error(where):
    a = np.zeros((H, W), np.int32)
    with pytest.raises(NumquadTypeError) as e:
        if where == "ptx":
            _needs_numba_cuda()
            k_ddx_int.inspect_ptx((numba.int32[:, ::1], numba.int32[:, ::1]))
        else:
            getattr(k_ddx_int, where)[GRID, BLOCK](a, a.copy())
    msg = str(e.value)
    assert "Quad.ddx" in msg and "int32" in msg and "float32 or float64" in msg


@pytest.mark.parametrize("where", ["cpu", "python", "ptx"])
def test_quad_grid_takes_2(where):
    a = np.zeros((H, W), np.int32)
    exc = NumquadTypeError if where == "ptx" else NumquadCompileError
    with pytest.raises(exc) as e:
        if where == "ptx":
            _needs_numba_cuda()
            k_quad_grid_3.inspect_ptx((numba.int32[:, ::1],))
        else:
            getattr(k_quad_grid_3, where)[GRID, BLOCK](a)
    msg = str(e.value)
    assert "xpu.quad_grid" in msg and "3" in msg and "constant 2" in msg


@pytest.mark.parametrize("block", [(15, 8), (16, 7), 32])
@pytest.mark.parametrize("where", ["cpu", "python", "cuda"])
def test_odd_block_is_a_launch_error(where, block):
    """Checked at launch on every target (numquad/xpu.py), before any compilation."""
    img = np.zeros((H, W), np.float32)
    with pytest.raises(NumquadLaunchError) as e:
        getattr(k_ddx, where)[GRID, block](img, img.copy())
    msg = str(e.value)
    assert "xpu.quad_grid" in msg and str(block) in msg and "even" in msg


def test_odd_block_through_a_lane_function():
    @xpu.jit
    def pixel():
        x, y = xpu.quad_grid(2)
        return x + y

    @xpu.jit
    def k(out):
        i = xpu.grid(1)
        out[i] = pixel()

    with pytest.raises(NumquadLaunchError):
        k.cpu[1, 32](np.zeros(32, np.int64))


@cuda.jit(device=True)
def _pixel_of_a_numba_cuda_device_function():
    return xpu.quad_grid(2)


@xpu.jit
def k_quad_grid_via_cuda_device_fn(out):
    x, y = _pixel_of_a_numba_cuda_device_function()
    if x < 6 and y < 6:
        out[y, x] += 1


@pytest.mark.parametrize("where", ["cpu", "cpu-debug", "python", "cuda"])
def test_odd_block_through_a_numba_cuda_device_function(where):
    """A probe found the launch check blind to a numba.cuda device function: a (3, 3)
    block ran and wrote pixels 0 to 3 times (xpu._reads_builtin follows py_func)."""
    k = (
        xpu.jit(debug=True)(k_quad_grid_via_cuda_device_fn.py_func)
        if where == "cpu-debug"
        else k_quad_grid_via_cuda_device_fn
    )
    out = np.zeros((8, 8), np.int64)
    with pytest.raises(NumquadLaunchError, match=r"quad_grid.*\(3, 3\).*even"):
        getattr(k, "cpu" if where.startswith("cpu") else where)[(2, 2), (3, 3)](out)
    assert not out.any()
    if where == "cuda":
        # numba.cuda compiles its own device functions on the GPU: numquad's xpu names
        # are not there (docs/numba-cuda.md, porting item 1; an H100 run of this test)
        return
    getattr(k, "cpu" if where.startswith("cpu") else where)[(3, 3), (2, 2)](out)
    want = np.zeros((8, 8), np.int64)
    want[:6, :6] = 1
    np.testing.assert_array_equal(out, want)


def test_a_lane_call_on_arrays_that_reads_quad_grid_is_refused():
    """A lane call runs one row of threads (blockDim.y 1, odd); it gave y = 1 there."""

    @xpu.jit
    def with_pixel(v):
        x, y = xpu.quad_grid(2)
        return v + x * 100 + y * 1000

    with pytest.raises(NumquadLaunchError, match=r"with_pixel .*reads xpu.quad_grid\(2\).*one row"):
        with_pixel(np.random.default_rng(5).standard_normal(8).astype(np.float32))
