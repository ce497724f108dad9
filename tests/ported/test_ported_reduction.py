"""Ported from numba-cuda 0.30.4: the reduction kernels of numba/cuda/kernels/reduction.py
(``cuda.Reduce``) and their tests, numba/cuda/tests/cudapy/test_reduction.py (see _port.py).

Adapted: the kernel is built with ``xpu.jit`` (its device functions keep
``cuda.jit(device=True)``) and ``Reduce`` works on host arrays with numquad's
launches; the sizes of test_sum_reduce stop at 34567 (numba-cuda also runs 1M).
"""

import pytest
import numpy as np
from numba import cuda
from numba.cuda.np.numpy_support import from_dtype

from _port import PortedCase, on_cuda, jit_for

_WARPSIZE = 32
_NUMWARPS = 4


def _gpu_reduce_factory(fn, nbtype, jit):
    reduce_op = cuda.jit(device=True)(fn)
    inner_sm_size = _WARPSIZE + 1  # plus one to avoid SM collision
    max_blocksize = _NUMWARPS * _WARPSIZE

    @cuda.jit(device=True)
    def inner_warp_reduction(sm_partials, init):
        """
        Compute reduction within a single warp
        """
        tid = cuda.threadIdx.x
        warpid = tid // _WARPSIZE
        laneid = tid % _WARPSIZE

        sm_this = sm_partials[warpid, :]
        sm_this[laneid] = init
        cuda.syncwarp()

        width = _WARPSIZE // 2
        while width:
            if laneid < width:
                old = sm_this[laneid]
                sm_this[laneid] = reduce_op(old, sm_this[laneid + width])
            cuda.syncwarp()
            width //= 2

    @cuda.jit(device=True)
    def device_reduce_full_block(arr, partials, sm_partials):
        tid = cuda.threadIdx.x
        blkid = cuda.blockIdx.x
        blksz = cuda.blockDim.x
        gridsz = cuda.gridDim.x

        # block strided loop to compute the reduction
        start = tid + blksz * blkid
        stop = arr.size
        step = blksz * gridsz

        # load first value
        tmp = arr[start]
        # loop over all values in block-stride
        for i in range(start + step, stop, step):
            tmp = reduce_op(tmp, arr[i])

        cuda.syncthreads()
        # inner-warp reduction
        inner_warp_reduction(sm_partials, tmp)

        cuda.syncthreads()
        # at this point, only the first slot for each warp in tsm_partials
        # is valid.

        # finish up block reduction
        # warning: this is assuming 4 warps.
        # assert numwarps == 4
        if tid < 2:
            sm_partials[tid, 0] = reduce_op(sm_partials[tid, 0], sm_partials[tid + 2, 0])
            cuda.syncwarp()
        if tid == 0:
            partials[blkid] = reduce_op(sm_partials[0, 0], sm_partials[1, 0])

    @cuda.jit(device=True)
    def device_reduce_partial_block(arr, partials, sm_partials):
        tid = cuda.threadIdx.x
        blkid = cuda.blockIdx.x
        blksz = cuda.blockDim.x
        warpid = tid // _WARPSIZE
        laneid = tid % _WARPSIZE

        size = arr.size
        # load first value
        tid = cuda.threadIdx.x
        value = arr[tid]
        sm_partials[warpid, laneid] = value

        cuda.syncthreads()

        if (warpid + 1) * _WARPSIZE < size:
            # fully populated warps
            inner_warp_reduction(sm_partials, value)
        else:
            # partially populated warps
            # NOTE: this uses a very inefficient sequential algorithm
            if laneid == 0:
                sm_this = sm_partials[warpid, :]
                base = warpid * _WARPSIZE
                for i in range(1, size - base):
                    sm_this[0] = reduce_op(sm_this[0], sm_this[i])

        cuda.syncthreads()
        # finish up
        if tid == 0:
            num_active_warps = (blksz + _WARPSIZE - 1) // _WARPSIZE

            result = sm_partials[0, 0]
            for i in range(1, num_active_warps):
                result = reduce_op(result, sm_partials[i, 0])

            partials[blkid] = result

    def gpu_reduce_block_strided(arr, partials, init, use_init):
        tid = cuda.threadIdx.x

        sm_partials = cuda.shared.array((_NUMWARPS, inner_sm_size), dtype=nbtype)
        if cuda.blockDim.x == max_blocksize:
            device_reduce_full_block(arr, partials, sm_partials)
        else:
            device_reduce_partial_block(arr, partials, sm_partials)
        # deal with the initializer
        if use_init and tid == 0 and cuda.blockIdx.x == 0:
            partials[0] = reduce_op(partials[0], init)

    return jit(gpu_reduce_block_strided)


class Reduce:
    """numba.cuda's Reduce on host arrays (numba/cuda/kernels/reduction.py)."""

    def __init__(self, functor, target="cpu"):
        self._functor = functor
        self._jit = jit_for(target)
        self._cache = {}

    def _compile(self, dtype):
        key = self._functor, dtype
        if key in self._cache:
            kernel = self._cache[key]
        else:
            kernel = _gpu_reduce_factory(self._functor, from_dtype(dtype), self._jit)
            self._cache[key] = kernel
        return kernel

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        # ensure 1d array
        if arr.ndim != 1:
            raise TypeError("only support 1D array")

        # adjust array size
        if size is not None:
            arr = arr[:size]

        init = arr.dtype.type(init)  # ensure the right type

        # return `init` if `arr` is empty
        if arr.size < 1:
            return init

        kernel = self._compile(arr.dtype)

        # Perform the reduction on the GPU
        blocksize = _NUMWARPS * _WARPSIZE
        size_full = (arr.size // blocksize) * blocksize
        size_partial = arr.size - size_full
        full_blockct = min(size_full // blocksize, _WARPSIZE * 2)

        # allocate size of partials array
        partials_size = full_blockct
        if size_partial:
            partials_size += 1
        partials = np.empty(shape=partials_size, dtype=arr.dtype)

        if size_full:
            # kernel for the fully populated threadblocks
            kernel[full_blockct, blocksize, stream](arr[:size_full], partials[:full_blockct], init, True)

        if size_partial:
            # kernel for partially populated threadblocks
            kernel[1, size_partial, stream](arr[size_full:], partials[full_blockct:], init, not full_blockct)

        if partials.size > 1:
            # finish up
            kernel[1, partials_size, stream](partials, partials, init, False)

        # handle return value
        if res is not None:
            res[:1] = partials[:1]
            return
        else:
            return partials[0]


def _add(a, b):
    return a + b


class TestReduction(PortedCase):
    def setUp(self):
        super().setUp()
        self.sum_reduce = Reduce(_add, self.target)

    def _sum_reduce(self, n):
        A = np.arange(n, dtype=np.float64) + 1
        expect = A.sum()
        got = self.sum_reduce(A)
        self.assertEqual(expect, got)

    @pytest.mark.slow
    def test_sum_reduce(self):
        test_sizes = [1, 15, 16, 17, 127, 128, 129, 1023, 1024, 1025, 1536, 34567]
        for n in test_sizes:
            self._sum_reduce(n)

    def test_empty_array_host(self):
        A = np.arange(0, dtype=np.float64) + 1
        expect = A.sum()
        got = self.sum_reduce(A)
        self.assertEqual(expect, got)

    @pytest.mark.slow
    def test_prod_reduce(self):
        prod_reduce = Reduce(lambda a, b: a * b, self.target)
        A = np.arange(64, dtype=np.float64) + 1
        expect = A.prod()
        got = prod_reduce(A, init=1)
        np.testing.assert_allclose(expect, got)

    @pytest.mark.slow
    def test_max_reduce(self):
        max_reduce = Reduce(lambda a, b: max(a, b), self.target)
        A = np.arange(3717, dtype=np.float64) + 1
        expect = A.max()
        got = max_reduce(A, init=0)
        self.assertEqual(expect, got)

    @pytest.mark.slow
    def test_non_identity_init(self):
        init = 3
        A = np.arange(10, dtype=np.float64) + 1
        expect = A.sum() + init
        got = self.sum_reduce(A, init=init)
        self.assertEqual(expect, got)

    @pytest.mark.slow
    def test_result_on_device(self):
        A = np.arange(10, dtype=np.float64) + 1
        got = np.zeros(1, dtype=np.float64)
        expect = A.sum()
        res = self.sum_reduce(A, res=got)
        self.assertIsNone(res)
        self.assertEqual(expect, got[0])


TestReductionOnCuda = on_cuda(TestReduction)
