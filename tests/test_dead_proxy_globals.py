"""A module whose globals hold a dead weak reference proxy still compiles its kernels.

Reading anything of a proxy whose object is gone raises ReferenceError, and the CPU
target's code generator read every global of the kernel's module (numquad/cpu/
generated.py ``namespace``): a kernel in such a module failed to compile with
"weakly-referenced object no longer exists" (found by this session's recursion test,
whose script kept such a proxy). A proxy the kernel does not name is nothing to it.
"""

import weakref

import numba
import numpy as np
import pytest

from numquad import Wave, xpu


class _Gone:
    def __call__(self):
        return 0


_obj, _cobj = _Gone(), _Gone()
DEAD = weakref.proxy(_obj)
DEAD_CALLABLE = weakref.proxy(_cobj)  # a CallableProxyType
del _obj, _cobj


@xpu.jit
def _scan(a, out):
    i = xpu.grid(1)
    out[i] = Wave.prefixSum(a[i])


@xpu.jit
def _lane(x, y):
    return x * 2 + Wave.reduceMax(y)


def _want_scan(a):
    w = a.reshape(-1, 32)
    return (np.cumsum(w, axis=1) - w).ravel()


@pytest.mark.parametrize("launch", ["cpu", "python", "debug"])
def test_a_kernel_beside_a_dead_proxy(launch, rng):
    with pytest.raises(ReferenceError):
        _ = DEAD.__class__  # the proxy is dead indeed
    a = rng.integers(-99, 99, 64)
    out = np.full(64, -777, np.int64)
    k = {"cpu": _scan.cpu, "python": _scan.python, "debug": xpu.jit(debug=True)(_scan.py_func)}[launch]
    k[2, 32](a, out)
    np.testing.assert_array_equal(out, _want_scan(a))


def test_a_lane_call_and_the_ptx_beside_a_dead_proxy(rng):
    x, y = rng.random(64), rng.random(64)
    want = x * 2 + np.repeat(y.reshape(-1, 32).max(axis=1), 32)
    np.testing.assert_array_equal(_lane(x, y), want)
    assert "shfl.sync" in _scan.inspect_ptx((numba.int64[::1], numba.int64[::1]))
