"""Writes the type stubs numquad/__init__.pyi, numquad/ops.pyi and numquad/xpu.pyi
from the op catalogue (numquad/ops.py) and the builtins table (numquad/xpu.py), so
an IDE completes ``Quad.``, ``Wave.`` and ``xpu.threadIdx.`` and shows each op's
doc. tests/test_stubs.py checks that the committed stubs are what this writes.

    python -m numquad._stubgen           # write the stubs
    python -m numquad._stubgen --check   # exit 1 when a committed stub is stale

What a stub says comes from the running modules: names from ``__all__``,
docstrings from the objects, parameters from the catalogue rows, the builtins'
call forms (``xpu.syncwarp(mask=0xffffffff)``) and ``inspect.signature``; an op's
operand types from its type class and its result from ``Op.result_dtype``. Only
the Python types of the builtins' and the Dispatcher's parameters are written
here, in the tables below; a name missing from them is typed ``Any``, so a new op
or builtin always gets a stub (and the drift test asks for it).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import fnmatch
import inspect
import pathlib
import sys
import textwrap
import types as _pytypes

import numpy as np

from . import errors as _errors
from . import ops as _ops
from . import xpu as _xpu

__all__ = ["render_stubs", "main"]

_HEADER = (
    "# Generated from {sources} by `python -m numquad._stubgen`; do not edit.\n"
    "# tests/test_stubs.py checks that it is current.\n"
)

#: A parameter the stub leaves out (accepted by the runtime signature only to
#: raise a clearer error, such as keyword arguments to a kernel launch).
_OMIT = object()

# ---------------------------------------------------------------------------
# Rendering helpers
# ---------------------------------------------------------------------------


def _docstring(text, indent):
    """*text* (cleaned as inspect.getdoc does) as a docstring at *indent*."""
    text = inspect.cleandoc(text).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text = text[:-1] + '\\"'
    lines = text.splitlines()
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    out = [f'{indent}"""{lines[0]}']
    out += [f"{indent}{ln}" if ln.strip() else "" for ln in lines[1:]]
    return out + [f'{indent}"""']


def _body(doc, indent):
    """A def's body: its docstring, or ``...``."""
    return _docstring(doc, indent + "    ") if doc else [f"{indent}    ..."]


class _Source(str):
    """A default written as in the source (``0xffffffff``)."""


def _literal(value):
    """*value* as a stub literal, strings in double quotes."""
    if isinstance(value, str) and '"' not in value and "\\" not in value:
        return f'"{value}"'
    return repr(value)


def _default(value):
    if isinstance(value, _Source):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return _literal(value)
    if isinstance(value, tuple) and all(isinstance(v, (bool, int, float, str)) for v in value):
        return "(" + ", ".join(_literal(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return "..."


def _all(names):
    """An ``__all__`` assignment, one name a line."""
    return ["__all__ = ["] + [f"    {_literal(n)}," for n in names] + ["]"]


def _params(params, types):
    """``inspect.Parameter``s as a stub's parameter list, each typed by *types*
    (name -> annotation; _OMIT leaves it out; absent: the parameter's own annotation)."""
    out = []
    star = slash = False
    for p in params:
        ann = types[p.name] if p.name in types else _annotation(p.annotation)
        if ann is _OMIT:
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            out.append("*")
            star = True
        if p.kind is not p.POSITIONAL_ONLY and slash:
            out.append("/")
            slash = False
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        star = star or p.kind is p.VAR_POSITIONAL
        slash = p.kind is p.POSITIONAL_ONLY
        text = prefix + p.name + (f": {ann}" if ann else "")
        if p.default is not p.empty:
            text += f" = {_default(p.default)}" if ann else f"={_default(p.default)}"
        out.append(text)
    if slash:
        out.append("/")
    return ", ".join(out)


#: Names an annotation copied from a runtime signature may use in a stub.
_ANNOTATION_NAMES = {"Any", "Callable", "Optional", "np"}
#: Generic types a runtime annotation may leave bare, with the parameters that
#: make them explicit (mypy --strict: disallow_any_generics).
_BARE_GENERICS = {
    "Callable": "Callable[..., Any]",
    "tuple": "tuple[Any, ...]",
    "list": "list[Any]",
    "dict": "dict[Any, Any]",
    "np.dtype": "np.dtype[Any]",
    "np.ndarray": "np.ndarray[Any, Any]",
}


def _annotation(ann):
    """A runtime annotation (a string under ``from __future__ import annotations``)
    as stub text: quotes dropped, private names typed Any; None when absent."""
    if ann is inspect.Parameter.empty:
        return None
    if not isinstance(ann, str):
        ann = getattr(ann, "__name__", None) or repr(ann)
    tree = ast.parse(ann, mode="eval")

    class _Fix(ast.NodeTransformer):
        def visit_Constant(self, node):
            if isinstance(node.value, str):
                return self.visit(ast.parse(node.value, mode="eval").body)
            return node

        def visit_Subscript(self, node):
            node.slice = self.visit(node.slice)  # the subscripted type is not bare
            return node

        def _bare(self, node):
            text = ast.unparse(node)
            if text in _BARE_GENERICS:
                return ast.parse(_BARE_GENERICS[text], mode="eval").body
            return node

        def visit_Attribute(self, node):
            return self._bare(node)

        def visit_Name(self, node):
            if node.id.startswith("_"):
                return ast.copy_location(ast.Name("Any", ast.Load()), node)
            return self._bare(node)

    tree = _Fix().visit(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and not hasattr(builtins, node.id)
            and node.id not in _ANNOTATION_NAMES
            and node.id not in _ops.__all__
        ):
            raise ValueError(
                f"numquad/_stubgen.py: annotation {ann!r} names {node.id}, which "
                f"the stubs do not import; add it to _ANNOTATION_NAMES and the imports"
            )
    return ast.unparse(tree)


def _def(name, params, ret, doc, indent="", decorators=(), comment=""):
    lines = [f"{indent}@{d}" for d in decorators]
    arrow = f" -> {ret}" if ret else ""
    head = f"{indent}def {name}({params}){arrow}:"
    if doc:
        return lines + [head + comment] + _body(doc, indent)
    return lines + [head + " ..." + comment]


def _signature_lines(fn, types, indent="", decorators=(), name=None):
    """A def for the runtime function *fn* with *types* (see _params; "->": the result);
    what neither *types* nor the runtime annotates is Any (but ``self``)."""
    sig = inspect.signature(fn)
    types = {p.name: "Any" for p in sig.parameters.values() if p.annotation is p.empty and p.name != "self"} | types
    ret = types["->"] if "->" in types else _annotation(sig.return_annotation) or "Any"
    doc = inspect.cleandoc(fn.__doc__) if fn.__doc__ else None
    return _def(name or fn.__name__, _params(sig.parameters.values(), types), ret, doc, indent, decorators)


def _lookup(table, name):
    """The entry of *table* for *name*: an exact key, else the first fnmatch pattern."""
    if name in table:
        return table[name]
    for pattern, entry in table.items():
        if fnmatch.fnmatchcase(name, pattern):
            return entry
    return None


def _header(sources, doc):
    return [_HEADER.format(sources=sources).rstrip("\n")] + _docstring(doc, "") + [""]


# ---------------------------------------------------------------------------
# numquad/ops.pyi: the catalogue
# ---------------------------------------------------------------------------

#: The Python scalar of each NumPy kind, and the dtype Numba gives it in a kernel.
_PY_SCALARS = (("bool", np.dtype("bool")), ("int", np.dtype("int64")), ("float", np.dtype("float64")))


def _np_scalar(dt):
    # np.bool_, not np.bool: the stubs also serve numpy 1.x (pyproject.toml: numpy>=1.24)
    return "np.bool_" if dt.kind == "b" else f"np.{dt.name}"


class _OpTypes:
    """The TypeVars and unions the op signatures use, named by type class."""

    def __init__(self):
        self.decls = {}  # name -> declaration line

    def _members(self, dtypes):
        py = [name for name, dt in _PY_SCALARS if dt in dtypes]
        return [_np_scalar(dt) for dt in dtypes] + py

    def _name(self, types, dtypes, suffix):
        full = _ops._TYPE_CLASSES.get(types, ())
        name = f"_{types.capitalize()}{suffix}"
        missing = [dt for dt in full if dt not in dtypes]
        if set(dtypes) - set(full):
            raise ValueError(f"numquad/_stubgen.py: {dtypes} is not within type class {types!r}")
        if not missing:
            return name
        if len(dtypes) <= len(missing):  # _Value_bool: the bools of class value
            return name + "".join(f"_{dt.name}" for dt in dtypes)
        return name + "".join(f"_no_{dt.name}" for dt in missing)

    def typevar(self, types, dtypes):
        name = self._name(types, dtypes, "T")
        members = self._members(dtypes)
        if len(members) > 1:
            self.decls.setdefault(name, f'{name} = TypeVar("{name}", {", ".join(members)})')
        else:  # a TypeVar takes two constraints or more
            self.decls.setdefault(name, f'{name} = TypeVar("{name}", bound={members[0]})')
        return name

    def union(self, types, dtypes):
        name = self._name(types, dtypes, "")
        self.decls.setdefault(name, f"{name}: TypeAlias = {' | '.join(self._members(dtypes))}")
        return name

    def selector(self):
        name = "_Selector"
        members = [_np_scalar(dt) for dt in _ops.SELECTOR_DTYPES] + ["int"]
        self.decls.setdefault(name, f"{name}: TypeAlias = {' | '.join(members)}")
        return name


#: Python scalars a type checker takes where a wider one is asked for.
_PY_PROMOTES = {("bool", "int"), ("bool", "float"), ("int", "float")}


def _op_overloads(op, tv):
    """[(parameter text, result, comment)] for *op*: one entry, or one per overload.

    The operand's result comes from ``Op.result_dtype``: a result that is the operand's
    own type becomes a TypeVar; another (a bool sum is a uint32) its own overload, first.
    A Python scalar goes with the dtype Numba gives it (bool, int64, float64); an
    overload for ``bool`` before one for ``int`` overlaps it (bool is an int to a type
    checker) and says so, as the first match is the one that counts."""
    if not op.params:
        return [("", _np_scalar(op.result_dtype()), "")]
    rest = []
    for p in op.params[1:]:
        rest.append(f"{p}: {tv.selector()}" if p == op.selector else f"{p}: Any")
    tail = "".join(f", {r}" for r in rest)
    accepted = list(op.accepted)
    results = {dt: np.dtype(op.result_dtype(dt)) for dt in accepted}
    if len(set(results.values())) == 1 and len(accepted) > 1:
        # one result whatever the operand (a vote's bool, a ballot's uint32)
        return [(f"{op.operand}: {tv.union(op.types, accepted)}{tail}", _np_scalar(results[accepted[0]]), "")]
    groups = []
    for res in dict.fromkeys(r for dt, r in results.items() if r != dt):
        group = [dt for dt in accepted if results[dt] != dt and results[dt] == res]
        groups.append((group, f"{op.operand}: {tv.union(op.types, group)}{tail}", _np_scalar(res)))
    same = [dt for dt in accepted if results[dt] == dt]
    if same:
        t = tv.typevar(op.types, same)
        groups.append((same, f"{op.operand}: {t}{tail}", t))
    out = []
    for k, (group, params, ret) in enumerate(groups):
        mine = {py for py, dt in _PY_SCALARS if dt in group}
        later = {py for g, _, _ in groups[k + 1 :] for py, dt in _PY_SCALARS if dt in g}
        overlaps = any((a, b) in _PY_PROMOTES for a in mine for b in later)
        out.append((params, ret, "  # type: ignore[overload-overlap]" if overlaps else ""))
    return out


def _namespace_lines(name, ns, tv):
    lines = [f"class {name}:"] + _docstring(ns.__doc__, "    ")
    for opname in ns.__all__:
        op = _ops.of_function(getattr(ns, opname))
        overloads = _op_overloads(op, tv)
        deco = ["overload", "staticmethod"] if len(overloads) > 1 else ["staticmethod"]
        for params, ret, comment in overloads:
            lines.append("")
            lines += _def(op.name, params, ret, op.doc, "    ", deco, comment)
    return lines


def _dataclass_lines(cls):
    params = cls.__dataclass_params__
    deco = "dataclasses.dataclass(frozen=True)" if params.frozen else "dataclasses.dataclass"
    lines = [f"@{deco}", f"class {cls.__name__}:"] + _docstring(cls.__doc__, "    ")
    hints = inspect.get_annotations(cls)
    for f in dataclasses.fields(cls):
        default = "" if f.default is dataclasses.MISSING else f" = {_default(f.default)}"
        lines.append(f"    {f.name}: {_annotation(hints[f.name])}{default}")
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, property):
            lines += [""] + _signature_lines(member.fget, {}, "    ", ["property"], name)
        elif isinstance(member, _pytypes.FunctionType):
            lines += [""] + _signature_lines(member, {}, "    ")
    return lines


def _value_type(name, value):
    """The stub type of a module constant."""
    if isinstance(value, (bool, int, str)):
        return f"Final = {_literal(value)}"
    if isinstance(value, tuple) and all(isinstance(v, np.dtype) for v in value):
        return "tuple[np.dtype[Any], ...]"
    if isinstance(value, dict) and all(type(k) is str for k in value) and len({type(v) for v in value.values()}) == 1:
        vt = type(next(iter(value.values())))
        if getattr(_ops, vt.__name__, None) is vt and vt.__name__ in _ops.__all__:
            return f"dict[str, {vt.__name__}]"
    raise ValueError(
        f"numquad/_stubgen.py: no stub type for ops.{name} ({type(value).__name__}); add one to _value_type"
    )


def _render_ops():
    tv = _OpTypes()
    body = []
    for name in _ops.__all__:
        obj = getattr(_ops, name)
        body.append("")
        if _ops.is_namespace(obj):
            body += _namespace_lines(name, obj, tv)
        elif dataclasses.is_dataclass(obj) and isinstance(obj, type):
            body += _dataclass_lines(obj)
        elif isinstance(obj, _pytypes.FunctionType):
            body += _signature_lines(obj, {})
        else:
            body.append(f"{name}: {_value_type(name, obj)}")
    lines = (
        _header("numquad/ops.py", _ops.__doc__)
        + [
            "import dataclasses",
            "from typing import Any, Callable, Final, Optional, TypeAlias, TypeVar, overload",
            "",
            "import numpy as np",
            "",
        ]
        + _all(_ops.__all__)
        + [""]
    )
    lines += list(tv.decls.values()) + body
    return lines


# ---------------------------------------------------------------------------
# numquad/xpu.pyi: the builtins, @xpu.jit and the Dispatcher
# ---------------------------------------------------------------------------

_XPU_PRELUDE = """\
import ast
from typing import Any, Callable, Literal, TypeAlias, TypeVar, overload, type_check_only

import numpy as np
from numpy.typing import DTypeLike, NDArray

_S = TypeVar("_S", bound=np.generic)
_T = TypeVar("_T")
_IntT = TypeVar("_IntT", bound=int | np.integer[Any])
_FloatT = TypeVar("_FloatT", np.float32, np.float64, float)
_Scalar: TypeAlias = bool | int | float | np.generic
_Shape: TypeAlias = int | tuple[int, ...]
_Index: TypeAlias = int | np.integer[Any] | tuple[int | np.integer[Any], ...]
_Target: TypeAlias = Literal["auto", "cpu", "cuda"]
# a numba.cuda signature: "void(float32[:], int32)", a tuple of Numba types, a list of those
_Signature: TypeAlias = str | tuple[Any, ...] | list[Any]
# kernel[griddim, blockdim] or kernel[griddim, blockdim, stream, sharedmem]
_LaunchConfig: TypeAlias = tuple[Any, ...]
"""

#: The types of each builtin's parameters and of its result ("->"), by name or
#: fnmatch pattern (first match); a list is one overload per entry. The names
#: and defaults come from the call form in the builtin's doc (numquad/xpu.py).
_BUILTIN_TYPES = {
    "grid": [
        {"ndim": "Literal[1]", "->": "int"},
        {"ndim": "Literal[2]", "->": "tuple[int, int]"},
        {"ndim": "Literal[3]", "->": "tuple[int, int, int]"},
        {"ndim": "int", "->": "int | tuple[int, ...]"},
    ],
    "gridsize": [
        {"ndim": "Literal[1]", "->": "int"},
        {"ndim": "Literal[2]", "->": "tuple[int, int]"},
        {"ndim": "Literal[3]", "->": "tuple[int, int, int]"},
        {"ndim": "int", "->": "int | tuple[int, ...]"},
    ],
    "quad_grid": {"ndim": "Literal[2]", "->": "tuple[int, int]"},
    "threadIdx.?": {"->": "int"},
    "blockIdx.?": {"->": "int"},
    "blockDim.?": {"->": "int"},
    "gridDim.?": {"->": "int"},
    "laneid": {"->": "int"},
    "warpsize": {"->": "int"},
    "syncthreads": {"->": "None"},
    "syncwarp": {"mask": "int", "->": "None"},
    "shared.array": {"shape": "_Shape", "dtype": "DTypeLike", "->": "NDArray[Any]"},
    "local.array": {"shape": "_Shape", "dtype": "DTypeLike", "->": "NDArray[Any]"},
    "const.array_like": {"ary": "NDArray[_S]", "->": "NDArray[_S]"},
    "atomic.*": {"ary": "NDArray[_S]", "idx": "_Index", "old": "_Scalar", "val": "_Scalar", "->": "_S"},
    "syncthreads_*": {"pred": "_Scalar", "->": "int"},
    "threadfence*": {"->": "None"},
    "popc": {"x": "_IntT", "->": "_IntT"},
    "brev": {"x": "_IntT", "->": "_IntT"},
    "clz": {"x": "_IntT", "->": "_IntT"},
    "ffs": {"x": "int | np.integer[Any]", "->": "np.uint32"},
    "fma": {"a": "_FloatT", "b": "_FloatT", "c": "_FloatT", "->": "_FloatT"},
    "cbrt": {"x": "_FloatT", "->": "_FloatT"},
    "selp": {"pred": "_Scalar", "a": "_T", "b": "_T", "->": "_T"},
    "nanosleep": {"ns": "int", "->": "None"},
}

#: @xpu.jit's parameters; "func" is typed per overload (_jit_lines).
_JIT_TYPES = {"target": "_Target", "debug": "bool", "fastmath": "bool", "cache": "bool", "cuda_options": "Any"}

#: The Dispatcher's attributes (assigned in Dispatcher.__init__; one not listed is Any).
_DISPATCHER_ATTRS = {
    "py_func": "Callable[..., Any]",
    "target": "str",
    "debug": "bool",
    "fastmath": "bool",
    "cache": "bool",
    "specialized": "bool",
    "filename": "str",
    "firstlineno": "int",
    "where": "str",
}
#: The members of the Dispatcher and of the classes a launch goes through, typed as
#: _BUILTIN_TYPES; a public member of the Dispatcher not listed is typed Any.
_CLASS_TYPES = {
    "Dispatcher": {
        "__init__": {
            "pyfunc": "Callable[..., Any]",
            "target": "_Target",
            "debug": "bool",
            "fastmath": "bool",
            "cache": "bool",
            "->": "None",
        },
        "source_tree": {"->": "ast.FunctionDef"},
        "is_kernel": {"->": "bool"},
        "cpu": {"->": "_TargetView"},
        "cuda": {"->": "_TargetView"},
        "python": {"->": "_TargetView"},
        "__getitem__": {"config": "_LaunchConfig", "->": "_Launcher"},
        "forall": {"ntasks": "int", "tpb": "int", "stream": "Any", "sharedmem": "int", "->": "_ForAll"},
        "specialize": {"args": "Any", "->": "Dispatcher"},
        "__call__": {"args": "Any", "out": "Any", "kwargs": _OMIT, "->": "Any"},
        "inspect_cpu_source": {"sig": "Any", "->": "str"},
        "inspect_llvm": {"sig": "Any", "->": "str"},
        "inspect_asm": {"sig": "Any", "->": "str"},
        "inspect_ptx": {"sig": "Any", "cc": "tuple[int, int]", "->": "str"},
        "overloads": {"->": "dict[tuple[Any, ...], Any]"},
        "signatures": {"->": "list[tuple[Any, ...]]"},
        "specializations": {"->": "dict[tuple[Any, ...], Dispatcher]"},
        "get_regs_per_thread": {"signature": "Any", "->": "Any"},
        "get_const_mem_size": {"signature": "Any", "->": "Any"},
        "get_shared_mem_per_block": {"signature": "Any", "->": "Any"},
        "get_max_threads_per_block": {"signature": "Any", "->": "Any"},
        "get_local_mem_per_thread": {"signature": "Any", "->": "Any"},
    },
    "_TargetView": {
        "__getitem__": {"config": "_LaunchConfig", "->": "_Launcher"},
        "__call__": {"args": "Any", "out": "Any", "kwargs": _OMIT, "->": "Any"},
    },
    "_Launcher": {"__call__": {"args": "Any", "kwargs": _OMIT, "->": "None"}},
    "_ForAll": {"__call__": {"args": "Any", "->": "None"}},
}
#: Set on every Dispatcher by functools.update_wrapper (numquad/xpu.py, Dispatcher.__init__).
_WRAPPER_ATTRS = {"__name__": "str", "__qualname__": "str", "__wrapped__": "Callable[..., Any]"}


def _call_form(b):
    """The parameters in a builtin's doc (``xpu.syncwarp(mask=0xffffffff)``), or
    None for a value (``xpu.laneid``, ``xpu.threadIdx.x: ...``)."""
    first = b.__doc__.split("\n", 1)[0]
    prefix = f"xpu.{b.name}("
    if not first.startswith(prefix):
        return None
    if not first.endswith(")"):
        raise ValueError(
            f"numquad/xpu.py: the doc of xpu.{b.name} starts with {first!r}, not a call form xpu.{b.name}(...)"
        )
    form = first[len(prefix) : -1]
    src = f"def f({form}): pass"
    try:
        a = ast.parse(src).body[0].args
    except SyntaxError:
        # a call form with a fixed argument, xpu.f(2): a positional-only parameter
        # that takes that constant
        call = ast.parse(f"f({form})", mode="eval").body
        return [
            inspect.Parameter(f"arg{i}", inspect.Parameter.POSITIONAL_ONLY, annotation=f"Literal[{ast.unparse(arg)}]")
            for i, arg in enumerate(call.args)
        ]
    defaults = [None] * (len(a.args) - len(a.defaults)) + list(a.defaults)
    params = []
    for arg, d in zip(a.args, defaults):
        default = inspect.Parameter.empty if d is None else _Source(ast.get_source_segment(src, d))
        params.append(inspect.Parameter(arg.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
    return params


def _builtin_lines(b, attr, indent, in_class):
    """The stub of builtin *b*, named *attr*: a def (one per overload), or a value."""
    entry = _lookup(_BUILTIN_TYPES, b.name) or {}
    params = _call_form(b)
    if params is None:
        ann = entry.get("->", "Any") if isinstance(entry, dict) else "Any"
        if in_class:
            return _def(attr, "self", ann, b.__doc__, indent, ["property"])
        return [f"{indent}{attr}: {ann}"] + _docstring(b.__doc__, indent)
    entries = entry if isinstance(entry, list) else [entry]
    deco = ["staticmethod"] if in_class else []
    if len(entries) > 1:
        deco = ["overload"] + deco
    lines = []
    for e in entries:
        types = {p.name: e.get(p.name, "Any" if p.annotation is p.empty else p.annotation) for p in params}
        if lines:
            lines.append("")
        lines += _def(attr, _params(params, types), e.get("->", "Any"), b.__doc__, indent, deco)
    return lines


def _group_lines(name, group):
    """A namespace of builtins (``xpu.threadIdx``) as a stub-only class and its instance."""
    cls = f"_{name}"
    lines = ["@type_check_only", f"class {cls}:"] + _docstring(group.__doc__, "    ")
    for attr in group.__all__:
        lines.append("")
        lines += _builtin_lines(getattr(group, attr), attr, "    ", True)
    return lines + ["", f"{name}: {cls}"] + _docstring(group.__doc__, "")


def _jit_lines(fn):
    """@xpu.jit as a decorator (``@xpu.jit``, ``xpu.jit(f, target=...)``) and as a
    decorator factory (``@xpu.jit(...)``, ``@xpu.jit("void(float32[:])")``)."""
    sig = inspect.signature(fn)
    first = next(iter(sig.parameters))
    rest = [p for p in sig.parameters.values() if p.name != first]
    lines = []
    for ftype, default, ret in (
        ("Callable[..., Any]", inspect.Parameter.empty, "Dispatcher"),
        ("_Signature | None", None, "Callable[[Callable[..., Any]], Dispatcher]"),
    ):
        p = sig.parameters[first].replace(default=default)
        lines += _def(
            fn.__name__, _params([p] + rest, {first: ftype, **_JIT_TYPES}), ret, inspect.getdoc(fn), "", ["overload"]
        )
        lines.append("")
    return lines[:-1]


def _init_attributes(cls):
    """The public attributes ``cls.__init__`` assigns (``self.name = ...``), in order."""
    src = textwrap.dedent(inspect.getsource(cls.__init__))
    names = []
    for node in ast.walk(ast.parse(src)):
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for t in targets:
            if (
                isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name)
                and t.value.id == "self"
                and not t.attr.startswith("_")
                and t.attr not in names
            ):
                names.append(t.attr)
    return names


def _class_lines(cls, public):
    """*cls* with its members in _CLASS_TYPES, and with *public* every member not
    starting with ``_`` and the attributes its __init__ assigns."""
    table = _CLASS_TYPES.get(cls.__name__, {})
    lines = [f"class {cls.__name__}:"]
    if public and cls.__doc__:
        lines += _docstring(cls.__doc__, "    ")
    if public:
        for attr in _init_attributes(cls):
            lines.append(f"    {attr}: {_DISPATCHER_ATTRS.get(attr, 'Any')}")
        for attr, ann in _WRAPPER_ATTRS.items():
            lines.append(f"    {attr}: {ann}")
    for name, member in vars(cls).items():
        if name not in table and (not public or name.startswith("_")):
            continue
        types = table.get(name, {})
        if len(lines) > 1:
            lines.append("")
        if isinstance(member, property):
            lines += _signature_lines(member.fget, types, "    ", ["property"], name)
        elif isinstance(member, _pytypes.FunctionType):
            lines += _signature_lines(member, types, "    ")
    missing = set(table) - set(vars(cls))
    if missing:
        raise ValueError(
            f"numquad/_stubgen.py: _CLASS_TYPES names {sorted(missing)}, which xpu.{cls.__name__} no longer has"
        )
    return lines


def _render_xpu():
    body = []
    for name in _xpu.__all__:
        obj = getattr(_xpu, name)
        body.append("")
        if isinstance(obj, _xpu._Builtin):
            body += _builtin_lines(obj, name, "", False)
        elif isinstance(obj, _xpu._Group):
            body += _group_lines(name, obj)
        elif obj is _xpu.jit:
            body += _jit_lines(obj)
        elif obj is _xpu.Dispatcher:
            body += _class_lines(obj, True)
            for helper in (_xpu._TargetView, _xpu._Launcher, _xpu._ForAll):
                body += [""] + _class_lines(helper, False)
        else:
            raise ValueError(f"numquad/_stubgen.py: no stub for xpu.{name} ({type(obj).__name__})")
    lines = _header("numquad/xpu.py", _xpu.__doc__) + _XPU_PRELUDE.splitlines()
    return lines + [""] + _all(_xpu.__all__) + body


# ---------------------------------------------------------------------------
# numquad/__init__.pyi: the package's names
# ---------------------------------------------------------------------------


def _render_init():
    import numquad

    lines = _header("numquad/__init__.py", numquad.__doc__)
    subs = {"ops": _ops, "xpu": _xpu, "errors": _errors}
    for name in numquad.__all__:
        obj = getattr(numquad, name)
        if obj in subs.values():
            lines.append(f"from . import {name} as {name}")
            continue
        # the module that defines it (xpu imports the errors too), else the one holding it
        where = [s for s, m in subs.items() if getattr(obj, "__module__", None) == m.__name__] or [
            s for s, m in subs.items() if getattr(m, name, None) is obj
        ]
        if not where:
            raise ValueError(f"numquad/_stubgen.py: numquad.{name} is not from ops, xpu or errors")
        lines.append(f"from .{where[0]} import {name} as {name}")
    return lines + ["", "__version__: str", ""] + _all(numquad.__all__)


def render_stubs():
    """{file name in numquad/: text} for every stub."""
    out = {}
    for name, render in (("__init__.pyi", _render_init), ("ops.pyi", _render_ops), ("xpu.pyi", _render_xpu)):
        out[name] = "\n".join(render()).rstrip() + "\n"
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    check = "--check" in argv
    pkg = pathlib.Path(__file__).resolve().parent
    stale = []
    for name, text in render_stubs().items():
        path = pkg / name
        if path.exists() and path.read_text() == text:
            continue
        stale.append(f"numquad/{name}")
        if not check:
            path.write_text(text)
    if check and stale:
        print(f"stale: {', '.join(stale)}; run python -m numquad._stubgen", file=sys.stderr)
        return 1
    if stale:
        print(f"wrote {', '.join(stale)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
