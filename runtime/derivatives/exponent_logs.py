"""The logarithm that the derivative of a power in its exponent reads: for y = x ** p,
dy/dp = y log(x).

Of real numbers NumPy's power is real: where x is negative it is NaN (or, for an integer p,
a value that has no derivative in p along the reals), so log(x) is taken where x > 0 and the
derivative in p is 0 elsewhere. Of complex numbers (x or p complex, as for `(-2.0) ** z`) the
power is exp(p log(x)) with the principal log, the branch NumPy's complex power takes (the sign
of a zero imaginary part picks the side of the cut, as np.log's does): it is holomorphic in p
wherever x is not 0, and its derivative there is y log(x) with that log; log(-2) is
log(2) + i pi. At x = 0 the power is 0 (or NaN), and the derivative in p is taken as 0.

The derivative in x, p * x ** (p - 1), is 0 where p == 0, x = 0 included, as JAX's is: it is
read at the base `slope_base(x, p)`, 1 where p == 0 and x == 0.
"""
from __future__ import annotations

import cmath
import math

from ..devices import array_module
from .dtypes import dtype_beside
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


def slope_base(x, p):
    """x, with 1 where p == 0 and x == 0: the base of power's slope p * x ** (p - 1), which is
    0 where p == 0 (x ** 0 is 1 for every x) but reads 0 * 0 ** -1 there, NaN (of a Python 0.0,
    ZeroDivisionError). At 1 the slope is 0 * 1 ** -1 = 0, and so are its own derivatives, which
    differentiating the power again reads at the same base. Elsewhere it is x itself, so the
    slope, and its derivative in p, are the power's own."""
    if (_is_number(p) and p != 0) or (_is_number(x) and x != 0):
        return x
    if _is_number(p) and _is_number(x):
        return x + 1  # (both 0)
    xp = array_module(x) if hasattr(x, "dtype") else array_module(p)
    if _is_number(p):  # (p == 0)
        return xp.where(x == 0, 1, x)
    if _is_number(x):  # (x == 0) two Python numbers make float64: the base goes with p, as x did
        base = xp.where(p == 0, x + 1, x)
        if hasattr(base, "astype"):  # NumPy's and CuPy's arrays, traced values
            return base.astype(dtype_beside(x, p))
        return xp.astype(base, dtype_beside(x, p))  # the array API's arrays have no method
    return xp.where(p == 0, xp.where(x == 0, 1, x), x)


def _is_number(value) -> bool:
    return type(value) in (int, float, complex)


def _fold_slope_base(arguments):
    """`slope_base(x, 3)` is x, and `slope_base(x, 0)` is 1 (the slope 0 * 1 ** -1 is 0
    wherever x ** 0 is 1, which is everywhere): the base, where the exponent is a number
    written in the code (transforms/rules/core.py folds such calls in the code it makes)."""
    if len(arguments) != 2:
        return None
    x, p = arguments
    sign = 1
    if type(p).__name__ == "UnaryOp" and type(p.op).__name__ == "USub":  # `x ** -2`
        p, sign = p.operand, -1
    value = getattr(p, "value", None)  # (only a constant node has a value)
    if type(value) not in (int, float) or type(p).__name__ != "Constant":
        return None
    if sign * value != 0:
        return x
    return type(p)(value=1, kind=None)


slope_base.__autotrace_fold__ = _fold_slope_base
