"""``a ** b`` in kernels: a float to an integer power is never an exception, on
every target.

Numba lowers a float to an integer power by square-and-multiply and then ``1.0 / r``
for a negative exponent (``int_power_impl`` in Numba's ``cpython/numbers.py``, which
numba.cuda shares), and raises ``OverflowError`` for an exponent of -2**63 (in
numba.cuda also -2**31, of an int32). On the CPU its helper is compiled with Python's
error model whatever the kernel's, so the inversion raised ``ZeroDivisionError``:
``0.0 ** -1`` (or ``np.float32(1e-30) ** -2``, whose square underflows) stopped a
release kernel with an exception, where docs/semantics.md and the interpreter give
``inf``. On the GPU a release kernel cannot raise: the thread that did returned
early, its outputs unwritten (the H200, tests/test_power.py). Both compilers write
every ``a ** b`` whose value is not an integer constant as ``_nq_pow(a, b)``
(:func:`rewrite`); each target's ``_nq_pow`` (cpu/power.py, cuda/intrinsics.py) types
it as its Numba types ``**`` and lowers a float to an integer power with
:func:`float_power`: the same algorithm, with ``1 / ±0`` the infinity of its sign
and C's ``pow`` past an exponent of 65536 in magnitude, the minimum too; and an
integer to an integer power with :func:`int_power`, which Numba's raised for the
most negative exponent. Every other pair of types is each Numba's own ``**``.
"""

from __future__ import annotations

import ast
import copy
import math
import operator
import warnings

__all__ = [
    "NAME",
    "float_power",
    "int_power",
    "power_typer",
    "rewrite",
    "cpython_constant",
    "NOT_CONSTANT",
    "BINARY_OPS",
]

NAME = "_nq_pow"


def power_typer(types_, name):
    """The typing function of ``_nq_pow(a, b)`` for a target's ``@intrinsic``, named
    *name*; *types_* is that target's Numba types module (``numba.types``, or
    numba-cuda's ``numba.cuda.types``): ``a ** b`` typed as that target's Numba types
    it, a float to an integer power computed by :func:`float_power`, any other pair
    by the target's own ``**``."""

    def typer(typingctx, a, b):
        sig = typingctx.resolve_function_type(operator.pow, (a, b), {})
        if sig is None:
            return None

        def codegen(context, builder, s, args):
            real = typingctx.resolve_function_type(operator.pow, tuple(s.args), {})
            xa, xb = (context.cast(builder, v, t, u) for v, t, u in zip(args, s.args, real.args))
            ta, tb = (types_.unliteral(t) for t in real.args)
            rt = real.return_type
            if isinstance(ta, types_.Float) and isinstance(tb, types_.Integer):
                impl = float_power(rt, tb.signed)
                return context.compile_internal(builder, impl, rt(ta, tb), [xa, xb])
            if isinstance(ta, types_.Integer) and isinstance(tb, types_.Integer) and isinstance(rt, types_.Integer):
                raises = context.error_model.raise_on_fp_zero_division
                impl = int_power(rt, tb.signed, None if raises else -(1 << (rt.bitwidth - 1)))
                return context.compile_internal(builder, impl, rt(ta, tb), [xa, xb])
            return context.get_function(operator.pow, real)(builder, [xa, xb])

        return sig.return_type(a, b), codegen

    typer.__name__ = typer.__qualname__ = name
    return typer


def _square_multiply(r, x, e):
    """``r * x ** e`` by square-and-multiply (``e >= 0``), in the type of *r* and *x*:
    Numba's algorithm for ``**`` with an integer exponent, for both powers below."""
    while e != 0:
        if e & 1:
            r *= x
        e >>= 1
        x *= x
    return r


def _overload_square_multiply():
    from numba.extending import overload

    # compiled as a function by each target (generic: the CPU's and numba.cuda's)
    overload(_square_multiply, target="generic")(lambda r, x, e: _square_multiply)


_overload_square_multiply()


def int_power(tp, signed, zerodiv):
    """``a ** b`` for integers *a*, *b* as Numba computes it, in the result type
    *tp*, for every exponent: Numba's own computes ``-b`` first and raises
    ``OverflowError`` for the most negative exponent (-2**63; numba.cuda's also
    -2**31 of an int32), which stopped a release CPU launch and ended a GPU thread
    with its outputs unwritten. A negative exponent gives 0 for a base other than
    1, -1 and 0, ``(-1) ** b`` the sign of b's parity, ``0 ** b`` *zerodiv* (the
    type's minimum, Numba's NumPy error model) or ZeroDivisionError where it is
    None; past an exponent of 65536, C's ``pow`` converted, as Numba."""
    one = tp(1)

    def impl(a, b):
        a = tp(a)  # in the result type first, as Numba's (a uint64 base of an int64 power)
        if signed and b < 0:
            if a == 0:
                if zerodiv is None:
                    raise ZeroDivisionError("0 cannot be raised to a negative power")
                return tp(zerodiv)
            if a == 1:
                return one
            if a == -1:
                return one if b & 1 == 0 else tp(-1)
            return tp(0)
        if b > 0x10000:
            return tp(math.pow(a, float(b)))
        return _square_multiply(one, a, b)

    return impl


def float_power(tp, signed):
    """``a ** b`` for a float *a* and an integer *b* (*signed* or not) as Numba
    computes it, in the result type *tp*, with ``1 / ±0`` the infinity of its sign."""
    one = tp(1)
    inf = tp(math.inf)

    def impl(a, b):
        negative = signed and b < 0  # (a constant False for an unsigned b)
        e = -b if negative else b
        if e > 0x10000 or e < 0:  # Numba's cutoff (and -(-2**63))
            return tp(math.pow(a, float(b)))
        r = _square_multiply(one, tp(a), e)
        if not negative:
            return r
        return one / r if r != 0 else tp(math.copysign(inf, r))

    return impl


class _Rewrite(ast.NodeTransformer):
    def __init__(self, keep):
        self.keep = keep
        self.changed = False

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Pow) or self.keep(node):
            return node
        self.changed = True
        return ast.copy_location(
            ast.Call(
                func=ast.copy_location(ast.Name(NAME, ast.Load()), node), args=[node.left, node.right], keywords=[]
            ),
            node,
        )

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Pow) or not _plain_target(node.target):
            return node
        # (``a[i] **= b`` as ``a[i] = a[i] ** b``: its array and index have no effects,
        # so evaluating them twice is evaluating them once)
        load = _as_load(node.target)
        value = self.visit_BinOp(ast.copy_location(ast.BinOp(load, ast.Pow(), node.value), node))
        if not isinstance(value, ast.Call):
            return node
        return ast.copy_location(ast.Assign(targets=[node.target], value=value), node)


def _plain_target(t):
    """Is the augmented assignment's target *t* a name, or a subscript or attribute
    of one whose indices are names, constants and operators on them (nothing with
    an effect)?"""
    if isinstance(t, ast.Name):
        return True
    if isinstance(t, (ast.Subscript, ast.Attribute)):
        return all(
            isinstance(n, (ast.Name, ast.Constant, ast.Tuple, ast.BinOp, ast.UnaryOp, ast.Attribute, ast.Subscript))
            or isinstance(n, (ast.expr_context, ast.operator, ast.unaryop))
            for n in ast.walk(t)
        )
    return False


def _as_load(t):
    """A copy of the target *t* that reads it."""
    load = copy.deepcopy(t)
    for n in ast.walk(load):
        if hasattr(n, "ctx"):
            n.ctx = ast.Load()
    return ast.copy_location(load, t)


NOT_CONSTANT = object()

#: CPython's compiler folds an integer result of ``*``, ``**`` or ``<<`` only up to
#: this many bits (``MAX_INT_SIZE`` in CPython's Python/ast_opt.c)
_MAX_INT_BITS = 128


#: Python's binary operators by AST node, as CPython folds constants with them
BINARY_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}


def cpython_constant(node):
    """The value CPython's compiler folds the expression *node* into (numbers, with
    unary and binary operators), else :data:`NOT_CONSTANT`. Numba and numba.cuda see
    the folded constant: ``2 ** -1`` is the float 0.5 in their bytecode, ``~True``
    the int -2. A fold that raises (``1 // 0``, ``0.0 ** -1``) or would grow an
    integer past 128 bits is left to run."""
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) in (bool, int, float, complex) else NOT_CONSTANT
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert, ast.Not)):
        v = cpython_constant(node.operand)
        if v is NOT_CONSTANT:
            return NOT_CONSTANT
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # ~True
                return {ast.USub: lambda: -v, ast.UAdd: lambda: +v, ast.Invert: lambda: ~v, ast.Not: lambda: not v}[
                    type(node.op)
                ]()
        except (TypeError, ValueError, ArithmeticError):
            return NOT_CONSTANT
    if isinstance(node, ast.BinOp):
        a, b = cpython_constant(node.left), cpython_constant(node.right)
        if a is NOT_CONSTANT or b is NOT_CONSTANT:
            return NOT_CONSTANT
        ints = isinstance(a, int) and isinstance(b, int)
        op = type(node.op)
        if ints and op is ast.Pow and b > 0 and a and abs(a).bit_length() > _MAX_INT_BITS // b:
            return NOT_CONSTANT
        if ints and op is ast.Mult and a and b and abs(a).bit_length() + abs(b).bit_length() > _MAX_INT_BITS:
            return NOT_CONSTANT
        if ints and op is ast.LShift and b > 0 and a and abs(a).bit_length() > _MAX_INT_BITS - b:
            return NOT_CONSTANT
        fn = BINARY_OPS.get(op)
        if fn is None:
            return NOT_CONSTANT
        try:
            v = fn(a, b)
        except (TypeError, ValueError, ArithmeticError):
            return NOT_CONSTANT
        return v if type(v) in (bool, int, float) else NOT_CONSTANT  # (a complex power: left)
    return NOT_CONSTANT


def _small_exponent(node):
    """``x ** 2``: a non-negative integer literal exponent never inverts."""
    r = node.right
    return isinstance(r, ast.Constant) and isinstance(r.value, int) and not isinstance(r.value, bool) and r.value >= 0


def rewrite(tree, is_int_constant=lambda node: False):
    """*tree* with each ``a ** b`` (and ``name **= b``) as ``_nq_pow(a, b)``, except
    where the exponent is a non-negative integer literal or *is_int_constant* says
    the whole power is an integer constant (a shape such as ``TPB ** 2``); True when
    something changed."""
    # (a power CPython folds, ``2 ** -1``, stays: compiled, it is the constant 0.5)
    r = _Rewrite(lambda n: _small_exponent(n) or is_int_constant(n) or cpython_constant(n) is not NOT_CONSTANT)
    r.visit(tree)
    return r.changed
