"""CUDA target on a GPU: every op x every accepted type against ops.py's NumPy reference.

Skipped where ``numba.cuda.is_available()`` is false. Each (op, type, selector)
gets one kernel, generated from source text:

    def k(src, sel, act, n, dst):
        i = xpu.grid(1)
        if i < n:                 # a bounds-guarded tail
            if act[i] == 0:
                return            # an early return
            dst[i] = Op(src[i] [, constant | sel[i]])

launched under four layouts (below). Thread i of a launch with blocks of T
threads is lane ``t % 32`` of wave ``b * ceil(T / 32) + t // 32`` where
``b, t = divmod(i, T)`` (for T = 48: wave = 2b + t // 32). It is active when
``i < n and act[i] != 0``. The inputs, the selectors and the active mask are
scattered into ``(waves, 32)`` arrays, ``op.reference`` computes the expected
values, and the outputs (poisoned before the launch) must equal them bit for
bit in active lanes and keep the poison in inactive ones.
"""

import linecache

import numpy as np
import pytest


def _cuda_available():
    try:
        from numba import cuda

        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001 - no numba-cuda, no driver: no GPU
        return False


pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not _cuda_available(), reason="needs an NVIDIA GPU (numba.cuda.is_available() is false)"),
]

from numquad import Quad, Wave, ops, xpu  # noqa: E402

W = ops.WAVE

#: name -> (blocks, threads per block, threads cut by `i < n` at the end, active set)
LAYOUTS = {
    "full": (4, 64, 0, "all"),  # full waves, every lane active
    "block48": (3, 48, 0, "all"),  # each block: one full wave, one of 16 lanes
    "tail": (3, 64, 37, "all"),  # the last 37 threads fail `i < n`
    "return": (3, 96, 0, "random"),  # early return: a random active set (any shape, scans too)
}

#: Constant selectors compiled into the source, per op.
CONSTANTS = {
    "Quad.broadcast": (0, 1, 2, 3),
    "Wave.broadcast": (0, 13, 31),
    "Wave.shuffle": (5, 40),
    "Wave.shuffleXor": (1, 6, 16, 31),
    "Wave.shuffleUp": (0, 1, 7, 31),
    "Wave.shuffleDown": (0, 1, 7, 31),
}

#: Runtime selectors are drawn from [lo, hi): out of range, negative, wrapping.
RUNTIME_SELECTORS = {
    "Quad.broadcast": (-20, 40),
    "Wave.broadcast": (-40, 100),
    "Wave.shuffle": (-40, 100),
    "Wave.shuffleXor": (-40, 100),
    "Wave.shuffleUp": (-40, 40),
    "Wave.shuffleDown": (-40, 40),
}


# ---------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------

_KERNELS = {}


def kernel(op, sel):
    """The check kernel of *op*; *sel* is None, "runtime" or a constant int."""
    key = (op.qualname, sel)
    if key in _KERNELS:
        return _KERNELS[key]
    if op.kind == "query":
        call = f"{op.qualname}()"
    elif sel is None:
        call = f"{op.qualname}(src[i])"
    elif sel == "runtime":
        call = f"{op.qualname}(src[i], sel[i])"
    else:
        call = f"{op.qualname}(src[i], {sel})"
    fname = f"gpu_{op.namespace}_{op.name}_{'c' + str(sel) if isinstance(sel, int) else sel}"
    src = (
        f"def {fname}(src, sel, act, n, dst):\n"
        f"    i = xpu.grid(1)\n"
        f"    if i < n:\n"
        f"        if act[i] == 0:\n"
        f"            return\n"
        f"        dst[i] = {call}\n"
    )
    filename = f"<numquad test_cuda_gpu {fname}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    scope = {"xpu": xpu, "Quad": Quad, "Wave": Wave}
    exec(compile(src, filename, "exec"), scope)
    _KERNELS[key] = k = xpu.jit(scope[fname], target="cuda")
    return k


def launch(k, blocks, threads, src, sel, act, n, dst):
    """Run *k* on the GPU; *dst* is updated in place. Replaceable for a harness check."""
    from numba import cuda

    d_dst = cuda.to_device(dst)
    k[blocks, threads](cuda.to_device(src), cuda.to_device(sel), cuda.to_device(act), np.int64(n), d_dst)
    d_dst.copy_to_host(dst)


# ---------------------------------------------------------------------------
# Inputs and the reference
# ---------------------------------------------------------------------------


def values(op, dtype, size, rng):
    """Random operands: never only zeros or a range."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(size) < 0.5
    if op.types == "pred":  # nonzero is true: mix zeros in
        info = np.iinfo(dtype)
        v = rng.integers(info.min, info.max, size=size, dtype=dtype, endpoint=True)
        return np.where(rng.random(size) < 0.4, dtype.type(0), v)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=size, dtype=dtype, endpoint=True)
    if op.combine == "mul":  # products near 1 stay finite
        v = rng.uniform(0.5, 2.0, size) * rng.choice([-1.0, 1.0], size)
    else:
        v = rng.standard_normal(size) * 8
    return v.astype(dtype)


def active_set(op, layout, size, rng):
    how = LAYOUTS[layout][3]
    if how == "all":
        return np.ones(size, np.uint8)
    # any active set: scans run over the ranks of the active lanes (docs/semantics.md)
    return (rng.random(size) < 0.6).astype(np.uint8)


def wave_lane(size, threads):
    i = np.arange(size)
    b, t = i // threads, i % threads
    return b * -(-threads // W) + t // W, t % W


def expected(op, sel, src, sels, act, n, threads):
    """(expected value per thread, active per thread) from op.reference."""
    size = src.size
    wave, lane = wave_lane(size, threads)
    shape = (wave.max() + 1, W)
    active = np.zeros(shape, bool)
    active[wave, lane] = (np.arange(size) < n) & (act != 0)
    X = np.zeros(shape, src.dtype)
    X[wave, lane] = src
    if op.kind == "query":
        R = op.reference(active=active)
    elif sel is None:
        R = op.reference(X, active=active)
    elif sel == "runtime":
        S = np.zeros(shape, sels.dtype)
        S[wave, lane] = sels
        R = op.reference(X, S, active=active)
    else:
        R = op.reference(X, sel, active=active)
    return R[wave, lane], active[wave, lane]


def out_dtype(op, dtype):
    r = op.result_dtype(dtype if op.params else None)
    return np.dtype(np.uint8) if r.kind == "b" else r  # bools through uint8 (poisonable)


def poison(dtype):
    return np.frombuffer(b"\xa5" * dtype.itemsize, dtype)[0]


def bits(a):
    return a.view(f"u{a.dtype.itemsize}")


def run(op, dtype, sel, layout, seed=0, seltype=np.int32):
    """Launch one case; returns a failure description or None."""
    blocks, threads, cut, _ = LAYOUTS[layout]
    size = blocks * threads
    rng = np.random.default_rng([seed, sum(map(ord, op.qualname + str(dtype) + str(sel) + layout))])
    src = values(op, dtype if op.params else np.int32, size, rng)
    if op.kind == "allequal":
        # some waves hold one value everywhere; some differ only in lanes that sleep
        for i0 in range(0, size, W):
            if rng.random() < 0.5:
                src[i0 : i0 + W] = src[i0]
    lo, hi = RUNTIME_SELECTORS.get(op.qualname, (0, 1))
    if np.dtype(seltype).kind == "u":
        lo = 0
    sels = rng.integers(lo, hi, size=size).astype(seltype)
    act = active_set(op, layout, size, rng)
    n = size - cut
    odt = out_dtype(op, dtype)
    dst = np.full(size, poison(odt), odt)

    launch(kernel(op, sel), blocks, threads, src, sels, act, n, dst)

    exp, active = expected(op, sel, src, sels, act, n, threads)
    exp = exp.astype(odt)
    bad = np.flatnonzero(active & (bits(dst) != bits(exp)))
    if bad.size:
        j = bad[0]
        w, lane = (x[j] for x in wave_lane(size, threads))
        return (
            f"{layout}: thread {j} (wave {w}, lane {lane}) got {dst[j]!r}, expected "
            f"{exp[j]!r}; {bad.size} of {int(active.sum())} active lanes differ"
        )
    touched = np.flatnonzero(~active & (bits(dst) != bits(np.full(1, poison(odt), odt))[0]))
    if touched.size:
        return f"{layout}: inactive thread {touched[0]} was written ({dst[touched[0]]!r})"
    return None


def _params():
    out = []
    for op in ops.OPS.values():
        dtypes = op.accepted if op.params else (np.dtype(np.int32),)
        if op.selector:
            sels = ["runtime", *CONSTANTS[op.qualname]]
        else:
            sels = [None]
        for dt in dtypes:
            for sel in sels:
                out.append(pytest.param(op, dt, sel, id=f"{op.qualname}-{dt}-{sel}"))
    return out


@pytest.mark.parametrize("op,dtype,sel", _params())
def test_op(op, dtype, sel):
    failures = [f for f in (run(op, dtype, sel, layout) for layout in LAYOUTS) if f]
    assert not failures, f"{op.qualname}[{dtype}] sel={sel}: " + "; ".join(failures)


@pytest.mark.parametrize("seltype", [np.uint8, np.int16, np.int64, np.uint64], ids=str)
@pytest.mark.parametrize("qualname", list(RUNTIME_SELECTORS))
def test_runtime_selector_types(qualname, seltype):
    op = ops.get(qualname)
    failures = [f for f in (run(op, np.float64, "runtime", layout, seltype=seltype) for layout in LAYOUTS) if f]
    assert not failures, f"{qualname} with {np.dtype(seltype)} selectors: " + "; ".join(failures)


# ---------------------------------------------------------------------------
# Lane functions, launch options, float parity
# ---------------------------------------------------------------------------


@xpu.jit
def _lane(x, y):
    return x * y + Quad.swapVertical(x)


def _on_waves(opname, x):
    """ops.py's reference of *opname* on the flattened *x*, element k lane k % 32 of
    wave k // 32 (the last wave partial), as a lane call runs it; flat."""
    n = x.size
    waves = -(-n // W)
    X = np.zeros(waves * W, x.dtype)
    X[:n] = x.ravel()
    active = (np.arange(waves * W) < n).reshape(waves, W)
    return ops.get(opname).reference(X.reshape(waves, W), active=active).ravel()[:n]


def _lane_reference(x, y):
    """_lane on a flat array: element k is lane k % 32 of wave k // 32."""
    return (x.ravel() * y + _on_waves("Quad.swapVertical", x)).reshape(x.shape)


def test_lane_function_on_arrays():
    from numba import cuda

    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 13)).astype(np.float32)  # 91 lanes: a partial last wave
    y = np.float32(1.5)
    exp = _lane_reference(x, y)
    got = _lane.cuda(x, y)
    assert got.shape == x.shape and got.dtype == np.float32
    assert np.array_equal(bits(got.copy_to_host()), bits(exp))
    d_x = cuda.to_device(x)
    out = cuda.device_array(x.shape, np.float32)
    assert _lane(d_x, y, out=out) is out  # target "auto": a device array
    assert np.array_equal(bits(out.copy_to_host()), bits(exp))
    host = np.empty(x.shape, np.float32)
    assert _lane.cuda(x, y, out=host) is host
    assert np.array_equal(bits(host), bits(exp))


def test_lane_function_python_scalars_are_weak_on_both_targets():
    """``f(x_float32, 1.5)``: 1.5 is weak (NumPy 2), float32 on the GPU as on the CPU."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal(77).astype(np.float32)
    exp = _lane_reference(x, np.float32(1.5))
    cpu = _lane.cpu(x, 1.5)
    gpu = _lane.cuda(x, 1.5).copy_to_host()
    assert cpu.dtype == gpu.dtype == np.float32
    assert np.array_equal(bits(cpu), bits(exp)) and np.array_equal(bits(gpu), bits(exp))


@xpu.jit
def _lane_scan(x, y):
    return Wave.prefixSum(x) + Quad.swapDiagonal(x) * y


def _lane_scan_reference(x, y):
    """_lane_scan on a flat array: element k is lane k % 32 of wave k // 32."""
    ps, sd = _on_waves("Wave.prefixSum", x), _on_waves("Quad.swapDiagonal", x)
    return (ps + sd * y).astype(x.dtype).reshape(x.shape)


@pytest.mark.parametrize("n", [1, 31, 33, 1024, 1025, 4097, 70001, 3 * 1024 * 1024 + 45])
def test_lane_function_on_device_arrays_every_slot(n):
    """The generated lane-call kernel takes several elements per thread (slots
    a grid apart): every slot of every wave, the partial last wave, in place too."""
    from numba import cuda

    rng = np.random.default_rng(n)
    x = rng.integers(-(2**40), 2**40, n)  # int64 (Numba: int32 + int32 is int64)
    exp = _lane_scan_reference(x, np.int64(3))
    assert np.array_equal(_lane_scan.cpu(x, np.int64(3)), exp)
    d_x = cuda.to_device(x)
    out = cuda.to_device(np.full(n, -7, np.int64))  # poisoned
    assert _lane_scan(d_x, np.int64(3), out=out) is out
    assert np.array_equal(out.copy_to_host(), exp)
    got = _lane_scan(d_x, 3).copy_to_host()  # allocates; 3 is weak: int64
    assert got.dtype == np.int64 and np.array_equal(got, exp)
    _lane_scan(d_x, np.int64(3), out=d_x)  # in place
    assert np.array_equal(d_x.copy_to_host(), exp)
    x2 = x.reshape(-1, 1) if n % 2 else x.reshape(2, -1)  # n-D device arrays
    d2 = cuda.to_device(x2)
    assert np.array_equal(_lane_scan(d2, np.int64(3)).copy_to_host(), exp.reshape(x2.shape))


@xpu.jit
def _calls_lane(x, out):
    i = xpu.grid(1)
    if i < x.size:
        out[i] = _lane(x[i], x[i])


def test_kernel_calls_lane_function_with_stream_and_sharedmem():
    from numba import cuda

    rng = np.random.default_rng(4)
    x = rng.standard_normal(100).astype(np.float32)
    out = np.full(100, np.nan, np.float32)
    stream = cuda.stream()
    d_x, d_out = cuda.to_device(x, stream=stream), cuda.to_device(out, stream=stream)
    _calls_lane[2, 64, stream, 0](d_x, d_out)
    d_out.copy_to_host(out, stream=stream)
    stream.synchronize()
    X = np.zeros(128, np.float32)
    X[:100] = x
    active = (np.arange(128) < 100).reshape(4, W)
    sv = ops.get("Quad.swapVertical").reference(X.reshape(4, W), active=active).ravel()[:100]
    assert np.array_equal(bits(out), bits(x * x + sv))


@xpu.jit
def _axpy(a, b, c, out):
    i = xpu.grid(1)
    if i < out.size:
        out[i] = a[i] * b[i] + c[i]


def test_no_fma_contraction_on_the_gpu():
    """a*b+c rounds twice, as NumPy's float32 arithmetic does."""
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal(4096).astype(np.float32) for _ in range(3))
    out = np.empty(4096, np.float32)
    _axpy.cuda[16, 256](a, b, c, out)
    assert np.array_equal(bits(out), bits(a * b + c))


@xpu.jit
def _add(x, y):
    return x + y


def test_lane_call_out_overlapping_an_input_is_numpys_rule():
    """``f(d[:-1], d[1:], out=d[1:])``: as if nothing overlapped (NumPy's rule); the
    input is copied first. ``out`` equal to an input is in place."""
    from numba import cuda

    x = np.random.default_rng(7).standard_normal(5000)
    d = cuda.to_device(x)
    _add(d[:-1], d[1:], out=d[1:])
    want = x.copy()
    np.add(want[:-1], want[1:], out=want[1:])
    assert np.array_equal(d.copy_to_host(), want)
    d = cuda.to_device(x)
    _add(d, d, out=d)
    assert np.array_equal(d.copy_to_host(), x + x)
