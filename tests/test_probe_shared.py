"""What a probe of atomics, shared memory and records found (twenty-fourth session):
numba.cuda's vote and match functions evaluated their predicate or value twice on
the CPU and python targets (an atomic there ran twice: a silent wrong count), a
shuffle of an atomic's result was refused with internal names, dynamic shared
memory of a record dtype was refused, and a ``.view(dtype)`` of a shared array was
taken for a lane-varying array across a barrier. Expected values come from
numba.cuda's documented semantics; outputs are poisoned first.
"""

import numpy as np
import pytest
from numba import cuda

from numquad import xpu


@xpu.jit
def k_votes(a, shf, eq, al, mall, bal):
    i = cuda.grid(1)
    shf[i] = cuda.shfl_sync(0xFFFFFFFF, cuda.atomic.add(a, 0, 1), 0)
    eq[i] = cuda.eq_sync(0xFFFFFFFF, cuda.atomic.add(a, 1, 1) >= 0)
    al[i] = cuda.all_sync(0xFFFFFFFF, cuda.atomic.add(a, 2, 1) >= 0)
    m, e = cuda.match_all_sync(0xFFFFFFFF, cuda.atomic.add(a, 3, 1) * 0)
    mall[i] = m + 10 * e
    bal[i] = cuda.ballot_sync(0xFFFFFFFF, cuda.atomic.add(a, 4, 1) % 2 == 0)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_warp_function_evaluates_its_arguments_once(target, rng):
    start = rng.integers(0, 100, 5)
    a = start.copy()
    outs = [np.full(64, -7, np.int64) for _ in range(5)]
    getattr(k_votes, target)[2, 32](a, *outs)
    # one atomic per thread and argument: 64 threads (eq_sync's ran twice, match_all's
    # value twice)
    np.testing.assert_array_equal(a, start + 64)
    shf, eq, al, mall, bal = outs
    assert set(shf[:32]) | set(shf[32:]) <= set(range(start[0], start[0] + 64))
    assert len(set(shf[:32])) == 1 and len(set(shf[32:])) == 1 and shf[0] != shf[32]
    np.testing.assert_array_equal(eq, 1)
    np.testing.assert_array_equal(al, 1)
    np.testing.assert_array_equal(mall, -1 + 10)  # int32(0xffffffff), True
    # ballot of the parity of the old values: 16 of each 32 distinct consecutive values
    assert all(bin(int(b) & 0xFFFFFFFF).count("1") == 16 for b in bal)


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_shuffle_of_a_complex_value_names_shfl_sync(target):
    from numquad import NumquadCompileError, NumquadTypeError

    @xpu.jit
    def k(a, out):
        i = cuda.grid(1)
        out[i] = cuda.shfl_sync(0xFFFFFFFF, a[i], 0)

    a = np.zeros(32, np.complex64)
    with pytest.raises((NumquadTypeError, NumquadCompileError)) as e:
        getattr(k, target)[1, 32](a, a.copy())
    assert "complex64" in str(e.value) and f'File "{__file__}", line' in str(e.value)
    if target == "python":
        # (the CPU target keeps a value without calls as the op's operand, so the op's
        # own check speaks first there: "Wave.shuffle(value, srcLane): ... complex64")
        assert "cuda.shfl_sync: value got complex64" in str(e.value)


REC = np.dtype([("a", np.int32), ("b", np.float64)], align=True)


@xpu.jit
def k_dyn_record(out, x):
    d = cuda.shared.array(0, REC)
    t = cuda.threadIdx.x
    d[t].a = t
    d[t].b = x[t]
    cuda.syncthreads()
    out[t] = d[31 - t].a + d[31 - t].b


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_dynamic_shared_memory_of_a_record_dtype(target, rng):
    x = rng.random(32)
    out = np.full(32, np.nan)
    getattr(k_dyn_record, target)[1, 32, 0, 32 * REC.itemsize](out, x)
    np.testing.assert_array_equal(out, np.arange(32)[::-1] + x[::-1])


def test_dynamic_shared_memory_of_a_record_dtype_compiles_for_cuda():
    assert ".shared" in k_dyn_record.inspect_ptx("void(float64[:], float64[:])", cc=(9, 0))


@xpu.jit
def k_views(inp, out):
    raw = cuda.shared.array(0, np.uint8)
    f = raw.view(np.float32)  # the same view in every lane
    g = raw[32:64].view(np.int32)
    t = cuda.threadIdx.x
    if t < 8:
        f[t] = inp[t]
        g[t] = t * 3
    cuda.syncthreads()
    o = out.view(np.int32)
    if t < 8:
        out[t] = f[7 - t] + g[7 - t]
    cuda.syncthreads()
    if t == 0:
        o[8] = 12345


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_view_of_a_shared_array_lives_across_a_barrier(target, rng):
    inp = rng.random(8).astype(np.float32)
    out = np.full(9, np.nan, np.float32)
    getattr(k_views, target)[1, 32, 0, 64](inp, out)
    want = inp[::-1] + (np.arange(8)[::-1] * 3).astype(np.float32)
    np.testing.assert_array_equal(out[:8], want)
    assert out[8:].view(np.int32)[0] == 12345


@xpu.jit
def k_static_and_dynamic(out):
    s = cuda.shared.array(5000, np.float64)  # 40,000 bytes
    d = cuda.shared.array(0, np.uint8)
    t = cuda.threadIdx.x
    s[t] = t
    d[t] = 1
    out[t] = s[t] + len(d)


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_static_and_dynamic_shared_memory_over_48_kib_is_a_launch_error(target):
    from numquad import NumquadLaunchError

    out = np.full(32, np.nan)
    with pytest.raises(NumquadLaunchError, match="49152 per block in all"):
        getattr(k_static_and_dynamic, target)[1, 32, 0, 20000](out)
    getattr(k_static_and_dynamic, target)[1, 32, 0, 9152](out)  # 49,152 in all
    np.testing.assert_array_equal(out, np.arange(32) + 9152)


def test_one_name_for_two_shared_arrays_of_one_shape_says_why():
    from numquad import NumquadCompileError

    @xpu.jit
    def k(out):
        t = cuda.threadIdx.x
        if t < 16:
            s = cuda.shared.array(32, np.int32)
            s[t] = t
        else:
            s = cuda.shared.array(32, np.int32)
            s[t] = -t
        out[t] = s[t]

    with pytest.raises(NumquadCompileError) as e:
        k.cpu[1, 32](np.zeros(32, np.int64))
    msg = str(e.value)
    assert "one shared array per name" in msg and "different shapes" not in msg
    assert f"line {k.firstlineno + 7}" in msg
