"""A store that reaches a read-only array argument is refused on the CPU target.

The CPU target runs a kernel on the argument's own memory. Numba's typing refuses a
plain store into a read-only array, but not one through a record's field, a
subarray field, an atomic on a field, a single record taken from a read-only array,
``a.flat[j]``, or a device function doing any of these: those wrote into the array
(an immutable ``bytes`` object's memory) or faulted (a read-only memmap). Each is
now a NumquadTypeError naming the store's line, and nothing is written.
"""

import numpy as np
import pytest
from numba import cuda

from numquad import xpu
from numquad.errors import NumquadTypeError

REC = np.dtype([("x", "f8"), ("v", "f8", (2,))])


def _line(fn, marker):
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, text in enumerate(lines) if marker in text)


def field_store(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i].x = 1.5  # <- store


def item_store(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i]["x"] = 1.5  # <- store


def subarray_store(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i].v[0] = 2.5  # <- store


def subarray_atomic(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        cuda.atomic.add(out[i].v, 1, 1.0)  # <- store


def alias_store(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        row = out[i]
        v = row.v
        v[1] = 3.5  # <- store


def record_store(r):
    if cuda.grid(1) == 0:
        r.x = 3.5  # <- store


def flat_store(out):
    i = cuda.grid(1)
    if i < out.size:
        out.flat[i] = 4.5  # <- store


def fill_store(out):
    if cuda.grid(1) == 0:
        out.fill(6.5)  # <- store


@cuda.jit(device=True)
def _set_x(r, value):
    r.x = value


@xpu.jit
def _set_flat(a, i):
    a.flat[i] = 5.5


def device_field_store(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        _set_x(out[i], 1.5)  # <- store


def device_flat_store(out):
    i = cuda.grid(1)
    if i < out.size:
        _set_flat(out, i)  # <- store


def _read_only(a):
    a.setflags(write=False)
    return a


CASES = [
    (field_store, lambda: np.zeros(3, REC)),
    (item_store, lambda: np.zeros(3, REC)),
    (subarray_store, lambda: np.zeros(3, REC)),
    (subarray_atomic, lambda: np.zeros(3, REC)),
    (alias_store, lambda: np.zeros(3, REC)),
    (flat_store, lambda: np.arange(3.0)),
    (fill_store, lambda: np.arange(3.0)),
    (device_field_store, lambda: np.zeros(3, REC)),
    (device_flat_store, lambda: np.arange(3.0)),
]


@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_a_store_into_a_read_only_argument_is_refused_and_writes_nothing(fn, make):
    before = make()
    a = _read_only(before.copy())
    with pytest.raises(NumquadTypeError, match=r"a store into a read-only array \(argument 'out' .*a\.copy\(\)") as e:
        xpu.jit(fn)[1, 32](a)
    assert f"line {_line(fn, '<- store')}" in str(e.value)
    assert a.tobytes() == before.tobytes()
    # the same kernel on a writeable array stores as asked
    w = make()
    xpu.jit(fn)[1, 32](w)
    assert w.tobytes() != before.tobytes()


def test_a_device_functions_store_is_named_by_its_line():
    a = _read_only(np.zeros(3, REC))
    with pytest.raises(NumquadTypeError) as e:
        xpu.jit(device_field_store)[1, 32](a)
    assert f"_set_x(), line {_line(_set_x, 'r.x = value')}" in str(e.value)


def test_a_read_only_memmap_is_refused_not_faulted(tmp_path):
    path = tmp_path / "ro.dat"
    np.arange(4.0).tofile(path)
    mm = np.memmap(path, dtype=np.float64, mode="r")
    with pytest.raises(NumquadTypeError, match="a store into a read-only array"):
        xpu.jit(flat_store)[1, 32](mm)
    np.testing.assert_array_equal(np.fromfile(path), np.arange(4.0))


def test_a_read_only_record_argument_is_refused_at_each_launch():
    k = xpu.jit(record_store)
    base = _read_only(np.zeros(3, REC))
    with pytest.raises(NumquadTypeError, match=r"argument 'r'") as e:
        k[1, 32](base[1])
    assert f"line {_line(record_store, '<- store')}" in str(e.value)
    assert base.tobytes() == np.zeros(3, REC).tobytes()
    ok = np.zeros(3, REC)
    k[1, 32](ok[1])  # same types, a writeable record: stored
    assert ok["x"].tolist() == [0.0, 3.5, 0.0]
    with pytest.raises(NumquadTypeError):
        k[1, 32](base[2])  # and refused again after a good launch


def test_reading_a_read_only_argument_and_writing_another_is_fine(rng):
    def k(src, dst):
        i = cuda.grid(1)
        if i < src.shape[0]:
            row = src[i]
            dst[i].x = row.x + row.v[1]
            dst[i].v[0] = src.flat[i].x

    src = np.zeros(40, REC)
    src["x"] = rng.random(40)
    src["v"] = rng.random((40, 2))
    _read_only(src)
    dst = np.zeros(40, REC)
    dst["x"] = np.nan
    xpu.jit(k)[2, 32](src, dst)
    np.testing.assert_array_equal(dst["x"], src["x"] + src["v"][:, 1])
    np.testing.assert_array_equal(dst["v"][:, 0], src["x"])
