"""Python functions that numquad writes as source text (lane-call kernels, op
checks, typing stubs): registered with :mod:`linecache` under a ``<numquad ...>``
file name, so tracebacks, ``inspect`` and Numba's error messages can show their
lines, then executed in a given scope."""

from __future__ import annotations

import linecache

__all__ = ["exec_source"]


def exec_source(src, filename, scope):
    """Execute *src* (module-level definitions) in the dict *scope* under *filename*;
    returns the ``linecache`` entry it registered (a caller that outlives the code
    may remove it when the entry is still its own)."""
    entry = (len(src), None, src.splitlines(True), filename)
    linecache.cache[filename] = entry
    exec(compile(src, filename, "exec"), scope)  # noqa: S102 - source numquad generated
    return entry
