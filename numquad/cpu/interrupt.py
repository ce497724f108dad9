"""Ctrl-C inside a running CPU kernel.

A kernel runs as native code; Python runs its SIGINT handler only between
bytecodes, so a kernel whose loop never ends (a lane spinning on a lock that a
lane of its own wave holds: docs/semantics.md, "Memory between threads") could
not be stopped, and on the worker pool its threads kept the interpreter from
exiting. Every launch now passes the address of a stop flag (an int32) to the block
function, and each ``while`` loop of the generated code tests it at the top of every
iteration, and the block function before each block (:func:`stopped`, one relaxed
atomic load): a set flag returns from the block function at once.

Who sets it:

- a launch on the worker pool (cpu/launch.py): the calling thread, when its wait
  is interrupted (KeyboardInterrupt) or a worker fails;
- a launch on the main thread, which is in native code when the signal comes: a
  watcher thread, woken by the byte that Python's C-level signal handler writes to
  the wakeup fd (``signal.set_wakeup_fd``; a wakeup fd set before, asyncio's, gets
  every byte passed on). It sets the flag of the main thread's running launch
  where SIGINT's handler is Python's default one (a program's own handler decides
  for itself: its kernels run on).

The launch then raises ``KeyboardInterrupt`` (:func:`check`): a launch that
returned early never returns normally.
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading

from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

__all__ = ["UNWIRED", "stopped", "new_flag", "release_flag", "enter_main", "leave_main", "check"]


@intrinsic
def stopped(typingctx, addr):
    """``stopped(addr)``: is the int32 at address *addr* (an int64) non-zero? A
    relaxed atomic load, which LLVM may not hoist out of the loop that tests it."""

    def codegen(context, builder, sig, args):
        ptr = builder.inttoptr(args[0], ir.PointerType(ir.IntType(32)))
        v = builder.load_atomic(ptr, "monotonic", 4)
        return builder.icmp_unsigned("!=", v, ir.Constant(ir.IntType(32), 0))

    return types.boolean(addr), codegen


_local = threading.local()


def new_flag():
    """(a stop flag, cleared, and its address as the block function takes it) for
    one launch, from the calling thread's free list; :func:`release_flag` returns it.
    One per launch, not per thread: a launch inside a launch on the same thread (from
    a signal handler) shared the outer one's flag, and its failure stopped the outer
    launch's loops, which returned with elements never computed (a probe)."""
    try:
        got = _local.free.pop()
    except (AttributeError, IndexError):  # a thread's first launch, or a nested one
        if not hasattr(_local, "free"):
            _local.free = []
        flag = ctypes.c_int32(0)
        got = (flag, ctypes.addressof(flag))
    got[0].value = 0
    return got


def release_flag(got):
    """Give back a flag of :func:`new_flag` whose launch has ended (no worker reads it)."""
    _local.free.append(got)


def check(flag):
    """After a native call of a launch: a set flag means the launch stopped early."""
    if flag.value:
        raise KeyboardInterrupt("the kernel launch was interrupted")


_lock = threading.Lock()
_state = {"installed": False, "flag": None}


def _after_fork_in_child():
    # a forked child has no watcher thread: installed again at its first launch (the
    # thread that forked is the child's main thread)
    global _lock, _MAIN
    _lock = threading.Lock()
    _MAIN = threading.main_thread().ident
    _state["installed"], _state["flag"] = False, None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _watch(fd_read, forward):
    while True:
        try:
            data = os.read(fd_read, 512)
        except InterruptedError:
            continue
        except OSError:
            return
        if not data:
            return
        if forward is not None:
            try:
                os.write(forward, data)
            except OSError:
                pass
        if signal.SIGINT in data and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            flag = _state["flag"]
            if flag is not None:
                flag.value = 1


def _install():
    """The wakeup fd and its watcher, once per process (and again in a forked
    child, which has no watcher thread); only the main thread may install them."""
    if _state["installed"]:
        return True
    if threading.current_thread() is not threading.main_thread():
        return False
    try:
        r, w = os.pipe()
        os.set_blocking(w, False)
        old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except (ValueError, OSError, AttributeError):
        return False
    threading.Thread(target=_watch, args=(r, old if old >= 0 else None), name="numquad-sigint", daemon=True).start()
    _state["installed"] = True
    return True


_MAIN = threading.main_thread().ident
_OFF = object()
#: :func:`enter_main`'s answer on the main thread where the watcher could not be
#: installed: a Ctrl-C reaches Python only between native calls
UNWIRED = object()


def enter_main(flag):
    """Before a launch's native calls on the calling thread: where that is the main
    thread, a Ctrl-C from now on sets *flag*. Returns what :func:`leave_main` takes:
    :data:`UNWIRED` where it cannot (no watcher on the main thread).
    (On every launch: kept to a thread-id compare and two dict operations.)"""
    if threading.get_ident() != _MAIN:
        return _OFF
    if not _state["installed"]:
        with _lock:
            if not _install():
                return UNWIRED
    prev, _state["flag"] = _state["flag"], flag
    return prev


def leave_main(prev):
    """After the launch (:func:`enter_main`'s return value)."""
    if prev is not _OFF and prev is not UNWIRED:
        _state["flag"] = prev
