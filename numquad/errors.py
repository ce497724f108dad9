"""The exceptions numquad raises.

Every message names the op or construct, what it got, what it takes and the
user's file and line, so the first line of a report is enough to fix the call.
"""

__all__ = [
    "NumquadError",
    "NumquadTypeError",
    "NumquadCompileError",
    "NumquadLaunchError",
    "NumquadUnconfiguredKernelError",
    "NumquadRuntimeError",
    "NumquadIndexError",
]


class NumquadError(Exception):
    """Base class of every numquad error."""


class NumquadTypeError(NumquadError, TypeError):
    """An op or kernel got an argument of a type it does not take.

    One that Numba's type inference found (runaway recursion, a recursive return
    type that does not converge, ...) is also Numba's ``TypingError``
    (``numba.core.errors``' and, with numba-cuda installed,
    ``numba.cuda.core.errors``'), as numba.cuda raises for the same kernel.
    """


class NumquadCompileError(NumquadError, SyntaxError):
    """A kernel uses a construct the wave compiler cannot compile (or a bad constant).

    A typing mistake that numba.cuda reports as a ``TypingError`` (a
    ``shared.array``/``local.array`` shape that is not a constant, an invalid
    dtype) is also Numba's ``TypingError``, as on ``NumquadTypeError``; its message
    then goes on with numba.cuda's words for it.
    """

    def __init__(self, msg, filename=None, lineno=None):
        where = f'File "{filename}", line {lineno}: ' if filename else ""
        super().__init__(where + msg)
        # SyntaxError fields, so tracebacks point at the user's line
        self.filename = filename
        self.lineno = lineno

    def __str__(self):
        return self.args[0]


#: numquad's class -> its subclass that is also Numba's TypingError (made on first use)
_TYPING_CLASSES = {}


def _numba_typing_class(base):
    cls = _TYPING_CLASSES.get(base)
    if cls is None:
        from numba.core.errors import TypingError

        bases = (base, TypingError)
        try:
            from numba.cuda.core.errors import TypingError as CudaTypingError
        except ImportError:  # no numba-cuda: numba's own class only
            pass
        else:
            bases = (base, CudaTypingError, TypingError)
        # numquad's name in tracebacks; pickled as what _typing_rebuild makes again
        cls = type(
            base.__name__,
            bases,
            {
                "__module__": __name__,
                "__qualname__": base.__qualname__,
                "__doc__": base.__doc__,
                "loc": None,
                "__reduce__": _typing_reduce,
            },
        )
        _TYPING_CLASSES[base] = cls
    return cls


def _typing_reduce(self):
    return _typing_rebuild, (type(self).__bases__[0], self.args, dict(vars(self)))


def _typing_rebuild(base, args, state):
    err = base.__new__(base)
    err.args = args
    vars(err).update(state)
    return as_numba_typing(err)


def as_numba_typing(error):
    """*error* (a NumquadTypeError or NumquadCompileError), its class made a subclass
    that is also Numba's TypingError, so that numba.cuda code catching TypingError
    catches it. numba is imported here, on the error path only."""
    if type(error) not in _TYPING_CLASSES.values():
        error.__class__ = _numba_typing_class(type(error))
        error.msg = str(error)  # NumbaError's fields
    return error


class NumquadLaunchError(NumquadError, ValueError):
    """A bad launch configuration (dimensions, block size)."""


class NumquadUnconfiguredKernelError(NumquadLaunchError, TypeError):
    """A kernel called without a launch configuration (``k(...)`` for
    ``k[griddim, blockdim](...)``): a ``ValueError`` as numba.cuda raises, and a
    ``TypeError``, as for any other wrong call."""


class NumquadRuntimeError(NumquadError, RuntimeError):
    """A contract check of ``debug=True`` failed inside a running kernel.

    Raised from compiled code as ``(message, bx, by, bz, what, index, *details)``:
    the block and the wave or thread where the check failed, and values the message
    formats as ``{0}``, ``{1}``, ...
    """

    def __str__(self):
        if len(self.args) >= 6:
            msg, bx, by, bz, what, index, *details = self.args
            if details:  # the message's {0}, {1}, ... (cpu/cudaapi.py, gen_sync_check)
                msg = msg.format(*details)
            return f"{msg} [block ({bx}, {by}, {bz}), {what} {index}]"
        return super().__str__()


class NumquadIndexError(NumquadRuntimeError, IndexError):
    """An out-of-bounds array access in a kernel on the CPU target.

    Also an IndexError, as Numba's own bounds check raises. Every build checks
    every store and load of a kernel's arrays (``a[i] = v``, ``a[y, x] += v``,
    ``v = a[i + 1]``, ``out[y][x] = v``, a view made in the statement such as
    ``a.T[0, i]`` or ``a.ravel()[j]``, an array in a tuple ``t[1][i]``, a record's
    field ``r.x[i]``, an atomic's index): one outside the array, such as the missing
    ``if i < n`` of a launch rounded up to whole blocks, raises this at its line, and
    nothing is written or read past the array; a ``debug=True`` build names the
    index too. ``a.flat[j]`` is checked against ``a.size``, and a negative ``j`` is
    out of bounds there (Numba does not wrap it, on the CPU or in numba.cuda). The
    accesses of the device functions the kernel calls (``@xpu.jit``,
    numba.cuda's, plain ``@numba.njit`` ones) are checked too: a release build
    raises at the line of the call, a debug build at the device function's line
    with the index.
    """
