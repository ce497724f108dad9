"""A variable whose values have different Numba types, read across a cross-lane op.

Numba types each assignment of a variable on its own (its SSA versions); the CPU
target keeps a variable that lives across a cross-lane op in one lane array of the
types' unification. A value read back from it in a wider type computed in that type
(float32 arithmetic in float64, an int64 above 2**53 rounded through float64, ``~``
of a bool as an int, a store converting from the wide type): silent wrong bits. Such
a kernel is now compiled once more with a name per top-level assignment of the
variable (cpu/splitnames.py), which gives every version its own type; where a store
of the other type is nested in a branch or loop, the read is refused, naming the
variable and the line. A read whose result Numba types the same either way (an exact
widening under an operator with the same result type, an op's operand, an integer
index, a store that converts exactly) runs, with Numba's bits. The references are
plain ``numba.njit`` loops over the threads, with the op's result written in, or
the python target, where each value keeps its own type.
"""

import numpy as np
import numba
import pytest
from numba import cuda, literal_unroll

from numquad import xpu, Wave
from numquad.errors import NumquadCompileError, NumquadTypeError

FULL = np.uint32(0xFFFFFFFF)


def f32_then_f64(a, out):
    i = xpu.grid(1)
    x = np.float32(a[i])
    w = Wave.ballot(True)
    out[i] = x * np.float32(1.1) + w * 0  # <- read
    x = 2.5


def u32_then_i64(a, out):
    i = xpu.grid(1)
    x = np.uint32(a[i])
    w = Wave.ballot(True)
    out[i] = x - np.uint32(5) + w * 0  # <- read
    x = i


def i64_then_f64(a, out):
    i = xpu.grid(1)
    x = a[i] * 90071992547409 + 1
    w = Wave.ballot(True)
    out[i] = x + w * 0  # <- read
    x = 0.5


def bool_then_int(a, out):
    i = xpu.grid(1)
    b = a[i] > 3
    w = Wave.ballot(True)
    out[i] = ~b + w * 0  # <- read
    b = 7


@pytest.mark.parametrize("fn", [f32_then_f64, u32_then_i64, i64_then_f64, bool_then_int])
def test_a_top_level_reassignment_to_another_type_runs_with_numbas_bits(fn, target):
    # each top-level assignment of such a variable becomes a name of its own
    # (cpu/splitnames.py): every version keeps its own type, as in Numba. The
    # reference is the python target, where every value keeps its own type
    a = np.arange(-3, 61, dtype=np.int64) * 977
    out, want = np.full(64, np.nan), np.full(64, np.nan)
    getattr(xpu.jit(fn), target)[2, 32](a, out)
    xpu.jit(fn).python[2, 32](a, want)
    np.testing.assert_array_equal(out, want)


def f32_then_f64_under_a_branch(a, out):
    i = xpu.grid(1)
    x = np.float32(a[i])
    w = Wave.ballot(True)
    out[i] = x * np.float32(1.1) + w * 0  # <- read
    if a[i] > 1000:
        x = 2.5


def i64_then_f64_in_a_loop(a, out):
    i = xpu.grid(1)
    x = a[i] * 90071992547409 + 1
    for k in range(2):
        w = Wave.ballot(True)
        out[i] = x + w * 0  # <- read
    for k in range(2):
        x = 0.5


@pytest.mark.parametrize("fn", [f32_then_f64_under_a_branch, i64_then_f64_in_a_loop])
def test_a_read_in_a_wider_type_that_changes_the_result_is_refused(fn):
    # the other type's store is nested in a branch or loop: no top-level split
    import inspect

    lines, first = inspect.getsourcelines(fn)
    line = first + next(k for k, t in enumerate(lines) if "<- read" in t)
    a = np.arange(-3, 61, dtype=np.int64)
    with pytest.raises(NumquadTypeError, match=r"holds an? \w+ value here") as e:
        xpu.jit(fn)[2, 32](a, np.zeros(64, np.float64))
    assert f"line {line}" in str(e.value)


@xpu.jit
def butterfly(x, out):
    i = xpu.grid(1)
    v = x[i]  # int32, then int64 from the loop on
    for k in range(5):
        v = v + Wave.shuffleXor(v, 1 << k)
    out[i] = v


@xpu.jit
def accumulate(x, out):
    i = xpu.grid(1)
    s = 0  # int, then float64
    for k in range(4):
        s += Wave.shuffle(x[i], (i + k) & 31) * 0.5
    out[i] = s


@xpu.jit
def widen_then_use(x, out):
    i = xpu.grid(1)
    v = x[i]  # int32
    w = Wave.ballot(True)
    out[i] = v + np.int32(w & 1)  # int32 + int32 -> int64 in both types
    v = np.int64(w)


def test_exact_widenings_with_the_same_result_type_run_with_numbas_bits(rng):
    x = rng.integers(-(2**31), 2**31, 64).astype(np.int32)
    out = np.full(64, -7, np.int64)
    butterfly[2, 32](x, out)
    want = x.reshape(2, 32).astype(np.int64).sum(axis=1).repeat(32)  # a butterfly of sums
    np.testing.assert_array_equal(out, want)

    xf = rng.random(64)
    outf = np.full(64, np.nan)
    accumulate[2, 32](xf, outf)
    w = xf.reshape(2, 32)
    want = np.zeros((2, 32))
    for k in range(4):
        want += w[:, (np.arange(32) + k) & 31] * 0.5
    np.testing.assert_array_equal(outf, want.ravel())

    out = np.full(64, -7, np.int64)
    widen_then_use[2, 32](x, out)

    @numba.njit
    def ref(x, out):
        for i in range(x.size):
            v = x[i]
            w = np.uint32(0xFFFFFFFF)
            out[i] = v + np.int32(w & 1)
            v = np.int64(w)

    want = np.full(64, -7, np.int64)
    ref(x, want)
    np.testing.assert_array_equal(out, want)


# A version read where the wide type would change more than arithmetic (found by a
# probe with its own wave model): a value stored into an array of another dtype
# converts from the wide type (an int32 into a uint32 array wraps in Numba and
# saturates from a float64; a float32 NaN into an int32 array is 0, a float64 NaN
# -2**31), and an index or a selector of a float type is no index. Each gave wrong
# bits without an error, or an error naming numquad's internals.


def int_into_uint_array(x, o, f):
    i = xpu.grid(1)
    v = x[i]
    t = Wave.shuffleXor(v, 1)
    o[i] = v  # <- read
    v = v * 0.5 + t
    f[i] = v


def ballot_into_int_array(x, o, f):
    i = xpu.grid(1)
    b = Wave.ballot(x[i] > 0)
    c = Wave.countBits(x[i] > 0)
    o[i] = b  # <- read
    b = b / 32.0 + c
    f[i] = b


def literal_into_uint_array(x, o, f):
    i = xpu.grid(1)
    k = -1
    s = Wave.reduceMax(x[i])
    o[i] = k  # <- read
    k = s * 2.0
    f[i] = k


def float32_nan_into_int_array(x, o, f):
    i = xpu.grid(1)
    v = np.float32(x[i]) * np.float32(np.nan)
    t = Wave.shuffleXor(v, 1)
    o[i] = v  # <- read
    v = 3
    f[i] = v + t


def index_after_an_op(x, o, f):
    i = xpu.grid(1)
    v = np.int32(x[i] & 31)
    t = Wave.shuffleXor(x[i], 1)
    o[i] = x[v]  # <- read
    v = v * 0.5 + t
    f[i] = v


def selector_after_an_op(x, o, f):
    i = xpu.grid(1)
    d = np.int32(x[i] & 31)
    t = Wave.shuffleXor(x[i], 1)
    o[i] = Wave.shuffle(x[i], d)  # <- read
    d = d * 0.5 + t
    f[i] = d


def array_then_scalar(x, o, f):
    i = xpu.grid(1)
    v = x
    v = v[i]
    s = Wave.reduceSum(v)  # <- read
    o[i] = v + s
    f[i] = s


@pytest.mark.parametrize(
    "fn, odtype",
    [
        (int_into_uint_array, np.uint32),
        (ballot_into_int_array, np.int32),
        (literal_into_uint_array, np.uint32),
        (float32_nan_into_int_array, np.int32),
        (index_after_an_op, np.int32),
        (selector_after_an_op, np.int32),
        (array_then_scalar, np.int32),
    ],
)
def test_a_store_index_or_selector_after_a_top_level_reassignment_gets_numbas_bits(fn, odtype, target, rng):
    x = rng.integers(-(2**31), 2**31, 64).astype(np.int32)
    o, f = np.full(64, 7, odtype), np.full(64, np.nan)
    getattr(xpu.jit(fn), target)[2, 32](x, o, f)
    wo, wf = np.full(64, 7, odtype), np.full(64, np.nan)
    xpu.jit(fn).python[2, 32](x, wo, wf)
    np.testing.assert_array_equal(o, wo)
    np.testing.assert_array_equal(f, wf)


def int_into_uint_array_under_a_branch(x, o, f):
    i = xpu.grid(1)
    v = x[i]
    t = Wave.shuffleXor(v, 1)
    o[i] = v  # <- read
    if t > 0:
        v = v * 0.5 + t
    f[i] = v


def index_after_an_op_in_a_loop(x, o, f):
    i = xpu.grid(1)
    v = np.int32(x[i] & 31)
    t = Wave.shuffleXor(x[i], 1)
    o[i] = x[v]  # <- read
    for k in range(1):
        v = v * 0.5 + t
    f[i] = v


@pytest.mark.parametrize("fn", [int_into_uint_array_under_a_branch, index_after_an_op_in_a_loop])
def test_a_store_or_index_that_the_wide_type_would_change_is_refused(fn, rng):
    # a store converting from the wide type (an int32 into a uint32 array wraps in
    # Numba and saturates from a float64), or a float index: refused where the other
    # type's store is nested, so that no split separates them
    import inspect

    lines, first = inspect.getsourcelines(fn)
    line = first + next(k for k, t in enumerate(lines) if "<- read" in t)
    x = rng.integers(-(2**31), 2**31, 64).astype(np.int32)
    o, f = np.full(64, 7, np.uint32), np.full(64, np.nan)
    with pytest.raises(NumquadTypeError, match=r"holds an? \w+ value here and values of other types") as e:
        xpu.jit(fn)[2, 32](x, o, f)
    assert f"line {line}" in str(e.value)
    assert (o == 7).all()


def store_of_the_own_dtype(x, o, f):
    i = xpu.grid(1)
    v = x[i]
    t = Wave.shuffleXor(v, 1)
    o[i] = v  # int32 into int32: the same from float64
    f[i] = v  # int32 into float64: exact
    v = v * 0.5 + t
    f[i] += v


def test_a_store_that_converts_exactly_from_either_type_runs(rng):
    x = rng.integers(-(2**31), 2**31, 64).astype(np.int32)
    o, f = np.full(64, 7, np.int32), np.full(64, np.nan)
    xpu.jit(store_of_the_own_dtype)[2, 32](x, o, f)
    t = x.reshape(2, 32)[:, np.arange(32) ^ 1].ravel()
    np.testing.assert_array_equal(o, x)
    np.testing.assert_array_equal(f, x + (x * 0.5 + t))


@xpu.jit
def _lane_with_two_types(x):
    v = np.float32(x)
    w = Wave.ballot(True)
    r = v * np.float32(1.1) + w * 0  # <- callee read
    v = 2.5
    return r + v


def calls_the_lane_function(a, out):
    i = xpu.grid(1)
    out[i] = _lane_with_two_types(a[i])


def test_an_inlined_lane_functions_local_is_checked_and_named_in_its_function(rng):
    # its local was renamed for the inlining (numquad's reserved names), which the
    # check passed over: float32 arithmetic done in float64, silently
    import inspect

    lines, first = inspect.getsourcelines(_lane_with_two_types.py_func)
    line = first + next(k for k, t in enumerate(lines) if "<- callee read" in t)
    a = (rng.random(64) * 100).astype(np.float32)
    out = np.full(64, np.nan)
    with pytest.raises(NumquadTypeError, match=rf"line {line}, in _lane_with_two_types: 'v' holds a float32 "):
        xpu.jit(calls_the_lane_function)[2, 32](a, out)
    assert np.isnan(out).all()


def split_then_loop(x, out, out2):
    i = xpu.grid(1)
    v = x[i]  # float32
    s = Wave.reduceSum(v)
    out[i] = v * v + s  # float32 arithmetic
    v *= 0.5  # float64 from here: a name of its own
    for k in range(3):
        v = v + Wave.shuffleXor(v, 1 << k)  # stores in the loop stay with that name
    out2[i] = v


def parameter_reassigned(x, n, out, out2):
    i = xpu.grid(1)
    w = Wave.ballot(x[i] > 0.5)
    out[i] = n // 3 + w % 2  # n the int64 argument
    n = n * 0.5  # float64
    out2[i] = n + Wave.reduceMax(x[i])


def test_a_split_keeps_loops_and_parameters_exact(target, rng):
    x = rng.random(96).astype(np.float32)
    out, out2 = np.full(96, np.nan, np.float32), np.full(96, np.nan)
    getattr(xpu.jit(split_then_loop), target)[3, 32](x, out, out2)
    w1, w2 = np.full(96, np.nan, np.float32), np.full(96, np.nan)
    xpu.jit(split_then_loop).python[3, 32](x, w1, w2)
    np.testing.assert_array_equal(out, w1)
    np.testing.assert_array_equal(out2, w2)

    o1, o2 = np.full(96, -1, np.int64), np.full(96, np.nan)
    getattr(xpu.jit(parameter_reassigned), target)[3, 32](x, 2**53 + 1, o1, o2)
    p1, p2 = np.full(96, -1, np.int64), np.full(96, np.nan)
    xpu.jit(parameter_reassigned).python[3, 32](x, 2**53 + 1, p1, p2)
    np.testing.assert_array_equal(o1, p1)
    np.testing.assert_array_equal(o2, p2)
    # (and against NumPy: n // 3 of the int64, exactly)
    assert (o1 - (2**53 + 1) // 3 >= 0).all() and (o1 - (2**53 + 1) // 3 <= 1).all()


# Found by a probe of the split with its own njit model (twenty-ninth session).


def nested_versions(x, out):
    i = xpu.grid(1)
    v = x[i] > 0  # bool
    v = not v  # bool (Numba's SSA name v.1)
    if i % 2 == 0:
        v = v + 1  # int64 (v.1.1): v is int64 after the if
    s = Wave.shuffleXor(i, 1)
    out[i] = ~v + s


def test_versions_with_nested_ssa_names_are_seen(target, rng):
    # Numba names a version stored under a branch after a top-level one ``v.1.1``: the
    # check read one ``.N`` only, so the int64 versions were not seen and ``~v`` was a
    # bool's ~ (1, 0 where Numba gives -1, -2)
    x = rng.standard_normal(64).astype(np.float32)
    out = np.full(64, -999, np.int64)
    getattr(xpu.jit(nested_versions), target)[2, 32](x, out)
    lane = np.arange(64) % 32
    v = (~(x > 0)).astype(np.int64) + (lane % 2 == 0)
    np.testing.assert_array_equal(out, ~v + (np.arange(64) ^ 1))


def unrolled_butterfly(x, y, out):
    i = xpu.grid(1)
    v = x[i]  # float32 before the loop
    for k in range(5):  # k reaches the selector: written out copy by copy
        v = v * 0.5 + Wave.shuffleXor(v, 1 << k) * y[i]  # float64 in Numba's loop
    out[i] = v


def unrolled_tuple_loop(x, out):
    i = xpu.grid(1)
    v = x[i] > 0
    for m in (1,):
        w = Wave.shuffleXor(v, m)
        out[i] = ~w
        v = v + 1  # int64: Numba's w is an int64 in the loop


def test_a_loop_over_constants_types_its_variables_as_numba_types_the_loop(target, rng):
    # the CPU target writes such a loop out copy by copy, and typed each copy on its own
    # (float32 arithmetic in the first, where Numba's loop is float64 throughout); it now
    # runs the loop as a loop where a variable stored in it changes type
    @numba.njit
    def step(v, s, yv):
        return v * 0.5 + s * yv

    x = rng.standard_normal(64).astype(np.float32)
    y = rng.standard_normal(64).astype(np.float32)
    out = np.full(64, np.nan, np.float32)
    getattr(xpu.jit(unrolled_butterfly), target)[2, 32](x, y, out)
    v = x.astype(np.float64)
    for k in range(5):
        s = v[np.arange(64) ^ (1 << k)]
        v = np.array([step(v[j], s[j], y[j]) for j in range(64)])
    np.testing.assert_array_equal(out, v.astype(np.float32))

    o = np.full(64, -999, np.int64)
    getattr(xpu.jit(unrolled_tuple_loop), target)[2, 32](x, o)
    np.testing.assert_array_equal(o, ~(x[np.arange(64) ^ 1] > 0).astype(np.int64))


def escaping_loop(x, out):
    i = xpu.grid(1)
    v = x[i]
    acc = np.float32(0)
    for c in (1, 2):  # a lane may return: segmented as around an op
        if i == 1000:
            return
        acc = acc + v * v
        v = v * 0.5
    out[i] = acc


def test_a_loop_a_lane_may_leave_types_as_numba_types_it(rng):
    x = (rng.standard_normal(64) * 3).astype(np.float32)
    out = np.full(64, np.nan, np.float32)
    xpu.jit(escaping_loop)[2, 32](x, out)
    want = np.full(64, np.nan, np.float32)
    for i in range(64):
        v, acc = np.float64(x[i]), np.float64(0)  # float64 from the first iteration on
        for c in (1, 2):
            acc = acc + v * v
            v = v * 0.5
        want[i] = acc
    np.testing.assert_array_equal(out, want)


def literal_unroll_retyped(x, out):
    i = xpu.grid(1)
    v = x[i]
    acc = np.float32(0)
    for c in literal_unroll((1, 2)):
        acc = acc + v * v
        v = v * 0.5
    out[i] = acc


def test_a_literal_unroll_loop_whose_variable_changes_type_is_refused(rng):
    # written out once per element, each copy typed on its own, where Numba types the
    # loop once: float32 arithmetic in the first copy (9 of 64 threads differed)
    with pytest.raises(
        NumquadTypeError,
        match=r"'(acc|v)' holds values of several types in or around a "
        r"literal_unroll loop",
    ):
        xpu.jit(literal_unroll_retyped)[2, 32](rng.random(64).astype(np.float32), np.zeros(64, np.float32))


def first_store_nested(x, o1, o2):
    i = xpu.grid(1)
    if i < 40:
        v = x[i]  # float32, under a branch
    s = Wave.shuffleXor(v, 1)
    o1[i] = v * v + s
    v = i * 0.5  # the first top-level store: a name of its own
    o2[i] = v * s


def two_blockers(x, y, o1, o2):
    i = xpu.grid(1)
    a = x[i]
    s = Wave.shuffleXor(a, 1)
    o1[i] = a * a + s  # fixed by the split of a
    a = a * 0.5
    w = y[i]
    t = Wave.shuffleXor(w, 2)
    if i % 2:
        w = w * w * 0.5  # nested: no split separates it
    o2[i] = a * a + t * w  # <- blocker


def test_a_first_nested_store_splits_and_the_error_names_what_still_blocks(rng):
    x = rng.random(64).astype(np.float32)
    o1, o2 = np.full(64, np.nan, np.float32), np.full(64, np.nan)
    xpu.jit(first_store_nested)[2, 32](x, o1, o2)
    xv = np.where(np.arange(64) < 40, x, np.float32(0))  # unassigned: 0
    s = xv[np.arange(64) ^ 1]
    np.testing.assert_array_equal(o1, xv * xv + s)
    np.testing.assert_array_equal(o2, np.arange(64) * 0.5 * s.astype(np.float64))

    with pytest.raises(NumquadTypeError, match=r"'w' holds a float32 value here") as e:
        xpu.jit(two_blockers)[2, 32](x, x, np.zeros(64, np.float32), np.zeros(64, np.float32))
    assert "__" not in str(e.value).split(":")[2]


def widening_sum_loop(x, out):
    i = xpu.grid(1)
    v = x[i]  # int16
    for m in (1, 2):
        v = Wave.reduceSum(v) * 2  # int64: Numba's loop sums int64 from the first pass
    out[i] = v


def widening_abs_loop(x, out):
    i = xpu.grid(1)
    v = x[i]  # int16
    for m in (1, 2):
        v = abs(v) * 2 + Wave.shuffleXor(v, m)
    out[i] = v


def test_a_loop_over_constants_widening_an_integer_sums_in_the_wide_type(target, rng):
    # found by a probe: int16 -> int64 (one signedness) was left written out copy by
    # copy, and the first copy's sum wrapped in int16 (-1141248 for 7247360)
    x = rng.integers(-32768, 32768, 64).astype(np.int16)
    out = np.full(64, -1, np.int64)
    getattr(xpu.jit(widening_sum_loop), target)[2, 32](x, out)
    v = x.astype(np.int64).reshape(2, 32)
    for m in (1, 2):
        v = np.repeat(v.sum(axis=1, keepdims=True), 32, axis=1) * 2
    np.testing.assert_array_equal(out, v.ravel())

    x[0::2] = -32768
    out = np.full(64, -1, np.int64)
    getattr(xpu.jit(widening_abs_loop), target)[2, 32](x, out)  # was refused
    lane = np.arange(64) % 32
    v = x.astype(np.int64)
    for m in (1, 2):
        v = np.abs(v) * 2 + v[(np.arange(64) - lane) + (lane ^ m)]
    np.testing.assert_array_equal(out, v)


def negated_narrow(x, o):
    i = xpu.grid(1)
    v = x[i]  # uint16
    s = Wave.reduceSum(v)
    o[i] = -v + s * 0  # Numba negates in uint16 and widens: 65535 for 1
    v += np.uint8(7)  # int64 from here


def test_a_unary_minus_of_a_narrow_integer_version_wraps_as_in_numba(target, rng):
    # found by a probe's random kernels: the result type (int64) is the same either
    # way, but Numba computes -x in x's own type: -uint16(1) is 65535, not -1
    x = rng.integers(0, 2**16, 64).astype(np.uint16)
    o = np.full(64, -7, np.int64)
    getattr(xpu.jit(negated_narrow), target)[2, 32](x, o)
    np.testing.assert_array_equal(o, (-x).astype(np.int64))


def view_again_after_barrier(x, o1, o2):
    i = xpu.grid(1)
    row = x[i % x.shape[0], :]
    o1[i] = row[1]
    xpu.syncwarp()
    row = x[(i + 1) % x.shape[0], :]  # the first view is dead here
    o2[i] = row[2] + Wave.reduceSum(row[0])


def view_read_after_op(x, o1, o2):
    i = xpu.grid(1)
    row = x[i % x.shape[0], :]
    if i % 3 == 0:
        row = x[(i + 2) % x.shape[0], :]
    o1[i] = Wave.reduceSum(row[1])
    o2[i] = row[0]  # <- a lane-varying view read across the op


def test_a_view_assigned_again_at_the_top_level_is_split(target, rng):
    # found by a probe of the fast paths: a lane-varying view whose name is assigned
    # again after a barrier was refused as "lives across a cross-lane op"; numba.cuda
    # runs it. Split at its top-level assignments, each view lives in its own region.
    x = rng.integers(-1000, 1000, (7, 3)).astype(np.int64)
    o1, o2 = np.full(40, -9, np.int64), np.full(40, -9, np.int64)
    getattr(xpu.jit(view_again_after_barrier), target)[1, 40](x, o1, o2)
    i = np.arange(40)
    np.testing.assert_array_equal(o1, x[i % 7, 1])
    nxt = (i + 1) % 7
    wave_sum = np.array([x[nxt[i < 32], 0].sum(), x[nxt[i >= 32], 0].sum()])[i // 32]
    np.testing.assert_array_equal(o2, x[nxt, 2] + wave_sum)


def test_a_view_read_across_an_op_is_still_refused_at_its_first_line(rng):
    x = rng.integers(-1000, 1000, (7, 3)).astype(np.int64)
    o = np.zeros(40, np.int64)
    with pytest.raises(
        NumquadCompileError,
        match=r"line \d+: row \(array\(int64, 1d, C\)\) is an array that "
        r"differs from lane to lane",
    ) as e:
        xpu.jit(view_read_after_op)[1, 40](x, o, o.copy())
    assert f"line {view_read_after_op.__code__.co_firstlineno + 2}:" in str(e.value)


def mask_per_branch(a, out, out2):
    # found by a probe: numba.cuda types `m` per branch (uint32, then int64); named
    # nowhere else, each branch's `m` becomes a variable of its own (cpu/splitnames.py)
    i = xpu.grid(1)
    v = a[i]
    if v % 2 == 0:
        m = cuda.activemask()  # uint32
        w = cuda.shfl_xor_sync(m, v, 0)
        out[i] = w * 100 + cuda.popc(m)  # m read after the cross-lane op
    else:
        m = 0xAAAAAAAA  # int64
        out[i] = cuda.popc(m)
    for k in range(2):
        if k == 1:
            q = np.float32(v) * np.float32(0.1)  # float32 here
            out2[i] = q + Wave.reduceSum(np.float32(1))
        else:
            q = v * 3  # int64 there
            out2[i] = q + Wave.ballot(True) * 0


def test_a_variable_of_another_type_in_each_branch_is_a_variable_per_branch(target, rng):
    a = rng.integers(0, 1000, 96).astype(np.int64)
    out, out2 = np.full(96, -1, np.int64), np.full(96, np.nan, np.float64)
    getattr(xpu.jit(mask_per_branch), target)[1, 96](a, out, out2)
    even = a % 2 == 0
    per_wave = np.repeat(even.reshape(3, 32).sum(axis=1), 32)  # the lanes in the branch
    np.testing.assert_array_equal(out, np.where(even, a * 100 + per_wave, 16))
    np.testing.assert_array_equal(out2, (a.astype(np.float32) * np.float32(0.1) + np.float32(32)).astype(np.float64))
    want, want2 = np.full(96, -1, np.int64), np.full(96, np.nan, np.float64)
    xpu.jit(mask_per_branch).python[1, 96](a, want, want2)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(out2, want2)


def param_to_2d_view(x, out):
    # found by a probe: a 1-D parameter rebound to a 2-D view with barriers after it
    # was Numba's "Cannot unify array(int64, 1d, C) and array(int64, 2d, C)"
    tid = cuda.threadIdx.x
    v = x[cuda.grid(1)]
    cuda.syncthreads()
    x = out[cuda.blockIdx.x]
    x[tid, 0] = v
    cuda.syncthreads()
    x[tid, 1] = v + Wave.reduceSum(v)


def test_a_parameter_rebound_to_an_array_of_another_rank_across_barriers(target, rng):
    x = rng.integers(-99, 99, 128).astype(np.int64)
    out = np.full((2, 64, 2), -7, np.int64)
    getattr(xpu.jit(param_to_2d_view), target)[2, 64](x, out)
    sums = np.repeat(x.reshape(-1, 32).sum(axis=1), 32)
    np.testing.assert_array_equal(out[:, :, 0], x.reshape(2, 64))
    np.testing.assert_array_equal(out[:, :, 1], (x + sums).reshape(2, 64))
