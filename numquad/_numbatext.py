"""The one line of a Numba compile error that says what went wrong, for both targets'
error messages (numquad/cpu/dispatch.py, numquad/cuda/errors.py): not which pipeline
pass failed, nor the source excerpt and the "During:" trail around it."""

from __future__ import annotations

import re

__all__ = ["numba_reason"]

_BOILERPLATE = re.compile(r"^(Failed in .* pipeline|During: |File \"|\s*<source elided>|\s*\^)")


#: numquad's own wrapper of a device function compiled for the CPU, as Numba names it
_SCALAR_DISPATCHER = re.compile(r"type\(_ScalarDispatcher\(<function (\w+) at 0x[0-9a-f]+>\)\)")


#: Numba's unpacking error, a raw args tuple naming its temporary
#: (``('wrong tuple length for $60build_tuple.8: ', 'expected 3, got 2')``)
_UNPACK = re.compile(r"\(?'wrong tuple length for \S+: ',\s*'expected (\d+), got (\d+)'\)?")


#: the complaint of one of numquad's own overloads that generated code calls
#: (numquad/_control.py ``enum_start``, ``seq_item``), which Numba wraps in its candidate list
_OWN_COMPLAINT = re.compile(
    r"No implementation of function Function\(<function (?:enum_start|seq_item) .*?raised a specific error:\s*"
    r"(?:\x1b\[[0-9;]*m)*\s*\w+Error: (?:\x1b\[[0-9;]*m)*([^\n\x1b]+)",
    re.S,
)


#: numba.cuda's refusal of a shuffle's operand types, which names no rule
_SHFL = re.compile(
    r"No implementation of function Function\(<intrinsic (shfl(?:_up|_down|_xor)?_sync)>\) found for "
    r"signature:\s*(?:\x1b\[[0-9;]*m)*\s*>>> \w+\(([^,()]+(?:\([^()]*\))?), ([^,()]+(?:\([^()]*\))?), "
)


def _shuffle_complaint(m):
    """The CPU target's wording (numquad/cpu/cudaapi.py ``_shfl_check``) for
    numba.cuda's refusal of ``cuda.shfl_*_sync`` operands; None where the mask and
    the value fit (another argument: Numba's own text)."""
    from ._desugar import shuffle_value_complaint

    name, mask, value = m.group(1), m.group(2).strip(), m.group(3).strip()
    if not re.match(r"(Literal\[int\]|u?int\d+)", mask):
        return f"cuda.{name}: Mask type must be an integer. Got {mask}"
    if value in ("int32", "int64", "float32", "float64"):
        return None
    return shuffle_value_complaint(name, value)


def numba_reason(text):
    """The line of Numba's error *text* that says what went wrong; a line ending in
    ':' gets the next one. A device function compiled on its own is named as the
    user's function (``Invalid use of the device function f with parameters ...``)."""
    own = _OWN_COMPLAINT.search(text)
    if own is not None:
        return own.group(1).strip()
    shfl = _SHFL.search(text)
    complaint = _shuffle_complaint(shfl) if shfl is not None else None
    if complaint is not None:
        return complaint
    text = _SCALAR_DISPATCHER.sub(r"the device function \1", text)
    text = _UNPACK.sub(
        lambda m: (
            f"cannot unpack a tuple of {m.group(2)} values into {m.group(1)} names (e.g. x, y = xpu.grid(2) gives 2)"
        ),
        text,
    )
    lines = [ln.strip() for ln in text.splitlines()]
    for k, line in enumerate(lines):
        if not line or _BOILERPLATE.match(line):
            continue
        if line.endswith(":"):
            rest = next((x for x in lines[k + 1 :] if x and not _BOILERPLATE.match(x)), "")
            line = f"{line} {rest.lstrip('>').strip()}"
        return line
    return lines[0] if lines else "Numba could not type the function"


def unsupported_construct(disp, error):
    """A NumquadCompileError at the user's line for Numba's UnsupportedBytecodeError
    (``with ... as x:``), which carries no location (its text ends "Raised from
    None"): the line of the first such statement in the function, else its def line."""
    import ast
    from .errors import NumquadCompileError

    text = re.sub(r"\.*\s*Raised from .*$", "", str(error).strip(), flags=re.S)
    loc = getattr(error, "loc", None)
    line = getattr(loc, "line", None)
    if line is None:
        line = disp.firstlineno
        try:
            tree = disp.source_tree
        except Exception:  # noqa: BLE001 - no source: the def line
            tree = None
        if tree is not None and "with" in text:
            withs = [n.lineno for n in ast.walk(tree) if isinstance(n, (ast.With, ast.AsyncWith))]
            line = min(withs, default=line)
        if tree is not None and "IMPORT_" in text:
            imports = [n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
            line = min(imports, default=line)
            text += "; import modules at the top of the file, outside the kernel"
    return NumquadCompileError(f"{text} (in {disp.__name__})", disp.filename, line)
