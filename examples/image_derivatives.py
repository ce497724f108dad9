"""Image derivatives and a Sobel filter on 2 x 2 pixel quads.

A quad is four consecutive threads. With ``x, y = xpu.quad_grid(2)`` (docs/lanes.md)
every quad of a 16 x 16 block covers a 2 x 2 pixel tile, lane 0 top-left,
1 top-right, 2 bottom-left, 3 bottom-right, so
``Quad.swapHorizontal`` reads the pixel left or right of this one and
``Quad.swapVertical`` the pixel above or below. One kernel, ``k_derivatives``,
computes per pixel:

* the fine derivatives of shaders, ``Quad.ddx``/``Quad.ddy``: right minus left
  within the tile's row, bottom minus top within its column (both pixels of a row
  get the same ddx, both of a column the same ddy);
* the Sobel gradient (gx, gy) and its magnitude sqrt(gx^2 + gy^2). Of the nine
  pixels of a pixel's 3 x 3 window, its lane loads four (itself and the three on
  the side away from the tile's centre) and reads the other five from the quad:
  ``swapHorizontal``, ``swapVertical`` and ``swapDiagonal`` of the neighbours'
  own pixels, and two more swaps of their loads: 4 loads per pixel instead of 9.

The image is clamped at its edges: a read past an edge returns the edge pixel.
That also holds for the missing half of a tile on an odd-sized image, so every
lane computes the swaps, before any branch on the pixel position (docs/lanes.md
says why: a lane that does not reach a cross-lane op gives its own value), and
only the stores test the image bounds.

Check. The NumPy reference pads the image with its edge pixels and takes the
same differences, so ddx and ddy must match bit for bit (a float32 subtraction
has one correctly rounded result). The Sobel reference performs the same float32
operations in the same order, (d0 + 2 * d1) + d2 for gx and gy, then
sqrt(gx * gx + gy * gy); each of them, sqrt included, is correctly rounded in
IEEE 754 arithmetic and no target contracts a multiply and an add into an FMA
(docs/architecture.md), so the Sobel outputs must match bit for bit too. A Numba
``@njit(parallel=True)`` version, timed with NumPy, must give the same bits.

The image is generated (a smooth pattern, a disc and a bar with sharp edges, and
noise) unless ``--image PATH`` names a PNG or JPEG (needs Pillow); ``--png OUT``
writes the Sobel magnitude as a grey PNG (needs Pillow or matplotlib). With
``--target cuda`` the kernel runs on the GPU on numba.cuda device arrays
(examples/_target.py).

    python examples/image_derivatives.py                  # a generated 1079 x 1917 image
    python examples/image_derivatives.py --small          # a quick check
    python examples/image_derivatives.py --image photo.jpg --png sobel.png
    python examples/image_derivatives.py --target cuda    # the same on a GPU
"""

import argparse
import math
import sys

import numba
import numpy as np
from numba import prange

import _target  # examples/_target.py
from _timing import median_time  # examples/_timing.py
from numquad import Quad, xpu

BLOCK = (16, 16)  # threads per block: 16 x 16 pixels as 8 x 8 quads of 2 x 2 (both even)


@xpu.jit
def k_derivatives(img, ddx, ddy, sobel):
    # docs/lanes.md: with quad_grid each quad of the block is a 2 x 2 pixel tile
    x, y = xpu.quad_grid(2)  # this thread's pixel
    ox = x & 1  # 0 left, 1 right (blocks start on even pixels)
    oy = y & 1  # 0 top, 1 bottom
    h = img.shape[0]
    w = img.shape[1]

    # fine derivatives (reads clamped to the image: no branch before the cross-lane ops)
    cy = min(y, h - 1)
    cx = min(x, w - 1)
    v = img[cy, cx]
    dx = Quad.ddx(v)  # right minus left, in the tile's row
    dy = Quad.ddy(v)  # bottom minus top, in the tile's column
    sh = Quad.swapHorizontal(v)  # the pixel left or right, in the tile
    sv = Quad.swapVertical(v)  # the pixel above or below
    sd = Quad.swapDiagonal(v)  # the tile's opposite corner

    # Sobel. Seen from this pixel, its 3 x 3 window has an "out" row and column (on
    # the side away from the tile's centre: y - 1 for a top pixel, y + 1 for a
    # bottom one), its own ("mid") row and column, and a "far" row and column (the
    # other half of the tile). This lane loads the out values; the far ones are the
    # neighbour lanes' own and out values, read with the same swaps.
    ro = min(max(y + 2 * oy - 1, 0), h - 1)  # out row, clamped
    co = min(max(x + 2 * ox - 1, 0), w - 1)  # out column, clamped
    oo = img[ro, co]  # window[out row, out column]
    om = img[ro, cx]  # window[out row, mid column]
    mo = img[cy, co]  # window[mid row, out column]
    of = Quad.swapHorizontal(om)  # window[out row, far column]: the neighbour's om
    fo = Quad.swapVertical(mo)  # window[far row, out column]: the neighbour's mo
    # right minus left along each row (left is the out column for a left pixel, ox == 0)
    gx_o = of - oo if ox == 0 else oo - of
    gx_m = sh - mo if ox == 0 else mo - sh
    gx_f = sd - fo if ox == 0 else fo - sd
    # bottom minus top along each column (top is the out row for a top pixel, oy == 0)
    gy_o = fo - oo if oy == 0 else oo - fo
    gy_m = sv - om if oy == 0 else om - sv
    gy_f = sd - of if oy == 0 else of - sd
    # Sobel weights 1, 2, 1 from top to bottom (gx) and left to right (gy), in that order
    two = np.float32(2.0)
    gx = ((gx_o if oy == 0 else gx_f) + two * gx_m) + (gx_f if oy == 0 else gx_o)
    gy = ((gy_o if ox == 0 else gy_f) + two * gy_m) + (gy_f if ox == 0 else gy_o)
    mag = math.sqrt(gx * gx + gy * gy)

    if y < h and x < w:
        ddx[y, x] = dx
        ddy[y, x] = dy
        sobel[y, x, 0] = gx
        sobel[y, x, 1] = gy
        sobel[y, x, 2] = mag


def derivatives_numquad(img, ddx, ddy, sobel):
    h, w = img.shape
    grid = ((w + BLOCK[0] - 1) // BLOCK[0], (h + BLOCK[1] - 1) // BLOCK[1])
    k_derivatives[grid, BLOCK](img, ddx, ddy, sobel)


def derivatives_numpy(img):
    """(ddx, ddy, sobel) as the kernel computes them, from whole-array NumPy operations."""
    h, w = img.shape
    e = np.pad(img, ((0, h % 2), (0, w % 2)), mode="edge")  # whole 2 x 2 tiles, clamped
    ddx = np.repeat(e[:, 1::2] - e[:, 0::2], 2, axis=1)[:h, :w]
    ddy = np.repeat(e[1::2, :] - e[0::2, :], 2, axis=0)[:h, :w]
    p = np.pad(img, 1, mode="edge")  # p[y + 1, x + 1] = img[y, x]
    two = np.float32(2.0)
    gx = (p[:-2, 2:] - p[:-2, :-2]) + two * (p[1:-1, 2:] - p[1:-1, :-2]) + (p[2:, 2:] - p[2:, :-2])
    gy = (p[2:, :-2] - p[:-2, :-2]) + two * (p[2:, 1:-1] - p[:-2, 1:-1]) + (p[2:, 2:] - p[:-2, 2:])
    sobel = np.stack([gx, gy, np.sqrt(gx * gx + gy * gy)], axis=-1)
    return ddx, ddy, sobel


@numba.njit(parallel=True)
def derivatives_numba(img, ddx, ddy, sobel):
    h, w = img.shape
    two = np.float32(2.0)
    for y in prange(h):
        ty = y - (y & 1)  # the tile's top row
        yb = min(ty + 1, h - 1)
        ym = max(y - 1, 0)
        yp = min(y + 1, h - 1)
        for x in range(w):
            tx = x - (x & 1)
            xr = min(tx + 1, w - 1)
            ddx[y, x] = img[y, xr] - img[y, tx]
            ddy[y, x] = img[yb, x] - img[ty, x]
            xm = max(x - 1, 0)
            xp = min(x + 1, w - 1)
            gx = (img[ym, xp] - img[ym, xm]) + two * (img[y, xp] - img[y, xm]) + (img[yp, xp] - img[yp, xm])
            gy = (img[yp, xm] - img[ym, xm]) + two * (img[yp, x] - img[ym, x]) + (img[yp, xp] - img[ym, xp])
            sobel[y, x, 0] = gx
            sobel[y, x, 1] = gy
            sobel[y, x, 2] = math.sqrt(gx * gx + gy * gy)


# -- images -------------------------------------------------------------------------------


def make_image(h, w, rng):
    """A float32 test image in [0, 1]: smooth waves, a bright disc, a dark bar, noise."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    img = 0.45 + 0.2 * np.sin(x / 37.0) * np.cos(y / 23.0)
    img += 0.3 * ((x - 0.6 * w) ** 2 + (y - 0.4 * h) ** 2 < (0.2 * min(h, w)) ** 2)
    img -= 0.25 * ((np.abs(x - 0.3 * w) < 0.05 * w) & (y > 0.2 * h) & (y < 0.8 * h))
    img += rng.normal(0.0, 0.02, (h, w))
    return np.clip(img, 0.0, 1.0).astype(np.float32)


def read_image(path):
    try:
        from PIL import Image
    except ImportError:
        print(f"image_derivatives: --image {path} needs Pillow (pip install pillow)", file=sys.stderr)
        sys.exit(2)
    with Image.open(path) as im:
        return np.asarray(im.convert("L"), dtype=np.float32) / np.float32(255.0)


def png_writer():
    """A function (path, float image in [0, 1]) that writes a grey PNG, or None."""
    try:
        from PIL import Image

        def write(path, a):
            Image.fromarray(np.rint(255.0 * a).astype(np.uint8)).save(path)  # uint8 2-D: grey ("L")

        return write
    except ImportError:
        pass
    try:
        from matplotlib import image as mpimg

        def write(path, a):
            mpimg.imsave(path, a, cmap="gray", vmin=0.0, vmax=1.0)

        return write
    except ImportError:
        return None


# -- driver ---------------------------------------------------------------------------------


def fail(msg):
    print(f"FAIL image_derivatives: {msg}")
    sys.exit(1)


def compare(name, got, want):
    if not np.array_equal(got, want):
        bad = np.argwhere(got != want)
        p = tuple(int(i) for i in bad[0])
        fail(f"{name} differs from NumPy's bits at {len(bad)} places, first {p}: got {got[p]!r}, want {want[p]!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="a small generated image, for a quick check")
    ap.add_argument("--image", metavar="PATH", help="a PNG or JPEG to use instead (needs Pillow)")
    ap.add_argument("--png", metavar="OUT", help="write the Sobel magnitude as a PNG (needs Pillow or matplotlib)")
    _target.add_option(ap)
    args = ap.parse_args()
    tgt = _target.from_args(args, "image_derivatives")
    write_png = None
    if args.png:
        write_png = png_writer()
        if write_png is None:
            print(
                f"image_derivatives: --png {args.png} needs Pillow or matplotlib (pip install pillow)", file=sys.stderr
            )
            sys.exit(2)
    repeats = 3 if args.small else 7
    rng = np.random.default_rng(17)
    if args.image:
        img = read_image(args.image)
        source = args.image
    else:
        h, w = (239, 319) if args.small else (1079, 1917)  # odd: half tiles at two edges
        img = make_image(h, w, rng)
        source = "generated"
    h, w = img.shape
    if tgt.is_cuda:
        print(f"numquad kernels on the GPU: {tgt.device_name()}")

    d_img = tgt.to_device(img)  # img itself on the CPU
    d_ddx = tgt.full((h, w), np.nan, np.float32)  # poison: an unwritten pixel stays NaN
    d_ddy = tgt.full((h, w), np.nan, np.float32)
    d_sobel = tgt.full((h, w, 3), np.nan, np.float32)
    derivatives_numquad(d_img, d_ddx, d_ddy, d_sobel)
    ddx, ddy, sobel = tgt.to_host(d_ddx), tgt.to_host(d_ddy), tgt.to_host(d_sobel)
    want_ddx, want_ddy, want_sobel = derivatives_numpy(img)
    compare("ddx", ddx, want_ddx)
    compare("ddy", ddy, want_ddy)
    compare("Sobel gx", sobel[..., 0], want_sobel[..., 0])
    compare("Sobel gy", sobel[..., 1], want_sobel[..., 1])
    compare("Sobel magnitude", sobel[..., 2], want_sobel[..., 2])
    nb = (np.empty_like(ddx), np.empty_like(ddy), np.empty_like(sobel))
    derivatives_numba(img, *nb)
    for name, got, want in zip(("ddx", "ddy", "Sobel"), nb, (want_ddx, want_ddy, want_sobel)):
        if not np.array_equal(got, want):
            fail(f"the Numba version's {name} differs from NumPy's bits")

    timings = [
        ("numquad, 2 x 2 quads", tgt.median_time(lambda: derivatives_numquad(d_img, d_ddx, d_ddy, d_sobel), repeats)),
        ("NumPy (padded slices)", median_time(lambda: derivatives_numpy(img), repeats)),
        ("Numba njit(parallel=True)", median_time(lambda: derivatives_numba(img, *nb), repeats)),
    ]
    base = timings[1][1]
    print(
        f"ddx, ddy and Sobel of a {h} x {w} float32 image ({source}; "
        f"{numba.get_num_threads()} threads, median of {repeats})"
    )
    for name, sec in timings:
        print(f"  {name:30s} {sec * 1e3:9.3f} ms   {sec / base:6.2f}x NumPy's time")
    if write_png is not None:
        mag = sobel[..., 2]
        top = float(mag.max())
        write_png(args.png, mag / top if top > 0 else mag)
        print(f"wrote the Sobel magnitude to {args.png} (scaled by 1/{top:.4g})")
    print(f"OK image_derivatives: ddx, ddy and Sobel equal NumPy bit for bit ({h} x {w}) [target {tgt}]")


if __name__ == "__main__":
    main()
