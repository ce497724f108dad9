"""A random kernel from an independent generator (a probe of the thirtieth session,
seed 0): nested lane-dependent control flow around cross-lane ops, a lane function
and a numba.cuda device function. benchmarks/bench_compile_large.py times its compile."""

import numpy as np
from numba import cuda
from numquad import xpu, Wave, Quad


@xpu.jit
def lf0(p0, p1):
    ln = np.int32(cuda.laneid)
    t0 = np.int32(p1)
    t1 = np.int64(p1)
    t2 = np.uint32(p1)
    t3 = np.float32(p1)
    t4 = np.float64(p1)
    t1 = np.int64(t1)
    t2 = np.uint32(Wave.prefixAnd(np.uint32(7)))
    t0 = np.int32(Quad.swapVertical((ln if (t0 < ln) else t0)))
    if np.int32(ln & np.int32(3)) == np.int32(2):
        return np.float64((np.int32(-3) if (t3 < t3) else ln))
    t2 = np.uint32(t2)
    t2 = np.uint32(t2)
    return np.float64(np.float64((np.float64(0.25) if (ln != ln) else np.float64(-0.0)) + Wave.readFirst(t4)))


@cuda.jit(device=True)
def df0(p0, p1):
    ln = np.int32(cuda.laneid)
    t0 = np.int32(p1)
    t1 = np.int64(p0)
    t2 = np.uint32(p0)
    t3 = np.float32(p1)
    t4 = np.float64(p0)
    t0 = np.int32((t0 if (t0 != t0) else ln))
    t0 = np.int32(np.int32(ln - t0))
    t0 = np.int32(
        np.int32(
            ln
            * np.int32(
                np.int32(np.uint32(cuda.ballot_sync(cuda.activemask(), (np.uint32(100) == t2)))) | np.int32(t0 ^ ln)
            )
        )
    )
    if not (t4 <= t4):
        t0 = np.int32((np.int32(ln * ln) if Quad.all((t3 > t3)) else np.int32(cuda.activemask())))
        if np.int32(ln & np.int32(1)) < np.int32(3):
            return np.int32(
                np.int32(np.float64(0.0))
                - np.int32(np.uint32(cuda.ballot_sync(cuda.activemask(), (np.int32(ln & np.int32(1)) >= np.int32(4)))))
            )
        t3 = np.float32(
            (
                (np.float32(t3 * t3) if Wave.any((np.int32(31) <= np.int32(31))) else np.float32(t3 + t3))
                if (not (np.int32(ln & np.int32(15)) != np.int32(0)))
                else (t3 if (t4 > t4) else t3)
            )
        )
        t4 = np.float64(t4)
    return np.int32(np.int32(np.uint32(t4)))


@xpu.jit
def kern(xi, xf, out, outf, n):
    tid = cuda.threadIdx.x + cuda.threadIdx.y * cuda.blockDim.x
    g = cuda.blockIdx.x * (cuda.blockDim.x * cuda.blockDim.y) + tid
    ln = np.int32(tid & 31)
    v0 = np.uint32(xi[g, 0])
    v1 = np.float32(xf[g, 1])
    v2 = np.float64(xf[g, 2])
    v3 = np.int64(xi[g, 3])
    v4 = np.uint32(xi[g, 4])
    v5 = np.int32(xi[g, 5])
    v0 = np.uint32(v0)
    if Quad.all((v5 == ln)):
        return
    v3 = np.int64(Wave.shuffleXor(v3, ln))
    for k1 in range(np.int32(ln & np.int32(7))):
        out[g, 0] = np.int64(v3)
        v5 = np.int32(ln)
        v2 = np.float64(np.float64(np.uint32(12345678)))
    v4 = np.uint32(np.uint32(np.uint32(np.uint32(2147483648) + v0) & v4))
    outf[g, 0] = np.float64(v1)
    if v4 == v0:
        for k2 in range(np.int32(Quad.swapHorizontal(v5) & np.int32(7))):
            v1 = np.float32(np.float32(Wave.prefixMin(v1) - np.float32(Wave.shuffle(v1, np.int32(8)) - v1)))
            if np.int64(-3) == v3:
                return
            v5 = np.int32(
                np.int32(
                    np.uint32(cuda.ballot_sync(cuda.activemask(), Wave.any((np.float64(7.5) == np.float64(-0.0)))))
                )
            )
            v1 = np.float32(np.float32(v1 + v1))
        v2 = np.float64(np.float64(np.int64(v3 * v3)))
        outf[g, 1] = np.float64(v1)
        out[g, 1] = np.int64(v4)
    if np.int32(ln & np.int32(7)) < np.int32(5):
        v0 = np.uint32(np.uint32(Wave.reduceMin(Wave.readFirst(v1))))
        v1 = np.float32(
            (Wave.reduceMin(np.float32(0.0)) if Wave.all((v5 < ln)) else (v1 if (v5 <= ln) else np.float32(1.0)))
        )
    else:
        v0 = np.uint32(np.uint32(v1))
    for k3 in range(np.int32(np.int32(ln * ln) & np.int32(1))):
        if Wave.any((k3 == k3)):
            break
    if (v2 if (ln > ln) else v2) > Wave.prefixMax(v2):
        out[g, 2] = np.int64(v3)
        v2 = np.float64(np.float64(v2 + np.float64(np.float64(v3) + np.float64(np.int32(100)))))
    elif np.int32(ln & np.int32(31)) != np.int32(6):
        v4 = np.uint32(np.uint32(np.int64(v2)))
        if Wave.prefixMin(v1) <= np.float32(v1 + v1):
            outf[g, 2] = np.float64(v2)
            if (v0 < v4) and (v3 == np.int64(7)):
                return
            v1 = np.float32(Wave.reduceMax(Wave.prefixMax(v1)))
        elif Quad.all(((np.int32(ln & np.int32(3)) >= np.int32(6)) and (np.int32(ln & np.int32(1)) < np.int32(4)))):
            out[g, 3] = np.int64(v4)
            v3 = np.int64(np.int64(v3))
        elif np.float64(-1.5) > np.float64(3.0):
            for k4 in range(np.int32(np.int32(v5 + v5) & np.int32(3))):
                out[g, 4] = np.int64(v5)
                for k5 in range(np.int32(v5 & np.int32(7))):
                    v2 = np.float64(Wave.prefixMax(np.float64(ln)))
                    v0 = np.uint32(v4)
                v0 = np.uint32(Wave.prefixCountBits(Quad.any((np.int32(ln & np.int32(7)) < np.int32(4)))))
                v1 = np.float32(np.float32(v1 + v1))
            out[g, 5] = np.int64(v5)
            out[g, 6] = np.int64(v3)
        else:
            for k6 in range(np.int32(np.int32(v1) & np.int32(7))):
                v3 = np.int64(np.int64(v3 & np.int64(7)))
                if not Wave.all((v5 > ln)):
                    if v5 != ln:
                        continue
                    v3 = np.int64(np.int64(k6 * v3))
                elif (k6 if (v0 != v4) else v3) != k6:
                    v2 = np.float64(
                        np.float64(np.float64(np.float64(np.float64(1.0) - v2) - np.float64(np.float64(7.5) - v2)))
                    )
                elif np.int32(ln & np.int32(15)) == np.int32(1):
                    v3 = np.int64(np.int64(k6 - np.int64(7)))
                    v0 = np.uint32(Quad.swapHorizontal(Wave.reduceSum(v0)))
                elif np.int64(cuda.shfl_sync(cuda.activemask(), np.float64(1.0), np.int32(17))) > k6:
                    v5 = np.int32(np.int32(v5 - v5))
                else:
                    v2 = np.float64(np.float64(np.float64(v2 + v2) + Wave.shuffleUp(v2, v3)))
            v1 = np.float32(Quad.swapVertical(Wave.prefixMax(Quad.broadcast(np.float32(0.25), np.int32(1)))))
        if Wave.all((v0 != v4)):
            if np.float32(v1 - v1) <= Quad.swapHorizontal(v1):
                out[g, 7] = np.int64(v5)
            out[g, 8] = np.int64(v3)
            for k7 in range(np.int32(Wave.shuffleXor(ln, ln) & np.int32(3))):
                v3 = np.int64(v3)
                v0 = np.uint32(Wave.broadcast(np.uint32(k7), np.int32(25)))
    else:
        v3 = np.int64(np.int64(np.int64(v3 ^ np.int64(-2147483648)) ^ v3))
        outf[g, 3] = np.float64(v2)
    if df0(v3, v3) < Wave.reduceMin(np.int32(2147483647)):
        v3 = np.int64(np.int64(v3 ^ v3))
        if Quad.all((v5 != ln)):
            if Wave.any((np.int32(ln & np.int32(31)) < np.int32(6))):
                return
            v2 = np.float64(np.float64(Wave.shuffleUp(v4, ln)))
            v5 = np.int32(
                Wave.reduceXor(
                    Wave.broadcast(
                        np.int32(cuda.shfl_xor_sync(cuda.activemask(), v3, np.int32(15))),
                        (np.int32(1) if (v5 <= np.int32(-2147483648)) else np.int32(2)),
                    )
                )
            )
            out[g, 9] = np.int64(v0)
    else:
        out[g, 10] = np.int64(v5)
        v3 = np.int64(np.int64(Wave.shuffleDown(np.int64(np.int64(2) & v3), np.int32(4)) & v3))
    v5 = np.int32(Quad.broadcast(np.int32(7), ln))
    v1 = np.float32(Quad.swapVertical(v1))
    v0 = np.uint32(Wave.countBits(Wave.all((np.int32(ln & np.int32(15)) == np.int32(2)))))
    v5 = np.int32(Quad.swapVertical(ln))
    if Quad.any((v1 > v1)):
        v2 = np.float64(np.float64(np.float64(-1.5) - v2))
        if not (np.int32(ln & np.int32(15)) != np.int32(0)):
            return
        v5 = np.int32(Wave.reduceSum(v5))
    for k8 in range(np.int32(np.int32(ln | v5) & np.int32(7))):
        v4 = np.uint32((v4 if (ln < ln) else np.uint32(v0 * v0)))
    v1 = np.float32(
        np.float32(np.float32(np.float32(v3) + Wave.shuffleXor(v1, np.int32(0))) * Wave.reduceMax(np.float32(0.0)))
    )
    if np.int64(v3 | v3) != v3:
        v1 = np.float32(np.float32(v5))
    w9 = np.int32(0)
    while w9 < np.int32((np.int32(5) if (np.uint32(7) > v4) else v5) & np.int32(3)):
        w9 = np.int32(w9 + np.int32(1))
        out[g, 11] = np.int64(v0)
    for k10 in range(np.int32(Quad.broadcast(ln, v3) & np.int32(7))):
        for k11 in range(np.int32(df0(np.int64(7), k10) & np.int32(7))):
            for k12 in range(np.int32(np.int32(v5 | v5) & np.int32(7))):
                v2 = np.float64(np.float64(v3))
        out[g, 12] = np.int64(v3)
        out[g, 13] = np.int64(v5)
        v5 = np.int32(Wave.shuffleXor(ln, np.int32(8)))
    v2 = np.float64(Wave.reduceMin(lf0(np.int32(v5 - ln), np.uint32(cuda.activemask()))))
    if Quad.any((v1 != np.float32(1.0))):
        return
    out[g, 14] = np.int64(v0)
    outf[g, 4] = np.float64(v1)
    outf[g, 5] = np.float64(v2)
    out[g, 15] = np.int64(v3)
    out[g, 16] = np.int64(v4)
    out[g, 17] = np.int64(v5)
