"""User errors a probe of bad input found unreported or misreported (twenty-first
session): each is one NumquadError naming what was wrong and the user's line, on
the CPU and python targets alike, never a run with the wrong input taken as
something else."""

import inspect
import re
import warnings

import numba
import numpy as np
import pytest

from numquad import NumquadCompileError, NumquadLaunchError, NumquadTypeError, Quad, Wave, xpu

from _marks import line_of

THIS = __file__


def _line(marker):
    """The line of this file holding *marker* (a comment at the user's statement)."""
    return line_of(THIS, marker)


@xpu.jit
def _k_copy(src, dst):
    i = xpu.grid(1)
    if i < dst.size:
        dst[i] = src[i] + Wave.prefixSum(src[i])


@xpu.jit
def _lane_sum(x):
    return Wave.reduceSum(x)


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_masked_array_is_refused_not_read_without_its_mask(target):
    x = np.ma.masked_array(np.arange(32, dtype=np.int32), mask=np.arange(32) % 2)
    with pytest.raises(NumquadTypeError, match=r"argument 0 \(src\) of _k_copy is a masked array"):
        getattr(_k_copy, target)[1, 32](x, np.zeros(32, np.int32))
    with pytest.raises(NumquadTypeError, match=r"argument 'x' of _lane_sum is a masked array") as e:
        getattr(_lane_sum, target)(x)
    assert f'File "{THIS}"' in str(e.value)


@pytest.mark.parametrize("bad", [[0] * 32, {0: 1}, "abc", None])
def test_the_python_target_takes_the_arguments_the_compiled_targets_take(bad):
    # it ran with a list, read a dict by key, or failed with AttributeError: 'list'
    # object has no attribute 'size'
    with pytest.raises(
        NumquadTypeError,
        match=r"argument 1 \(dst\) of _k_copy (has type \w+, which the python target cannot pass|"
        r"is None, which numba.cuda cannot pass to a kernel)",
    ):
        _k_copy.python[1, 32](np.arange(32), bad)


@xpu.jit
def _k_float_selector(src, dst):
    i = xpu.grid(1)
    dst[i] = Wave.shuffleXor(src[i], 1.5)  # <- float selector


@xpu.jit
def _k_bool_selector(src, dst):
    i = xpu.grid(1)
    dst[i] = Quad.broadcast(src[i], src[i] > 3)  # <- bool selector


def _complex_sum(v):
    return Wave.reduceSum(v * 1j)  # <- complex operand


_lane_complex = xpu.jit(_complex_sum)


@xpu.jit
def _k_complex_operand(src, dst):
    i = xpu.grid(1)
    dst[i] = _lane_complex(src[i]).real


@pytest.mark.parametrize("target", ["cpu", "python"])
@pytest.mark.parametrize(
    "kernel, marker, words",
    [
        (
            _k_float_selector,
            "<- float selector",
            r"Wave.shuffleXor\(value, laneMask\): argument 'laneMask' got float64; it takes an integer",
        ),
        (
            _k_bool_selector,
            "<- bool selector",
            r"Quad.broadcast\(value, index\): argument 'index' got bool; it takes an integer",
        ),
        (
            _k_complex_operand,
            "<- complex operand",
            r"Wave.reduceSum\(value\): argument 'value' got complex128; it takes a bool, int8",
        ),
    ],
)
def test_an_op_argument_of_a_wrong_type_is_one_error_on_every_target(target, kernel, marker, words):
    # the python target ran a float selector as 1 and summed complex numbers
    src = np.random.default_rng(3).integers(0, 9, 32).astype(np.int32)
    with pytest.raises(NumquadTypeError, match=words) as e:
        getattr(kernel, target)[1, 32](src, np.zeros(32, np.float64))
    assert f'File "{THIS}", line {_line(marker)}' in str(e.value)


def _syncwarp_str(dst):
    i = xpu.grid(1)
    xpu.syncwarp("abc")  # <- syncwarp str
    dst[i] = 1


def _syncwarp_float(dst):
    i = xpu.grid(1)
    xpu.syncwarp(1.5)  # <- syncwarp float
    dst[i] = 1


def _syncwarp_ok(dst):
    i = xpu.grid(1)
    xpu.syncwarp(0xFFFFFFFF)
    numba.cuda.syncwarp()
    dst[i] = 1


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_syncwarp_takes_an_integer_mask(target):
    for fn, marker, got in (
        (_syncwarp_str, "<- syncwarp str", "str 'abc'"),
        (_syncwarp_float, "<- syncwarp float", "float 1.5"),
    ):
        with pytest.raises(
            (NumquadCompileError, NumquadTypeError), match=r"syncwarp\(mask\): the mask must be an integer"
        ) as e:
            getattr(xpu.jit(fn), target)[1, 32](np.zeros(32, np.int32))
        assert f'File "{THIS}", line {_line(marker)}' in str(e.value)
        assert got in str(e.value).replace("float64", "float"), str(e.value)
    dst = np.zeros(32, np.int32)
    getattr(xpu.jit(_syncwarp_ok), target)[1, 32](dst)
    assert (dst == 1).all()


def _store_thread_idx(dst):
    i = xpu.grid(1)
    xpu.threadIdx.x = 3  # <- store threadIdx.x
    dst[i] = 1


def _store_laneid(dst):
    i = numba.cuda.grid(1)
    numba.cuda.laneid += 1  # <- store laneid
    dst[i] = 1


def _store_module(dst):
    i = xpu.grid(1)
    np.pi = 3  # <- store module attribute
    dst[i] = 1


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_store_to_a_builtin_or_a_module_attribute_is_one_line(target):
    # the CPU target: Python's "expression which can't be assigned to" without a
    # line; the python target set xpu.laneid for every later kernel of the process
    cases = (
        (_store_thread_idx, "<- store threadIdx.x", "xpu.threadIdx.x is numquad's builtin threadIdx.x"),
        (_store_laneid, "<- store laneid", "numba.cuda.laneid is numquad's builtin laneid"),
        (_store_module, "<- store module attribute", "np.pi is an attribute of the module numpy"),
    )
    for fn, marker, words in cases:
        with pytest.raises(NumquadCompileError, match=words.replace(".", r"\.")) as e:
            getattr(xpu.jit(fn), target)[1, 32](np.zeros(32, np.int32))
        assert f'File "{THIS}", line {_line(marker)}' in str(e.value)
    assert np.pi == 3.141592653589793 and repr(xpu.laneid) == "<xpu builtin laneid>"


def _starred(dst):
    i = xpu.grid(1)
    dst[i] = Wave.prefixSum(*(i,))  # <- starred op argument


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_an_op_with_unpacked_arguments_is_one_line(target):
    with pytest.raises(NumquadCompileError, match=r"Wave.prefixSum\(value\) takes its arguments one by one") as e:
        getattr(xpu.jit(_starred), target)[1, 32](np.zeros(32, np.int64))
    assert f'File "{THIS}", line {_line("<- starred op argument")}' in str(e.value)


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_the_stream_of_a_launch_is_checked(target):
    src, dst = np.arange(32), np.zeros(32, np.int64)
    with pytest.raises(
        NumquadTypeError,
        match=r"the stream \(3rd launch item\) must be 0, None or a "
        r"CUDA stream.*got str 'not a stream'",
    ) as e:
        getattr(_k_copy, target)[1, 32, "not a stream"](src, dst)  # <- bad stream
    assert f'File "{THIS}", line {_line("<- bad stream")}' in str(e.value)
    for stream in (0, None, np.int64(0)):
        dst[:] = -1
        getattr(_k_copy, target)[1, 32, stream, 0](src, dst)
        np.testing.assert_array_equal(dst, src + np.cumsum(src) - src)


def test_forall_takes_a_non_negative_integer():
    with pytest.raises(
        NumquadLaunchError,
        match=r"_k_copy.forall\(ntasks\): Can't create ForAll with "
        r"negative task count: -5",
    ) as e:
        _k_copy.forall(-5)
    assert f'File "{THIS}", line {inspect.currentframe().f_lineno - 1}' in str(e.value)
    with pytest.raises(NumquadTypeError, match=r"ntasks must be an integer .*got float 2.5"):
        _k_copy.forall(2.5)


@pytest.mark.parametrize(
    "call, words",
    [
        (
            lambda: _k_copy.inspect_ptx((numba.float32[:], numba.float32[:]), cc=None),
            r"cc must be a compute capability",
        ),
        (lambda: _k_copy.inspect_ptx((numba.float32[:], numba.float32[:]), cc="9.0"), r"got str '9.0'"),
        (lambda: _k_copy.inspect_ptx((numba.float32[:], numba.float32[:]), cc=(9, 0, 1)), r"got tuple \(9, 0, 1\)"),
        (lambda: _k_copy.inspect_ptx(None), r"inspect_ptx\(sig\): sig must be the argument types"),
        (lambda: _k_copy.inspect_llvm(5), r"inspect_llvm\(sig\): sig must be .*got int 5"),
        (
            lambda: _k_copy.inspect_asm((numba.float32[:],)),
            r"inspect_asm\(sig\): .*a tuple of 2 Numba types.*got 1 type",
        ),
    ],
)
def test_inspect_calls_check_their_arguments(call, words):
    # a TypeError from inside the call ("'NoneType' object is not iterable"), an
    # nvvmError, or Numba's "Signature mismatch"
    with pytest.raises(NumquadTypeError, match=words) as e:
        call()
    assert f'File "{THIS}"' in str(e.value)


def _libdevice_sin(src, dst):
    i = xpu.grid(1)
    dst[i] = numba.cuda.libdevice.sinf(src[i])  # <- libdevice


def _grid_sync(src, dst):
    i = xpu.grid(1)
    numba.cuda.cg.this_grid().sync()  # <- grid group
    dst[i] = src[i]


@pytest.mark.parametrize("target", ["cpu", "python"])
@pytest.mark.parametrize(
    "fn, marker, name",
    [(_libdevice_sin, "<- libdevice", "libdevice.sinf"), (_grid_sync, "<- grid group", "cg.this_grid")],
)
def test_numba_cuda_stubs_no_cpu_side_target_runs_are_one_line(target, fn, marker, name):
    # the python target called numba.cuda's stub, which returns None: NaN stored
    src = np.arange(32, dtype=np.float32)
    with pytest.raises(
        NumquadCompileError,
        match=rf"`cuda.{re.escape(name)}` is not supported by "
        rf"numquad's {target.replace('cpu', 'CPU')} target",
    ) as e:
        getattr(xpu.jit(fn), target)[1, 32](src, np.zeros(32, np.float32))
    assert f'File "{THIS}", line {_line(marker)}' in str(e.value)


def _genexpr(dst):
    i = xpu.grid(1)
    dst[i] = sum(x for x in range(3))  # <- generator expression


def _listcomp(dst):
    i = xpu.grid(1)
    dst[i] = len([x * i for x in range(3)])  # <- list comprehension


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_comprehensions_are_one_line_on_every_target(target):
    # the CPU target: Numba's "Failed in numquad_shadow mode pipeline (step: inline
    # closures) The use of yield in a closure is unsupported", or a list the GPU
    # cannot build; numba.cuda compiles neither
    for fn, marker, what in (
        (_genexpr, "<- generator expression", "a generator expression"),
        (_listcomp, "<- list comprehension", "a comprehension"),
    ):
        with pytest.raises(NumquadCompileError, match=f"{what} .* is not supported inside a kernel") as e:
            getattr(xpu.jit(fn), target)[1, 32](np.zeros(32, np.int64))
        assert f'File "{THIS}", line {_line(marker)}' in str(e.value)


def _walrus(src, dst):
    i = xpu.grid(1)
    if (v := src[i]) > 0:  # <- walrus
        dst[i] = Wave.prefixSum(v)


@pytest.mark.parametrize("target", ["cpu", "python", "cuda-ptx"])
def test_an_assignment_expression_is_one_line_on_every_target(target):
    # a probe: the CPU and CUDA targets gave Numba's "Type of variable
    # '$50binary_subscr.8' cannot be determined" (CUDA at File ".../unknown location",
    # line 0); plain @numba.njit cannot compile `:=` either; the python target ran it
    k = xpu.jit(_walrus)
    with pytest.raises(
        NumquadCompileError,
        match=r"an assignment expression \(\(v := src\[i\]\)\) is "
        r"not supported inside a kernel \(Numba cannot compile `:=`\); assign v in a "
        r"statement first \(in _walrus\)",
    ) as e:
        if target == "cuda-ptx":
            k.inspect_ptx("void(int64[::1], int64[::1])", cc=(9, 0))
        else:
            getattr(k, target)[1, 32](np.ones(32, np.int64), np.zeros(32, np.int64))
    assert f'File "{THIS}", line {_line("<- walrus")}' in str(e.value)


def _writes(dst):
    i = xpu.grid(1)
    dst[i] = 1  # <- store into read-only


def test_a_store_into_a_read_only_array_says_so():
    dst = np.zeros(32, np.int32)
    dst.setflags(write=False)
    with pytest.raises(NumquadTypeError, match=r"a store into a read-only array .* pass a writeable array") as e:
        xpu.jit(_writes).cpu[1, 32](dst)
    assert f'File "{THIS}", line {_line("<- store into read-only")}' in str(e.value)


@xpu.jit
def _inner(dst):
    dst[0] = 1


def _launches(dst):
    _inner[1, 32](dst)  # <- nested launch


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_kernel_launching_a_kernel_is_one_line(target):
    # the python target ran the launch; the CPU target said "Untyped global name"
    dst = np.zeros(32, np.int32)
    with pytest.raises(NumquadCompileError, match=r"_inner\[1, 32\]\(\.\.\.\): a kernel cannot launch a kernel") as e:
        getattr(xpu.jit(_launches), target)[1, 32](dst)
    assert f'File "{THIS}", line {_line("<- nested launch")}' in str(e.value)
    assert (dst == 0).all()


def _huge_selector(src, dst):
    i = xpu.grid(1)
    dst[i] = Wave.shuffle(src[i], 2**64 + 1)  # <- huge selector


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_constant_selector_past_64_bits_names_the_op(target):
    # the CPU target: Numba's "Int value is too large"; the python target took it & 31
    with pytest.raises(
        NumquadCompileError,
        match=r"Wave.shuffle: constant srcLane 18446744073709551617 "
        r"does not fit a 64-bit integer",
    ) as e:
        getattr(xpu.jit(_huge_selector), target)[1, 32](np.arange(32), np.zeros(32, np.int64))
    assert f'File "{THIS}", line {_line("<- huge selector")}' in str(e.value)


@pytest.mark.skipif(numba.cuda.is_available(), reason="needs a machine without a CUDA GPU")
def test_the_cuda_target_without_a_gpu_is_one_line():
    # a probe (twenty-second session): `f.cuda(x)` and `k.cuda[1, 32](...)` on a
    # machine without a GPU raised numba.cuda's multi-line CudaSupportError
    from numba.cuda.cudadrv.error import CudaSupportError

    @xpu.jit
    def scan(x):
        return Wave.prefixSum(x)

    @xpu.jit
    def k(a):
        a[xpu.grid(1)] = 1

    line = inspect.currentframe().f_lineno
    for call, what, verb, at in (
        (lambda: scan.cuda(np.arange(8)), r"scan\.cuda\(\.\.\.\)", "call", 2),
        (lambda: k.cuda[1, 8](np.zeros(8)), r"k\.cuda\[\.\.\.\]\(\.\.\.\)", "launch", 3),
    ):
        with warnings.catch_warnings(record=True) as seen, pytest.raises(CudaSupportError) as info:
            warnings.simplefilter("always")
            call()
        assert not seen, [str(w.message) for w in seen]  # (numba-cuda's "Grid size 1" came first)
        msg = str(info.value)
        assert "\n" not in msg
        assert re.match(
            rf'File "{re.escape(__file__)}", line {line + at}, in <lambda>: {what} runs on an '
            rf"NVIDIA GPU, but numba.cuda finds none here \(.+\); {verb} \w+ without \.cuda, "
            rf"or with \.cpu, to run it on the CPU$",
            msg,
        ), msg
    a = np.zeros(8)
    k[1, 8](a)  # the CPU target, as the message says
    np.testing.assert_array_equal(a, 1)


def _np_sqrt(src, dst):
    i = xpu.grid(1)
    dst[i] = np.sqrt(src[i])  # <- np.sqrt


def _np_zeros(src, dst):
    i = xpu.grid(1)
    tmp = np.zeros(4)  # <- np.zeros
    tmp[0] = src[i]
    dst[i] = tmp[0]


def _np_random(src, dst):
    i = xpu.grid(1)
    dst[i] = src[i] + np.random.random()  # <- np.random


def _np_sort(src, dst):
    i = xpu.grid(1)
    dst[i] = np.sort(src)[i]  # <- np.sort


def _np_fine(src, dst):
    i = xpu.grid(1)
    dst[i] = np.sin(src[i]) + np.maximum(src[i], 0.5) + np.float64(np.isnan(src[i])) + np.sum(src)


def _python_float_shared(src, dst):
    s = xpu.shared.array(32, float)  # <- python float
    t = xpu.threadIdx.x
    s[t] = src[t]
    xpu.syncthreads()
    dst[t] = s[31 - t]


@pytest.mark.parametrize("target", ["cpu", "python", "cuda-ptx"])
@pytest.mark.parametrize(
    "fn, marker, words",
    [
        (
            _np_sqrt,
            "<- np.sqrt",
            r"np\.sqrt\(\.\.\.\) is not among the NumPy ufuncs numba\.cuda compiles in a "
            r"kernel .*; use math\.sqrt\(x\) \(in _np_sqrt\)",
        ),
        (
            _np_zeros,
            "<- np.zeros",
            r"np\.zeros\(\.\.\.\) creates an array in a kernel, which numba\.cuda does only "
            r"with its NRT on .*; use cuda\.local\.array\(shape, dtype\)",
        ),
        (
            _np_random,
            "<- np.random",
            r"np\.random\.random\(\.\.\.\) draws random numbers, which numba\.cuda cannot "
            r"do with NumPy in a kernel; draw them on the host and pass them in",
        ),
        (_np_sort, "<- np.sort", r"np\.sort\(\.\.\.\) has no numba\.cuda implementation in a kernel"),
        (
            _python_float_shared,
            "<- python float",
            r"xpu\.shared\.array\(shape, dtype\): dtype float is Python's "
            r"type, which numba\.cuda does not take as a dtype; use np\.float64",
        ),
    ],
)
def test_numpy_that_numba_cuda_cannot_compile_is_refused_on_every_target(target, fn, marker, words):
    # a day-one probe (twenty-second session): the CPU target ran these and the python
    # target too, while numba.cuda refused each (np.sqrt with a bare KeyError,
    # np.random with a RecursionError inside numba-cuda): tested on the CPU, failed
    # only on the GPU
    k = xpu.jit(fn)
    with pytest.raises(NumquadCompileError, match=words) as e:
        if target == "cuda-ptx":
            k.inspect_ptx("void(float64[::1], float64[::1])", cc=(9, 0))
        else:
            getattr(k, target)[1, 32](np.random.default_rng(3).random(32), np.zeros(32))
    assert f'File "{THIS}", line {_line(marker)}' in str(e.value)


@pytest.mark.parametrize("target", ["cpu", "python", "cuda-ptx"])
def test_numpy_that_numba_cuda_compiles_still_runs(target, rng):
    src = rng.random(32)
    want = np.sin(src) + np.maximum(src, 0.5) + np.float64(np.isnan(src)) + src.sum()
    k = xpu.jit(_np_fine)
    if target == "cuda-ptx":
        assert "sin" in k.inspect_ptx("void(float64[::1], float64[::1])", cc=(9, 0))
        return
    dst = np.full(32, np.nan)
    getattr(k, target)[1, 32](src, dst)
    np.testing.assert_allclose(dst, want, rtol=1e-14)


def test_numpy_ufuncs_match_numba_cuda_s_table():
    # numquad/_numpy_calls.py keeps numba-cuda's ufunc table by name, so that the
    # check does not depend on whether numba-cuda is installed; it must not drift
    ufuncs = pytest.importorskip("numba.cuda.ufuncs")
    from numquad._numpy_calls import CUDA_UFUNCS

    assert {u.__name__ for u in ufuncs.ufunc_db()} == CUDA_UFUNCS


def _forgot_return(x):
    y = Wave.prefixSum(x) * 2  # noqa: F841 (the return is forgotten)


def _early_value_return(a):
    i = xpu.grid(1)
    if i >= a.size:
        return 0  # <- return 0
    a[i] = 1


def test_a_forgotten_or_stray_return_says_which_is_which():
    # a day-one probe: a lane function without its return was "a kernel: launch it
    # as ...", with nothing about the return; a kernel's `return 0` was told to "add a
    # final return"
    with pytest.raises(
        NumquadLaunchError,
        match=r"_forgot_return \(defined at line \d+\) is a kernel \(it "
        r"returns no value\): launch it as .*; a lane function called on arrays returns "
        r"its result",
    ):
        xpu.jit(_forgot_return)(np.arange(8))
    with pytest.raises(
        NumquadCompileError,
        match=r"a lane function returns a value on every path \(add a "
        r"final return\), a kernel on none \(write `return` without a value\)",
    ):
        xpu.jit(_early_value_return)[1, 32](np.zeros(8))


def test_xpu_jit_of_something_that_is_no_function_says_so():
    # a probe: xpu.jit(xpu.jit(g)), a partial or a builtin said "... is not a signature"
    import functools

    def g(x):
        return x

    for obj, got in (
        (xpu.jit(g), "g, already an xpu.jit function"),
        (functools.partial(g, 1), r"functools\.partial\(.* \(a partial\)"),
        (len, r"<built-in function len> \(a builtin_function_or_method\)"),
    ):
        with pytest.raises(
            TypeError,
            match=r"^xpu\.jit decorates a plain Python function \(def or lambda\) "
            rf"or takes a signature; got {got}$",
        ):
            xpu.jit(obj)


def test_an_njit_function_calling_an_xpu_function_is_told_why():
    # a probe (twenty-third session): Numba's "Cannot determine Numba type of <class
    # 'numquad.xpu.Dispatcher'>"
    @xpu.jit
    def inner(a):
        a[xpu.grid(1)] = 1

    @xpu.jit
    def twice(x):
        return x * 2

    @numba.njit
    def launches(a):
        inner[1, 32](a)

    @numba.njit
    def calls(a):
        return twice(a)

    for f, name in ((launches, "inner"), (calls, "twice")):
        with pytest.raises(
            numba.core.errors.TypingError,
            match=rf"{name} is an @xpu.jit function, which a @numba.njit function cannot call or "
            rf"launch; call it from Python",
        ):
            f(np.zeros(32))
    np.testing.assert_array_equal(twice(np.arange(4.0)), [0.0, 2.0, 4.0, 6.0])


@xpu.jit
def _k_unpack_three(o):
    x, y, z = xpu.grid(2)  # unpack-three
    o[y, x] = 1


def test_unpacking_grid_into_too_many_names_says_so():
    """Numba's text named its temporary and printed a raw args tuple (a probe of 2-D
    launches): ``('wrong tuple length for $60build_tuple.8: ', 'expected 3, got 2')``."""
    with pytest.raises(NumquadTypeError) as e:
        _k_unpack_three[(1, 1), (2, 2)](np.zeros((2, 2)))
    msg = str(e.value)
    assert f"line {_line('# unpack-three')}" in msg
    assert "cannot unpack a tuple of 2 values into 3 names" in msg
    assert "$" not in msg and "build_tuple" not in msg


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: Wave.reduceSum(1.0), r"Wave.reduceSum\(value\) is a cross-lane op"),
        (lambda: Quad.swapHorizontal(1), r"Quad.swapHorizontal\(value\) is a cross-lane op"),
        (lambda: xpu.grid(1), r"xpu.grid is a kernel builtin"),
    ],
)
def test_an_op_or_builtin_called_from_plain_python_names_the_line(call, name):
    """An op or a kernel builtin called outside a kernel: the message names the user's
    file and line (a probe found only the traceback did), and what to do."""
    with pytest.raises(TypeError, match=rf'File ".*test_user_errors.py", line \d+, in <lambda>: {name}, called here'):
        call()
