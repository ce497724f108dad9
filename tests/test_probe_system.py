"""Day-one and hostile probes of what surrounds the kernels (lane calls on arrays,
the disk cache across processes, launches and arguments), each a regression test
of a defect found that way. Expected values come from NumPy, never from the code
under test."""

import pytest
import json
import os
import subprocess
import sys
import textwrap

import numpy as np

# ---------------------------------------------------------------------------
# cache=True across processes: a module attribute the code reads is in the key
# ---------------------------------------------------------------------------

_CFG = "K = {k}\nJ = {j}\n"
_DEEP = """
import numba

@numba.njit
def g(x):
    return x * {d}
"""
_HELPERS = """
import numba
import cfg
import deep
from numquad import xpu

@xpu.jit
def lane(x):
    return x * cfg.J            # a plain lane function reading another module's attribute

@numba.njit
def plain(x):
    return deep.g(x) + 1.0      # an njit function calling another module's function
"""
_MAIN = """
import json
import numpy as np
import cfg
import helpers
from numquad import xpu, Wave

@xpu.jit(cache=True)
def kern(src, dst):
    i = xpu.grid(1)
    v = Wave.prefixSum(src[i])
    dst[i] = helpers.lane(v) + helpers.plain(v) + cfg.K

src = np.random.default_rng(5).integers(-50, 50, 96).astype(np.float64)  # exact sums
dst = np.full(96, np.nan)
kern[3, 32](src, dst)
hits = sum(sum(c.block._cache_hits.values()) for c in kern._target("cpu")._cache.values())
print(json.dumps({"hits": hits, "src": src.tolist(), "dst": dst.tolist()}))
"""


def _cached_run(tmp_path, k, j, d):
    (tmp_path / "cfg.py").write_text(_CFG.format(k=k, j=j))
    (tmp_path / "deep.py").write_text(_DEEP.format(d=d))
    (tmp_path / "helpers.py").write_text(_HELPERS)
    (tmp_path / "main.py").write_text(_MAIN)
    env = dict(
        os.environ,
        NUMQUAD_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=os.pathsep.join([str(tmp_path)] + sys.path),
    )
    r = subprocess.run(
        [sys.executable, str(tmp_path / "main.py")], capture_output=True, text=True, env=env, timeout=600
    )
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout.strip().splitlines()[-1])
    src, dst = np.array(res["src"]), np.array(res["dst"])
    v = np.concatenate([np.concatenate([[0.0], np.cumsum(w)[:-1]]) for w in src.reshape(3, 32)])
    np.testing.assert_array_equal(dst, v * j + (v * d + 1.0) + k)
    return res["hits"]


@pytest.mark.slow
def test_a_changed_module_attribute_is_a_new_cache_entry(tmp_path):
    # found by a probe: the key held a module global by its name only, so after
    # `cfg.K = 3` became `cfg.K = 5` (or a callee's module changed) the second
    # process loaded the first one's machine code and returned the old values
    assert _cached_run(tmp_path, 3, 2, 7) == 0
    assert _cached_run(tmp_path, 3, 2, 7) == 1  # unchanged: loaded from disk
    assert _cached_run(tmp_path, 5, 2, 7) == 0  # the kernel's cfg.K
    assert _cached_run(tmp_path, 5, 4, 7) == 0  # a lane function's cfg.J
    assert _cached_run(tmp_path, 5, 4, 11) == 0  # deep.g called from an njit function


_SIG_HELPERS = """
import numquad
from numba import cuda

SIG = "{sig}"


@cuda.jit(SIG, device=True)
def h(x):
    return x * 2.75
"""
_SIG_MAIN = """
import json
import numpy as np
import numquad
from helpers import h
from numquad import xpu


@xpu.jit(cache=True)
def kern(a):
    i = xpu.grid(1)
    a[i] = h(a[i] + 0.5)


a = np.arange(64, dtype=np.float64)
kern[2, 32](a)
print(json.dumps(a.tolist()))
"""


@pytest.mark.slow
def test_a_device_functions_declared_signature_is_in_the_cache_key(tmp_path):
    # found by a probe: `@cuda.jit(SIG, device=True)` with SIG a global of its module;
    # after SIG went from "float64(float64)" to "int64(int64)" the second process
    # loaded the float64 machine code (the key held the function's source, which
    # names SIG but not its value)
    env = dict(
        os.environ,
        NUMQUAD_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=os.pathsep.join([str(tmp_path)] + sys.path),
    )
    k = np.arange(64.0)
    for sig, expect in (("float64(float64)", (k + 0.5) * 2.75), ("int64(int64)", np.trunc(k * 2.75))):
        (tmp_path / "helpers.py").write_text(_SIG_HELPERS.format(sig=sig))
        (tmp_path / "main.py").write_text(_SIG_MAIN)
        r = subprocess.run(
            [sys.executable, str(tmp_path / "main.py")], capture_output=True, text=True, env=env, timeout=600
        )
        assert r.returncode == 0, r.stderr
        np.testing.assert_array_equal(np.array(json.loads(r.stdout.strip().splitlines()[-1])), expect)


def test_module_fingerprints_read_the_attributes_the_code_reads():
    import types
    from numquad.cpu import diskcache

    m = types.ModuleType("user_cfg")
    m.TPB, m.sub = 3, types.ModuleType("user_cfg.sub")
    m.sub.N = 1
    ns = {"cfg": m, "np": np, "__name__": __name__}  # (a module Numba can import again)

    def key(src):
        return diskcache.block_key(src, ns, (), False, False, False)

    k1, s1 = key("x = cfg.TPB + np.float32(1)"), key("x = cfg.sub.N")
    m.TPB, m.sub.N = 5, 2
    assert None not in (k1, s1)
    assert key("x = cfg.TPB + np.float32(1)") != k1 and key("x = cfg.sub.N") != s1
    m.Obj = object()
    assert key("x = cfg.Obj") is None  # an object: caching off, never stale


# ---------------------------------------------------------------------------
# a device function reached through a module attribute from a lane function
# ---------------------------------------------------------------------------

_MODFUNCS = """
from numba import cuda
from numquad import xpu


@xpu.jit
def triple(x):
    return x * 3


@cuda.jit(device=True)
def plus_five(x):
    return x + 5
"""


def _modfuncs(tmp_path, monkeypatch, name):
    import importlib

    (tmp_path / f"{name}.py").write_text(_MODFUNCS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(name)


@pytest.mark.slow
def test_a_lane_function_calls_device_functions_through_a_module(tmp_path, monkeypatch):
    # found by a probe: `mod.triple(x)` in a plain lane function (one the CPU target
    # compiles as a scalar function) failed with "Unknown attribute 'triple' of type
    # Module" on the CPU and CUDA targets, and `mod.plus_five(x)` (a numba.cuda
    # device function) reached numba.cuda's driver (CudaSupportError); the kernel
    # itself calling mod.triple worked
    import numba
    from numquad import Wave, xpu

    mod = _modfuncs(tmp_path, monkeypatch, "probe_modfuncs_a")

    @xpu.jit
    def lane(x):
        return mod.triple(x) + mod.plus_five(x)

    @xpu.jit
    def kern(a, out):
        i = xpu.grid(1)
        if i < a.shape[0]:
            out[i] = lane(a[i]) + Wave.laneId()

    a = np.random.default_rng(3).integers(-1000, 1000, 100).astype(np.int64)
    expect = a * 3 + (a + 5)
    np.testing.assert_array_equal(lane(a), expect)
    out = np.full(100, -7, np.int64)
    kern[4, 32](a, out)
    np.testing.assert_array_equal(out, expect + np.arange(100) % 32)
    out[:] = -7
    kern.python[4, 32](a, out)
    np.testing.assert_array_equal(out, expect + np.arange(100) % 32)
    ptx = kern.inspect_ptx((numba.int64[::1], numba.int64[::1]))  # no GPU needed
    assert ".entry" in ptx


def test_a_kernel_calls_an_xpu_function_through_a_module_on_cuda(tmp_path, monkeypatch):
    # the CUDA target typed `mod.triple` (an @xpu.jit function) as an unknown attribute
    import numba
    from numquad import xpu

    mod = _modfuncs(tmp_path, monkeypatch, "probe_modfuncs_b")

    @xpu.jit
    def kern(a):
        i = xpu.grid(1)
        a[i] = mod.triple(a[i]) + mod.plus_five(a[i])

    assert ".entry" in kern.inspect_ptx((numba.int64[::1],))


# ---------------------------------------------------------------------------
# lane functions with cross-lane ops called with defaults and keywords
# ---------------------------------------------------------------------------


def _exclusive_scan(a):
    return np.concatenate([np.concatenate([[0], np.cumsum(w)[:-1]]) for w in a.reshape(-1, 32)])


@pytest.mark.slow
def test_an_inlined_lane_function_takes_defaults_and_keywords():
    # found by a probe: `h(a[i])` of `def h(x, m=3, off=0.5)` holding Wave.prefixSum
    # was refused on the CPU ("h() takes 3 positional argument(s); got 1") and
    # keywords on the CPU and python targets, though Python, numba.cuda and a plain
    # lane function take them
    import pytest
    from numquad import Wave, xpu
    from numquad.errors import NumquadCompileError

    @xpu.jit
    def h(x, m=3, off=0.5):
        return Wave.prefixSum(x) * m + off

    @xpu.jit
    def kern(a, out):
        i = xpu.grid(1)
        out[i, 0] = h(a[i])
        out[i, 1] = h(a[i], 5)
        out[i, 2] = h(a[i], off=2.0)
        out[i, 3] = h(m=2, x=a[i])

    a = np.random.default_rng(4).integers(-100, 100, 64).astype(np.float64)
    ps = _exclusive_scan(a)
    expect = np.stack([ps * 3 + 0.5, ps * 5 + 0.5, ps * 3 + 2.0, ps * 2 + 0.5], axis=1)
    for target in (kern.cpu, kern.python):
        out = np.full((64, 4), np.nan)
        target[2, 32](a, out)
        np.testing.assert_array_equal(out, expect)

    @xpu.jit
    def bad(a):
        i = xpu.grid(1)
        a[i] = h(a[i], q=3)

    with pytest.raises(NumquadCompileError, match=r"h\(\) got an unexpected keyword argument 'q'"):
        bad[1, 32](a)


# ---------------------------------------------------------------------------
# a huge launch stops at Ctrl-C
# ---------------------------------------------------------------------------

_HUGE = """
import os, signal, sys, threading, time
import numpy as np
from numquad import xpu, Wave

@xpu.jit
def k(a):
    i = xpu.grid(1)
    if i < a.shape[0]:
        a[i] = Wave.prefixSum(a[i]) + 1.0

signal.signal(signal.SIGINT, signal.default_int_handler)   # even if the parent ignores it
a = np.zeros(64)
k[2, 32](a)                                            # compiled; and it runs
assert a.tolist() == [1.0] * 64, a
threading.Timer(2.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
t0 = time.time()
try:
    k[2**31 - 1, 1024](a)                              # hours of work
    print("FINISHED")
except KeyboardInterrupt:
    print("INTERRUPTED", time.time() - t0)
"""


@pytest.mark.slow
def test_a_huge_launch_stops_at_ctrl_c(tmp_path):
    # found by a probe: Ctrl-C during k[2**31 - 1, 1024] raised KeyboardInterrupt in
    # the caller but the worker threads ran their chunks (a quarter of the grid each)
    # to the end, so the process never exited; with one worker (NUMBA_NUM_THREADS=1)
    # the launch was one native call and Ctrl-C did nothing at all
    import pytest

    path = tmp_path / "huge.py"
    path.write_text(_HUGE)
    for threads in ("2", "1"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads, PYTHONPATH=os.pathsep.join(sys.path))
        try:
            r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=120)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the interrupted launch did not end (NUMBA_NUM_THREADS={threads})")
        assert r.returncode == 0, r.stderr
        assert "INTERRUPTED" in r.stdout, r.stdout
        assert float(r.stdout.split()[-1]) < 60  # the signal came at 2 s


# ---------------------------------------------------------------------------
# a Python int kernel argument outside int64/uint64
# ---------------------------------------------------------------------------


@pytest.mark.slow
def test_a_python_int_no_64_bit_integer_holds_is_refused_on_every_target():
    # found by a probe: k[1, 32](a, 2**64) ran on the python target (the oracle) and
    # stored 0, and -2**63 - 1 stored 2**63 - 1, where the CPU target refused both
    # with "has type int, which the CPU target cannot pass; it takes ... int ... scalars"
    import pytest
    from numquad import xpu
    from numquad.errors import NumquadTypeError

    @xpu.jit
    def k(a, s):
        i = xpu.grid(1)
        if i < a.shape[0]:
            a[i] = s

    for target in (k.cpu, k.python):
        for bad in (2**64, -(2**63) - 1, 10**30):
            a = np.full(4, 7, np.uint64)
            with pytest.raises(
                NumquadTypeError,
                match=r"argument 1 \(s\) of k is the Python int "
                rf"{bad}, which fits neither int64 nor uint64",
            ) as e:
                target[1, 32](a, bad)
            assert __file__ in str(e.value)
            assert (a == 7).all()
        for good, dt in ((2**64 - 1, np.uint64), (-(2**63), np.int64), (2**63, np.uint64)):
            a = np.zeros(4, dt)
            target[1, 32](a, good)
            assert a.tolist() == [good] * 4


# ---------------------------------------------------------------------------
# compile errors: one line at the user's line, on every compiled target
# ---------------------------------------------------------------------------


def test_a_cuda_typing_error_is_one_line_at_the_users_file():
    # found by a probe: the CPU target reported `a[i].nosuch` in one line, the CUDA
    # target (inspect_ptx, no GPU needed) in 20 lines of Numba's pipeline report, at
    # File "../../../tmp/x.py" (Numba's path relative to the working directory)
    import numba
    import pytest
    from numquad import xpu
    from numquad.errors import NumquadTypeError

    @xpu.jit
    def kern(a):
        i = xpu.grid(1)
        a[i] = a[i].nosuch

    @xpu.jit
    def kern2(a):
        i = xpu.grid(1)
        a[i] = "x" + 1

    for k, what in ((kern, "Unknown attribute 'nosuch' of type float64"), (kern2, "No implementation of function")):
        line = k.py_func.__code__.co_firstlineno + 3
        for run in (lambda k=k: k.inspect_ptx((numba.float64[::1],)), lambda k=k: k.cpu[1, 32](np.zeros(32))):
            with pytest.raises(NumquadTypeError) as e:
                run()
            text = str(e.value)
            assert len(text.splitlines()) == 1, text
            assert text.startswith(f'File "{__file__}", line {line}, in {k.__name__}: {what}'), text
            assert "Failed in" not in text and "During:" not in text


def test_a_with_statement_is_a_compile_error_at_its_line():
    # found by a probe: `with open(p) as f:` in a kernel raised Numba's bare
    # UnsupportedBytecodeError "... is not supported.. Raised from None" on the CPU
    # and CUDA targets, with no file or line
    import numba
    import pytest
    from numquad import xpu
    from numquad.errors import NumquadCompileError

    @xpu.jit
    def kern(a):
        i = xpu.grid(1)
        with open("/nonexistent") as f:
            a[i] = f.fileno()

    @xpu.jit
    def lane(x):
        with open("/nonexistent") as f:
            x = x + f.fileno()
        return x

    pattern = r"line {}: The 'with \(context manager\) as \(variable\):' construct is not supported \(in {}\)$"
    kline = kern.py_func.__code__.co_firstlineno + 3
    lline = lane.py_func.__code__.co_firstlineno + 2
    for run, line, name in (
        (lambda: kern.cpu[1, 32](np.zeros(32)), kline, "kern"),
        (lambda: kern.inspect_ptx((numba.float64[::1],)), kline, "kern"),
        (lambda: lane(np.zeros(32)), lline, "lane"),
    ):
        with pytest.raises(NumquadCompileError, match=pattern.format(line, name)) as e:
            run()
        assert __file__ in str(e.value)


# ---------------------------------------------------------------------------
# the launch's dynamic shared memory size is checked on every CPU launch
# ---------------------------------------------------------------------------


def test_a_bad_dynamic_shared_memory_size_is_refused_by_kernels_that_do_not_use_it():
    # found by a probe: k[2, 32, 0, -1], k[2, 32, 0, 1.5] and k[2, 32, 0, 2**40] ran
    # on the CPU target when the kernel has no shared.array(0, ...) (the python
    # target refused them), so a launch that worked on the CPU failed on the GPU
    import pytest
    from numquad import xpu
    from numquad.errors import NumquadLaunchError, NumquadTypeError

    @xpu.jit
    def k(a):
        i = xpu.grid(1)
        if i < a.shape[0]:
            a[i] = i

    for target in (k.cpu, k.python):
        for bad, exc, what in (
            (-1, NumquadTypeError, "must be an int >= 0; got -1"),
            (1.5, NumquadTypeError, "must be an int >= 0; got 1.5"),
            (2**40, NumquadLaunchError, "1099511627776 bytes of dynamic shared"),
        ):
            a = np.full(64, -5.0)
            with pytest.raises(exc, match=what) as e:
                target[2, 32, 0, bad](a)
            assert f'File "{__file__}"' in str(e.value) and "launch of k" in str(e.value)
            assert (a == -5.0).all()
        a = np.full(64, -5.0)
        target[2, 32, 0, 1024](a)
        np.testing.assert_array_equal(a, np.arange(64.0))


def test_try_except_is_a_compile_error_at_its_line_on_cuda():
    # found by a probe: a kernel with try/except (which the CPU target runs) died in
    # numba-cuda's lowering with "AttributeError: 'CUDACallConv' object has no
    # attribute 'set_try_status'", no file or line
    import numba
    import pytest
    from numquad import xpu
    from numquad.errors import NumquadCompileError

    @xpu.jit
    def kern(a):
        i = xpu.grid(1)
        try:
            a[i] = 1.0 / a[i]
        except ZeroDivisionError:
            a[i] = 0.0

    line = kern.py_func.__code__.co_firstlineno + 3
    with pytest.raises(
        NumquadCompileError,
        match=rf"line {line}: try/except is not supported by "
        rf"numba\.cuda .* \(in kern\)$",
    ) as e:
        kern.inspect_ptx((numba.float64[::1],))
    assert __file__ in str(e.value)


# ---------------------------------------------------------------------------
# a lane function without source (python -c, the interactive interpreter)
# ---------------------------------------------------------------------------


@pytest.mark.slow
def test_a_lane_function_without_source_is_not_called_a_kernel():
    # found by a probe: `python -c` with a lane function f(x, y) returning a value:
    # f(x, 1.0) said "f is a kernel: launch it as f[griddim, blockdim](...)", since
    # without source every function was taken for a kernel
    code = textwrap.dedent("""
        import numpy as np
        from numquad import xpu
        @xpu.jit
        def f(x, y):
            return x * y
        @xpu.jit
        def k(a):
            a[0] = 1
        print(f.is_kernel, k.is_kernel)
        for run in (lambda: f(np.zeros(3), 1.0), lambda: k[1, 1](np.zeros(3))):
            try:
                run()
            except TypeError as e:
                print(str(e).splitlines()[0])
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "False True"
    for line, name in zip(lines[1:], "fk"):
        assert (
            line.startswith('File "<string>", line ')
            and f"in {name}: xpu.jit needs the function's source" in line
            and "define it in a .py file" in line
        ), line
    assert "is a kernel" not in r.stdout


_LANE_CACHED = """
import json, sys
import numpy as np
from numquad import xpu, Wave

G = float(sys.argv[1])


@xpu.jit(cache=True)
def lf(x, y):
    return Wave.prefixSum(x) * y + G


x = np.random.default_rng(8).integers(-99, 99, 64).astype(np.float64)
r = lf(x, 2.0)
hits = sum(sum(c.block._cache_hits.values())
           for key, v in lf._nq_lanecall.items() if key[0] == "_wrappers"
           for c in v[0]._target("cpu")._cache.values())
print(json.dumps({"hits": hits, "x": x.tolist(), "r": r.tolist()}))
"""


@pytest.mark.slow
def test_a_cached_lane_function_called_on_arrays_is_loaded_from_disk(tmp_path):
    # found by a probe: @xpu.jit(cache=True) on a lane function called on arrays
    # compiled its wrapper in every process (the wrapper kernel was made without
    # cache=); given cache=, its second process died in Numba's cache loader
    # (AttributeError: 'NoneType' object has no attribute 'startswith': the
    # generated wrapper had no module name to rebuild its environment from)
    path = tmp_path / "lane_cached.py"
    path.write_text(_LANE_CACHED)
    env = dict(os.environ, NUMQUAD_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=os.pathsep.join(sys.path))
    seen = []
    for g in (1.0, 1.0, 3.0):
        r = subprocess.run([sys.executable, str(path), str(g)], capture_output=True, text=True, env=env, timeout=600)
        assert r.returncode == 0, r.stderr
        res = json.loads(r.stdout.strip().splitlines()[-1])
        x = np.array(res["x"])
        np.testing.assert_array_equal(np.array(res["r"]), _exclusive_scan(x) * 2.0 + g)
        seen.append(res["hits"])
    assert seen == [0, 1, 0]


def test_a_lane_call_error_names_the_calling_line():
    # found by a probe: every error of a lane call on arrays (a bad dtype, shapes that
    # do not broadcast, a wrong out=) named the lane function's def line, so with
    # several calls nothing said which one was wrong; a launch error names the launch
    import inspect

    import pytest
    from numquad import xpu
    from numquad.errors import NumquadError

    @xpu.jit
    def f(x, y):
        return x * y

    x = np.zeros(3, np.float32)
    defined = f.py_func.__code__.co_firstlineno
    for call in (
        lambda: f(x, np.array(["a"])),
        lambda: f(np.zeros(3), np.zeros(4)),
        lambda: f(x, 1.0, out=np.zeros(4)),
        lambda: f(x, 1.0, out=np.zeros(3, np.float64)),
        lambda: f(np.zeros(3, np.int8), 300),
    ):
        line = inspect.getsourcelines(call)[1]
        with pytest.raises(NumquadError) as e:
            call()
        assert str(e.value).startswith(
            f'File "{__file__}", line {line}, in <lambda>: call of f (defined at line {defined}): '
        ), e.value


def test_an_array_numba_cannot_type_is_named_by_its_dtype():
    # found by a probe: a kernel argument np.zeros(40, 'V8') was refused with "has type
    # ndarray, which the CPU target cannot pass; it takes NumPy arrays and ..."
    import pytest
    from numquad import xpu
    from numquad.errors import NumquadTypeError

    @xpu.jit
    def k(a, b):
        i = xpu.grid(1)
        if i < b.shape[0]:
            b[i] = i

    b = np.full(40, -1.0)
    with pytest.raises(
        NumquadTypeError,
        match=r"argument 0 \(a\) of k is an array of dtype \|V8, "
        r"which Numba cannot type",
    ) as e:
        k[2, 32](np.zeros(40, "V8"), b)
    assert f'File "{__file__}"' in str(e.value) and "has type ndarray" not in str(e.value)
    assert (b == -1.0).all()
