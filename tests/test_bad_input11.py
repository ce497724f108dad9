"""Bad input, eleventh round: each case gets numquad's one-line error (the construct,
what it got, what it takes, the user's file and line) on every target where it
applies, or works where it can; docs/RELIABILITY.md's table has a row for each."""

import inspect
import math
import os

import numpy as np
import pytest
from numba import cuda

from numquad import NumquadCompileError, Wave, xpu

HERE = os.path.basename(__file__)
SHAPE_WORDS = "the shape must be a constant positive int or tuple of ints"
DTYPE_WORDS = "it takes a bool, integer, float or complex NumPy/Numba type, or a record dtype"


def _line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def _cuda_ptx(k, sig):
    pytest.importorskip("numba_cuda")
    return k.inspect_ptx(sig, cc=(9, 0))


# -- 1. hasattr of a module or class, and an unknown op, on the CUDA target -----------


def k_hasattr(out):
    out[0] = (
        hasattr(Wave, "noSuchOp") * 1
        + hasattr(Wave, "prefixSum") * 10
        + hasattr(xpu, "quad_grid") * 100
        + hasattr(math, "sqrt") * 1000
        + hasattr(cuda, "grid") * 10000
        + 7 * 100000
    )


def test_hasattr_compiles_for_cuda_with_pythons_answer():
    # numba-cuda's typing of hasattr raised a raw AttributeError for the missing name;
    # xpu.quad_grid is numquad's (numba.cuda has none): True, as on the CPU
    ptx = _cuda_ptx(xpu.jit(k_hasattr), "void(int64[::1])")
    assert "711110;" in ptx, ptx


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_hasattr_on_the_other_targets(target):
    out = np.zeros(1, np.int64)
    getattr(xpu.jit(k_hasattr), target)[1, 1](out)
    assert out[0] == 711110


def k_hasattr_op(out):
    i = cuda.grid(1)
    out[i] = Wave.reduceSum(1) if hasattr(Wave, "reduceSum") else -1


def test_hasattr_beside_an_op_compiles_for_cuda():
    assert "shfl" in _cuda_ptx(xpu.jit(k_hasattr_op), "void(int64[::1])")


def k_unknown_op(out):
    i = cuda.grid(1)
    out[i] = Wave.noSuchOp(out[i])


@pytest.mark.parametrize("target", ["cpu", "python", "cuda"])
def test_an_unknown_op_lists_the_ops(target):
    k = xpu.jit(k_unknown_op)
    with pytest.raises(NumquadCompileError) as e:
        if target == "cuda":
            _cuda_ptx(k, "void(int64[::1])")
        else:
            getattr(k, target)[1, 32](np.zeros(32, np.int64))
    msg = str(e.value)
    assert f"line {_line_of(k_unknown_op, 'noSuchOp')}" in msg and HERE in msg, msg
    assert "Wave.noSuchOp is not a Wave op; the Wave ops are all, allEqual, any," in msg, msg
    assert "shuffleXor, width" in msg, msg


# -- 2. bad allocation shapes and dtypes: the CPU target's error on every target ------


def k_int33(out):
    i = cuda.grid(1)
    a = xpu.local.array(10, dtype="int33")
    a[0] = 1
    out[i] = a[0]


def k_list_shape(out):
    i = cuda.grid(1)
    a = xpu.shared.array(shape=[5, 6], dtype=np.float32)
    a[0, 0] = 1
    out[i] = a[0, 0]


def k_float_shape(out):
    i = cuda.grid(1)
    a = xpu.shared.array(4.0, dtype=np.float32)
    out[i] = a[0]


def k_zero_shape(out):
    i = cuda.grid(1)
    a = xpu.local.array(0, dtype=np.float32)
    out[i] = a[0]


def k_negative_shape(out):
    i = cuda.grid(1)
    a = xpu.local.array(-1, np.float32)
    out[i] = a[0]


def k_runtime_shape(out):
    i = cuda.grid(1)
    a = xpu.shared.array(i, dtype=np.float32)
    out[i] = a[0]


def k_object_dtype(out):
    i = cuda.grid(1)
    a = xpu.local.array(4, dtype=object)
    out[i] = a[0]


def k_no_dtype(out):
    i = cuda.grid(1)
    a = xpu.local.array(4)
    out[i] = a[0]


BAD_ALLOCATIONS = [
    (k_int33, "Invalid NumPy dtype specified: 'int33'; " + DTYPE_WORDS),
    (k_list_shape, SHAPE_WORDS, "got [5, 6]"),
    (k_float_shape, SHAPE_WORDS, "got 4.0"),
    (k_zero_shape, SHAPE_WORDS, "got 0"),
    (k_negative_shape, SHAPE_WORDS, "got -1"),
    (k_runtime_shape, SHAPE_WORDS, "got i"),
    (k_object_dtype, "unsupported dtype object; " + DTYPE_WORDS),
    (k_no_dtype, "needs a shape and a dtype"),
]


@pytest.mark.parametrize("target", ["cpu", "python", "cuda"])
@pytest.mark.parametrize("case", BAD_ALLOCATIONS, ids=lambda c: c[0].__name__)
def test_a_bad_allocation_gets_the_cpu_targets_error(case, target):
    # the python target took the list and the float shape, and failed inside NumPy or
    # Numba on the rest (NumbaNotImplementedError for int33); numba-cuda gave "No
    # implementation of function" or a raw ValueError("array length <= 0")
    fn, *words = case
    k = xpu.jit(fn)
    with pytest.raises(NumquadCompileError) as e:
        if target == "cuda":
            _cuda_ptx(k, "void(float32[::1])")
        else:
            getattr(k, target)[1, 32](np.zeros(32, np.float32))
    msg = str(e.value)
    assert f"line {_line_of(fn, '.array(')}" in msg and HERE in msg, msg
    kind = "shared" if "shared" in inspect.getsource(fn) else "local"
    assert f"xpu.{kind}.array(shape, dtype)" in msg, msg
    for w in words:
        assert w in msg, msg


def k_extra_keyword(out):
    i = cuda.grid(1)
    a = xpu.local.array(4, dtype=np.float32, order="F")
    a[0] = 1
    out[i] = a[0]


@pytest.mark.parametrize("target", ["cpu", "python", "cuda"])
def test_an_allocation_keyword_other_than_shape_and_dtype_is_refused(target):
    # the CPU target ignored it; the python target failed with a TypeError of its own
    k = xpu.jit(k_extra_keyword)
    with pytest.raises(NumquadCompileError) as e:
        if target == "cuda":
            _cuda_ptx(k, "void(float32[::1])")
        else:
            getattr(k, target)[1, 32](np.zeros(32, np.float32))
    msg = str(e.value)
    assert f"line {_line_of(k_extra_keyword, 'order=')}" in msg and HERE in msg, msg
    assert "xpu.local.array(shape, dtype) takes a shape, a dtype and an alignment; got keyword argument(s) order" in msg


TPB = 8
REC = np.dtype([("x", np.int32), ("y", np.float64)])


def k_good_allocations(out):
    i = cuda.grid(1)
    n = 2
    a = xpu.shared.array(TPB * 4, dtype="float32")  # a global, arithmetic, a string
    b = cuda.local.array((n, 3), np.int64)  # a local assigned once
    c = xpu.local.array(2, REC)  # a record dtype
    z = xpu.local.array(1, np.complex128)
    z[0] = 1j
    d = xpu.shared.array(0, dtype=np.float32)  # the dynamic shared memory
    a[i] = i
    b[1, 2] = 5
    c[1].x = 3
    d[0] = 0
    xpu.syncthreads()
    out[i] = a[(i + 1) % 32] + b[1, 2] + c[1].x + b.shape[0] + d.shape[0] * 0 + z[0].imag


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_good_allocations_still_work(target):
    out = np.zeros(32, np.float32)
    # the python target failed on the record and the complex array (poisoning them)
    getattr(xpu.jit(k_good_allocations), target)[1, 32, 0, 16](out)
    np.testing.assert_array_equal(out, (np.arange(32) + 1) % 32 + 11.0)


def test_good_allocations_compile_for_cuda():
    _cuda_ptx(xpu.jit(k_good_allocations), "void(float32[::1])")


# -- 3. array views across cross-lane ops on the CPU target -----------------------


def k_reshape_across_op(a, out):
    i = cuda.grid(1)
    b = a.reshape(4, 8)  # a view of a parameter: the same in every lane
    s = Wave.prefixSum(a[i])
    out[i] = b[i // 8, i % 8] + s


@xpu.jit
def _add_scan(x, v):
    x[0] += Wave.prefixSum(v)


def k_row_argument(out, v):
    i = cuda.grid(1)
    _add_scan(out[i], v)  # a row of a 2-D array: a view, as out[i, :]


def k_row_across_op(out, v):
    i = cuda.grid(1)
    row = out[i]
    s = Wave.prefixSum(v)
    row[1] += s


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_reshaped_parameter_lives_across_an_op(target):
    # the CPU target refused b: "b of type array(float64, 2d, C) lives across a
    # cross-lane op or masked branch"
    a = np.arange(32.0)
    out = np.zeros(32)
    getattr(xpu.jit(k_reshape_across_op), target)[1, 32](a, out)
    np.testing.assert_array_equal(out, a + np.concatenate([[0], np.cumsum(a)[:-1]]))


@pytest.mark.parametrize("target", ["cpu", "python"])
@pytest.mark.parametrize("fn", [k_row_argument, k_row_across_op], ids=lambda f: f.__name__)
def test_a_row_view_lives_across_an_op(fn, target):
    # the CPU target refused out[i] of a 2-D out: "a temporary of type array(float64,
    # 1d, C) lives across a cross-lane op or masked branch", at the kernel's def line
    out = np.zeros((40, 2))
    getattr(xpu.jit(fn), target)[1, 40](out, 1.0)
    want = np.zeros((40, 2))
    want[:, 0 if fn is k_row_argument else 1] = np.r_[np.arange(32), np.arange(8)]
    np.testing.assert_array_equal(out, want)


def k_lane_varying_view_argument(out, v):
    i = cuda.grid(1)
    _add_scan(out[i].reshape(2), v)


def k_lane_varying_view(out, v):
    i = cuda.grid(1)
    r = out[i] if v > 0 else out[0]
    s = Wave.prefixSum(v)
    r[0] += s


@pytest.mark.parametrize(
    "fn,shown",
    [(k_lane_varying_view_argument, "the value out[i].reshape(2)"), (k_lane_varying_view, "r")],
    ids=["argument", "named"],
)
def test_a_lane_varying_view_across_an_op_names_it_at_its_line(fn, shown):
    with pytest.raises(NumquadCompileError) as e:
        xpu.jit(fn).cpu[1, 32](np.zeros((32, 2)), 1.0)
    msg = str(e.value)
    line = _line_of(fn, "_add_scan(" if fn is k_lane_varying_view_argument else "r = ")
    assert f"line {line}:" in msg and HERE in msg, msg
    assert (
        f"{shown} (array(float64, 1d, C)) is an array that differs from lane to lane and "
        f"lives across a cross-lane op" in msg
    ), msg
    assert "pass the whole array and its index" in msg, msg


@xpu.jit
def _add_scan_lane(x, v):
    x[0] += Wave.prefixSum(v)
    return 0


def k_row_argument_lane(out, v):
    i = cuda.grid(1)
    _add_scan_lane(out[i], v)


def test_cuda_refuses_a_call_of_a_kernel_with_ops_and_says_what_to_do():
    # it failed inside numba-cuda: "Cannot bind 'args=[...] kws={'_nq_mask': ...}' to
    # signature '(x, v)'" (a kernel takes no member mask)
    with pytest.raises(NumquadCompileError) as e:
        _cuda_ptx(xpu.jit(k_row_argument), "void(float64[:, ::1], float64)")
    msg = str(e.value)
    assert f"line {_line_of(k_row_argument, '_add_scan(')}:" in msg and HERE in msg, msg
    assert (
        "_add_scan uses cross-lane ops and returns nothing (a kernel), so the CUDA target "
        "cannot call it; make it a lane function by returning a value (e.g. return 0)" in msg
    ), msg
    _cuda_ptx(xpu.jit(k_row_argument_lane), "void(float64[:, ::1], float64)")
