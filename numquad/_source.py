"""Python functions that numquad writes as source text (lane-call kernels, op
checks, typing stubs): registered with :mod:`linecache` under a ``<numquad ...>``
file name, so tracebacks, ``inspect`` and Numba's error messages can show their
lines, then executed in a given scope. Also the module copies both compiled
targets hand to Numba (:func:`module_copy`)."""

from __future__ import annotations

import ast
import inspect
import linecache
import sys
import textwrap
import types

__all__ = ["code_names", "exec_source", "file_tree", "function_tree", "module_copy", "note_source", "same_source"]


def function_tree(py):
    """The parsed source of the Python function *py*, or None where it has none."""
    try:
        text = inspect.getsource(py)
        note_source(py, text)
        return ast.parse(textwrap.dedent(text))
    except (OSError, TypeError, SyntaxError):
        return None


def file_tree(filename):
    """The parsed text of file *filename* as :mod:`linecache` has it, or None."""
    text = "".join(linecache.getlines(filename))
    if not text:
        return None
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


_FIRST_TEXT = {}  # id(code) -> (code, the function's source text first read)


def note_source(py, text):
    """Remember *text* as the source of function *py* when it is the first read in
    this process (what numquad compiled it from): a later read that differs means the
    file was edited since (:func:`same_source`; numquad/cpu/diskcache.py)."""
    code = getattr(py, "__code__", None)
    if code is None:
        return
    seen = _FIRST_TEXT.get(id(code))
    if seen is None or seen[0] is not code:
        _FIRST_TEXT[id(code)] = (code, text)


def same_source(py, text):
    """Is *text* the source of *py* first read in this process (or the first read)?"""
    note_source(py, text)
    return _FIRST_TEXT[id(py.__code__)][1] == text


def exec_source(src, filename, scope):
    """Execute *src* (module-level definitions) in the dict *scope* under *filename*;
    returns the ``linecache`` entry it registered (a caller that outlives the code
    may remove it when the entry is still its own)."""
    entry = (len(src), None, src.splitlines(True), filename)
    linecache.cache[filename] = entry
    exec(compile(src, filename, "exec"), scope)  # noqa: S102 - source numquad generated
    return entry


def code_names(code):
    """The global and attribute names a code object reads, its nested code objects'
    (comprehensions, lambdas, nested functions) included: what a generated or user
    function may look up in its globals."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= code_names(c)
    return names


def module_copy(module, names, replace, keep, libraries=("numpy", "numba", "numquad")):
    """*module* as a kernel's code should see it: a new module object holding the
    attributes among *names* (those the code reads) that ``replace(value)`` changes,
    the rest as they are; or ``keep(module)`` when none changes, or when *module*
    belongs to one of *libraries* or the standard library. Numba types
    ``helpers.scale(x)`` by getattr on the module object, so each target swaps in its
    own form of a device function there (numquad/cpu/cudaapi.py: the CPU scalar
    function; numquad/cuda/substitute.py: numba.cuda's device function). The
    user's module is left alone."""
    top = module.__name__.split(".")[0]
    if top in libraries or top in getattr(sys, "stdlib_module_names", ()):
        return keep(module)
    missing = object()
    repl = {}
    for a in names:
        v = module.__dict__.get(a, missing)
        if v is not missing:
            new = replace(v)
            if new is not v:
                repl[a] = new
    if not repl:
        return keep(module)
    copy_ = types.ModuleType(module.__name__, module.__doc__)
    copy_.__dict__.update(module.__dict__)
    copy_.__dict__.update(repl)
    return copy_
