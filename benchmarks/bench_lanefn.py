"""A lane function called on arrays (docs/architecture.md section 1) vs the NumPy expression, one core.

    python benchmarks/bench_lanefn.py [--quick] [--json PATH]

    @xpu.jit
    def lanefn(x, y):
        return x * y + Quad.swapHorizontal(x)

    lanefn(x, y)                                   # 2^24 float32, y a float32 scalar
    x * y + x.reshape(-1, 2)[:, ::-1].ravel()      # NumPy: pairwise swap through a view

Bar (docs/architecture.md section 6): the array call is >= 1.5x faster than NumPy.
A row whose call raises prints "not available: <error>". Informational rows:
the call with ``out=``, with a Python float ``y`` (its result dtype is shown),
the same work as a kernel, and a NumPy formulation without temporaries.
"""

from __future__ import annotations

import os
import sys

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import Rows, best_of, busy_note, parser  # noqa: E402

from numquad import Quad, xpu  # noqa: E402


@xpu.jit
def lanefn(x, y):
    return x * y + Quad.swapHorizontal(x)


@xpu.jit
def lanefn_kernel(x, y, out):
    i = xpu.grid(1)
    v = x[i]
    out[i] = v * y + Quad.swapHorizontal(v)


def main(argv=None):
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    rows = Rows("bench_lanefn", args)
    busy_note(rows, "this run")
    n = 1 << 24
    rep = 5 if args.quick else 15
    threads0 = numba.get_num_threads()
    numba.set_num_threads(1)
    rows.header(
        f"lane function x * y + Quad.swapHorizontal(x), {n} float32 (2^24), 1 core, best of {rep} after a warm-up call"
    )
    rng = np.random.default_rng(3)
    x = rng.standard_normal(n, dtype=np.float32)
    y = np.float32(2.0)
    out = np.empty_like(x)

    def numpy_expr():
        return x * y + x.reshape(-1, 2)[:, ::-1].ravel()

    def numpy_noalloc():
        np.multiply(x, y, out=out)
        np.add(out, x.reshape(-1, 2)[:, ::-1].ravel(), out=out)
        return out

    ref = numpy_expr()
    t_np = best_of(numpy_expr, rep)[0]
    rows.add("t_numpy", "NumPy x * y + x.reshape(-1, 2)[:, ::-1].ravel()", t_np, "s")
    rows.add("t_numpy_noalloc", "NumPy multiply(out=) then += swapped view", best_of(numpy_noalloc, rep)[0], "s")

    def measure(id_, metric, fn, bar=None, ratio_metric=None):
        try:
            r = fn()
            r = np.asarray(r)
            if r.shape != ref.shape:
                raise AssertionError(f"result shape {r.shape}, want {ref.shape}")
            detail = f"result dtype {r.dtype}"
            if r.dtype == ref.dtype:
                same = np.array_equal(r, ref)
            else:  # e.g. float64 from a Python float y: compare values
                same = np.allclose(r, ref, rtol=1e-6, atol=1e-6)
            if not same:
                raise AssertionError("result differs from the NumPy expression")
            t = best_of(fn, rep)[0]
        except Exception as e:  # noqa: BLE001 - reported as a row
            rows.fail(id_, metric, e)
            if ratio_metric:
                rows.fail(id_ + "_ratio", ratio_metric, e, bar=bar)
            return None
        rows.add(id_, metric, t, "s", detail=detail)
        if ratio_metric:
            rows.add(id_ + "_ratio", ratio_metric, t_np / t, "x", bar=bar)
        return t

    measure(
        "lanefn",
        "numquad lanefn(x, np.float32(2))",
        lambda: lanefn(x, y),
        bar=">= 1.5",
        ratio_metric="lane function on arrays / NumPy expression",
    )
    measure(
        "lanefn_out",
        "numquad lanefn(x, y, out=out)",
        lambda: lanefn(x, y, out=out),
        ratio_metric="lanefn(..., out=) / NumPy expression",
    )
    measure("lanefn_pyfloat", "numquad lanefn(x, 2.0) (Python float y)", lambda: lanefn(x, 2.0))
    launch = lanefn_kernel[n // 256, 256]

    def kernel_form():
        launch(x, y, out)
        return out

    measure(
        "kernel",
        "same work as a kernel, [n/256, 256], preallocated out",
        kernel_form,
        ratio_metric="kernel form / NumPy expression",
    )
    numba.set_num_threads(threads0)
    rows.summary()
    return rows


if __name__ == "__main__":
    main()
