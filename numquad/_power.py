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
and C's ``pow`` past an exponent of 65536 in magnitude, the minimum too. Every other
pair of types is each Numba's own ``**``.
"""

from __future__ import annotations

import ast
import math

__all__ = ["NAME", "float_power", "rewrite"]

NAME = "_nq_pow"


def float_power(tp, signed):
    """``a ** b`` for a float *a* and an integer *b* as Numba computes it, in the
    result type *tp*, with ``1 / ±0`` the infinity of its sign."""
    one = tp(1)
    inf = tp(math.inf)
    if signed:
        def impl(a, b):
            r, x = one, tp(a)
            e = -b if b < 0 else b
            if e > 0x10000 or e < 0:            # Numba's cutoff (and -(-2**63))
                return tp(math.pow(a, float(b)))
            while e != 0:
                if e & 1:
                    r *= x
                e >>= 1
                x *= x
            if b >= 0:
                return r
            return one / r if r != 0 else tp(math.copysign(inf, r))
    else:
        def impl(a, b):
            r, x = one, tp(a)
            e = b
            if e > 0x10000:
                return tp(math.pow(a, float(b)))
            while e != 0:
                if e & 1:
                    r *= x
                e >>= 1
                x *= x
            return r
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
        return ast.copy_location(ast.Call(func=ast.copy_location(ast.Name(NAME, ast.Load()), node),
                                          args=[node.left, node.right], keywords=[]), node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Pow) or not isinstance(node.target, ast.Name):
            return node
        load = ast.copy_location(ast.Name(node.target.id, ast.Load()), node.target)
        value = self.visit_BinOp(ast.copy_location(ast.BinOp(load, ast.Pow(), node.value), node))
        if not isinstance(value, ast.Call):
            return node
        return ast.copy_location(ast.Assign(targets=[node.target], value=value), node)


def _small_exponent(node):
    """``x ** 2``: a non-negative integer literal exponent never inverts."""
    r = node.right
    return isinstance(r, ast.Constant) and isinstance(r.value, int) and not isinstance(r.value, bool) \
        and r.value >= 0


def rewrite(tree, is_int_constant=lambda node: False):
    """*tree* with each ``a ** b`` (and ``name **= b``) as ``_nq_pow(a, b)``, except
    where the exponent is a non-negative integer literal or *is_int_constant* says
    the whole power is an integer constant (a shape such as ``TPB ** 2``); True when
    something changed."""
    r = _Rewrite(lambda n: _small_exponent(n) or is_int_constant(n))
    r.visit(tree)
    return r.changed
