"""numba.cuda device functions declared with a signature, on a machine with no GPU.

``@cuda.jit("float64(float64)", device=True)`` compiles for the current GPU when
it decorates (numba-cuda asks the driver for the compute capability), so without
a GPU the decoration itself raises ``CudaSupportError`` and the function never
reaches numquad's CPU target. numquad patches ``CUDADispatcher.compile_device``
so that, *only when called by numba-cuda's decorator and only when there is no
CUDA driver*, the signature is recorded (``_numquad_signatures``) and the
compilation is left for later; with a GPU nothing changes. The CPU target then
compiles the function from its Python source with that signature
(numquad/cpu/cudaapi.py, ``as_xpu``).

This module imports nothing heavy: the patch is applied when numba.cuda's
dispatcher module is (or has been) imported.
"""

from __future__ import annotations

import functools
import importlib.abc
import sys

__all__ = ["install"]

_TARGET = "numba.cuda.dispatcher"


def _from_decorator():
    f = sys._getframe(2)
    return f.f_code.co_name == "_jit" and f.f_code.co_filename.replace("\\", "/").endswith(
        "numba/cuda/decorators.py")


def _patch(mod):
    cls = getattr(mod, "CUDADispatcher", None)
    if cls is None or getattr(cls.compile_device, "_numquad", False):
        return
    orig = cls.compile_device

    @functools.wraps(orig)
    def compile_device(self, args, return_type=None):
        try:
            return orig(self, args, return_type)
        except Exception as e:                      # noqa: BLE001 - re-raised below
            if type(e).__name__ != "CudaSupportError" or not _from_decorator():
                raise
            self.__dict__.setdefault("_numquad_signatures", []).append((tuple(args), return_type))
            return None

    compile_device._numquad = True
    cls.compile_device = compile_device
    orig_disable = cls.disable_compile

    @functools.wraps(orig_disable)
    def disable_compile(self, val=True):
        # a deferred signature leaves compilation on, for a GPU that appears later
        if val and self.__dict__.get("_numquad_signatures") and not self.overloads:
            return None
        return orig_disable(self, val)

    cls.disable_compile = disable_compile


class _Finder(importlib.abc.MetaPathFinder):
    """Patches numba.cuda's dispatcher module right after it is first imported."""

    def find_spec(self, name, path, target=None):
        if name != _TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        orig_exec = loader.exec_module

        def exec_module(module):
            orig_exec(module)
            try:
                _patch(module)
            finally:
                _remove()
        loader.exec_module = exec_module
        return spec


_FINDER = None


def _remove():
    global _FINDER
    if _FINDER is not None and _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    _FINDER = None


def install():
    """Patch now if numba.cuda's dispatcher is loaded, else when it loads."""
    global _FINDER
    mod = sys.modules.get(_TARGET)
    if mod is not None:
        _patch(mod)
        return
    if _FINDER is None:
        _FINDER = _Finder()
        sys.meta_path.insert(0, _FINDER)


install()
