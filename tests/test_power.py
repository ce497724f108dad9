"""``a ** b`` in kernels: a float to an integer power, on every target.

The reference is written here with NumPy scalars, as docs/semantics.md defines the
power: square-and-multiply in the float's type, then ``1 / r`` for a negative
exponent (an infinity of r's sign where r is 0), ``pow`` past an exponent of 65536.
Numba's CPU lowering raised ZeroDivisionError for ``0.0 ** -1`` (and for any power
whose square-and-multiply underflows to 0) even in release builds (cpu/power.py).
"""

import math

import numpy as np
import pytest

from numquad import Wave, xpu

from conftest import TARGETS

ALL = TARGETS + ["cpu-debug", "python"]


def launch_on(target, k, griddim, blockdim, *args):
    if target == "cpu-debug":
        k, target = xpu.jit(k.py_func, debug=True), "cpu"
    getattr(k, target)[griddim, blockdim](*args)


def _reference(a, e):
    t = type(a)
    e = int(e)
    if abs(e) > 0x10000:
        with np.errstate(all="ignore"):
            return t(np.power(np.float64(a), np.float64(e)))
    r, x, k = t(1.0), a, abs(e)
    with np.errstate(all="ignore"):
        while k:
            if k & 1:
                r = t(r * x)
            k >>= 1
            x = t(x * x)
        if e >= 0:
            return r
        return t(t(1.0) / r) if r != 0 else t(math.copysign(math.inf, r))


@xpu.jit
def k_pow(out, a, e):
    i = xpu.grid(1)
    if i < out.size:
        out[i] = a[i] ** e[i]


@xpu.jit
def k_pow_const(out, a):
    i = xpu.grid(1)
    if i < out.size:
        v = a[i] ** -2
        v **= -1
        out[i] = v + Wave.reduceMax(np.int32(0))


@xpu.jit
def _inverse_square(x):
    return x**-2


@xpu.jit
def k_pow_device(out, a):
    i = xpu.grid(1)
    if i < out.size:
        out[i] = _inverse_square(a[i])


def _bases(rng, dt, n):
    a = (rng.standard_normal(n) * rng.choice([1e-30, 1e-3, 1.0, 10.0, 1e20], n)).astype(dt)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-38, -1e-45, 1.0, -1.0], dt)
    a[rng.integers(0, n, n // 3)] = special[rng.integers(0, special.size, n // 3)]
    return a


@pytest.mark.parametrize("target", ALL)
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("et", [np.int8, np.int32, np.int64, np.uint64])
def test_a_float_to_an_integer_power_never_raises_and_matches_numpy(target, dt, et, rng):
    n = 200
    a = _bases(rng, dt, n)
    if np.dtype(et).kind == "u":
        e = rng.choice(np.array([0, 1, 2, 3, 7, 64, 65536, 65537, 2**63 + 1], np.uint64), n).astype(et)
    else:
        info = np.iinfo(et)
        e = rng.integers(-9, 10, n).astype(et)
        e[rng.integers(0, n, 20)] = np.array([info.min, info.max, -1, -2, -127], np.int64)[
            rng.integers(0, 5, 20)
        ].astype(et)
    out = np.full(n, 7.0, dt)  # poison
    launch_on(target, k_pow, 4, 64, out, a, e)
    want = np.array([_reference(x, y) for x, y in zip(a, e)], dt)
    finite = np.abs(e.astype(np.float64)) <= 0x10000
    np.testing.assert_array_equal(out[finite], want[finite])
    # past 65536 the power is pow(): its last bit is outside the promise
    np.testing.assert_allclose(out[~finite], want[~finite], rtol=1e-6)


def _int_reference(a, e, dt):
    """``a ** e`` of integers as docs/semantics.md defines it, with Python ints: in
    int64 (Numba's type of an integer power), wrapping; a negative exponent gives 0
    but for bases 1 and -1 (their power) and 0 (int64's minimum); then stored."""
    a, e = int(a), int(e)
    if e < 0:
        v = -(2**63) if a == 0 else (1 if a == 1 else ((-1) ** (-e) if a == -1 else 0))
    else:
        v = pow(a, e, 1 << 64)
        v = v - (1 << 64) if v >= 1 << 63 else v
    return np.array(v, np.int64).astype(dt)[()]


@pytest.mark.parametrize("target", ALL)
@pytest.mark.parametrize("dt", [np.int32, np.int64])
def test_an_integer_to_an_integer_power_never_raises(target, dt, rng):
    """The most negative exponent: Numba's (and numba.cuda's) integer ``**`` computes
    ``-e`` and raised OverflowError, which stopped a release CPU launch (a probe of
    the thirty-first session) and, on a GPU, ends the thread with its outputs
    unwritten."""
    n = 160
    info = np.iinfo(dt)
    a = rng.integers(-6, 7, n).astype(dt)
    e = rng.integers(-5, 40, n).astype(dt)
    e[rng.integers(0, n, 40)] = info.min
    a[:8] = [0, 1, -1, 2, -2, 0, 1, -1]
    e[:8] = info.min
    if target == "cpu-debug":
        # numba.cuda's debug=True raises ZeroDivisionError for 0 ** -n, as Python
        a[(a == 0) & (e < 0)] = 3
    out = np.full(n, 7, dt)  # poison
    launch_on(target, k_pow, 4, 64, out, a, e)
    want = np.array([_int_reference(x, y, dt) for x, y in zip(a, e)], dt)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("target", ALL)
def test_a_uint64_base_of_a_signed_power_converts_first(target):
    """Numba types ``uint64 ** int32`` as int64 and converts the base first: 2**64 - 1
    is -1 there, so its negative powers are 1 and -1; 2**63 is -2**63, whose power
    past 65536 is ``pow`` of -2**63, saturated (a probe of the thirty-first session:
    0, 0 and 2**63 - 1). Expected values from plain ``numba.njit``."""
    import numba

    a = np.array([2**64 - 1, 2**64 - 1, 2**63, 5, 2**64 - 2], np.uint64)
    e = np.array([-3, -2, 65537, -1, 3], np.int32)
    want = np.array([numba.njit(lambda x, y: x**y)(x, y) for x, y in zip(a, e)], np.int64)
    assert want.tolist()[:3] == [-1, 1, -(2**63)]
    out = np.full(5, 7, np.int64)
    launch_on(target, k_pow, 1, 32, out, a, e)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("target", ALL)
def test_an_integer_power_past_65536_is_pow_saturated(target):
    """docs/semantics.md: past an exponent of 65536 an integer power is C's ``pow`` of
    the floats, converted back saturating; a uint64 exponent is never negative (the
    python target read 2**63 as negative and wrapped: 0 for ``2 ** 70000``)."""
    m = 2**63 - 1
    a = np.array([2, 3, -2, 2, 0, -1], np.int64)
    e = np.array([70000, 65537, 65537, 2**63, 2**63, 2**64 - 1], np.uint64)
    out = np.full(6, 7, np.int64)
    launch_on(target, k_pow, 1, 32, out, a, e)
    # pow: inf, inf, -inf, inf, 0.0, and 1.0 (float(2**64 - 1) is 2**64: an even power of -1)
    np.testing.assert_array_equal(out, [m, m, -m - 1, m, 0, 1])


@pytest.mark.slow
@pytest.mark.parametrize("target", ALL)
def test_constant_negative_exponents_and_device_functions_give_infinities(target, rng):
    a = _bases(rng, np.float64, 96)
    out = np.full(96, 7.0)
    launch_on(target, k_pow_const, 2, 64, out, a)
    want = np.array([_reference(_reference(x, -2), -1) for x in a])
    np.testing.assert_array_equal(out, want)
    out = np.full(96, 7.0)
    launch_on(target, k_pow_device, 2, 64, out, a)
    np.testing.assert_array_equal(out, np.array([_reference(x, -2) for x in a]))
    assert (a == 0).any() and (out[a == 0] == np.inf).all()


@pytest.mark.parametrize(
    "sig",
    [
        "void(float64[:], float64[:], int64[:])",
        "void(float32[:], float32[:], int32[:])",
        "void(float64[:], float64[:], int32[:])",
        "void(float32[:], float32[:], int64[:])",
        "void(int64[:], int64[:], int64[:])",
        "void(int32[:], int32[:], int32[:])",
    ],
)
def test_no_cuda_thread_leaves_a_power_without_its_store(sig):
    """numba.cuda's ``**`` raises OverflowError for an exponent of -2**31 (int32) or
    -2**63; in a release kernel that is a branch to ``ret`` past the store, so the
    H200 left the output unwritten (tests above, on cuda). The CUDA target's
    ``_nq_pow`` (numquad/_power.py) has no such branch: the PTX reaches its ``ret``
    only through the store. Needs no GPU."""
    _assert_one_path_to_ret(k_pow.inspect_ptx(sig, cc=(9, 0)))


def _assert_one_path_to_ret(ptx):
    import re

    body = ptx[ptx.find(".entry") :]
    body = body[: body.find("\n}")]  # the kernel, not the helpers after it
    ret_labels = re.findall(r"(\$L__\w+):\s*\n\s*ret;", body)
    assert ret_labels or "ret;" in body
    for label in ret_labels:
        # the guard `if i < out.size` may skip to ret; nothing else may
        branches = re.findall(rf"(@%p\d+ )?bra(?:\.uni)?\s+{re.escape(label)};", body)
        assert len(branches) <= 1, (label, branches)


@xpu.jit
def k_math_pow_int32(out, a, e):
    i = xpu.grid(1)
    if i < out.size:
        out[i] = math.pow(a[i], e[i])


@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_math_pow_of_a_runtime_int32_exponent(target, dt, rng):
    """``math.pow(x, n)`` with an int32 ``n`` known only at run time: numba.cuda's
    powi case, which the CPU target lowered to ``llvm.powi``; LLVM makes that a call
    of compiler-rt's ``__powidf2``, which Numba's JIT does not link: a segmentation
    fault or an abort, unless another library had loaded the symbol (a probe of the
    day found it). Now the square-and-multiply of ``x ** n`` (numquad/_power.py)."""
    n = 128
    a = _bases(rng, dt, n)
    e = rng.integers(-12, 13, n).astype(np.int32)
    out = np.full(n, 7.0, dt)
    launch_on(target, k_math_pow_int32, 2, 64, out, a, e)
    want = np.array([_reference(x, y) for x, y in zip(a, e)], dt)
    if target == "python":  # Python's math.pow: outside the bit promise (docs/semantics.md)
        np.testing.assert_allclose(out, want, rtol=1e-5 if dt == np.float32 else 1e-13)
    else:
        np.testing.assert_array_equal(out, want)


@pytest.mark.slow
def test_math_pow_of_an_int32_exponent_calls_no_compiler_rt():
    from numba import types as nt

    for ft in (nt.float32, nt.float64):
        ir = k_math_pow_int32.inspect_llvm((ft[:], ft[:], nt.int32[:]))
        assert "powi" not in ir and "__powi" not in ir


@xpu.jit
def _k_power_beside_an_op(x, n, out):
    i = xpu.grid(1)
    out[i] = x[i] ** n[i] + Wave.reduceSum(x[i] ** n[i])


@pytest.mark.parametrize("debug", [False, True])
def test_a_power_beside_an_op_in_one_statement(rng, debug):
    """A probe (twenty-first session): ``Wave.reduceSum(x ** i)`` beside another
    power in one statement was refused on the CPU ("a call in that statement may
    write memory"): the power's helper counted as a call that may write."""
    x = rng.uniform(-2, 2, 64).astype(np.float32)
    n = rng.integers(0, 4, 64).astype(np.int32)
    k = xpu.jit(_k_power_beside_an_op.py_func, debug=debug)
    out, ref = np.full(64, np.nan, np.float32), np.full(64, np.nan, np.float32)
    k.cpu[2, 32](x, n, out)
    k.python[2, 32](x, n, ref)
    np.testing.assert_array_equal(out, ref)
    p = x.astype(np.float64) ** n
    np.testing.assert_allclose(out, p + np.repeat(p.reshape(2, 32).sum(axis=1), 32), rtol=1e-5, atol=1e-5)


# -- powers of constants: the constant CPython's compiler folds (a probe, twenty-third
# session: `2 ** -1` is 0.5 in the bytecode Numba and numba.cuda compile, but numquad
# rebuilt it as a runtime integer power, 0, on every target) -------------------------

_FOLDED = (
    "2 ** -1",
    "65535 ** -2",
    "7 // 2 ** -1",
    "1.1 ** -10",
    "2.0 ** -1074",
    "1.1 ** 8",
    "~True",
    "not ~True",
    "-True + 2 ** 3",
    "(-2) ** -3",
    "2 ** 62 * 2",
)


def _folded_kernel():
    body = "\n".join(f"        out[{j}] = x[i] * 0 + ({e})" for j, e in enumerate(_FOLDED))
    src = f"def k_folded(x, out):\n    i = xpu.grid(1)\n    if i == 0:\n{body}\n"
    import pathlib
    import tempfile

    path = pathlib.Path(tempfile.mkdtemp()) / "k_folded.py"
    path.write_text("from numquad import xpu\n\n@xpu.jit\n" + src)
    import importlib.util

    spec = importlib.util.spec_from_file_location("k_folded", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k_folded


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "cpu-debug", "python"])
def test_a_power_of_constants_is_the_constant_python_folds(target):
    k = _folded_kernel()
    out = np.full(len(_FOLDED), -7.5)
    launch_on(target, k, 1, 32, np.ones(32), out)
    # CPython's folded constant, as a float64 (x[i] * 0 + c)
    want = [np.float64(eval(e)) for e in _FOLDED]
    np.testing.assert_array_equal(out, want)


def test_the_ptx_of_a_folded_power_holds_the_constant():
    ptx = _folded_kernel().inspect_ptx("void(float64[:], float64[:])", cc=(9, 0))
    assert "0d3FE0000000000000" in ptx  # 2 ** -1 == 0.5


@xpu.jit
def k_pow_augmented(out, a, e, rec):
    i = xpu.grid(1)
    if i < out.size:
        out[i] = a[i]
        out[i] **= e[i]  # an augmented power of an element: the same power
        rec[i, 0] = a[i]
        rec[i, e[i] & 1] **= -1


@pytest.mark.parametrize("target", ALL)
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_an_augmented_power_of_an_array_element(target, dt, rng):
    n = 200
    a = _bases(rng, dt, n)
    e = rng.integers(-9, 10, n).astype(np.int32)
    e[rng.integers(0, n, 20)] = np.array([np.iinfo(np.int32).min, -1, -2], np.int64)[rng.integers(0, 3, 20)]
    out = np.full(n, 7.0, dt)  # poison
    rec = np.full((n, 2), 7.0, dt)
    launch_on(target, k_pow_augmented, 4, 64, out, a, e, rec)
    want = np.array([_reference(x, y) for x, y in zip(a, e)], dt)
    np.testing.assert_array_equal(out, want)
    odd = (e & 1).astype(bool)
    inv = np.array([_reference(x, -1) for x in a], dt)
    np.testing.assert_array_equal(rec[:, 0], np.where(odd, a, inv))
    np.testing.assert_array_equal(rec[:, 1], np.where(odd, np.full(n, 7.0, dt) ** -1, 7.0).astype(dt))


@pytest.mark.parametrize(
    "sig",
    ["void(float64[:], float64[:], int32[:], float64[:, :])", "void(float32[:], float32[:], int64[:], float32[:, :])"],
)
def test_no_cuda_thread_leaves_an_augmented_power_without_its_store(sig):
    """``out[i] **= e[i]`` is ``_nq_pow`` on the CUDA target too (numba.cuda's ``**``
    raises OverflowError past int32's or int64's minimum). Needs no GPU."""
    _assert_one_path_to_ret(k_pow_augmented.inspect_ptx(sig, cc=(9, 0)))
