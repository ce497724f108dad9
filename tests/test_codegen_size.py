"""The CPU target's generated code stays small (compile time), and stays exact.

Numba's compile time grows with the generated block function, so the code
generator (numquad/cpu/codegen.py) emits less of it:

* a *pure* region (arithmetic on lane values, casts, no array access, no call,
  no division, no loop or ``if``) is one lane loop over every lane, inactive
  ones too, whose lane-array stores keep the old value where the lane is
  inactive (``_nq_stm``: a select), instead of an all-active loop plus a masked
  copy; a pure region that stores no lane variable is left out;
* an assignment repeating the same pure value is dropped (``i = grid(1)``
  recomputed before the region's own ``i = grid(1)``);
* a lane variable's load is left out when the region overwrites it unread.

Guarded here through the generated source, and for exactness against the python
target and NumPy on random inputs with poisoned outputs, never through timings.
"""

import ast
import re

import numba
import numpy as np
import pytest

from numquad import Wave, xpu
from numquad.cpu import storage

POISON = -999


def _lane_loops(src):
    """The ``for _nq_l in _nq_range(_nq_G)`` loops of a generated source, outermost
    first; not a loop's fast version beside its checked copy (numquad/cpu/versioning.py:
    the loop under ``if _nq_lrok(...)``, the same loop less the checks its test shows
    cannot fail). A region's fast loop (``if _nq_all(m) and _nq_lrok(...)``) counts:
    it is the region's all-active loop."""
    tree = ast.parse(src)

    def names(e):
        return {c.id for c in ast.walk(e) if isinstance(c, ast.Name)}

    fast = {
        id(b)
        for n in ast.walk(tree)
        if isinstance(n, ast.If)
        and names(n.test) & {"_nq_lrok", "_nq_lrise"}
        and not names(n.test) & {"_nq_all", "_nq_allb"}
        for b in n.body
    }
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and n.target.id == "_nq_l" and id(n) not in fast
    ]


def _loops_storing(src, arr):
    return [
        lp
        for lp in _lane_loops(src)
        if any(
            isinstance(c, ast.Call)
            and isinstance(c.func, ast.Name)
            and c.func.id in ("_nq_st", "_nq_stm")
            and isinstance(c.args[0], ast.Name)
            and c.args[0].id == arr
            for c in ast.walk(lp)
        )
    ]


# -- a pure region is one loop, and inactive lanes keep their values --------------------


@xpu.jit
def k_pure_under_if(x, y, out_a, out_b, out_t, out_c):
    i = xpu.grid(1)
    a = np.int64(x[i])
    b = y[i]
    t = (a, b)
    c = np.int32(-1)
    if x[i] % 3 == 0:
        # pure: integer and float arithmetic, shifts, casts, a tuple, threadIdx;
        # in an inactive lane b may be huge or NaN, and the cast of it is garbage
        a = a * 5 + (a << 2) - np.int64(xpu.threadIdx.x)
        b = b * 0.5 + np.float64(a)
        t = (a + 1, b - 1.0)
        a += np.int64(Wave.countBits(True))  # a cross-lane op: the if is masked code
    if b < 1e6:
        c = np.int32(b * 0.25) + np.int32(Wave.laneId())
        c += np.int32(Wave.countBits(True))
    if b > 0.0:
        a = ~a
        a -= np.int64(Wave.countBits(True))
    s = Wave.prefixSum(a)
    out_a[i] = a + s
    out_b[i] = b
    out_t[i] = np.float64(t[0]) + t[1]
    out_c[i] = c


SIG = (numba.int32[::1], numba.float64[::1], numba.int64[::1], numba.float64[::1], numba.float64[::1], numba.int32[::1])


@pytest.mark.slow
def test_a_pure_region_is_one_loop_with_masked_stores():
    src = k_pure_under_if.inspect_cpu_source(SIG)
    # a (and b, t's parts) is stored by the first region (array loads: two paths) and
    # the pure region under the ``if`` (one loop, selects)
    loops = _loops_storing(src, "_nq_v_a")
    stm = [lp for lp in loops if "_nq_stm(_nq_v_a," in ast.unparse(lp)]
    assert len(stm) >= 2, src  # a = a * 5 ... and a = ~a (and a += ...)
    assert len([lp for lp in stm if "a = a * 5 + (a << 2)" in ast.unparse(lp)]) == 1
    assert len([lp for lp in stm if "a = ~a" in ast.unparse(lp)]) == 1
    for lp in stm:
        body = ast.unparse(lp)
        assert "_nq_st(_nq_v_a," not in body and "if _nq_ld(" not in body, body
    # the first region (loads of x and y) keeps its fast path and masked copy
    assert len([lp for lp in loops if "_nq_st(_nq_v_a," in ast.unparse(lp)]) == 2
    # t's parts are kept with selects too
    assert "_nq_stm(_nq_v_t__0," in src and "_nq_stm(_nq_v_t__1," in src


def test_a_pure_region_vectorises_into_blends():
    ir = k_pure_under_if.inspect_llvm(SIG)
    # b's masked store in the pure region: a select on <4 x double> or wider (AVX2,
    # AVX-512), not a branch per lane; the whole-wave ops here are on int64 only
    assert re.search(r"select <(4|8|16) x i1> [^\n]*<(4|8|16) x double>", ir)


@pytest.mark.parametrize("n, threads", [(100, 50), (256, 64), (37, 37)])
def test_inactive_lanes_keep_their_values(n, threads, rng):
    x = rng.integers(-50, 50, n).astype(np.int32)
    y = rng.normal(0, 10, n)
    y[rng.random(n) < 0.2] = np.nan
    y[rng.random(n) < 0.1] = 1e300  # a cast of it is garbage, only if taken
    y[x % 3 != 0] = np.where(rng.random(n) < 0.5, 1e300, np.nan)[x % 3 != 0]
    blocks = -(-n // threads)
    assert blocks * threads == n
    outs = {}
    for target in ("python", "cpu"):
        o = [
            np.full(n, POISON, np.int64),
            np.full(n, np.inf, np.float64),
            np.full(n, np.inf, np.float64),
            np.full(n, POISON, np.int32),
        ]
        with np.errstate(all="ignore"):
            getattr(k_pure_under_if, target)[blocks, threads](x, y, *o)
        outs[target] = o
    for got, want in zip(outs["cpu"], outs["python"]):
        np.testing.assert_array_equal(got, want)
    # NumPy: lanes where x % 3 != 0 keep a = x, t = (x, y)
    m = x % 3 == 0
    b = np.where(m, y * 0.5 + (x.astype(np.int64) * 9 - np.arange(n) % threads), y)
    np.testing.assert_array_equal(outs["cpu"][1], b)
    keep = ~m & ~(y < 1e6)
    assert (outs["cpu"][3][keep] == -1).all()


@xpu.jit
def k_pure_block(x, out):
    s = xpu.shared.array(64, np.int64)
    t = xpu.threadIdx.x
    i = xpu.grid(1)
    v = np.int64(x[i])
    if t % 3 == 1:
        v = v * 7 + np.int64(t)
        v += np.int64(Wave.countBits(True))
    s[t] = v
    xpu.syncthreads()
    out[i] = s[(t + 1) % 64] + v


@pytest.mark.slow
def test_inactive_lanes_keep_their_values_with_barriers(rng):
    x = rng.integers(-1000, 1000, 128).astype(np.int32)
    src = k_pure_block.inspect_cpu_source((numba.int32[::1], numba.int64[::1]))
    assert "_nq_stm(_nq_v_v," in src
    got, want = np.full(128, POISON, np.int64), np.full(128, POISON, np.int64)
    k_pure_block.cpu[2, 64](x, got)
    k_pure_block.python[2, 64](x, want)
    np.testing.assert_array_equal(got, want)
    t = np.arange(128) % 64
    cnt = (t % 3 == 1).reshape(-1, 32).sum(1).repeat(32)  # countBits per wave
    v = np.where(t % 3 == 1, x.astype(np.int64) * 7 + t + cnt, x)
    np.testing.assert_array_equal(got, v.reshape(2, 64)[:, (np.arange(64) + 1) % 64].ravel() + v)


@xpu.jit
def k_pure_2d(x, out):
    c, r = xpu.grid(2)
    v = x[r, c]
    if v > 0.0:
        v = v * 2.0 + np.float64(xpu.threadIdx.y) - np.float64(xpu.threadIdx.x)
        v += np.float64(Wave.countBits(True))
    out[r, c] = v + Wave.reduceSum(v) * 0.0


@pytest.mark.slow
def test_inactive_lanes_keep_their_values_in_2d_blocks(rng):
    x = rng.normal(size=(12, 16))
    got, want = np.full_like(x, np.inf), np.full_like(x, np.inf)
    k_pure_2d.cpu[(2, 3), (8, 4)](x, got)
    k_pure_2d.python[(2, 3), (8, 4)](x, want)
    np.testing.assert_array_equal(got, want)
    tx, ty = np.arange(16) % 8, np.arange(12) % 4
    cnt = np.zeros_like(x)  # one wave per 8 x 4 block: its lanes with x > 0
    for r in range(0, 12, 4):
        for c in range(0, 16, 8):
            cnt[r : r + 4, c : c + 8] = (x[r : r + 4, c : c + 8] > 0).sum()
    np.testing.assert_array_equal(got, np.where(x > 0, x * 2.0 + ty[:, None] - tx[None, :] + cnt, x))


# -- what stays two paths ----------------------------------------------------------------


@xpu.jit
def k_not_pure(x, out):
    i = xpu.grid(1)
    a = np.int64(x[i])
    d = a % 4
    if d != 0:
        a = a // d  # integer division: never run on an inactive lane (d == 0)
        a += np.int64(Wave.countBits(True))
    if a > 2:
        a = a + np.int64(x[(i + 1) % x.shape[0]])  # an array load
        a += np.int64(Wave.countBits(True))
    s = Wave.prefixSum(a)
    out[i] = a + s


@pytest.mark.slow
def test_division_and_array_access_keep_the_masked_paths(rng):
    src = k_not_pure.inspect_cpu_source((numba.int32[::1], numba.int64[::1]))
    for code in ("a = _nq_ifloordiv(a, d)", "(i + 1) % x.shape[0]"):
        loops = [ast.unparse(lp) for lp in _lane_loops(src) if code in ast.unparse(lp)]
        assert len(loops) == 2, src  # the all-active loop and the masked copy
        assert "_nq_stm(" not in "".join(loops) and "if _nq_ld(" in "".join(loops)
    x = rng.integers(-40, 40, 96).astype(np.int32)
    got, want = np.full(96, POISON, np.int64), np.full(96, POISON, np.int64)
    k_not_pure.cpu[3, 32](x, got)
    k_not_pure.python[3, 32](x, want)
    np.testing.assert_array_equal(got, want)


# -- no repeated assignments, no dead loads --------------------------------------------------


@xpu.jit
def k_overwrite(x, out):
    i = xpu.grid(1)
    acc = np.int64(x[i])
    s = Wave.prefixSum(acc)
    acc = np.int64(3)
    acc += s
    out[i] = acc


@pytest.mark.slow
def test_a_value_overwritten_unread_is_not_loaded(rng):
    src = k_overwrite.inspect_cpu_source((numba.int32[::1], numba.int64[::1]))
    assert "acc = _nq_ld(_nq_v_acc" not in src, src
    x = rng.integers(-9, 9, 64).astype(np.int32)
    got, want = np.full(64, POISON, np.int64), np.full(64, POISON, np.int64)
    k_overwrite.cpu[2, 32](x, got)
    k_overwrite.python[2, 32](x, want)
    np.testing.assert_array_equal(got, want)


@pytest.mark.slow
def test_no_assignment_repeats_the_line_before_it():
    from test_loop_else import _mixed

    k = xpu.jit(_mixed)
    src = k.inspect_cpu_source((numba.int64[:], numba.int32[:], numba.int64[::1], numba.int64[::1]))
    lines = [ln.strip() for ln in src.splitlines()]
    for a, b in zip(lines, lines[1:]):
        assert not (a == b and "=" in a and not a.startswith("_nq_st")), a
    assert src.count("_nq_s_13 = 1") <= 2 * src.count("j = _nq_i_11") + 2


def _drop(src):
    return ast.unparse(ast.Module(storage.drop_repeats(ast.parse(src).body), []))


def test_drop_repeats():
    assert _drop("s = 1\nt = 0\ns = 1") == "s = 1\nt = 0"
    assert _drop("i = _nq_nonneg(_nq_t0 + _nq_l)\ni = _nq_nonneg(_nq_t0 + _nq_l)") == "i = _nq_nonneg(_nq_t0 + _nq_l)"
    # an operand stored in between, a call, an array read, a value reading itself: kept
    assert _drop("a = b + 1\nb = 2\na = b + 1") == "a = b + 1\nb = 2\na = b + 1"
    assert _drop("a = b + 1\nb += 2\na = b + 1") == "a = b + 1\nb += 2\na = b + 1"
    assert _drop("a = b + 1\nfor b in r:\n    pass\na = b + 1").count("a = b + 1") == 2
    assert _drop("a = f(b)\na = f(b)") == "a = f(b)\na = f(b)"
    assert _drop("a = x[i]\na = x[i]") == "a = x[i]\na = x[i]"
    assert _drop("a = a + 1\na = a + 1") == "a = a + 1\na = a + 1"
    assert _drop("a = 1\na += 1\na = 1") == "a = 1\na += 1\na = 1"


@pytest.mark.slow
def test_loop_and_jump_masks_are_single_calls():
    from test_loop_else import _mixed

    k = xpu.jit(_mixed)
    src = k.inspect_cpu_source((numba.int64[:], numba.int32[:], numba.int64[::1], numba.int64[::1]))
    assert "_nq_mcopy(" in src and "_nq_mandnot(" in src
    for lp in _lane_loops(src):
        body = ast.unparse(lp)
        # no lane loop only copying a mask, or only clearing masks where a lane jumps
        assert not (len(lp.body) == 1 and body.count("_nq_st(_nq_m") == 1 and "_nq_ld(_nq_m" in body), body
        assert not (
            len(lp.body) == 1
            and isinstance(lp.body[0], ast.If)
            and all("_nq_st(_nq_m" in ast.unparse(s) and "False" in ast.unparse(s) for s in lp.body[0].body)
            and not lp.body[0].orelse
        ), body


@xpu.jit
def k_jumps(x, out):
    i = xpu.grid(1)
    acc = np.int64(0)
    for j in range(6):
        if x[i] == j:
            continue
        acc += Wave.countBits(True)
        if x[i] + j > 6:
            break
    if x[i] < 0:
        return
    out[i] = acc + Wave.prefixSum(acc)


@xpu.jit
def k_jumps_block(x, out):
    s = xpu.shared.array(128, np.int64)
    t = xpu.threadIdx.x
    i = xpu.grid(1)
    acc = np.int64(0)
    k = 0
    while k < 5:
        k += 1
        if x[i] == k:
            continue
        acc += Wave.countBits(True)
        if x[i] + k > 6:
            break
    s[t] = acc
    xpu.syncthreads()
    out[i] = s[(t + 33) % 128] + acc


@pytest.mark.slow
@pytest.mark.parametrize("kern, blocks, threads", [(k_jumps, 3, 40), (k_jumps_block, 2, 128)])
def test_masks_after_break_continue_and_return(kern, blocks, threads, rng):
    n = blocks * threads
    x = rng.integers(-3, 8, n).astype(np.int32)
    got, want = np.full(n, POISON, np.int64), np.full(n, POISON, np.int64)
    kern.cpu[blocks, threads](x, got)
    kern.python[blocks, threads](x, want)
    np.testing.assert_array_equal(got, want)


# -- a loop over constants is not unrolled around a big inlined lane function -----------


@xpu.jit
def lf_eight_ops(v, k):
    r = v + Wave.shuffleXor(v, 1)
    r = r * Wave.shuffleXor(r, 2)
    r = r - Wave.readFirst(r)
    r = r + Wave.prefixSum(r)
    r = r ^ Wave.reduceOr(r)
    r = r + Wave.shuffle(r, 3)
    r = r - Wave.prefixMax(r)
    return r + Wave.broadcast(v, k)


@xpu.jit
def k_constants_around_a_lane_call(x, out):
    i = xpu.grid(1)
    v = x[i]
    for k in (16, 8, 4, 2, 1):
        v = v ^ Wave.broadcast(v, k)
        v = lf_eight_ops(v, k)
    out[i] = v


def _ref_constants_around_a_lane_call(x):
    v = x.copy()
    for k in (16, 8, 4, 2, 1):
        for w in range(0, v.size, 32):
            s = v[w : w + 32].copy()
            s = s ^ s[k]
            r = s + s[np.arange(32) ^ 1]
            r = r * r[np.arange(32) ^ 2]
            r = r - r[0]
            r = r + np.concatenate([[0], np.cumsum(r)[:-1]])
            r = r ^ np.bitwise_or.reduce(r)
            r = r + r[3]
            r = r - np.concatenate([[np.iinfo(np.int64).min], np.maximum.accumulate(r)[:-1]])
            v[w : w + 32] = r + s[k]
    return v


@pytest.mark.slow
def test_a_loop_over_constants_around_a_big_lane_function_stays_a_loop(rng):
    """Unrolling ``for k in (16, 8, 4, 2, 1)`` copies an inlined lane function five
    times: a call weighs 3 per statement of the callee (cpu/unroll.py _unroll_weight); as
    one op it weighed 3, and fuzz seed 3000 kernel 3018 generated 1,308 lines that took
    36 s to compile. The loop stays a loop (one copy of the callee's ops), and gives
    the bits of a NumPy reference."""
    sig = (numba.int64[::1], numba.int64[::1])
    src = k_constants_around_a_lane_call.inspect_cpu_source(sig)
    assert len(src.splitlines()) < 300  # 173 lines as a loop, 436 unrolled
    x = rng.integers(-1000, 1000, 64).astype(np.int64)
    out = np.full(64, POISON, np.int64)
    k_constants_around_a_lane_call[1, 64](x, out)
    np.testing.assert_array_equal(out, _ref_constants_around_a_lane_call(x))
