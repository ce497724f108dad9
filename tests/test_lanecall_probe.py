"""What a day-one probe of lane calls and signatures found (twentieth session):
a read-only input to a kernel declared with a signature met Numba's raw
TypeError, an op's type error in a lane function called on arrays named the
decorator's line, a Python int too large for any integer said "which object cannot
hold", and ``out=`` of an ndarray subclass (``np.matrix``) failed inside the
generated wrapper. Expected values come from NumPy; outputs are poisoned first.
"""

import numpy as np
import pytest

from numquad import NumquadTypeError, Wave, xpu


def _launch(kernel, target, *config):
    """*kernel* configured on *target*: "cpu", "python" or "cpu-debug" (a debug build)."""
    if target == "cpu-debug":
        return xpu.jit(debug=True)(kernel.py_func).cpu[config]
    return getattr(kernel, target)[config]


@xpu.jit("void(float32[::1], float32[::1])")
def _twice(x, out):
    i = xpu.grid(1)
    if i < x.size:
        out[i] = x[i] * 2


def test_a_read_only_input_of_a_declared_kernel(rng):
    x = rng.standard_normal(40).astype(np.float32)
    x.flags.writeable = False
    out = np.full(40, np.nan, np.float32)
    _twice[1, 64](x, out)
    np.testing.assert_array_equal(out, x * 2)


@xpu.jit
def _bad_scan(v):
    a = v + 1
    b = a * 2
    c = Wave.prefixAnd(b)  # the line the error names
    return c


def test_an_op_type_error_in_a_lane_call_names_the_op_line():
    line = _bad_scan.py_func.__code__.co_firstlineno + 4  # (the decorator's line first)
    with pytest.raises(
        NumquadTypeError,
        match=rf"line {line}, in _bad_scan: Wave.prefixAnd\(value\): "
        r"argument 'value' got float64",
    ):
        _bad_scan(np.arange(40, dtype=np.float32))


@xpu.jit
def _add(x, y):
    return x + y


def test_a_python_int_past_every_integer_type_says_so():
    with pytest.raises(
        NumquadTypeError,
        match=r"the Python int 1180591620717411303424, which fits "
        r"neither int64 nor uint64",
    ):
        _add(np.arange(4, dtype=np.float32), 2**70)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_out_of_an_ndarray_subclass(rng):
    a = rng.integers(-100, 100, (1, 10))
    m = np.matrix(np.full((1, 10), -99, np.int64))
    r = _add(a, a, out=m)
    assert r is m
    np.testing.assert_array_equal(np.asarray(m), a + a)


def _body(x, y):
    return x + Wave.prefixSum(y)


@pytest.mark.slow
def test_two_dispatchers_of_one_function_keep_the_lane_call_source():
    # the wrappers of both share a file name; dropping the second deleted the source
    # the first needed for a new argument type ("xpu.jit needs the function's source")
    import gc

    first = xpu.jit(_body)
    f32 = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(first(f32, f32), [0, 1, 3, 6])
    second = xpu.jit(debug=True)(_body)
    np.testing.assert_array_equal(second(f32, f32), [0, 1, 3, 6])
    del second
    gc.collect()
    f64 = np.arange(4, dtype=np.float64)
    r = first(f64, f64)
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r, [0, 1, 3, 6])


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_range_of_an_unsigned_start_and_a_negative_stop(target):
    # Numba counts range(uint32, -3, -1) in int64; the python target took uint64 for any
    # unsigned argument and raised OverflowError at -1
    @xpu.jit
    def k(out):
        i = xpu.grid(1)
        acc = np.int64(0)
        for j in range(Wave.laneId(), -3, -1):
            acc += j
        n = np.int64(0)
        for j in range(np.uint8(i % 5), np.int32(4)):  # int32, as Numba types it
            n += j
        out[i] = acc * 100 + n

    out = np.full(32, -1, np.int64)
    getattr(k, target)[1, 32](out)
    want = [sum(range(i, -3, -1)) * 100 + sum(range(i % 5, 4)) for i in range(32)]
    np.testing.assert_array_equal(out, want)


@xpu.jit
def _more(x):
    return Wave.any(x > 3)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["python", "cpu", "cpu-debug"])
def test_a_lane_function_as_a_while_test(target, rng):
    # the CPU target refused it ("calling it from another kernel is not supported"),
    # naming the lane function's def line
    @xpu.jit
    def k(a, out):
        i = xpu.grid(1)
        x = a[i]
        n = np.int64(0)
        while _more(x):
            x = x // 2
            n += 1
            if n > 100:
                break
        out[i] = x * 1000 + n

    a = rng.integers(0, 1000, 64)
    out = np.full(64, -1, np.int64)
    _launch(k, target, 2, 32)(a, out)
    want = []
    for w in range(2):
        xs = a[w * 32 : (w + 1) * 32].copy()
        n = 0
        while (xs > 3).any():
            xs //= 2
            n += 1
        want += [x * 1000 + n for x in xs]
    np.testing.assert_array_equal(out, want)
    assert "shfl.sync" in k.inspect_ptx("void(int64[:], int64[:])", cc=(9, 0)) or "vote.sync" in k.inspect_ptx(
        "void(int64[:], int64[:])", cc=(9, 0)
    )


@xpu.jit
def _scan_into(loc, x):
    loc[0] = Wave.prefixSum(x)
    return loc[0] + loc[1]


@pytest.mark.slow
@pytest.mark.parametrize("target", ["python", "cpu", "cpu-debug"])
def test_a_local_array_passed_to_a_lane_function_under_a_branch(target, rng):
    # the CPU target refused it: "loc ... is an array that differs from lane to lane
    # and lives across a cross-lane op" (it copied the argument into a new name)
    @xpu.jit
    def k(a, out):
        i = xpu.grid(1)
        loc = xpu.local.array(2, np.int64)
        loc[0] = a[i]
        loc[1] = 2 * a[i]
        if a[i] % 3 == 0:
            out[i] = _scan_into(loc, a[i])
        else:
            out[i] = loc[1]

    a = rng.integers(0, 100, 64)
    out = np.full(64, -1, np.int64)
    _launch(k, target, 2, 32)(a, out)
    want = 2 * a
    for w in range(2):
        s = 0
        for i in range(w * 32, (w + 1) * 32):
            if a[i] % 3 == 0:  # the scan runs over these lanes, in order
                want[i] = s + 2 * a[i]
                s += a[i]
    np.testing.assert_array_equal(out, want)


def test_a_lane_call_of_a_function_with_keyword_only_parameters_or_star_args_says_so():
    # "scale(x, s) takes 2 arguments; got 1" and "add_all(a) takes 1 arguments; got 2"
    @xpu.jit
    def scale(x, *, s=2):
        return x * s

    @xpu.jit
    def add_all(*a):
        return a[0] + a[1]

    x = np.arange(4)
    with pytest.raises(
        NumquadTypeError,
        match=r"scale \(defined at line \d+\) has keyword-only "
        r"parameter\(s\) s; a lane function called on arrays "
        r"takes positional parameters only",
    ):
        scale(x)
    with pytest.raises(NumquadTypeError, match=r"add_all \(defined at line \d+\) has \*args"):
        add_all(x, x)


@xpu.jit
def _first_big(v):
    # returns from inside two nested loops, around cross-lane ops
    for j in range(3):
        for k in range(2):
            if v > 10 + k:
                return v + Wave.countBits(True) * 100 + j * 10 + k
            v = v + Wave.prefixSum(v) % 7
    while v < 50:
        if v % 5 == 0:
            return -v
        v += 1 + Wave.countBits(v > 0) % 3
    return v


def _first_big_ref(vs):
    """_first_big over one wave's values, lane by lane in lock step (plain Python)."""
    vs = [int(v) for v in vs]
    out = [None] * len(vs)
    active = list(range(len(vs)))
    for j in range(3):
        for k in range(2):
            takers = [lane for lane in active if vs[lane] > 10 + k]  # the op's lanes
            for lane in takers:
                out[lane] = vs[lane] + len(takers) * 100 + j * 10 + k
                active.remove(lane)
            prefix = 0
            for lane in active:
                vs[lane], prefix = vs[lane] + prefix % 7, prefix + vs[lane]
    while True:
        active = [lane for lane in active if vs[lane] < 50 or out.__setitem__(lane, vs[lane])]
        if not active:
            break
        for lane in list(active):
            if vs[lane] % 5 == 0:
                out[lane] = -vs[lane]
                active.remove(lane)
        bits = sum(vs[lane] > 0 for lane in active)
        for lane in active:
            vs[lane] += 1 + bits % 3
    return out


@pytest.mark.slow
@pytest.mark.parametrize("target", ["python", "cpu", "cpu-debug", "array-call"])
def test_a_return_inside_loops_of_an_inlined_lane_function(target, rng):
    # the CPU target refused it ("a return inside a loop of a lane function with
    # cross-lane ops cannot be inlined")
    @xpu.jit
    def k(a, out):
        i = xpu.grid(1)
        out[i] = _first_big(a[i])

    a = rng.integers(0, 14, 64)
    out = np.full(64, -999, np.int64)
    if target == "array-call":
        out = _first_big(a)
    else:
        _launch(k, target, 2, 32)(a, out)
    want = _first_big_ref(a[:32]) + _first_big_ref(a[32:])
    np.testing.assert_array_equal(out, want)


def test_the_python_target_prints_tuples_as_numba_cuda(capsys):
    # it printed (np.int64(1), np.int64(2), np.int64(3)) (NumPy 2's repr of its scalars)
    @xpu.jit
    def k(t):
        print(t)
        print((t[0],), (1.5, np.int32(2)))

    k.python[1, 1]((1, 2, 3))
    assert capsys.readouterr().out == "(1, 2, 3)\n(1,) (1.5, 2)\n"


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_max_of_mixed_signs_and_not_of_a_bool_follow_numbas_types(target):
    # the python target compared max(int64, uint64) exactly (Numba: in float64) and took
    # `not b` as Python's bool, a weak scalar for NumPy ((not b) - u16 in uint16)
    @xpu.jit
    def k(a, u, b, u16, out_i, out_u, out_f):
        i = xpu.grid(1)
        out_i[i] = max(a[i], u[i])
        out_u[i] = min(u[i], a[i])
        out_f[i] = (not b[i]) - u16[i]

    a = np.array([-1, -5], np.int64)
    u = np.array([2**64 - 1, 2**63 + 7], np.uint64)
    b = np.array([True, False])
    u16 = np.array([25, 36], np.uint16)
    oi, ou, of = np.zeros(2, np.int64), np.zeros(2, np.uint64), np.zeros(2)
    getattr(k, target)[1, 2](a, u, b, u16, oi, ou, of)
    # float64 results stored: 2**64 - 1 and 2**63 + 7 round to 2**64 and 2**63; into
    # int64 they saturate, and the minima -1.0 and -5.0 into uint64 saturate to 0
    # (docs/semantics.md "Conversions")
    np.testing.assert_array_equal(oi, [2**63 - 1, 2**63 - 1])
    np.testing.assert_array_equal(ou, [0, 0])
    np.testing.assert_array_equal(of, [-25.0, -35.0])


# -- Numba's types for globals, closures, `/` and divmod (a probe, twenty-third
# session: the python target took a global Python scalar as NumPy 2's weak scalar,
# divided float32 by uint16 in float32 and divmod-ed uint64 by int64 in integers;
# the compiled targets, Numba and numba.cuda's PTX compute in float64/int64) --------

SCALE = 0.1
OFF = 100
PAIR = (0.1, 100)


def _typed_kernel(scale_closure):
    @xpu.jit
    def k(x, i8, u16, u64, s64, o):
        i = xpu.grid(1)
        if i < x.size:
            o[0, i] = x[i] * SCALE  # a global float: float64
            o[1, i] = i8[i] + OFF  # a global int: int64
            o[2, i] = x[i] * PAIR[0] + (i8[i] + PAIR[1])
            o[3, i] = x[i] * scale_closure  # a closure's float
            o[4, i] = x[i] / u16[i]  # float32 / uint16: float64
            q, r = divmod(u64[i], s64[i])  # uint64 with int64: float64
            o[5, i] = q
            o[6, i] = r

    return k


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
def test_globals_division_and_divmod_take_numbas_types(target, rng):
    n = 40
    x = rng.standard_normal(n).astype(np.float32)
    i8 = rng.integers(-128, 128, n).astype(np.int8)
    u16 = rng.integers(0, 2**16, n).astype(np.uint16)
    u16[:3] = (3, 7, 0)
    u64 = rng.integers(0, 2**64, n, dtype=np.uint64)
    s64 = rng.integers(-(2**62), 2**62, n, dtype=np.int64)
    s64[:2] = (0, 2)
    o = np.full((7, n), -7.5)
    if target == "cpu-debug":
        # debug=True divides with Numba's python error model, as numba.cuda's debug
        # build (docs/semantics.md): a zero divisor raises there
        with pytest.raises(ZeroDivisionError):
            _launch(_typed_kernel(0.1), target, 1, 64)(x, i8, u16, u64, s64, o)
        u16[2], s64[0] = 5, 3
    _launch(_typed_kernel(0.1), target, 1, 64)(x, i8, u16, u64, s64, o)
    xd = x.astype(np.float64)
    np.testing.assert_array_equal(o[0], xd * 0.1)
    np.testing.assert_array_equal(o[1], i8.astype(np.int64) + 100)
    np.testing.assert_array_equal(o[2], xd * 0.1 + (i8.astype(np.int64) + 100))
    np.testing.assert_array_equal(o[3], xd * 0.1)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(o[4], xd / u16.astype(np.float64))
        a, b = u64.astype(np.float64), s64.astype(np.float64)
        np.testing.assert_array_equal(o[5], np.floor_divide(a, b))
        np.testing.assert_array_equal(o[6], np.remainder(a, b))


@xpu.jit
def k_chains_round_div(s, u, i8, b, o_chain, o_div, o_round):
    i = xpu.grid(1)
    if i < s.size:
        o_chain[0, i] = s[i] == u[i] == u[i]  # a chain: each link as Numba compares
        o_chain[1, i] = s[i] < u[i] <= u[i]
        o_div[i] = u[i] / s[i]  # each operand to float64
        o_round[0, i] = round(s[i])  # an integer rounds through a float
        o_round[1, i] = round(i8[i])
        o_round[2, i] = round(b[i])


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
def test_chains_integer_division_and_round_of_integers_follow_numba(target, rng):
    # a probe (twenty-third session): the python target compared a chain exactly (a
    # uint64 and an int64 meet in float64 in Numba), divided uint64 by int64 in int64s
    # and returned round(int) exactly (numba.cuda's round takes floats)
    n = 40
    s = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64)
    u = rng.integers(0, 2**64 - 1, n, dtype=np.uint64)
    s[:3] = (2**63 - 1, -3, 2**62 + 12345)
    u[:3] = (2**63, 2**64 - 1, 7)
    i8 = rng.integers(-128, 128, n).astype(np.int8)
    b = rng.random(n) < 0.5
    o_chain = np.full((2, n), 7, np.int64)
    o_div = np.full(n, 7.5)
    o_round = np.full((3, n), 7, np.int64)
    _launch(k_chains_round_div, target, 1, 64)(s, u, i8, b, o_chain, o_div, o_round)
    sf, uf = s.astype(np.float64), u.astype(np.float64)
    np.testing.assert_array_equal(o_chain[0], (sf == uf) & (uf == uf))
    np.testing.assert_array_equal(o_chain[1], (sf < uf) & (uf <= uf))
    np.testing.assert_array_equal(o_div, uf / sf)
    # (float64(2**63 - 1) is 2**63: it saturates, as docs/semantics.md converts)
    want = [2**63 - 1 if v >= 2.0**63 else int(v) for v in np.rint(sf)]
    np.testing.assert_array_equal(o_round[0], np.array(want, np.int64))
    np.testing.assert_array_equal(o_round[1], i8.astype(np.int64))
    np.testing.assert_array_equal(o_round[2], b.astype(np.int64))


@xpu.jit
def k_unified(x, u8, i8, c, o):
    i = xpu.grid(1)
    if i < x.size:
        o[0, i] = (x[i] if c[i] else 0) * np.float32(0.1)  # float32 with int64: float64
        o[1, i] = abs(i8[i] if c[i] else 1000)  # int8 with int64: int64
        o[2, i] = ~(u8[i] or -1)  # uint8 with int64: int64
        o[3, i] = ~abs(c[i])  # abs of a bool: int8
        o[4, i] = (c[i] and 2.5) + np.float32(0.1)  # bool with float64


@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
def test_conditional_expressions_and_or_take_numbas_unified_type(target, rng):
    # a probe (twenty-third session): the python target kept the type of the side that
    # ran, where Numba (and numba.cuda) give the expression both sides' unified type
    n = 40
    x = rng.standard_normal(n).astype(np.float32)
    u8 = rng.integers(0, 256, n).astype(np.uint8)
    u8[:2] = (0, 200)
    i8 = rng.integers(-128, 128, n).astype(np.int8)
    i8[0] = -128
    c = rng.random(n) < 0.5
    c[:2] = True
    o = np.full((5, n), -7.5)
    _launch(k_unified, target, 1, 64)(x, u8, i8, c, o)
    f64 = np.where(c, x.astype(np.float64), 0.0)
    np.testing.assert_array_equal(o[0], f64 * np.float64(np.float32(0.1)))
    np.testing.assert_array_equal(o[1], np.abs(np.where(c, i8.astype(np.int64), 1000)))
    np.testing.assert_array_equal(o[2], ~np.where(u8 != 0, u8.astype(np.int64), -1))
    np.testing.assert_array_equal(o[3], ~c.astype(np.int64))
    np.testing.assert_array_equal(o[4], np.where(c, 2.5, 0.0) + np.float64(np.float32(0.1)))


@xpu.jit
def _scan(x):
    return Wave.prefixSum(x)


def test_a_ragged_list_names_the_argument_and_the_call():
    """A list NumPy cannot make an array of (a probe, thirty-fourth session, met
    NumPy's bare ValueError): the call's line, the function and the argument."""
    with pytest.raises(NumquadTypeError) as e:
        _scan([[1, 2], [3]])
    msg = str(e.value)
    assert __file__ in msg and "_scan" in msg and "argument 'x'" in msg, msg
    assert "inhomogeneous" in msg and "takes bool, integer and float arrays" in msg, msg
