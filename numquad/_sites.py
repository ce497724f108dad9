"""Where in the user's code an error belongs: the line that called into numquad
(a launch, a lane-function call) and where the function is defined. Both targets
and the front door (numquad/xpu.py) word launch errors with these."""

from __future__ import annotations

import os
import sys

__all__ = ["user_site", "at_user_site", "call_site", "defined_at", "launch_prefix", "int_out_of_range", "none_argument"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_site():
    """``File "f.py", line N, in g`` for the user's line that called into numquad: the
    first frame outside this package; None when there is none."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIR):
        f = f.f_back
    if f is None:
        return None
    return f'File "{f.f_code.co_filename}", line {f.f_lineno}, in {f.f_code.co_name}'


def at_user_site(message):
    """*message*, after the :func:`user_site` that called into numquad when there is one."""
    site = user_site()
    return (f"{site}: " if site else "") + message


def call_site(d):
    """:func:`user_site` for a launch or a lane-function call of *d*; ``d.where``
    (the definition) when there is none."""
    return user_site() or d.where


def defined_at(d, site):
    """Where *d* is defined, for a message that starts at *site*."""
    if f'"{d.filename}"' in site:
        return f"defined at line {d.firstlineno}"
    return f'defined at File "{d.filename}", line {d.firstlineno}'


def launch_prefix(kernel):
    """``File "f.py", line N, in g: launch of k (defined at line M)``."""
    site = call_site(kernel)
    return f"{site}: launch of {kernel.__name__} ({defined_at(kernel, site)})"


def none_argument(where, kernel, i):
    """The error text for ``None`` as argument *i* of *kernel*, the same on every
    target: numba.cuda types it (``none``) but its launch cannot pass it (its
    dispatcher raises NotImplementedError), so no target takes it."""
    code = getattr(getattr(kernel, "py_func", None), "__code__", None)
    name = f" ({code.co_varnames[i]})" if code is not None and i < code.co_argcount else ""
    return (
        f"{where}: argument {i}{name} of {kernel.__name__} is None, which numba.cuda cannot "
        f"pass to a kernel (its launch raises NotImplementedError for type none): pass a "
        f"value and test a flag, or leave the argument out where it has a default"
    )


def int_out_of_range(where, kernel, i, name, value):
    """The error text for a Python int kernel argument that no 64-bit integer holds
    (Numba types a Python int as int64, or uint64 from 2**63 on), the same on every
    target: the python target would otherwise compute with a value the compiled
    targets cannot pass."""
    return (
        f"{where}: argument {i}{name} of {kernel.__name__} is the Python int {value}, "
        f"which fits neither int64 nor uint64 (a Python int argument is one of them); "
        f"pass a value in -2**63 .. 2**64 - 1, or a float"
    )
