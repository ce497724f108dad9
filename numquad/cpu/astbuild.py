"""The small AST builders and queries that the CPU wave compiler's phases share.

Generated code is built as Python ``ast`` nodes: a name, a call, a constant, a
lane-array load ``_nq_ld(arr, lane)`` and store ``_nq_st(arr, lane, value)``, a lane
loop, a function definition, and :func:`located` giving every node the line of the
user statement it came from. The names in generated code (``_nq_l``, ``_nq_T_<dtype>``,
...) are listed in the docstring of numquad/cpu/codegen.py.
"""

from __future__ import annotations

import ast

import numpy as np

from .. import ops as _ops

__all__ = [
    "W",
    "L",
    "SCALAR_NAMES",
    "CASTS",
    "name",
    "call",
    "const",
    "sub",
    "store",
    "mask_copy",
    "mask_andnot",
    "assign",
    "lane_loop",
    "shape_arg",
    "located",
    "fn_def",
    "view_root",
]


#: the lanes of a wave (32)
W = _ops.WAVE
L = "_nq_l"  # the lane loop variable

#: each value dtype's scalar type token in generated code (``_nq_T_<dtype>``)
SCALAR_NAMES = {np.dtype(d): f"_nq_T_{np.dtype(d).name}" for d in _ops.VALUE_DTYPES}

#: numquad's casts in generated code: pure, and transparent to an index's form
CASTS = frozenset({"_nq_nonneg", "_nq_i64", "_nq_i32", "_nq_u32"})


def name(n, ctx=ast.Load):
    return ast.Name(n, ctx())


def call(fn, *args):
    return ast.Call(func=name(fn) if isinstance(fn, str) else fn, args=list(args), keywords=[])


def const(v):
    return ast.Constant(v)


def sub(arr, idx=L):
    """arr[lane]: a lane-array load (a plain GEP + load, no wrap-around code)."""
    return call("_nq_ld", name(arr), name(idx) if isinstance(idx, str) else idx)


def store(arr, value, idx=L):
    """arr[lane] = value, as a statement."""
    return ast.Expr(call("_nq_st", name(arr), name(idx) if isinstance(idx, str) else idx, value))


def mask_copy(dst, src):
    """dst = src for the group's lanes, as one call (cpu/intrinsics.py, mask_copy)."""
    return ast.Expr(call("_nq_mcopy", name(dst), name(src), name("_nq_G")))


def mask_andnot(dst, src):
    """dst = dst and not src for the group's lanes (cpu/intrinsics.py, mask_andnot)."""
    return ast.Expr(call("_nq_mandnot", name(dst), name(src), name("_nq_G")))


def assign(target, value):
    return ast.Assign(targets=[target], value=value)


def lane_loop(body):
    """for each lane of the group: the 32 lanes of a wave (``_nq_G`` is the constant 32),
    or every thread of the block in a kernel with barriers (``_nq_G`` set at run time)."""
    return ast.For(target=name(L, ast.Store), iter=call("_nq_range", name("_nq_G")), body=body, orelse=[])


def shape_arg(allocs, name):
    """The constant shape of *name* where it is a shared or local array (*allocs*: the
    frontend's, less the names bound to anything else: codegen._BlockGen.const_shapes), as a
    tuple expression, else None. The bounds checks take it: with a
    constant LLVM proves most indices inside (``sA[ty, k]`` in a loop over k < 16),
    and a loop it can no longer unroll does not keep the lane loop around it scalar."""
    a = allocs.get(name)
    if a is None or a[0] not in ("shared", "local"):
        return None
    return ast.Tuple([const(int(v)) for v in a[1]], ast.Load())


def located(nodes, lineno):
    for n in nodes:
        for sub in ast.walk(n):
            if "lineno" in sub._attributes:
                sub.lineno = getattr(sub, "lineno", None) or lineno
                sub.col_offset = getattr(sub, "col_offset", None) or 0
                sub.end_lineno = getattr(sub, "end_lineno", None) or sub.lineno
                sub.end_col_offset = getattr(sub, "end_col_offset", None) or 0
    return nodes


def fn_def(name, params, body, lineno):
    extra = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
    fn = ast.FunctionDef(
        name=name,
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=p) for p in params],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=body,
        decorator_list=[],
        returns=None,
        lineno=lineno,
        col_offset=0,
        **extra,
    )
    return fn


def view_root(e):
    """The Name an array expression indexes from: ``a`` of ``a``, ``a[y]``, ``a[y][1:]``
    (chained indexing, ``out[y][x] = v``), else None."""
    while isinstance(e, ast.Subscript):
        if isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, str):
            return None  # a record's field
        e = e.value
    return e if isinstance(e, ast.Name) else None
