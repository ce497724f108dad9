"""Bad input on the CPU target: clear errors that name the op, what it got, what
it takes, and this file's name and the kernel's line. Nothing crashes or hangs."""

import inspect

import numpy as np
import pytest

from numquad import NumquadCompileError, NumquadLaunchError, NumquadTypeError, Quad, Wave, xpu

THIS = __file__


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn.py_func)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(text)


@xpu.jit
def k_array_operand(a, out):
    i = xpu.grid(1)
    out[i] = Quad.swapHorizontal(a)[0]


@xpu.jit
def k_tuple_operand(a, out):
    i = xpu.grid(1)
    t = (a[i], a[i])
    out[i] = Quad.swapHorizontal(t)[0]


@xpu.jit
def k_complex_operand(a, out):
    i = xpu.grid(1)
    out[i] = Wave.prefixSum(a[i]).real


@xpu.jit
def k_float_ballot(a, out):
    i = xpu.grid(1)
    out[i] = Wave.ballot(a[i])


@pytest.mark.parametrize(
    "kernel,arr,op,got",
    [
        (k_array_operand, np.zeros(32, np.float32), "Quad.swapHorizontal", "array(float32"),
        (k_tuple_operand, np.zeros(32, np.float32), "Quad.swapHorizontal", "UniTuple(float32"),
        (k_complex_operand, np.zeros(32, np.complex64), "Wave.prefixSum", "complex64"),
        (k_float_ballot, np.zeros(32, np.float32), "Wave.ballot", "float32"),
    ],
)
def test_operand_type_errors(kernel, arr, op, got):
    out = np.zeros(32, np.float32)
    with pytest.raises(NumquadTypeError) as e:
        kernel.cpu[1, 32](arr, out)
    msg = str(e.value)
    assert op in msg and got in msg and "it takes" in msg
    assert THIS in msg
    assert f"line {line_of(kernel, op)}" in msg


@xpu.jit
def k_bad_const(a, out):
    i = xpu.grid(1)
    out[i] = Quad.broadcast(a[i], 5)


def test_constant_out_of_range():
    with pytest.raises(NumquadCompileError) as e:
        k_bad_const.cpu[1, 32](np.zeros(32), np.zeros(32))
    msg = str(e.value)
    assert "Quad.broadcast" in msg and "5" in msg and "0..3" in msg
    assert THIS in msg and f"line {line_of(k_bad_const, 'Quad.broadcast')}" in msg


@xpu.jit
def k_query_with_an_argument(a, out):
    i = xpu.grid(1)
    out[i] = a[i] + Wave.laneId(3)


@xpu.jit
def k_folded_const(a, out):
    i = xpu.grid(1)
    out[i] = Quad.broadcast(a[i], 2**2)


@pytest.mark.parametrize("target", ["cpu", "python", "cuda-ptx"])
def test_an_op_that_takes_nothing_given_an_argument(target):
    """``Wave.laneId(3)`` ran on the CPU target with its argument ignored; numba.cuda
    raised a raw TypeError with no file or line (a probe of user errors)."""
    with pytest.raises(NumquadCompileError) as e:
        if target == "cuda-ptx":
            k_query_with_an_argument.inspect_ptx("void(float64[:], float64[:])")
        else:
            getattr(k_query_with_an_argument, target)[1, 32](np.zeros(32), np.zeros(32))
    msg = str(e.value)
    assert "Wave.laneId() takes 0 argument(s); got 1" in msg
    assert THIS in msg and f"line {line_of(k_query_with_an_argument, 'laneId')}" in msg


@pytest.mark.parametrize("target", ["cpu", "cuda-ptx"])
def test_a_constant_selector_written_as_a_power_is_a_constant(target):
    """``2 ** 2`` is the constant 4 on the CUDA target (Numba folds it: out of range);
    the CPU target read it as a runtime index, & 3, lane 0."""
    with pytest.raises(NumquadCompileError) as e:
        if target == "cuda-ptx":
            k_folded_const.inspect_ptx("void(float64[:], float64[:])")
        else:
            k_folded_const.cpu[1, 32](np.zeros(32), np.zeros(32))
    assert "Quad.broadcast: constant index 4 is out of range" in str(e.value)


@xpu.jit
def k_too_much_shared(out):
    s = xpu.shared.array(8192, np.float64)
    s2 = xpu.shared.array((64, 33), np.int32)
    t = xpu.threadIdx.x
    s[t] = t
    s2[t, 0] = t
    xpu.syncthreads()
    out[t] = s[t] + s2[t, 0]


@xpu.jit
def k_huge_local(out):
    buf = xpu.local.array(1 << 40, np.int8)
    t = xpu.threadIdx.x
    buf[t] = 1
    out[t] = buf[t]


def test_shared_and_local_memory_over_cuda_s_limits():
    """A CPU launch allocated them (a bare MemoryError for a huge one, and a kernel
    that passed on the CPU with more than the GPU's 48 KiB of static shared memory;
    a probe of user errors)."""
    with pytest.raises(NumquadCompileError) as e:
        k_too_much_shared[1, 32](np.zeros(32))
    msg = str(e.value)
    assert "take 73984 bytes" in msg and "49152" in msg  # 8192 * 8 + 64 * 33 * 4
    assert THIS in msg and f"line {line_of(k_too_much_shared, 'shared.array(8192')}" in msg
    with pytest.raises(NumquadCompileError) as e:
        k_huge_local[1, 32](np.zeros(32))
    assert "524288" in str(e.value) and f"line {line_of(k_huge_local, 'local.array')}" in str(e.value)


@xpu.jit
def k_op_as_value(a, out):
    i = xpu.grid(1)
    f = Wave.prefixSum
    out[i] = f(a[i])


@xpu.jit
def k_namespace_as_value(a, out):
    i = xpu.grid(1)
    W = Wave
    out[i] = W.prefixSum(a[i])


@pytest.mark.parametrize("target", ["cpu", "cuda-ptx"])
@pytest.mark.parametrize(
    "kernel,text",
    [
        (k_op_as_value, "Wave.prefixSum is a cross-lane op: call it, Wave.prefixSum(value)"),
        (k_namespace_as_value, "Wave is numquad's namespace of ops"),
    ],
)
def test_an_op_or_its_namespace_as_a_value(target, kernel, text):
    """Numba's words were "Unknown attribute 'prefixSum' of type Module(...)", as if the
    op did not exist (a probe of user errors)."""
    with pytest.raises(NumquadCompileError) as e:
        if target == "cuda-ptx":
            kernel.inspect_ptx("void(float64[:], float64[:])")
        else:
            kernel.cpu[1, 32](np.zeros(32), np.zeros(32))
    msg = str(e.value)
    assert text in msg and THIS in msg and f"line {line_of(kernel, ' = W')}" in msg


@xpu.jit
def k_in_comprehension(a, out):
    i = xpu.grid(1)
    out[i] = sum([Quad.swapVertical(a[i]) for _ in range(2)])


@xpu.jit
def k_in_lambda(a, out):
    i = xpu.grid(1)
    f = lambda v: Quad.swapVertical(v)  # noqa: E731
    out[i] = f(a[i])


@xpu.jit
def k_in_ifexp(a, out):
    i = xpu.grid(1)
    # an atomic beside it: the op cannot be computed first (numquad/_desugar.py)
    out[i] = xpu.atomic.add(out, 0, 0.0) + (Quad.swapVertical(a[i]) if a[i] > 0 else 0.0)


@xpu.jit
def k_in_with(a, out):
    i = xpu.grid(1)
    with np.errstate():
        out[i] = Quad.swapVertical(a[i])


@pytest.mark.parametrize(
    "kernel,construct",
    [
        (k_in_comprehension, "comprehension"),
        (k_in_lambda, "lambda"),
        (k_in_ifexp, "conditional expression"),
        (k_in_with, "with"),
    ],
)
def test_unmaskable_constructs(kernel, construct):
    with pytest.raises(NumquadCompileError) as e:
        kernel.cpu[1, 32](np.zeros(32), np.zeros(32))
    msg = str(e.value)
    assert construct in msg.lower() and THIS in msg


@xpu.jit
def k_ok(a):
    i = xpu.grid(1)
    a[i] = Quad.swapHorizontal(a[i])


@pytest.mark.parametrize(
    "griddim,blockdim,exc",
    [
        (1, 0, NumquadLaunchError),
        (0, 32, NumquadLaunchError),
        (1, 1025, NumquadLaunchError),
        (1, (32, 32, 2), NumquadLaunchError),
        (1, (1, 1, 1, 1), NumquadLaunchError),
        (1, (1, 1, 65), NumquadLaunchError),
        (1.5, 32, NumquadTypeError),
        (1, "32", NumquadTypeError),
    ],
)
def test_bad_launch_configuration(griddim, blockdim, exc):
    a = np.zeros(64)
    with pytest.raises(exc) as e:
        k_ok.cpu[griddim, blockdim](a)
    launch_line = inspect.currentframe().f_lineno - 1
    assert "k_ok" in str(e.value) and THIS in str(e.value)
    # the launch's own line, and where the kernel is defined
    assert f'File "{THIS}", line {launch_line}, in test_bad_launch_configuration' in str(e.value)
    assert f"defined at line {k_ok.firstlineno}" in str(e.value)
    assert isinstance(e.value, (ValueError, TypeError))
    assert not a.any()


def test_wrong_argument_count_names_the_call():
    with pytest.raises(TypeError) as e:
        k_ok.cpu[1, 32](np.zeros(32), np.zeros(32))
    line = inspect.currentframe().f_lineno - 1
    assert f'File "{THIS}", line {line}' in str(e.value)
    assert "k_ok(a) takes 1 argument; got 2" in str(e.value)


def test_kernel_without_launch_configuration():
    with pytest.raises(TypeError) as e:
        k_ok(np.zeros(32))
    assert "k_ok[griddim, blockdim](...)" in str(e.value)
    with pytest.raises(ValueError):  # what numba.cuda raises (ported code catches it)
        k_ok(np.zeros(32))


def test_lane_function_launched_as_kernel():
    @xpu.jit
    def f(x):
        return x + 1

    with pytest.raises(TypeError) as e:
        f[1, 32](np.zeros(32))
    assert "lane function" in str(e.value)


def test_unsupported_argument_type():
    with pytest.raises(TypeError) as e:
        k_ok.cpu[1, 32]([1, 2, 3])
    assert "argument 0" in str(e.value)
    with pytest.raises(TypeError) as e:
        k_ok.cpu[1, 32](np.zeros(4, "V8"))
    assert "argument 0" in str(e.value)
    # a string array is an argument (as in numba.cuda); what the kernel does with it
    # is checked where it is used
    with pytest.raises(TypeError) as e:
        k_ok.cpu[1, 32](np.array(["a", "b"]))
    assert "got [unichr x 1]" in str(e.value)


def test_op_called_from_python():
    with pytest.raises(TypeError) as e:
        Quad.swapHorizontal(1.0)
    assert "inside an @xpu.jit" in str(e.value)


@xpu.jit
def k_raises(a):
    i = xpu.grid(1)
    if i == 5000:
        raise ValueError("kernel saw thread 5000")
    a[i] = Wave.laneId()


def test_exception_in_parallel_launch_propagates():
    a = np.zeros(1 << 16, np.int64)
    with pytest.raises(ValueError, match="thread 5000"):
        k_raises.cpu[(1 << 16) // 256, 256](a)
    # the interpreter is fine and the kernel still runs afterwards
    b = np.zeros(256, np.int64)
    k_raises.cpu[1, 256](b)
    np.testing.assert_array_equal(b, np.arange(256) % 32)


def _scan_under_if(a, out):
    i = xpu.grid(1)
    if a[i] > 0:
        out[i] = Wave.prefixSum(a[i])


@pytest.mark.slow
def test_scan_on_a_non_prefix_mask_is_defined_and_debug_agrees():
    """A scan whose active lanes have gaps runs over the active lanes' ranks
    (docs/semantics.md): release and debug=True give ops.py's result, no error."""
    from numquad import ops

    rng = np.random.default_rng(7)
    a = rng.integers(-3, 4, 64).astype(np.int64)
    a[3] = 0  # lane 3 inactive, lane 0..2 active: not a prefix
    want = ops.get("Wave.prefixSum").reference(a.reshape(2, 32), active=(a > 0).reshape(2, 32))
    for debug in (False, True):
        k = xpu.jit(debug=debug)(_scan_under_if)
        out = np.full(64, -99, np.int64)
        k.cpu[1, 64](a, out)
        np.testing.assert_array_equal(out[a > 0], want.reshape(-1)[a > 0])
        np.testing.assert_array_equal(out[a <= 0], -99)


def _k_del(x):
    i = xpu.grid(1)
    w = x[i]
    del w
    x[i] = 1


def _k_starred(x):
    i = xpu.grid(1)
    c, *_rest = (x[i], x[i], x[i])
    x[i] = c


@pytest.mark.parametrize(
    "fn, words",
    [(_k_del, "`del` is not supported"), (_k_starred, "starred unpacking (`a, *rest = ...`) is not supported")],
)
def test_del_and_starred_unpacking_are_one_line(fn, words):
    """Day-one probes: both gave Numba's raw multi-line errors (with terminal colour
    codes) from the shadow typing pass."""
    with pytest.raises(NumquadCompileError) as e:
        xpu.jit(fn).cpu[1, 32](np.zeros(32))
    msg = str(e.value)
    assert words in msg and "test_cpu_errors.py" in msg and "\x1b[" not in msg
    line = inspect.getsourcelines(fn)[1] + (3 if fn is _k_del else 2)
    assert f"line {line}" in msg
