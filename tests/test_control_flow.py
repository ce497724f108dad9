"""Cross-lane ops inside structured control flow, on every target.

Each kernel is paired with a NumPy model of its SIMT semantics built from
ops.py's reference (inactive lanes per docs/semantics.md).
"""

import numpy as np
import pytest

from numquad import Quad, Wave, ops, xpu

R = {q: op.reference for q, op in ops.OPS.items()}
W = 32


def launch(k, target, blocks, threads, *args):
    getattr(k, target)[blocks, threads](*args)


def waves(a):
    return a.reshape(-1, W)


# -- uniform loop: a butterfly reduction ------------------------------------------


@xpu.jit
def k_butterfly(x, out):
    i = xpu.grid(1)
    v = x[i]
    for k in range(5):
        v = v + Wave.shuffleXor(v, 1 << k)
    out[i] = v


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint64])
def test_uniform_loop_butterfly(target, rng, dtype):
    x = (rng.standard_normal(256) * 100).astype(dtype)
    out = np.full_like(x, 7)
    launch(k_butterfly, target, 2, 128, x, out)
    act = np.ones((8, W), bool)
    exp = R["Wave.reduceSum"](waves(x), active=act).ravel()
    np.testing.assert_array_equal(out.view(np.uint8), exp.astype(dtype).view(np.uint8))


# -- lane-varying trip count ------------------------------------------------------


@xpu.jit
def k_varying_loop(x, cnt, out):
    i = xpu.grid(1)
    v = x[i]
    for k in range(cnt[i]):
        v = v + Quad.swapHorizontal(v) + k
    out[i] = v


def test_varying_trip_count(target, rng):
    x = rng.integers(-1000, 1000, 192).astype(np.int64)
    cnt = rng.integers(0, 6, 192).astype(np.int32)
    out = np.full_like(x, -12345)
    launch(k_varying_loop, target, 2, 96, x, cnt, out)
    v = waves(x.copy())
    c = waves(cnt)
    for t in range(int(cnt.max())):
        act = c > t
        v = np.where(act, v + R["Quad.swapHorizontal"](v, active=act) + t, v)
    np.testing.assert_array_equal(out, v.ravel())


# -- while with break and continue ----------------------------------------------------


@xpu.jit
def k_while(x, out):
    i = xpu.grid(1)
    v = x[i]
    n = 0
    while v < 1000:
        n += 1
        if n > 6:
            break
        if (v + n) % 3 == 0:
            v += 1
            continue
        v = v + Wave.countBits(v % 2 == 0)
    out[i] = v * 100 + n


def _model_while(x):
    v = waves(x.copy())
    n = np.zeros_like(v)
    live = np.ones(v.shape, bool)
    while live.any():
        live &= v < 1000
        n = np.where(live, n + 1, n)
        live &= ~(n > 6)
        cont = live & ((v + n) % 3 == 0)
        v = np.where(cont, v + 1, v)
        body = live & ~cont
        cnt = R["Wave.countBits"](v % 2 == 0, active=body)
        v = np.where(body, v + cnt, v)
    return (v * 100 + n).ravel()


@pytest.mark.slow
def test_while_break_continue(target, rng):
    x = rng.integers(900, 1010, 128).astype(np.int64)
    out = np.zeros_like(x)
    launch(k_while, target, 1, 128, x, out)
    np.testing.assert_array_equal(out, _model_while(x))


# -- if / elif / else, cross-lane op in the condition ----------------------------------


@xpu.jit
def k_if_elif(x, out):
    i = xpu.grid(1)
    v = x[i]
    if Quad.any(v > 50):
        r = Quad.swapVertical(v)
    elif v > 10:
        r = Wave.readFirst(v) + 1000
    else:
        r = Wave.ballot(v < 0) & 0xFFFF
    out[i] = r


def test_if_elif_else(target, rng):
    x = rng.integers(-20, 60, 256).astype(np.int64)
    out = np.zeros_like(x)
    launch(k_if_elif, target, 4, 64, x, out)
    v = waves(x)
    full = np.ones(v.shape, bool)
    a = R["Quad.any"](v > 50, active=full)
    m2 = ~a & (v > 10)
    m3 = ~a & ~(v > 10)
    r = np.where(a, R["Quad.swapVertical"](v, active=a), 0)
    r = np.where(m2, R["Wave.readFirst"](v, active=m2) + 1000, r)
    r = np.where(m3, R["Wave.ballot"](v < 0, active=m3).astype(np.int64) & 0xFFFF, r)
    np.testing.assert_array_equal(out, r.ravel())


# -- early return and a bounds-guarded tail -------------------------------------------


@xpu.jit
def k_early_return(x, out, n):
    i = xpu.grid(1)
    if i >= n:
        return
    if x[i] < 0:
        out[i] = -1
        return
    out[i] = Wave.countBits(True) * 1000 + Wave.prefixCountBits(x[i] > 50)


def test_early_return(target, rng):
    n = 150
    x = rng.integers(-30, 100, 160).astype(np.int32)
    out = np.full(160, -99, np.int64)
    launch(k_early_return, target, 5, 32, x, out, n)
    act = waves((np.arange(160) < n) & (x >= 0))
    exp = np.where(x < 0, -1, 0).astype(np.int64)
    cnt = R["Wave.countBits"](np.ones_like(act), active=act).astype(np.int64)
    pre = R["Wave.prefixCountBits"](waves(x > 50), active=act).astype(np.int64)
    exp = np.where(act.ravel(), (cnt * 1000 + pre).ravel(), exp)
    exp[n:] = -99
    np.testing.assert_array_equal(out, exp)


# -- nested loops, a lane function and reassigned parameters ------------------------


@xpu.jit
def lane_scale(a, b):
    return a * 3 + b


@xpu.jit
def k_nested(x, out, reps):
    i = xpu.grid(1)
    v = x[i]
    for r in range(reps):
        j = 0
        while j < 3:
            v = lane_scale(v, Wave.prefixSum(v) % 7)
            j += 1
        reps = reps
    out[i] = v


def test_nested_loops_and_lane_function(target, rng):
    x = rng.integers(0, 50, 64).astype(np.int64)
    out = np.zeros_like(x)
    launch(k_nested, target, 1, 64, x, out, 2)
    v = waves(x.copy())
    full = np.ones(v.shape, bool)
    for _ in range(2 * 3):
        v = v * 3 + R["Wave.prefixSum"](v, active=full) % 7
    np.testing.assert_array_equal(out, v.ravel())


# -- 2-D and 3-D launches ----------------------------------------------------------


@xpu.jit
def k_2d(x, out):
    c, r = xpu.grid(2)
    if c < x.shape[1] and r < x.shape[0]:
        v = x[r, c]
        out[r, c] = v * 1000 + Wave.laneId() * 10 + Quad.laneId() + Wave.prefixCountBits(True) * 100000


def test_2d_launch_wave_layout(target, rng):
    x = rng.integers(0, 9, (20, 24)).astype(np.int64)
    out = np.zeros_like(x)
    bx, by = 16, 4
    k_2d.cpu[(2, 5), (bx, by)](x, out) if target == "cpu" else k_2d.cuda[(2, 5), (bx, by)](x, out)
    exp = np.zeros_like(x)
    for r in range(20):
        for c in range(24):
            tx, ty = c % bx, r % by
            tid = tx + ty * bx
            lane = tid % 32
            # every lane of the block's waves is active within this 20x24 grid
            # except those of the right-most blocks past column 23
            wave_first = (tid // 32) * 32
            cols = [(wave_first + l) % bx + (c // bx) * bx for l in range(lane)]
            rows = [((wave_first + l) // bx) + (r // by) * by for l in range(lane)]
            before = sum(1 for cc, rr in zip(cols, rows) if cc < 24 and rr < 20)
            exp[r, c] = x[r, c] * 1000 + lane * 10 + (lane & 3) + before * 100000
    np.testing.assert_array_equal(out, exp)


@xpu.jit
def k_3d_ids(out):
    t = xpu.threadIdx.x + xpu.threadIdx.y * xpu.blockDim.x + xpu.threadIdx.z * xpu.blockDim.x * xpu.blockDim.y
    b = xpu.blockIdx.x + xpu.blockIdx.y * xpu.gridDim.x + xpu.blockIdx.z * xpu.gridDim.x * xpu.gridDim.y
    nt = xpu.blockDim.x * xpu.blockDim.y * xpu.blockDim.z
    out[b * nt + t] = Wave.readFirst(t) * 100 + xpu.laneid


def test_3d_thread_ids(target):
    grid, block = (2, 2, 2), (4, 3, 5)
    nt = 60
    out = np.full(8 * nt, -1, np.int64)
    getattr(k_3d_ids, target)[grid, block](out)
    t = np.arange(8 * nt) % nt
    np.testing.assert_array_equal(out, (t // 32) * 32 * 100 + t % 32)


# -- lane state never leaks between waves, blocks or launches ------------------------


@xpu.jit
def k_cond_assign(x, out):
    i = xpu.grid(1)
    v = x[i]
    if v > 0:
        s = Wave.prefixCountBits(True)
        out[i] = s
    out[i] += Quad.swapDiagonal(v)


@pytest.mark.slow
def test_no_state_leak_between_launches(target, rng):
    for _ in range(3):
        x = rng.integers(-5, 5, 128).astype(np.int64)
        out = np.zeros_like(x)
        launch(k_cond_assign, target, 2, 64, x, out)
        v = waves(x)
        full = np.ones(v.shape, bool)
        pos = v > 0
        exp = np.where(pos, np.cumsum(pos, axis=1) - 1, 0) + R["Quad.swapDiagonal"](v, active=full)
        np.testing.assert_array_equal(out, exp.ravel())


# -- control that is the same in every lane (kept scalar) and control that is not ----


@xpu.jit
def k_uniform_control(x, out, n):
    i = xpu.grid(1)
    v = x[i]
    s = n
    while s > 1:  # uniform: s starts from an argument, halves
        if s > 8:  # uniform if around a shuffle
            v = v + Wave.shuffleDown(v, s // 2)
        else:
            v = v + Quad.swapHorizontal(v)
        if v > 40000:  # a lane-varying return inside the uniform loop
            return
        s //= 2
    t = xpu.threadIdx.x
    while t > 0:  # lane-varying trip count
        v += Wave.ballot(t % 3 == 0) & 7
        t //= 4
    out[i] = v


def test_uniform_and_varying_loops(target, rng):
    # half the waves start small (their lanes finish the loop), half large (many return)
    x = np.concatenate([rng.integers(0, 300, 64), rng.integers(0, 3000, 64)]).astype(np.int64)
    out = np.full_like(x, -1)
    launch(k_uniform_control, target, 2, 64, x, out, 64)
    v = waves(x.copy())
    alive = np.ones(v.shape, bool)
    s = 64
    while s > 1:
        if s > 8:
            moved = R["Wave.shuffleDown"](v, s // 2, active=alive)
        else:
            moved = R["Quad.swapHorizontal"](v, active=alive)
        v = np.where(alive, v + moved, v)
        alive &= ~(v > 40000)
        s //= 2
    t = waves(np.arange(128) % 64)
    live = alive.copy()
    while True:
        live &= t > 0
        if not live.any():
            break
        b = R["Wave.ballot"](t % 3 == 0, active=live).astype(np.int64) & 7
        v = np.where(live, v + b, v)
        t = np.where(live, t // 4, t)
    exp = np.where(alive, v, -1).ravel()
    assert (~alive).any() and alive.any()
    np.testing.assert_array_equal(out, exp)


def test_uniform_control_stays_scalar():
    import numba

    src = k_uniform_control.inspect_cpu_source((numba.int64[::1], numba.int64[::1], numba.int64))
    assert "while s > 1:" in src  # a plain loop, no per-lane copy of s
    assert "_nq_v_s " not in src and "_nq_v_s=" not in src.replace(" ", "")


# -- Python 3.12/3.13: no literal `while True:` in generated code --------------------
# Numba 0.68.0 on Python 3.12, and 0.68.0/0.68.1 on 3.13, cannot type a variable that a
# `while True:` loop assigns after a break and the code assigns again after the loop
# ("Type of variable 'r.1' cannot be determined"); every masked loop does that, so the
# generated code loops on a global instead (numquad/_control.py, FOREVER). Found by the
# fuzzer on the H200 (Python 3.12, numba 0.68.0): seed 1, kernels 6, 56, 213, 312, 603, 664.


@xpu.jit
def _lf_while_break(p0):
    r = np.int32(p0)
    w = np.int32(0)
    while w < np.int32(Wave.laneId() & np.uint32(3)):
        w = np.int32(w + np.int32(1))
        if (Wave.laneId() & np.uint32(28)) == np.uint32(0):
            r = Wave.shuffleUp(np.int32(p0), np.int64(14))
    return r


@xpu.jit
def k_while_break_reassigned(x, out):
    i = xpu.grid(1)
    c = np.int32(0)
    while True:
        if Wave.any(c >= x[i]):
            break
        c = np.int32(c + Wave.reduceMax(np.int32(1)))
    out[i] = _lf_while_break(x[i]) + c
    c = np.int32(0)


@pytest.mark.slow
def test_generated_code_has_no_literal_while_true():
    import ast

    from numba import types

    from numquad import _control

    sig = (types.int32[::1], types.int32[::1])
    cpu_src = k_while_break_reassigned.inspect_cpu_source(sig)
    assert "while True" not in cpu_src and f"while {_control.FOREVER}" in cpu_src
    pytest.importorskip("numba_cuda")
    from numquad.cuda import substitute as cuda_substitute

    ptx = k_while_break_reassigned.inspect_ptx(sig)  # a TypingError on 3.12/3.13 before
    assert "shfl.sync" in ptx
    for fn in (k_while_break_reassigned, _lf_while_break):
        tree = _control.name_forever_loops(_control.masked_function(fn))
        src = ast.unparse(tree)
        assert "while True" not in src and f"while {_control.FOREVER}" in src, src
    assert cuda_substitute.masked_pyfunc(k_while_break_reassigned).__globals__[_control.FOREVER]


def test_while_break_reassigned_against_the_interpreter(target, rng):
    x = rng.integers(0, 5, 96).astype(np.int32)
    ref = np.full(96, -7, np.int32)
    got = np.full(96, -7, np.int32)
    k_while_break_reassigned.python[3, 32](x, ref)
    launch(k_while_break_reassigned, target, 3, 32, x, got)
    np.testing.assert_array_equal(got, ref)
    assert (ref != -7).all()


# -- a loop over constants left by break/continue around ops (a probe, twenty-second
# session: the CPU target refused it, "break/continue in a loop over constants") -----


@xpu.jit
def k_const_loop_exits(x, out):
    i = xpu.grid(1)
    v = x[i]
    s = v * 0
    for c in (3, 5, 2, 1):
        if v % c == 0:
            break
        s += Wave.prefixSum(v * c)
        if v % 7 == 1:
            continue
        s += Quad.broadcast(v, c) + Wave.shuffleXor(v, c)
    out[i] = s


@xpu.jit
def k_range_loop_exits(x, out):
    i = xpu.grid(1)
    v = x[i]
    s = v * 0
    for c in range(1, 4):
        if v % (c + 3) == 0:
            break
        s += Quad.broadcast(v, c)
    out[i] = s


def _const_loop_oracle(x, consts, step):
    """Lane by lane, per wave: the lanes still in the loop at each step take part."""
    out = np.zeros_like(x)
    for w in range(0, len(x), W):
        v = x[w : w + W]
        alive = np.ones(W, bool)
        s = np.zeros_like(v)
        for c in consts:
            alive &= ~step(v, c, s, alive)
        out[w : w + W] = s
    return out


@pytest.mark.slow
@pytest.mark.parametrize("debug", [False, True])
def test_a_loop_over_constants_left_by_break_and_continue(target, rng, debug):
    x = rng.integers(0, 50, 96).astype(np.int64)

    def step(v, c, s, alive):
        brk = alive & (v % c == 0)
        live = alive & ~brk
        prefix = np.cumsum(np.where(live, v * c, 0)) - np.where(live, v * c, 0)
        s[live] += prefix[live]
        go = live & (v % 7 != 1)
        lanes = np.arange(W)
        quad = lanes & ~3 | c & 3  # docs/ops.md: the quad's lane c
        xor = lanes ^ c
        # a source lane that is not active gives the reading lane's own value
        qv = np.where(go[quad], v[quad], v)
        xv = np.where(go[xor], v[xor], v)
        s[go] += qv[go] + xv[go]
        return brk

    want = _const_loop_oracle(x, (3, 5, 2, 1), step)
    got = np.full(96, -7, np.int64)
    k = xpu.jit(debug=True)(k_const_loop_exits.py_func) if debug else k_const_loop_exits
    launch(k, target, 3, 32, x, got)
    np.testing.assert_array_equal(got, want)
    ref = np.full(96, -7, np.int64)
    k_const_loop_exits.python[3, 32](x, ref)
    np.testing.assert_array_equal(ref, want)

    def step_range(v, c, s, alive):
        brk = alive & (v % (c + 3) == 0)
        live = alive & ~brk
        lanes = np.arange(W)
        quad = lanes & ~3 | c & 3
        s[live] += np.where(live[quad], v[quad], v)[live]
        return brk

    want = _const_loop_oracle(x, range(1, 4), step_range)
    got = np.full(96, -7, np.int64)
    launch(k_range_loop_exits, target, 3, 32, x, got)
    np.testing.assert_array_equal(got, want)


@xpu.jit
def _lf_tuple_loop_around_while(p0):
    r = p0
    for k1 in (3, 1, 2):  # copies would hold a loop: a uniform selector
        r = r + Wave.shuffleDown(r, k1)
        s3 = np.int64(16)
        while s3 > np.int64(0):
            s3 = np.int64(s3 >> np.int64(1))
            r = r + Wave.shuffleUp(r, s3)
    return r


@xpu.jit
def k_inlined_tuple_loop(x, o):
    i = xpu.grid(1)
    o[i] = _lf_tuple_loop_around_while(x[i])


@pytest.mark.slow
@pytest.mark.parametrize("debug", [False, True])
def test_a_loop_over_constants_in_an_inlined_function(rng, debug):
    # fuzz seed 2027 #8832: the loop's `_nq_range(3)` was renamed with the inlined
    # function's locals, so the kernel found no range ("a loop around cross-lane ops
    # must iterate over range(...)"); the python target is the oracle
    x = rng.standard_normal(64)
    want = np.full(64, np.nan)
    k_inlined_tuple_loop.python[2, 32](x, want)
    got = np.full(64, np.nan)
    xpu.jit(debug=debug)(k_inlined_tuple_loop.py_func).cpu[2, 32](x, got)
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


# -- a loop over constants whose body assigns its variable (a probe's random kernel,
# twenty-sixth session: refused, "k2 is assigned inside the loop over constants") --


@xpu.jit
def k_assigned_loop_variable(x, out):
    i = xpu.grid(1)
    s = 0
    for k2 in (9, 16, 12):
        k2 -= 8
        s += Wave.shuffle(x[i], k2) * k2
    for k3 in range(3):
        k3 += 1
        s += Wave.shuffleXor(x[i], k3)
    out[i] = s


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
def test_a_loop_over_constants_that_assigns_its_variable(rng, target):
    x = rng.integers(-100, 100, 64)
    k = xpu.jit(debug=True)(k_assigned_loop_variable.py_func) if target == "cpu-debug" else k_assigned_loop_variable
    out = np.full(64, -12345, np.int64)
    getattr(k, "cpu" if target.startswith("cpu") else target)[2, 32](x, out)
    w = x.reshape(2, 32)
    lane = np.arange(32)
    want = sum((w[:, v - 8] * (v - 8))[:, None] for v in (9, 16, 12)) + sum(w[:, lane ^ (j + 1)] for j in range(3))
    np.testing.assert_array_equal(out, want.reshape(-1))
