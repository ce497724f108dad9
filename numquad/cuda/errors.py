"""numba-cuda's compile errors as numquad's: NumquadTypeError/NumquadCompileError naming
the op, what it got, what it takes, and the user's file and line (from the typing
constraint's location where Numba records one, else from the message)."""

from __future__ import annotations

import ast
import contextlib
import copy
import os
import re
import sys

import numba.core.errors as _numba_errors
from numba.cuda import errors as _cuda_errors_top
from numba.cuda.cudadrv.error import CudaSupportError
from numba.cuda.core import errors as _cuda_errors

from .._control import Env, allocation_complaint, fold_array_shapes
from .._numbatext import numba_reason, unsupported_construct
from ..errors import NumquadCompileError, NumquadRuntimeError, NumquadTypeError, as_numba_typing
from .intrinsics import recording

__all__ = ["NUMBA_ERRORS", "NoGPUError", "numquad_error", "user_errors"]

_TYPING_ERRORS = (_cuda_errors.TypingError, _numba_errors.TypingError)
NUMBA_ERRORS = (_cuda_errors.NumbaError, _numba_errors.NumbaError)
#: numba.core's, numba.cuda.core's and numba.cuda.errors' own classes of this name
_UNSUPPORTED = (
    _cuda_errors.UnsupportedBytecodeError,
    _numba_errors.UnsupportedBytecodeError,
    _cuda_errors_top.UnsupportedBytecodeError,
)
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_INTERNAL = (
    sys.modules["numba"].__path__[0],
    sys.modules["numba.cuda"].__path__[0],
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),  # numquad/
)


class NoGPUError(NumquadRuntimeError, CudaSupportError):
    """``f.cuda`` on a machine where numba.cuda finds no GPU: one line naming the
    user's call; still numba.cuda's ``CudaSupportError`` for code that catches it."""


def _constraint_loc(error):
    """The ``loc`` of the innermost Numba typing constraint in *error*'s traceback.

    With numba installed next to numba-cuda, a failed call resolution raises
    numba.core's TypingError, which numba-cuda's type inference does not catch
    and annotate, so the message may not say where the call was.
    """
    found = None
    tb = error.__traceback__
    while tb is not None:
        obj = tb.tb_frame.f_locals.get("self")
        loc = getattr(obj, "loc", None)
        if type(obj).__name__.endswith("Constraint") and getattr(loc, "filename", None):
            found = loc
        tb = tb.tb_next
    return found


def _as_given(filename, disp):
    """*filename* as the function's own file name when it is that file (Numba writes
    ``../../x.py`` relative to the working directory), else made absolute."""
    if filename.startswith("<"):
        return filename
    full = os.path.abspath(filename)
    if full == os.path.abspath(disp.filename):
        return disp.filename
    return full


def _user_location(error, disp):
    """(filename, line) of the user's line that failed, from the exception's own
    location: the innermost typing constraint's, numquad's own error's (its
    ``filename``/``lineno``), Numba's ``loc``; only a Numba report whose location is
    in its text alone (a context added to the message) is read from the text."""
    for loc in (_constraint_loc(error), getattr(error, "loc", None)):
        filename = getattr(loc, "filename", None)
        if filename and not filename.startswith(("<numquad", *_INTERNAL)):
            return _as_given(filename, disp), loc.line
    if isinstance(error, NumquadCompileError) and error.filename and error.lineno:
        return error.filename, error.lineno
    text = _ANSI.sub("", str(error))
    for filename, line in _FILE_LINE.findall(text):
        if filename.startswith("<numquad"):
            continue
        filename = _as_given(filename, disp)  # Numba prints paths relative to the cwd
        if not filename.startswith(_INTERNAL):
            return filename, int(line)
    loc = getattr(error, "loc", None)
    if loc is not None and getattr(loc, "filename", None):
        return loc.filename, loc.line
    return disp.filename, disp.firstlineno


def numquad_error(error, disp, log):
    filename, line = _user_location(error, disp)
    if isinstance(error, NumquadCompileError):
        if not hasattr(error, "op_message"):  # numquad's own analysis: worded already
            return error
        # raised by an op's typer
        return NumquadCompileError(f"{error.op_message} (in {disp.__name__})", filename, line)
    if isinstance(error, NumquadTypeError):  # numquad's own, a TypingError too
        return error
    text = _ANSI.sub("", str(error))
    complaints = [m for m in dict.fromkeys(log) if m in text]
    # one line, as on the CPU target; Numba's whole report stays on .numba_text
    message = "; ".join(complaints) if complaints else numba_reason(text)
    if not isinstance(error, _TYPING_ERRORS):
        err = NumquadCompileError(f"{message} (in {disp.__name__})", filename, line)
    else:  # a TypingError still, as numba.cuda's
        err = as_numba_typing(NumquadTypeError(f'File "{filename}", line {line}, in {disp.__name__}: {message}'))
    err.numba_text = text
    return err


@contextlib.contextmanager
def user_errors(disp):
    """Numba's compile errors as NumquadTypeError/NumquadCompileError naming the user's line."""
    tries = _try_lines(disp)
    if tries:  # numba-cuda fails on each form in its own way (AttributeError, TypingError)
        raise _no_try(disp, tries)
    bad = _bad_allocation(disp)
    if bad is not None:
        raise bad
    with recording() as log:
        try:
            yield
        except NUMBA_ERRORS + (NumquadCompileError,) as e:
            raise numquad_error(e, disp, log) from None
        except _UNSUPPORTED as e:  # `with ... as x:`, no location
            raise unsupported_construct(disp, e) from None
        except AttributeError as e:
            # numba-cuda lowers a bare except through a calling convention without
            # set_try_status: its compile dies with this AttributeError
            if "set_try_status" not in str(e):
                raise
            raise _no_try(disp, None) from None


def _try_lines(disp):
    try:
        tree = disp.source_tree
    except Exception:  # noqa: BLE001 - no source to read
        return []
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Try)]


def _bad_allocation(disp):
    """The CPU target's error for a ``shared.array``/``local.array`` call numba-cuda
    would refuse in its own words (a raw ``ValueError: array length <= 0`` for a
    shape of 0 or less, "No implementation of function" for a list shape or a bad
    dtype), else None."""
    try:
        tree = copy.deepcopy(disp.source_tree)
    except Exception:  # noqa: BLE001 - no source to read
        return None
    fold_array_shapes(tree, disp.py_func)
    env = Env(disp.py_func, tree)
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            b = env.builtin(n.func)
            if b in ("shared.array", "local.array"):
                complaint = allocation_complaint(b, n, env.resolve, lenient=True)
                if complaint is not None:
                    return NumquadCompileError(f"{complaint} (in {disp.__name__})", disp.filename, n.lineno)
    return None


def _no_try(disp, lines):
    lines = _try_lines(disp) if lines is None else lines
    return NumquadCompileError(
        f"try/except is not supported by numba.cuda (numba-cuda cannot compile exception "
        f"handling in a kernel or device function); test the condition with an if instead "
        f"(in {disp.__name__})",
        disp.filename,
        min(lines, default=disp.firstlineno),
    )
