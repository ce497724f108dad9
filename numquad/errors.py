"""The exceptions numquad raises.

Every message names the op or construct, what it got, what it takes and the
user's file and line, so the first line of a report is enough to fix the call.
"""

__all__ = [
    "NumquadError",
    "NumquadTypeError",
    "NumquadCompileError",
    "NumquadLaunchError",
    "NumquadRuntimeError",
    "NumquadIndexError",
]


class NumquadError(Exception):
    """Base class of every numquad error."""


class NumquadTypeError(NumquadError, TypeError):
    """An op or kernel got an argument of a type it does not take."""


class NumquadCompileError(NumquadError, SyntaxError):
    """A kernel uses a construct the wave compiler cannot compile (or a bad constant)."""

    def __init__(self, msg, filename=None, lineno=None):
        where = f'File "{filename}", line {lineno}: ' if filename else ""
        super().__init__(where + msg)
        # SyntaxError fields, so tracebacks point at the user's line
        self.filename = filename
        self.lineno = lineno

    def __str__(self):
        return self.args[0]


class NumquadLaunchError(NumquadError, ValueError):
    """A bad launch configuration (dimensions, block size)."""


class NumquadRuntimeError(NumquadError, RuntimeError):
    """A contract check of ``debug=True`` failed inside a running kernel.

    Raised from compiled code as ``(message, bx, by, bz, what, index)``: the block
    and the wave or thread where the check failed.
    """

    def __str__(self):
        if len(self.args) == 6:
            msg, bx, by, bz, what, index = self.args
            return f"{msg} [block ({bx}, {by}, {bz}), {what} {index}]"
        return super().__str__()


class NumquadIndexError(NumquadRuntimeError, IndexError):
    """An out-of-bounds array access in a kernel on the CPU target.

    Also an IndexError, as Numba's own bounds check raises. A release build checks
    every store into an array (``a[i] = v``, ``a[y, x] += v``): a store outside the
    array, such as the missing ``if i < n`` of a launch rounded up to whole
    blocks, raises this at the store's line, and nothing is written past the
    array. Loads are checked with ``debug=True`` only: without it a far
    out-of-bounds read may end the process with a segmentation fault (Python's
    faulthandler then prints where the launch was).
    """
