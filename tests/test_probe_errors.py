"""What two probes of errors found (twenty-fourth session): a release build did not
check loads from the local or shared arrays of an inlined device or lane function
(a neighbouring element or stack bytes came back; a large index faulted); a lane
call's bounds failure was a bare tuple; a user's ``raise IndexError`` became a
bounds message; ``try`` ran on the CPU (numba.cuda cannot compile it);
``print(..., end="")`` and ``xpu.grid(1.0)`` failed inside Numba or numquad. Expected
values come from NumPy; outputs are poisoned first."""

import os

import numpy as np
import pytest
from numba import cuda

from numquad import NumquadCompileError, xpu
from numquad.errors import NumquadIndexError


@cuda.jit(device=True)
def _pick(x, j):
    loc = cuda.local.array((4, 4), np.int64)
    for p in range(4):
        for q in range(4):
            loc[p, q] = x * 100 + p * 10 + q
    return loc[0, j]


@xpu.jit
def k_pick(a, j, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = _pick(a[i], j[i])


@pytest.mark.parametrize("debug", [False, True])
def test_loads_from_a_device_functions_own_local_array_are_checked(rng, debug):
    k = xpu.jit(debug=debug)(k_pick.py_func)
    a = rng.integers(0, 50, 4)
    j = rng.integers(0, 4, 4)
    out = np.full(4, -7, np.int64)
    k.cpu[1, 4](a, j, out)
    np.testing.assert_array_equal(out, a * 100 + j)
    for bad in (5, 1 << 40):  # (a neighbour's element; a fault)
        j[2] = bad
        with pytest.raises(NumquadIndexError, match="out of bounds"):
            k.cpu[1, 4](a, j, np.full(4, -7, np.int64))


@xpu.jit
def _lane_shared(x, j):
    s = cuda.shared.array(8, np.float64)
    s[0] = x
    return s[j]


@xpu.jit
def _lane_store(x, j):
    s = cuda.local.array(4, np.float64)
    s[j] = x
    return s[j]


@pytest.mark.slow
def test_a_lane_functions_own_arrays_are_checked_in_a_call_on_arrays(rng):
    x = rng.random(4)
    np.testing.assert_array_equal(_lane_store(x, np.array([0, 1, 2, 3])), x)
    with pytest.raises(NumquadIndexError) as e:
        _lane_shared(x, np.array([0, 0, 9, 0]))
    assert f'File "{__file__}"' in str(e.value) and "_lane_shared loads out of bounds" in str(e.value)
    with pytest.raises(NumquadIndexError) as e:  # (a bare IndexError tuple before)
        _lane_store(x, np.array([0, 1, 7, 3]))
    assert "_lane_store stores out of bounds" in str(e.value) and "index 7" in str(e.value)


@xpu.jit
def k_user_index_error(a, out):
    i = cuda.grid(1)
    if i < a.size:
        if a[i] > 100:
            raise IndexError("too big", a[i])
        out[i] = a[i]


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_users_index_error_keeps_its_arguments(target):
    # not a NumquadIndexError: the user's own exception, its message prefixed with the
    # raising thread as numba.cuda gives it with debug=True, its other arguments kept
    with pytest.raises(IndexError) as e:
        getattr(k_user_index_error, target)[1, 4](np.array([1, 200, 3, 4]), np.zeros(4, np.int64))
    assert type(e.value) is IndexError and e.value.args[1:] == (200,)
    line = k_user_index_error.py_func.__code__.co_firstlineno + 5  # (the decorator + 5: the raise)
    assert e.value.args[0] == (
        f"In function 'k_user_index_error', file {os.path.abspath(__file__)}, line {line}, "
        f"tid=[0, 0, 1] ctaid=[0, 0, 0]: too big"
    )


@pytest.mark.parametrize(
    "body, words",
    [
        (["try:", "    out[i] = 1.0", "except Exception:", "    out[i] = -5.0"], "not supported"),
        (["print(i, end='')"], "print() in a kernel takes no keyword arguments (end=)"),
        (["out[i] = xpu.grid(1.0)"], "xpu.grid(ndim) got 1.0; it takes a constant int ndim"),
    ],
)
@pytest.mark.parametrize("target", ["cpu", "python"])
def test_one_line_for_what_numba_cuda_cannot_compile(body, words, target):
    import linecache

    src = "def k(out):\n    i = xpu.grid(1)\n" + "".join("    " + line + "\n" for line in body)
    path = f"<probe-errors-{abs(hash(src))}>"
    linecache.cache[path] = (len(src), None, src.splitlines(True), path)
    ns = {"xpu": xpu, "cuda": cuda, "np": np}
    exec(compile(src, path, "exec"), ns)
    k = xpu.jit(ns["k"])
    with pytest.raises(NumquadCompileError) as e:
        getattr(k, target)[1, 32](np.zeros(32))
    assert words in str(e.value) and f'File "{path}", line 3' in str(e.value)


def test_a_signature_of_the_wrong_arity_names_the_function():
    # Numba's "Signature mismatch: 1 argument types given, but function takes 2
    # arguments" came with no file or line and a 55-line traceback
    def k(a, o):
        pass

    with pytest.raises(TypeError) as e:
        xpu.jit("void(float32[:])")(k)
    msg = str(e.value)
    assert f'File "{__file__}", line {k.__code__.co_firstlineno}' in msg
    assert "has 1 argument type(s); k takes 2 argument(s)" in msg


def test_calling_a_builtin_value_says_it_is_a_value():
    # it said "xpu.laneid is not supported by the CPU target", which it is
    @xpu.jit
    def k(o):
        i = xpu.grid(1)
        o[i] = xpu.laneid()

    with pytest.raises(NumquadCompileError, match="xpu.laneid is a value, not a function"):
        k.cpu[1, 32](np.zeros(32))


def test_a_record_field_that_does_not_exist_names_it():
    # a bare KeyError: 'z' and a 91-line Numba traceback
    from numquad import NumquadTypeError

    rec = np.zeros(4, dtype=[("x", np.float32), ("y", np.int32)])

    @xpu.jit
    def k(r, o):
        i = xpu.grid(1)
        if i < o.size:
            o[i] = r[i].z

    with pytest.raises(NumquadTypeError) as e:
        k.cpu[1, 32](rec, np.zeros(4, np.float32))
    assert "the record has no field 'z'; its fields are x, y" in str(e.value)
    assert f"line {k.firstlineno + 4}" in str(e.value)
