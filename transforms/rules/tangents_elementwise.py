"""Tangent rules of NumPy's elementwise functions (ufuncs and their friends).

An input's tangent is shaped like the input, so the terms of a binary rule broadcast to the
result's shape by themselves. Where a function is not differentiable the rules pick the adjoint
rules' subgradients (elementwise.py): abs gives 0 at 0; tied maximum/minimum arguments share the
tangent evenly; clip follows `a` inside its bounds (bounds included) and a bound where it binds.
The math module's functions of floats (math.sin, math.pow, math.atan2, ...) share the rules of
their NumPy twins.
"""
import math

import numpy as np

from autotrace.runtime.derivatives.adjoint_ops import (clip_weights, first_given, sinc_slope,
                                                       tie_weights)
from autotrace.runtime.derivatives.structure import add, zeros_like
from autotrace.transforms.rules.core import d, tangent

# Arithmetic.


@tangent(np.add)
def add_tangent(y, x1, x2):
    d[y] = d[x1] + d[x2]


@tangent(np.subtract)
def subtract_tangent(y, x1, x2):
    d[y] = d[x1] - d[x2]


@tangent(np.multiply)
def multiply_tangent(y, x1, x2):
    d[y] = d[x1] * x2 + x1 * d[x2]


@tangent(np.true_divide, np.divide)
def divide_tangent(y, x1, x2):
    d[y] = (d[x1] - d[x2] * y) / x2


@tangent(np.power, np.float_power, math.pow)
def power_tangent(y, x1, x2):
    # The exponent's term is taken as 0 where the base is not positive (as in the adjoint rule).
    d[y] = (d[x1] * x2 * x1 ** (x2 - 1)
            + d[x2] * y * np.log(np.where(np.greater(x1, 0), x1, 1.0)))


@tangent(np.negative)
def negative_tangent(y, x):
    d[y] = -d[x]


@tangent(np.positive)
def positive_tangent(y, x):
    d[y] = d[x]


@tangent(np.mod, np.remainder)
def mod_tangent(y, x1, x2):
    d[y] = d[x1] - d[x2] * np.floor_divide(x1, x2)


@tangent(np.floor_divide)
def floor_divide_tangent(y, x1, x2):
    d[y] = zeros_like(y)  # piecewise constant, as elementwise.py's rule


@tangent(np.fmod)
def fmod_tangent(y, x1, x2):
    d[y] = d[x1] - d[x2] * np.trunc(x1 / x2)


# Exponentials, logarithms, powers.


@tangent(np.exp, math.exp)
def exp_tangent(y, x):
    d[y] = d[x] * y


@tangent(np.exp2)
def exp2_tangent(y, x):
    d[y] = d[x] * y * np.log(2.0)


@tangent(np.expm1, math.expm1)
def expm1_tangent(y, x):
    d[y] = d[x] * (y + 1.0)


@tangent(np.log, math.log)
def log_tangent(y, x):
    d[y] = d[x] / x


@tangent(np.log2, math.log2)
def log2_tangent(y, x):
    d[y] = d[x] / (x * np.log(2.0))


@tangent(np.log10, math.log10)
def log10_tangent(y, x):
    d[y] = d[x] / (x * np.log(10.0))


@tangent(np.log1p, math.log1p)
def log1p_tangent(y, x):
    d[y] = d[x] / (x + 1.0)


@tangent(np.sqrt, math.sqrt)
def sqrt_tangent(y, x):
    d[y] = d[x] * 0.5 / y


@tangent(np.cbrt)
def cbrt_tangent(y, x):
    d[y] = d[x] / (3.0 * y * y)


@tangent(np.square)
def square_tangent(y, x):
    d[y] = d[x] * 2.0 * x


@tangent(np.reciprocal)
def reciprocal_tangent(y, x):
    d[y] = -d[x] * y * y


@tangent(np.logaddexp)
def logaddexp_tangent(y, x1, x2):
    d[y] = d[x1] * np.exp(x1 - y) + d[x2] * np.exp(x2 - y)


@tangent(np.logaddexp2)
def logaddexp2_tangent(y, x1, x2):
    d[y] = d[x1] * np.exp2(x1 - y) + d[x2] * np.exp2(x2 - y)


# Trigonometric and hyperbolic functions.


@tangent(np.sin, math.sin)
def sin_tangent(y, x):
    d[y] = d[x] * np.cos(x)


@tangent(np.cos, math.cos)
def cos_tangent(y, x):
    d[y] = -d[x] * np.sin(x)


@tangent(np.tan, math.tan)
def tan_tangent(y, x):
    d[y] = d[x] * (1.0 + y * y)


@tangent(np.arcsin, math.asin)
def arcsin_tangent(y, x):
    d[y] = d[x] / np.sqrt(1.0 - x * x)


@tangent(np.arccos, math.acos)
def arccos_tangent(y, x):
    d[y] = -d[x] / np.sqrt(1.0 - x * x)


@tangent(np.arctan, math.atan)
def arctan_tangent(y, x):
    d[y] = d[x] / (1.0 + x * x)


@tangent(np.arctan2, math.atan2)
def arctan2_tangent(y, x1, x2):
    d[y] = (d[x1] * x2 - d[x2] * x1) / (x1 * x1 + x2 * x2)


@tangent(np.hypot, math.hypot)
def hypot_tangent(y, x1, x2):
    d[y] = (d[x1] * x1 + d[x2] * x2) / y


@tangent(np.sinh, math.sinh)
def sinh_tangent(y, x):
    d[y] = d[x] * np.cosh(x)


@tangent(np.cosh, math.cosh)
def cosh_tangent(y, x):
    d[y] = d[x] * np.sinh(x)


@tangent(np.tanh, math.tanh)
def tanh_tangent(y, x):
    d[y] = d[x] * (1.0 - y * y)


@tangent(np.arcsinh, math.asinh)
def arcsinh_tangent(y, x):
    d[y] = d[x] / np.sqrt(x * x + 1.0)


@tangent(np.arccosh, math.acosh)
def arccosh_tangent(y, x):
    d[y] = d[x] / np.sqrt(x * x - 1.0)


@tangent(np.arctanh, math.atanh)
def arctanh_tangent(y, x):
    d[y] = d[x] / (1.0 - x * x)


@tangent(np.sinc)
def sinc_tangent(y, x):
    d[y] = d[x] * sinc_slope(x)


@tangent(np.deg2rad, np.radians, math.radians)
def deg2rad_tangent(y, x):
    d[y] = d[x] * (np.pi / 180.0)


@tangent(np.rad2deg, np.degrees, math.degrees)
def rad2deg_tangent(y, x):
    d[y] = d[x] * (180.0 / np.pi)


# Piecewise functions.


@tangent(np.absolute, np.fabs, math.fabs)
def abs_tangent(y, x):
    d[y] = d[x] * np.sign(x)


@tangent(np.maximum, np.minimum, np.fmax, np.fmin)
def maximum_tangent(y, x1, x2):
    d[y] = d[x1] * tie_weights(y, x1, x2) + d[x2] * tie_weights(y, x2, x1)


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


@tangent(np.where)
def where_tangent(z, condition, x, y):
    d[z] = np.where(condition, d[x], d[y])


@tangent(np.nan_to_num)
def nan_to_num_tangent(y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    # Where x is not finite, y is the value that replaces it; `add` reads a tangent of None
    # (a replacement not given: NumPy's largest float) as zero.
    d[y] = (np.where(np.isfinite(x), d[x], 0.0) + add(d[nan], 0.0) * np.isnan(x)
            + add(d[posinf], 0.0) * np.isposinf(x) + add(d[neginf], 0.0) * np.isneginf(x))
