"""numba.cuda's introspection of a kernel's compiled forms on an ``@xpu.jit`` kernel:
``overloads``, ``signatures``, ``specializations`` and ``get_regs_per_thread()`` with
its siblings (numba-cuda 0.30.4's ``CUDADispatcher``). numba-cuda's own tests count
compiles with ``len(k.overloads)`` and read ``k.signatures[0]`` as argument types."""

import numpy as np
import pytest
from numba import cuda, types

from numquad import Wave, xpu

GPU = cuda.is_available()
_GETTERS = (
    "get_regs_per_thread",
    "get_const_mem_size",
    "get_shared_mem_per_block",
    "get_max_threads_per_block",
    "get_local_mem_per_thread",
)


@xpu.jit
def _scan(a, n):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = Wave.prefixSum(a[i]) + n


@xpu.jit("void(float32[:], int32)")
def _declared(a, n):
    a[0] = n


def _f32():
    return types.Array(types.float32, 1, "C")


def test_lazy_launches_are_counted_once_per_argument_types():
    k = xpu.jit(_scan.py_func)
    assert k.signatures == [] and k.overloads == {}
    rng = np.random.default_rng(7)
    a = rng.standard_normal(64).astype(np.float32)
    k[2, 32](a, 3)
    k[2, 32](a.copy(), 4)  # the same types: no new overload
    assert k.signatures == [(_f32(), types.int64)]
    b = rng.integers(-9, 9, 64)
    k[2, 32](b, 2.5)
    assert k.signatures == [(_f32(), types.int64), (types.Array(types.int64, 1, "C"), types.float64)]
    assert list(k.overloads) == k.signatures
    assert len(k.overloads) == 2


def test_declared_signatures_come_first_and_compile_at_decoration():
    a_f32 = types.Array(types.float32, 1, "A")
    assert _declared.signatures == [(a_f32, types.int32)]
    assert list(_declared.overloads) == [(a_f32, types.int32)]
    a = np.full(4, np.nan, np.float32)
    _declared[1, 1](a, 7)
    assert a[0] == 7 and _declared.signatures == [(a_f32, types.int32)]


def test_specializations_are_the_copies_specialize_returned():
    k = xpu.jit(_scan.py_func)
    a = np.zeros(32, np.float32)
    s = k.specialize(a, np.int32(1))
    assert s.specialized and k.specialize(a, np.int32(1)) is s
    assert k.specializations == {(_f32(), types.int32): s}
    assert s.signatures == [(_f32(), types.int32)]
    with pytest.raises(RuntimeError, match="already specialized"):
        s.specialize(a, np.int32(1))


def test_specialize_from_several_threads_gives_each_one_copy_and_numpys_values():
    """Each thread's copy is compiled outside the original's lock (a compile takes
    Numba's lock first); every thread gets the copy kept first, which computes."""
    import threading

    k = xpu.jit(_scan.py_func)
    got, errors = [], []
    rng = np.random.default_rng(7)
    x = rng.integers(-100, 100, 64).astype(np.float32)

    def work():
        try:
            got.append(k.specialize(x, np.int32(1)))
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert len(got) == 3 and got[0] is got[1] is got[2] and k.specializations == {(_f32(), types.int32): got[0]}
    a = x.copy()
    got[0][2, 32](a, 5)
    w = x.reshape(2, 32)
    np.testing.assert_array_equal(a, (np.cumsum(w, axis=1) - w + 5).ravel())


def test_a_lane_function_lists_its_declared_signatures_only():
    lane = xpu.jit("float64(float64)")(lambda x: x + 1.0)
    assert lane.signatures == [(types.float64,)] and lane.overloads == {}
    assert lane(np.arange(3.0)).tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("getter", _GETTERS)
def test_gpu_figures_of_a_kernel_run_on_the_cpu_only(getter):
    k = xpu.jit(_scan.py_func)
    k[1, 32](np.ones(32, np.float32), 1)
    assert getattr(k, getter)() == {}  # numba.cuda's answer before any compile
    with pytest.raises(KeyError) as e:
        getattr(k, getter)(types.void(_f32(), types.int64))
    msg = str(e.value)
    assert f"_scan.{getter}(signature)" in msg and "test_dispatcher_introspection.py" in msg
    assert "not been compiled for the CUDA target" in msg and "array(float32, 1d, C), int64" in msg
    with pytest.raises(TypeError, match=rf"_scan.{getter}\(signature\): signature must be a Numba signature.*got str"):
        getattr(k, getter)("void(float32[:], int64)")


@pytest.mark.skipif(not GPU, reason="needs an NVIDIA GPU")
@pytest.mark.parametrize("getter", _GETTERS)
def test_gpu_figures_match_numba_cuda_on_the_cuda_target(getter):
    k = xpu.jit(_scan.py_func)
    a = cuda.to_device(np.ones(64, np.float32))
    k.cuda[2, 32](a, 1)
    sig = types.void(_f32(), types.int64)
    figure = getattr(k, getter)(sig)
    assert isinstance(figure, int) and figure >= 0
    assert getattr(k, getter)() == {(_f32(), types.int64): figure}
    if getter in ("get_regs_per_thread", "get_max_threads_per_block"):
        assert figure > 0
    assert list(k.overloads) == [(_f32(), types.int64)]
