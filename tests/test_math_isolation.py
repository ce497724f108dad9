"""numquad's libdevice math stays numquad's, whichever code compiled first.

The CPU target computes ``math.hypot`` of float32 and ``math.exp`` of float64 (and
the ``cmath``/``abs(complex)`` code built on them) with libdevice's code, the GPU's
bits; plain Numba code in the same process keeps the C library's. A probe (thirty-
second session) found both leaking through Numba's caches shared by every compile
of the process: its subroutine cache (``compile_subroutine``: ``abs`` of a
complex64, ``cmath.exp``) and the implementations of overloads compiled while a
kernel is typed. A kernel's ``abs(complex64)`` gave the C library's bits after a
user's ``njit`` had compiled the same helper, a user's ``math.hypot`` gave
libdevice's after a kernel, and a ``debug=True`` kernel with ``cmath.polar`` was
wrong in a fresh process; a user's ``@numba.njit`` helper that an ``@overload``
called in a kernel kept the C library there, or took libdevice's into the user's
own later calls. Also ``np.log2`` of float32 (Numba names its intrinsic
without a type) kept the C library.

Each case runs in a fresh Python process. Expected values: a fresh process's
simplest kernel (``out[i] = math.hypot(x[i], y[i])``) for numquad's side, and a
process that never imports numquad for plain Numba's side; the inputs are checked to
tell the two libraries apart first, so that each comparison can fail.
"""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from numquad.cpu import libdevice

pytestmark = pytest.mark.skipif(
    not {"hypotf", "exp", "log2f"} <= set(libdevice.exact_names()),
    reason="libdevice (the CUDA toolkit's) is not installed, or does not compute these exactly",
)

_PRELUDE = textwrap.dedent(
    """
    import cmath, json, math, sys
    import numpy as np
    import numba

    rng = np.random.default_rng(7)
    x = (rng.standard_normal(2048) * 10.0 ** rng.integers(-3, 6, 2048)).astype(np.float32)
    y = (rng.standard_normal(2048) * 10.0 ** rng.integers(-3, 6, 2048)).astype(np.float32)
    v = rng.uniform(-700.0, 700.0, 2048)
    results = {}

    def bits(a):
        return np.asarray(a).view(np.int32 if np.asarray(a).dtype == np.float32 else np.int64).tolist()

    @numba.njit
    def plain_hypot(x, y, out):
        for i in range(x.size):
            out[i] = math.hypot(x[i], y[i])

    @numba.njit
    def plain_cexp(v, out):
        for i in range(v.size):
            out[i] = cmath.exp(complex(v[i], 0.0)).real

    @numba.njit
    def plain_abs(x, y, out):
        for i in range(x.size):
            out[i] = abs(np.complex64(x[i]) + np.complex64(y[i]) * np.complex64(1j))

    def run_plain():
        a = np.zeros(x.size, np.float32); plain_hypot(x, y, a)
        b = np.zeros(v.size); plain_cexp(v, b)
        c = np.zeros(x.size, np.float32); plain_abs(x, y, c)
        results["plain_hypot"], results["plain_cexp"], results["plain_abs"] = bits(a), bits(b), bits(c)
    """
)

_KERNELS = textwrap.dedent(
    """
    from numquad import xpu

    def k_hypot(x, y, out):
        i = xpu.grid(1)
        if i < x.size:
            out[i] = math.hypot(x[i], y[i])

    def k_abs(x, y, out):
        i = xpu.grid(1)
        if i < x.size:
            out[i] = abs(np.complex64(x[i]) + np.complex64(y[i]) * np.complex64(1j))

    def k_polar(x, y, out):
        i = xpu.grid(1)
        if i < x.size:
            out[i] = cmath.polar(np.complex64(x[i]) + np.complex64(1j) * np.complex64(y[i]))[0]

    def k_exp(v, out):
        i = xpu.grid(1)
        if i < v.size:
            out[i] = math.exp(v[i])

    def k_cexp(v, out):
        i = xpu.grid(1)
        if i < v.size:
            out[i] = cmath.exp(complex(v[i], 0.0)).real

    def k_log2(x, out1, out2):
        i = xpu.grid(1)
        if i < x.size:
            out1[i] = np.log2(abs(x[i]))
            out2[i] = math.log2(abs(x[i]))

    def run_kernels(debug, names=("hypot", "abs", "polar", "exp", "cexp")):
        for name in names:
            k = xpu.jit(debug=debug)(globals()["k_" + name])
            if name in ("exp", "cexp"):
                out = np.full(v.size, np.nan)
                k[v.size // 32, 32](v, out)
            else:
                out = np.full(x.size, np.nan, np.float32)
                k[x.size // 32, 32](x, y, out)
            results[f"{name}_{int(debug)}"] = bits(out)
    """
)

_SCRIPTS = {
    "plain": "run_plain()",
    "reference": _KERNELS + "run_kernels(False, ('hypot', 'exp'))",
    "kernels_then_plain": _KERNELS + "run_kernels(False); run_kernels(True); run_plain()",
    "plain_then_kernels": _KERNELS + "run_plain(); run_kernels(False); run_kernels(True)",
    "debug_first": _KERNELS + "run_kernels(True, ('polar', 'abs', 'cexp', 'hypot', 'exp')); run_plain()",
    "overload_helper": _KERNELS
    + textwrap.dedent(
        """
        from numba.extending import overload

        @numba.njit
        def helper(a, b):  # a user's plain Numba function, which an overload calls
            return math.hypot(a, b)

        def my_hypot(a, b):
            pass

        @overload(my_hypot)
        def _my_hypot(a, b):
            return lambda a, b: helper(a, b)

        def k_mine(x, y, out):
            i = xpu.grid(1)
            if i < x.size:
                out[i] = my_hypot(x[i], y[i])

        out = np.full(x.size, np.nan, np.float32)
        xpu.jit(k_mine)[x.size // 32, 32](x, y, out)
        results["mine_0"] = bits(out)
        a = np.zeros(x.size, np.float32)
        for j in range(x.size):
            a[j] = helper(x[j], y[j])
        results["plain_hypot"] = bits(a)
        """
    ),
    "big_helper": _KERNELS
    + textwrap.dedent(
        """
        from numba.extending import overload

        src = ["@numba.njit", "def big(v, w):", "    a = v"]
        src += [f"    a = a * 1.0000001 + (w * {j} % 7) * 1e-300" for j in range(150)]
        src += ["    return np.int32(a)"]
        exec("\\n".join(src), globals())  # a helper LLVM does not inline into its caller

        def three(v, w):
            pass

        @overload(three)
        def _three(v, w):
            return lambda v, w: big(v, w) + big(v * 0.5, w) + big(v * 0.25, w)

        def k_big(x, y, out):
            i = xpu.grid(1)
            if i < x.size:
                out[i] = three(np.float64(x[i]) * 1e20, np.float64(y[i]))

        out = np.zeros(x.size, np.int64)
        xpu.jit(k_big)[x.size // 32, 32](x, y, out)
        results["big_kernel"] = out.tolist()
        results["big_x"] = x.astype(np.float64).tolist()
        """
    ),
    "recursive_helper": textwrap.dedent(
        """
        from numba.extending import overload

        @numba.njit
        def rec(n, v):  # a recursion through another signature: rec(3, v) calls rec(int64)
            if n <= 0:
                return np.int32(v * 1e20) + math.sin(v)
            return rec(n - 1, v)

        def via(v):
            pass

        @overload(via)
        def _via(v):
            return lambda v: rec(3, v)  # a literal: Numba compiles rec(Literal[int](3), float64)

        import weakref

        class _Gone:
            pass

        gone = _Gone()
        dead = weakref.proxy(gone)  # a dead proxy on the heap (isinstance of it raises)
        del gone
        w = v / 100.0
        before = np.array([rec(3, t) for t in w])
        from numquad import xpu

        def k_rec(w, out, direct):
            i = xpu.grid(1)
            if i < w.size:
                out[i] = via(w[i])
                direct[i] = np.int32(w[i] * 1e20) + math.sin(w[i])

        @numba.njit
        def f(n, v):  # mutual recursion: g's call back to f is bound at run time
            if n <= 0:
                return np.int64(np.int32(v))
            return g(n - 1, v)

        @numba.njit
        def g(n, v):
            return f(n - 1, v)

        def via2(n, v):
            pass

        @overload(via2)
        def _via2(n, v):
            return lambda n, v: f(n, v)

        def k_mutual(w, out, n):
            i = xpu.grid(1)
            if i < w.size:
                out[i] = via2(n, w[i] * 1e20)

        mutual = []
        for n in range(6):  # n >= 3 passes g -> f at least once
            o = np.zeros(w.size, np.int64)
            xpu.jit(k_mutual)[w.size // 32, 32](w, o, n)
            mutual.append(o.tolist())
        results["mutual"] = mutual
        out, direct = np.full(w.size, np.nan), np.full(w.size, np.nan)
        xpu.jit(k_rec)[w.size // 32, 32](w, out, direct)
        after = np.array([rec(3, t) for t in w])
        results["rec_kernel"], results["rec_direct"] = bits(out), bits(direct)
        results["plain_before"], results["plain_after"] = bits(before), bits(after)
        results["w"] = w.tolist()
        """
    ),
    "log2": _KERNELS
    + textwrap.dedent(
        """
        a = np.full(x.size, np.nan, np.float32); b = a.copy()
        xpu.jit(k_log2)[x.size // 32, 32](x, a, b)
        results["np_log2"], results["math_log2"] = bits(a), bits(b)
        """
    ),
}


def _run(case, tmp_path_factory):
    path = tmp_path_factory.mktemp("math") / f"{case}.py"  # a file: xpu.jit reads the source
    path.write_text(_PRELUDE + _SCRIPTS[case] + "\nprint(json.dumps(results))\n")
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return {k: np.array(v) for k, v in json.loads(r.stdout.strip().splitlines()[-1]).items()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    plain, ref = _run("plain", tmp_path_factory), _run("reference", tmp_path_factory)
    # the inputs tell the C library and libdevice apart (else nothing below can fail)
    assert np.count_nonzero(plain["plain_hypot"] != ref["hypot_0"]) > 10
    assert np.count_nonzero(plain["plain_cexp"] != ref["exp_0"]) > 10
    return plain, ref


@pytest.mark.every_case
@pytest.mark.parametrize("case", ["kernels_then_plain", "plain_then_kernels", "debug_first", "overload_helper"])
def test_kernels_get_libdevice_and_plain_numba_keeps_the_c_library(reference, case, tmp_path_factory):
    plain, ref = reference
    got = _run(case, tmp_path_factory)
    for name in ("plain_hypot", "plain_cexp", "plain_abs"):
        if name in got:
            np.testing.assert_array_equal(got[name], plain[name], err_msg=f"{case}: plain Numba's {name}")
    kernels = [k for k in got if not k.startswith("plain")]
    assert kernels and "plain_hypot" in got
    for key in kernels:
        want = ref["exp_0"] if key.split("_")[0] in ("exp", "cexp") else ref["hypot_0"]
        np.testing.assert_array_equal(got[key], want, err_msg=f"{case}: the kernel {key}")


def test_np_log2_of_float32_is_math_log2(tmp_path_factory):
    got = _run("log2", tmp_path_factory)
    np.testing.assert_array_equal(got["np_log2"], got["math_log2"])


def test_a_helper_llvm_does_not_inline_gets_the_gpu_s_conversions(tmp_path_factory):
    """A user's plain ``@numba.njit`` helper that an ``@overload`` calls, too big for
    LLVM to inline: the kernel's calls bound by name to plain Numba's machine code
    (x86's 0x80000000 for ``np.int32(1e20)``); a probe of the thirty-second session."""
    res = _run("big_helper", tmp_path_factory)
    x = res["big_x"]
    assert np.all(np.abs(x) > 1e-9)  # every term out of int32's range
    want = np.where(x > 0, 3 * (2**31 - 1), 3 * -(2**31))  # three saturated terms (docs/semantics.md)
    np.testing.assert_array_equal(res["big_kernel"], want)


def test_a_recursion_through_another_signature_gets_the_gpu_s_bits(tmp_path_factory):
    """A user's recursive ``@numba.njit`` helper that an ``@overload`` calls with a
    constant: Numba compiles ``rec(Literal[int](3), float64)``, whose call of
    ``rec(int64, float64)`` it binds at run time by name (``.numba.unresolved$``), and
    that bound the kernel's call to plain Numba's machine code (x86's conversions and
    the C library's ``sin``); a probe of the thirty-third session. Then a second
    probe: mutual recursion (``f`` calls ``g`` calls ``f``), a cycle of such calls,
    ran plain code from its third level on."""
    res = _run("recursive_helper", tmp_path_factory)
    w = res["w"]
    saturated = np.where(w > 0, 2**31 - 1, -(2**31)).astype(np.float64)
    got = res["rec_kernel"].view(np.float64)
    # the conversion saturates (docs/semantics.md): the sum is within sin's range of it
    assert np.all(np.abs(got - saturated) <= 1.0)
    # the kernel's sin is libdevice's, the one its direct call computes
    np.testing.assert_array_equal(res["rec_kernel"], res["rec_direct"])
    # plain Numba keeps its own (x86's 0x80000000 and the C library), before and after
    np.testing.assert_array_equal(res["plain_after"], res["plain_before"])
    assert np.count_nonzero(res["plain_before"] != res["rec_kernel"]) > len(w) // 2
    # mutual recursion through two signatures (f -> g -> f; a probe): every depth saturates
    for depth, got in enumerate(res["mutual"]):
        np.testing.assert_array_equal(got, np.where(w > 0, 2**31 - 1, -(2**31)), err_msg=f"depth {depth}")
