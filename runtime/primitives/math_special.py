"""The math module's special functions that NumPy has no twin of, as elementwise ops: `erfc`,
`gamma` and `lgamma`, and `polygamma`, the derivatives of lgamma (scipy's
polygamma(n, x); scipy is not a dependency).

erfc, gamma and lgamma are math's own, called on each element's Python float, so a traced
math.lgamma(x) gives the float math gives (runtime/tracing/math_functions.py makes each the twin
of its math function). Where math raises instead of answering, the op gives what the C library
gives: lgamma is inf at its poles, gamma inf (with the sign of zero) at 0 and nan at the
negative integers, both inf where they overflow.

polygamma(n, x), the n-th derivative of digamma = lgamma', is computed on whole arrays (of
NumPy, CuPy or another array-API library, on their device): below
1/2 by the reflection formula

    psi_n(x) = (-1)^n psi_n(1 - x) - pi^(n+1) P_n(cot(pi x)),   P_0(c) = c,
    P_(k+1)(c) = -(1 + c^2) P_k'(c)

(P_n(cot(pi x)) pi^n is the n-th derivative of cot(pi x)); above, by the recurrence
psi_n(x) = psi_n(x + 1) - (-1)^n n! / x^(n+1) up to x >= 10 + 2n, then the asymptotic series
with the Bernoulli numbers up to B_20. It agrees with scipy's to 1e-15 relative for x > 0,
1e-13 for x < 0 (where the reflection cancels near psi_n's zeros); nan at the poles (0, -1,
-2, ...). Its derivative is polygamma(n + 1, x): the rules of these
ops are closed, to any order (transforms/rules/elementwise.py).
"""
from __future__ import annotations

import math

import numpy as np

from ..abstract import AbstractArray
from ..array_api import numpy_dtype
from ..devices import array_module, is_gpu_array, to_numpy
from .batching import elementwise_batching
from .registry import bind, define_runtime_function

# B_2, B_4, ..., B_20
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330)


def _float_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype.kind == "c":  # (math's functions, and these series, are of real numbers)
        raise TypeError("autotrace's erfc, gamma, lgamma and polygamma take real values, not "
                        "complex ones")
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def _shape(x, n=None):
    if not isinstance(x, AbstractArray):
        return AbstractArray((), np.dtype(np.float64))
    return AbstractArray(x.shape, _float_dtype(x.dtype), x.device)


def _on_host(function):
    """`function` of a float64 NumPy array, applied to `x` of any array module (copied to the
    host and back where it is CuPy's or another array-API library's), in x's float dtype; a
    NumPy scalar for a 0-d x."""
    def impl(x):
        xp = array_module(x)
        values = np.asarray(x) if xp is np else to_numpy(x) if is_gpu_array(x) else \
            np.from_dlpack(x)
        dtype = _float_dtype(values.dtype)
        result = function(values.astype(np.float64)).astype(dtype, copy=False)
        return result[()] if xp is np else xp.asarray(result)
    return impl


def _each(function, otherwise):
    """math's `function` on each element; `otherwise(value)` where math raises."""
    def call(value: float) -> float:
        try:
            return function(value)
        except (ValueError, OverflowError):
            return otherwise(value)

    def on_array(values):
        results = [call(value) for value in values.ravel().tolist()]
        return np.array(results, dtype=np.float64).reshape(values.shape)
    return on_array


def _gamma_otherwise(value: float) -> float:
    """C's tgamma where math.gamma raises: +-inf at +-0 and where it overflows, nan at the
    negative integers and -inf."""
    if value == 0.0:
        return math.copysign(math.inf, value)
    return math.inf if value > 0 else math.nan


# --- polygamma ---------------------------------------------------------------------------------

def _cot_derivative_polynomials(n: int) -> list:
    """The coefficients (lowest power first) of P_0, ..., P_n, with pi^k P_k(cot(pi x)) the
    k-th derivative of cot(pi x)."""
    polynomials = [[0.0, 1.0]]
    for _ in range(n):
        previous = polynomials[-1]
        slope = [k * previous[k] for k in range(1, len(previous))]
        # -(1 + c^2) P'(c)
        nxt = [0.0] * (len(slope) + 2)
        for k, coefficient in enumerate(slope):
            nxt[k] -= coefficient
            nxt[k + 2] -= coefficient
        polynomials.append(nxt)
    return polynomials


def _asymptotic(xp, y, n: int):
    """psi_n(y) for y >= 10 + 2n by its asymptotic series."""
    inverse = 1.0 / y
    square = inverse * inverse
    if n == 0:
        total = xp.log(y) - 0.5 * inverse
        power = square
        for k, bernoulli in enumerate(_BERNOULLI, start=1):
            total = total - bernoulli / (2 * k) * power
            power = power * square
        return total
    power = inverse ** n
    total = math.factorial(n - 1) * power + math.factorial(n) / 2.0 * power * inverse
    power = power * square
    for k, bernoulli in enumerate(_BERNOULLI, start=1):
        total = total + bernoulli * math.factorial(2 * k + n - 1) / math.factorial(2 * k) * power
        power = power * square
    return total if n % 2 == 1 else -total


def _polygamma_above_half(xp, x, n: int):
    """psi_n(x) for x >= 1/2 (and inf, nan)."""
    threshold = 10.0 + 2 * n
    shifted, correction = x, xp.zeros_like(x)
    sign = -1.0 if n % 2 == 0 else 1.0  # psi_n(x) = psi_n(x + 1) + sign n! / x^(n+1)
    for _ in range(int(threshold) + 1):
        below = shifted < threshold
        if not bool(xp.any(below)):
            break
        term = math.factorial(n) / xp.where(below, shifted, 1.0) ** (n + 1)
        correction = correction + xp.where(below, sign * term, 0.0)
        shifted = xp.where(below, shifted + 1.0, shifted)
    return _asymptotic(xp, shifted, n) + correction


def _polygamma(x, n: int):
    """psi_n of each element, on x's array module (NumPy, CuPy or an array-API library's)."""
    xp = array_module(x)
    dtype = _float_dtype(numpy_dtype(x.dtype) if hasattr(x, "dtype") else np.float64)
    x = xp.astype(xp.asarray(x), xp.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        reflected = x < 0.5
        above = _polygamma_above_half(xp, xp.where(reflected, 1.0 - x, x), n)
        # cot(pi x) of x's distance to the nearest integer (cot has period 1), exactly
        cot = 1.0 / xp.tan(math.pi * (x - xp.floor(x + 0.5)))
        polynomial = xp.zeros_like(x)
        for coefficient in _cot_derivative_polynomials(n)[n][::-1]:  # Horner's rule
            polynomial = polynomial * cot + coefficient
        below = (-1.0) ** n * above - math.pi ** (n + 1) * polynomial
        result = xp.where(reflected, below, above)
        result = xp.where((x <= 0) & (x == xp.floor(x)), math.nan, result)  # the poles
    if xp is not np:
        return xp.astype(result, xp.dtype(dtype))
    return result.astype(dtype, copy=False)[()]  # a NumPy scalar for a 0-d x


def polygamma(n: int, x):
    """The n-th derivative of digamma, the derivative of lgamma, elementwise.

    Arguments:
        n: the order, an int 0 or more (0: digamma).
        x: an array or a number, real.

    Returns:
        An array of x's shape, floating point (float64 for integer x); nan at the poles
        0, -1, -2, ...

    Examples:
        >>> round(float(polygamma(0, 1.0)), 12)  # -Euler's gamma
        -0.577215664902
        >>> round(float(polygamma(1, 1.0)), 12)  # pi^2 / 6
        1.644934066848
    """
    return polygamma_of(x, n)


def polygamma_of(x, n: int):
    """polygamma(n, x), its arguments in the order graphs call the op in (`polygamma(x, n=0)`),
    so that a derivative built from a graph finds its rules."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"polygamma's order n is an int, 0 or more, not {n!r}")
    return bind("polygamma", x, n=n)


def erfc(x):
    """math.erfc of each element: 1 - erf(x), without the cancellation for large x."""
    return bind("erfc", x)


def gamma(x):
    """math.gamma of each element (C's tgamma where math raises)."""
    return bind("gamma", x)


def lgamma(x):
    """math.lgamma of each element: log |gamma(x)|, inf at the poles."""
    return bind("lgamma", x)


# Exact to math's function on float64 numbers, so a graph of float64 scalars runs each as that
# call on the float (runtime/passes/floats.py); math raising hands over to the op.
# Graphs call each op by the function above that binds it, which its rules are for.
for _name, _function, _otherwise, _dispatcher in (
        ("erfc", math.erfc, None, erfc), ("gamma", math.gamma, _gamma_otherwise, gamma),
        ("lgamma", math.lgamma, lambda value: math.inf, lgamma)):
    define_runtime_function(_name, _on_host(_each(_function, _otherwise)), _shape,
                            fresh=True, dispatcher=_dispatcher, math=_function,
                            python_float=f"math.{_name}({{0}})", batching=elementwise_batching)
define_runtime_function("polygamma", _polygamma, _shape, fresh=True, dispatcher=polygamma_of,
                        batching=elementwise_batching)
