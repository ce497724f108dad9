"""The wave items: the front end's output (cpu/frontend.py), a tree that
cpu/codegen.py turns into one block function. ``Region`` is straight-line lane
code, ``Uniform`` a statement run once per wave, ``XLCall`` a whole-wave op,
``If``/``UniformIf``/``Loop`` masked and uniform control, ``Barrier``/``BarrierReduce``
block barriers and ``Jump`` a ``return``/``break``/``continue``.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Optional

from .. import ops as _ops

__all__ = ["Region", "Uniform", "XLCall", "If", "UniformIf", "Loop", "Jump", "Barrier", "BarrierReduce"]


@dataclasses.dataclass
class Region:
    """Straight-line lane code: runs as one lane loop under the current mask."""

    stmts: list


@dataclasses.dataclass
class Uniform:
    """A statement whose value is the same in every lane: runs once per wave."""

    stmt: ast.stmt


@dataclasses.dataclass
class XLCall:
    """``target = op(args)``: one whole-wave vector operation. ``check`` is (the
    numba.cuda function's name, the temporary holding its mask) where a debug build
    checks the call against numba.cuda's mask rules (numquad/cpu/cudaapi.py,
    ``gen_sync_check``)."""

    target: str
    op: _ops.Op
    args: list  # ast.Name (a lane temporary) or ast.Constant (a selector)
    node: ast.stmt
    check: Optional[tuple] = None
    #: numba.cuda's shuffle written where this op came from (``shfl_sync``, ...): its
    #: operand is typed by numba.cuda's rule first (cpu/cudaapi.py ``_SHFL_STANDINS``)
    spelled: Optional[str] = None


@dataclasses.dataclass
class If:
    cond: str  # a bool lane temporary
    body: list
    orelse: list
    node: ast.stmt


@dataclasses.dataclass
class Loop:
    """A masked loop. ``uniform`` is (target, range-args) for a range loop whose
    trip count is the same in every lane; ``test`` the condition of a ``while``
    that is the same in every lane; with neither, a ``while True`` loop that ends
    when no lane is left."""

    body: list
    node: ast.stmt
    uniform: Optional[tuple] = None
    test: Optional[ast.expr] = None


@dataclasses.dataclass
class UniformIf:
    """An ``if`` whose condition is the same in every lane: plain scalar control."""

    test: ast.expr
    body: list
    orelse: list
    node: ast.stmt


@dataclasses.dataclass
class Barrier:
    """``xpu.syncthreads()``: every thread of the block arrives before any goes on."""

    node: ast.stmt


@dataclasses.dataclass
class BarrierReduce:
    """``target = syncthreads_count/_and/_or(arg)``: a block barrier with a reduction."""

    target: str
    kind: str  # the builtin's name
    arg: str  # a lane temporary
    node: ast.stmt


@dataclasses.dataclass
class Jump:
    kind: str  # "return", "break", "continue"
    node: ast.stmt
    value: Optional[ast.expr] = None
