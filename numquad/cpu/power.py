"""The CPU target's ``_nq_pow`` (numquad/_power.py says why): ``a ** b`` as Numba
types it, a float to an integer power by :func:`numquad._power.float_power`, any
other pair of types by Numba's own ``**``."""

from __future__ import annotations

from numba import types
from numba.extending import intrinsic

from .. import _power

__all__ = ["pow_"]


pow_ = intrinsic(_power.power_typer(types, "pow_"))
pow_.__doc__ = "``a ** b``, typed and computed as Numba's ``**`` but for the inversion of 0."
