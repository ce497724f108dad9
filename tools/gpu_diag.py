"""GPU diagnostics: the PTX and SASS a kernel really runs with (FMA contraction,
convergence around cross-lane ops). Run on the GPU machine."""

import sys

import numpy as np
from numba.cuda.cudadrv import nvvm

_real = nvvm.compile_ir


def _spy(llvmir, **options):
    print("nvvm.compile_ir options:", options, flush=True)
    return _real(llvmir, **options)


nvvm.compile_ir = _spy

from numquad import Quad, xpu


@xpu.jit
def axpy(a, b, c, out):
    i = xpu.grid(1)
    if i < out.size:
        out[i] = a[i] * b[i] + c[i]


@xpu.jit
def varying(x, cnt, out):
    i = xpu.grid(1)
    v = x[i]
    for k in range(cnt[i]):
        v = v + Quad.swapHorizontal(v) + k
    out[i] = v


def main():
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal(4096).astype(np.float32) for _ in range(3))
    out = np.empty(4096, np.float32)
    axpy.cuda[16, 256](a, b, c, out)
    print("axpy equal to numpy:", np.array_equal(out, a * b + c))
    k = axpy._target("cuda").kernel()
    sig = k.signatures[0]
    ptx = k.inspect_asm(sig)
    print(
        "PTX f32 ops:",
        [l.strip() for l in ptx.splitlines() if ".f32" in l and ("mul" in l or "add" in l or "fma" in l)],
    )
    try:
        sass = k.inspect_sass(sig)
        print(
            "SASS FFMA/FMUL/FADD:",
            [l.strip()[:80] for l in sass.splitlines() if "FFMA" in l or "FMUL" in l or "FADD" in l],
        )
    except Exception as e:
        print("inspect_sass failed:", e)
    x = rng.integers(-1000, 1000, 64).astype(np.int64)
    cnt = rng.integers(0, 6, 64).astype(np.int32)
    o = np.zeros_like(x)
    varying.cuda[1, 64](x, cnt, o)
    k2 = varying._target("cuda").kernel()
    sig2 = k2.signatures[0]
    ptx2 = k2.inspect_asm(sig2)
    open("/tmp/varying.ptx", "w").write(ptx2)
    body = [
        l.rstrip() for l in ptx2.splitlines() if "shfl" in l or "activemask" in l or "bra" in l or l.startswith("$L")
    ]
    print("varying PTX control:", *body, sep="\n  ")
    try:
        sass2 = k2.inspect_sass(sig2)
        print(
            "varying SASS:",
            *[
                l.strip()[:90]
                for l in sass2.splitlines()
                if any(t in l for t in ("SHFL", "BSSY", "BSYNC", "BRA", "WARPSYNC", "VOTE", "BAR"))
            ],
            sep="\n  ",
        )
    except Exception as e:
        print("inspect_sass failed:", e)
    print("cnt", cnt[:16], "\nout", o[:16], "\nx", x[:16])


if __name__ == "__main__":
    sys.exit(main())
