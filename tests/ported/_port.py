"""Shared helpers of the ported numba-cuda tests (tests/ported/).

The tests in this directory are numba-cuda's own kernel tests (numba-cuda 0.30.4,
``numba/cuda/tests/cudapy`` and ``numba/cuda/tests/doc_examples``; BSD-2-Clause,
Copyright (c) 2025 NVIDIA CORPORATION & AFFILIATES), adapted to numquad: the
kernel's ``cuda.jit`` becomes ``xpu.jit`` (here ``self.jit``, which picks the
target), device arrays become host arrays (``cuda.to_device(a)`` -> ``a``,
``d.copy_to_host()`` -> ``d``). Kernels, inputs and assertions are numba-cuda's.

Each ``PortedCase`` runs on the CPU target, and on the CUDA target where a GPU
is available (``*OnCuda`` subclasses skip cleanly without one). A test that does
not pass on the CPU is marked ``cpu_xfail(reason)`` (strict): docs/numba-cuda.md
counts them.
"""

import contextlib
import functools
import unittest

import numpy as np
import pytest

from numquad import xpu

from conftest import cuda_available


class Targeted:
    """An xpu.jit function whose launches go to one target."""

    def __init__(self, d, target):
        self._d = d
        self._t = target

    def __getitem__(self, config):
        return getattr(self._d, self._t)[config]

    def __call__(self, *args, **kw):
        return getattr(self._d, self._t)(*args, **kw)

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        if ntasks < 0:
            return self._d.forall(ntasks)  # numba.cuda's ValueError
        tpb = tpb or 128

        def run(*args):
            if ntasks == 0:
                return None
            return self[(ntasks + tpb - 1) // tpb, tpb, stream, sharedmem](*args)

        return run

    def specialize(self, *args):
        return self

    def __getattr__(self, name):
        return getattr(self._d, name)


def jit_for(target):
    def jit(func_or_sig=None, **kw):
        if (
            callable(func_or_sig)
            and not isinstance(func_or_sig, (str, list, tuple))
            and not hasattr(func_or_sig, "return_type")
        ):
            return Targeted(xpu.jit(func_or_sig, **kw), target)

        def wrap(f):
            d = xpu.jit(func_or_sig, **kw)(f) if func_or_sig is not None else xpu.jit(f, **kw)
            return Targeted(d, target)

        return wrap

    return jit


class PortedCase(unittest.TestCase):
    """numba-cuda's CUDATestCase, on numquad's CPU target (``target``)."""

    target = "cpu"

    def setUp(self):
        super().setUp()
        self.jit = jit_for(self.target)

    def subTest(self, msg=unittest.case._subtest_msg_sentinel, **params):
        # the parameters as text: pytest-xdist sends each subtest's report to the
        # controller, and its serializer takes no Numba types or NumPy scalars
        return super().subTest(msg, **{k: repr(v) for k, v in params.items()})

    def assertPreciseEqual(self, a, b, prec="exact", **kw):
        if prec == "exact":
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-6 if prec == "single" else 1e-15)


def on_cuda(cls):
    """The same tests on the CUDA target (skipped without a GPU)."""
    sub = type(cls.__name__ + "OnCuda", (cls,), {"target": "cuda"})
    sub.__module__ = cls.__module__
    return pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU")(sub)


def fp16_xfail(fn):
    """cpu_xfail for the float16 halves of a ported test; their subtests run as plain
    blocks, so that a failing case reaches cpu_xfail (a failing unittest subtest is
    reported on its own and does not raise out of the test)."""

    @functools.wraps(fn)
    def run(self, *a, **k):
        self.subTest = lambda *a, **k: contextlib.nullcontext()
        return fn(self, *a, **k)

    return cpu_xfail("float16 is not supported by the CPU target")(run)


def cpu_xfail(reason, cuda_too=False):
    """A ported test that does not pass on the CPU target (strict: it fails the
    suite once it passes, so docs/numba-cuda.md's count stays true). *cuda_too*: nor
    on the CUDA target (strict there too; an ``xpu.jit(sig)`` kernel raises the CPU
    target's compile error at decoration on a GPU machine as well)."""

    def deco(fn):
        @functools.wraps(fn)
        def run(self, *a, **k):
            if self.target != "cpu" and not cuda_too:
                return fn(self, *a, **k)
            try:
                fn(self, *a, **k)
            except Exception:  # noqa: BLE001
                pytest.xfail(reason)
            raise AssertionError(f"{fn.__name__} passes on the {self.target} target now: remove cpu_xfail ({reason})")

        return run

    return deco


def expected_failure_on_cuda(reason):
    """numba-cuda's expectedFailure / xfail_unless_cudasim on a test that passes on
    the CPU: an expected failure on the CUDA target only. (Named without "xfail", so
    docs/numba-cuda.md does not count it as failing on the CPU.)"""

    def deco(fn):
        @functools.wraps(fn)
        def run(self, *a, **k):
            if self.target != "cuda":
                return fn(self, *a, **k)
            try:
                fn(self, *a, **k)
            except Exception:  # noqa: BLE001
                pytest.xfail(reason)

        return run

    return deco
