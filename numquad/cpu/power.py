"""The CPU target's ``_nq_pow`` (numquad/_power.py says why): ``a ** b`` as Numba
types it, a float to an integer power by :func:`numquad._power.float_power`, any
other pair of types by Numba's own ``**``."""

from __future__ import annotations

import operator

from numba import types
from numba.extending import intrinsic

from .. import _power

__all__ = ["pow_"]


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
            impl = _power.float_power(real.return_type, tb.signed)
            return context.compile_internal(builder, impl, real.return_type(ta, tb), [xa, xb])
        return context.get_function(operator.pow, real)(builder, [xa, xb])
    return sig, codegen
