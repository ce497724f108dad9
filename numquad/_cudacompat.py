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

The same driver query stops PTX generation without a GPU: a kernel that calls a
device function (a lane function, or a user's ``@cuda.jit(device=True)``) types
the call through ``compile_device``, which asks the driver for the compute
capability. Inside ``target_cc(cc)`` (numquad's ``inspect_ptx`` and typing of
lane functions) a machine with no CUDA driver compiles device functions for
*cc* instead; with a driver nothing changes.

A function with such a deferred signature, typed at a call inside ``target_cc``,
compiles its declared signatures then (and no other), as the decorator would have
with a GPU: the caller casts its arguments to them.

This module imports nothing heavy: the patch is applied when numba.cuda's
dispatcher module is (or has been) imported.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import sys
import threading

__all__ = ["install", "target_cc"]

_tls = threading.local()


@contextlib.contextmanager
def target_cc(cc):
    """Device functions compiled meanwhile on this thread target *cc* when no driver exists."""
    prev = getattr(_tls, "cc", None)
    _tls.cc = tuple(cc)
    try:
        yield
    finally:
        _tls.cc = prev


class _NoDriverDevice:
    def __init__(self, cc):
        self.compute_capability = cc


_TARGET = "numba.cuda.dispatcher"


def _from_decorator():
    f = sys._getframe(2)
    return f.f_code.co_name == "_jit" and f.f_code.co_filename.replace("\\", "/").endswith("numba/cuda/decorators.py")


def _patch(mod):
    cls = getattr(mod, "CUDADispatcher", None)
    if cls is None or getattr(cls.compile_device, "_numquad", False):
        return
    orig = cls.compile_device

    def compile_one(self, args, return_type, from_decorator):
        try:
            return orig(self, args, return_type)
        except Exception as e:  # noqa: BLE001 - re-raised below
            if type(e).__name__ != "CudaSupportError":
                raise
            if from_decorator:
                self.__dict__.setdefault("_numquad_signatures", []).append((tuple(args), return_type))
                return None
            cc = getattr(_tls, "cc", None)
            if cc is None:
                raise
        # no driver, inside target_cc: the driver's one answer here is the target's cc
        # (under numba-cuda's compiler lock, so no other thread sees the swap)
        with mod.global_compiler_lock:
            real = mod.get_current_device
            mod.get_current_device = lambda: _NoDriverDevice(cc)
            try:
                return orig(self, args, return_type)
            finally:
                mod.get_current_device = real

    @functools.wraps(orig)
    def compile_device(self, args, return_type=None):
        from_decorator = _from_decorator()
        deferred = self.__dict__.get("_numquad_signatures")
        if deferred and not self.overloads and not from_decorator and getattr(_tls, "cc", None):
            # a call typed against a function declared with signatures, with no driver:
            # compile those (as the decorator would have with a GPU) and no other, so
            # the caller casts its arguments (numba-cuda's test_device_casting)
            for a, r in deferred:
                compile_one(self, a, r, False)
            type(self).disable_compile(self, True)
            return self.overloads.get(tuple(args))
        return compile_one(self, args, return_type, from_decorator)

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
