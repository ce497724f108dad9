"""``a ** b`` in kernels on the CPU target: a float to a negative integer power that
gives 0 before its inversion is an infinity, not an exception.

Numba lowers a float to an integer power by square-and-multiply and then ``1.0 / r``
for a negative exponent (``int_power_impl`` in Numba's ``cpython/numbers.py``). On
the CPU that helper is compiled with Python's error model whatever the kernel's, so
its division raised ``ZeroDivisionError``: ``0.0 ** -1`` (or ``np.float32(1e-30) **
-2``, whose square underflows) stopped a release kernel with an exception, where
docs/semantics.md and the interpreter give ``inf``, and so does the GPU (numba.cuda
shares the algorithm; its PTX inverts with ``rcp.rn``, which gives the infinity).
The frontend (cpu/frontend.py) and the device functions' rewrite (cpu/devicefn.py)
write every ``a ** b`` whose value is not an integer constant as ``_nq_pow(a, b)``
(:func:`rewrite`); :func:`pow_` types it as Numba types ``**`` and lowers a float to
an integer power with :func:`float_power`, the same algorithm but for the inversion
of a zero, which is the infinity of its sign. Every other pair of types is Numba's
own ``**``.
"""

from __future__ import annotations

import ast
import math
import operator

from numba import types
from numba.extending import intrinsic

__all__ = ["NAME", "float_power", "pow_", "rewrite"]

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


@intrinsic
def pow_(typingctx, a, b):
    """``a ** b``, typed and computed as Numba's ``**`` but for the inversion of 0."""
    sig = typingctx.resolve_function_type(operator.pow, (a, b), {})
    if sig is None:
        return None
    sig = sig.return_type(a, b)

    def codegen(context, builder, s, args):
        real = typingctx.resolve_function_type(operator.pow, tuple(s.args), {})
        xa, xb = (context.cast(builder, v, t, u) for v, t, u in zip(args, s.args, real.args))
        ta, tb = (types.unliteral(t) for t in real.args)
        if isinstance(ta, types.Float) and isinstance(tb, types.Integer):
            impl = float_power(real.return_type, tb.signed)
            return context.compile_internal(builder, impl, real.return_type(ta, tb), [xa, xb])
        return context.get_function(operator.pow, real)(builder, [xa, xb])
    return sig, codegen


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
