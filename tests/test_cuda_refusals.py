"""What numba.cuda refuses in a kernel, the CPU target refuses too; what it compiles,
the CPU target compiles.

A kernel that runs on the CPU and fails only on the GPU defeats testing GPU code in
CI. Each construct below was found by compiling it with numba.cuda
(``compile_ptx(..., cc=(9, 0))``, no GPU needed): the test asks numba.cuda again, so
a numba-cuda that starts to accept one shows up here. Expected refusals name the
user's file and line.
"""

import numpy as np
import pytest
from numba import types

from numquad import NumquadCompileError, NumquadTypeError, xpu

cuda = pytest.importorskip("numba.cuda")


def dict_display(o):
    d = {1: 2.0}
    o[0] = d[1]


def set_display(o):
    s = {1, 2}
    o[0] = len(s)


def list_indexed(o):
    v = [1.0, 2.0]
    o[0] = v[1]


def list_len(o):
    o[0] = len([1.0, 2.0])


def sorted_tuple(o):
    o[0] = sorted((3.0, o[1]))[0]


def str_call(o):
    o[0] = len(str(1))


def hash_call(o):
    o[0] = hash(1)


def list_call(o):
    v = list(range(3))
    o[0] = v[0]


def getattr_call(o):
    o[0] = getattr(o, "size")  # noqa: B009 - the builtin itself is what is refused


def array_add(o):
    c = o * 2.0
    o[0] = c[1]


def array_iadd(o):
    o += 1.0


def array_negate(o):
    c = -o
    o[0] = c[1]


def array_compare(o):
    c = o > 2.0
    o[0] = c[1]


def array_copy(o):
    c = o.copy()
    o[0] = c[1]


def array_astype(o):
    c = o.astype(np.float32)
    o[0] = c[1]


def array_ravel(o):
    c = o.ravel()
    o[0] = c[1]


def array_max(o):
    o[0] = o.max()


def array_cumsum(o):
    c = o.cumsum()
    o[0] = c[1]


def array_sum_axis(o):
    o[0] = o.sum(0)


def array_imag_of_real(o):
    c = o.imag
    o[0] = c[1]


def np_sum_axis(o):
    o[0] = np.sum(o, 0)


def np_ufunc_of_array(o):
    c = np.sin(o)
    o[0] = c[1]


def string_method(o):
    if "abc".startswith("a"):
        o[0] = 1.0


def print_array(o):
    print(o[1:3])


def slice_from_array(o):
    o[1:3] = o[3:5]


def max_of_a_bool_and_a_number(o):
    # (the differential fuzzer on the H100, seed 2027 #9409, wrote max() of three
    # booleans: numba.cuda refused it, the CPU target ran it)
    o[0] = max(o[1] > 1.0, 3)


def min_of_three_bools(o):
    o[0] = min(o[1] > 1.0, o[2] > 1.0, o[3] > 1.0)


#: refused on every target by the front end (numquad/_desugar.py) ...
SYNTACTIC = [
    dict_display,
    set_display,
    list_indexed,
    list_len,
    sorted_tuple,
    str_call,
    hash_call,
    list_call,
    getattr_call,
]
#: ... and by type on the CPU target (numquad/cpu/typing.py)
TYPED = [
    array_add,
    array_iadd,
    array_negate,
    array_compare,
    array_copy,
    array_astype,
    array_ravel,
    array_max,
    array_cumsum,
    array_sum_axis,
    array_imag_of_real,
    np_sum_axis,
    np_ufunc_of_array,
    string_method,
    print_array,
    slice_from_array,
    max_of_a_bool_and_a_number,
    min_of_three_bools,
]


def _cuda_compiles(fn):
    from numquad import _cudacompat

    try:
        with _cudacompat.target_cc((9, 0)):
            cuda.compile_ptx(fn, (types.float64[::1],), cc=(9, 0))
    except Exception:  # noqa: BLE001 - numba.cuda's refusal, in any of its forms
        return False
    return True


@pytest.mark.parametrize("fn", SYNTACTIC + TYPED, ids=lambda f: f.__name__)
def test_refused_by_numba_cuda_and_the_cpu_target(fn, rng):
    assert not _cuda_compiles(fn), f"numba.cuda compiles {fn.__name__} now: accept it on the CPU"
    k = xpu.jit(fn)
    o = rng.random(8)
    before = o.copy()
    with pytest.raises((NumquadCompileError, NumquadTypeError)) as e:
        k.cpu[1, 1](o)
    msg = str(e.value)
    assert f'File "{__file__}", line' in msg and "numba.cuda" in msg
    lines = range(fn.__code__.co_firstlineno + 1, fn.__code__.co_firstlineno + 4)
    assert any(f"line {n}" in msg for n in lines), msg
    np.testing.assert_array_equal(o, before)


@pytest.mark.parametrize("fn", SYNTACTIC, ids=lambda f: f.__name__)
def test_refused_by_the_python_target(fn, rng):
    k = xpu.jit(fn)
    with pytest.raises(NumquadCompileError) as e:
        k.python[1, 1](rng.random(8))
    assert f'File "{__file__}", line' in str(e.value)


def list_iterated(o):
    for v in [1.0, 2.0]:
        o[0] += v


def list_tested(o):
    if o[1] in [1.0, 2.0]:
        o[0] = 5.0


def tuple_slice(o):
    t = (1.0, 2.0, 3.0)[1:]
    o[0] = t[0] + t[1]


def array_methods(o):
    r = o.reshape((2, 4))
    o[0] = o.sum() + o.mean() + r[1, 1] + o.view(np.int64)[2] * 0 + o.transpose()[3] + o[4:5].item()


def slice_fill(o):
    o[1:3] = 2.5


def ufunc_into_output(o):
    # numba.cuda's ufuncs in a kernel write into the output passed (its docs: a
    # kernel has no allocation); a probe found these refused as "returns a new array"
    np.sin(o[:2], o[2:4])
    np.arctan2(o[4:6], o[2:4], o[6:8])


def max_and_min_of_two_bools_or_a_tuple(o):
    # (int(): NumPy adds two np.bool_ as a logical or, Numba as integers)
    a, b = max(o[1] > 1.0, o[2] > 1.0), min((o[3] > 1.0, o[4] > 1.0))
    o[0] = int(a) * 4 + int(b) * 2 + max(o[5], 2.0, 1) + int(min(o[6] < 9.0, o[7] > 3.0))


@pytest.mark.parametrize(
    "fn",
    [
        list_iterated,
        list_tested,
        tuple_slice,
        array_methods,
        slice_fill,
        ufunc_into_output,
        max_and_min_of_two_bools_or_a_tuple,
    ],
    ids=lambda f: f.__name__,
)
def test_compiled_by_numba_cuda_and_the_cpu_target(fn, rng):
    assert _cuda_compiles(fn)
    o = np.round(rng.random(8) * 64) / 4  # exact sums in any order (o.sum(), o.mean())
    o[1] = 2.0
    want = o.copy()
    fn(want)  # plain Python
    k = xpu.jit(fn)
    k.cpu[1, 1](o)
    if fn is ufunc_into_output:
        # np.sin and np.arctan2 are libdevice's on the CPU target (numquad/cpu/libdevice.py),
        # NumPy's the C library's: within an ulp or two, not the same bits on every machine
        np.testing.assert_array_max_ulp(o, want, maxulp=2)
    else:
        np.testing.assert_array_equal(o, want)
