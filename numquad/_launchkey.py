"""What a kernel launch's argument types depend on, read without Numba.

``numba.typeof`` builds a new type object on every call, which was most of a CPU
launch. A launch instead reads the few facts a NumPy array's or scalar's Numba
type depends on (:func:`launch_key`); the dispatcher (numquad/xpu.py: the quick
runners of both targets) and the CPU target (numquad/cpu/dispatch.py) key what
they have already decided for a launch on them.
"""

from __future__ import annotations

import numpy as np

__all__ = ["array_key", "launch_key"]

#: NPY_ARRAY_C_CONTIGUOUS | F_CONTIGUOUS | ALIGNED | WRITEABLE: the flags an
#: array's Numba type depends on (layout, ``aligned``, ``readonly``)
_TYPE_FLAGS = 0x1 | 0x2 | 0x100 | 0x400


def array_key(a):
    """What an ndarray's Numba type depends on: dtype, dimensions, and the flags
    of its layout, alignment and writeability."""
    return (a.dtype, a.ndim, a.flags.num & _TYPE_FLAGS)


def launch_key(args):
    """What the Numba types of a launch's arguments depend on, when that is all of
    them: NumPy arrays (:func:`array_key`), NumPy scalars, Python floats and bools,
    Python ints in int64's range, numba.cuda device arrays (their own Numba type);
    else None (anything else is typed by Numba)."""
    key = []
    for a in args:
        t = type(a)
        if t is np.ndarray:
            key.append((a.dtype, a.ndim, a.flags.num & _TYPE_FLAGS))
        elif t is int:
            if not -(2**63) <= a < 2**63:
                return None
            key.append(t)
        elif t is float or t is bool or (isinstance(a, np.generic) and a.dtype.kind in "biuf"):
            key.append(t)
        elif hasattr(t, "_numba_type_") and hasattr(t, "__cuda_array_interface__"):
            # a numba.cuda device array: what the Numba type it caches for itself
            # depends on (a device array is aligned and writable; a Numba type's own
            # hash is Python code, run at every lookup)
            key.append((t, a.dtype, a.ndim, a._numba_type_.layout))
        else:
            return None
    return tuple(key)
