"""numba.cuda's shuffles (``cuda.shfl_sync``, ``shfl_up_sync``, ``shfl_down_sync``,
``shfl_xor_sync``) with any selector, on every target, as the GPU computes them.

numba-cuda hands the selector to PTX's ``shfl.sync``, which reads only its low five
bits (``bval[4:0] = b[4:0]`` in the PTX ISA's semantics of ``shfl.sync``), then
clamps the source lane: ``shfl_down_sync(m, v, 33)`` reads lane + 1 and
``shfl_up_sync(m, v, -1)`` reads lane - 31. numquad's own ``Wave.shuffleDown`` is
exact instead (docs/semantics.md); the numba.cuda spellings keep numba.cuda's
meaning on the CPU and python targets too. The expected values come from a NumPy
model of the PTX pseudocode below, which shares nothing with numquad. Every lane
of every wave is active (blocks of 64 threads), so no read is undefined on the GPU.
"""

import numpy as np
import pytest
from numba import typeof

from numquad import NumquadTypeError, xpu

cuda = pytest.importorskip("numba.cuda")

W = 32
N = 128
POISON = {
    np.dtype(np.int32): -777,
    np.dtype(np.int64): -777,
    np.dtype(np.float32): np.nan,
    np.dtype(np.float64): np.nan,
}
# numba-cuda's shfl_sync_intrinsic: (mode, c) for each function
_MODES = {"idx": (0, 0x1F), "up": (1, 0), "down": (2, 0x1F), "bfly": (3, 0x1F)}


def ptx_shfl(v, b, mode):
    """PTX ISA, ``shfl.sync`` semantics, for whole waves of *v* (all lanes active)."""
    _, c = _MODES[mode]
    out = v.copy()
    for w in range(0, v.size, W):
        for lane in range(W):
            bval = int(b[w + lane]) & 31
            cval, segmask = c & 31, (c >> 8) & 31
            max_lane = (lane & segmask) | (cval & ~segmask)
            min_lane = lane & segmask
            if mode == "up":
                j = lane - bval
                ok = j >= max_lane
            elif mode == "down":
                j = lane + bval
                ok = j <= max_lane
            elif mode == "bfly":
                j = lane ^ bval
                ok = j <= max_lane
            else:
                j = min_lane | (bval & ~segmask)
                ok = j <= max_lane
            out[w + lane] = v[w + j] if ok else v[w + lane]
    return out


def _per_lane(x, d, o_idx, o_up, o_down, o_xor):
    i = xpu.grid(1)
    o_idx[i] = cuda.shfl_sync(0xFFFFFFFF, x[i], d[i])
    o_up[i] = cuda.shfl_up_sync(0xFFFFFFFF, x[i], d[i])
    o_down[i] = cuda.shfl_down_sync(0xFFFFFFFF, x[i], d[i])
    o_xor[i] = cuda.shfl_xor_sync(cuda.activemask(), x[i], d[i])


def _constants(x, o_idx, o_up, o_down, o_xor):
    i = xpu.grid(1)
    o_idx[i] = cuda.shfl_sync(0xFFFFFFFF, x[i], 37)
    o_up[i] = cuda.shfl_up_sync(0xFFFFFFFF, x[i], -1)
    o_down[i] = cuda.shfl_down_sync(0xFFFFFFFF, x[i], 33)
    o_xor[i] = cuda.shfl_xor_sync(0xFFFFFFFF, x[i], -3)


def _uniform(x, d, o_idx, o_up, o_down, o_xor):
    # selectors the same in every lane, known only at run time
    i = xpu.grid(1)
    o_idx[i] = cuda.shfl_sync(0xFFFFFFFF, x[i], d)
    o_up[i] = cuda.shfl_up_sync(0xFFFFFFFF, x[i], d - 2)
    o_down[i] = cuda.shfl_down_sync(0xFFFFFFFF, x[i], d + 1)
    o_xor[i] = cuda.shfl_xor_sync(0xFFFFFFFF, x[i], d * 3)


def _tree_sum(x, start, out):
    # the warp sum users write, with the first offset a parameter
    i = xpu.grid(1)
    v = x[i]
    offset = start
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    out[i] = v


k_per_lane = xpu.jit(_per_lane)
k_constants = xpu.jit(_constants)
k_per_lane_debug = xpu.jit(_per_lane, debug=True)
k_constants_debug = xpu.jit(_constants, debug=True)
k_uniform = xpu.jit(_uniform)
k_uniform_debug = xpu.jit(_uniform, debug=True)
k_tree_sum = xpu.jit(_tree_sum)
k_tree_sum_debug = xpu.jit(_tree_sum, debug=True)
CONSTANTS = (37, -1, 33, -3)

TARGETS = [
    "cpu",
    "cpu-debug",
    "python",
    pytest.param("cuda", marks=pytest.mark.skipif(not cuda.is_available(), reason="no CUDA GPU")),
]


def _run(k, kd, target, *args):
    if target == "cuda":
        dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        k.cuda[N // 64, 64](*dev)
        for a, d in zip(args, dev):
            if isinstance(a, np.ndarray):
                a[...] = d.copy_to_host()
    elif target == "cpu-debug":
        kd.cpu[N // 64, 64](*args)
    else:
        getattr(k, target)[N // 64, 64](*args)


def _values(rng, dt):
    if np.dtype(dt).kind == "f":
        return rng.standard_normal(N).astype(dt)
    return rng.integers(-(10**6), 10**6, N).astype(dt)


def _outs(dt):
    return [np.full(N, POISON[np.dtype(dt)], dt) for _ in range(4)]


@pytest.mark.slow
@pytest.mark.parametrize("dt", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("target", TARGETS)
def test_per_lane_selectors_use_their_low_five_bits(target, dt, rng):
    x = _values(rng, dt)
    d = rng.integers(-100, 100, N).astype(np.int32)
    d[:8] = [-1, -31, -32, 32, 33, 63, 64, 2**31 - 1]
    outs = _outs(dt)
    _run(k_per_lane, k_per_lane_debug, target, x, d, *outs)
    for got, mode in zip(outs, ("idx", "up", "down", "bfly")):
        np.testing.assert_array_equal(got, ptx_shfl(x, d, mode), err_msg=mode)


@pytest.mark.slow
@pytest.mark.parametrize("dt", [np.int32, np.float64])
@pytest.mark.parametrize("target", TARGETS)
def test_constant_selectors_use_their_low_five_bits(target, dt, rng):
    x = _values(rng, dt)
    outs = _outs(dt)
    _run(k_constants, k_constants_debug, target, x, *outs)
    for got, mode, c in zip(outs, ("idx", "up", "down", "bfly"), CONSTANTS):
        np.testing.assert_array_equal(got, ptx_shfl(x, np.full(N, c), mode), err_msg=mode)


@pytest.mark.slow
@pytest.mark.parametrize("d", [-1, 5, 31, 33, 2**31 - 1])
@pytest.mark.parametrize("target", TARGETS)
def test_uniform_runtime_selectors_use_their_low_five_bits(target, d, rng):
    x = _values(rng, np.int64)
    outs = _outs(np.int64)
    _run(k_uniform, k_uniform_debug, target, x, d, *outs)
    for got, mode, sel in zip(outs, ("idx", "up", "down", "bfly"), (d, d - 2, d + 1, d * 3)):
        np.testing.assert_array_equal(got, ptx_shfl(x, np.full(N, sel), mode), err_msg=mode)


@pytest.mark.parametrize("start", [16, 48, 7])
@pytest.mark.parametrize("target", TARGETS)
def test_the_tree_sum_with_a_runtime_first_offset(target, start, rng):
    x = _values(rng, np.int64)
    out = _outs(np.int64)[0]
    _run(k_tree_sum, k_tree_sum_debug, target, x, start, out)
    want, offset = x.copy(), start
    while offset > 0:
        want = want + ptx_shfl(want, np.full(N, offset), "down")
        offset //= 2
    np.testing.assert_array_equal(out, want)


def test_a_uniform_selector_stays_one_scalar_on_the_cpu():
    """The selector of a shuffle whose offset is the same in every lane reaches the
    wave op as a scalar, not as a per-lane array (one shuffle pattern per wave)."""
    import numba

    src = k_tree_sum.inspect_cpu_source((numba.int64[::1], numba.int64, numba.int64[::1]))
    calls = [ln.strip() for ln in src.splitlines() if "_nq_XL_Wave_shuffleDown(" in ln]
    assert len(calls) == 1, calls
    selector = calls[0].rsplit(",", 1)[1]
    assert not selector.strip().startswith("_nq_v_"), calls[0]


def test_the_ptx_model_reads_what_the_pseudocode_says():
    """The model against hand-worked lanes (lane 0 and lane 31 of one wave)."""
    v = np.arange(100, 132)
    assert ptx_shfl(v, np.full(32, 33), "down")[0] == 101  # 33 & 31 = 1
    assert ptx_shfl(v, np.full(32, 33), "down")[31] == 131  # 31 + 1 > 31: own
    assert ptx_shfl(v, np.full(32, -1), "up")[31] == 100  # -1 & 31 = 31: lane 0
    assert ptx_shfl(v, np.full(32, -1), "up")[30] == 130  # 30 - 31 < 0: own
    assert ptx_shfl(v, np.full(32, 37), "idx")[9] == 105  # lane 37 & 31
    assert ptx_shfl(v, np.full(32, -3), "bfly")[0] == 129  # 0 ^ 29


@xpu.jit
def _k_shfl_value(x, out):
    i = cuda.grid(1)
    out[i] = cuda.shfl_sync(0xFFFFFFFF, x[i], 3)


@pytest.mark.parametrize("dtype", [np.uint32, np.int8, np.bool_])
def test_a_shuffle_of_another_type_gets_one_wording_on_both_targets(dtype):
    """numba.cuda shuffles 32- and 64-bit ints and floats only; its refusal named no
    rule ("No implementation of function Function(<intrinsic shfl_sync>)"): the CUDA
    target now says what the CPU target says (numquad/_numbatext.py)."""
    x = np.zeros(32, dtype)
    got = np.dtype(dtype).name
    want = rf"test_cuda_shfl_selectors.py.*cuda.shfl_sync: value got {got}; shfl_sync only supports 32- and 64-bit"
    with pytest.raises(NumquadTypeError, match=want):
        _k_shfl_value.cpu[1, 32](x, np.zeros(32, dtype))
    with pytest.raises(NumquadTypeError, match=want):
        _k_shfl_value.inspect_ptx((typeof(x), typeof(x)), cc=(9, 0))


@xpu.jit
def _k_shfl_tuple(x, out):
    i = cuda.grid(1)
    t = (x[i], x[i] * 2)
    v = cuda.shfl_down_sync(0xFFFFFFFF, t, 1)
    out[i] = v[0]


def test_a_shuffle_of_a_tuple_gets_the_same_wording_on_every_target():
    """A tuple is no value numba.cuda shuffles: every target says so in numba.cuda's
    rule, not in the words of ``Wave.shuffleDown``, which the CPU target runs for it and
    which the user did not write (its typing now checks numba.cuda's rule first)."""
    x = np.ones(32, np.float64)
    want = r"test_cuda_shfl_selectors.py.*cuda.shfl_down_sync: value got UniTuple\(float64 x 2\); shfl_sync only"
    with pytest.raises(NumquadTypeError, match=want) as e:
        _k_shfl_tuple.cpu[1, 32](x, np.zeros(32))
    assert "Wave." not in str(e.value)
    # (the interpreter names the Python type it sees)
    with pytest.raises(NumquadTypeError, match=want.replace(r"UniTuple\(float64 x 2\)", "tuple")):
        _k_shfl_tuple.python[1, 32](x, np.zeros(32))
    with pytest.raises(NumquadTypeError, match=want):
        _k_shfl_tuple.inspect_ptx((typeof(x), typeof(x)), cc=(9, 0))
