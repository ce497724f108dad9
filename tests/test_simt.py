"""The plain-Python SIMT interpreter (numquad/simt.py), the fuzzer's oracle.

Every op on every type against ops.py's reference, with active masks made by real
divergence (an ``if`` in the kernel) and partial waves; then control flow whose
expected values are worked out here with NumPy, lane by lane (docs/semantics.md).
No compiled target is involved.
"""

import linecache
import math

import numpy as np
import pytest

from numba import cuda

from numquad import NumquadLaunchError, NumquadTypeError, Quad, Wave, ops, simt, xpu

W = 32
TYPES = [
    np.dtype(t)
    for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64")
]
SEL_TYPES = [np.dtype(t) for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")]


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    if a.dtype.kind == "f":
        u = np.dtype(f"u{a.dtype.itemsize}")
        return (a.view(u) == b.view(u)) | (np.isnan(a) & np.isnan(b))
    return a == b


def random_values(rng, dt, n):
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        small = rng.integers(-3, 40, n).astype(dt)
        bits = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(dt)
        return np.where(rng.random(n) < 0.5, small, bits)
    v = (rng.standard_normal(n) * 50).astype(dt)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40], dt)
    pick = rng.random(n) < 0.25
    v[pick] = special[rng.integers(0, len(special), pick.sum())]
    return v


def random_selectors(rng, dt, n):
    info = np.iinfo(dt)
    small = rng.integers(max(info.min, -40), 41, n)
    big = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(dt)
    return np.where(rng.random(n) < 0.6, small.astype(dt), big)


# -- every op, every type, masks from real divergence ---------------------------------


@pytest.fixture(scope="module")
def op_kernels(tmp_path_factory):
    """One kernel per op, ``if cond[i]: out[i] = op(x[i], sel[i])``, in a real file."""
    lines = ["import numpy as np", "from numquad import xpu, Quad, Wave", ""]
    for q, op in ops.OPS.items():
        name = q.replace(".", "_")
        call = q + "(" + ", ".join(["x[i]", "sel[i]"][: len(op.params)]) + ")"
        lines += [
            "@xpu.jit",
            f"def {name}(x, sel, cond, out):",
            "    i = xpu.grid(1)",
            "    if cond[i]:",
            f"        out[i] = {call}",
            "",
        ]
    path = tmp_path_factory.mktemp("simt") / "simt_op_kernels.py"
    path.write_text("\n".join(lines))
    import importlib.util

    spec = importlib.util.spec_from_file_location("simt_op_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _cases():
    for q, op in ops.OPS.items():
        types = op.accepted or (np.dtype("int32"),)
        for dt in types:
            yield pytest.param(q, dt, id=f"{q}-{dt}")


@pytest.mark.parametrize("q,dt", list(_cases()))
def test_every_op_against_the_reference(op_kernels, q, dt):
    op = ops.OPS[q]
    rng = np.random.default_rng([list(ops.OPS).index(q), TYPES.index(dt)])
    blocks, threads = 2, 80  # waves of 32, 32 and 16 lanes per block
    n = blocks * threads
    x = random_values(rng, dt, n)
    sdt = SEL_TYPES[rng.integers(0, len(SEL_TYPES))]
    sel = random_selectors(rng, sdt, n)
    for mode in ("full", "prefix", "random"):
        if mode == "full":
            cond = np.ones(n, bool)
        elif mode == "prefix":
            cond = (np.arange(n) % threads % W) < rng.integers(1, W, n // W + 1).repeat(W)[:n]
        else:
            cond = rng.random(n) < 0.6
        rt = op.result_dtype(dt)
        out = np.zeros(n, rt)
        getattr(op_kernels, q.replace(".", "_")).python[blocks, threads](x, sel, cond, out)
        # the reference works on (waves, 32); pad each block's partial wave
        per = -(-threads // W) * W

        def waves(a, fill):
            a = a.reshape(blocks, threads)
            pad = np.full((blocks, per - threads), fill, a.dtype)
            return np.concatenate([a, pad], axis=1).reshape(-1, W)

        active = waves(cond, False)
        args = [waves(x, x[0])] + ([waves(sel, sel[0])] if len(op.params) > 1 else [])
        ref = op.reference(*args, active=active)
        got = waves(out, out[0])
        ok = same_bits(got[active], np.asarray(ref, rt)[active])
        assert ok.all(), (mode, np.flatnonzero(~ok)[:5], got[active][~ok][:5], np.asarray(ref)[active][~ok][:5])


# -- control flow: expected values by hand -----------------------------------------------


def run(fn, grid, block, *args):
    xpu.jit(fn).python[grid, block](*args)
    return args


def by_waves(a):
    return a.reshape(-1, W)


def k_loop_prefix(trip, out):
    i = xpu.grid(1)
    acc = np.int64(0)
    for j in range(trip[i]):
        acc += Wave.prefixSum(np.int64(1))
    out[i] = acc


def test_loop_with_per_lane_trip_counts():
    rng = np.random.default_rng(1)
    trip = rng.integers(0, 5, 96).astype(np.int32)
    out = np.full(96, -1, np.int64)
    run(k_loop_prefix, 1, 96, trip, out)
    t = by_waves(trip)
    exp = np.zeros_like(t, dtype=np.int64)
    for j in range(5):
        act = t > j  # the active set at iteration j
        below = np.cumsum(act, axis=1) - act
        exp += np.where(act, below, 0)
    np.testing.assert_array_equal(out, exp.ravel())


def k_while_any(out):
    i = xpu.grid(1)
    c = 0
    while Wave.any(c < 1):
        c += 1
    out[i] = c


def test_while_any_leaves_every_lane_at_one():
    out = np.zeros(40, np.int64)
    run(k_while_any, 1, 40, out)
    assert (out == 1).all()


def k_break_continue_return(x, out, trace):
    i = xpu.grid(1)
    v = x[i]
    n = np.int64(0)
    for j in range(6):
        if v == j:
            break
        if (v + j) % 2 == 0:
            continue
        n += np.int64(Wave.ballot(True))  # which lanes are here, this iteration
        trace[i, j] = Wave.ballot(True)
    if v == 7:
        return
    out[i] = n * 100 + np.int64(Wave.countBits(True))


def test_break_continue_return():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 9, 64).astype(np.int64)
    out = np.full(64, -1, np.int64)
    trace = np.zeros((64, 6), np.uint32)
    run(k_break_continue_return, 1, 64, x, out, trace)
    v = by_waves(x)
    live = np.ones(v.shape, bool)
    n = np.zeros(v.shape, np.int64)
    exp_trace = np.zeros((2, W, 6), np.uint32)
    for j in range(6):
        live &= v != j
        here = live & ((v + j) % 2 != 0)
        words = (here * (1 << np.arange(W))).sum(axis=1).astype(np.uint32)
        n += np.where(here, words[:, None].astype(np.int64), 0)
        exp_trace[:, :, j] = np.where(here, words[:, None], 0)
    after = v != 7
    cnt = after.sum(axis=1)[:, None]
    exp = np.where(after, n * 100 + cnt, -1)
    np.testing.assert_array_equal(out, exp.ravel())
    np.testing.assert_array_equal(trace, exp_trace.reshape(64, 6))


@xpu.jit
def lane_rank(v):
    if v < 0:
        return np.int64(-1)  # these lanes leave before the op
    return np.int64(Wave.prefixCountBits(True)) * 1000 + np.int64(Wave.readFirst(v))


def k_lane_function_under_divergence(x, out):
    i = xpu.grid(1)
    if x[i] % 2 == 0:
        out[i] = lane_rank(x[i])  # call site 1
    else:
        out[i] = lane_rank(x[i]) + 1000000  # call site 2: another op instance


def test_lane_function_with_ops_under_divergence():
    rng = np.random.default_rng(3)
    x = rng.integers(-20, 20, 64).astype(np.int64)
    out = np.zeros(64, np.int64)
    run(k_lane_function_under_divergence, 1, 64, x, out)
    v = by_waves(x)
    exp = np.zeros(v.shape, np.int64)
    for site, base in ((v % 2 == 0, 0), (v % 2 != 0, 1000000)):
        act = site & (v >= 0)
        rank = np.cumsum(act, axis=1) - act
        first = np.take_along_axis(v, np.argmax(act, axis=1)[:, None], axis=1)
        exp = np.where(act, rank * 1000 + first + base, exp)
        exp = np.where(site & (v < 0), -1 + base, exp)
    np.testing.assert_array_equal(out, exp.ravel())


def test_lane_function_on_arrays():
    x = np.arange(-5, 65, dtype=np.int64)  # waves of 32, 32 and 6 lanes
    r = lane_rank.python(x)
    assert r.dtype == np.int64 and r.shape == x.shape
    xs = np.concatenate([x, np.zeros(26, np.int64)]).reshape(-1, W)
    act = (np.arange(96) < 70).reshape(-1, W) & (xs >= 0)
    rank = np.cumsum(act, axis=1) - act
    first = np.take_along_axis(xs, np.argmax(act, axis=1)[:, None], axis=1)
    exp = np.where(act, rank * 1000 + first, -1).ravel()[:70]
    np.testing.assert_array_equal(r, exp)
    r2 = lane_rank.python(x.reshape(7, 10))
    np.testing.assert_array_equal(r2.ravel(), exp)


@xpu.jit
def lane_scaled(a, b):
    return Wave.prefixSum(a) * b + Quad.swapVertical(a)


@pytest.mark.parametrize(
    "dtype,scalar", [(np.uint16, True), (np.float32, 2), (np.int8, 2.5), (np.float32, 2.0), (np.int32, np.int8(3))]
)
def test_lane_call_scalars_are_typed_as_on_the_compiled_targets(dtype, scalar, rng):
    """A Python scalar in a lane call is weak but keeps its kind (numquad/_lanecall.py):
    ``f(x_float32, 2)`` passes an int64 and computes in float64, as Numba types it on
    the CPU. The python target typed it by NumPy's rule (float32) and a bool as the
    array's type: other dtypes and values than the CPU's."""
    a = rng.integers(0 if dtype == np.uint16 else -40, 40, (3, 37)).astype(dtype)
    want = lane_scaled.cpu(a, scalar)
    got = lane_scaled.python(a, scalar)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_lane_call_out_errors_are_the_compiled_targets(rng):
    a = rng.integers(-9, 9, 40)
    for target in ("cpu", "python"):
        with pytest.raises(NumquadLaunchError, match=r"out= has shape \(41,\)"):
            getattr(lane_scaled, target)(a, 2, out=np.zeros(41, np.int64))
        with pytest.raises(NumquadTypeError, match="out= has dtype float32"):
            getattr(lane_scaled, target)(a, 2, out=np.zeros(40, np.float32))


@xpu.jit
def ids(x):
    return xpu.threadIdx.x


@xpu.jit
def gids(x):
    return xpu.grid(1)


def test_builtin_types():
    assert ids.python(np.zeros(300)).dtype == np.int32
    np.testing.assert_array_equal(ids.python(np.zeros(300)), np.arange(300) % 256)
    g = gids.python(np.zeros(300))
    assert g.dtype == np.int64
    np.testing.assert_array_equal(g, np.arange(300))


def k_3d(out):
    t = xpu.threadIdx.x + xpu.threadIdx.y * xpu.blockDim.x + xpu.threadIdx.z * xpu.blockDim.x * xpu.blockDim.y
    b = xpu.blockIdx.x + xpu.blockIdx.y * xpu.gridDim.x + xpu.blockIdx.z * xpu.gridDim.x * xpu.gridDim.y
    nt = xpu.blockDim.x * xpu.blockDim.y * xpu.blockDim.z
    out[b * nt + t] = np.int64(Wave.readFirst(t)) * 100 + np.int64(xpu.laneid) + np.int64(Wave.all(True)) * 10000


def test_3d_launch_and_partial_waves():
    out = np.full(8 * 60, -1, np.int64)
    run(k_3d, (2, 2, 2), (4, 3, 5), out)
    t = np.arange(8 * 60) % 60
    full = t < 32  # the second wave has 28 lanes: Wave.all is false
    np.testing.assert_array_equal(out, (t // 32) * 3200 + t % 32 + full * 10000)


def k_shared_reverse(x, out):
    s = xpu.shared.array(100, np.float32)
    t = xpu.threadIdx.x
    i = xpu.grid(1)
    s[t] = x[i]
    xpu.syncthreads()
    out[i] = s[99 - t] + Wave.shuffle(s[(t * 7 + 3) % 100], np.uint64(2**64 - 1))


def test_shared_memory_and_syncthreads():
    x = np.arange(300, dtype=np.float32)
    out = np.zeros(300, np.float32)
    run(k_shared_reverse, 3, 100, x, out)
    b, t = np.arange(300) // 100, np.arange(300) % 100
    rev = x[b * 100 + 99 - t]
    mixed = x[b * 100 + (t * 7 + 3) % 100]
    # lane 31 of each wave (uint64 2**64-1 & 31); the partial wave (lanes 96..99) reads its own
    w = t // 32
    src = np.where(w * 32 + 31 < 100, w * 32 + 31, t)
    np.testing.assert_array_equal(out, rev + mixed[b * 100 + src])


def k_syncwarp(x, out):
    s = xpu.shared.array(64, np.int64)
    t = xpu.threadIdx.x
    s[t] = x[t]
    xpu.syncwarp()
    out[t] = s[(t & 32) | ((t + 1) & 31)]


def test_syncwarp_exchange():
    x = np.arange(64, dtype=np.int64) * 3
    out = np.zeros(64, np.int64)
    run(k_syncwarp, 1, 64, x, out)
    t = np.arange(64)
    np.testing.assert_array_equal(out, x[(t & 32) | ((t + 1) & 31)])


def k_atomics(x, acc, olds):
    i = xpu.grid(1)
    xpu.atomic.add(acc, 0, x[i])
    xpu.atomic.max(acc, 1, x[i])
    xpu.atomic.min(acc, 2, x[i])
    olds[i] = xpu.atomic.exch(acc, 3, i)


def test_atomics():
    x = np.arange(1, 129, dtype=np.int64)
    acc = np.array([0, -10, 1000, -1], np.int64)
    olds = np.zeros(128, np.int64)
    run(k_atomics, 2, 64, x, acc, olds)
    assert acc[0] == x.sum() and acc[1] == 128 and acc[2] == 1
    assert sorted(olds.tolist() + [acc[3]]) == [-1] + list(range(128))


def k_float_minmax(x, out):
    i = xpu.grid(1)
    out[i, 0] = Wave.reduceMin(x[i])
    out[i, 1] = Wave.reduceMax(x[i])
    out[i, 2] = Wave.prefixMin(x[i])


def test_float_min_max_rules():
    x = np.full(32, np.nan, np.float32)
    x[3], x[9] = 0.0, -0.0
    out = np.zeros((32, 3), np.float32)
    run(k_float_minmax, 1, 32, x, out)
    assert np.signbit(out[:, 0]).all() and (out[:, 0] == 0).all()  # min(+0, -0) = -0
    assert not np.signbit(out[:, 1]).any() and (out[:, 1] == 0).all()  # max = +0, NaN loses
    assert np.isinf(out[0, 2]) and np.isnan(out[1:4, 2]).all()  # only NaNs below: NaN
    assert out[4, 2] == 0 and not np.signbit(out[4, 2]) and np.signbit(out[10, 2])


def k_selectors(x, out, s64, u64, u32):
    i = xpu.grid(1)
    out[i, 0] = Wave.shuffleDown(x[i], s64)  # 2**32 + 1: out of range, own value
    out[i, 1] = Wave.shuffle(x[i], u64)  # 2**64 - 1 & 31 = lane 31
    out[i, 2] = Wave.shuffleUp(x[i], np.int64(-1))  # negative: reads lane + 1
    out[i, 3] = Wave.shuffleXor(x[i], u32)  # 4294967295 & 31 = 31
    out[i, 4] = Quad.broadcast(x[i], np.int8(-1))  # -1 & 3 = 3


def test_selectors_by_exact_value():
    x = np.arange(32, dtype=np.int32) * 10
    out = np.zeros((32, 5), np.int32)
    run(k_selectors, 1, 32, x, out, np.int64(2**32 + 1), np.uint64(2**64 - 1), np.uint32(4294967295))
    lane = np.arange(32)
    np.testing.assert_array_equal(out[:, 0], x)
    np.testing.assert_array_equal(out[:, 1], np.full(32, 310))
    np.testing.assert_array_equal(out[:, 2], np.where(lane < 31, x[np.minimum(lane + 1, 31)], x))
    np.testing.assert_array_equal(out[:, 3], x[lane ^ 31])
    np.testing.assert_array_equal(out[:, 4], x[(lane & ~3) | 3])


def k_scan_ranks(x, out):
    i = xpu.grid(1)
    if i == 1 or i == 3 or i == 30:
        out[i] = Wave.prefixSum(x[i])
        out[i + 32] = Wave.prefixSum(x[i] > 0)


def test_scan_over_ranks_and_bool_counts():
    x = np.zeros(32, np.float32)
    x[1], x[3], x[30] = 1e8, 1.0, -1e8
    out = np.full(64, 7, np.float32)
    run(k_scan_ranks, 1, 32, x, out)
    assert out[1] == 0 and not np.signbit(out[1])  # rank 0: +0.0
    assert out[3] == np.float32(1e8)
    assert out[30] == np.float32(np.float32(1e8) + np.float32(1.0))
    np.testing.assert_array_equal(out[[33, 35, 62]], [0, 1, 2])


def k_wrap(x, out):
    i = xpu.grid(1)
    out[i] = Wave.reduceSum(x[i])


def test_integer_wrap():
    x = np.full(32, 127, np.int8)
    out = np.zeros(32, np.int8)
    run(k_wrap, 1, 32, x, out)
    assert (out == np.int8(-32)).all()  # 127 * 32 = 4064 = 15 * 256 - 32


def k_divergent_barrier(x):
    if xpu.threadIdx.x < 16:
        xpu.syncthreads()
    else:
        xpu.syncthreads()


def test_barrier_under_divergence_is_reported():
    with pytest.raises(simt.SIMTError, match="different syncthreads"):
        run(k_divergent_barrier, 1, 32, np.zeros(1))


def k_print(out):
    i = xpu.grid(1)
    print("thread", i, "prefix", Wave.prefixSum(np.int32(1)))
    out[i] = 1


def test_print_inside_a_kernel(capsys):
    run(k_print, 1, 3, np.zeros(3, np.int64))
    assert capsys.readouterr().out.splitlines() == [f"thread {k} prefix {k}" for k in range(3)]


def test_launch_is_validated():
    with pytest.raises(NumquadLaunchError):
        run(k_wrap, 1, 2000, np.zeros(2000, np.int8), np.zeros(2000, np.int8))


def k_busy(x, out):
    i = xpu.grid(1)
    v = x[i]
    for k in range(8):
        v = v + Wave.shuffleXor(v, 1 << (k % 5)) + Wave.prefixSum(v) + Quad.swapVertical(v)
        if v > 0:
            v = v - Wave.reduceMax(v)
    out[i] = v


@pytest.mark.slow
def test_a_busy_block_gives_the_cpu_targets_bits(rng):
    """256 threads, 32 op instances each, a lane-varying branch between them: the
    interpreter and the compiled CPU target agree (no timing asserted: shared machines)."""
    x = rng.integers(-50, 50, 256).astype(np.int64)
    got = np.full(256, -(2**62), np.int64)  # poisoned: an unwritten element shows
    want = np.full(256, -(2**62) + 1, np.int64)
    k = xpu.jit(k_busy)
    k.python[1, 256](x, got)
    k.cpu[1, 256](x, want)
    np.testing.assert_array_equal(got, want)


@xpu.jit
def lane_shared(v):
    s = xpu.shared.array(64, np.int64)  # the lane function's own shared array
    t = xpu.threadIdx.x
    s[t] = v * 10
    xpu.syncwarp()
    return s[t ^ 1] + Wave.prefixSum(np.int64(1))


def k_two_shared(x, out):
    s = xpu.shared.array(64, np.int64)
    t = xpu.threadIdx.x
    s[t] = x[t]
    xpu.syncthreads()
    out[t] = s[63 - t] * 1000 + lane_shared(x[t])


def test_lane_function_has_its_own_shared_array():
    x = np.arange(64, dtype=np.int64)
    out = np.zeros(64, np.int64)
    run(k_two_shared, 1, 64, x, out)
    t = np.arange(64)
    np.testing.assert_array_equal(out, (63 - t) * 1000 + (t ^ 1) * 10 + t % 32)


# -- numba.cuda's kernel API on the python target (issue: the whole kernel API) -------

_TAB = np.arange(8, dtype=np.int32) * 3


def _numba_cuda_api_kernel():
    from numba import cuda

    @xpu.jit
    def k(x, out, flags, acc):
        i = xpu.grid(1)
        t = xpu.threadIdx.x
        c = cuda.syncthreads_count(np.int32(x[i] > 0))
        a = cuda.syncthreads_and(np.int32(x[i] > -100))
        o = cuda.syncthreads_or(np.int32(x[i] > 50))
        cuda.threadfence()
        cuda.threadfence_block()
        tab = cuda.const.array_like(_TAB)
        v = (
            cuda.popc(np.uint32(x[i]))
            + cuda.brev(np.uint32(x[i])) % 7
            + cuda.clz(np.int32(x[i]))
            + cuda.ffs(np.int32(x[i]))
        )
        f = cuda.fma(np.float32(x[i]), np.float32(2), np.float32(1))
        s = cuda.selp(x[i] > 0, np.int32(1), np.int32(2))
        m = cuda.match_any_sync(0xFFFFFFFF, x[i] & 3)
        mm = np.int32(0)
        same = False
        if x[i] > -20:  # a part of the wave
            mm = cuda.match_any_sync(0xFFFF00FF, x[i] & 1)
            mm, same = cuda.match_all_sync(0xFFFFFFFF, x[i] & 1)
        b = cuda.ballot_sync(0xFFFFFFFF, x[i] > 0) & cuda.lanemask_lt()
        cuda.atomic.inc(acc, 0, np.uint32(100))
        cuda.atomic.and_(acc, 1, np.uint32(0xFF ^ t))
        out[i] = np.float64(c + a + o + v + s + tab[t & 7] + m + mm + b) + f
        flags[i] = same

    return k


@pytest.mark.slow
def test_numba_cuda_api_against_the_cpu(rng):
    pytest.importorskip("numba_cuda")
    k = _numba_cuda_api_kernel()
    x = rng.integers(-100, 100, 96).astype(np.int32)
    x[40:48] = 5  # equal values in part of a wave
    res = {}
    for target in ("python", "cpu"):
        out = np.full(96, np.nan)
        flags = np.zeros(96, bool)
        acc = np.array([0, 0xFFFF], np.uint32)
        getattr(k, target)[3, 32](x, out, flags, acc)
        res[target] = (out, flags, acc)
    for a, b in zip(res["python"], res["cpu"]):
        np.testing.assert_array_equal(a, b)
    assert not np.isnan(res["python"][0]).any()


@pytest.mark.parametrize(
    "qualname,field,value,args",
    [
        ("Wave.any", "vote", "majority", [(True,)]),
        ("Quad.all", "vote", "majority", [(True,)]),
        ("Wave.countBits", "vote", "median", [(True,)]),
        ("Wave.shuffle", "sel_kind", "rotate", [(np.int32(1), 0)]),
        ("Wave.reduceMax", "combine", "sub", [(np.int32(1),)]),
    ],
)
def test_an_unknown_catalogue_field_value_raises(qualname, field, value, args):
    """The interpreter picks each op's behaviour by its ops.py fields; a value it
    has no branch for is an error, not a default branch."""
    import copy

    bad = copy.copy(ops.get(qualname))
    object.__setattr__(bad, field, value)
    with pytest.raises(NotImplementedError, match=f"{field}={value!r}"):
        simt._execute(bad, [0], args)


MATH_1 = [
    "sqrt",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log10",
    "log2",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "fabs",
    "degrees",
    "radians",
    "erf",
    "erfc",
    "gamma",
    "lgamma",
]
MATH_2 = ["atan2", "hypot", "pow", "fmod", "copysign", "remainder"]
EXACT = {"sqrt", "fabs", "fmod", "copysign"}


def _math_kernel(name, nargs):
    args = "a[i]" if nargs == 1 else "a[i], b[i]"
    src = f"def k_math(a, b, o):\n    i = xpu.grid(1)\n    if i < a.size:\n        o[i] = math.{name}({args})\n"
    fname = f"<test_simt math.{name}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns = {"xpu": xpu, "math": math}
    exec(compile(src, fname, "exec"), ns)  # noqa: S102
    return ns["k_math"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", MATH_1 + MATH_2)
def test_math_domain_and_range_errors_give_nan_and_inf_as_compiled(name, dtype, rng):
    """Python's math raises on sqrt(-1), log(0), exp(1000), fmod(inf, 1), ...; the kernel
    targets give NaN and inf. The python target follows the CPU target: the same special
    values, and the same bits for the exact functions (the others are close)."""
    nargs = 1 if name in MATH_1 else 2
    special = np.array([0.0, -0.0, 1.0, -1.0, -2.0, 0.5, 1000.0, -1000.0, np.inf, -np.inf, np.nan, 1e-310], dtype)
    vals = np.concatenate([special, (rng.standard_normal(20) * 50).astype(dtype)])
    a, b = (np.repeat(vals, vals.size), np.tile(vals, vals.size)) if nargs == 2 else (vals, vals)
    k = xpu.jit(_math_kernel(name, nargs))
    got = {}
    for target in ("cpu", "python"):
        o = np.full(a.size, -7777, np.float64)
        getattr(k, target)[(a.size + 63) // 64, 64](a, b, o)
        got[target] = o
    c, p = got["cpu"], got["python"]
    assert np.array_equal(np.isnan(c), np.isnan(p)), a[np.isnan(c) != np.isnan(p)]
    fin = np.isfinite(c)
    assert np.array_equal(c[~fin & ~np.isnan(c)], p[~fin & ~np.isnan(c)])
    assert np.array_equal(fin, np.isfinite(p))
    if name in EXACT:
        assert np.array_equal(c.view(np.int64)[fin], p.view(np.int64)[fin])
    else:  # outside the bit-for-bit promise (docs/semantics.md "Math functions")
        tol = 1e-6 if dtype == "float32" else 1e-13
        np.testing.assert_allclose(p[fin], c[fin], rtol=tol, atol=tol)


def k_int_promotion(a8, b8, a32, u64, i64, e, o):
    i = xpu.grid(1)
    if i < a8.size:
        o[0, i] = a8[i] + b8[i]  # uint8 + uint8: uint64 in Numba, no wrap at 256
        o[1, i] = a32[i] * a32[i]  # int32 * int32: int64
        o[2, i] = u64[i] + i64[i]  # uint64 + int64: int64 (NumPy: float64)
        o[3, i] = a8[i] << np.int64(4)  # a uint8 shifted: uint64
        o[4, i] = a32[i] ** e[i]  # a negative exponent: 0, 1, -1 or 0x80..0
        x = a8[i]
        x += b8[i]  # augmented: the same widening
        o[5, i] = x
        o[6, i] = -a32[i] // np.int32(7) % np.int32(5)
        o[7, i] = -(a8[i] > b8[i])  # -bool: int64 (NumPy refuses it)
        o[8, i] = (a8[i] > b8[i]) + (a32[i] > 0) + np.int8(a8[i] & 1)  # bools add as ints
        o[9, i] = (a8[i] > b8[i]) ^ (a32[i] > 0)  # bool ^ bool: bool


def k_float_promotion(f32, f64, u16, e, o):
    i = xpu.grid(1)
    if i < f32.size:
        o[0, i] = f32[i] ** e[i]  # square-and-multiply in float32, 1/r if e < 0
        o[1, i] = f64[i] ** e[i]
        o[2, i] = f64[i] ** 7
        o[3, i] = f32[i] ** -3
        o[4, i] = f32[i] + u16[i]  # uint16 and float32 meet in float64


@pytest.mark.slow
def test_integer_arithmetic_is_widened_as_numba_widens_it(rng):
    """The python target computes integer operators in Numba's result types (uint64 when
    both operands are unsigned, else int64), as the CPU target does: NumPy's own rules
    wrap uint8 sums at 256 and int32 products at 2**31."""
    n = 100
    a8 = rng.integers(0, 256, n, dtype=np.uint8)
    b8 = rng.integers(0, 256, n, dtype=np.uint8)
    a32 = rng.integers(-(2**31), 2**31, n, dtype=np.int32)
    a32[:6] = [0, 1, -1, 2, 0, -1]
    u64 = rng.integers(0, 2**64, n, dtype=np.uint64)
    i64 = rng.integers(-(2**63), 2**63, n, dtype=np.int64)
    e = rng.integers(-3, 4, n).astype(np.int64)
    e[:6] = [-1, -2, -3, -1, 2, 2]
    got = {}
    for target in ("cpu", "python"):
        o = np.full((10, n), -7777, np.int64)
        getattr(xpu.jit(k_int_promotion), target)[4, 32](a8, b8, a32, u64, i64, e, o)
        got[target] = o
    np.testing.assert_array_equal(got["python"], got["cpu"])
    a, b = a8.astype(np.int64), b8.astype(np.int64)
    np.testing.assert_array_equal(got["python"][0], a + b)  # no wrap at 256
    np.testing.assert_array_equal(got["python"][5], a + b)
    np.testing.assert_array_equal(got["python"][1], a32.astype(np.int64) ** 2)
    np.testing.assert_array_equal(got["python"][4][:6], [-(2**63), 1, -1, 0, 0, 1])
    np.testing.assert_array_equal(got["python"][7], -(a8 > b8).astype(np.int64))
    np.testing.assert_array_equal(got["python"][8], (a8 > b8).astype(np.int64) + (a32 > 0) + (a8 & 1))
    np.testing.assert_array_equal(got["python"][9], (a8 > b8) ^ (a32 > 0))


@pytest.mark.slow
def test_float_powers_and_mixed_types_as_numba_computes_them(rng):
    """A float to an integer power is square-and-multiply in Numba (NumPy's pow rounds
    otherwise in about half the cases); uint16 with float32 is float64."""
    n = 200
    f32 = (rng.random(n) * 3).astype(np.float32)
    f64 = rng.random(n) * 3
    u16 = rng.integers(0, 65536, n, dtype=np.uint16)
    e = rng.integers(-20, 21, n)
    got = {}
    for target in ("cpu", "python"):
        o = np.full((5, n), np.nan)
        getattr(xpu.jit(k_float_promotion), target)[7, 32](f32, f64, u16, e, o)
        got[target] = o
    np.testing.assert_array_equal(got["python"].view(np.int64), got["cpu"].view(np.int64))
    want = np.empty(n, np.float32)  # the algorithm, written out here
    for k in range(n):
        r, x, m = np.float32(1), f32[k], abs(int(e[k]))
        while m:
            if m & 1:
                r = np.float32(r * x)
            m >>= 1
            x = np.float32(x * x)
        want[k] = np.float32(1) / r if e[k] < 0 else r
    np.testing.assert_array_equal(got["python"][0], want.astype(np.float64))
    np.testing.assert_array_equal(got["python"][4], f32.astype(np.float64) + u16)


def _narrow(a, o8, o16u):
    i = xpu.grid(1)
    if i < a.shape[0]:
        o8[i] = a[i] * 3  # int64 into int8: wraps, as Numba compiles it
        o16u[i] = a[i] - 1000
        o16u[i] += a[i] * 70000


def _records(r, out):
    i = xpu.grid(1)
    if i < r.shape[0]:
        out[i] = r[i].a + r[i].b
        r[i].a = r[i].a * 2


@pytest.mark.slow
def test_the_python_target_wraps_narrowing_stores_and_reads_record_fields(rng):
    """Day-one probes: the python target raised OverflowError on ``o8[i] = a[i] * 3``
    (NumPy refuses out-of-range integers; Numba wraps) and AttributeError on
    ``r[i].a`` (a NumPy void has no attributes); the CPU target is the reference."""
    a = rng.integers(-(2**40), 2**40, 50)
    k = xpu.jit(_narrow)
    outs = {}
    for target in ("python", "cpu"):
        o = (np.zeros(50, np.int8), np.zeros(50, np.uint16))
        getattr(k, target)[1, 64](a, *o)
        outs[target] = o
    for p, c in zip(*outs.values()):
        np.testing.assert_array_equal(p, c)
    np.testing.assert_array_equal(outs["python"][0], (a * 3).astype(np.int8))
    rec = np.dtype([("a", np.int32), ("b", np.float64)])
    res = {}
    for target in ("python", "cpu"):
        r = np.zeros(40, rec)
        r["a"] = np.arange(40)
        r["b"] = 0.25
        out = np.full(40, np.nan)
        getattr(xpu.jit(_records), target)[1, 64](r, out)
        res[target] = (r.copy(), out)
    np.testing.assert_array_equal(res["python"][1], np.arange(40) + 0.25)
    np.testing.assert_array_equal(res["python"][0], res["cpu"][0])
    np.testing.assert_array_equal(res["python"][1], res["cpu"][1])


# -- a documentation probe (found by running every statement of docs/ as written) ----


@xpu.jit
def _k_cache_hints(a, b, c):
    i = cuda.grid(1)
    cuda.stcg(b, i, cuda.ldcg(a, i) + 1.0)
    c[i] = cuda.ldca(a, i) + cuda.ldcs(a, i) + cuda.ldlu(a, i) + cuda.ldcv(a, i)


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_cache_hint_loads_and_stores_are_plain_ones(target):
    """docs/numba-cuda.md: ``ldca``/``ldcg``/... are plain loads. The python target ran
    numba.cuda's Python stubs: ``c[i] = cuda.ldca(a, i)`` stored NaN (None)."""
    a = np.random.default_rng(5).standard_normal(64)
    b, c = np.full(64, -7.0), np.full(64, -7.0)
    getattr(_k_cache_hints, target)[2, 32](a, b, c)
    np.testing.assert_array_equal(b, a + 1.0)
    np.testing.assert_array_equal(c, ((a + a) + a) + a)


@xpu.jit
def _k_const_selector_out_of_range(a, b):
    i = xpu.grid(1)
    b[i] = Wave.broadcast(a[i], 2**5)


def test_python_target_refuses_constant_selectors_out_of_range_as_the_compilers_do():
    import numquad

    with pytest.raises(numquad.NumquadCompileError, match="constant lane 32 is out of range"):
        _k_const_selector_out_of_range.python[1, 32](np.zeros(32), np.zeros(32))
    assert issubclass(numquad.simt.SIMTError, numquad.NumquadError)  # docs/api.md: every error
    assert numquad.NumquadIndexError is numquad.errors.NumquadIndexError


@cuda.jit("int32(float64)", device=True)
def _dev_to_i32(x):
    return x


@xpu.jit("int8(float32)")
def _lf_to_i8(x):
    return x


@xpu.jit
def _k_declared_signature(xa, out):
    i = xpu.grid(1)
    if i < xa.shape[0]:
        out[i] = _dev_to_i32(xa[i]) + 0.25


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_device_function_s_declared_signature_converts(target):
    """The python target ran a device function declared ``int32(float64)`` as written
    (2.95 for 2.7 + 0.25, 3e9 kept) and a lane function declared ``int8(float32)`` on
    arrays gave float32: numba.cuda converts to the declared types, floats to integers
    as the GPU converts (docs/semantics.md), as the CPU target does."""
    x = np.array([2.7, 3e9, np.nan, -1e30])
    out = np.full(4, -7.0)
    getattr(_k_declared_signature, target)[1, 32](x, out)
    np.testing.assert_array_equal(out, [2.25, 2147483647.25, -2147483648 + 0.25, -2147483648 + 0.25])
    r = getattr(_lf_to_i8, target)(np.float32([2.7, 200.0, -3.5]))
    assert r.dtype == np.int8
    np.testing.assert_array_equal(r, [2, -56, -3])


@xpu.jit
def _lf_int_of_int(a):
    return np.uint64(int(a)) + np.uint64(int(a > 0))


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_int_of_an_integer_keeps_its_type(target):
    """Numba's ``int(x)`` of an int16 is an int16 (of a bool, an int64); the python
    target made it a Python int, and ``np.uint64(int(x))`` of a negative x raised
    OverflowError there where the compiled code wraps (a lane-call probe)."""
    a = np.array([-5, 0, 3, -32768], np.int16)
    got = getattr(_lf_int_of_int, target)(a)
    want = a.astype(np.int64).astype(np.uint64) + (a > 0).astype(np.uint64)
    assert got.dtype == np.uint64
    np.testing.assert_array_equal(got, want)


@xpu.jit
def _lf_ballot(a):
    return Wave.ballot(a)


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_vote_of_a_float_is_refused(target):
    """docs/ops.md: the votes take bool and integers; the python target counted a
    nonzero float as true (a lane-call probe), where the compilers refuse it."""
    with pytest.raises(NumquadTypeError, match="Wave.ballot"):
        getattr(_lf_ballot, target)(np.array([0.0, 1.5]))
    np.testing.assert_array_equal(getattr(_lf_ballot, target)(np.array([0, 3, 0, 1], np.int16)), [10] * 4)


def test_the_interpreter_divides_as_numba_does_at_the_minimum_and_in_divmod():
    # found by a probe of numba-cuda's tests (nineteenth session): INT64_MIN // -1 is 0
    # in Numba (NumPy wraps to INT64_MIN), and divmod of int8s is computed in int64
    @xpu.jit
    def k(out, a, b, c):
        out[0] = a[0] // b[0]
        out[1] = a[0] % b[0]
        out[2] = divmod(c[0], c[1])[0]
        out[3] = divmod(c[0], c[1])[1]

    a, b = np.array([np.iinfo(np.int64).min]), np.array([-1])
    c = np.array([-128, -1], np.int8)
    for target in ("cpu", "python"):
        out = np.full(4, 7, np.int64)
        getattr(k, target)[1, 1](out, a, b, c)
        np.testing.assert_array_equal(out, [0, 0, 128, 0], err_msg=target)


G_RATE = 0.08
G_PRICES = np.array([10.0, 25.0, 5.0, 15.0, 30.0])


def test_the_interpreter_freezes_globals_at_the_first_compile_as_numba_does():
    # numba-cuda's docs (globals.rst): a global is a constant from the first compile;
    # the python target read the current values at each launch
    global G_RATE

    @xpu.jit
    def k(q, out):
        i = xpu.grid(1)
        if i < out.size:
            out[i] = q[i] * G_PRICES[i] * (1 + G_RATE)

    q = np.arange(1.0, 6.0)
    first = {}
    saved = (G_RATE, G_PRICES.copy())
    try:
        for target in ("cpu", "python"):
            out = np.full(5, np.nan)
            getattr(k, target)[1, 32](q, out)
            first[target] = out
            G_RATE = 0.4
            G_PRICES[:] = 2 * G_PRICES
            out2 = np.full(5, np.nan)
            getattr(k, target)[1, 32](q, out2)
            np.testing.assert_array_equal(out2, first[target], err_msg=target)
            G_RATE, G_PRICES[:] = saved[0], saved[1]
    finally:
        G_RATE, G_PRICES[:] = saved[0], saved[1]
    np.testing.assert_array_equal(first["python"], q * G_PRICES * (1 + G_RATE))


def test_the_interpreter_s_fma_overflows_to_inf_as_ieee_rounds():
    # float32 gave FLT_MAX, float64 raised OverflowError (a probe, nineteenth session)
    f32max = np.finfo(np.float32).max
    assert simt._fma(np.float32(-f32max), np.float32(200.0), np.float32(-1.5)) == -np.inf
    assert simt._fma(np.float64(1e300), np.float64(1e300), np.float64(1.0)) == np.inf
    assert simt._fma(np.float64(-1e300), np.float64(1e300), np.float64(1.0)) == -np.inf
    # just below FLT_MAX + half an ulp: rounds to FLT_MAX, not inf
    assert simt._fma(np.float32(f32max), np.float32(1.0), np.float32(2.0**102)) == f32max
