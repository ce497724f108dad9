"""A user's exception raised in a kernel: the thread in its message, on every target.

numba.cuda (with ``debug=True``) raises a user's exception from a kernel with the
raising thread before the message: ``In function 'k', file /path/k.py, line 7,
tid=[z, y, x] ctaid=[z, y, x]: msg``. The CPU target and the python target raise the
same (in every build): their code raises ``E(USER_RAISE, tid.x, tid.y, tid.z,
ctaid.x, ctaid.y, ctaid.z, *args)`` for the user's ``raise E(*args)``, and the launch
turns that into ``E(prefixed args)`` with :func:`user_exception`.
"""

from __future__ import annotations

import ast
import os

__all__ = ["USER_RAISE", "assert_as_raise", "plain_exception_class", "user_exception"]

#: The first argument of a user's exception raised in a kernel, followed by the
#: thread's x, y, z and the block's x, y, z (cpu/subst.py ``Subst.visit_Raise``,
#: simt.py ``_Transformer.visit_Raise``): :func:`user_exception` turns them into
#: numba.cuda's prefix of the message.
USER_RAISE = "numquad: an exception raised in a kernel"


def plain_exception_class(obj):
    """Whether *obj* is an exception class that takes any positional arguments as
    ``BaseException`` does: no class of its own in its MRO defines ``__init__`` or
    ``__new__``, and one of it made with the extra arguments of :data:`USER_RAISE`
    is made without an error (UnicodeDecodeError wants five exact ones)."""
    if not (isinstance(obj, type) and issubclass(obj, Exception)) or obj.__module__.startswith("numquad"):
        # (numquad's own errors carry their own arguments; a KeyboardInterrupt or
        # SystemExit passes the launch's ``except Exception`` as it is)
        return False
    if any(c.__module__ != "builtins" and ("__init__" in c.__dict__ or "__new__" in c.__dict__) for c in obj.__mro__):
        return False
    try:
        obj(USER_RAISE, 0, 0, 0, 0, 0, 0)
    except Exception:
        return False
    return True


def user_exception(e, elements=None):
    """The exception to raise for *e*, one that the user's code raised in a kernel,
    with the raising thread in its message as numba.cuda gives it with debug=True:
    ``In function 'k', file /path/k.py, line 7, tid=[z, y, x] ctaid=[z, y, x]: msg``
    (its first argument prefixed, or the prefix alone without arguments); the rest
    of the arguments as they were. *elements* (threads per block) is given for a lane
    function's call on arrays, whose threads are elements: ``element k`` instead.
    None when *e* is not such an exception."""
    a = e.args
    if len(a) < 7 or not isinstance(a[0], str) or a[0] != USER_RAISE:
        return None
    tx, ty, tz, bx, by, bz = (int(v) for v in a[1:7])
    rest = a[7:]
    tb, last = e.__traceback__, None
    while tb is not None:
        last, tb = tb, tb.tb_next
    loc = ""
    file = last.tb_frame.f_code.co_filename if last is not None else "<>"
    if not file.startswith((os.path.dirname(__file__) + os.sep, "<")):
        # the frame Numba adds for the raise: the user's file and line (the CPU
        # code keeps them, cpu/codegen.py; a lane call's wrapper kernel has none)
        code = last.tb_frame.f_code
        loc = f"In function {code.co_name!r}, file {os.path.abspath(code.co_filename)}, line {last.tb_lineno}, "
    where = f"element {bx * elements + tx}" if elements else f"tid=[{tz}, {ty}, {tx}] ctaid=[{bz}, {by}, {bx}]"
    args = (f"{loc}{where}: {rest[0]}",) + rest[1:] if rest else (loc + where,)
    try:
        new = type(e)(*args)
    except Exception:
        e.args = rest  # (a class that takes them raised with them)
        return e
    return new.with_traceback(e.__traceback__)


def assert_as_raise(node):
    """``assert test, msg`` (an ast.Assert) as ``if not test: raise AssertionError(msg)``,
    at its line: what Python runs, with the ``raise`` the targets prefix."""
    exc = ast.Call(func=ast.Name("AssertionError", ast.Load()), args=[node.msg] if node.msg else [], keywords=[])
    new = ast.If(
        test=ast.UnaryOp(op=ast.Not(), operand=node.test),
        body=[ast.copy_location(ast.Raise(exc=exc, cause=None), node)],
        orelse=[],
    )
    ast.copy_location(new, node)
    return ast.fix_missing_locations(new)
