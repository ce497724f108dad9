"""LLVM IR for the combine operators of ops.py, shared by both targets.

The CPU target applies them to whole waves (``<32 x T>`` vectors), the CUDA
target to one lane's scalar; the instructions are the same, so each operator is
written once here (llvmlite's IR builder works on both shapes). The semantics
are docs/semantics.md's: integers wrap, a float min/max lets a NaN operand lose
and orders the zeros (min gives -0.0, max +0.0, whatever the operand order).
"""

from __future__ import annotations

from llvmlite import ir

from . import ops as _ops

__all__ = ["combine", "float_minmax"]


def combine(builder, name, kind, a, b):
    """``a (+) b`` for the ops.py combine operator *name* on values of NumPy kind
    *kind* ("f" float, "i" signed, "u" unsigned integer, "b" bool as an integer)."""
    is_float = kind == "f"
    if name == "add":
        return builder.fadd(a, b) if is_float else builder.add(a, b)
    if name == "mul":
        if kind == "b":
            return builder.and_(a, b)
        return builder.fmul(a, b) if is_float else builder.mul(a, b)
    if name in ("and", "or", "xor") and not is_float:
        return getattr(builder, name + "_" if name != "xor" else name)(a, b)
    if name not in ("min", "max"):
        raise _ops.unknown_value("combine", name)
    if is_float:
        return float_minmax(builder, name, a, b)
    op = "<" if name == "min" else ">"
    cmp = builder.icmp_signed(op, a, b) if kind == "i" else builder.icmp_unsigned(op, a, b)
    return builder.select(cmp, a, b)


def _int_like(ty):
    """The integer type of *ty*'s width (a vector of them for a vector)."""
    if isinstance(ty, ir.VectorType):
        return ir.VectorType(_int_like(ty.element), ty.count)
    return ir.IntType(64 if isinstance(ty, ir.DoubleType) else 32)


def float_minmax(builder, name, a, b):
    """min/max of floats (scalars or vectors) as docs/semantics.md defines them:
    with compares and selects, since ``llvm.minnum`` leaves the signed-zero case
    open and NVVM need not emit ``min.f32`` for it.

    Case by case (min; max mirrors it): a < b gives a, b < a gives b (ordered
    compares: false with a NaN); otherwise a NaN a gives b, a NaN b gives a (two
    NaNs: b), and two equal values give their bits OR-ed, which differs from either
    only for +0.0 and -0.0, giving -0.0."""
    first, second = ("<", ">") if name == "min" else (">", "<")
    a_wins = builder.fcmp_ordered(first, a, b)
    b_wins = builder.fcmp_ordered(second, a, b)
    a_nan = builder.fcmp_unordered("uno", a, a)
    b_nan = builder.fcmp_unordered("uno", b, b)
    ity = _int_like(a.type)
    ai, bi = builder.bitcast(a, ity), builder.bitcast(b, ity)
    # equal values: the same bits, or +0.0/-0.0 (OR sets the sign for min, AND clears it for max)
    tie = builder.bitcast(builder.or_(ai, bi) if name == "min" else builder.and_(ai, bi), a.type)
    r = builder.select(b_nan, a, tie)
    r = builder.select(a_nan, b, r)
    r = builder.select(b_wins, b, r)
    return builder.select(a_wins, a, r)
