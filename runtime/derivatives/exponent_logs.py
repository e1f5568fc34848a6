"""The logarithm that the derivative of a power in its exponent reads: for y = x ** p,
dy/dp = y log(x).

Of real numbers NumPy's power is real: where x is negative it is NaN (or, for an integer p,
a value that has no derivative in p along the reals), so log(x) is taken where x > 0 and the
derivative in p is 0 elsewhere. Of complex numbers (x or p complex, as for `(-2.0) ** z`) the
power is exp(p log(x)) with the principal log, the branch NumPy's complex power takes (the sign
of a zero imaginary part picks the side of the cut, as np.log's does): it is holomorphic in p
wherever x is not 0, and its derivative there is y log(x) with that log; log(-2) is
log(2) + i pi. At x = 0 the power is 0 (or NaN), and the derivative in p is taken as 0.
"""
from __future__ import annotations

import cmath
import math

from ..devices import array_module
from .real_only import is_complex


def log_of_base(x, power=None):
    """log(x) where `power` = x ** p has a derivative in p (power times it), else 0: where x > 0
    of real numbers; where x != 0, the principal complex log, where x or `power` is complex. A
    Python number of a Python number (weak, as NumPy 2 keeps it)."""
    in_complex = is_complex(x) or is_complex(power)
    if type(x) in (float, int, complex):
        if in_complex:
            return cmath.log(x) if x != 0 else 0j
        return math.log(x) if x > 0 else 0.0
    xp = array_module(x)
    safe = xp.where(has_log(x, power), x, 1.0)
    if not in_complex:
        return xp.log(safe)
    # (a complex x as it is: `+ 0j` would make the imaginary part -0.0 of a base on the negative
    # axis +0.0, the other side of the cut, where NumPy's power takes log|x| - i pi)
    return xp.log(safe if is_complex(safe) else safe + 0j)


def has_log(x, power=None):
    """Where `log_of_base(x, power)` is a log of x: x > 0 of real numbers, x != 0 of complex
    ones (a mask, constant to the gradient)."""
    xp = array_module(x)
    if is_complex(x) or is_complex(power):
        return xp.not_equal(x, 0)
    return xp.greater(x, 0)
