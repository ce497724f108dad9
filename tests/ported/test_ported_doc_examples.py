"""Ported from numba-cuda 0.30.4 numba/cuda/tests/doc_examples/ (see _port.py):
test_matmul.py, test_reduction.py, test_vecadd.py, test_globals.py,
test_cpu_gpu_compat.py. Adapted: @cuda.jit -> @self.jit, cuda.to_device(a) -> a
(lists -> NumPy arrays), copy_to_host() -> the array; prints dropped. Left out:
doc_examples/test_laplace.py (a grid barrier, cooperative groups), test_cg,
test_ffi, test_cpointer, test_sessionize (host-side APIs). test_ufunc.py is ported
(a ufunc writing into the output a kernel passes). test_random.py and
test_montecarlo.py (``numba.cuda.random``) are ported with the states made on the
host (``create_xoroshiro128p_states(n, seed)`` -> ``_host_states(n, seed)``: the
states it copies to a GPU), ``cuda.reduce`` -> ``np.sum``, and test_random's array
shrunk from 701 x 900 x 719 to 70 x 90 x 71 (and its grid from 16^3 to 4^3 blocks).
"""

import pytest
import math

import numpy as np
from numba import cuda

from _port import PortedCase, on_cuda


class TestDocMatmul(PortedCase):
    @pytest.mark.slow
    def test_matmul(self):
        from numba.cuda import float32

        @self.jit
        def matmul(A, B, C):
            """Perform square matrix multiplication of C = A * B."""
            i, j = cuda.grid(2)
            if i < C.shape[0] and j < C.shape[1]:
                tmp = 0.0
                for k in range(A.shape[1]):
                    tmp += A[i, k] * B[k, j]
                C[i, j] = tmp

        x_h = np.arange(16).reshape([4, 4])
        y_h = np.ones([4, 4])
        z_h = np.zeros([4, 4])

        threadsperblock = (16, 16)
        blockspergrid_x = math.ceil(z_h.shape[0] / threadsperblock[0])
        blockspergrid_y = math.ceil(z_h.shape[1] / threadsperblock[1])
        blockspergrid = (blockspergrid_x, blockspergrid_y)

        matmul[blockspergrid, threadsperblock](x_h, y_h, z_h)
        assert np.all(z_h == x_h @ y_h)

        # Controls threads per block and shared memory usage.
        # The computation will be done on blocks of TPBxTPB elements.
        # TPB should not be larger than 32 in this example
        TPB = 16

        @self.jit
        def fast_matmul(A, B, C):
            # Define an array in the shared memory
            # The size and type of the arrays must be known at compile time
            sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
            sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)

            x, y = cuda.grid(2)

            tx = cuda.threadIdx.x
            ty = cuda.threadIdx.y
            bpg = cuda.gridDim.x  # blocks per grid

            # Each thread computes one element in the result matrix.
            # The dot product is chunked into dot products of TPB-long vectors.
            tmp = float32(0.0)
            for i in range(bpg):
                # Preload data into shared memory
                sA[ty, tx] = 0
                sB[ty, tx] = 0
                if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
                    sA[ty, tx] = A[y, tx + i * TPB]
                if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
                    sB[ty, tx] = B[ty + i * TPB, x]

                # Wait until all threads finish preloading
                cuda.syncthreads()

                # Computes partial product on the shared memory
                for j in range(TPB):
                    tmp += sA[ty, j] * sB[j, tx]

                # Wait until all threads finish computing
                cuda.syncthreads()
            if y < C.shape[0] and x < C.shape[1]:
                C[y, x] = tmp

        x_h = np.arange(16).reshape([4, 4])
        y_h = np.ones([4, 4])
        z_h = np.zeros([4, 4])

        threadsperblock = (TPB, TPB)
        blockspergrid_x = math.ceil(z_h.shape[0] / threadsperblock[0])
        blockspergrid_y = math.ceil(z_h.shape[1] / threadsperblock[1])
        blockspergrid = (blockspergrid_x, blockspergrid_y)

        fast_matmul[blockspergrid, threadsperblock](x_h, y_h, z_h)

        # fast_matmul test(s)
        assert np.all(z_h == x_h @ y_h), "fast_matmul incorrect for shared memory, square case."

        x_h = np.arange(115).reshape([5, 23])
        y_h = np.ones([23, 7])
        z_h = np.zeros([5, 7])

        threadsperblock = (TPB, TPB)
        grid_y_max = max(x_h.shape[0], y_h.shape[0])
        grid_x_max = max(x_h.shape[1], y_h.shape[1])
        blockspergrid_x = math.ceil(grid_x_max / threadsperblock[0])
        blockspergrid_y = math.ceil(grid_y_max / threadsperblock[1])
        blockspergrid = (blockspergrid_x, blockspergrid_y)

        fast_matmul[blockspergrid, threadsperblock](x_h, y_h, z_h)

        # nonsquare fast_matmul test(s)
        assert np.all(z_h == x_h @ y_h), "fast_matmul incorrect for shared memory, non-square case."


class TestDocReduction(PortedCase):
    @pytest.mark.slow
    def test_ex_reduction(self):
        from numba.cuda.types import int32

        a = np.arange(1024)
        nelem = len(a)

        @self.jit
        def array_sum(data):
            tid = cuda.threadIdx.x
            size = len(data)
            if tid < size:
                i = cuda.grid(1)

                # Declare an array in shared memory
                shr = cuda.shared.array(nelem, int32)
                shr[tid] = data[i]

                # Ensure writes to shared memory are visible
                # to all threads before reducing
                cuda.syncthreads()

                s = 1
                while s < cuda.blockDim.x:
                    if tid % (2 * s) == 0:
                        # Stride by `s` and add
                        shr[tid] += shr[tid + s]
                    s *= 2
                    cuda.syncthreads()

                # After the loop, the zeroth  element contains the sum
                if tid == 0:
                    data[tid] = shr[tid]

        array_sum[1, nelem](a)
        np.testing.assert_equal(a[0], sum(np.arange(1024)))


class TestDocVecAdd(PortedCase):
    def test_ex_vecadd(self):
        @self.jit
        def f(a, b, c):
            # like threadIdx.x + (blockIdx.x * blockDim.x)
            tid = cuda.grid(1)
            size = len(c)

            if tid < size:
                c[tid] = a[tid] + b[tid]

        np.random.seed(1)

        N = 100000

        a = np.random.random(N)
        b = np.random.random(N)
        c = np.zeros_like(a)

        f.forall(len(a))(a, b, c)
        np.testing.assert_equal(c, a + b)

        # Enough threads per block for several warps per block
        nthreads = 256
        # Enough blocks to cover the entire vector depending on its length
        nblocks = (len(a) // nthreads) + 1
        c[:] = np.nan
        f[nblocks, nthreads](a, b, c)

        np.testing.assert_equal(c, a + b)


class TestDocGlobals(PortedCase):
    def test_ex_globals_constant_capture(self):
        TAX_RATE = 0.08
        PRICES = np.array([10.0, 25.0, 5.0, 15.0, 30.0], dtype=np.float64)

        @self.jit
        def compute_totals(quantities, totals):
            i = cuda.grid(1)
            if i < totals.size:
                totals[i] = quantities[i] * PRICES[i] * (1 + TAX_RATE)

        d_quantities = np.array([1, 2, 3, 4, 5], dtype=np.float64)
        d_totals = np.zeros(5, dtype=np.float64)

        # First kernel call - compiles and captures values
        compute_totals[1, 32](d_quantities, d_totals)

        # These modifications have no effect on subsequent kernel calls
        TAX_RATE = 0.10  # noqa: F841
        PRICES[:] = [20.0, 50.0, 10.0, 30.0, 60.0]

        # Second kernel call still uses the original values
        compute_totals[1, 32](d_quantities, d_totals)

        # Expected: [10.8, 54.0, 16.2, 64.8, 162.0] (original values)
        expected = np.array([10.8, 54.0, 16.2, 64.8, 162.0])
        np.testing.assert_allclose(d_totals, expected)


class TestDocCpuGpuCompat(PortedCase):
    @pytest.mark.slow
    def test_ex_cpu_gpu_compat(self):
        from math import pi

        import numba

        X = np.array([1, 10, 234])
        Y = np.array([2, 2, 4014])
        Z = np.array([3, 14, 2211])
        results = np.array([0.0, 0.0, 0.0])

        @numba.jit
        def business_logic(x, y, z):
            return 4 * z * (2 * x - (4 * y) / 2 * pi)

        @self.jit
        def f(res, xarr, yarr, zarr):
            tid = cuda.grid(1)
            if tid < len(xarr):
                # The function decorated with numba.jit may be directly reused
                res[tid] = business_logic(xarr[tid], yarr[tid], zarr[tid])

        f.forall(len(X))(results, X, Y, Z)

        expect = [business_logic(x, y, z) for x, y, z in zip(X, Y, Z)]
        np.testing.assert_equal(expect, results)


class TestDocUFunc(PortedCase):
    @pytest.mark.slow
    def test_ex_cuda_ufunc_call(self):
        # A kernel calling a ufunc (sin, in this case)
        @self.jit
        def f(r, x):
            # Compute sin(x) with result written to r
            np.sin(x, r)

        # Declare input and output arrays
        x = np.arange(10, dtype=np.float32) - 5
        r = np.zeros_like(x)

        # Launch kernel that calls the ufunc
        f[1, 1](r, x)

        # A quick sanity check demonstrating equality of the sine computed by
        # the sin ufunc inside the kernel, and NumPy's sin ufunc
        np.testing.assert_allclose(r, np.sin(x))


def _host_states(n, seed):
    """numba.cuda's ``create_xoroshiro128p_states(n, seed)`` without the copy to a
    GPU: the same states, made on the host as it makes them."""
    from numba.cuda.random import init_xoroshiro128p_states_cpu, xoroshiro128p_dtype

    states = np.empty(n, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(states, seed, 0)
    return states


class TestDocRandom(PortedCase):
    def test_ex_3d_grid(self):
        from numba.cuda.random import xoroshiro128p_uniform_float32

        @self.jit
        def random_3d(arr, rng_states):
            # Per-dimension thread indices and strides
            startx, starty, startz = cuda.grid(3)
            stridex, stridey, stridez = cuda.gridsize(3)

            # Linearized thread index
            tid = (startz * stridey * stridex) + (starty * stridex) + startx

            # Use strided loops over the array to assign a random value to each entry
            for i in range(startz, arr.shape[0], stridez):
                for j in range(starty, arr.shape[1], stridey):
                    for k in range(startx, arr.shape[2], stridex):
                        arr[i, j, k] = xoroshiro128p_uniform_float32(rng_states, tid)

        # Array dimensions
        X, Y, Z = 70, 90, 71

        # Block and grid dimensions
        bx, by, bz = 8, 8, 8
        gx, gy, gz = 4, 4, 4

        # Total number of threads
        nthreads = bx * by * bz * gx * gy * gz

        # Initialize a state for each thread
        rng_states = _host_states(nthreads, seed=1)

        # Generate random numbers
        arr = np.full((X, Y, Z), np.nan, dtype=np.float32)
        random_3d[(gx, gy, gz), (bx, by, bz)](arr, rng_states)

        # Some basic tests of the randomly-generated numbers
        host_arr = arr
        self.assertGreater(np.mean(host_arr), 0.49)
        self.assertLess(np.mean(host_arr), 0.51)
        self.assertTrue(np.all(host_arr <= 1.0))
        self.assertTrue(np.all(host_arr >= 0.0))


class TestDocMonteCarlo(PortedCase):
    def test_ex_montecarlo(self):
        import numba
        from numba.cuda.random import xoroshiro128p_uniform_float32

        # number of samples, higher will lead to a more accurate answer
        nsamps = 1000000

        @self.jit
        def mc_integrator_kernel(out, rng_states, lower_lim, upper_lim):
            """
            kernel to draw random samples and evaluate the function to
            be integrated at those sample values
            """
            size = len(out)

            gid = cuda.grid(1)
            if gid < size:
                # draw a sample between 0 and 1 on this thread
                samp = xoroshiro128p_uniform_float32(rng_states, gid)

                # normalize this sample to the limit range
                samp = samp * (upper_lim - lower_lim) + lower_lim

                # evaluate the function to be
                # integrated at the normalized
                # value of the sample
                y = func(samp)
                out[gid] = y

        def sum_reduce(a):
            return np.sum(a)

        def mc_integrate(lower_lim, upper_lim, nsamps):
            """
            approximate the definite integral of `func` from
            `lower_lim` to `upper_lim`
            """
            out = np.zeros(nsamps, dtype="float32")
            rng_states = _host_states(nsamps, seed=42)

            # jit the function for use in CUDA kernels

            mc_integrator_kernel.forall(nsamps)(out, rng_states, lower_lim, upper_lim)
            # normalization factor to convert
            # to the average: (b - a)/(N - 1)
            factor = (upper_lim - lower_lim) / (nsamps - 1)

            return sum_reduce(out) * factor

        # define a function to integrate
        @numba.jit
        def func(x):
            return 1.0 / x

        # values computed independently using maple
        np.testing.assert_allclose(mc_integrate(1, 2, nsamps), 0.69315, atol=0.001)
        np.testing.assert_allclose(mc_integrate(2, 3, nsamps), 0.4055, atol=0.001)


TestDocMatmulOnCuda = on_cuda(TestDocMatmul)
TestDocReductionOnCuda = on_cuda(TestDocReduction)
TestDocVecAddOnCuda = on_cuda(TestDocVecAdd)
TestDocGlobalsOnCuda = on_cuda(TestDocGlobals)
TestDocCpuGpuCompatOnCuda = on_cuda(TestDocCpuGpuCompat)
TestDocUFuncOnCuda = on_cuda(TestDocUFunc)
TestDocRandomOnCuda = on_cuda(TestDocRandom)
TestDocMonteCarloOnCuda = on_cuda(TestDocMonteCarlo)
