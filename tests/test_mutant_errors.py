"""User mistakes a mutation probe found misreported (twenty-ninth session): 486 single
mistakes in eleven kernels, each run in a process of its own. Each case below gave
numquad's or Numba's internals (a hidden parameter, a bare NotImplementedError, an
AttributeError from Numba's typing), the wrong line, or no error where a debug
build promises one; each is now one error naming what was wrong and the user's line.
"""

import numpy as np
import pytest
from numba import cuda

from numquad import Quad, xpu
from numquad.errors import NumquadCompileError, NumquadRuntimeError, NumquadTypeError

from _marks import line_of

THIS = __file__


def _line(marker):
    """The line of this file holding *marker* (a comment at the user's statement)."""
    return line_of(THIS, marker)


@cuda.jit(device=True)
def _sq(a, b):
    return a * a + b


def test_a_device_function_given_one_argument_too_many_says_how_many_it_takes(rng):
    @xpu.jit
    def k(src, dst):
        i = cuda.grid(1)
        dst[i] = _sq(src[i], 1.0, 2.0)  # <- too many

    src = rng.random(32)
    dst = np.full(32, np.nan)
    with pytest.raises(NumquadCompileError, match=r"_sq\(\) takes 2 positional argument\(s\) \(a, b\); got 3") as e:
        k[1, 32](src, dst)
    assert f"line {_line('<- too many')}" in str(e.value)
    assert "_nq_" not in str(e.value)
    assert np.isnan(dst).all()


def test_a_device_function_signature_of_the_wrong_arity_names_its_definition(rng):
    def sq2(a, b):
        return a * a + b

    if cuda.is_available():
        pytest.skip("with a GPU, numba.cuda compiles the signature at decoration and refuses it itself")
    dev = cuda.jit("int32(int32)", device=True)(sq2)

    @xpu.jit
    def k(src, dst):
        i = cuda.grid(1)
        dst[i] = dev(src[i], 1)

    src = rng.integers(0, 100, 32).astype(np.int32)
    with pytest.raises(
        TypeError,
        match=r"line \d+, in sq2: the signature \(int32\) of sq2 has 1 argument "
        r"type\(s\); sq2 takes 2 argument\(s\)",
    ):
        k[1, 32](src, np.zeros(32, np.int32))


def test_calling_a_namespace_says_it_is_one(rng):
    @xpu.jit
    def k(src, dst):
        i = xpu.grid(1)
        dst[i] = Quad(src[i])  # <- a namespace

    with pytest.raises(
        NumquadCompileError,
        match=r"Quad is a namespace, not a function: call one of its "
        r"names \(Quad\.broadcast",
    ) as e:
        k[1, 32](rng.random(32).astype(np.float32), np.zeros(32, np.float32))
    assert f"line {_line('<- a namespace')}" in str(e.value)


@pytest.mark.parametrize("where", ["cpu", "python"])
def test_an_attribute_of_an_op_says_it_is_an_op(where, rng):
    # said "Unknown attribute 'broadcast' of type Module(<numquad namespace ...>)",
    # as if Quad had no broadcast (thirtieth session)
    @xpu.jit
    def k(src, dst):
        i = xpu.grid(1)
        dst[i] = Quad.broadcast.x(src[i], 1)  # <- an op's attribute

    with pytest.raises(
        NumquadCompileError,
        match=r"Quad\.broadcast\.x: Quad\.broadcast is an op, which has no attribute 'x'; "
        r"call it: Quad\.broadcast\(value, index\)",
    ) as e:
        getattr(k, where)[1, 32](rng.random(32).astype(np.float32), np.zeros(32, np.float32))
    assert f"line {_line('<- an op' + chr(39) + 's attribute')}" in str(e.value)


def test_a_float16_local_array_is_refused_at_its_line():
    @xpu.jit
    def k(dst):
        i = cuda.grid(1)
        tmp = cuda.local.array(4, np.float16)  # <- float16
        tmp[0] = 1.0
        dst[i] = tmp[0]

    with pytest.raises(NumquadTypeError, match="a local array of float16: float16 is not supported") as e:
        k.cpu[1, 32](np.zeros(32, np.float32))
    assert f"line {_line('<- float16')}" in str(e.value)


def test_an_import_in_a_kernel_is_reported_at_its_line():
    @xpu.jit
    def k(dst):
        i = xpu.grid(1)
        import math  # <- import

        dst[i] = math.pi

    with pytest.raises(NumquadCompileError, match="import modules at the top of the file") as e:
        k.cpu[1, 32](np.zeros(32))
    assert f"line {_line('<- import')}" in str(e.value)


def test_a_name_read_before_any_assignment_is_one_numquad_error():
    @xpu.jit
    def k(dst):
        if t > 200:  # <- read first  # noqa: F821
            return
        t = xpu.threadIdx.x
        dst[t] = t

    with pytest.raises(NumquadTypeError, match="'t' is read before any assignment to it") as e:
        k.cpu[1, 32](np.zeros(32, np.int64))
    assert f"line {_line('<- read first')}" in str(e.value)
    assert "\x1b[" not in str(e.value) and "shadow" not in str(e.value)


@pytest.mark.parametrize("which", ["count", "and", "or"])
def test_debug_names_a_block_reduction_only_part_of_the_block_reaches(which):
    sync = getattr(xpu, f"syncthreads_{which}")

    @xpu.jit(debug=True)
    def k(out):
        t = xpu.threadIdx.x
        n = -1
        if t < 10:
            n = sync(np.int32(1))  # <- part of the block
        out[t] = n

    out = np.zeros(64, np.int64)
    with pytest.raises(
        NumquadRuntimeError,
        match=rf"xpu\.syncthreads_{which}\(\) reached by only part of "
        rf"the block",
    ) as e:
        k[1, 64](out)
    assert f"line {_line('<- part of the block')}" in str(e.value)

    @xpu.jit(debug=True)
    def whole(out):
        t = xpu.threadIdx.x
        out[t] = sync(np.int32(t < 10))

    whole[1, 64](out)
    want = {"count": 10, "and": 0, "or": 1}[which]
    np.testing.assert_array_equal(out, np.full(64, want))


def test_debug_names_a_block_reduction_in_a_loop_of_lane_varying_trips():
    @xpu.jit(debug=True)
    def k(out):
        t = xpu.threadIdx.x
        n = 0
        for q in range(t % 3):
            n += xpu.syncthreads_count(np.int32(1))
        out[t] = n

    with pytest.raises(NumquadRuntimeError, match=r"syncthreads_count\(\) reached by only part"):
        k[1, 64](np.zeros(64, np.int64))


def test_debug_names_a_shift_count_outside_0_to_63(rng):
    # undefined (LLVM poison): x86 masks the count to 6 bits, PTX clamps it; in a 2-D
    # launch the CPU gave 3 << 80 == 3 << 16, the python target 0 (docs/semantics.md)
    def k(a, c):
        r, s = cuda.grid(2)
        acc = a[r, s] + 0
        c[r, s] = acc << s * 20  # <- shift

    a = rng.integers(1, 9, (8, 8)).astype(np.int64)
    c = np.full((8, 8), -7, np.int64)
    with pytest.raises(
        NumquadRuntimeError,
        match=r"a shift by a count outside 0\.\.63 \(the count of "
        r"acc << s \* 20\)",
    ) as e:
        xpu.jit(debug=True)(k)[(1, 1), (8, 8)](a, c)
    assert f"line {_line('<- shift')}" in str(e.value)

    def ok(a, c):
        i = cuda.grid(1)
        c[i] = (a[i] << (i & 63)) >> 3

    x = rng.integers(-9, 9, 64).astype(np.int64)
    got = np.full(64, -7, np.int64)
    xpu.jit(debug=True)(ok)[1, 64](x, got)
    np.testing.assert_array_equal(got, (x << (np.arange(64) & 63)) >> 3)


def test_debug_names_the_line_of_a_division_by_zero(rng):
    # Numba's own check (its "python" error model) raised ZeroDivisionError with no
    # line of the kernel; the divisor is now checked where it stands
    def k(a, b, o):
        i = cuda.grid(1)
        if i < a.shape[0]:
            o[i] = a[i] % b[i]  # <- modulo

    def k2(a, b, o):
        i = cuda.grid(1)
        v = a[i]
        v //= b[i]  # <- floor division
        o[i] = v

    b = np.array([1.0, 0.0, 2.0, 3.0])
    with pytest.raises(
        ZeroDivisionError,
        match=rf"line {_line('<- modulo')}: division by zero "
        r"\(the divisor of a\[i\] % b\[i\]\)",
    ):
        xpu.jit(debug=True)(k)[1, 32](np.ones(4), b, np.zeros(4))
    with pytest.raises(ZeroDivisionError, match=rf"line {_line('<- floor division')}: division by zero"):
        xpu.jit(debug=True)(k2)[1, 4](np.arange(4), np.array([1, 2, 0, 3]), np.zeros(4, np.int64))
    # release builds: numba.cuda's release values (0 for integers), no error
    o = np.full(4, -7, np.int64)
    xpu.jit(k2)[1, 4](np.arange(4), np.array([1, 2, 0, 3]), o)
    np.testing.assert_array_equal(o, [0, 0, 0, 1])
    # debug with nonzero divisors: the values
    a, d = rng.integers(-50, 50, 32), rng.integers(1, 9, 32)
    o = np.full(32, -7, np.int64)
    xpu.jit(debug=True)(k2)[1, 32](a, d, o)
    np.testing.assert_array_equal(o, a // d)


def test_a_local_array_name_rebound_while_another_name_keeps_the_first_is_refused():
    # numba.cuda: two call sites, two arrays; the CPU target took one per name, so
    # b and the new a shared storage (o1 read -100..: b's writes)
    @xpu.jit
    def k(x, y, o1, o2):
        i = cuda.grid(1)
        a = cuda.local.array(4, np.float32)
        b = a
        a = cuda.local.array(4, np.float32)  # <- second
        a[0] = x[i]
        b[0] = y[i]
        o1[i] = a[0]
        o2[i] = b[0]

    x = np.arange(32, dtype=np.float32)
    with pytest.raises(NumquadCompileError, match="a is assigned two local arrays and another name keeps one") as e:
        k.cpu[1, 32](x, -x, np.zeros(32, np.float32), np.zeros(32, np.float32))
    assert f"line {_line('<- second')}" in str(e.value)


@cuda.jit(device=True)
def _bad_helper(v):
    return v.nonexistent_attr  # <- helper's line


def test_a_typing_error_in_a_device_function_names_that_function():
    @xpu.jit
    def kern(x, y):
        i = cuda.grid(1)
        if i < x.shape[0]:
            y[i] = _bad_helper(x[i])

    with pytest.raises(
        NumquadTypeError,
        match=rf"line {_line('<- helper' + chr(39) + 's line')}, in _bad_helper: "
        r"Unknown attribute 'nonexistent_attr'",
    ):
        kern.cpu[1, 32](np.zeros(2), np.zeros(2))


@xpu.jit(debug=True)
def _lane_shift(x, s):
    return x << s  # <- lane shift


@xpu.jit(debug=True)
def _lane_div(x, d):
    return x // d  # <- lane division


def test_debug_checks_reach_augmented_shifts_and_lane_functions_of_their_own(rng):
    # found by a probe: ``v <<= s`` and a lane function without ops (compiled on its
    # own, not inlined) went unchecked, and its division by zero named no line
    x = rng.integers(1, 9, 32).astype(np.int64)
    s = rng.integers(0, 8, 32).astype(np.int64)
    s[3] = 70
    with pytest.raises(NumquadRuntimeError, match=rf"line {_line('<- lane shift')}: a shift by a count outside"):
        _lane_shift(x, s)

    def k(x, s, out):
        i = cuda.grid(1)
        v = x[i]
        v <<= s[i]  # <- augmented
        out[i] = v

    with pytest.raises(NumquadRuntimeError, match=rf"line {_line('<- augmented')}: a shift by a count outside"):
        xpu.jit(debug=True)(k)[1, 32](x, s, np.zeros(32, np.int64))
    with pytest.raises(ZeroDivisionError, match=rf"line {_line('<- lane division')}: division by zero"):
        _lane_div(x, s * 0)
    s[3] = 5
    np.testing.assert_array_equal(_lane_shift(x, s), x << s)
    np.testing.assert_array_equal(_lane_div(x * 9, s + 1), (x * 9) // (s + 1))


def test_a_float_index_says_an_index_must_be_an_integer(rng):
    @xpu.jit
    def k(x, out):
        i = xpu.grid(1)
        out[i] = x[i * 0.5]  # <- float index

    with pytest.raises(
        NumquadTypeError,
        match=rf"line {_line('<- float index')}, in k: an array index must be an "
        r"integer .*; got float64",
    ):
        k.cpu[1, 32](rng.random(32), np.zeros(32))
