"""debug=True checks numba.cuda's mask rules at each ``*_sync`` warp function.

CUDA leaves a warp function undefined where (c) the calling lane is not in its mask,
(b) the mask names a lane that has not exited but does not make the call with the
same mask, or (a) a shuffle reads a lane that does not take part; the CPU gives
defined values there, which a GPU need not (docs/numba-cuda.md, item 13). A debug
build raises NumquadRuntimeError instead. The expected outcome comes from the model
below, written from CUDA's rules lane by lane; it shares no code with numquad.
"""

import re

import numpy as np
import pytest
from numba import cuda

from numquad import xpu
from numquad.errors import NumquadRuntimeError

FULL = 0xFFFFFFFF


def _model(nthreads, live_n, active, mask, op, sel):
    """The (rule, lane, other lane) triples CUDA's rules break in wave 0..: *active*
    per thread (bool array), live threads below *live_n*, one *mask* for every lane,
    *sel* per thread."""
    out = set()
    for w0 in range(0, nthreads, 32):
        live = [w0 + k < min(nthreads, live_n) for k in range(32)]
        act = [live[k] and bool(active[w0 + k]) for k in range(32)]
        for k in range(32):
            if not act[k]:
                continue
            if not (mask >> k) & 1:
                out.add(("c", w0 + k, None))
            for j in range(32):
                if (mask >> j) & 1 and live[j] and not act[j]:
                    out.add(("b", w0 + k, j))
            if op.startswith("shfl"):
                s = int(sel[w0 + k]) & 31
                src = {"shfl_sync": s, "shfl_up_sync": k - s, "shfl_down_sync": k + s, "shfl_xor_sync": k ^ s}[op]
                if 0 <= src < 32 and not (act[src] and (mask >> src) & 1):
                    out.add(("a", w0 + k, src))
    return out


def _kernel(op):
    if op == "ballot_sync":

        def k(a, out, t, n, mask, sel):
            i = cuda.grid(1)
            if i >= n:
                return
            if a[i] > t:
                out[i] = cuda.ballot_sync(mask, a[i] > 2 * t)

        return k
    shfl = getattr(cuda, op)  # a closure name: the front end resolves it

    def k(a, out, t, n, mask, sel):
        i = cuda.grid(1)
        if i >= n:
            return
        if a[i] > t:
            out[i] = shfl(mask, a[i], sel[i])

    return k


_RULE = {"leaves that lane out": "c", "names lane": "b", "reads lane": "a"}


def _reported(err):
    text = str(err)
    rule = next(r for phrase, r in _RULE.items() if phrase in text)
    thread = int(re.search(r"thread (\d+)\]", text).group(1))
    other = re.search(r"(?:names|reads) lane (\d+)", text)
    return rule, thread, int(other.group(1)) if other else None


@pytest.mark.parametrize("op", ["shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "ballot_sync"])
def test_a_debug_build_reports_exactly_the_calls_cuda_leaves_undefined(op, rng, full_tier):
    debug = xpu.jit(debug=True)(_kernel(op))
    release = xpu.jit(_kernel(op))
    masks = [FULL, 0x0000FFFF, 0xFFFF0000, 0x55555555, FULL]
    for trial in range(40 if full_tier else 15):
        nthreads = int(rng.choice([32, 40, 64, 96]))
        live_n = nthreads if trial % 3 else int(rng.integers(1, nthreads + 1))
        a = rng.random(nthreads).astype(np.float32)
        # a threshold of 0 keeps every live lane active; others split them
        t = np.float32(0.0 if trial % 2 else rng.choice([0.2, 0.5, 0.9]))
        mask = int(masks[trial % len(masks)]) if trial % 4 else int(rng.integers(0, 1 << 32))
        sel = rng.integers(-40, 40, nthreads).astype(np.int32)
        if trial % 5 == 0:
            sel[:] = 1  # one selector everywhere (a common case)
        broken = _model(nthreads, live_n, a > t, mask, op, sel)
        dt = np.int32 if op == "ballot_sync" else np.float32
        out = np.full(nthreads, -7, dt)
        release[1, nthreads](a, out, t, live_n, np.uint32(mask), sel)  # defined on the CPU
        out = np.full(nthreads, -7, dt)
        if not broken:
            debug[1, nthreads](a, out, t, live_n, np.uint32(mask), sel)
            continue
        with pytest.raises(NumquadRuntimeError) as e:
            debug[1, nthreads](a, out, t, live_n, np.uint32(mask), sel)
        assert f"line {debug.py_func.__code__.co_firstlineno + 5}" in str(e.value)
        assert f"cuda.{op}(mask, ...)" in str(e.value)
        assert _reported(e.value) in broken, (trial, str(e.value), sorted(broken)[:5])


def test_defined_calls_give_the_release_builds_bits(rng, target):
    """Exited lanes in the mask, a ballot's mask, a whole wave: nothing to report; the
    GPU gives the same bits (the calls are defined there)."""

    def k(a, out, n):
        i = cuda.grid(1)
        if i >= n:
            return
        m = cuda.ballot_sync(FULL, True)
        v = a[i]
        v += cuda.shfl_xor_sync(m, v, 1)
        v += cuda.shfl_up_sync(m, v, 3)  # below lane 0: the lane's own value (defined)
        if cuda.all_sync(m, v > 0):
            v += cuda.shfl_sync(m, v, 0)
        out[i] = v

    debug, release = xpu.jit(debug=True)(k), xpu.jit(k)
    a = rng.random(64).astype(np.float32)
    got, want = np.full(64, np.nan, np.float32), np.full(64, np.nan, np.float32)
    if target == "cuda":
        d = cuda.to_device(got)
        release.cuda[1, 64](cuda.to_device(a), d, 64)
        got = d.copy_to_host()
    else:
        debug[1, 64](a, got, 64)
    release[1, 64](a, want, 64)
    np.testing.assert_array_equal(got, want)
    x = a.copy()
    x += x.reshape(-1, 2)[:, ::-1].ravel()
    up = x.copy()
    for w in range(2):
        for k_ in range(3, 32):
            up[32 * w + k_] = x[32 * w + k_] + x[32 * w + k_ - 3]
        up[32 * w : 32 * w + 3] = 2 * x[32 * w : 32 * w + 3]
    up += np.repeat(up[::32], 32)
    np.testing.assert_array_equal(got, up)


def test_the_check_runs_in_a_kernel_with_barriers_and_names_the_thread():
    @xpu.jit(debug=True)
    def k(a, out):
        s = cuda.shared.array(64, np.float32)
        i = cuda.threadIdx.x
        s[i] = a[i]
        cuda.syncthreads()
        out[i] = cuda.shfl_down_sync(FULL, s[i], 16)

    a = np.random.default_rng(3).random(64).astype(np.float32)
    k[1, 64](a, np.zeros(64, np.float32))  # whole waves: lanes past 31 read their own
    with pytest.raises(NumquadRuntimeError, match=r"lane 0 reads lane 16.*\[block \(0, 0, 0\), thread 32\]"):
        k[1, 40](a, np.zeros(64, np.float32))  # wave 1 holds 8 threads


def test_a_mask_computed_by_a_user_call_is_left_unchecked():
    @xpu.jit
    def full():
        return FULL

    @xpu.jit(debug=True)
    def k(a, out):
        i = cuda.grid(1)
        x = a[i]
        v = cuda.shfl_down_sync(full(), x, 16)
        out[i] = v

    a = np.random.default_rng(4).random(40).astype(np.float32)
    out = np.zeros(40, np.float32)
    k[1, 40](a, out)  # not evaluated twice, so not checked
    np.testing.assert_array_equal(out[:32], np.concatenate([a[16:32], a[16:32]]))
    np.testing.assert_array_equal(out[32:], a[32:])  # past the partial wave: own value


@xpu.jit
def _lane_shfl(v):
    return cuda.shfl_down_sync(FULL, v, 16)


@cuda.jit(device=True)
def _device_shfl(v):
    return cuda.shfl_down_sync(FULL, v, 16)


@pytest.mark.parametrize("callee", [_lane_shfl, _device_shfl], ids=["lane_function", "cuda_device_function"])
def test_a_call_inside_an_inlined_function_is_checked_by_the_kernels_debug_build(callee):
    """The kernel's build decides, as for bounds checks: the callee is compiled without
    debug=True, and its line is named."""

    def k(a, out):
        i = cuda.grid(1)
        out[i] = callee(a[i])

    a = np.random.default_rng(5).random(40).astype(np.float32)
    out = np.zeros(40, np.float32)
    xpu.jit(k)[1, 40](a, out)  # release: the documented CPU values
    np.testing.assert_array_equal(out[:32], np.concatenate([a[16:32], a[16:32]]))
    np.testing.assert_array_equal(out[32:], a[32:])
    line = callee.py_func.__code__.co_firstlineno + 2
    with pytest.raises(
        NumquadRuntimeError,
        match=rf"line {line}: cuda.shfl_down_sync.*lane 0 reads lane 16.*"
        rf"mask 0xffffffff.*thread 32\]",
    ):
        xpu.jit(debug=True)(k)[1, 40](a, np.zeros(40, np.float32))
