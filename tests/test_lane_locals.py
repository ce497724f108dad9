"""Locals of any Numba type under lane-varying control flow on the CPU target
(twentieth session's probes): a complex or record local assigned under the
bounds guard (``if i < a.size: z = c[i]``) was refused ("lives across a
lane-varying branch"), though numba.cuda compiles it and the python target ran it.

A local read only after its own lane stored it, in one region of lane code, now
needs no lane storage (storage ``defined_before_reads``); a complex value that
does (a loop with a per-lane trip count between its store and its read) is kept
as its two parts, bit for bit. Expected values come from plain Python loops over
the inputs; outputs are poisoned first.
"""

import numpy as np
import pytest

from numquad import NumquadCompileError, Wave, xpu

TARGETS = ["cpu", "cpu-debug", "python"]


def launch(kernel, target, *config):
    if target == "cpu-debug":
        return xpu.jit(debug=True)(kernel.py_func).cpu[config]
    return getattr(kernel, target)[config]


@xpu.jit
def _mandelbrot(c, it, last):
    i = xpu.grid(1)
    if i < c.size:
        z = 0j
        cc = c[i]
        n = 0
        while n < 50 and abs(z) <= 2.0:
            z = z * z + cc
            n += 1
        it[i] = n
        last[i] = z


def _mandelbrot_ref(c):
    its, lasts = [], []
    for cc in c:
        z, n = 0j, 0
        while n < 50 and abs(z) <= 2.0:
            z = z * z + complex(cc)
            n += 1
        its.append(n)
        lasts.append(z)
    return np.array(its, np.int32), np.array(lasts, np.complex128)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_a_complex_local_under_the_bounds_guard(target, rng):
    c = (rng.uniform(-2, 1, 77) + 1j * rng.uniform(-1.5, 1.5, 77)).astype(np.complex128)
    it = np.full(77, -5, np.int32)
    last = np.full(77, complex(-7.25e9, 3.5), np.complex128)
    launch(_mandelbrot, target, 3, 32)(c, it, last)
    want_it, want_last = _mandelbrot_ref(c)
    np.testing.assert_array_equal(it, want_it)
    np.testing.assert_array_equal(last.view(np.uint64), want_last.view(np.uint64))


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_a_complex_value_kept_across_a_cross_lane_op_keeps_its_bits(target, dtype, rng):
    # the value lives in lane storage as its two parts: inf, nan and -0.0 parts too
    @xpu.jit
    def k(c, trips, out, count):
        i = xpu.grid(1)
        z = c[0]
        if i < c.size:
            z = c[i]
        n = np.int64(0)
        for j in range(trips[i % trips.size]):
            n += Wave.reduceSum(np.int64(j))  # a cross-lane op between z's store and read
        count[i] = n
        if i < c.size:
            out[i] = z

    parts = rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.25e-30, 3e30], (2, 70))
    c = (parts[0] + 0j).astype(dtype)
    c.imag = parts[1]
    trips = rng.integers(0, 5, 32).astype(np.int32)
    out = np.full(70, complex(-7.25e9, 1.0), dtype)
    count = np.full(96, -1, np.int64)
    launch(k, target, 3, 32)(c, trips, out, count)
    bits = np.uint32 if dtype == np.complex64 else np.uint64
    np.testing.assert_array_equal(out.view(bits), c.view(bits))
    # iteration j: the lanes of the wave whose trip count exceeds j add j each
    want = [sum(j * int(np.sum(trips > j)) for j in range(t)) for t in trips[np.arange(96) % 32]]
    np.testing.assert_array_equal(count, want)


_REC = np.dtype([("x", np.float32), ("k", np.int16), ("w", np.float64)])


@pytest.mark.parametrize("target", TARGETS)
def test_a_record_local_under_the_bounds_guard(target, rng):
    @xpu.jit
    def k(recs, trips, out):
        i = xpu.grid(1)
        if i < recs.size:
            r = recs[i]
            acc = 0.0
            for j in range(trips[i]):
                acc += r.x * r.w + r.k
            out[i] = acc
            r.k = -r.k  # a record read from an array is that element

    recs = np.zeros(45, _REC)
    recs["x"] = rng.standard_normal(45).astype(np.float32)
    recs["k"] = rng.integers(-300, 300, 45)
    recs["w"] = rng.standard_normal(45)
    start = recs.copy()
    trips = rng.integers(0, 4, 45).astype(np.int32)
    out = np.full(45, -7.25e9)
    launch(k, target, 2, 32)(recs, trips, out)
    want = []
    for r, t in zip(start, trips):
        acc = 0.0
        for _ in range(t):
            acc += float(r["x"]) * float(r["w"]) + int(r["k"])
        want.append(acc)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(recs["k"], -start["k"])
    np.testing.assert_array_equal(recs["x"], start["x"])


@pytest.mark.parametrize("target", TARGETS)
def test_a_local_read_before_its_store_on_some_path_keeps_lane_storage(target, rng):
    # only the lane's own earlier value may be read: v is stored in the loop's first
    # iteration by lanes whose a is positive, read in later ones
    @xpu.jit
    def k(a, out):
        i = xpu.grid(1)
        v = np.int64(-1)
        for j in range(3):
            if j > 0:
                out[i, j] = v
            if a[i] > 0:
                v = a[i] * 10 + j

    a = rng.integers(-5, 5, 64)
    out = np.full((64, 3), 99, np.int64)
    launch(k, target, 2, 32)(a, out)
    want = np.full((64, 3), 99, np.int64)
    for i in range(64):
        v = -1
        for j in range(3):
            if j > 0:
                want[i, j] = v
            if a[i] > 0:
                v = a[i] * 10 + j
    np.testing.assert_array_equal(out, want)


def test_a_record_across_a_cross_lane_op_is_still_one_line():
    @xpu.jit
    def k(recs, out):
        i = xpu.grid(1)
        r = recs[i]
        s = Wave.prefixSum(np.int32(1))
        out[i] = r.k + s

    recs = np.zeros(32, _REC)
    with pytest.raises(
        NumquadCompileError,
        match=r"r \(Record\(.*differs from lane to lane and lives "
        r"across a cross-lane op",
    ):
        k.cpu[1, 32](recs, np.zeros(32, np.int64))


@pytest.mark.parametrize("target", TARGETS)
def test_a_nested_tuple_kept_across_a_cross_lane_op(target, rng):
    # refused on the CPU: "tp (Tuple(UniTuple(int64 x 2), int64)) differs from lane to
    # lane and lives across a cross-lane op"; it is kept as its leaves
    @xpu.jit
    def k(x, f, out):
        i = xpu.grid(1)
        a = x[i]
        tp = ((a, a + 1), (f[i], (i, np.int32(a))))
        a = Wave.reduceSum(a)
        (p, q), (r, (s, t)) = tp
        out[i] = p * 3 + q + a + s - t + np.int64(r > 0.5)

    x = rng.integers(-1000, 1000, 64)
    f = rng.random(64)
    out = np.full(64, -1, np.int64)
    launch(k, target, 2, 32)(x, f, out)
    sums = np.repeat([x[:32].sum(), x[32:].sum()], 32)
    i = np.arange(64)
    np.testing.assert_array_equal(out, x * 3 + (x + 1) + sums + i - x + (f > 0.5))
