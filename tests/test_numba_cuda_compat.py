"""numba.cuda code on numquad (docs/numba-cuda.md): device functions, named
constants for shapes, dynamic shared memory, constant memory and records, block
reductions, fences, match_*_sync, bit and math intrinsics, signatures and forall,
numba.cuda's type rules for warp functions, and one clear line for the rest.

Kernels are numba.cuda code with ``@xpu.jit``; inputs are random, outputs are
poisoned first, expected values come from NumPy. numba-cuda's own tests, ported,
are in tests/ported/.
"""

import inspect
import math
import re
import types as pytypes

import numba
import numba.cuda.extending  # noqa: F401  (overloads of numba.cuda's registry)
import numba.extending  # noqa: F401
import numpy as np
import pytest
from numba import cuda
from numba.core import types as ntypes
from numba.cuda import float32, float64, int32, void

from numquad import NumquadCompileError, NumquadLaunchError, NumquadTypeError, Quad, Wave, xpu

from conftest import TARGETS

POISON_F = np.float64(-7.25e9)


def launch(k, target, *config):
    return getattr(k, target)[config]


# ---------------------------------------------------------------------------
# 1. Device functions
# ---------------------------------------------------------------------------


@cuda.jit(device=True)
def dev_plain(a, b):
    return a * b + 1.0


@cuda.jit(float64(float64, float64), device=True, inline="always")
def dev_sig_inline(a, b):
    if a > b:
        return a
    else:
        return b


@cuda.jit("int32(int32, int32, int32, int32)", device=True)
def dev_rgba(r, g, b, a):
    return ((r & 0xFF) << 16) | ((g & 0xFF) << 8) | (b & 0xFF) | ((a & 0xFF) << 24)


@cuda.jit(device=True)
def dev_tid_plus(x):
    return x + cuda.threadIdx.x  # a thread builtin: inlined into the kernel


@cuda.jit(device=True)
def dev_nested(x):
    return dev_plain(x, 2.0) + dev_tid_plus(x)


@xpu.jit
def lane_sq(x):
    return x * x


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_device_functions_with_and_without_signatures(target, rng):
    @xpu.jit
    def k(x, y, out, ch, rgba):
        i = cuda.grid(1)
        if i < x.size:
            out[i, 0] = dev_plain(x[i], y[i])
            out[i, 1] = dev_sig_inline(x[i], y[i])
            out[i, 2] = dev_nested(x[i])
            out[i, 3] = lane_sq(x[i])
        if i == 0:
            rgba[0] = dev_rgba(ch[0], ch[1], ch[2], ch[3])  # float32 -> int32 by the signature

    n = 100
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    out = np.full((n, 4), POISON_F)
    rgba = np.zeros(1, np.int32)
    launch(k, target, 2, 64)(x, y, out, np.array([1.0, 2.0, 3.0, 4.0], np.float32), rgba)
    tid = np.arange(n) % 64
    np.testing.assert_allclose(out[:, 0], x * y + 1.0, rtol=1e-15)
    np.testing.assert_array_equal(out[:, 1], np.maximum(x, y))
    np.testing.assert_allclose(out[:, 2], x * 2.0 + 1.0 + x + tid, rtol=1e-14)
    np.testing.assert_array_equal(out[:, 3], x * x)
    assert rgba[0] == 0x04010203


@pytest.mark.slow
def test_device_function_signature_casts_arguments_and_result():
    # float32(float32): float64 arguments are converted, the result is float32 (numba.cuda)
    @cuda.jit("float32(float32)", device=True)
    def third(a):
        return a / 3

    @xpu.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = third(x[i])

    x = np.random.default_rng(5).standard_normal(40)
    out = np.full(40, POISON_F)
    k[1, 64](x, out)
    np.testing.assert_array_equal(out, (x.astype(np.float32) / np.float32(3)).astype(np.float64))


@cuda.jit(device=True)
def dev_block_sum(vals, n):
    # shared memory and a barrier inside a device function; n sizes it at the call site
    sm = cuda.shared.array(n, float64)
    t = cuda.threadIdx.x
    sm[t] = vals[cuda.grid(1)]
    cuda.syncthreads()
    s = 1
    while s < n:
        if t % (2 * s) == 0:
            sm[t] += sm[t + s]
        s *= 2
        cuda.syncthreads()
    return sm[0]


@cuda.jit(device=True)
def dev_local_poly(x, n, dtype, op):
    # a shape, a dtype and a function, all passed by the kernel
    c = cuda.local.array(n, dtype)
    for j in range(n):
        c[j] = j + 1
    acc = c[n - 1]
    for j in range(n - 2, -1, -1):
        acc = op(acc * x, c[j])
    return acc


@cuda.jit(device=True)
def add2(a, b):
    return a + b


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_device_functions_parametrised_by_the_call_site(target, rng):
    TPB = 64

    @xpu.jit
    def k(vals, sums, x, poly):
        i = cuda.grid(1)
        total = dev_block_sum(vals, TPB)
        if cuda.threadIdx.x == 0:
            sums[cuda.blockIdx.x] = total
        if i < x.size:
            poly[i] = dev_local_poly(x[i], 5, float64, add2)

    vals = rng.integers(-50, 50, 3 * TPB).astype(np.float64)
    x = rng.standard_normal(3 * TPB)
    sums, poly = np.full(3, POISON_F), np.full(3 * TPB, POISON_F)
    launch(k, target, 3, TPB)(vals, sums, x, poly)
    np.testing.assert_array_equal(sums, vals.reshape(3, TPB).sum(axis=1))
    np.testing.assert_allclose(poly, 1 + 2 * x + 3 * x**2 + 4 * x**3 + 5 * x**4, rtol=1e-12)


@cuda.jit("int64(int64)", device=True)
def dev_fact(n):
    if n <= 1:
        return 1
    return n * dev_fact(n - 1)


@pytest.mark.slow
def test_recursive_device_function(rng):
    @xpu.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = dev_fact(x[i])

    x = rng.integers(0, 15, 40)
    out = np.full(40, -1, np.int64)
    k[1, 64](x, out)
    np.testing.assert_array_equal(out, [math.factorial(v) for v in x])


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_a_cuda_jit_function_without_device_true_is_a_device_function(target, rng):
    """numba.cuda compiles a plain ``@cuda.jit`` function a kernel calls as a device
    function (tests/ported/test_ported_inline.py has numba-cuda's own tests); the CPU
    target refused it until the eighth session ("a kernel cannot call a kernel")."""

    @cuda.jit
    def plus1(x):
        return x + 1

    @cuda.jit
    def set_at(a, i, v):
        a[i] = v

    def make():
        @cuda.jit("int64(int64)", device=True)
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)  # through its closure cell

        return fib

    fib = make()

    @xpu.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            set_at(out, i, plus1(x[i]) * 100 + fib(x[i] % 12) + dev_fact(x[i] % 6))

    x = rng.integers(0, 40, 50)
    out = np.full(50, -1, np.int64)
    launch(k, target, 1, 64)(x, out)
    fibs = [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89]
    np.testing.assert_array_equal(out, [(v + 1) * 100 + fibs[v % 12] + math.factorial(v % 6) for v in x])


def test_external_functions_cannot_be_called_one_line():
    ext = cuda.declare_device("ext_fn", "int32(int32)")

    @xpu.jit
    def k2(x):
        x[0] = ext(x[0])

    with pytest.raises(NumquadCompileError, match=r"`ext` is an external function \(cuda.declare_device\)"):
        k2[1, 1](np.zeros(1, np.int32))


def test_device_function_shape_not_constant_is_one_line():
    @cuda.jit(device=True)
    def helper(x, n):
        buf = cuda.local.array(n, float64)
        buf[0] = x
        return buf[0]

    @xpu.jit
    def k(x, m):
        i = cuda.grid(1)
        x[i] = helper(x[i], m)

    with pytest.raises(NumquadCompileError, match=r"local\.array\(shape, dtype\): the shape must be a constant"):
        k[1, 32](np.zeros(32), 4)


# ---------------------------------------------------------------------------
# 2. Named constants for shapes
# ---------------------------------------------------------------------------

TPB = 16
SHAPE = (4, 8)
config = pytypes.ModuleType("config")
config.TPB = 8


def _named_constants_kernel():
    CLOSED = 12

    @xpu.jit
    def k(x, out):
        N = 16
        M = N * 2
        PAIR = (2, N)
        a = cuda.shared.array(TPB * 2, float64)  # global arithmetic
        b = cuda.shared.array(SHAPE, float64)  # global tuple
        c = cuda.shared.array(config.TPB, float64)  # module attribute
        d = cuda.shared.array(CLOSED, float64)  # closure
        e = cuda.local.array(M, float64)  # local constants
        f = cuda.local.array(PAIR, float64)
        t = cuda.threadIdx.x
        a[t] = x[t]
        b[t // 8, t % 8] = x[t] * 2
        if t < 8:
            c[t] = x[t] * 3
        if t < 12:
            d[t] = x[t] * 4
        for j in range(M):
            e[j] = j
        f[1, N - 1] = 5.0
        cuda.syncthreads()
        out[t] = a[31 - t] + b[(31 - t) // 8, (31 - t) % 8] + e[M - 1] + f[1, N - 1] + a.size + e.size
        if t < 8:
            out[t] += c[7 - t]
        if t < 12:
            out[t] += d[11 - t]

    return k


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_named_constants_for_shapes(target, rng):
    k = _named_constants_kernel()
    x = rng.standard_normal(32)
    out = np.full(32, POISON_F)
    launch(k, target, 1, 32)(x, out)
    r = x[::-1]
    want = r + 2 * r + 31 + 5 + 32 + 32
    want[:8] += 3 * x[:8][::-1]
    want[:12] += 4 * x[:12][::-1]
    np.testing.assert_allclose(out, want, rtol=1e-14)


def test_named_constants_for_shapes_compile_for_cuda():
    # numba.cuda itself takes only literals and global names as shapes; numquad's
    # CUDA target writes the folded constants into the source it hands over
    ptx = _named_constants_kernel().inspect_ptx((float64[::1], float64[::1]))
    shared = sorted(int(n) for n in re.findall(r"\.shared \.align \d+ \.b8 \S+\[(\d+)\]", ptx))
    assert shared == sorted([8 * 32, 8 * 32, 8 * 8, 8 * 12]), shared


# ---------------------------------------------------------------------------
# 3. Dynamic shared memory
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_dynamic_shared_memory_sized_by_the_launch(target, rng):
    @xpu.jit
    def k(x, out, sizes):
        f = cuda.shared.array(0, float32)
        t = cuda.threadIdx.x
        f[t] = x[cuda.grid(1)]
        cuda.syncthreads()
        out[cuda.grid(1)] = f[cuda.blockDim.x - 1 - t]
        if t == 0:
            sizes[cuda.blockIdx.x] = f.size

    for nthreads, extra in ((64, 0), (40, 24)):
        x = rng.standard_normal(2 * nthreads).astype(np.float32)
        out = np.full(2 * nthreads, np.float32(POISON_F))
        sizes = np.full(2, -1, np.int64)
        launch(k, target, 2, nthreads, 0, (nthreads + extra) * 4)(x, out, sizes)
        np.testing.assert_array_equal(out, x.reshape(2, nthreads)[:, ::-1].ravel())
        np.testing.assert_array_equal(sizes, nthreads + extra)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_dynamic_shared_arrays_alias_one_buffer(target, rng):
    # every shared.array(0, dtype) in a kernel views the same bytes (numba.cuda)
    @xpu.jit
    def k(x, bits, tail):
        f = cuda.shared.array(0, float32)
        u = cuda.shared.array(0, int32)
        d = cuda.shared.array(0, float64)
        t = cuda.threadIdx.x
        f[t] = x[t]
        cuda.syncthreads()
        bits[t] = u[t]
        if t == 0:
            half = d[16:]  # a view at an offset
            half[0] = 2.5
            cuda.syncthreads_count(1)
            tail[0] = f[32]
            tail[1] = f[33]
        else:
            cuda.syncthreads_count(1)

    x = rng.standard_normal(32).astype(np.float32)
    bits = np.full(32, -1, np.int32)
    tail = np.full(2, np.float32(POISON_F))
    launch(k, target, 1, 32, 0, 64 * 4)(x, bits, tail)
    np.testing.assert_array_equal(bits, x.view(np.int32))
    np.testing.assert_array_equal(tail, np.array([2.5]).view(np.float32))


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_dynamic_shared_views_at_offsets(target, rng):
    # several views of the one buffer, at offsets, as numba.cuda's docs show
    @xpu.jit
    def k(x, y, out):
        t = cuda.threadIdx.x
        n = cuda.blockDim.x
        f = cuda.shared.array(0, float32)
        a = f[:n]
        b = f[n : 2 * n]
        a[t] = x[t]
        b[t] = y[t]
        cuda.syncthreads()
        i = cuda.shared.array(0, int32)  # the same bytes, as int32
        out[t] = i[(t + 1) % n] ^ i[n + t]

    n = 48
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.full(n, -1, np.int32)
    launch(k, target, 1, n, 0, 2 * n * 4)(x, y, out)
    np.testing.assert_array_equal(out, np.roll(x.view(np.int32), -1) ^ y.view(np.int32))


@pytest.mark.slow
def test_dynamic_shared_memory_launch_checks():
    @xpu.jit
    def k(out):
        s = cuda.shared.array(0, int32)
        s[0] = 1
        out[0] = s.size

    @xpu.jit
    def k_size(out):
        s = cuda.shared.array(0, int32)
        out[0] = s.size

    for run in (k_size, k_size.python):
        out = np.full(1, -1, np.int64)
        run[1, 1](out)  # no size: an empty array, as numba.cuda
        assert out[0] == 0
    for run in (k, k.python):  # a store into it is out of bounds
        with pytest.raises(IndexError):
            run[1, 1](out)
    for run in (k, k.python):
        with pytest.raises(NumquadTypeError, match="dynamic shared memory size"):
            run[1, 1, 0, -4](out)
        with pytest.raises(NumquadLaunchError, match="bytes of dynamic shared memory"):
            run[1, 1, 0, 1 << 20](out)


# ---------------------------------------------------------------------------
# 4. Constant memory and records
# ---------------------------------------------------------------------------

TABLE = np.random.default_rng(11).standard_normal((4, 5))
REC = np.dtype([("x", np.float64), ("n", np.int32), ("v", np.float32, 3)], align=True)
RECS = np.array([(1.5, 2, (1, 2, 3)), (-2.0, 7, (4, 5, 6))], dtype=REC)


@pytest.mark.parametrize("target", TARGETS)
def test_const_array_like_and_record_arrays(target, rng):
    @xpu.jit
    def k(idx, recs, out):
        c = cuda.const.array_like(TABLE)
        r = xpu.const.array_like(RECS)
        i = cuda.grid(1)
        if i < idx.size:
            out[i] = c[idx[i] % 4, idx[i] % 5] + r[i % 2]["x"] * r[i % 2].n + r[i % 2].v[1]
            recs[i].x = recs[i].x * 2 + recs[i]["n"]
            recs[i].v[2] = i

    n = 50
    idx = rng.integers(0, 100, n)
    recs = np.zeros(n, REC)
    recs["x"] = rng.standard_normal(n)
    recs["n"] = rng.integers(-5, 5, n)
    want_x = recs["x"] * 2 + recs["n"]
    out = np.full(n, POISON_F)
    launch(k, target, 1, 64)(idx, recs, out)
    j = np.arange(n) % 2
    np.testing.assert_allclose(out, TABLE[idx % 4, idx % 5] + RECS["x"][j] * RECS["n"][j] + RECS["v"][j, 1], rtol=1e-14)
    np.testing.assert_array_equal(recs["x"], want_x)
    np.testing.assert_array_equal(recs["v"][:, 2], np.arange(n))


# ---------------------------------------------------------------------------
# 5. Block reductions, fences, match_*_sync
# ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_syncthreads_count_and_or(target, rng):
    @xpu.jit
    def k(pred, out):
        i = cuda.grid(1)
        t = cuda.threadIdx.x
        c = cuda.syncthreads_count(pred[i])
        a = cuda.syncthreads_and(pred[i])
        if t < 1000:  # every thread: uniform in effect
            o = xpu.syncthreads_or(pred[i] * 2)
        out[i, 0] = c
        out[i, 1] = a
        out[i, 2] = o

    for nthreads, p in ((96, 0.5), (70, 1.0), (33, 0.0)):
        pred = (rng.random(3 * nthreads) < p).astype(np.int64)
        pred[pred == 1] = rng.integers(1, 1 << 40, int(pred.sum()))  # int32(pred) as numba.cuda
        out = np.full((3 * nthreads, 3), -1, np.int32)
        launch(k, target, 3, nthreads)(pred, out)
        nz = (pred.astype(np.int32) != 0).reshape(3, nthreads)
        np.testing.assert_array_equal(out[:, 0], np.repeat(nz.sum(axis=1), nthreads))
        np.testing.assert_array_equal(out[:, 1], np.repeat(nz.all(axis=1), nthreads))
        nz2 = ((pred * 2).astype(np.int32) != 0).reshape(3, nthreads)
        np.testing.assert_array_equal(out[:, 2], np.repeat(nz2.any(axis=1), nthreads))


def test_syncthreads_count_takes_an_integer_as_numba_cuda():
    @xpu.jit
    def k(x, out):
        i = cuda.grid(1)
        out[i] = cuda.syncthreads_count(x[i] > 0)

    with pytest.raises(NumquadTypeError, match=r"cuda\.syncthreads_count\(pred\): pred got bool; it takes an integer"):
        k[1, 32](np.zeros(32), np.zeros(32, np.int32))


@pytest.mark.parametrize("fence", ["threadfence", "threadfence_block", "threadfence_system"])
def test_threadfence_ends_a_region(fence, rng):
    # a lane reads its neighbour's write after the fence, as after syncwarp
    src = (
        f"def k(x, out):\n"
        f"    s = cuda.shared.array(32, float64)\n"
        f"    t = cuda.threadIdx.x\n"
        f"    s[t] = x[t] * 2\n"
        f"    cuda.{fence}()\n"
        f"    out[t] = s[t ^ 1]\n"
    )
    import linecache

    fname = f"<test_numba_cuda_compat {fence}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns = {"cuda": cuda, "float64": float64}
    exec(compile(src, fname, "exec"), ns)
    k = xpu.jit(ns["k"])
    x = rng.standard_normal(32)
    out = np.full(32, POISON_F)
    k[1, 32](x, out)
    np.testing.assert_array_equal(out, 2 * x[np.arange(32) ^ 1])
    assert "_nq_cu_fence()" in k.inspect_cpu_source((cuda.float64[::1], cuda.float64[::1]))


def _match_any(vals, mask, active):
    out = np.zeros(32, np.int64)
    for l in range(32):
        if active[l]:
            out[l] = sum(1 << j for j in range(32) if active[j] and (mask >> j) & 1 and vals[j] == vals[l])
    return out.astype(np.uint32).view(np.int32)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_match_any_and_all_sync(target, rng):
    @xpu.jit
    def k(v, f, n, any_out, all_out, pred_out, fany_out):
        i = cuda.grid(1)
        if i < n:
            any_out[i] = cuda.match_any_sync(0xFFFFFFFF, v[i])
            m, p = cuda.match_all_sync(0xFFFFFFFF, v[i])
            all_out[i] = m
            pred_out[i] = p
            fany_out[i] = cuda.match_any_sync(0xFFFFFFFF, f[i])

    for n, values in ((32, 3), (27, 2), (32, 1)):
        v = rng.integers(0, values, 32).astype(np.int64) * (1 << 33)  # differ above 32 bits
        f = np.where(rng.random(32) < 0.5, 0.0, -0.0)  # compared by bits
        any_out, all_out = np.full(32, -1, np.int32), np.full(32, -1, np.int32)
        pred_out, fany_out = np.zeros(32, np.bool_), np.full(32, -1, np.int32)
        launch(k, target, 1, 32)(v, f, n, any_out, all_out, pred_out, fany_out)
        active = np.arange(32) < n
        want_any = _match_any(v, 0xFFFFFFFF, active)
        np.testing.assert_array_equal(any_out[:n], want_any[:n])
        np.testing.assert_array_equal(fany_out[:n], _match_any(f.view(np.int64), 0xFFFFFFFF, active)[:n])
        same = len(set(v[:n])) == 1
        np.testing.assert_array_equal(pred_out[:n], same)
        act = np.uint32((1 << n) - 1).view(np.int32)
        np.testing.assert_array_equal(all_out[:n], act if same else 0)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["bool", *["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"], "uint64"])
def test_match_compares_in_numba_cuda_s_value_type(target, dtype, rng):
    """numba.cuda's match_*_sync take int32, int64, float32 or float64 and Numba
    picks the first a value converts to safely: a uint64 compares as a float64, so
    values that round to one double match (a probe found the CPU comparing the
    uint64 bits). Every other integer converts exactly."""

    @xpu.jit
    def k(v, any_out, pred_out):
        i = cuda.grid(1)
        any_out[i] = cuda.match_any_sync(0xFFFFFFFF, v[i])
        pred_out[i] = cuda.match_all_sync(0xFFFFFFFF, v[i])[1]

    info = np.iinfo(dtype) if dtype != "bool" else None
    if dtype == "uint64":  # 2**64 - 1, - 2, - 1000, 2**63 + 1: one double; 5 and 6 not
        pool = np.array([2**64 - 1, 2**64 - 2, 2**64 - 1000, 5, 6], np.uint64)
        key = pool.astype(np.float64)
    elif dtype == "bool":
        pool = np.array([True, False])
        key = pool
    else:
        pool = np.array([info.min, info.max, 0, 1, info.max - 1], dtype)
        key = pool
    pick = rng.integers(0, len(pool), 32)
    for v, k_ in ((pool[pick], key[pick]), (pool[:1].repeat(32), key[:1].repeat(32))):
        if dtype == "uint64" and v is not None and len(set(v.tolist())) == 1:
            v = v.copy()
            v[::2] = np.uint64(2**64 - 2)  # other bits, the same double: every lane matches
        any_out, pred_out = np.full(32, -1, np.int32), np.zeros(32, np.bool_)
        launch(k, target, 1, 32)(v, any_out, pred_out)
        want = _match_any(k_, 0xFFFFFFFF, np.ones(32, bool))
        np.testing.assert_array_equal(any_out, want)
        np.testing.assert_array_equal(pred_out, len(set(k_.tolist())) == 1)


@pytest.mark.slow
def test_match_any_sync_under_divergence(rng):
    @xpu.jit
    def k(v, out):
        i = cuda.grid(1)
        if i % 3 != 0:
            out[i] = cuda.match_any_sync(0x0F0F0F0F, v[i])

    v = rng.integers(0, 2, 32).astype(np.int32)
    out = np.full(32, -1, np.int32)
    k[1, 32](v, out)
    active = np.arange(32) % 3 != 0
    want = _match_any(v, 0x0F0F0F0F, active)
    want = (want.view(np.uint32) & np.uint32(0x0F0F0F0F)).view(np.int32)
    np.testing.assert_array_equal(out[active], want[active])
    assert np.all(out[~active] == -1)


# ---------------------------------------------------------------------------
# 6. Bit and math intrinsics, with numba.cuda's result types
# ---------------------------------------------------------------------------

_INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _bits(x):
    return np.unpackbits(x.view(np.uint8).reshape(len(x), -1)[:, ::-1], axis=1)  # MSB first


@xpu.jit
def lf_popc(x):
    return cuda.popc(x)


@xpu.jit
def lf_clz(x):
    return cuda.clz(x)


@xpu.jit
def lf_ffs(x):
    return cuda.ffs(x)


@xpu.jit
def lf_brev(x):
    return cuda.brev(x)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", _INT_TYPES)
def test_popc_clz_ffs_brev_types_and_values(dtype, rng):
    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, 200, dtype=dt, endpoint=True)
    x[:4] = [0, 1, info.max, info.min]
    bits = _bits(x)
    w = dt.itemsize * 8

    got = lf_popc(x)
    assert got.dtype == dt  # popc: x's type
    np.testing.assert_array_equal(got, bits.sum(axis=1).astype(dt))

    got = lf_clz(x)
    assert got.dtype == dt  # clz: x's type, clz(0) = width
    lead = np.where(bits.any(axis=1), bits.argmax(axis=1), w)
    np.testing.assert_array_equal(got, lead.astype(dt))

    got = lf_ffs(x)
    assert got.dtype == np.uint32  # ffs: uint32, 1-based, 0 for 0
    low = bits[:, ::-1]
    np.testing.assert_array_equal(got, np.where(low.any(axis=1), low.argmax(axis=1) + 1, 0).astype(np.uint32))

    got = lf_brev(x)
    rdt = np.dtype(np.uint64 if dt == np.uint64 else np.uint32)  # brev: numba.cuda's two cases
    assert got.dtype == rdt
    ux = x.astype(rdt) if dt.kind == "u" else x.astype(np.int64).astype(rdt)
    want = np.array([int(f"{int(v):0{rdt.itemsize * 8}b}"[::-1], 2) for v in ux], dtype=rdt)
    np.testing.assert_array_equal(got, want)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", _INT_TYPES)
@pytest.mark.parametrize("target", TARGETS)
def test_popc_clz_ffs_brev_in_a_kernel_on_every_target(target, dtype, rng):
    """The same bits on each target for every integer type (numba.cuda lowers ffs
    of an 8- or 16-bit integer nowhere; the CUDA target widens it)."""

    @xpu.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i, 0] = cuda.popc(x[i])
            out[i, 1] = cuda.clz(x[i])
            out[i, 2] = cuda.ffs(x[i])
            out[i, 3] = cuda.brev(x[i])

    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, 77, dtype=dt, endpoint=True)
    x[:4] = [0, 1, info.max, info.min]
    out = np.full((77, 4), -123456789, np.int64)
    launch(k, target, 1, 96)(x, out)
    want = np.stack(
        [
            lf_popc(x).astype(np.int64),
            lf_clz(x).astype(np.int64),
            lf_ffs(x).astype(np.int64),
            lf_brev(x).astype(np.int64),
        ],
        axis=1,
    )
    np.testing.assert_array_equal(out, want)
    if target != "cuda":  # the CUDA compile, GPU or not
        ptx = k.inspect_ptx((numba.typeof(x), numba.typeof(out)))
        assert "brev.b" in ptx and "popc.b" in ptx


@pytest.mark.parametrize("target", TARGETS)
def test_fma_cbrt_selp_and_math(target, rng):
    @xpu.jit
    def k(a, b, c, f, out, fout):
        i = cuda.grid(1)
        if i < a.size:
            out[i, 0] = cuda.fma(a[i], b[i], c[i])
            out[i, 1] = cuda.cbrt(a[i])
            out[i, 2] = cuda.selp(a[i] > b[i], a[i], c[i])
            out[i, 3] = math.sin(a[i]) + math.exp(b[i]) + math.atan2(a[i], b[i]) + math.erf(c[i])
            out[i, 4] = math.hypot(a[i], b[i]) + math.log1p(abs(c[i])) + math.floor(a[i]) + math.fabs(b[i])
            fout[i] = cuda.fma(f[i], f[i], f[i])

    n = 77
    a, b, c = (rng.standard_normal(n) * 3 for _ in range(3))
    f = rng.standard_normal(n).astype(np.float32)
    out = np.full((n, 5), POISON_F)
    fout = np.full(n, np.float32(POISON_F))
    launch(k, target, 1, 128)(a, b, c, f, out, fout)
    from math import erf

    np.testing.assert_allclose(out[:, 0], a * b + c, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(out[:, 1], np.cbrt(a), rtol=1e-15)
    np.testing.assert_array_equal(out[:, 2], np.where(a > b, a, c))
    np.testing.assert_allclose(out[:, 3], np.sin(a) + np.exp(b) + np.arctan2(a, b) + np.vectorize(erf)(c), rtol=1e-13)
    np.testing.assert_allclose(out[:, 4], np.hypot(a, b) + np.log1p(np.abs(c)) + np.floor(a) + np.abs(b), rtol=1e-13)
    # fma rounds once: compare with the exact product-sum rounded to float32
    exact = f.astype(np.float64) * f + f
    np.testing.assert_array_equal(fout, exact.astype(np.float32))


def test_fma_cbrt_result_types():
    @xpu.jit
    def f32(x):
        return cuda.fma(x, x, x) + cuda.cbrt(x)

    @xpu.jit
    def mixed(x, i):
        return cuda.fma(x, x, i)

    assert f32(np.ones(3, np.float32)).dtype == np.float32
    assert mixed(np.ones(3, np.float32), np.ones(3, np.int32)).dtype == np.float64


_NUMERIC = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64")


@xpu.jit
def lf_cbrt(x):
    return cuda.cbrt(x)


@xpu.jit
def lf_fma(a, b, c):
    return cuda.fma(a, b, c)


@pytest.mark.slow
@pytest.mark.parametrize("fn", ["cbrt", "fma", "brev"])
def test_two_case_functions_take_numba_cuda_s_case(fn, rng):
    """numba.cuda types cbrt and fma with a float32 and a float64 case and brev with a
    uint32 and a uint64 case; Numba's overload resolution picks one by how each argument
    converts (cbrt of an int8 is float32, of a uint16 float64; brev of an int64 reverses
    its low 32 bits). The CPU and python targets give the type numba.cuda's own typing
    gives (a PTX compile, no GPU needed) and the value of the argument converted to it."""
    lanes = {"cbrt": (lf_cbrt, 1), "fma": (lf_fma, 3), "brev": (lf_brev, 1)}
    lane, arity = lanes[fn]
    device = {"cbrt": lambda x: cuda.cbrt(x), "fma": lambda a, b, c: cuda.fma(a, b, c), "brev": lambda x: cuda.brev(x)}[
        fn
    ]
    checked = 0
    for t in _NUMERIC:
        if fn == "brev" and t in ("bool", "float32", "float64"):
            continue
        for t2 in ("float32", "int8", "uint16") if arity == 3 else (None,):
            tys = [t] * arity if t2 is None else [t, t2, "float32"]
            sig = tuple(getattr(numba, "boolean" if x == "bool" else x) for x in tys)
            want = np.dtype(str(cuda.compile_ptx(device, sig, device=True, cc=(9, 0))[1]))
            args = [_random_of(rng, x) for x in tys]
            conv = [
                a.astype(want)
                if want.kind == "f"
                else (a.astype(np.uint64).astype(want) if a.dtype.kind == "u" else a.astype(np.int64).astype(want))
                for a in args
            ]
            if fn == "cbrt":
                ref = np.cbrt(conv[0])
            elif fn == "fma":  # exact in float64 for float32 operands of these sizes
                ref = (
                    conv[0] * conv[1] + conv[2]
                    if want == np.float64
                    else (conv[0].astype(np.float64) * conv[1] + conv[2]).astype(np.float32)
                )
            else:
                w = want.itemsize * 8
                ref = np.array([int(f"{int(v):0{w}b}"[::-1], 2) for v in conv[0]], dtype=want)
            for target in ("cpu", "python"):
                got = lane(*args) if target == "cpu" else lane.python(*args)
                assert got.dtype == want, (fn, tys, target, got.dtype, want)
                if fn == "cbrt":  # the C library's cbrt, outside the bit-for-bit promise
                    np.testing.assert_allclose(got, ref, rtol=2 * np.finfo(want).eps)
                elif fn == "fma" and want == np.float64:
                    np.testing.assert_allclose(got, ref, rtol=1e-15, atol=1e-300)
                else:
                    np.testing.assert_array_equal(got, ref, err_msg=f"{fn}{tuple(tys)} on {target}")
            checked += 1
    assert checked >= 8


@xpu.jit
def lf_floor(x):
    return math.floor(x)


@xpu.jit
def lf_ceil(x):
    return math.ceil(x)


@xpu.jit
def lf_trunc(x):
    return math.trunc(x)


@xpu.jit
def lf_pow(x, y):
    return math.pow(x, y)


@xpu.jit
def lf_ldexp(x, n):
    return math.ldexp(x, n)


@xpu.jit
def lf_frexp_m(x):
    m, e = math.frexp(x)
    return m


@xpu.jit
def lf_frexp_e(x):
    m, e = math.frexp(x)
    return e


def _random_of(rng, name, n=40):
    dt = np.dtype(name)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind == "f":
        v = (rng.standard_normal(n) * 50).astype(dt)
        v[:4] = [np.nan, np.inf, -np.inf, -0.0]
        return v
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)


@pytest.mark.slow
@pytest.mark.parametrize("fn", ["floor", "ceil", "trunc", "pow", "ldexp", "frexp_m", "frexp_e"])
def test_math_functions_typed_as_numba_cuda_types_them(fn, rng):
    """numba.cuda types math.floor/ceil/trunc as floats (float32 of a float32; Numba's
    CPU target as Python does, int64, so math.floor(nan) was an int64 and
    math.floor(x) + np.float32(0.5) float64 on the CPU), math.pow(float32, int32) and
    math.ldexp(float32, n) float32. The CPU and python targets give numba.cuda's type
    (a PTX compile, no GPU needed) and NumPy's value in it."""
    lane = {
        "floor": lf_floor,
        "ceil": lf_ceil,
        "trunc": lf_trunc,
        "pow": lf_pow,
        "ldexp": lf_ldexp,
        "frexp_m": lf_frexp_m,
        "frexp_e": lf_frexp_e,
    }[fn]
    device = {
        "floor": lambda x: math.floor(x),
        "ceil": lambda x: math.ceil(x),
        "trunc": lambda x: math.trunc(x),
        "pow": lambda x, y: math.pow(x, y),
        "ldexp": lambda x, y: math.ldexp(x, y),
        "frexp_m": lambda x: math.frexp(x)[0],
        "frexp_e": lambda x: math.frexp(x)[1],
    }[fn]
    seconds = {
        "pow": ("float32", "int8", "uint16", "int32", "int64", "float64"),
        "ldexp": ("int8", "int32", "int64"),
    }.get(fn, (None,))
    for t in _NUMERIC:
        for t2 in seconds:
            tys = [t] if t2 is None else [t, t2]
            sig = tuple(getattr(numba, "boolean" if x == "bool" else x) for x in tys)
            want = np.dtype(str(cuda.compile_ptx(device, sig, device=True, cc=(9, 0))[1]))
            args = [_random_of(rng, x) for x in tys]
            if fn == "ldexp":
                args[1] = (args[1] % 64 - 32).astype(args[1].dtype)
            if fn == "pow" and np.dtype(tys[1]).kind != "f":
                args[1] = (args[1] % 9 - 4).astype(args[1].dtype)
            x = args[0].astype(want)
            if fn.startswith("frexp"):  # the mantissa's type: float32 or float64
                mt = np.dtype(str(cuda.compile_ptx(lambda v: math.frexp(v)[0], sig, device=True, cc=(9, 0))[1]))
                x = args[0].astype(mt)
            with np.errstate(all="ignore"):
                if fn.startswith("frexp"):
                    ref = np.frexp(x)[0] if fn == "frexp_m" else np.frexp(x)[1].astype(want)
                elif fn == "pow":
                    ref = np.power(x, args[1].astype(want))
                elif fn == "ldexp":
                    ref = np.ldexp(x, args[1].astype(np.int32))
                else:
                    ref = getattr(np, fn)(x)
            for target in ("cpu", "python"):
                with np.errstate(all="ignore"):
                    got = lane(*args) if target == "cpu" else lane.python(*args)
                assert got.dtype == want, (fn, tys, target, got.dtype, want)
                if fn == "pow":
                    np.testing.assert_allclose(got, ref, rtol=4 * np.finfo(want).eps, equal_nan=True)
                else:
                    np.testing.assert_array_equal(
                        got.view(f"u{want.itemsize}"),
                        ref.view(f"u{want.itemsize}"),
                        err_msg=f"math.{fn}{tuple(tys)} on {target}",
                    )


@pytest.mark.parametrize("target", TARGETS)
def test_math_floor_is_a_float_in_a_kernel_on_every_target(target, rng):
    """math.floor(nan) stays NaN and math.floor(float32) + float32 stays float32 on
    every target, as on the GPU."""

    @xpu.jit
    def k(x, out, out64):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = math.floor(x[i]) + np.float32(0.5)
            out64[i] = math.ceil(x[i]) + math.trunc(x[i] * np.float32(3)) + math.pow(x[i], np.int32(2))

    x = _random_of(rng, "float32", 77)
    x[4:6] = [3e20, -7.5]
    out = np.full(77, np.float32(POISON_F))
    out64 = np.full(77, POISON_F)
    launch(k, target, 1, 96)(x, out, out64)
    with np.errstate(all="ignore"):
        # NaN payloads are outside the promise (docs/semantics.md): the H200's is 0x7fffffff
        np.testing.assert_array_equal(out, np.floor(x) + np.float32(0.5))
        np.testing.assert_array_equal(np.signbit(out[1:]), np.signbit(np.floor(x[1:]) + np.float32(0.5)))
        want = (np.ceil(x) + np.trunc(x * np.float32(3))).astype(np.float32) + x * x
    assert out64.dtype == np.float64
    np.testing.assert_allclose(out64, want.astype(np.float64), rtol=1e-6, equal_nan=True)


def test_selp_needs_one_type_as_numba_cuda():
    @xpu.jit
    def k(a, out):
        i = cuda.grid(1)
        out[i] = cuda.selp(a[i] > 0, a[i], 1.5)

    with pytest.raises(NumquadTypeError, match=r"cuda\.selp\(pred, a, b\): a and b got int32 and float64"):
        k[1, 32](np.zeros(32, np.int32), np.zeros(32))


@pytest.mark.parametrize("target", TARGETS)
def test_xpu_spellings_of_numba_cuda_functions(target, rng):
    @xpu.jit
    def k(x, out):
        i = xpu.grid(1)
        v = x[i]
        out[i, 0] = xpu.popc(v) + xpu.clz(v) + xpu.ffs(v)
        out[i, 1] = xpu.brev(np.uint32(v))
        out[i, 2] = xpu.syncthreads_count(v & 1)
        xpu.threadfence_block()
        xpu.nanosleep(100)

    x = rng.integers(0, 1 << 31, 64).astype(np.int32)
    out = np.full((64, 3), -1, np.int64)
    launch(k, target, 1, 64)(x, out)
    bits = _bits(x)
    lead = np.where(bits.any(axis=1), bits.argmax(axis=1), 32)
    low = bits[:, ::-1]
    ffs = np.where(low.any(axis=1), low.argmax(axis=1) + 1, 0)
    np.testing.assert_array_equal(out[:, 0], bits.sum(axis=1) + lead + ffs)
    np.testing.assert_array_equal(out[:, 1], [int(f"{int(v):032b}"[::-1], 2) for v in x])
    np.testing.assert_array_equal(out[:, 2], (x & 1).sum())


# ---------------------------------------------------------------------------
# 8. Signatures and forall
# ---------------------------------------------------------------------------


def _saxpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


def test_signature_compiles_eagerly_and_converts_arguments(rng):
    k = xpu.jit("void(float32, float32[:], float32[:])")(_saxpy)
    assert len(k._target("cpu")._cache) == 1  # compiled at decoration
    x = rng.standard_normal(100).astype(np.float32)
    y = rng.standard_normal(100).astype(np.float32)
    want = np.float32(1.7) * x + y  # a is converted to float32
    k[1, 128](1.7, x, y)
    np.testing.assert_array_equal(y, want)
    with pytest.raises(TypeError, match="No matching definition") as e:  # numba.cuda's words
        k[1, 128](1.7, x.astype(np.float64), y.astype(np.int16))
    # a NumquadTypeError too, naming the launch's line (a day-one probe: a bare TypeError
    # naming the definition, which `except NumquadTypeError` did not catch)
    assert isinstance(e.value, NumquadTypeError)
    line = inspect.currentframe().f_lineno - 4
    assert str(e.value).startswith(f'File "{__file__}", line {line}, in '), str(e.value)


def _add_scaled(r, x, y):
    r[0] = x + y


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_signature_list_takes_the_best_match_as_numba_cuda_does(target):
    # the CPU target took the first signature the arguments converted to, lossily:
    # numba-cuda's test_explicit_signatures_same_type_class
    kf = xpu.jit(["void(float64[::1], float32, float32)", "void(float64[::1], float64, float64)"])(_add_scaled)
    ki = xpu.jit(["void(int64[::1], int32, int32)", "void(int64[::1], int64, int64)"])(_add_scaled)
    r = np.full(1, np.nan)
    launch(kf, target, 1, 1)(r, 1, 2**-25)
    assert r[0] == 1 + 2**-25
    launch(kf, target, 1, 1)(r, np.float32(1), np.float32(2**-25))
    assert r[0] == 1.0  # float32 arithmetic
    ri = np.full(1, -1, np.int64)
    launch(ki, target, 1, 1)(ri, np.int64(2**40), 3)
    assert ri[0] == 2**40 + 3


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_signature_refuses_arrays_of_another_dtype_and_complex_for_real(target):
    # one declared signature read an int64 array's bytes as float64 on the CPU, and
    # converted its values on the python target; a complex scalar lost its imaginary part
    k = xpu.jit(["void(float64[::1], float64[::1])"])(_copy_first)  # a list: not specialized
    with pytest.raises(TypeError, match=r"No matching definition for argument type\(s\) \(array\(int64"):
        launch(k, target, 1, 1)(np.arange(4), np.zeros(4))
    # one signature as a string: numba.cuda's specialized kernel reads the bytes as the
    # declared dtype (numba-cuda's atomic tests rely on it), on every target alike
    ks = xpu.jit("void(float64[::1], float64[::1])")(_copy_first)
    out = np.full(4, np.nan)
    launch(ks, target, 1, 1)(np.arange(4) + 2**62, out)
    assert out[0] == np.array([2**62]).view(np.float64)[0]
    ki = xpu.jit("void(int32[::1], int32, int32)")(_add_scaled)
    with pytest.raises(TypeError, match="No matching definition"):
        launch(ki, target, 1, 1)(np.zeros(1, np.int32), 12.3, 45.6j)
    ambiguous = xpu.jit(["void(float64[::1], int32, float64)", "void(float64[::1], float64, int32)"])(_add_scaled)
    with pytest.raises(TypeError, match="Ambiguous overloading"):
        launch(ambiguous, target, 1, 1)(np.zeros(1), np.int16(1), np.int16(2))


@cuda.jit(["float32(float32)", "float64(float64)"], device=True)
def _twice(v):
    return v + v


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_device_function_s_signature_list_takes_the_best_match(target):
    @xpu.jit
    def k(x, out):
        out[0] = _twice(x[0]) - x[0]

    x = np.array([1 + 2**-30])
    out = np.full(1, np.nan)
    launch(k, target, 1, 1)(x, out)
    assert out[0] == x[0]  # float64: not rounded to float32


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_declared_lane_function_refuses_arrays_of_another_dtype(target, rng):
    # a probe (twenty-second session): `@xpu.jit("int32(int32)")` called on a float64
    # array cast every element silently (NaN to -2147483648, 1e10 to 2147483647) and
    # an int64 array wrapped; docs/api.md says an array must have the declared dtype
    sw = xpu.jit("int32(int32)")(_swap_lanes)
    call = getattr(sw, target)
    x = rng.integers(-(2**31), 2**31, 40).astype(np.int32)
    np.testing.assert_array_equal(call(x), x.reshape(-1, 2)[:, ::-1].ravel())
    for bad in (
        np.array([2.7, np.nan, 1e10, -3.0]),
        np.array([2**40 + 5, 7, -(2**33), 1]),
        np.array([2**64 - 1, 1, 2, 3], np.uint64),
    ):
        with pytest.raises(
            NumquadTypeError,
            match=rf"argument 'x' of _swap_lanes is an? {bad.dtype} "
            r"array; _swap_lanes is declared for \(int32\), and an array must have the "
            r"declared dtype \(pass x.astype\(np.int32\)\)",
        ):
            call(bad)
    with pytest.raises(NumquadTypeError, match=r"is 1099511627779, which int32 cannot hold"):
        call(2**40 + 3)
    # a list picks the signature of the arrays' dtype; a scalar takes its declared type
    sh = xpu.jit(["float32(float32, int32)", "float64(float64, int32)"])(_scaled_broadcast)
    call = getattr(sh, target)
    for dt in (np.float32, np.float64):
        v = rng.standard_normal(36).astype(dt)
        got = call(v, 2)
        assert got.dtype == dt
        np.testing.assert_array_equal(got, np.repeat(v.reshape(-1, 4)[:, 2], 4) * dt(2))
    with pytest.raises(
        NumquadTypeError,
        match=r"is an int64 array; _scaled_broadcast is declared for "
        r"\(float32, int32\); \(float64, int32\)",
    ):
        call(np.arange(8), 2)
    with pytest.raises(NumquadTypeError, match="is 8589934592, which int32 cannot hold"):
        call(np.zeros(8), 2**33)


def _swap_lanes(x):
    return Quad.swapHorizontal(x)


def _scaled_broadcast(x, k):
    return Quad.broadcast(x, k) * 2


def _copy_first(a, out):
    out[0] = a[0]


@pytest.mark.slow
def test_signature_forms():
    k1 = xpu.jit((float64, float64[:], float64[:]))(_saxpy)
    k2 = xpu.jit(void(float64, float64[::1], float64[::1]))(_saxpy)
    k3 = xpu.jit(["void(float32, float32[:], float32[:])", "void(float64, float64[:], float64[:])"])(_saxpy)
    for k in (k1, k2, k3):
        y = np.ones(10)
        k[1, 32](2.0, np.arange(10.0), y)
        np.testing.assert_array_equal(y, 2 * np.arange(10.0) + 1)
    y32 = np.ones(10, np.float32)
    k3[1, 32](2.0, np.arange(10, dtype=np.float32), y32)
    np.testing.assert_array_equal(y32, 2 * np.arange(10, dtype=np.float32) + 1)
    with pytest.raises(TypeError, match="is not a signature"):
        xpu.jit("void(floaty32[:])")
    with pytest.raises(TypeError, match="must have void return type"):
        xpu.jit("int32(float32[:])")(lambda_free_kernel)
    with pytest.raises(TypeError, match="unexpected keyword"):
        xpu.jit(bogus=True)


def lambda_free_kernel(x):
    x[0] = 1


def test_signature_type_error_at_decoration():
    def bad(x):
        x[0] = cuda.popc(x)  # an error on both targets: raised at decoration

    with pytest.raises(NumquadTypeError, match=r"cuda\.popc\(x\): x got array\(int32.*it takes an integer"):
        xpu.jit("void(int32[:])")(bad)


def _fill_half(a, x):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = x


def _popc_method(out, x):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i].bit_count()  # numba.cuda's method: cuda.popc(x[i])


@pytest.mark.parametrize("target", TARGETS)
def test_signature_that_only_cuda_compiles_waits_for_a_cpu_launch(target, rng):
    # an eager CPU compile at decoration must not stop a kernel that CUDA compiles
    h = xpu.jit("void(float16[:], float16)")(_fill_half)
    assert re.search(r"st\.(global\.)?[ub]16", h.inspect_ptx((ntypes.float16[:], ntypes.float16)))
    a = np.full(4, 7, np.float16)
    if target == "cpu":
        with pytest.raises(NumquadTypeError, match="float16 is not supported by numquad's CPU target"):
            h.cpu[1, 4](a, np.float16(1.5))
        assert (a == 7).all()
    else:
        h.cuda[1, 4](a, np.float16(1.5))
        np.testing.assert_array_equal(a, np.float16(1.5))
    with pytest.raises(NumquadTypeError, match="float16"):
        xpu.jit("void(float16[:], float16)", target="cpu")(_fill_half)


@pytest.mark.parametrize("target", TARGETS)
def test_int_bit_count_method(target, rng):
    k = xpu.jit("void(int32[:], uint32[:])")(_popc_method)
    x = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32)
    out = np.full(64, -1, np.int32)
    getattr(k, target)[1, 64](out, x)
    np.testing.assert_array_equal(out, [bin(int(v)).count("1") for v in x])


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_int_bit_count_method_counts_the_bits_of_the_type(target, rng):
    # numba.cuda's method is cuda.popc: int64(-1) has 64 bits set (Python's and
    # NumPy's int.bit_count() would count |x|); the interpreter follows numba.cuda
    k = xpu.jit(_popc_method)
    x = rng.integers(-(2**63), 2**63, 64, dtype=np.int64)
    x[0] = -1
    out = np.full(64, -1, np.int32)
    getattr(k, target)[1, 64](out, x)
    np.testing.assert_array_equal(out, [bin(int(v) % 2**64).count("1") for v in x])


@pytest.mark.parametrize("target", TARGETS)
def test_forall(target, rng):
    k = xpu.jit(_saxpy)
    for n in (1, 127, 1000):
        x, y = rng.standard_normal(n), rng.standard_normal(n)
        want = 3 * x + y
        if target == "cpu":
            k.forall(n)(3.0, x, y)
        else:
            k.cuda[(n + 127) // 128, 128](3.0, x, y)
        np.testing.assert_array_equal(y, want)
    k.forall(0)(3.0, x, y)
    with pytest.raises(ValueError, match="negative task count"):
        k.forall(-1)


# ---------------------------------------------------------------------------
# 9. Warp functions take numba.cuda's types
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        "cuda.ballot_sync(m[i], 1)",
        "cuda.all_sync(m[i], 1)",
        "cuda.any_sync(m[i], 1)",
        "cuda.eq_sync(m[i], 1)",
        "cuda.shfl_sync(m[i], 1.5, 0)",
        "cuda.shfl_up_sync(m[i], 1.5, 1)",
        "cuda.shfl_down_sync(m[i], 1.5, 1)",
        "cuda.shfl_xor_sync(m[i], 1.5, 1)",
        "cuda.match_any_sync(m[i], 1)",
        "cuda.match_all_sync(m[i], 1)[0]",
    ],
)
@pytest.mark.parametrize("mask_dtype", [np.float32, np.bool_])
def test_sync_mask_must_be_an_integer(call, mask_dtype):
    src = f"def k(m, out):\n    i = cuda.grid(1)\n    out[i] = {call}\n"
    import linecache

    fname = f"<test_numba_cuda_compat mask {call}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns = {"cuda": cuda}
    exec(compile(src, fname, "exec"), ns)
    k = xpu.jit(ns["k"])
    name = call.split("(")[0]
    ty = "float32" if mask_dtype is np.float32 else "bool"
    with pytest.raises(NumquadTypeError, match=re.escape(f"{name}: Mask type must be an integer. Got {ty}")):
        k[1, 32](np.ones(32, mask_dtype), np.zeros(32))
    k[1, 32](np.full(32, 0xFFFFFFFF, np.uint32), np.zeros(32))  # an integer mask is fine


def test_shuffle_values_are_numba_cuda_types():
    @xpu.jit
    def k(x, out):
        i = cuda.grid(1)
        out[i] = cuda.shfl_sync(0xFFFFFFFF, x[i], 0)

    with pytest.raises(NumquadTypeError, match="shfl_sync only supports 32- and 64-bit ints and floats"):
        k[1, 32](np.zeros(32, np.int16), np.zeros(32, np.int16))


# ---------------------------------------------------------------------------
# 10. Anything else: one line
# ---------------------------------------------------------------------------

_UNSUPPORTED = {
    "cuda.cg.this_grid().sync()": "cuda.cg.this_grid",
    "cuda.float32x4(1, 2, 3, 4)": "cuda.float32x4",
    "cuda.libdevice.sinf(x[i])": "cuda.libdevice",
    "cuda.fp16.hadd(x[i], x[i])": "cuda.fp16",
    # names numba.cuda does not have either: one line naming them too
    "cuda.no_such_function(x[i])": None,
    "cuda.atomic.no_such_atomic(x, 0, 1)": None,
}


@pytest.mark.parametrize("expr", list(_UNSUPPORTED))
def test_unsupported_names_are_one_clear_line(expr):
    from numba.cuda import fp16, libdevice  # noqa: F401  (cuda.fp16 / cuda.libdevice exist once imported)

    src = f"def k(x):\n    i = cuda.grid(1)\n    v = {expr}\n"
    import linecache

    fname = f"<test_numba_cuda_compat unsupported {expr}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns = {"cuda": cuda}
    exec(compile(src, fname, "exec"), ns)
    k = xpu.jit(ns["k"])
    with pytest.raises(NumquadCompileError) as e:
        k[1, 1](np.zeros(4, np.float32))
    msg = str(e.value)
    assert msg.count("\n") == 0
    name = _UNSUPPORTED[expr]
    if name is None:
        assert expr.split("(")[0] in msg
    else:
        assert f"`{name}" in msg
        assert "is not supported by numquad's CPU target (supported: docs/numba-cuda.md)" in msg
    assert "line 3" in msg and "_nq_" not in msg and "Unknown attribute" not in msg


# ---------------------------------------------------------------------------
# 11. docs/numba-cuda.md
# ---------------------------------------------------------------------------


@pytest.mark.slow
def test_docs_numba_cuda_md_is_generated_from_the_table():
    import pathlib

    from numquad.cpu.cudaapi import render_md

    path = pathlib.Path(__file__).resolve().parent.parent / "docs" / "numba-cuda.md"
    assert path.read_text() == render_md(), (
        "docs/numba-cuda.md is stale: python -m numquad.cpu.cudaapi > docs/numba-cuda.md"
    )


def test_the_table_names_every_kernel_function_of_numba_cuda():
    from numba.cuda import stubs, intrinsics as cuda_intrinsics

    from numquad.cpu.cudaapi import API

    names = {a.name.split(".")[0] for a in API} | {a.name for a in API}
    kernel_api = set(cuda_intrinsics.__dict__) & {
        "grid",
        "gridsize",
        "syncthreads",
        "syncthreads_and",
        "syncthreads_count",
        "syncthreads_or",
        "shfl_sync",
        "shfl_up_sync",
        "shfl_down_sync",
        "shfl_xor_sync",
        "all_sync",
        "any_sync",
        "eq_sync",
        "ballot_sync",
    }
    stub_names = {
        n
        for n, v in vars(stubs).items()
        if isinstance(v, type)
        and issubclass(v, stubs.Stub)
        and v is not stubs.Stub
        and v.__module__ == stubs.__name__
        and not n.startswith("_")
        and n not in ("Dim3",)
        and "x" not in n[-2:]
    }  # vector types: one row
    missing = sorted((kernel_api | stub_names) - names)
    assert not missing, f"docs/numba-cuda.md lacks {missing}"
    for a in API:
        if a.cpu and "*" not in a.name and "(" not in a.name:
            obj = cuda
            for part in a.name.split("."):
                obj = getattr(obj, part)


def test_the_xpu_spellings_in_the_table_exist():
    from numquad.cpu.cudaapi import API

    for a in API:
        if a.cpu and a.xpu:
            obj = xpu
            for part in a.name.split("."):
                obj = getattr(obj, part)


@cuda.jit(device=True)
def _is_even(n):
    if n == 0:
        return True
    return _is_odd(n - 1)


@cuda.jit(device=True)
def _is_odd(n):
    if n == 0:
        return False
    return _is_even(n - 1)


def test_mutually_recursive_device_functions_are_one_line_on_the_cpu():
    """A probe: numba.cuda device functions calling each other crashed the CPU
    compile with Python's RecursionError; the python target runs them."""

    @xpu.jit
    def k(x, out):
        i = cuda.grid(1)
        out[i] = _is_even(x[i])

    x = np.arange(32, dtype=np.int64)
    out = np.zeros(32, np.bool_)
    k.python[1, 32](x, out)
    np.testing.assert_array_equal(out, x % 2 == 0)
    with pytest.raises(
        NumquadCompileError,
        match=r"mutually recursive lane functions "
        r"\(_is_even -> _is_odd -> _is_even\)",
    ):
        k.cpu[1, 32](x, out)


# ---------------------------------------------------------------------------
# literal_unroll: a loop over a heterogeneous tuple, written out per element
# ---------------------------------------------------------------------------

LU_ARRAYS = (np.array([3.5, -1.0, 2.25]), np.arange(6, dtype=np.int16).reshape(2, 3), np.array([7.5, 0.5], np.float32))


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_literal_unroll_over_global_and_argument_tuples(target, rng):
    from numquad import Wave

    @xpu.jit
    def k(out, t, x):
        i = cuda.grid(1)
        s = 0.0
        j = 0
        for arr in numba.literal_unroll(LU_ARRAYS):  # a global tuple of arrays
            s += arr.sum() * (j + 1)
            j += 1
        for v in cuda.literal_unroll(t):  # an argument: int, float, float32
            if x[i] > 0:
                s += Wave.prefixSum(v * x[i])
            else:
                s -= v
        out[i] = s

    n = 64
    x = rng.standard_normal(n)
    t = (int(rng.integers(-5, 5)), float(rng.standard_normal()), np.float32(rng.standard_normal()))
    out = np.full(n, POISON_F)
    launch(k, target, 2, 32)(out, t, x)
    base = sum(float(a.sum()) * (j + 1) for j, a in enumerate(LU_ARRAYS))
    want = np.full(n, base)
    pos = x > 0
    for v in t:
        term = np.float64(v) * x
        scan = np.zeros(n)
        for w in range(2):  # per wave, over the lanes where x > 0
            sl = slice(32 * w, 32 * w + 32)
            m = pos[sl]
            scan[sl] = np.where(m, np.cumsum(np.where(m, term[sl], 0)) - np.where(m, term[sl], 0), 0)
        want += np.where(pos, scan, -np.float64(v))
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


def _k_literal_unroll_spellings(out, t, x):
    i = cuda.grid(1)
    s = 0.0
    for v in cuda.literal_unroll(t):  # numba.cuda's, by an attribute
        s += v * x[i]
    for v in numba.literal_unroll(t):  # Numba's own object
        s += v
    out[i] = s


def _k_literal_unroll_spellings_ops(out, t, x):
    i = cuda.grid(1)
    s = 0.0
    for v in cuda.literal_unroll(t):
        s += v * x[i]
    for v in numba.literal_unroll(t):
        if x[i] > 0:
            s += Wave.prefixSum(v * x[i])
    out[i] = s


@pytest.mark.parametrize("fn", [_k_literal_unroll_spellings, _k_literal_unroll_spellings_ops])
def test_literal_unroll_by_any_spelling_compiles_for_the_gpu(fn):
    """The first GPU run of the literal_unroll tests (twenty-first session): numba-cuda
    unrolls only a loop whose ``literal_unroll`` is a global of its own, so
    ``cuda.literal_unroll(t)`` over an argument was a typing error ("Invalid use of
    getiter") on the CUDA target where the CPU runs it. The CUDA target now names
    numba.cuda's function directly (numquad/_control.py ``fold_literal_unroll``).
    (Around an op, numba-cuda's unrolled loop keeps its element in local memory.)"""
    sig = (ntypes.float64[::1], ntypes.Tuple((ntypes.int64, ntypes.float64, ntypes.float32)), ntypes.float64[::1])
    ptx = xpu.jit(fn).inspect_ptx(sig, cc=(9, 0))
    assert ("shfl.sync" in ptx) == (fn is _k_literal_unroll_spellings_ops)
    if fn is _k_literal_unroll_spellings:
        assert "ld.local" not in ptx


def test_literal_unroll_with_break_around_ops_is_one_line_on_the_gpu():
    @xpu.jit
    def k(out, t, x):
        i = cuda.grid(1)
        s = 0.0
        for v in cuda.literal_unroll(t):
            if x[i] > 0:
                s += Wave.prefixSum(v * x[i])
                if s > 3:
                    break
        out[i] = s

    sig = (ntypes.float64[::1], ntypes.Tuple((ntypes.int64, ntypes.float64)), ntypes.float64[::1])
    with pytest.raises(
        NumquadCompileError,
        match=r"test_numba_cuda_compat.py\", line \d+: break in a "
        r"literal_unroll loop around cross-lane ops is not supported",
    ):
        k.inspect_ptx(sig, cc=(9, 0))


def test_literal_unroll_with_break_or_an_unknown_length_is_one_line():
    @xpu.jit
    def k_break(out):
        for arr in numba.literal_unroll(LU_ARRAYS):
            if arr.size > 2:
                break
            out[0] += arr.sum()

    @xpu.jit
    def k_len(out, n):
        t = (1, 2.5) if n > 0 else (3, 4.5)
        for v in numba.literal_unroll(t):
            out[0] += v

    with pytest.raises(NumquadCompileError, match=r"line \d+: break in a literal_unroll loop is not supported"):
        k_break.cpu[1, 1](np.zeros(1))
    with pytest.raises(
        NumquadCompileError,
        match=r"literal_unroll\(t\): the CPU target unrolls a tuple whose "
        r"length it knows at compile time",
    ):
        k_len.cpu[1, 1](np.zeros(1), 1)


# ---------------------------------------------------------------------------
# cuda.In / Out / InOut launch arguments; a device function passed as an argument
# ---------------------------------------------------------------------------


def _write_first(arr, v):
    arr[0] = v[0] * 2


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_in_out_and_inout_arguments(target, rng):
    # a raw Numba "can't unbox array from PyObject" on the CPU before
    k = xpu.jit(_write_first)
    v = rng.integers(1, 100, 1)
    for hint, written in ((cuda.In, False), (cuda.Out, True), (cuda.InOut, True)):
        h = np.full(1, -5, np.int64)
        launch(k, target, 1, 1)(hint(h), cuda.In(v))
        assert h[0] == (2 * v[0] if written else -5), hint.__name__


@cuda.jit(device=True)
def _square(x):
    return x * x


@cuda.jit(device=True)
def _apply(f, x):
    return f(x) + 1


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_device_function_passed_as_an_argument(target, rng):
    # numba.cuda types it as a Dispatcher argument; the CPU target reached numba.cuda's
    # compiler (CudaSupportError), the python target launched it as a kernel
    @xpu.jit
    def k(out, a):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = _apply(_square, a[i])

    a = rng.standard_normal(40)
    out = np.full(40, POISON_F)
    launch(k, target, 2, 32)(out, a)
    np.testing.assert_array_equal(out, a * a + 1)


def test_a_shared_array_sliced_where_it_is_made():
    # numba-cuda's memory.rst f_with_view; the CPU said "xpu.shared.array is not
    # supported", then asked for a statement of its own; it runs since the
    # twenty-fourth session (tests/test_probe_ports.py)
    @xpu.jit
    def k(x):
        f32 = cuda.shared.array(0, dtype=np.float32)[1:]
        f32[0] = 3.0
        g = cuda.shared.array(0, dtype=np.float32)
        x[0] = g[1]

    x = np.zeros(1, np.float32)
    k.cpu[1, 1, 0, 16](x)
    assert x[0] == 3.0


@pytest.mark.parametrize("target", TARGETS)
def test_dim3_values_bound_to_names(target, rng):
    # t = cuda.threadIdx, then t.x: numba.cuda types t as a dim3; the CPU target said
    # "Unknown attribute 'threadIdx' of type Module", the python target refused it
    @xpu.jit
    def k(out, a):
        t = cuda.threadIdx
        b = xpu.blockIdx
        d = cuda.blockDim
        g = cuda.gridDim
        i = b.x * d.x + t.x
        if i < a.size:
            out[i, 0] = a[i] * (t.y + 1) + b.y
            out[i, 1] = d.x * 100 + g.x + t.z

    a = rng.integers(-1000, 1000, 70)
    out = np.full((70, 2), -987654321, np.int64)
    launch(k, target, 3, 32)(out, a)
    np.testing.assert_array_equal(out[:, 0], a)
    np.testing.assert_array_equal(out[:, 1], np.full(70, 3203))
    assert "tid.x" in k.inspect_ptx("void(int64[:, :], int64[:])", cc=(9, 0))


def test_a_dim3_value_passed_on_is_one_line_on_the_cpu():
    @cuda.jit(device=True)
    def _x_of(t):
        return t.x

    @xpu.jit
    def k(out):
        t = cuda.threadIdx
        out[t.x] = _x_of(t)

    with pytest.raises(
        NumquadCompileError,
        match=r"`threadIdx` as a value \(a dim3\) is not supported by "
        r"numquad's CPU target: read `threadIdx.x`",
    ) as e:
        k.cpu[1, 32](np.zeros(32, np.int64))
    assert __file__ in str(e.value)


def _elementwise(fn):
    """A kernel storing ``fn(a[i])`` in ``out[i]`` (*fn*: a helper the kernel calls)."""

    @xpu.jit
    def k(out, a):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = fn(a[i])

    return k


def _plus_seven(x):
    pass  # a stub: numba compiles the overload's implementation


def _times_three(x):
    pass


@numba.extending.overload(_plus_seven, target="cuda")
def _plus_seven_impl(x):
    return lambda x: x + 7


@numba.extending.overload(_times_three)
def _times_three_impl(x):
    return lambda x: x * 3


@pytest.mark.slow
@pytest.mark.parametrize("stub", ["cuda-only", "generic"])
def test_overloads_run_on_the_cpu_and_are_refused_by_the_python_target(stub, rng):
    # an overload for the CUDA target was Numba's raw UnsupportedError on the CPU; on the
    # python target the stub ran as Python: None, stored as nan (a silent wrong result)
    fn, scale = (_plus_seven, None) if stub == "cuda-only" else (_times_three, 3)
    k = _elementwise(fn)
    a = rng.standard_normal(40)
    for target in ("cpu", "cpu_debug"):
        out = np.full(40, POISON_F)
        (xpu.jit(debug=True)(k.py_func) if target == "cpu_debug" else k).cpu[2, 32](out, a)
        np.testing.assert_array_equal(out, a + 7 if scale is None else a * 3)
    with pytest.raises(
        NumquadCompileError,
        match=r"is compiled through a numba `overload`, whose "
        r"implementation the python target cannot run",
    ) as e:
        k.python[2, 32](np.full(40, POISON_F), a)
    assert __file__ in str(e.value)


def test_register_jitable_helpers_run_on_every_host_target(rng):
    @numba.extending.register_jitable
    def helper(x):
        return x * 2 + 1

    k = _elementwise(helper)
    a = rng.standard_normal(40)
    for target in ("cpu", "python"):
        out = np.full(40, POISON_F)
        launch(k, target, 2, 32)(out, a)
        np.testing.assert_array_equal(out, a * 2 + 1)


@xpu.jit(["int32(int32)", "float64(float64)"])
def _prefix_plus(v):
    return v + Wave.prefixSum(v)


@xpu.jit(["float32(float32)", "float64(float64)"])
def _energy(v):
    return Wave.reduceSum(v * v)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_signature_list_binds_a_lane_function_with_cross_lane_ops(target, rng):
    # the CPU target inlines such a function and honoured one signature only: with a
    # list, int32(int32) returned int64 and an int32 argument to float64(float64) was
    # summed in int64 (numba.cuda converts to the best-fitting signature's types)
    @xpu.jit
    def k(x, out, e):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = _prefix_plus(x[i]) // 2**32  # -1 where the int32 result wrapped
            e[i] = _energy(x[i])  # float64: int32 -> float64 is safe

    x = rng.integers(2**30, 2**31 - 1, 32).astype(np.int32)
    out = np.full(32, 99, np.int64)
    e = np.full(32, -7.25e9)
    launch(k, target, 1, 32)(x, out, e)
    s = x.astype(np.int64) + np.concatenate([[0], np.cumsum(x.astype(np.int64))[:-1]])
    np.testing.assert_array_equal(out, s.astype(np.int32).astype(np.int64) // 2**32)
    np.testing.assert_array_equal(e, np.full(32, np.sum(x.astype(np.float64) ** 2)))
    if target == "cpu":
        r = _prefix_plus(x)
        assert r.dtype == np.int32
        np.testing.assert_array_equal(r, s.astype(np.int32))
        assert _energy(x.astype(np.float32)).dtype == np.float32


def test_a_signature_list_that_no_argument_fits_is_numbas_error():
    @xpu.jit
    def k(x, out):
        i = cuda.grid(1)
        out[i] = _energy(x[i])

    with pytest.raises(NumquadTypeError, match=r"No matching definition for argument type\(s\) complex128"):
        k.cpu[1, 32](np.zeros(32, np.complex128), np.zeros(32))


def test_a_configured_launch_has_numba_cudas_attributes():
    @xpu.jit
    def k(a):
        a[cuda.grid(1)] = 1

    c = k[4, (8, 2), 0, 64]
    assert (c.griddim, c.blockdim, c.stream, c.sharedmem) == ((4, 1, 1), (8, 2, 1), 0, 64)
    assert c.dispatcher is k
    c = k.cpu[(2, 3), 32]
    assert (c.griddim, c.blockdim, c.stream, c.sharedmem) == ((2, 3, 1), (32, 1, 1), 0, 0)


def _scaled(x):
    pass


def _scaled_cpu(x):
    pass


@numba.cuda.extending.overload(_scaled, target="generic")
def _scaled_generic_impl(x):
    def impl(x):
        x[0] *= 23

    return impl


@numba.cuda.extending.overload(_scaled, target="cuda")
def _scaled_cuda_impl(x):
    def impl(x):
        x[0] *= 29

    return impl


@numba.extending.overload(_scaled_cpu, target="cpu")
def _scaled_cpu_impl(x):
    def impl(x):
        x[0] = 1

    return impl


def test_a_cuda_overload_is_preferred_to_a_generic_one_and_a_cpu_one_is_refused():
    # numba-cuda's test_call_target_overloaded: the CPU target took the generic
    # overload (23); numba.cuda takes the CUDA one (29). A target="cpu" overload, which
    # numba.cuda never uses, ran on the CPU target
    @xpu.jit
    def k(x):
        _scaled(x)

    for debug in (False, True):
        x = np.ones(1, np.int32)
        (xpu.jit(debug=True)(k.py_func) if debug else k).cpu[1, 1](x)
        assert x[0] == 29

    @xpu.jit
    def kc(x):
        _scaled_cpu(x)

    with pytest.raises(
        NumquadCompileError,
        match=r'`_scaled_cpu` has a numba `overload` for target="cpu", '
        r"which numba.cuda does not use",
    ):
        kc.cpu[1, 1](np.ones(1, np.int32))


def _stamp(x):
    pass


def _stamp_cuda_only(x):
    pass


@numba.extending.overload(_stamp, target="generic")
def _stamp_generic_impl(x):
    def impl(x):
        x[0] = 1

    return impl


@numba.extending.overload(_stamp, target="cuda")
def _stamp_cuda_impl(x):
    def impl(x):
        x[0] = 2

    return impl


@numba.extending.overload(_stamp_cuda_only, target="cuda")
def _stamp_cuda_only_impl(x):
    def impl(x):
        x[0] = 3

    return impl


@numba.njit
def _stamps(x):
    _stamp(x)


def test_the_cpu_copy_of_a_cuda_overload_stays_out_of_plain_numba_code():
    # found by a probe running numba-cuda's test_overload.py: after a kernel called a
    # function with a generic and a CUDA overload, plain numba.njit code in the process
    # took the CUDA one (numquad had registered its CPU copy in Numba's one registry),
    # and a CUDA-only overload, which Numba's CPU target refuses, ran
    @xpu.jit
    def k(x, y, z):
        _stamp(x)
        _stamps(y)  # an njit helper: compiled from its source for the kernel
        _stamp_cuda_only(z)

    x, y, z = (np.zeros(1, np.int32) for _ in range(3))
    k.cpu[1, 1](x, y, z)
    assert (x[0], y[0], z[0]) == (2, 2, 3)  # numba.cuda's choices in a kernel

    def plain(x):
        _stamp(x)

    def plain_cuda_only(x):
        _stamp_cuda_only(x)

    b, c = np.zeros(1, np.int32), np.zeros(1, np.int32)
    numba.njit(plain)(b)
    _stamps(c)
    assert (b[0], c[0]) == (1, 1)  # Numba's CPU choice: the generic one
    with pytest.raises(numba.core.errors.NumbaError):  # as without numquad
        numba.njit(plain_cuda_only)(np.zeros(1, np.int32))
    x[0] = y[0] = z[0] = 0
    k.cpu[1, 1](x, y, z)  # and the kernel still has its own
    assert (x[0], y[0], z[0]) == (2, 2, 3)
    k2 = xpu.jit(k.py_func)  # a new compile after plain Numba's
    x[0] = y[0] = z[0] = 0
    k2.cpu[1, 1](x, y, z)
    assert (x[0], y[0], z[0]) == (2, 2, 3)


@numba.extending.register_jitable
def _jitable_floor(x):
    return math.floor(x) + math.ceil(x) * 0.5 + x**-1


@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
def test_a_register_jitable_helper_has_numba_cudas_semantics(target):
    # it was compiled by Numba's CPU target: math.floor(1e20) was int64 (9.2e18 there;
    # numba.cuda's is float64) and 0.0 ** -1 raised ZeroDivisionError (inf on the GPU)
    k = _elementwise(_jitable_floor)
    x = np.array([1e20, -2.5, 0.343, 7.75, 0.0])
    out = np.full(5, POISON_F)
    if target == "cpu-debug":
        xpu.jit(debug=True)(k.py_func).cpu[1, 32](out, x)
    else:
        launch(k, target, 1, 32)(out, x)
    want = [float(math.floor(v)) + float(math.ceil(v)) * 0.5 + (1 / v if v else math.inf) for v in x]
    np.testing.assert_array_equal(out, want)


# ---------------------------------------------------------------------------
# Helpers numquad's ops reach from numba.cuda and Numba functions, on the GPU
# (a probe compiling the CPU-tested kernels for the GPU, twenty-first session)
# ---------------------------------------------------------------------------


@cuda.jit(device=True)
def _dev_sum(x):
    return Wave.reduceSum(x)


@numba.njit
def _nj_sum(x):
    return Wave.reduceSum(x) + 1


@numba.extending.register_jitable
def _rj_swap(x):
    return Quad.swapHorizontal(x) + 2


@cuda.jit(device=True)
def _dev_outer(x):
    return _dev_sum(x) * 2  # reaches the op through another helper


@xpu.jit
def _lane_fac(n):
    if n <= 1:
        return 1
    return n * _lane_fac(n - 1)


@xpu.jit
def _k_helpers_with_ops(out, x):
    i = cuda.grid(1)
    if x[i] > 0:  # the helpers' ops take this branch's lanes
        out[i] = _dev_sum(x[i]) + _nj_sum(x[i]) * 10 + _rj_swap(x[i]) * 100 + _dev_outer(x[i]) * 1000
    else:
        out[i] = _lane_fac(np.int64(i % 6))


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_numba_cuda_and_numba_helpers_with_ops_and_recursion(target, rng):
    """The CPU target ran these; the CUDA target refused them: numba-cuda typed
    ``Wave`` inside a ``@cuda.jit(device=True)``, ``@numba.njit`` or ``register_jitable``
    helper as a module ("Unknown attribute 'reduceSum'"), and a recursive lane
    function's device function made itself for ever (RecursionError). Such helpers
    now compile as ``@xpu.jit`` functions with their member mask; a recursive one is
    a call (numba.cuda compiles it so)."""
    x = rng.integers(-3, 4, 64).astype(np.int64)
    out = np.full(64, -777, np.int64)
    launch(_k_helpers_with_ops, target, 2, 32)(out, x)
    want = np.empty(64, np.int64)
    for w in range(2):
        sl = slice(32 * w, 32 * w + 32)
        xs, pos = x[sl], x[sl] > 0
        total = xs[pos].sum()
        swap = xs[np.arange(32) ^ 1]
        swapped = np.where(pos[np.arange(32) ^ 1], swap, xs)  # an inactive source: own value
        lanes = np.arange(32 * w, 32 * w + 32)
        fac = np.array([math.factorial(int(v)) for v in lanes % 6])
        want[sl] = np.where(pos, total + (total + 1) * 10 + (swapped + 2) * 100 + total * 2 * 1000, fac)
    np.testing.assert_array_equal(out, want)


def test_helpers_with_ops_and_recursion_compile_for_the_gpu():
    ptx = _k_helpers_with_ops.inspect_ptx((ntypes.int64[::1], ntypes.int64[::1]), cc=(9, 0))
    assert "shfl.sync" in ptx or "redux.sync" in ptx
    assert _lane_fac.inspect_ptx((ntypes.int64,), cc=(9, 0))


@xpu.jit("int32(int32, int32)")
def _xpu_pack(a, b):
    return (a & 255) << 8 | (b & 255)


@cuda.jit("int32(int32, int32)", device=True)
def _cuda_pack(a, b):
    return (a & 255) << 8 | (b & 255)


@xpu.jit
def _k_declared_device_functions(out, x):
    i = cuda.grid(1)
    out[i] = _xpu_pack(x[i], x[i] + np.float32(1.5)) + (_cuda_pack(x[i], np.float32(3.75)) << 16)


@pytest.mark.parametrize("target", TARGETS + ["python"])
def test_declared_device_functions_cast_their_arguments(target, rng):
    """A device function declared ``int32(int32, int32)`` called with float32 values:
    the arguments are converted to int32 (numba-cuda's test_device_casting). The CUDA
    target typed an ``@xpu.jit`` one's body with the caller's float32 (``&`` of a
    float: no implementation), with a GPU too; without a GPU, numba.cuda's own was
    compiled for the caller's types."""
    x = rng.uniform(0, 400, 64).astype(np.float32)
    out = np.full(64, -1, np.int64)
    launch(_k_declared_device_functions, target, 2, 32)(out, x)
    a, b = x.astype(np.int32), (x + np.float32(1.5)).astype(np.int32)
    # (an int32 result shifted by an int literal is an int64 in Numba)
    want = ((a & 255) << 8 | (b & 255)) + (((a & 255) << 8 | 3).astype(np.int64) << 16)
    np.testing.assert_array_equal(out, want)


def test_declared_device_functions_compile_for_the_gpu_with_their_signature():
    ptx = _k_declared_device_functions.inspect_ptx((ntypes.int64[::1], ntypes.float32[::1]), cc=(9, 0))
    assert "cvt.rzi.s32.f32" in ptx  # the float32 arguments converted to int32


def test_a_function_defined_in_numba_cudas_own_tests_is_user_code():
    """numba-cuda's test modules (numba.cuda.tests.*) define plain functions their
    kernels call; the CPU target read anything of a ``numba.cuda.*`` module as
    numba.cuda's API and refused it ("`cuda.add` is not supported"); a probe running
    those tests on the CPU target found it."""

    def add(a, b):
        return a + b

    add.__module__ = "numba.cuda.tests.cudapy.test_device_func"
    add = numba.jit(add)

    def k(ary):
        i = cuda.grid(1)
        ary[i] = add(ary[i], 1)

    x = np.random.default_rng(3).integers(-100, 100, 10)
    got = x.copy()
    xpu.jit(k)[1, 10](got)
    np.testing.assert_array_equal(got, x + 1)
