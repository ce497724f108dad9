"""A ``def`` inside a kernel or lane function (numba.cuda compiles it as a closure
Numba inlines): the CPU target lifts it out (numquad/cpu/nested.py). Expected
values come from NumPy; outputs are poisoned first. What a closure can do and a
lifted function cannot is refused in one line naming the user's line.
"""

import re

import numpy as np
import pytest
from numba import cuda

from numquad import NumquadCompileError, Wave, xpu


def _poison(shape, dtype=np.float64):
    return np.full(shape, np.nan if np.dtype(dtype).kind == "f" else -7, dtype)


@xpu.jit
def k_late_binding(out, x):
    i = cuda.grid(1)
    s = x[i] * 2.0

    def g(v):
        return v + s

    a = g(x[i])
    s = 10.0  # a closure reads the variable when it runs
    if i < out.size:
        out[i] = a + g(1.0)


def test_a_nested_def_reads_the_enclosing_variables_when_called(target, rng):
    x = rng.random(96)
    out = _poison(96)
    getattr(k_late_binding, target)[3, 32](out, x)
    np.testing.assert_array_equal(out, (x + x * 2.0) + (1.0 + 10.0))


def test_nested_defs_with_builtins_loops_returns_and_arrays(target, rng):
    @xpu.jit
    def k(out, x, n):
        i = cuda.grid(1)
        acc = cuda.local.array(4, np.int64)

        def fill(m):  # writes the caller's local array, returns nothing
            for j in range(4):
                acc[j] = m * (j + 1)

        def first_above(t):  # a return inside a loop
            for j in range(4):
                if acc[j] > t:
                    return j
            return -1

        def tid():
            return cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x

        fill(x[i])
        if tid() < out.size:
            out[tid()] = first_above(n) * 100 + tid()

    x = rng.integers(0, 20, 64)
    n = int(rng.integers(5, 30))
    out = _poison(64, np.int64)
    getattr(k, target)[2, 32](out, x, n)
    acc = x[:, None] * np.arange(1, 5)
    above = acc > n
    first = np.where(above.any(axis=1), above.argmax(axis=1), -1)
    np.testing.assert_array_equal(out, first * 100 + np.arange(64))


def test_nested_defs_call_each_other_and_nest(target, rng):
    @xpu.jit
    def k(out, x):
        i = cuda.grid(1)
        a = x[i]
        b = a * 3

        def h(v):
            return v - b

        def g(v):
            c = 5

            def inner(w):
                return w * c + a

            return h(inner(v))

        out[i] = g(a + 1)

    x = rng.integers(-100, 100, 64)
    out = _poison(64, np.int64)
    getattr(k, target)[2, 32](out, x)
    np.testing.assert_array_equal(out, ((x + 1) * 5 + x) - x * 3)


@pytest.mark.slow
def test_a_nested_def_in_a_kernel_with_cross_lane_ops(target, rng):
    @xpu.jit
    def k(out, x):
        i = cuda.grid(1)

        def clamp(v):
            return min(max(v, 0), 10)

        v = clamp(x[i])
        if v > 2:
            out[i] = Wave.prefixSum(clamp(v * 2))
        else:
            out[i] = -1

    x = rng.integers(-5, 15, 64)
    out = _poison(64, np.int64)
    getattr(k, target)[2, 32](out, x)
    v = np.clip(x, 0, 10)
    want = np.full(64, -1)
    for w in range(2):
        run = 0
        for t in range(32 * w, 32 * w + 32):
            if v[t] > 2:
                want[t] = run
                run += min(v[t] * 2, 10)
    np.testing.assert_array_equal(out, want)


@pytest.mark.slow
def test_a_nested_def_in_a_lane_function_called_on_arrays(rng):
    @xpu.jit
    def f(x, y):
        def sq(v):
            return v * v

        return sq(x) + sq(y) * x

    x, y = rng.random(100), rng.random(100)
    np.testing.assert_array_equal(f(x, y), x * x + (y * y) * x)


@pytest.mark.slow
def test_a_nested_def_in_a_device_function(rng):
    @cuda.jit(device=True)
    def dev(v, k):
        def twice(w):
            return 2 * w + k

        return twice(v) + twice(1)

    @xpu.jit
    def k(out, x):
        i = cuda.grid(1)
        out[i] = dev(x[i], 7)

    x = rng.integers(0, 1000, 32)
    out = _poison(32, np.int64)
    k.cpu[1, 32](out, x)
    np.testing.assert_array_equal(out, (2 * x + 7) + (2 + 7))


def _refusal(body):
    ns = {"xpu": xpu, "cuda": cuda, "Wave": Wave, "np": np}
    src = "def k(out, x):\n    i = cuda.grid(1)\n" + "".join("    " + line + "\n" for line in body)
    path = f"<nested-{abs(hash(src))}>"
    import linecache

    linecache.cache[path] = (len(src), None, src.splitlines(True), path)
    exec(compile(src, path, "exec"), ns)
    kern = xpu.jit(ns["k"])
    with pytest.raises(NumquadCompileError) as e:
        kern.cpu[1, 32](np.zeros(32), np.ones(32))
    return str(e.value), path


@pytest.mark.parametrize(
    "body, words, line",
    [
        (["def g(v):", "    return v", "f = g", "out[i] = f(1.0)"], "used other than by calling it", 5),
        (["def g(v):", "    return v", "def g(v):", "    return 2 * v", "out[i] = g(1.0)"], "defined twice", 5),
        (["s = 1.0", "def g(v):", "    nonlocal s", "    s = v", "g(x[i])", "out[i] = s"], "nonlocal", 5),
        (["def g(v):", "    return g(v - 1) if v > 0 else v", "out[i] = g(x[i])"], "calls itself", 4),
        (["s = x[i]", "def g(v, w=s):", "    return v + w", "out[i] = g(1.0)"], "not a constant", 4),
        (["def g(v):", "    return Wave.prefixSum(v)", "out[i] = g(x[i])"], "Wave.prefixSum inside the nested", 4),
        (["s = x[i]", "g = lambda v: v + s", "out[i] = g(1.0, 2.0)"], "g(): too many positional arguments", 5),
        (
            ["s = x[i]", "def h():", "    return s", "out[i] = (lambda s: h() + s)(5.0)"],
            "h() reads s of the enclosing function, which the lambda around this call binds too",
            6,
        ),
        (
            ["def g(v):", "    return h(v - 1) if v > 0 else v", "def h(v):", "    return g(v)", "out[i] = g(x[i])"],
            "mutually recursive lane functions",
            4,
        ),  # g's call of h closes the cycle
    ],
)
def test_what_a_lifted_function_cannot_do_is_one_line(body, words, line):
    msg, path = _refusal(body)
    assert words in msg
    assert f'File "{path}", line {line}' in msg


def test_the_cuda_target_compiles_the_same_kernel():
    # numba.cuda compiles the closure itself (PTX for sm_90 here, no GPU needed)
    ptx = k_late_binding.inspect_ptx("void(float64[:], float64[:])", cc=(9, 0))
    assert re.search(r"\bst(\.global)?\.f64", ptx) and ".local" not in ptx


def test_a_lambda_assigned_to_a_name_is_lifted_too(target, rng):
    # it captured a per-lane variable and failed with "Cannot capture a constant value
    # for variable '_nq_l'" before
    @xpu.jit
    def k(out, x):
        i = cuda.grid(1)
        s = x[i] * 2.0
        g = lambda v: v * s + cuda.threadIdx.x  # noqa: E731
        out[i] = g(x[i])

    x = rng.random(64)
    out = _poison(64)
    getattr(k, target)[2, 32](out, x)
    np.testing.assert_array_equal(out, x * (x * 2.0) + np.arange(64) % 32)
    if target == "cpu":
        assert ".local" not in k.inspect_ptx("void(float64[:], float64[:])", cc=(9, 0))


# -- a probe of nested functions (twenty-fourth session): a nested function's own
# names must not change what another nested function it calls reads


@pytest.mark.slow
def test_a_nested_functions_local_does_not_shadow_what_its_callee_reads(rng):
    @xpu.jit
    def k(out, x):
        i = cuda.grid(1)
        s = x[i]

        def load(j):  # reads the enclosing i and s
            return x[i] * 1000 + j * 10 + s

        def total():
            acc = 0
            for i in range(3):  # total's own i
                acc += load(i)
            return acc

        def g(s):  # a parameter named like load's capture
            return load(s) + s

        def mid(v):
            s = v

            def inner():
                return load(0) + s

            return inner()

        out[i] = total() * 1000000 + g(7) * 1000 + mid(5)

    x = rng.integers(0, 50, 32)
    out = _poison(32, np.int64)
    k.cpu[1, 32](out, x)
    load = lambda t, j: x[t] * 1000 + j * 10 + x[t]  # noqa: E731
    want = np.array(
        [sum(load(t, j) for j in range(3)) * 1000000 + (load(t, 7) + 7) * 1000 + load(t, 0) + 5 for t in range(32)]
    )
    np.testing.assert_array_equal(out, want)


def test_a_name_bound_inside_a_nested_function_is_not_captured(rng):
    @xpu.jit
    def k(out, x):
        i = cuda.grid(1)

        def g(v):
            f = lambda t: t + 1.0  # noqa: E731 - its t, not the t assigned below
            return f(v)

        out[i] = g(x[i])
        t = 5.0
        out[i] += t

    x = rng.random(32)
    out = _poison(32)
    k.cpu[1, 32](out, x)
    np.testing.assert_array_equal(out, (x + 1.0) + 5.0)


@pytest.mark.parametrize("debug", [False, True])
def test_an_out_of_bounds_load_in_a_nested_function_names_it(debug):
    from numquad.errors import NumquadIndexError

    def k(out, x):
        i = cuda.grid(1)

        def g(v):
            return x[v + 100]

        out[i] = g(i)

    kern = xpu.jit(debug=debug)(k)
    with pytest.raises(NumquadIndexError) as e:
        kern.cpu[1, 32](np.zeros(32), np.zeros(32))
    msg = str(e.value)
    assert "_nq_" not in msg and "g" in msg
    if debug:
        assert f"line {k.__code__.co_firstlineno + 4}" in msg and "index 100" in msg
