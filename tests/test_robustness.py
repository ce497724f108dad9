"""Bad input and lifecycle: one-line errors naming the call, what it got, what it
takes and the user's line; launch checks that do not depend on the cache; fork,
pickling, compiles from threads, and what a compile keeps alive.

docs/RELIABILITY.md ("Bad input and lifecycle") lists the messages."""

import gc
import importlib.util
import inspect
import multiprocessing
import os
import pickle
import re
import subprocess
import sys
import textwrap
import threading
import time
import weakref

import numpy as np
import pytest

from numquad import NumquadCompileError, NumquadLaunchError, NumquadRuntimeError, NumquadTypeError, Quad, Wave, xpu
from numquad.errors import NumquadIndexError

THIS = __file__
G_SCALE = 3.0


def child_env(**extra):
    """The environment for a child interpreter that imports this numquad."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONFAULTHANDLER"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.update(extra)
    return env


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn.py_func if hasattr(fn, "py_func") else fn)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(text)


def one_line(e):
    msg = str(e.value if hasattr(e, "value") else e)
    assert "\n" not in msg, msg
    assert "Failed in" not in msg and "pipeline" not in msg, msg
    return msg


@xpu.jit
def k_two(a, b):
    i = xpu.grid(1)
    if i < a.size:
        a[i] = b[i] + Quad.swapHorizontal(b[i])


@xpu.jit
def add(x, y):
    return x + y


# -- 1. argument counts, checked once in xpu.Dispatcher for every target -------------


@pytest.mark.parametrize("view", ["auto", "cpu", "cuda"])
@pytest.mark.parametrize("nargs", [1, 3])
def test_kernel_launch_with_wrong_argument_count(view, nargs):
    a = np.zeros(32)
    k = {"auto": k_two, "cpu": k_two.cpu, "cuda": k_two.cuda}[view]
    with pytest.raises(NumquadTypeError) as e:
        k[1, 32](*([a] * nargs))  # the launch line
    msg = one_line(e)
    assert f"k_two(a, b) takes 2 arguments; got {nargs}" in msg
    launch = line_of(test_kernel_launch_with_wrong_argument_count, "# the launch line")
    assert f'File "{THIS}", line {launch}' in msg
    assert f"k_two is defined at line {k_two.firstlineno}" in msg


@pytest.mark.parametrize("view", ["auto", "cpu", "cuda"])
def test_lane_function_call_with_wrong_argument_count(view):
    f = {"auto": add, "cpu": add.cpu, "cuda": add.cuda}[view]
    with pytest.raises(NumquadTypeError) as e:
        f(np.zeros(4))
    msg = one_line(e)
    assert "add(x, y) takes 2 arguments; got 1" in msg and THIS in msg
    with pytest.raises(NumquadTypeError, match=r"add\(x, y\) takes 2 arguments; got 3"):
        f(np.zeros(4), 1.0, 2.0)


def test_keyword_arguments_are_refused_clearly():
    with pytest.raises(NumquadTypeError) as e:
        k_two[1, 32](np.zeros(32), b=np.zeros(32))
    assert "by position" in one_line(e) and "k_two" in str(e.value)
    with pytest.raises(NumquadTypeError) as e:
        add(np.zeros(4), y=1.0)
    assert "by position" in one_line(e) and "add" in str(e.value)


def test_omitted_arguments_take_their_defaults():
    @xpu.jit
    def k_default(a, s=2.0):
        i = xpu.grid(1)
        if i < a.size:
            a[i] = s

    a = np.zeros(32)
    k_default[1, 32](a)
    assert (a == 2.0).all()
    k_default[1, 32](a, 5.0)
    assert (a == 5.0).all()
    with pytest.raises(NumquadTypeError, match=r"takes 1 to 2 arguments; got 3"):
        k_default[1, 32](a, 1.0, 2.0)


# -- 2 and 3. launch configurations ---------------------------------------------------


def test_lists_are_launch_dimensions_as_in_numba_cuda():
    a, b = np.zeros(64), np.arange(64.0)
    k_two[[2], [32]](a, b)
    want = np.zeros(64)
    k_two[2, 32](want, b)
    np.testing.assert_array_equal(a, want)
    a[:] = 0
    k_two[[2, 1], (32, 1)](a, b)
    np.testing.assert_array_equal(a, want)


@pytest.mark.parametrize("bad", [1.0, True, np.float64(1), (1.0,), [1.0], (1, True)])
def test_float_and_bool_dimensions_are_refused_whatever_ran_before(bad):
    @xpu.jit
    def k_fresh(a):
        i = xpu.grid(1)
        a[i] = i

    a = np.zeros(32)
    with pytest.raises(NumquadTypeError) as first:
        k_fresh[bad, 32](a)
    for ok in (1, (1,), (1, 1)):  # caches the equal integer configurations
        k_fresh[ok, 32](a)
    with pytest.raises(NumquadTypeError) as again:
        k_fresh[bad, 32](a)

    def without_line(e):  # the two launches sit on different lines
        return re.sub(r", line \d+,", ", line N,", str(e.value))

    assert f'File "{THIS}", line' in str(again.value)
    assert without_line(again) == without_line(first)
    with pytest.raises(NumquadTypeError):
        k_fresh[1, bad if not isinstance(bad, (tuple, list)) else (32.0,)](a)


# -- 4. what a function is, and constructs around it -----------------------------------


@xpu.jit
def k_nested_def(a):
    def g(x):
        return x + 1

    i = xpu.grid(1)
    a[i] = g(i)


@pytest.mark.slow
def test_nested_def_does_not_make_a_kernel_a_lane_function(rng):
    # (its return is the nested function's: k_nested_def is a kernel, run with the
    # nested def lifted out, numquad/cpu/nested.py)
    assert k_nested_def.is_kernel
    a = rng.random(32)
    k_nested_def.cpu[1, 32](a)
    np.testing.assert_array_equal(a, np.arange(1, 33))


def test_nested_return_only_does_not_make_a_lane_function():
    @xpu.jit
    def k_only_nested_return(a):
        class C:
            def m(self):
                return 1

        a[0] = 1

    assert k_only_nested_return.is_kernel


lam_twice = xpu.jit(lambda x: x * 2 + Quad.swapHorizontal(x))


@pytest.mark.slow
def test_lambda_is_a_lane_function_and_runs():
    assert not lam_twice.is_kernel and "lane function" in repr(lam_twice)
    x = np.arange(8.0)
    np.testing.assert_array_equal(lam_twice(x), x * 2 + x.reshape(-1, 2)[:, ::-1].reshape(-1))

    @xpu.jit
    def k_calls_lambda(a, out):
        i = xpu.grid(1)
        if i < a.size:
            out[i] = lam_twice(a[i])

    out = np.zeros(8)
    k_calls_lambda[1, 32](x, out)
    np.testing.assert_array_equal(out, lam_twice(x))


@xpu.jit
def k_global_read(a):
    global G_SCALE
    i = xpu.grid(1)
    if i < a.size:
        a[i] = G_SCALE * i


@xpu.jit
def k_global_write(a):
    global G_SCALE
    G_SCALE = 1.0
    a[0] = G_SCALE


def test_global_statement():
    a = np.zeros(32)
    k_global_read[1, 32](a)
    np.testing.assert_array_equal(a, 3.0 * np.arange(32))
    with pytest.raises(NumquadCompileError) as e:
        k_global_write[1, 32](a)
    msg = one_line(e)
    assert "global G_SCALE" in msg and "cannot assign" in msg
    assert f"line {line_of(k_global_write, 'global G_SCALE')}" in msg


@xpu.jit
def countdown(n):
    if n <= 0:
        return n * 0
    return countdown(n - 1) + 1


@xpu.jit
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@xpu.jit
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


@xpu.jit
def scan_rec(x, n):
    if n <= 0:
        return x
    return scan_rec(Wave.prefixSum(x), n - 1)


@pytest.mark.slow
def test_recursive_lane_functions_run():
    n = np.arange(10)
    np.testing.assert_array_equal(countdown(n), n)

    @xpu.jit
    def k_rec(a):
        i = xpu.grid(1)
        if i < a.size:
            a[i] = countdown(i) * 2

    a = np.zeros(32, np.int64)
    k_rec[1, 32](a)
    np.testing.assert_array_equal(a, 2 * np.arange(32))


def test_mutual_recursion_is_an_error_on_the_cpu():
    with pytest.raises(NumquadCompileError) as e:
        is_even(np.arange(4))
    msg = one_line(e)
    assert "mutually recursive" in msg and "is_even -> is_odd -> is_even" in msg
    assert f"line {line_of(is_even, 'return is_odd(')}" in msg


def test_recursive_lane_function_with_cross_lane_ops_is_an_error():
    with pytest.raises(NumquadCompileError) as e:
        scan_rec(np.ones(32), 2)
    msg = one_line(e)
    assert "recursive call" in msg and "scan_rec -> scan_rec" in msg
    assert f"line {line_of(scan_rec, 'return scan_rec(')}" in msg


@pytest.mark.slow
def test_unbounded_recursion_is_a_recursion_error_not_a_crash(tmp_path):
    # a base case never reached overflowed the machine stack: a segmentation fault
    # of the whole process, in a kernel, a debug kernel and a lane call on arrays
    script = tmp_path / "deep.py"
    script.write_text(
        textwrap.dedent("""
        import numpy as np
        from numba import cuda
        from numquad import xpu

        @xpu.jit
        def depth(n):
            if n == 0:
                return 0
            return depth(n - 1) + 1

        @cuda.jit(device=True)
        def down(n):
            if n == -1:
                return 0
            return down(n + 1) * 2 + 1

        @xpu.jit
        def k(out, a):
            i = xpu.grid(1)
            out[i] = depth(a[i]) + down(a[i] - 9)

        for run in (lambda a: depth(a), lambda a: k[1, 2](np.zeros(2, np.int64), a),
                    lambda a: xpu.jit(debug=True)(k.py_func)[1, 2](np.zeros(2, np.int64), a)):
            for a in (np.array([5, 7]), np.array([3, -4])):
                try:
                    print("ran", run(a), flush=True)
                except RecursionError as e:
                    print("RecursionError", e, flush=True)
    """)
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=child_env())
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert len(lines) == 6, r.stdout
    assert lines[0] == "ran [5 7]"
    assert all(line.startswith("ran") for line in lines[::2]), r.stdout
    for line in lines[1::2]:
        assert line.startswith(f'RecursionError File "{script}", line ') and "calls itself more than" in line, line


@pytest.mark.slow
def test_positional_only_and_star_args_kernels_run_on_every_target(rng):
    # numba.cuda compiles both; the CPU target took neither ("Signature mismatch")
    def k_pos(out, a, /):
        i = xpu.grid(1)
        out[i] = Wave.prefixSum(a[i]) + Quad.swapVertical(a[i])

    def k_star(out, *arrays):
        i = xpu.grid(1)
        s = 0
        for j in range(len(arrays)):
            s += arrays[j][i] * (j + 1)
        out[i] = Wave.prefixSum(s) + len(arrays)

    a, b = rng.integers(-50, 50, 64), rng.integers(-50, 50, 64)
    q = a.reshape(-1, 4)[:, [2, 3, 0, 1]].ravel()
    for target in ("cpu", "python"):
        for fn, args in ((k_pos, (a,)), (k_star, (a, b)), (k_star, (b,))):
            s = sum((j + 1) * x for j, x in enumerate(args))
            scan = np.concatenate([np.cumsum(w) - w for w in np.split(s, 2)])  # per wave
            want = scan + (q if fn is k_pos else len(args))
            out = np.full(64, -12345, np.int64)
            getattr(xpu.jit(fn), target)[2, 32](out, *args)
            np.testing.assert_array_equal(out, want, err_msg=f"{fn.__name__} {target}")


@pytest.mark.parametrize("option, value", [("fastmath", "yes"), ("fastmath", {"nsz"}), ("debug", 2), ("cache", None)])
def test_on_off_options_take_only_booleans(option, value):
    with pytest.raises(TypeError, match=f"xpu.jit: {option} must be True or False; got {value!r}"):
        xpu.jit(**{option: value})(lambda x: x)


def test_generators_and_async_functions_are_refused_at_decoration():
    def k_gen(a):
        i = xpu.grid(1)
        a[i] = 1
        yield i

    async def k_async(a):
        a[0] = 1

    with pytest.raises(NumquadTypeError) as e:
        xpu.jit(k_gen)
    msg = one_line(e)
    assert "k_gen is a generator" in msg and f"line {line_of(k_gen, 'yield')}" in msg
    with pytest.raises(NumquadTypeError, match="async function"):
        xpu.jit(k_async)


# -- 5. names and typos ---------------------------------------------------------------


@xpu.jit
def k_undefined(a):
    i = xpu.grid(1)
    a[i] = undefined_thing * 2  # noqa: F821


@xpu.jit
def k_op_typo(a):
    i = xpu.grid(1)
    a[i] = Wave.prefixSun(a[i])


@xpu.jit
def k_quad_typo(a):
    i = xpu.grid(1)
    a[i] = Quad.swapHorizontl(a[i])


@xpu.jit
def k_builtin_typo(a):
    i = xpu.gird(1)
    a[i] = 1


@xpu.jit
def k_axis_typo(a):
    i = xpu.threadIdx.w
    a[i] = 1


@xpu.jit
def k_numpy_typo(a):
    i = xpu.grid(1)
    a[i] = np.flot32(1)


@xpu.jit
def k_bad_store(a):
    i = xpu.grid(1)
    a[i] = "text"


@pytest.mark.parametrize(
    "kernel,text,expect",
    [
        (k_undefined, "undefined_thing", "name 'undefined_thing' is not defined"),
        (k_op_typo, "prefixSun", "Wave.prefixSun is not a Wave op; did you mean Wave.prefixSum?"),
        (k_quad_typo, "swapHorizontl", "did you mean Quad.swapHorizontal?"),
        (k_builtin_typo, "xpu.gird", "xpu.gird is not an xpu builtin; did you mean xpu.grid?"),
        (k_axis_typo, "threadIdx.w", "xpu.threadIdx has x, y, z"),
        (k_numpy_typo, "flot32", "did you mean np.float32?"),
    ],
)
@pytest.mark.parametrize("view", ["cpu", "cuda"])
def test_unknown_names_are_one_line_with_a_suggestion(kernel, text, expect, view):
    """Checked in xpu.Dispatcher before either target compiles (no GPU needed)."""
    k = kernel.cpu if view == "cpu" else kernel.cuda
    with pytest.raises(NumquadCompileError) as e:
        k[1, 32](np.zeros(32))
    msg = one_line(e)
    assert expect in msg and THIS in msg, msg
    assert f"line {line_of(kernel, text)}" in msg


def test_lane_function_typo_on_array_call():
    f = xpu.jit(lambda x: Wave.reduceSun(x))
    with pytest.raises(NumquadCompileError) as e:
        f(np.zeros(4))
    assert "did you mean Wave.reduceSum?" in one_line(e)


def test_numba_typing_errors_are_one_line():
    with pytest.raises(NumquadTypeError) as e:
        k_bad_store.cpu[1, 32](np.zeros(32))
    msg = one_line(e)
    assert "setitem" in msg and "str" in msg and f"line {line_of(k_bad_store, 'text')}" in msg
    assert "Failed in" in e.value.numba_text  # Numba's whole report stays available


def test_lane_call_out_errors_name_the_function():
    with pytest.raises(NumquadLaunchError) as e:
        add(np.zeros(3), 1.0, out=np.zeros(4))
    assert "out= has shape (4,)" in one_line(e) and THIS in str(e.value)
    with pytest.raises(ValueError, match="read-only"):
        out = np.zeros(3)
        out.flags.writeable = False
        add(np.zeros(3), 1.0, out=out)


# -- 6. out-of-bounds accesses ----------------------------------------------------------


@xpu.jit(debug=True)
def k_oob_debug(a):
    i = xpu.grid(1)
    a[i + 1] = i


def test_debug_out_of_bounds_is_a_numquad_runtime_and_index_error():
    with pytest.raises(NumquadIndexError) as e:
        k_oob_debug[1, 32](np.zeros(32))
    assert isinstance(e.value, NumquadRuntimeError) and isinstance(e.value, IndexError)
    msg = one_line(e)
    assert "k_oob_debug" in msg and THIS in msg and "out of bounds" in msg and "[1, 32]" in msg


@xpu.jit
def k_unguarded(x, out):
    i = xpu.grid(1)
    out[i] = x[i] * 2.0 + Wave.prefixSum(x[i])


@xpu.jit
def k_unguarded_2d(img, out):
    x, y = xpu.grid(2)
    out[y, x] += img[y, x]


@xpu.jit
def k_shared_past_the_end(out):
    sh = xpu.shared.array(32, np.int64)
    t = xpu.threadIdx.x
    sh[t] = t
    xpu.syncthreads()
    out[t] = sh[t & 31]


@xpu.jit
def k_negative_indices_wrap(out):
    i = xpu.grid(1)
    out[i - 32] = i  # -32 .. -1: Numba's (and NumPy's) wrap-around


@pytest.mark.slow
def test_a_store_past_the_end_without_debug_is_an_index_error_and_nothing_else_is_written(rng):
    """The missing ``if i < n`` guard: 128 threads for 100 elements. A release build
    raises instead of writing past the array (which overwrote other memory and could
    end the process: 'corrupted size vs. prev_size')."""
    buf = np.full(120, -7.0)
    out = buf[8:108]  # 100 elements with sentinels on both sides
    x = rng.standard_normal(128)
    with pytest.raises(NumquadIndexError) as e:
        k_unguarded[4, 32](x, out)
    msg = one_line(e)
    line = line_of(k_unguarded, "out[i] = ")
    assert f'File "{THIS}", line {line}' in msg and "k_unguarded stores out of bounds" in msg
    # (a lane loop's store keeps a flag, not the index: debug=True names it)
    assert "launch [4, 32]" in msg and "an index on axis 0 outside its size 100" in msg
    assert "debug=True names the index" in msg
    assert isinstance(e.value, IndexError)
    np.testing.assert_array_equal(buf[:8], -7.0)
    np.testing.assert_array_equal(buf[108:], -7.0)


@pytest.mark.slow
def test_2d_and_augmented_stores_are_checked_per_axis(rng):
    img = rng.standard_normal((40, 40))
    out = np.zeros((30, 40))
    # (a lane loop's contiguous store keeps a flag, others raise at once with the index)
    with pytest.raises(NumquadIndexError, match="on axis 0 (of an array of size|outside its size) 30"):
        k_unguarded_2d[(5, 5), (8, 8)](img, out)


@pytest.mark.slow
def test_shared_array_stores_are_checked():
    with pytest.raises(NumquadIndexError, match="on axis 0 outside its size 32"):
        k_shared_past_the_end[1, 64](np.zeros(64, np.int64))


@xpu.jit
def k_atomic_past_the_end(out):
    i = xpu.grid(1)
    xpu.atomic.add(out, i, 1)


def test_an_atomic_past_the_end_is_an_index_error():
    buf = np.zeros(120, np.int64)
    with pytest.raises(NumquadIndexError) as e:
        k_atomic_past_the_end[4, 32](buf[:100])
    # the atomic's own line (it named the kernel's first line before)
    line = line_of(k_atomic_past_the_end, "xpu.atomic.add(")
    assert (
        f'File "{THIS}", line {line}: an atomic of k_atomic_past_the_end is out of bounds in the launch [4, 32]'
        in one_line(e)
    )
    assert not buf[100:].any()


@xpu.jit
def k_unsigned_index(out, off):
    i = xpu.grid(1)
    out[np.uint64(i) + off] = 1


def test_an_unsigned_index_does_not_wrap():
    out = np.zeros(32, np.int64)
    k_unsigned_index[1, 32](out, np.uint64(0))
    assert out.sum() == 32
    out[:] = -1
    with pytest.raises(NumquadIndexError, match="on axis 0 (of an array of size|outside its size) 32"):
        k_unsigned_index[1, 32](out, np.uint64(2**64 - 40))  # -40 as int64 would wrap
    np.testing.assert_array_equal(out, -1)  # nothing written


def test_negative_indices_still_wrap_as_numba_indexes():
    out = np.full(64, -1, np.int64)
    k_negative_indices_wrap[1, 32](out)
    want = np.full(64, -1, np.int64)
    want[np.arange(32) - 32] = np.arange(32)
    np.testing.assert_array_equal(out, want)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SIGABRT semantics")
def test_far_out_of_bounds_read_in_an_njit_helper_raises_and_a_crash_prints_a_python_stack(tmp_path):
    # a kernel's loads and its device functions' are checked in release builds
    # (tests/test_load_bounds.py), a plain @numba.njit function's too (it faulted
    # before: Numba's own code); native code that dies all the same (here libc's
    # abort) prints the Python stack of the launch
    script = tmp_path / "oob.py"
    script.write_text(
        textwrap.dedent("""
        import ctypes
        import faulthandler
        import numba
        import numpy as np
        from numquad import xpu

        _abort = ctypes.CDLL(None).abort
        _abort.restype, _abort.argtypes = None, []

        @numba.njit
        def far(a, i):
            if a[i] > 1.0:
                _abort()
            return a[i + (1 << 40)]

        @xpu.jit
        def k_far(a):
            i = xpu.grid(1)
            a[i] = far(a, i)

        print("enabled before:", faulthandler.is_enabled(), flush=True)
        try:
            k_far[1, 32](np.zeros(32))
        except IndexError as e:
            print(type(e).__name__, e, flush=True)
        a = np.zeros(32)
        a[3] = 2.0
        k_far[1, 32](a)
        print("not reached", flush=True)
    """)
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=child_env())
    assert "enabled before: False" in r.stdout and "not reached" not in r.stdout
    assert f'NumquadIndexError File "{script}", line 20: far, a device function called by k_far' in r.stdout, r.stdout
    assert r.returncode != 0
    assert "Fatal Python error: Aborted" in r.stderr, r.stderr[-2000:]
    assert f'File "{script}", line 29' in r.stderr, r.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
def test_an_njit_helper_s_accesses_are_checked_on_every_target(target):
    """A plain ``@numba.njit`` function a kernel calls is a device function, as
    numba.cuda compiles it: its loads and stores past the array raise (they wrote
    past the array silently, or faulted, on the CPU target and in the interpreter)."""
    import numba

    @numba.njit
    def put(a, j, v):
        a[j] = v

    @numba.njit
    def get(a, j):
        return a[j]

    def k_put(out, x):
        i = xpu.grid(1)
        put(out, i + 1000, Wave.prefixSum(x[i]))

    def k_get(out, x):
        i = xpu.grid(1)
        out[i] = get(x, i + 100_000_000)

    x = np.random.default_rng(3).integers(-9, 9, 64).astype(np.int32)
    for fn in (k_put, k_get):
        k = xpu.jit(fn, debug=target == "cpu-debug")
        launch = (k.python if target == "python" else k.cpu)[1, 64]
        out = np.full(64, -7, np.int32)
        with pytest.raises(IndexError):
            launch(out, x)

    # in bounds, the same helpers give NumPy's values
    def k_both(out, x):
        i = xpu.grid(1)
        put(out, i, get(x, i) + Wave.prefixSum(x[i]))

    k = xpu.jit(k_both, debug=target == "cpu-debug")
    out = np.full(64, -7, np.int32)
    (k.python if target == "python" else k.cpu)[1, 64](out, x)
    w = x.reshape(2, 32)
    np.testing.assert_array_equal(out, (x + (np.cumsum(w, axis=1) - w).ravel()).astype(np.int32))


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_an_njit_helper_with_an_explicit_signature_is_refused_as_numba_cuda_refuses_it(target):
    import numba

    @numba.njit("int64(int64, int64)")
    def add(a, b):
        return a + b

    def k_add(ary):
        i = xpu.grid(1)
        ary[i] = add(ary[i], 1)

    k = xpu.jit(k_add)
    ary = np.random.default_rng(8).integers(0, 50, 32)
    before = ary.copy()
    with pytest.raises(SyntaxError) as e:  # a NumquadCompileError
        getattr(k, target)[1, 32](ary)
    msg = one_line(e)
    assert f"line {line_of(k_add, 'add(ary[i], 1)')}" in msg and "`add`" in msg, msg
    assert "explicit signature" in msg and "using cpu function on device" in msg, msg
    np.testing.assert_array_equal(ary, before)


# -- 7. fork ------------------------------------------------------------------------------


@xpu.jit
def k_big(a):
    i = xpu.grid(1)
    if i < a.size:
        a[i] = i + Wave.laneId()


def _fork_child(q):
    try:
        a = np.zeros(1 << 17, np.int64)
        k_big[(1 << 17) // 256, 256](a)
        from numquad.cpu import launch

        launch.run_grid(
            k_big._target("cpu").compile(_BIG_TYPES, False).block, (a,), (512, 1, 1), (256, 1, 1), threads=2
        )
        q.put(int(a.sum()))
    except BaseException as e:  # noqa: BLE001
        q.put(repr(e))


_BIG_TYPES = None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_fork_after_a_large_launch_does_not_hang():
    global _BIG_TYPES
    import numba
    from numquad.cpu import launch

    a = np.zeros(1 << 17, np.int64)
    k_big[(1 << 17) // 256, 256](a)  # 131072 threads: the worker pool
    _BIG_TYPES = (numba.typeof(a),)
    launch.run_grid(
        k_big._target("cpu").compile(_BIG_TYPES, False).block, (a,), (512, 1, 1), (256, 1, 1), threads=2
    )  # the pool even on one core
    assert launch._pool is not None
    want = int(a.sum())
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_fork_child, args=(q,))
    p.start()
    p.join(timeout=120)
    if p.is_alive():
        p.kill()
        p.join()
        pytest.fail("the forked child hung on the parent's worker pool")
    assert p.exitcode == 0
    assert q.get(timeout=10) == want


# -- 8. pickling --------------------------------------------------------------------------


def _run_k_two(k, n):
    a, b = np.zeros(n), np.arange(n, dtype=np.float64)
    k[(n + 31) // 32, 32](a, b)
    return a


def test_module_level_dispatchers_pickle_by_reference():
    for obj in (k_two, add, lam_twice):
        assert pickle.loads(pickle.dumps(obj)) is obj
    assert pickle.loads(pickle.dumps(k_two.cpu))._d is k_two
    launcher = pickle.loads(pickle.dumps(k_two[1, 32]))
    a = np.zeros(32)
    launcher(a, np.ones(32))
    assert (a == 2).all()


@pytest.mark.slow
def test_kernel_runs_in_a_spawned_process():
    want = _run_k_two(k_two, 64)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(_run_k_two, (k_two, 64)).get(timeout=300)
    np.testing.assert_array_equal(got, want)


@pytest.mark.slow
def test_a_scripts_kernel_pickles_by_value(tmp_path):
    """A kernel defined in a script (``__main__``) reaches an interpreter that never
    ran the script, as a dask or joblib worker is."""
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent("""
        import pickle, sys
        from numquad import xpu, Wave

        @xpu.jit
        def k_main(a):
            i = xpu.grid(1)
            if i < a.size:
                a[i] = 7 + Wave.laneId()

        sys.stdout.buffer.write(pickle.dumps(k_main))
    """)
    )
    made = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=300, env=child_env())
    assert made.returncode == 0, made.stderr.decode()[-3000:]
    code = (
        "import pickle, sys, numpy as np; k = pickle.loads(sys.stdin.buffer.read()); "
        "a = np.zeros(32); k[1, 32](a); print(int(a.sum()))"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        input=made.stdout,
        capture_output=True,
        timeout=300,
        cwd=tmp_path.parent,
        env=child_env(),
    )
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    assert int(r.stdout) == 7 * 32 + 31 * 32 // 2


def _make_closures(c):
    @xpu.jit
    def k_closure(a, b):
        i = xpu.grid(1)
        if i < a.size:
            a[i] = b[i] * c + Wave.prefixSum(b[i])

    @xpu.jit
    def lane_closure(x):
        return x * c + Quad.swapVertical(x)

    return k_closure, lane_closure


@pytest.mark.slow
def test_closures_pickle_by_value_and_run_in_a_fresh_interpreter(tmp_path):
    k, f = _make_closures(3.0)
    assert pickle.loads(pickle.dumps(k)) is k  # the same process: the same object
    b = np.arange(64, dtype=np.float64)
    want_k = _run_k_two(k, 64)
    want_f = f(b)
    blob = tmp_path / "closures.pkl"
    blob.write_bytes(pickle.dumps((k, f, b)))
    code = textwrap.dedent(f"""
        import pickle, sys
        import numpy as np
        k, f, b = pickle.loads(open({str(blob)!r}, "rb").read())
        a = np.zeros(64)
        k[2, 32](a, b)
        sys.stdout.buffer.write(pickle.dumps((a, f(b), repr(k), repr(f))))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300, cwd=tmp_path, env=child_env())
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    a, fb, rk, rf = pickle.loads(r.stdout)
    np.testing.assert_array_equal(a, want_k)
    np.testing.assert_array_equal(fb, want_f)
    assert "kernel k_closure" in rk and "lane function lane_closure" in rf


@pytest.mark.slow
def test_cloudpickle_as_dask_distributed_and_joblib_use_it(tmp_path):
    cloudpickle = pytest.importorskip("cloudpickle")
    k, _ = _make_closures(2.0)
    want = _run_k_two(k, 32)
    code = textwrap.dedent("""
        import pickle, sys
        import numpy as np
        k = pickle.loads(sys.stdin.buffer.read())
        a = np.zeros(32)
        k[1, 32](a, np.arange(32, dtype=np.float64))
        sys.stdout.buffer.write(pickle.dumps(a))
    """)
    r = subprocess.run(
        [sys.executable, "-c", code],
        input=cloudpickle.dumps(k),
        capture_output=True,
        timeout=300,
        cwd=tmp_path,
        env=child_env(),
    )
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    np.testing.assert_array_equal(pickle.loads(r.stdout), want)


# -- 9. compiles from threads ----------------------------------------------------------------


def _make_kernel(c):
    @xpu.jit
    def k_threaded(a, out):
        i = xpu.grid(1)
        if i < a.size:
            out[i] = a[i] * c + Wave.prefixSum(a[i]) + Quad.swapDiagonal(a[i])

    return k_threaded


def _expected(a, c):
    x = a.reshape(-1, 32)
    pre = np.cumsum(x, axis=1) - x
    swap = x.reshape(-1, 8, 4)[:, :, ::-1].reshape(-1, 32)
    return (x * c + pre + swap).reshape(-1)


@pytest.mark.slow
def test_threads_compiling_different_and_same_kernels_get_right_results():
    kernels = [_make_kernel(float(c)) for c in range(8)]
    shared = _make_kernel(10.0)
    calls = []
    target = shared._target("cpu")
    plain = target._compile

    def counted(*args):
        calls.append(args)
        return plain(*args)

    target._compile = counted
    a = np.arange(64, dtype=np.float64)
    results, errors = {}, []
    start = threading.Barrier(16)

    def work(key, k):
        try:
            out = np.zeros(64)
            start.wait()
            k[2, 32](a, out)
            results[key] = out
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(c, k)) for c, k in enumerate(kernels)]
    threads += [threading.Thread(target=work, args=(("same", n), shared)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    assert len(calls) == 1  # one compile of the shared kernel
    for c in range(8):
        np.testing.assert_array_equal(results[c], _expected(a, float(c)))
    for n in range(8):
        np.testing.assert_array_equal(results[("same", n)], _expected(a, 10.0))


@pytest.mark.slow
def test_a_compile_in_progress_delays_but_never_blocks_other_kernels():
    """Kernel A's compile is held in numquad's compile while kernel B asks for its
    own. numquad's compiles hold Numba's global compiler lock throughout (their
    rewrites are process-wide while they run: numquad/cpu/dispatch.py), so B waits;
    when A's compile ends, both run and give NumPy's values."""
    ka, kb = _make_kernel(1.0), _make_kernel(2.0)
    ta = ka._target("cpu")
    plain = ta._compile
    entered, release, b_started = threading.Event(), threading.Event(), threading.Event()

    def held(*args):
        entered.set()
        release.wait(timeout=600)
        return plain(*args)

    ta._compile = held
    a = np.random.default_rng(5).integers(-100, 100, 32).astype(np.float64)
    out_a, out_b, errors = np.full(32, np.nan), np.full(32, np.nan), []

    def run(k, out, started=None):
        if started is not None:
            started.set()
        try:
            k[1, 32](a, out)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    t_a = threading.Thread(target=run, args=(ka, out_a))
    t_a.start()
    t_b = threading.Thread(target=run, args=(kb, out_b, b_started))
    try:
        assert entered.wait(timeout=600)
        t_b.start()
        assert b_started.wait(timeout=600)
        time.sleep(0.5)  # B is in its launch, waiting for the compiler
    finally:
        release.set()
        t_a.join(timeout=600)
        if t_b.ident is not None:
            t_b.join(timeout=600)
    assert not t_a.is_alive() and not t_b.is_alive(), "a compile never ended"
    assert not errors, errors
    np.testing.assert_array_equal(out_a, _expected(a, 1.0))
    np.testing.assert_array_equal(out_b, _expected(a, 2.0))


@xpu.jit("int64(int64)", device=True)
def _twice(v):
    return v * 2


@xpu.jit
def _k_calls_twice(a, out):
    i = xpu.grid(1)
    if i < a.size:
        out[i] = _twice(a[i]) + Wave.reduceSum(a[i])


@pytest.mark.slow
def test_a_device_functions_first_compile_beside_a_kernel_that_calls_it_never_deadlocks():
    """A probe of the locks (thirty-seventh session): a kernel's compile holds Numba's
    compiler lock and then asks the device function it calls for its scalar function
    (the device function's lock); a thread making that scalar function took the
    device function's lock and then Numba's: each waited for the other for good. Both
    now take Numba's lock first."""
    target = _twice._target("cpu")
    plain = target.frontend
    inside, go = threading.Event(), threading.Event()

    def slow_frontend(*args, **kwargs):
        if threading.current_thread().name == "scalar-first":
            inside.set()  # the device function's lock is held here
            go.wait(timeout=60)
        return plain(*args, **kwargs)

    target.frontend = slow_frontend
    a = np.random.default_rng(6).integers(-100, 100, 32).astype(np.int64)
    out, errors = np.full(32, -1, np.int64), []

    def scalar_first():
        try:
            target.scalar_function()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    def launch():
        try:
            _k_calls_twice[1, 32](a, out)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    # (daemons: a deadlock must fail the test, not keep the interpreter from exiting)
    t1 = threading.Thread(target=scalar_first, name="scalar-first", daemon=True)
    t2 = threading.Thread(target=launch, daemon=True)
    try:
        t1.start()
        assert inside.wait(timeout=600)
        t2.start()
        time.sleep(1.0)  # the kernel's compile is under way, or waiting for Numba's lock
    finally:
        go.set()
        t1.join(timeout=240)
        t2.join(timeout=240)
        target.frontend = plain
    assert not t1.is_alive() and not t2.is_alive(), "deadlock: the two compiles wait for each other"
    assert not errors, errors
    np.testing.assert_array_equal(out, a * 2 + a.sum())


@pytest.mark.slow
def test_lane_functions_called_from_threads():
    f = xpu.jit(lambda x, y: x * y + Wave.reduceSum(x))
    x = np.arange(96, dtype=np.float64)
    want = f(x, 2.0)
    out, errors = [], []

    def work():
        try:
            out.append(f(x, 2.0))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    for r in out:
        np.testing.assert_array_equal(r, want)


def test_a_failed_compile_is_reported_to_every_thread():
    k = xpu.jit(k_bad_store.py_func)
    errors = []

    def work():
        try:
            k.cpu[1, 32](np.zeros(32))
        except NumquadTypeError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert len(errors) == 4 and len(set(errors)) == 1


# -- 10. what a compile keeps ------------------------------------------------------------------


@pytest.mark.slow
def test_dispatchers_are_not_kept_alive_by_numquad():
    f = xpu.jit(lambda x: x + Quad.swapHorizontal(x))
    f(np.zeros(8))
    k = _make_kernel(1.0)
    k[1, 32](np.zeros(32), np.zeros(32))
    refs = [weakref.ref(f), weakref.ref(k)]
    del f, k
    gc.collect()
    assert [r() for r in refs] == [None, None]


@pytest.mark.slow
def test_inspection_works_after_the_compile_state_is_dropped():
    import numba

    t = (numba.float64[::1], numba.float64[::1])
    k = _make_kernel(2.0)
    assert "_nq_block_" in k.inspect_cpu_source(t)
    assert "define" in k.inspect_llvm(t)
    assert k.inspect_asm(t)
    out = np.zeros(32)
    k[1, 32](np.arange(32.0), out)
    np.testing.assert_array_equal(out, _expected(np.arange(32.0), 2.0))


@pytest.mark.parametrize(
    "bad, says",
    [
        ("a string", "has type str, which the CPU target cannot pass"),
        ([1.0, 2.0], "has type list, which the CPU target cannot pass"),
        (
            np.zeros(32, object),
            "is an array of pyobject; the CPU target takes bool, integer, float, complex, datetime64",
        ),
        (np.zeros(32, "V8"), "is an array of dtype |V8, which Numba cannot type; the CPU target takes bool"),
    ],
)
def test_a_launch_argument_of_a_wrong_type_names_the_launch_line(bad, says):
    with pytest.raises(NumquadTypeError) as e:
        k_two.cpu[1, 32](np.zeros(32), bad)  # the launch line
    msg = one_line(e)
    launch = line_of(test_a_launch_argument_of_a_wrong_type_names_the_launch_line, "# the launch line")
    assert f'File "{THIS}", line {launch}' in msg
    assert f"launch of k_two (defined at line {k_two.firstlineno})" in msg
    assert "argument 1 (b) of k_two" in msg and says in msg


# -- non-native byte order --------------------------------------------------------------


def test_big_endian_arrays(rng):
    """A lane function reads a big-endian array as NumPy's ufuncs do (the same values);
    a kernel, which may write its arrays in place, refuses one in one line."""
    x = rng.standard_normal(37)
    big = x.astype(">f8")
    np.testing.assert_array_equal(add(big, 2.5), add(x, 2.5))
    assert add(big, 2.5).dtype == np.float64
    with pytest.raises(NumquadTypeError) as e:
        k_two.cpu[1, 64](big, x)  # the launch
    msg = one_line(e)
    assert "argument 0 (a) of k_two is an array of dtype >f8 (non-native byte order)" in msg
    assert "newbyteorder('=')" in msg


# -- one wording for a selector of the wrong type, on both targets ------------------------


@xpu.jit
def k_float_selector(a, b):
    i = xpu.grid(1)
    a[i] = Wave.shuffle(b[i], 2.5)


def test_a_float_selector_gets_the_same_message_on_both_targets():
    want = (
        "Wave.shuffle(value, srcLane): argument 'srcLane' got float64; it takes an "
        "integer scalar (int8..int64, uint8..uint64), constant or runtime"
    )
    msgs = []
    with pytest.raises(NumquadTypeError) as e:
        k_float_selector.cpu[1, 32](np.zeros(32), np.zeros(32))
    msgs.append(one_line(e))
    if importlib.util.find_spec("numba_cuda") is not None:
        with pytest.raises(NumquadTypeError) as e:
            k_float_selector.inspect_ptx("void(float64[:], float64[:])")
        msgs.append(one_line(e))
    line = line_of(k_float_selector, "Wave.shuffle(")
    for msg in msgs:
        assert want in msg and f"line {line}" in msg


# -- signature strings: every inspect method reads them, or says why not ---------------


@pytest.mark.parametrize("method", ["inspect_cpu_source", "inspect_llvm", "inspect_asm", "inspect_ptx"])
def test_every_inspect_method_reads_a_signature_string(method):
    if method == "inspect_ptx" and importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed")
    import numba

    k = xpu.jit(_k_add_one)
    by_types = getattr(k, method)((numba.float32[:], numba.float32[:]))
    by_string = getattr(k, method)("void(float32[:], float32[:])")
    if method == "inspect_asm":  # (LLVM's register choice varies from one call to the next)
        assert "_k_add_one" in by_string and "_k_add_one" in by_types
    else:
        assert by_string == by_types
    with pytest.raises(NumquadTypeError) as e:
        getattr(k, method)("void(float32[:], no_such_type)")
    msg = one_line(e)
    assert f"_k_add_one.{method}: cannot read the signature 'void(float32[:], no_such_type)'" in msg
    assert "it takes argument types" in msg


def _k_add_one(a, b):
    i = xpu.grid(1)
    b[i] = a[i] + Wave.shuffleXor(a[i], 1)


@pytest.mark.slow
def test_the_largest_legal_grid_starts_and_stops_on_ctrl_c(tmp_path):
    """A day-one probe (twenty-first session): ``k[(2**31 - 1, 65535, 65535), 32]``, a
    grid CUDA accepts, built a list of 2**46 chunk bounds before any block ran: a bare
    MemoryError, or the machine's memory. The launch now starts at once and stops at a
    Ctrl-C like any long launch (its first blocks have run)."""
    script = tmp_path / "huge_grid.py"
    script.write_text(
        textwrap.dedent("""
        import os, resource, signal, threading
        import numpy as np
        resource.setrlimit(resource.RLIMIT_AS, (6 * 2**30, 6 * 2**30))
        # a child of a pytest-xdist worker inherits SIGINT ignored (the launch then ran
        # its 2**46 blocks for ever: a loaded full run timed out here twice)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from numquad import xpu

        @xpu.jit
        def k(dst):
            i = xpu.grid(1)
            if i < dst.size:
                dst[i] = 1

        dst = np.zeros(64, np.int32)
        k.cpu[1, 64](np.zeros(64, np.int32))           # compiled before the clock starts
        threading.Timer(3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            k.cpu[(2**31 - 1, 65535, 65535), 32](dst)
        except KeyboardInterrupt:
            print("interrupted", int(dst.sum()), flush=True)
    """)
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=child_env())
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "interrupted 64", r.stdout


# -- a launch on the calling thread, stopped by a Ctrl-C between blocks ------------------


def test_a_small_launch_of_slow_blocks_without_a_watcher_runs_in_timed_pieces(monkeypatch):
    # a probe (twenty-third session): 16 blocks of 256 threads with long loops ran as
    # one native call, and a Ctrl-C 2 s in stopped the launch 17 s later, at its end.
    # The block function now tests the stop flag before each block (the test below);
    # where no watcher thread can set it (cpu/interrupt.py UNWIRED), block 0 runs
    # alone, timed, and the rest in pieces of about 50 ms, between which Python sees
    # the signal.
    from numquad.cpu import interrupt, launch

    monkeypatch.setattr(interrupt, "enter_main", lambda flag: interrupt.UNWIRED)
    calls = []

    def slow(b0, b1, gx, gy, gz, bx, by, bz, stop_at):
        calls.append((b0, b1))
        time.sleep(0.06 * (b1 - b0))  # a block takes longer than a piece's aim

    launch.run_grid(slow, (), (6, 1, 1), (256, 1, 1))
    assert calls == [(k, k + 1) for k in range(6)]

    calls.clear()

    def fast(b0, b1, gx, gy, gz, bx, by, bz, stop_at):
        calls.append((b0, b1))

    launch.run_grid(fast, (), (200, 1, 1), (32, 1, 1))
    # every block once, in order (fast blocks: a few calls, not 200)
    assert calls[0] == (0, 1) and calls[-1][1] == 200
    assert all(a[1] == b[0] for a, b in zip(calls, calls[1:]))
    assert len(calls) < 200


def test_a_small_launch_is_one_native_call(monkeypatch):
    from numquad.cpu import launch

    calls = []

    def fast(b0, b1, gx, gy, gz, bx, by, bz, stop_at):
        calls.append((b0, b1))

    launch.run_grid(fast, (), (200, 1, 1), (32, 1, 1))
    assert calls == [(0, 200)]


@pytest.mark.slow
def test_a_launch_of_slow_blocks_stops_between_blocks_on_ctrl_c(tmp_path):
    """16 blocks whose loops take a while each, one native call: a Ctrl-C stops the
    launch before its last blocks run (each block marks itself done at its end)."""
    script = tmp_path / "slow_blocks.py"
    script.write_text(
        textwrap.dedent("""
        import os, signal, threading, time
        import numpy as np
        signal.signal(signal.SIGINT, signal.default_int_handler)   # (see above)
        from numba import cuda
        from numquad import xpu

        @xpu.jit
        def k(n, acc, done):
            t = cuda.threadIdx.x
            s = 0.0
            for j in range(n):
                s = s * 0.999 + j
            acc[cuda.blockIdx.x, t] = s
            cuda.syncthreads()
            if t == 0:
                done[cuda.blockIdx.x] = 1

        acc, done = np.zeros((16, 256)), np.zeros(16, np.int32)
        k.cpu[1, 256](1, acc, done)                      # compiled
        n = 1000
        while True:                                      # a block of about 0.3 s
            t0 = time.perf_counter()
            k.cpu[1, 256](n, acc, done)
            if time.perf_counter() - t0 > 0.3:
                break
            n *= 2
        done[:] = 0
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            k.cpu[16, 256](n, acc, done)
            print("not interrupted", flush=True)
        except KeyboardInterrupt:
            print("interrupted", int(done.sum()), flush=True)
    """)
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=child_env())
    assert r.returncode == 0, r.stderr[-2000:]
    words = r.stdout.split()
    assert words[0] == "interrupted", r.stdout
    assert int(words[1]) < 16, r.stdout  # not every block ran


@pytest.mark.slow
@pytest.mark.parametrize("grid", [1, 4096])
def test_a_kernel_that_never_ends_stops_on_ctrl_c(tmp_path, grid):
    """A lane that spins on a lock a lane of its own wave holds never ends on the CPU
    (docs/semantics.md, "Memory between threads"), and its native loop did not see a
    Ctrl-C: the interpreter hung (and on the worker pool, grid 4096, could not exit).
    Every while loop of the kernel now tests the launch's stop flag."""
    script = tmp_path / "spin.py"
    script.write_text(
        textwrap.dedent(f"""
        import os, signal, threading
        import numpy as np
        signal.signal(signal.SIGINT, signal.default_int_handler)   # (see above)
        from numba import cuda
        from numquad import xpu

        @xpu.jit
        def spin(lock, counter):
            while cuda.atomic.compare_and_swap(lock, 0, 1) != 0:
                pass
            counter[0] += 1
            cuda.threadfence()
            cuda.atomic.exch(lock, 0, 0)

        lock, counter = np.zeros(1, np.int32), np.zeros(1, np.int32)
        spin.cpu[1, 1](lock, counter)                   # compiled; one thread ends
        lock[0] = 0
        threading.Timer(3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            spin.cpu[{grid}, 32](lock, counter)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """)
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=child_env())
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "interrupted", r.stdout
