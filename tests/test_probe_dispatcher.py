"""The kernel object's API against numba.cuda's (a probe of the thirty-first session).

Each case gave another result than numba-cuda 0.30.4 gives, with no error:

- a list of signatures picked its overload without counting a C array given for
  an "A" declaration as a conversion (numba.cuda's type manager counts it as a safe
  one), so ``[(int64[:], int64), (int64[::1], float64)]`` with an int32 ran the
  int64 overload where numba.cuda (and ``numba.njit`` with the same list) runs the
  float64 one; and ``[float32[::1], float32[:]]`` was refused as ambiguous;
- a float in a tuple argument declared as integers was truncated (numba.cuda's
  launch converts each element with ctypes, which refuses it, as for a scalar);
- ``k.specialize(...)`` returned ``k`` itself (numba.cuda: a copy declared for
  those types, whose launches convert scalars to them);
- ``k[g, b]`` with a list read the list at the launch, not at the ``[...]``;
- a kernel pickled by value lost ``launch_bounds`` and ``device=True``;
- ``k.forall(n)`` launched 128 threads a block past ``launch_bounds=64``.

Expected values come from ``numba.njit`` with the same signatures and from
NumPy; outputs are poisoned first.
"""

import pickle
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest

from numquad import NumquadTypeError, xpu

SIGS = ["void(int64[:], int64)", "void(int64[::1], float64)"]


def _square_first(a, s):
    if xpu.grid(1) == 0:
        a[0] = s * s


def _njit_square_first(a, s):
    a[0] = s * s


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_list_of_signatures_counts_a_c_array_for_an_a_declaration(target):
    k = xpu.jit(SIGS)(_square_first)
    s = np.int32(2**31 - 1)
    want = np.full(1, -7, np.int64)
    numba.njit(SIGS)(_njit_square_first)(want, s)
    got = np.full(1, -7, np.int64)
    getattr(k, target)[1, 1](got, s)
    assert got[0] == want[0] == 4611686014132420608  # float64(s) ** 2, converted back


def test_signatures_that_differ_only_in_layout_are_not_ambiguous():
    @xpu.jit(["void(float32[::1], float32)", "void(float32[:], float32)"])
    def k(a, v):
        i = xpu.grid(1)
        if i < a.shape[0]:
            a[i] = v * 2

    v = np.float32(np.random.default_rng(3).standard_normal())
    c = np.full(4, np.nan, np.float32)
    k[1, 32](c, v)  # the C declaration exactly; the A one needs a conversion
    assert (c == v * 2).all()
    strided = np.full(8, np.nan, np.float32)
    k[1, 32](strided[::2], v)  # only the A declaration fits
    assert (strided[::2] == v * 2).all() and np.isnan(strided[1::2]).all()


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_float_in_an_integer_tuple_argument_is_refused_as_for_a_scalar(target):
    @xpu.jit("void(int64[:], UniTuple(int64, 2))")
    def k(o, t):
        i = xpu.grid(1)
        if i < o.shape[0]:
            o[i] = t[0] + t[1]

    o = np.full(1, -7, np.int64)
    getattr(k, target)[1, 1](o, (40, 2))
    assert o[0] == 42
    with pytest.raises(
        NumquadTypeError, match=r"element 0 of argument 1 \(t\) of k is declared int64; got the float 1.7"
    ):
        getattr(k, target)[1, 1](o, (1.7, 2.9))


def test_specialize_declares_a_copy_for_the_argument_types():
    @xpu.jit
    def k(a, s):
        i = xpu.grid(1)
        if i < a.shape[0]:
            a[i] = s

    a = np.full(2, -7, np.int64)
    ks = k.specialize(a, np.int32(3))
    assert ks is not k and ks.specialized and not k.specialized
    assert ks is k.specialize(a, np.int32(9))  # one copy per argument types
    ks[1, 2](a, 2**40 + 5)
    assert a.tolist() == [5, 5]  # converted to int32, as numba.cuda's ctypes.c_int32
    with pytest.raises(NumquadTypeError, match="got the float 2.5"):
        ks[1, 2](a, 2.5)
    with pytest.raises(RuntimeError, match="already specialized"):
        ks.specialize(a, 3)
    k[1, 2](a, 2**40)  # the original still compiles for what it gets
    assert a.tolist() == [2**40, 2**40]


def test_a_list_dimension_is_read_when_the_launch_is_configured():
    @xpu.jit
    def count(c):
        xpu.atomic.add(c, 0, 1)

    g = [1]
    launch = count[g, 32]
    g[0] = 3
    c = np.zeros(1, np.int64)
    launch(c)
    assert c[0] == 32


def test_forall_keeps_to_launch_bounds():
    @xpu.jit(launch_bounds=64)
    def fill(a):
        i = xpu.grid(1)
        if i < a.shape[0]:
            a[i] = xpu.blockDim.x

    a = np.full(200, -1, np.int64)
    fill.forall(200)(a)
    assert (a == 64).all()


def test_a_kernel_pickled_by_value_keeps_its_options(tmp_path):
    def make():
        @xpu.jit(launch_bounds=32)
        def k(a):
            i = xpu.grid(1)
            if i < a.shape[0]:
                a[i] = 1

        return k

    path = tmp_path / "k.pkl"
    path.write_bytes(pickle.dumps(make()))
    script = textwrap.dedent(
        f"""
        import pickle, numpy as np
        import numquad
        k = pickle.load(open({str(path)!r}, "rb"))
        try:
            k[1, 64](np.zeros(64))
        except numquad.NumquadLaunchError as e:
            print("refused", k.max_threads, k.cuda_options)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "refused 32 {'launch_bounds': 32}", out.stderr[-2000:]


def test_numba_cuda_s_link_option_is_refused_in_one_line_naming_the_docs():
    def f(a):
        a[0] = 1

    for option in ("link", "extensions"):
        with pytest.raises(TypeError, match=rf"does not take {option}= .*docs/numba-cuda.md"):
            xpu.jit(**{option: []})(f)


def test_debug_none_is_numba_cuda_s_default():
    @xpu.jit(debug=None)
    def k(a):
        i = xpu.grid(1)
        if i < a.shape[0]:
            a[i] = i

    a = np.full(40, -1, np.int64)
    k[2, 32](a)
    assert not k.debug and (a == np.arange(40)).all()


@xpu.jit("i8(i8)", device=True)
def _fib_declared(n):
    if n < 2:
        return n
    return _fib_declared(n - 1) + _fib_declared(n - 2)


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_recursive_device_function_with_a_signature(target):
    """numba-cuda's test_recursion ``test_global_explicit_sig`` with ``xpu.jit`` for its
    device function (a probe of the thirty-first session: Numba's TypingError "fib1
    is an @xpu.jit function, which a @numba.njit function cannot call")."""

    @xpu.jit
    def kernel(r, x):
        i = xpu.grid(1)
        if i < x.size:
            r[i] = _fib_declared(x[i])

    x = np.array([0, 1, 2, 10, 15], np.int64)
    r = np.full(5, -7, np.int64)
    getattr(kernel, target)[1, 32](r, x)
    assert r.tolist() == [0, 1, 1, 55, 610]
