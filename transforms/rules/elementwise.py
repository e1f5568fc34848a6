"""Derivative rules of NumPy's elementwise functions (ufuncs and their friends).

Most are declared by their partial derivatives (declarations.py): each argument's gradient given
d[y], from which both modes' templates are generated. An adjoint of several arguments undoes
broadcasting with `unbroadcast`, which also gives integer arguments a zero gradient; a tangent's
terms broadcast to the result's shape by themselves. Where a function is not differentiable the
rules pick a subgradient: abs gives 0 at 0; maximum/minimum (and fmax/fmin) split the gradient
evenly between tied arguments; clip gives the gradient to `a` where it lies inside the bounds,
bounds included, and to a bound where it binds.
The math module's functions of floats (math.sin, math.pow, math.atan2, ...) share the rules of
their NumPy twins. math.gamma's and math.lgamma's slopes are polygamma functions
(runtime/primitives/math_special.py), whose own slope is the next one: closed to any order.
Derivatives compute in the dtype of their values: constants are Python floats (`math.log(2.0)`,
weak under NumPy 2's promotion; np.log(2.0) is a float64 scalar that would make a float32
gradient float64), and masks become floats in the result's dtype (`as_weights`).
"""
import math

import numpy as np

from ...runtime.derivatives.adjoint_ops import clip_weights, first_given, unbroadcast
# Named in partials' expressions.
from ...runtime.derivatives.adjoint_ops import real_sign, sinc_slope, tie_weights  # noqa: F401
from ...runtime.derivatives.complex_parts import abs_slope, imag_gradient, imag_of, real_gradient
from ...runtime.derivatives.dtypes import as_weights
from ...runtime.derivatives.exponent_logs import log_of_base, slope_base  # noqa: F401
from ...runtime.derivatives.real_only import refuse_complex
from ...runtime.primitives.out_writes import kept_where, masked_operand
from ...runtime.primitives.math_special import gamma, lgamma, polygamma, polygamma_of
from ...runtime.derivatives.structure import add, zeros_like
from .core import adjoint, d, other_calls, tangent
from .declarations import linear, partials

# Arithmetic: what the operators +, -, *, /, **, unary - and + mean.

partials(np.add, x1="d[y]", x2="d[y]")
partials(np.subtract, x1="d[y]", x2="-d[y]")
partials(np.multiply, x1="d[y] * x2", x2="d[y] * x1")
# The exponent's gradient reads log(x1): of real powers, 0 where the base is not positive; of
# complex ones, NumPy's branch of the complex log (runtime/derivatives/exponent_logs.py). The
# base's is 0 where x2 == 0, x1 = 0 too: slope_base(x1, x2) is x1, but 1 there (and `x ** 3`'s
# slope reads `3 * x ** 2`).
partials(np.power, np.float_power, math.pow, x1="d[y] * x2 * slope_base(x1, x2) ** (x2 - 1)",
         x2="d[y] * y * log_of_base(x1, y)")
partials(np.negative, x="-d[y]")
partials(np.positive, x="d[y]")
partials(np.mod, np.remainder, x1="d[y]", x2="-d[y] * np.floor_divide(x1, x2)")
partials(np.fmod, math.fmod, x1="d[y]", x2="-d[y] * np.trunc(x1 / x2)")


# |x1| with x2's sign: x1's gradient times the sign of x1 * y; x2's sign bit is a step.
@adjoint(np.copysign, math.copysign)
def copysign_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y] * np.sign(x1 * y), x1)


@tangent(np.copysign, math.copysign)
def copysign_tangent(y, x1, x2):
    d[y] = d[x1] * np.sign(x1 * y)


# The tangent divides once, where the gradients' quotients are two.
@adjoint(np.true_divide, np.divide)
def divide_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y] / x2, x1)
    d[x2] = unbroadcast(-d[y] * y / x2, x2)


@tangent(np.true_divide, np.divide)
def divide_tangent(y, x1, x2):
    d[y] = (d[x1] - d[x2] * y) / x2


# Piecewise constant: zero almost everywhere. A call of it is a constant, and so is `a // b`
# (transforms/analysis/activity.py); these rules serve `x = x // b` where x carries gradient.
@adjoint(np.floor_divide)
def floor_divide_rule(y, x1, x2):
    d[x1] = zeros_like(x1)
    d[x2] = zeros_like(x2)


@tangent(np.floor_divide)
def floor_divide_tangent(y, x1, x2):
    d[y] = zeros_like(y)


# The sign of a real x is a step, zero almost everywhere. NumPy's sign of a complex z is z / |z|,
# which is not holomorphic (it reads |z|): refused, as np.abs of complex values is.
@adjoint(np.sign)
def sign_rule(y, x):
    refuse_complex(x, "numpy.sign", "np.sign(z) is z / |z|, which is not holomorphic")
    d[x] = zeros_like(x)


@tangent(np.sign)
def sign_tangent(y, x):
    refuse_complex(x, "numpy.sign", "np.sign(z) is z / |z|, which is not holomorphic")
    d[y] = zeros_like(y)


# Exponentials, logarithms, powers.

def _python_311(name: str) -> tuple:
    """math's function `name` where this Python has it (math.cbrt and math.exp2: 3.11)."""
    return tuple(function for function in (getattr(math, name, None),) if function is not None)


partials(np.exp, math.exp, x="d[y] * y")
partials(np.exp2, *_python_311("exp2"), x="d[y] * y * math.log(2.0)")
partials(np.expm1, math.expm1, x="d[y] * (y + 1.0)")
partials(np.log, math.log, x="d[y] / x")
other_calls(math.log, "autotrace differentiates math.log(x), not math.log(x, base): write "
                      "math.log(x) / math.log(base)")
partials(np.log2, math.log2, x="d[y] / (x * math.log(2.0))")
partials(np.log10, math.log10, x="d[y] / (x * math.log(10.0))")
partials(np.log1p, math.log1p, x="d[y] / (x + 1.0)")
partials(np.sqrt, math.sqrt, x="d[y] * 0.5 / y")
partials(np.cbrt, *_python_311("cbrt"), x="d[y] / (3.0 * y * y)")
partials(np.square, x="d[y] * 2.0 * x")
partials(np.reciprocal, x="-d[y] * y * y")
partials(np.logaddexp, x1="d[y] * np.exp(x1 - y)", x2="d[y] * np.exp(x2 - y)")
partials(np.logaddexp2, x1="d[y] * np.exp2(x1 - y)", x2="d[y] * np.exp2(x2 - y)")

# The gamma function and its logarithm (of floats: the math module's), and the polygamma
# functions, psi_n = the n-th derivative of lgamma' (psi_0 = digamma).
partials(math.lgamma, lgamma, x="d[y] * polygamma(0, x)")
partials(math.gamma, gamma, x="d[y] * y * polygamma(0, x)")
partials(polygamma, n=None, x="d[y] * polygamma(n + 1, x)")
partials(polygamma_of, x="d[y] * polygamma(n + 1, x)", n=None)  # as graphs call it

# Trigonometric and hyperbolic functions.

partials(np.sin, math.sin, x="d[y] * np.cos(x)")
partials(np.cos, math.cos, x="-d[y] * np.sin(x)")
partials(np.tan, math.tan, x="d[y] * (1.0 + y * y)")
partials(np.arcsin, math.asin, x="d[y] / np.sqrt(1.0 - x * x)")
partials(np.arccos, math.acos, x="-d[y] / np.sqrt(1.0 - x * x)")
partials(np.arctan, math.atan, x="d[y] / (1.0 + x * x)")
partials(np.sinh, math.sinh, x="d[y] * np.cosh(x)")
partials(np.cosh, math.cosh, x="d[y] * np.sinh(x)")
partials(np.tanh, math.tanh, x="d[y] * (1.0 - y * y)")
partials(np.arcsinh, math.asinh, x="d[y] / np.sqrt(x * x + 1.0)")
partials(np.arccosh, math.acosh, x="d[y] / np.sqrt(x * x - 1.0)")
partials(np.arctanh, math.atanh, x="d[y] / (1.0 - x * x)")
partials(np.sinc, x="d[y] * sinc_slope(x)")
partials(np.deg2rad, np.radians, math.radians, x="d[y] * (np.pi / 180.0)")
partials(np.rad2deg, np.degrees, math.degrees, x="d[y] * (180.0 / np.pi)")


# arctan2 and hypot: the tangent divides once, where the gradients' quotients are two.
@adjoint(np.arctan2, math.atan2)
def arctan2_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y] * x2 / (x1 * x1 + x2 * x2), x1)
    d[x2] = unbroadcast(-d[y] * x1 / (x1 * x1 + x2 * x2), x2)


@tangent(np.arctan2, math.atan2)
def arctan2_tangent(y, x1, x2):
    d[y] = (d[x1] * x2 - d[x2] * x1) / (x1 * x1 + x2 * x2)


@adjoint(np.hypot, math.hypot)
def hypot_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y] * x1 / y, x1)
    d[x2] = unbroadcast(d[y] * x2 / y, x2)


@tangent(np.hypot, math.hypot)
def hypot_tangent(y, x1, x2):
    d[y] = (d[x1] * x1 + d[x2] * x2) / y


other_calls(math.hypot, "autotrace differentiates math.hypot of two values, not of one or of "
                        "three or more: write math.hypot(math.hypot(a, b), c), or math.fabs(a) "
                        "for one")


# Piecewise functions.

partials(np.fabs, math.fabs, x="d[y] * real_sign(x)")


# The parts of complex values, as JAX differentiates them (runtime/derivatives/complex_parts.py):
# a gradient Re(g) (in z's complex dtype for np.real, as a complex value's gradient is from its
# first term on), as a real value's gradient may be complex; for real values, NumPy's real
# functions (np.real and np.conj of x are x, np.imag 0, the slope of |x| sign(x)).
@adjoint(np.real)
def real_rule(y, val):
    d[val] = real_gradient(d[y], val)


@tangent(np.real)
def real_tangent(y, val):
    d[y] = np.real(d[val])


@adjoint(np.imag)
def imag_rule(y, val):
    d[val] = imag_gradient(d[y], val)


@tangent(np.imag)
def imag_tangent(y, val):
    d[y] = imag_of(d[val], val)


@linear(np.conjugate)
def conjugate_rule(y, x):
    d[x] = np.conjugate(d[y])


@adjoint(np.absolute)
def absolute_rule(y, x):
    d[x] = np.real(d[y]) * abs_slope(x)


@tangent(np.absolute)
def absolute_tangent(y, x):
    d[y] = np.real(d[x] * abs_slope(x))
partials(np.maximum, np.minimum, np.fmax, np.fmin, x1="d[y] * tie_weights(y, x1, x2)",
         x2="d[y] * tie_weights(y, x2, x1)")


@adjoint(np.clip)
def clip_rule(y, a, a_min=None, a_max=None, *, min=None, max=None):
    lower = first_given(a_min, min)
    upper = first_given(a_max, max)
    d[a] = unbroadcast(d[y] * clip_weights(y, a, lower, upper, "a"), a)
    d[a_min] = unbroadcast(d[y] * clip_weights(y, a, lower, upper, "lower"), a_min)
    d[a_max] = unbroadcast(d[y] * clip_weights(y, a, lower, upper, "upper"), a_max)
    d[min] = unbroadcast(d[y] * clip_weights(y, a, lower, upper, "lower"), min)
    d[max] = unbroadcast(d[y] * clip_weights(y, a, lower, upper, "upper"), max)


@tangent(np.clip)
def clip_tangent(y, a, a_min=None, a_max=None, *, min=None, max=None):
    lower = first_given(a_min, min)
    upper = first_given(a_max, max)
    # A bound that is not given has the tangent None (or 0.0); `add` reads None as zero.
    lower_tangent = add(add(d[a_min], d[min]), 0.0)
    upper_tangent = add(add(d[a_max], d[max]), 0.0)
    d[y] = (d[a] * clip_weights(y, a, lower, upper, "a")
            + lower_tangent * clip_weights(y, a, lower, upper, "lower")
            + upper_tangent * clip_weights(y, a, lower, upper, "upper"))


@adjoint(np.where)
def where_rule(z, condition, x, y):
    d[x] = unbroadcast(np.where(condition, d[z], 0.0), x)
    d[y] = unbroadcast(np.where(condition, 0.0, d[z]), y)


@tangent(np.where)
def where_tangent(z, condition, x, y):
    d[z] = np.where(condition, d[x], d[y])


# A ufunc's operand under where= (runtime/primitives/out_writes.py): x where the mask is True,
# a constant where it is False; a Python number passed through as it is (kept_where knows).
@adjoint(masked_operand)
def masked_operand_rule(y, x, mask, safe):
    d[x] = unbroadcast(kept_where(d[y], x, mask), x)


@tangent(masked_operand)
def masked_operand_tangent(y, x, mask, safe):
    d[y] = kept_where(d[x], x, mask)


@linear(kept_where)
def kept_where_rule(y, value, x, mask):
    d[value] = unbroadcast(kept_where(d[y], x, mask), value)


@adjoint(np.nan_to_num)
def nan_to_num_rule(y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    # Where x is not finite, y is the value that replaces it: its gradient goes there.
    d[x] = unbroadcast(np.where(np.isfinite(x), d[y], 0.0), x)
    d[nan] = unbroadcast(np.where(np.isnan(x), d[y], 0.0), nan)
    d[posinf] = unbroadcast(np.where(np.isposinf(x), d[y], 0.0), posinf)
    d[neginf] = unbroadcast(np.where(np.isneginf(x), d[y], 0.0), neginf)


@tangent(np.nan_to_num)
def nan_to_num_tangent(y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    # `add` reads a tangent of None (a replacement not given: NumPy's largest float) as zero.
    d[y] = (np.where(np.isfinite(x), d[x], 0.0)
            + add(d[nan], 0.0) * as_weights(np.isnan(x), y)
            + add(d[posinf], 0.0) * as_weights(np.isposinf(x), y)
            + add(d[neginf], 0.0) * as_weights(np.isneginf(x), y))
