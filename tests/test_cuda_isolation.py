"""numquad's CUDA settings stay with numquad's code (numquad/cuda/nvvmir.py).

numquad compiles its kernels with ``-fma=0`` and its own IR and PTX rewrites, by
way of numba-cuda's ``nvvm.compile_ir``. A user's own numba.cuda code in the same
process must compile exactly as numba-cuda alone compiles it:

- on another thread while numquad compiles (numba-cuda calls ``compile_ir`` without
  its compiler lock from ``inspect_asm`` and when it first launches on a GPU of
  another compute capability); a probe measured 340 of 393 such compiles of a
  user's ``a * b + c`` without its FMA when numquad swapped the attribute for the
  length of its compiles;
- with a wrapper of the user's own on ``compile_ir``, installed after numquad's
  first compile (numquad put back the function it found at import);
- from numba-cuda's disk cache: ``cuda.jit(cache=True)(f)`` and
  ``xpu.jit(cache=True)(f)`` shared one cache entry, so whichever compiled first
  gave the other its code.

And numquad's own kernels keep numquad's settings when numba-cuda compiles them
again later, outside numquad's compile (:func:`mark_library`).

Runs without a GPU where libNVVM is installed (numba-cuda[cu13]).
"""

import threading

import pytest

from numquad.cuda import nvvmir

from conftest import cuda_available


def _nvvm():
    try:
        from numba.cuda.cudadrv import nvvm

        nvvm.NVVM()  # loads libNVVM
        return nvvm
    except Exception:  # noqa: BLE001 - no numba-cuda or no libNVVM
        return None


pytestmark = pytest.mark.skipif(_nvvm() is None, reason="needs libNVVM (numba-cuda[cu13])")


def _muladd(a, b, c):
    return a * b + c


_IR = []


def _ir():
    """The NVVM IR numba-cuda builds for ``a * b + c`` in float32 (which NVVM
    contracts to ``fma.rn.f32`` unless told ``-fma=0``), caught on its way to
    ``compile_ir``."""
    if not _IR:
        from numba import cuda, float32

        nvvm = _nvvm()
        real = nvvm.compile_ir

        def catch(ir, **options):
            _IR.append(ir)
            return real(ir, **options)

        nvvm.compile_ir = catch
        try:
            cuda.compile_ptx(_muladd, (float32, float32, float32), device=True, cc=(9, 0))
        finally:
            nvvm.compile_ir = real
    return _IR[0]


def _fused(ptx):
    text = ptx.decode() if isinstance(ptx, bytes) else ptx
    return "fma.rn.f32" in text


def _compile(**options):
    nvvm = _nvvm()
    return nvvm.compile_ir(_ir(), arch="compute_90", **options)


def test_the_test_ir_is_fused_by_nvvm_and_not_inside_a_numquad_compile():
    assert _fused(_compile())
    with nvvmir.no_fma():
        assert not _fused(_compile())
    assert _fused(_compile())


def test_another_thread_compiles_with_numba_cuda_s_settings_while_numquad_compiles():
    inside, done = threading.Event(), threading.Event()
    seen = {}

    def numquad_thread():
        with nvvmir.no_fma():
            inside.set()
            done.wait(60)
            seen["numquad"] = _fused(_compile())

    t = threading.Thread(target=numquad_thread)
    t.start()
    assert inside.wait(60)
    try:
        seen["user"] = _fused(_compile())
    finally:
        done.set()
        t.join(60)
    assert seen == {"user": True, "numquad": False}


def test_a_marked_library_compiles_with_numquad_s_settings_on_any_thread():
    class Library:
        _nvvm_options = {"opt": 3}

    lib = Library()
    nvvmir.mark_library(lib)
    assert not _fused(_compile(**lib._nvvm_options))
    assert _fused(_compile(opt=3))


def test_a_wrapper_the_user_installs_later_keeps_running():
    nvvm = _nvvm()
    with nvvmir.no_fma():  # numquad's first compile installs its function
        pass
    calls = []
    before = nvvm.compile_ir

    def logging_compile_ir(ir, **options):
        calls.append(sorted(options))
        return before(ir, **options)

    nvvm.compile_ir = logging_compile_ir
    try:
        with nvvmir.no_fma():  # a later numquad compile
            assert not _fused(nvvm.compile_ir(_ir(), arch="compute_90"))
        assert _fused(nvvm.compile_ir(_ir(), arch="compute_90"))
        assert len(calls) == 2, "the user's wrapper was dropped"
    finally:
        nvvm.compile_ir = before


def test_numquad_s_kernel_has_a_disk_cache_entry_of_its_own(tmp_path, monkeypatch):
    import importlib
    import sys

    (tmp_path / "nq_cached_mod.py").write_text(
        "from numba import cuda\n\n\ndef f(x, c, out):\n    i = cuda.grid(1)\n"
        "    if i < out.size:\n        out[i] = x[i] * x[i] + c[i]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("nq_cached_mod")
    try:
        from numba import cuda

        from numquad import xpu

        plain = cuda.jit(cache=True)(mod.f)
        paths = {plain._cache._cache_file._index_path}
        for fastmath in (False, True):
            k = xpu.jit(cache=True, fastmath=fastmath)(mod.f)
            paths.add(k._target("cuda").kernel()._cache._cache_file._index_path)
        assert len(paths) == 3, paths
    finally:
        sys.modules.pop("nq_cached_mod", None)


@pytest.mark.cuda
@pytest.mark.skipif(not cuda_available(), reason="needs an NVIDIA GPU (numba.cuda.is_available() is false)")
def test_numquad_s_kernel_compiled_again_for_another_gpu_keeps_numquad_s_settings():
    import numpy as np

    from numquad import xpu

    @xpu.jit
    def muladd(x, c, out):
        i = xpu.grid(1)
        if i < out.size:
            out[i] = x[i] * x[i] + c[i]

    x = np.full(32, 1 + 2.0**-12, np.float32)
    c = np.full(32, -1, np.float32)
    out = np.zeros(32, np.float32)
    muladd.cuda[1, 32](x, c, out)
    # x * x = 1 + 2**-11 + 2**-24 rounds (a tie, to even) to 1 + 2**-11; an FMA keeps the 2**-24
    assert out[0] == np.float32(2.0**-11)
    kernel = muladd._target("cuda").kernel()
    (compiled,) = kernel.overloads.values()
    lib = compiled._codelibrary
    # numba-cuda's compile for a GPU of compute capability 8.0, outside numquad's compile
    ptx = "\n".join(lib.get_asm_strs(cc=(8, 0)))
    assert "fma.rn.f32" not in ptx and "mul.rn.f32" in ptx
