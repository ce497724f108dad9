"""What a probe of block-level kernels found (nineteenth session): the python
target's atomics and barrier predicates converted values unlike numba.cuda, it
could not call a numba.cuda function bound to another name, a barrier with an
argument ran on two targets and failed without a line on the third, and an
atomic's index out of bounds named the kernel's first line.

Expected values are written out from numba.cuda's rules (docs/semantics.md
"Conversions", docs/numba-cuda.md); outputs are poisoned first.
"""

import math
import re

import numpy as np
import pytest
from numba import cuda

from numquad import NumquadCompileError, xpu
from numquad.errors import NumquadIndexError

atomic_add = cuda.atomic.add  # numba.cuda's functions under other names
atomic_max = cuda.atomic.max
sarray = cuda.shared.array


def _int_of(t, v):
    """Float *v* as integer type *t*, as the GPU converts: toward zero, saturating."""
    info = np.iinfo(t)
    v = float(v)
    if v == np.inf or v == -np.inf:
        return t(info.max if v > 0 else info.min)
    return t(min(max(math.trunc(v), int(info.min)), int(info.max)))  # exact: Python ints


@pytest.mark.parametrize("target", ["cpu", "python"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_an_atomic_converts_a_float_value_as_the_gpu_converts(target, dtype, rng):
    # the python target took NumPy's astype: 3e9 -> int32 was -2**31 there
    @xpu.jit
    def k(v, a, olds):
        t = xpu.threadIdx.x
        if t < v.shape[0]:
            olds[t] = xpu.atomic.add(a, t, v[t])
            xpu.atomic.max(a, t + v.shape[0], v[t])

    v = np.array([3e9, np.inf, 1e19, -2.5, -7e18, 2.0**63, 4.75, -np.inf])
    v[7] = rng.choice([-np.inf, -1e30])
    start = rng.integers(0, 50, 2 * v.size).astype(dtype)
    a = start.copy()
    olds = np.full(v.size, 99, dtype)
    getattr(k, target)[1, 32](v, a, olds)
    conv = np.array([_int_of(dtype, x) for x in v], dtype)
    want = start.copy()
    with np.errstate(over="ignore"):
        want[: v.size] = start[: v.size] + conv
    want[v.size :] = np.maximum(start[v.size :], conv)
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(olds, start[: v.size])


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_barrier_predicate_is_an_int32_first(target, rng):
    # numba.cuda types syncthreads_count/_and/_or as i4(i4): 2**32 is 0 there
    @xpu.jit
    def k(v, out):
        t = xpu.threadIdx.x
        c = cuda.syncthreads_count(v[t])
        o = cuda.syncthreads_or(v[t])
        a = cuda.syncthreads_and(v[t])
        out[t, 0] = c
        out[t, 1] = o
        out[t, 2] = a

    n = 48
    v = rng.choice(np.array([2**32, -(2**40), 2**32 + 1, 5, 0], np.int64), n)
    out = np.full((n, 3), -9, np.int32)
    getattr(k, target)[1, n](v, out)
    low = (v.astype(np.uint64) & np.uint64(0xFFFFFFFF)) != 0
    want = np.array([low.sum(), low.any(), low.all()], np.int32)
    np.testing.assert_array_equal(out, np.broadcast_to(want, (n, 3)))


def test_a_float_barrier_predicate_is_refused_by_the_python_target_too():
    @xpu.jit
    def k(v, out):
        t = xpu.threadIdx.x
        c = cuda.syncthreads_count(v[t])
        out[t] = c

    for target in ("cpu", "python"):
        with pytest.raises(Exception, match=r"syncthreads_count\(pred\): pred got float64; it takes an integer"):
            getattr(k, target)[1, 32](np.full(32, 0.5), np.zeros(32, np.int32))


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_numba_cuda_functions_bound_to_other_names(target, rng):
    # the python target raised Stub.__new__'s TypeError and "cannot be called from host code"
    @xpu.jit
    def k(x, total, out):
        t = xpu.threadIdx.x
        sm = sarray(64, np.int64)
        sm[t] = x[t]
        xpu.syncthreads()
        atomic_add(total, 0, sm[63 - t])
        atomic_max(total, 1, sm[t])
        out[t] = sm[63 - t]

    x = rng.integers(-1000, 1000, 64)
    total = np.array([0, -(2**62)], np.int64)
    out = np.full(64, -1, np.int64)
    getattr(k, target)[1, 64](x, total, out)
    np.testing.assert_array_equal(out, x[::-1])
    np.testing.assert_array_equal(total, [x.sum(), x.max()])


@pytest.mark.parametrize("target", ["cpu", "python", "cuda-ptx"])
@pytest.mark.parametrize(
    "call, takes",
    [
        ("xpu.syncthreads(0xFFFF)", "() takes no arguments; got 1; for the lanes of a warp, syncwarp(mask)"),
        ("cuda.syncthreads_count()", "(pred) takes 1 argument; got 0"),
        ("cuda.syncwarp(1, 2)", "(mask) takes at most one argument; got 2"),
    ],
)
def test_a_barrier_with_the_wrong_arguments_is_one_line_on_every_target(target, call, takes, tmp_path):
    # syncthreads(mask) ran as a plain barrier on the CPU and python targets, and was
    # a TypeError without a line on CUDA
    src = tmp_path / "kb.py"
    src.write_text(
        "import numpy as np\nfrom numba import cuda\nfrom numquad import xpu\n\n"
        "@xpu.jit\ndef kb(out):\n    t = xpu.threadIdx.x\n"
        f"    {call}\n    out[t] = t\n"
    )
    ns = {}
    exec(compile(src.read_text(), str(src), "exec"), ns)
    kb = ns["kb"]
    with pytest.raises(NumquadCompileError) as e:
        if target == "cuda-ptx":
            kb.inspect_ptx("void(int64[:])", cc=(9, 0))
        else:
            getattr(kb, target)[1, 32](np.zeros(32, np.int64))
    msg = str(e.value)
    assert "\n" not in msg
    name = call.split("(")[0]
    assert msg.startswith(f'File "{src}", line 8: {name}{takes}'), msg


@pytest.mark.parametrize("debug", [False, True])
def test_an_atomic_out_of_bounds_names_its_line(debug):
    # it named the decorator's line ("an index in k is out of bounds")
    def k(out, v):
        t = xpu.threadIdx.x
        old = xpu.atomic.max(out, (t + 60,), v[t])
        v[t] = old

    kk = xpu.jit(k, debug=debug)
    out = np.zeros(64, np.int32)
    with pytest.raises(NumquadIndexError) as e:
        kk.cpu[1, 32](out, np.ones(32, np.int32))
    line = k.__code__.co_firstlineno + 2
    assert re.match(
        rf'File ".*", line {line}: an atomic of k is out of bounds in the launch \[1, 32\]: index 64 on '
        rf"axis 0 of an array of size 64",
        str(e.value),
    ), str(e.value)
    assert (out[60:] == 1).all() and (out[:60] == 0).all()  # nothing past the array


# -- a numba.cuda device function's shared array is one per function (a probe, twenty-
# third session: the CPU target gave each call its own, so a value written through one
# call was not read through another, and a 28 KB scratch called twice counted 56 KB) --


@cuda.jit(device=True)
def _slot(v, write):
    s = cuda.shared.array(1, np.int32)
    if write:
        s[0] = v
    cuda.syncthreads()
    r = s[0]
    cuda.syncthreads()
    return r


def _shifter(n):
    """A device function's body: v through a shared array of n float32, read back
    from the next thread."""

    def shift(t, v):
        s = cuda.shared.array(n, np.float32)
        s[t] = v
        cuda.syncthreads()
        r = s[(t + 1) % 32]
        cuda.syncthreads()
        return r

    return shift


_rot = cuda.jit(device=True)(_shifter(7000))  # 28,000 bytes
_rot_inlined = cuda.jit(device=True, inline="always")(_shifter(7000))


@xpu.jit
def k_slot_two_calls(v, out):
    t = cuda.threadIdx.x
    out[t, 0] = _slot(v[0], t == 0)  # writes through the first call
    out[t, 1] = _slot(np.int32(0), t < 0)  # reads through the second: the same array


def _called_twice(f):
    @xpu.jit
    def k(out):
        t = cuda.threadIdx.x
        a = f(t, t)
        b = f(t, t)
        out[t] = a + b

    return k


k_rot_twice, k_rot_inlined_twice = _called_twice(_rot), _called_twice(_rot_inlined)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
def test_a_device_function_s_shared_array_is_one_per_function(target, rng):
    v = rng.integers(-(2**31), 2**31, 1).astype(np.int32)
    out = np.full((8, 2), -1, np.int32)
    k = (
        xpu.jit(debug=True)(k_slot_two_calls.py_func).cpu
        if target == "cpu-debug"
        else getattr(k_slot_two_calls, target)
    )
    k[1, 8](v, out)
    np.testing.assert_array_equal(out, np.full((8, 2), v[0], np.int32))
    if target == "cpu":
        out = np.full(32, -1.0, np.float32)
        k_rot_twice.cpu[1, 32](out)  # 28 KB of shared memory, not 56
        np.testing.assert_array_equal(out, 2 * ((np.arange(32) + 1) % 32))
        with pytest.raises(NumquadCompileError, match="56000 bytes"):
            k_rot_inlined_twice.cpu[1, 32](np.zeros(32, np.float32))  # one per call


def test_the_ptx_has_one_shared_array_per_compiled_device_function():
    def decls(k):
        ptx = k.inspect_ptx("void(float32[:])", cc=(9, 0))
        return sum(".shared" in ln and "_cudapy_smem" in ln for ln in ptx.splitlines())

    assert decls(k_rot_twice) == 1
    assert decls(k_rot_inlined_twice) == 2


@xpu.jit
def k_shfl_width(x, out):
    t = cuda.threadIdx.x
    out[t] = cuda.shfl_down_sync(0xFFFFFFFF, x[t], 1, 16)  # CUDA C++'s width


@xpu.jit
def k_ballot_extra(x, out):
    t = cuda.threadIdx.x
    out[t] = cuda.ballot_sync(0xFFFFFFFF, x[t] > 3, 12345)


@xpu.jit
def k_big_static_shared(out):
    s = cuda.shared.array(13000, np.float32)  # 52,000 bytes
    t = cuda.threadIdx.x
    s[t] = t
    cuda.syncthreads()
    out[t] = s[t]


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_warp_function_arity_and_the_shared_limit_on_every_target(target):
    # a probe (twenty-third session): the python target dropped a 4th argument of
    # shfl_down_sync (numba.cuda has no width), failed on ballot_sync's 3rd with an
    # unrelated OverflowError, and ran a kernel over CUDA's 48 KiB of static shared
    # memory, which the compiled targets refuse
    x = np.arange(32, dtype=np.int32)
    for k, name, want in ((k_shfl_width, "shfl_down_sync", 3), (k_ballot_extra, "ballot_sync", 2)):
        out = np.full(32, -1, np.int32)
        with pytest.raises(
            NumquadCompileError, match=rf"cuda\.{name} takes {want} positional argument\(s\); got {want + 1}"
        ):
            getattr(k, target)[1, 32](x, out)
        np.testing.assert_array_equal(out, -1)
    with pytest.raises(NumquadCompileError, match="take 52000 bytes; CUDA allows 49152"):
        getattr(k_big_static_shared, target)[1, 32](np.zeros(32, np.float32))


_next_of = cuda.jit(device=True, inline="always")(_shifter(64))


@xpu.jit
def k_two_calls_one_statement(x, out):
    t = cuda.threadIdx.x
    out[t] = _next_of(t, x[t]) + _next_of(t, x[t] * 2) * np.float32(3)


@cuda.jit(device=True)
def _bump(buf, t):
    buf[t] += 1
    cuda.syncthreads()
    return buf[(t + 1) % 32]


@xpu.jit
def k_read_then_bump(buf, out):
    t = cuda.threadIdx.x
    out[t] = buf[t] + _bump(buf, t)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
def test_two_calls_with_barriers_in_one_statement_run_in_order(target, rng):
    # the CPU target refused `f(t) + f(t)` (each call "runs before the rest of its
    # statement"), though the calls keep Python's order when both are hoisted
    x = rng.standard_normal(32).astype(np.float32)
    out = np.full(32, -7.0, np.float32)
    k = (
        xpu.jit(debug=True)(k_two_calls_one_statement.py_func).cpu
        if target == "cpu-debug"
        else getattr(k_two_calls_one_statement, target)
    )
    k[1, 32](x, out)
    nxt = np.roll(x, -1)
    np.testing.assert_array_equal(out, nxt + (nxt * np.float32(2)) * np.float32(3))


def test_a_read_before_a_call_that_writes_it_is_still_refused():
    # Python reads buf[t] before _bump writes it; hoisted, the call would run first
    with pytest.raises(NumquadCompileError, match=r"_bump\(buf, t\) runs before the rest of its statement"):
        k_read_then_bump.cpu[1, 32](np.zeros(32), np.zeros(32))


@xpu.jit
def _k_shfl_width_keyword(x, out):
    i = cuda.grid(1)
    out[i] = cuda.shfl_down_sync(0xFFFFFFFF, x[i], 1, width=8)


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_width_keyword_of_a_shuffle_is_named(target):
    # a probe (twenty-seventh session): ``width=8`` was reported as a 4th positional argument
    x = np.random.default_rng(3).integers(-9, 9, 32).astype(np.int32)
    out = np.full(32, -1, np.int32)
    with pytest.raises(
        NumquadCompileError,
        match=r"cuda\.shfl_down_sync takes 3 positional argument\(s\) "
        r"and no keyword argument; got 3 and width=.*no width",
    ):
        getattr(_k_shfl_width_keyword, target)[1, 32](x, out)
    np.testing.assert_array_equal(out, -1)
