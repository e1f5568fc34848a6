"""Adjoint rules of NumPy's elementwise functions (ufuncs and their friends).

A unary rule keeps the input's shape. A binary rule undoes broadcasting with `unbroadcast`, which
also gives integer arguments a zero gradient. Where a function is not differentiable the rules
pick a subgradient: abs gives 0 at 0; maximum/minimum (and fmax/fmin) split the gradient evenly
between tied arguments; clip gives the gradient to `a` where it lies inside the bounds, bounds
included.
The math module's functions of floats (math.sin, math.pow, math.atan2, ...) share the rules of
their NumPy twins.
"""
import math

import numpy as np

from autotrace.runtime.derivatives.adjoint_ops import (clip_weights, first_given, sinc_slope,
                                                       tie_weights, unbroadcast)
from autotrace.runtime.derivatives.structure import zeros_like
from autotrace.transforms.rules.core import adjoint, d

# Arithmetic: what the operators +, -, *, /, **, unary - and + mean.


@adjoint(np.add)
def add_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y], x1)
    d[x2] = unbroadcast(d[y], x2)


@adjoint(np.subtract)
def subtract_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y], x1)
    d[x2] = unbroadcast(-d[y], x2)


@adjoint(np.multiply)
def multiply_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y] * x2, x1)
    d[x2] = unbroadcast(d[y] * x1, x2)


@adjoint(np.true_divide, np.divide)
def divide_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y] / x2, x1)
    d[x2] = unbroadcast(-d[y] * y / x2, x2)


@adjoint(np.power, np.float_power, math.pow)
def power_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y] * x2 * x1 ** (x2 - 1), x1)
    # The exponent's gradient is taken as 0 where the base is not positive.
    d[x2] = unbroadcast(d[y] * y * np.log(np.where(np.greater(x1, 0), x1, 1.0)), x2)


@adjoint(np.negative)
def negative_rule(y, x):
    d[x] = -d[y]


@adjoint(np.positive)
def positive_rule(y, x):
    d[x] = d[y]


@adjoint(np.mod, np.remainder)
def mod_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y], x1)
    d[x2] = unbroadcast(-d[y] * np.floor_divide(x1, x2), x2)


@adjoint(np.floor_divide)
def floor_divide_rule(y, x1, x2):
    # Piecewise constant: zero almost everywhere. A call of it is a constant, and so is `a // b`
    # (transforms/activity.py); this rule serves `x = x // b` where x carries gradient.
    d[x1] = zeros_like(x1)
    d[x2] = zeros_like(x2)


@adjoint(np.fmod)
def fmod_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y], x1)
    d[x2] = unbroadcast(-d[y] * np.trunc(x1 / x2), x2)


# Exponentials, logarithms, powers.


@adjoint(np.exp, math.exp)
def exp_rule(y, x):
    d[x] = d[y] * y


@adjoint(np.exp2)
def exp2_rule(y, x):
    d[x] = d[y] * y * np.log(2.0)


@adjoint(np.expm1, math.expm1)
def expm1_rule(y, x):
    d[x] = d[y] * (y + 1.0)


@adjoint(np.log, math.log)
def log_rule(y, x):
    d[x] = d[y] / x


@adjoint(np.log2, math.log2)
def log2_rule(y, x):
    d[x] = d[y] / (x * np.log(2.0))


@adjoint(np.log10, math.log10)
def log10_rule(y, x):
    d[x] = d[y] / (x * np.log(10.0))


@adjoint(np.log1p, math.log1p)
def log1p_rule(y, x):
    d[x] = d[y] / (x + 1.0)


@adjoint(np.sqrt, math.sqrt)
def sqrt_rule(y, x):
    d[x] = d[y] * 0.5 / y


@adjoint(np.cbrt)
def cbrt_rule(y, x):
    d[x] = d[y] / (3.0 * y * y)


@adjoint(np.square)
def square_rule(y, x):
    d[x] = d[y] * 2.0 * x


@adjoint(np.reciprocal)
def reciprocal_rule(y, x):
    d[x] = -d[y] * y * y


@adjoint(np.logaddexp)
def logaddexp_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y] * np.exp(x1 - y), x1)
    d[x2] = unbroadcast(d[y] * np.exp(x2 - y), x2)


@adjoint(np.logaddexp2)
def logaddexp2_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y] * np.exp2(x1 - y), x1)
    d[x2] = unbroadcast(d[y] * np.exp2(x2 - y), x2)


# Trigonometric and hyperbolic functions.


@adjoint(np.sin, math.sin)
def sin_rule(y, x):
    d[x] = d[y] * np.cos(x)


@adjoint(np.cos, math.cos)
def cos_rule(y, x):
    d[x] = -d[y] * np.sin(x)


@adjoint(np.tan, math.tan)
def tan_rule(y, x):
    d[x] = d[y] * (1.0 + y * y)


@adjoint(np.arcsin, math.asin)
def arcsin_rule(y, x):
    d[x] = d[y] / np.sqrt(1.0 - x * x)


@adjoint(np.arccos, math.acos)
def arccos_rule(y, x):
    d[x] = -d[y] / np.sqrt(1.0 - x * x)


@adjoint(np.arctan, math.atan)
def arctan_rule(y, x):
    d[x] = d[y] / (1.0 + x * x)


@adjoint(np.arctan2, math.atan2)
def arctan2_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y] * x2 / (x1 * x1 + x2 * x2), x1)
    d[x2] = unbroadcast(-d[y] * x1 / (x1 * x1 + x2 * x2), x2)


@adjoint(np.hypot, math.hypot)
def hypot_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y] * x1 / y, x1)
    d[x2] = unbroadcast(d[y] * x2 / y, x2)


@adjoint(np.sinh, math.sinh)
def sinh_rule(y, x):
    d[x] = d[y] * np.cosh(x)


@adjoint(np.cosh, math.cosh)
def cosh_rule(y, x):
    d[x] = d[y] * np.sinh(x)


@adjoint(np.tanh, math.tanh)
def tanh_rule(y, x):
    d[x] = d[y] * (1.0 - y * y)


@adjoint(np.arcsinh, math.asinh)
def arcsinh_rule(y, x):
    d[x] = d[y] / np.sqrt(x * x + 1.0)


@adjoint(np.arccosh, math.acosh)
def arccosh_rule(y, x):
    d[x] = d[y] / np.sqrt(x * x - 1.0)


@adjoint(np.arctanh, math.atanh)
def arctanh_rule(y, x):
    d[x] = d[y] / (1.0 - x * x)


@adjoint(np.sinc)
def sinc_rule(y, x):
    d[x] = d[y] * sinc_slope(x)


@adjoint(np.deg2rad, np.radians, math.radians)
def deg2rad_rule(y, x):
    d[x] = d[y] * (np.pi / 180.0)


@adjoint(np.rad2deg, np.degrees, math.degrees)
def rad2deg_rule(y, x):
    d[x] = d[y] * (180.0 / np.pi)


# Piecewise functions.


@adjoint(np.absolute, np.abs, np.fabs, math.fabs)
def abs_rule(y, x):
    d[x] = d[y] * np.sign(x)


@adjoint(np.maximum, np.minimum, np.fmax, np.fmin)
def maximum_rule(y, x1, x2):
    d[x1] = unbroadcast(d[y] * tie_weights(y, x1, x2), x1)
    d[x2] = unbroadcast(d[y] * tie_weights(y, x2, x1), x2)


@adjoint(np.clip)
def clip_rule(y, a, a_min=None, a_max=None, *, min=None, max=None):
    lower = first_given(a_min, min)
    upper = first_given(a_max, max)
    d[a] = unbroadcast(d[y] * clip_weights(y, a, lower, upper, "a"), a)
    d[a_min] = unbroadcast(d[y] * clip_weights(y, a, lower, upper, "lower"), a_min)
    d[a_max] = unbroadcast(d[y] * clip_weights(y, a, lower, upper, "upper"), a_max)
    d[min] = unbroadcast(d[y] * clip_weights(y, a, lower, upper, "lower"), min)
    d[max] = unbroadcast(d[y] * clip_weights(y, a, lower, upper, "upper"), max)


@adjoint(np.where)
def where_rule(z, condition, x, y):
    d[x] = unbroadcast(np.where(condition, d[z], 0.0), x)
    d[y] = unbroadcast(np.where(condition, 0.0, d[z]), y)


@adjoint(np.nan_to_num)
def nan_to_num_rule(y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    # Where x is not finite, y is the value that replaces it: its gradient goes there.
    d[x] = unbroadcast(np.where(np.isfinite(x), d[y], 0.0), x)
    d[nan] = unbroadcast(np.where(np.isnan(x), d[y], 0.0), nan)
    d[posinf] = unbroadcast(np.where(np.isposinf(x), d[y], 0.0), posinf)
    d[neginf] = unbroadcast(np.where(np.isneginf(x), d[y], 0.0), neginf)
