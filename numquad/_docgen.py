"""Renders docs/ops.md from the op catalogue and docs/api.md from the docstrings
of the public API, so neither reference can drift.

    python -m numquad._docgen > docs/ops.md
    python -m numquad._docgen api > docs/api.md
"""

from __future__ import annotations

from . import ops as _ops

__all__ = ["render_ops_md", "render_api_md"]

_INACTIVE = {
    "query": "not applicable",
    "move": "a source lane that is inactive gives the reader's own value (see _inactive)",
    "vote": "read as false",
    "ballot": "read as false",
    "scan": "skipped: the scan runs over the active lanes in lane order (docs/semantics.md)",
    "reduce": "skipped",
    "allequal": "ignored: only active lanes are compared",
    "derivative": "each of the two reads follows the move rule: an inactive lane gives the reader's own value",
}

_TYPES = {
    "value": "bool, int8..int64, uint8..uint64, float32, float64",
    "bitwise": "bool, int8..int64, uint8..uint64",
    "pred": "bool, int8..int64, uint8..uint64 (nonzero is true)",
    "float": "float32, float64",
}


def _inactive(op):
    """The "inactive lanes" cell of *op*'s row: for a move, what a selector that
    names no lane of the wave does (taken & sel_wrap, or the reader's own value)."""
    if op.kind != "move":
        return _INACTIVE[op.kind]
    text = "a source lane that is inactive gives the reader's own value"
    if op.sel_kind in ("up", "down"):
        return text.replace("inactive", "inactive or outside the wave")
    if op.sel_wrap is not None:
        return text + f" (a runtime selector is taken & {op.sel_wrap})"
    return text


def _result(op):
    if op.kind in ("query", "ballot"):
        return "uint32"
    if op.kind in ("vote", "allequal"):
        return "bool"
    if op.combine == "add":
        return "same as the operand (uint32 for bool)"
    return "same as the operand"


def render_ops_md():
    lines = [
        "# numquad op reference",
        "",
        "Generated from `numquad/ops.py` by `python -m numquad._docgen`; a test checks that",
        "this file matches the catalogue. A quad is four consecutive lanes",
        "(`laneId & ~3 .. +3`); a wave is 32 consecutive threads of a block by linear",
        "thread id. Scans are exclusive and use the fixed log-step order; reductions use",
        "a butterfly; integer arithmetic wraps. Every op is lowered on the CPU (whole-wave",
        "LLVM vector code) and on CUDA (`shfl.sync`, `vote.sync`, `redux.sync`).",
        "",
        "| call | operand types | result | inactive lanes | example |",
        "|---|---|---|---|---|",
    ]
    for op in _ops.OPS.values():
        call = f"`{op.qualname}({', '.join(op.params)})`"
        types = _TYPES[op.types] if op.params else "-"
        if op.selector:
            types += f"; `{op.selector}`: an integer"
            if op.sel_range is not None:
                types += f" (a constant must be in {op.sel_range.start}..{op.sel_range.stop - 1})"
        lines.append(f"| {call} | {types} | {_result(op)} | {_inactive(op)} | {op.example} |")
    lines += ["", "## Details", ""]
    for op in _ops.OPS.values():
        lines += [f"### `{op.qualname}({', '.join(op.params)})`", "", op.summary, "", f"Example: {op.example}", ""]
    return "\n".join(lines).rstrip() + "\n"


def _doc(obj):
    import inspect

    return inspect.cleandoc(obj.__doc__ or "(no docstring)")


def _member_doc(cls, name):
    attr = cls.__dict__.get(name)
    if isinstance(attr, property):
        attr = attr.fget
    return _doc(attr)


#: the Dispatcher members a user calls, in reading order
_DISPATCHER = (
    "cpu",
    "cuda",
    "python",
    "forall",
    "specialize",
    "inspect_cpu_source",
    "inspect_llvm",
    "inspect_asm",
    "inspect_ptx",
)


def render_api_md():
    from . import errors as _errors
    from . import xpu as _xpu

    lines = [
        "# numquad API reference",
        "",
        "Generated from the docstrings by `python -m numquad._docgen api`; a test checks",
        "that this file matches them. The cross-lane ops (`Quad.*`, `Wave.*`) are in",
        "docs/ops.md; the numba.cuda spellings the CPU target understands are in",
        "docs/numba-cuda.md.",
        "",
        "## `xpu.jit`",
        "",
        _doc(_xpu.jit),
        "",
        "## Kernels and lane functions (`xpu.Dispatcher`)",
        "",
        _doc(_xpu.Dispatcher),
        "",
    ]
    for name in _DISPATCHER:
        lines += [f"### `.{name}`", "", _member_doc(_xpu.Dispatcher, name), ""]
    lines += [
        "## Kernel builtins",
        "",
        "Meaningful only inside an `@xpu.jit` function; each is also reachable by its",
        "numba.cuda spelling (`cuda.grid`, `cuda.threadIdx`, ...).",
        "",
    ]
    for name in _xpu.__all__:
        obj = getattr(_xpu, name)
        if _xpu.builtin_name(obj) is None:
            continue
        lines += [f"### `xpu.{name}`", "", _doc(obj), ""]
        for member in getattr(obj, "__all__", ()) if _xpu.is_namespace(obj) else ():
            sub = getattr(obj, member)
            lines += [f"- `xpu.{name}.{member}`: " + " ".join(_doc(sub).split()), ""]
    lines += ["## Errors", ""]
    for name in _errors.__all__:
        lines += [f"### `{name}`", "", _doc(getattr(_errors, name)), ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render_api_md() if sys.argv[1:] == ["api"] else render_ops_md())
