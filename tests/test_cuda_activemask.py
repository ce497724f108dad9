"""``cuda.activemask()`` and numba.cuda's votes under lane-varying control flow.

numquad's rule (docs/semantics.md, "Which lanes take part"): ``activemask()`` names
the lanes of the wave that reach the call in the same iteration of the same
structured control flow. The python target (numquad/simt.py, an interpreter that
shares no code with the compiled targets) is the oracle; the CPU target in release
and debug builds and the CUDA target must give its bits, on random inputs with
poisoned outputs, in blocks with partial waves too.
"""

import numpy as np
import pytest

from numquad import Wave, xpu

cuda = pytest.importorskip("numba.cuda")

POISON = np.uint32(0xA5A5A5A5)


def am_branch(x, out):
    i = xpu.grid(1)
    if i < out.size:
        if x[i] > 0:
            out[i] = cuda.activemask()
        else:
            out[i] = cuda.activemask() ^ np.uint32(0xF0F0F0F0)


def am_loop(x, out):
    i = xpu.grid(1)
    if i < out.size:
        acc = np.uint32(0)
        for j in range(x[i]):
            if j == 1:
                continue
            acc = np.uint32(acc * np.uint32(3) + cuda.activemask())
        out[i] = acc


def am_while_break(x, out):
    i = xpu.grid(1)
    if i < out.size:
        acc = np.uint32(0)
        j = 0
        while True:
            j += 1
            if j > x[i]:
                break
            acc = np.uint32(acc ^ (cuda.activemask() >> np.uint32(j)))
        out[i] = acc


def am_early_return(x, out):
    i = xpu.grid(1)
    if i >= out.size:
        return
    out[i] = np.uint32(7)
    if x[i] < 0:
        return
    out[i] = cuda.activemask()


def votes_in_a_branch(x, out):
    i = xpu.grid(1)
    if i < out.size:
        if x[i] != 0:
            m = cuda.activemask()
            b = np.uint32(cuda.ballot_sync(m, x[i] > 1))
            a = np.uint32(cuda.all_sync(m, x[i] > -2))
            e = np.uint32(cuda.any_sync(m, x[i] == 3))
            out[i] = b ^ (a << np.uint32(1)) ^ (e << np.uint32(2)) ^ np.uint32(cuda.popc(m))
        else:
            out[i] = np.uint32(1)


def beside_a_wave_op(x, out):
    # a kernel with numquad's own ops too: the CUDA target computes masks here
    i = xpu.grid(1)
    if i < out.size:
        s = np.uint32(0)
        for j in range(x[i]):
            s = np.uint32(s + Wave.prefixSum(np.uint32(j)) + cuda.activemask())
        out[i] = s


KERNELS = [am_branch, am_loop, am_while_break, am_early_return, votes_in_a_branch, beside_a_wave_op]
TARGETS = [
    "cpu",
    "cpu-debug",
    pytest.param("cuda", marks=pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU")),
]


@pytest.mark.slow
@pytest.mark.parametrize("blocks,threads", [(2, 64), (3, 48), (1, 100)])
@pytest.mark.parametrize("fn", KERNELS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("target", TARGETS)
def test_activemask_names_the_lanes_that_reach_it_together(target, fn, blocks, threads, rng):
    k = xpu.jit(fn, debug=target == "cpu-debug")
    n = blocks * threads - 5  # a bounds guard leaves a tail inactive
    for _ in range(2):
        x = rng.integers(-2, 5, n).astype(np.int64)
        want = np.full(n, POISON, np.uint32)
        k.python[blocks, threads](x, want)
        got = np.full(n, POISON, np.uint32)
        if target == "cuda":
            d = cuda.to_device(got)
            k.cuda[blocks, threads](cuda.to_device(x), d)
            got = d.copy_to_host()
        else:
            k.cpu[blocks, threads](x, got)
        assert not (want == POISON).any()
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fn", KERNELS, ids=lambda f: f.__name__)
def test_activemask_is_the_computed_mask_in_ptx(fn):
    """On the GPU ``activemask()`` is numquad's mask, not the hardware's
    ``activemask.b32`` (which after a lane-varying loop with ``continue`` named
    other lanes on the H200 than the CPU and the interpreter did)."""
    pytest.importorskip("numba_cuda")
    for blockdim in (None, 64):
        ptx = xpu.jit(fn).inspect_ptx("void(int64[:], uint32[:])", cc=(9, 0), blockdim=blockdim)
        assert "activemask.b32" not in ptx and ".local" not in ptx
        assert "vote.sync.ballot" in ptx
