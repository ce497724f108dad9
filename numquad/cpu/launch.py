"""Launching CPU wave code: the blocks of a grid, spread over cores.

The compiled block function runs blocks ``b0..b1`` of the grid (each block's
waves in order) with the GIL released (``nogil=True``). A launch cuts the grid
into contiguous chunks and runs them on ``numba.get_num_threads()`` worker
threads (so ``NUMBA_NUM_THREADS`` and ``numba.set_num_threads`` apply); small
grids run on the calling thread. One chunk per native call, never a Python call
per block, wave or lane; a chunk is at most ``_PIECE_THREADS`` threads of work, so
a Ctrl-C stops a huge launch within milliseconds.

Why not a ``prange`` launcher: compiling a ``parallel=True`` launcher cost
1.1 s per kernel here, more than the wave code itself; this path costs nothing
to compile and scales the same (see docs/BENCHMARKS.md).
"""

from __future__ import annotations

import concurrent.futures
import faulthandler
import itertools
import os
import sys
import threading
import time

import numba

from . import interrupt as _interrupt

__all__ = ["one_call", "run_grid", "run_one"]

_pool = None
_pool_lock = threading.Lock()


def _executor():
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=numba.config.NUMBA_NUM_THREADS, thread_name_prefix="numquad"
            )
        return _pool


def _after_fork_in_child():
    """A forked child has none of the parent's worker threads: forget the pool (a new
    one starts on the child's first large launch) and the lock, which a parent
    thread may have held at the fork. The parent's pool is left alone."""
    global _pool, _pool_lock
    _pool = None
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


_faulthandler_checked = False
#: this thread is inside a launch on the worker pool (submitting or waiting): a launch
#: from a signal handler then runs on the calling thread, since the pool's own lock
#: may be held by the interrupted submit (a probe's test deadlocked in
#: ThreadPoolExecutor._adjust_thread_count)
_on_pool = threading.local()


def _enable_faulthandler():
    """Once, at the first launch: if Python's faulthandler is off, turn it on (to
    stderr), so that a segmentation fault in wave code (an out-of-bounds access
    without ``debug=True``) prints the Python stack of the launch instead of
    nothing. Left as it is when the program (or pytest, or ``python -X
    faulthandler``) has set it up; skipped when stderr has no file descriptor."""
    global _faulthandler_checked
    _faulthandler_checked = True
    try:
        if not faulthandler.is_enabled():
            faulthandler.enable(file=sys.stderr, all_threads=True)
    except (AttributeError, ValueError, OSError, RuntimeError):
        pass  # no usable stderr (some embedded interpreters): nothing to print to


#: The most threads of work one native call runs: a native call cannot be stopped, so
#: a Ctrl-C (or an error in another worker) stops a launch at the end of the piece
#: each worker is running, a few milliseconds, not after the whole grid (a launch of
#: 2**31 - 1 blocks of 1024 threads is hours of work).
_PIECE_THREADS = 1 << 22

#: Where no watcher thread sets the stop flag on a Ctrl-C (cpu/interrupt.py
#: ``UNWIRED``), the time one native call of a launch on the calling thread aims at
#: (after its first block, timed), and the fewest threads of a launch timed so.
_PIECE_SECONDS = 0.05
_TIMED_THREADS = 1024


def _small(nblocks, nthreads):
    """Below ~64k threads of work, fan-out costs more than it saves."""
    return nblocks < 2 or nblocks * nthreads < 65536


def one_call(grid, block):
    """Does :func:`run_grid` run a launch of *grid* and *block* as one native call
    on the calling thread (with its default thread count, where a Ctrl-C sets the
    stop flag; :func:`run_one` falls back to :func:`run_grid` where it cannot)?"""
    return _small(grid[0] * grid[1] * grid[2], block[0] * block[1] * block[2])


def run_one(entry, args, tail):
    """A launch that :func:`one_call` says is one native call, given the block
    function's native *entry* and the arguments after the kernel's (first block,
    end block, grid and block dimensions): what :func:`run_grid` does for it, with
    nothing decided again."""
    got = _interrupt.new_flag()
    flag, stop_at = got
    prev = _interrupt.enter_main(flag)  # a Ctrl-C sets the flag (cpu/interrupt.py)
    if prev is _interrupt.UNWIRED:
        _interrupt.release_flag(got)
        return run_grid(entry, args, tail[2:5], tail[5:8])
    try:
        entry(*args, *tail, stop_at)
    finally:
        _interrupt.leave_main(prev)
    if flag.value:
        _interrupt.check(flag)
    _interrupt.release_flag(got)


def run_grid(block_fn, args, grid, block, threads=None):
    """Run every block of *grid* through *block_fn* (b0, b1, grid dims, block dims,
    the address of the launch's stop flag: cpu/interrupt.py)."""
    if not _faulthandler_checked:
        _enable_faulthandler()
    nblocks = grid[0] * grid[1] * grid[2]
    nthreads = block[0] * block[1] * block[2]
    # (asking Numba for its thread count takes a lock: a tenth of a small launch)
    small = _small(nblocks, nthreads)
    workers = 1 if small and threads is None else numba.get_num_threads() if threads is None else threads
    if workers > 1 and getattr(_on_pool, "busy", False):
        workers = 1  # a launch inside a pool launch (see _on_pool)
    per_piece = max(1, _PIECE_THREADS // nthreads)
    got = _interrupt.new_flag()  # every while loop of the kernel tests it
    flag, stop_at = got  # (given back at the end, not after an
    if workers <= 1 or small:  # error: a worker may still read it)
        start = 0
        prev = _interrupt.enter_main(flag)  # a Ctrl-C sets the flag (cpu/interrupt.py)
        try:
            # the block function tests the flag before each block, so a Ctrl-C stops a
            # launch within a block's time (16 blocks of 256 threads with long loops
            # were one native call of 19 s). Where no watcher sets the flag, Python
            # sees a Ctrl-C only between native calls: block 0 alone, timed, then
            # pieces of about _PIECE_SECONDS each
            if prev is _interrupt.UNWIRED and nblocks > 1 and nblocks * nthreads >= _TIMED_THREADS:
                t0 = time.perf_counter()
                block_fn(*args, 0, 1, *grid, *block, stop_at)
                _interrupt.check(flag)
                took = time.perf_counter() - t0
                per_piece = min(per_piece, max(1, int(_PIECE_SECONDS / max(took, 1e-9))))
                start = 1
            for b0 in range(start, nblocks, per_piece):  # Python sees a Ctrl-C between pieces
                block_fn(*args, b0, min(nblocks, b0 + per_piece), *grid, *block, stop_at)
                if flag.value:
                    _interrupt.check(flag)
        finally:
            _interrupt.leave_main(prev)
        _interrupt.release_flag(got)
        return
    chunks = max(min(nblocks, workers * 4), -(-nblocks // per_piece))
    # chunk k is blocks nblocks * k // chunks up to the next chunk's start (computed
    # per chunk: a list of them is 2**46 entries for the largest legal grid)
    taken = itertools.count()  # the next chunk (next() holds the GIL)
    stop = threading.Event()

    def work():
        while not stop.is_set():
            k = next(taken)
            if k >= chunks:
                return
            try:
                block_fn(*args, nblocks * k // chunks, nblocks * (k + 1) // chunks, *grid, *block, stop_at)
            except BaseException:
                stop.set()  # the other workers stop too
                flag.value = 1
                raise

    pool = _executor()
    futures = []
    _on_pool.busy = True
    try:
        # (submitted inside the try: a Ctrl-C between two submits left the first
        # workers running the rest of the grid, and the interpreter waited for them)
        for _ in range(min(workers, chunks)):
            futures.append(pool.submit(work))
        for f in futures:
            f.result()  # re-raises the first error in the caller
        _interrupt.check(flag)  # (a launch that stopped early never returns normally)
    except BaseException:  # an error, or a KeyboardInterrupt in the caller
        stop.set()
        flag.value = 1  # a loop of the kernel returns at its next iteration
        concurrent.futures.wait(futures)  # each ends its piece, then returns
        raise
    finally:
        _on_pool.busy = False
        stop.set()  # (a second Ctrl-C in the wait above: the workers still stop)
    _interrupt.release_flag(got)
