"""A random kernel from an independent generator (a probe of the thirtieth session,
seed 209): nested lane-dependent control flow around cross-lane ops, a lane function
and a numba.cuda device function. benchmarks/bench_compile_large.py times its compile."""

import numpy as np
from numba import cuda
from numquad import xpu, Wave, Quad


@xpu.jit
def lf0(p0):
    ln = np.int32(cuda.laneid)
    t0 = np.int32(p0)
    t1 = np.int64(p0)
    t2 = np.uint32(p0)
    t3 = np.float32(p0)
    t4 = np.float64(p0)
    t3 = np.float32(t3)
    t2 = np.uint32(t2)
    return np.float64(Wave.shuffleDown(Quad.swapVertical(t4), np.int32(8)))


@cuda.jit(device=True)
def df0(p0):
    ln = np.int32(cuda.laneid)
    t0 = np.int32(p0)
    t1 = np.int64(p0)
    t2 = np.uint32(p0)
    t3 = np.float32(p0)
    t4 = np.float64(p0)
    t3 = np.float32((np.float32(-0.0) if (p0 != np.uint32(0)) else t3))
    t3 = np.float32(np.float32(0.0))
    t1 = np.int64(np.int64(cuda.shfl_xor_sync(cuda.activemask(), t3, t0)))
    return np.float64((t4 if (t4 <= t4) else t4))


@xpu.jit
def kern(xi, xf, out, outf, n):
    tid = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    g = cuda.blockIdx.x * (cuda.blockDim.x * cuda.blockDim.y) + tid
    ln = np.int32(tid & 31)
    if g >= n:
        return
    v0 = np.uint32(xi[g, 0])
    v1 = np.uint32(xi[g, 1])
    v2 = np.int64(xi[g, 2])
    out[g, 0] = np.int64(v0)
    if np.float32(np.float32(3.0) - np.float32(0.25)) != Wave.shuffleXor(
        np.float32(1.0000000150474662e30), np.int32(12345678)
    ):
        if not (v2 < v2):
            return
    elif Wave.reduceMin(ln) == Wave.reduceProduct(ln):
        v0 = np.uint32(np.uint32(v1 + v0))
        if np.int64(12345678) != v2:
            return
    w1 = np.int32(0)
    while w1 < np.int32((ln if (np.float32(0.25) == np.float32(1.0000000150474662e30)) else ln) & np.int32(3)):
        w1 = np.int32(w1 + np.int32(1))
        for k2 in range(np.int32(ln & np.int32(7))):
            v1 = np.uint32((np.uint32(7) if (np.int32(ln & np.int32(15)) < np.int32(4)) else np.uint32(0)))
            v0 = np.uint32(Wave.reduceAnd(v1))
            if not (np.float32(7.5) != np.float32(-0.0)):
                if v0 == v0:
                    break
            else:
                w3 = np.int32(0)
                while w3 < np.int32(Wave.prefixXor(np.int32(12345678)) & np.int32(1)):
                    w3 = np.int32(w3 + np.int32(1))
                    v0 = np.uint32(v1)
                    v1 = np.uint32(v1)
            if np.int32(ln & np.int32(1)) < np.int32(7):
                if Quad.any(Quad.any((v0 <= v0))):
                    v1 = np.uint32(np.uint32(np.float32(-0.0)))
                    v1 = np.uint32(Wave.prefixOr(Wave.prefixCountBits((np.float64(0.0) > np.float64(7.5)))))
                else:
                    if Wave.all((np.float32(-0.0) > np.float32(1.0))):
                        break
                    if (ln == ln) and (np.float32(-0.0) != np.float32(0.25)):
                        break
            elif Quad.any((ln == ln)):
                v2 = np.int64(k2)
    if Wave.all((np.int32(ln & np.int32(15)) == np.int32(1))):
        out[g, 1] = np.int64(v0)
        for k4 in range(np.int32(np.int32(ln | ln) & np.int32(1))):
            v2 = np.int64(np.int64(Wave.prefixMax(v2) - Quad.swapHorizontal(k4)))
            w5 = np.int32(0)
            while w5 < np.int32(ln & np.int32(3)):
                w5 = np.int32(w5 + np.int32(1))
                if (not (np.float64(-1.5) <= np.float64(0.0))) and Wave.all((np.float64(1.0) > np.float64(-1.5))):
                    if (np.int32(ln & np.int32(31)) == np.int32(5)) and (np.int32(ln & np.int32(31)) >= np.int32(6)):
                        break
                    if (np.int32(ln & np.int32(1)) < np.int32(6)) or (np.int32(12345678) == ln):
                        break
                    v0 = np.uint32(np.uint32(v1 | v0))
                elif Quad.all((k4 > k4)):
                    v0 = np.uint32(v0)
                    if Wave.any((k4 == k4)):
                        break
                    v2 = np.int64(np.int64(k4 & np.int64(-1)))
                elif np.int32(ln ^ ln) == ln:
                    v2 = np.int64(np.int64(0))
                    out[g, 2] = np.int64(v2)
                    if not (np.int32(3) > np.int32(2147483647)):
                        continue
                elif Wave.any(Wave.any((v0 <= v1))):
                    v1 = np.uint32(Wave.prefixSum(np.uint32(v0 & v0)))
                    out[g, 3] = np.int64(v0)
                    out[g, 4] = np.int64(v1)
                elif np.int64(k4 - v2) <= np.int64(65535):
                    v1 = np.uint32(Wave.prefixCountBits((v2 <= k4)))
                    if Wave.any((ln > ln)):
                        break
                out[g, 5] = np.int64(v2)
            v0 = np.uint32(np.uint32(np.uint32(65535) ^ v0))
            if ((np.int32(ln & np.int32(15)) == np.int32(0)) or (np.int32(ln & np.int32(3)) != np.int32(2))) or (
                (v2 <= v2) and (ln > ln)
            ):
                w6 = np.int32(0)
                while w6 < np.int32(Wave.prefixSum(ln) & np.int32(1)):
                    w6 = np.int32(w6 + np.int32(1))
                    v0 = np.uint32(v0)
                    v0 = np.uint32(np.uint32(4294967293))
                out[g, 6] = np.int64(v0)
        if Wave.all(((np.float32(-1.5) < np.float32(-1.5)) and (np.float64(3.0) != np.float64(7.5)))):
            v0 = np.uint32(
                (np.uint32(v0 - np.uint32(2147483648)) if Wave.all((np.float64(1e30) == np.float64(1.0))) else v1)
            )
            out[g, 7] = np.int64(v1)
            out[g, 8] = np.int64(v0)
        else:
            v0 = np.uint32(Wave.countBits(Quad.all((ln > np.int32(2147483647)))))
    else:
        v1 = np.uint32(np.uint32(v1 * v1))
    if ln <= np.int32(ln | ln):
        v0 = np.uint32(
            (
                np.uint32(v0 | v1)
                if Quad.any((v1 == np.uint32(12345678)))
                else (np.uint32(7) if (np.int32(ln & np.int32(31)) == np.int32(0)) else v0)
            )
        )
    elif Quad.all((ln > ln)):
        v2 = np.int64((v2 if (ln == np.int32(0)) else v2))
        w7 = np.int32(0)
        while w7 < np.int32(np.int32(ln * ln) & np.int32(3)):
            w7 = np.int32(w7 + np.int32(1))
            v1 = np.uint32(Wave.prefixMin(v0))
            for k8 in range(np.int32((ln if (np.float32(-0.0) < np.float32(0.25)) else ln) & np.int32(3))):
                if (np.float32(1.0000000150474662e30) <= np.float32(0.25)) or Wave.all(
                    (np.float32(0.0) != np.float32(-0.0))
                ):
                    v0 = np.uint32(Wave.prefixMin(v1))
                    v2 = np.int64(Wave.reduceProduct(np.int64(k8 | v2)))
                else:
                    out[g, 9] = np.int64(v0)
                    if np.int32(ln & np.int32(15)) < np.int32(5):
                        break
                out[g, 10] = np.int64(v0)
            v0 = np.uint32(np.uint32(v1 - np.uint32(v0 - v0)))
    elif np.uint32(v1 * v0) != np.uint32(np.float64(0.25)):
        v1 = np.uint32((v1 if (ln > ln) else v1))
        v1 = np.uint32(np.uint32(v0))
    elif (ln != ln) or Quad.all((np.float32(3.0) < np.float32(1.0000000150474662e30))):
        v2 = np.int64(Wave.shuffle(v2, Wave.prefixMin(v2)))
    else:
        v0 = np.uint32(v0)
    out[g, 11] = np.int64(v0)
    for k9 in range(np.int32(np.int32(1) & np.int32(3))):
        out[g, 12] = np.int64(v0)
        v1 = np.uint32(v0)
        v1 = np.uint32(v0)
        if ln != ln:
            break
    v1 = np.uint32(np.uint32(Wave.prefixCountBits((np.int32(ln & np.int32(7)) != np.int32(3))) + np.uint32(v0 | v0)))
    if (np.int32(ln & np.int32(31)) >= np.int32(2)) and (np.int64(7) <= np.int64(100)):
        return
    out[g, 13] = np.int64(v0)
    out[g, 14] = np.int64(v1)
    out[g, 15] = np.int64(v2)
