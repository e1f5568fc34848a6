"""Python ints that a traced loop or `if` carries: Python's operators on them, checked.

A Python int is unbounded; a traced loop or `if` carries one (`r *= i + 1`, `k -= 1`) as a weak
int64 (runtime/tracing/weak_scalars.py), the only int a graph has. Python's operators on such
ints and other Python ints are computed in int64 and checked when the graph runs: where the
int64 result differs from Python's (it wrapped around), the `python_int` op
(runtime/primitives/int_checks.py) raises OverflowError naming the user's line, in place of a
silently wrong value, or a loop that never ends (`while p < limit: p = p * 10` once `p`
wrapped).

Where such an int meets an array of a narrower integer dtype (int8, uint8, ...: `a_int8 + k`),
NumPy converts it to that dtype and raises OverflowError where it does not fit; `fitting_int`
(runtime/primitives/int_checks.py) checks that when the graph runs.

`**` of two Python ints follows Python's types: a negative power is a float (`2 ** -3` is
0.125), so `2 ** k` of a traced int `k` is a weak float, exact while the result is below 2**53
where `k` is not negative (beyond that it is refused when it runs, as Python's int result
would not be the float); a constant power that is not negative stays an int, checked.
"""
from __future__ import annotations

import numpy as np

from ..primitives.elementwise import apply_ufunc, astype, power
from ..primitives.registry import bind, is_traced
from ..user_frames import user_code_site

_INT64 = np.dtype(np.int64)
_SMALLEST = np.int64(np.iinfo(np.int64).min)


def _u(ufunc, *inputs):
    return apply_ufunc(ufunc, "__call__", *inputs)


def _site() -> str:
    site = user_code_site()
    return "<unknown>" if site is None else f'File "{site[0]}", line {site[1]}'


def _overflowed(ufunc, inputs, result):
    """Where the int64 `result` of `ufunc(*inputs)` differs from Python's; None where it
    never does (a comparison, a bitwise op)."""
    # Ops that every backend has (the array API's included: no bitwise ones). a + b lies on
    # b's side of a unless it wrapped around, a - b on the other side.
    if ufunc is np.add:
        a, b = inputs
        return _u(np.logical_xor, _u(np.less, result, a), _u(np.less, b, 0))
    if ufunc is np.subtract:
        a, b = inputs
        return _u(np.logical_xor, _u(np.less, result, a), _u(np.greater, b, 0))
    if ufunc is np.multiply:
        a, b = inputs
        trivial = _u(np.logical_or, _u(np.equal, a, 0), _u(np.equal, a, -1))
        divisor = np.where(trivial, np.int64(1), a)
        wrapped = _u(np.not_equal, _u(np.floor_divide, result, divisor), b)
        return _u(np.logical_or, _u(np.logical_and, _u(np.logical_not, trivial), wrapped),
                  _u(np.logical_and, _u(np.equal, a, -1), _u(np.equal, b, _SMALLEST)))
    if ufunc in (np.negative, np.absolute):
        return _u(np.equal, inputs[0], _SMALLEST)
    if ufunc is np.floor_divide:
        a, b = inputs
        return _u(np.logical_and, _u(np.equal, a, _SMALLEST), _u(np.equal, b, -1))
    if ufunc is np.left_shift:
        a, b = inputs
        shift = _u(np.minimum, _u(np.maximum, b, 0), 62)  # (result >> shift, floored)
        lost = _u(np.not_equal, _u(np.floor_divide, result, _u(np.power, 2, shift)), a)
        return _u(np.logical_and, _u(np.not_equal, a, 0),
                  _u(np.logical_or, lost, _u(np.greater, b, 62)))
    return None


def checked_int(ufunc, inputs, result):
    """The int64 `result` of Python's operator `ufunc` on Python ints (`inputs`, one traced at
    least), checked to be Python's when the graph runs; `result` as it is for other dtypes."""
    if not is_traced(result) or result.dtype != _INT64 or isinstance(result, tuple):
        return result
    operands = tuple(np.int64(value) if type(value) is int else value for value in inputs)
    overflowed = _overflowed(ufunc, operands, result)
    if overflowed is None:
        return result
    return bind("python_int", result, overflowed, site=_site())


def int_power(base, exponent):
    """`base ** exponent` of two Python ints, one traced at least (see the module's
    docstring); None where either is no int."""
    if not all(_is_int(value) for value in (base, exponent)):
        return None
    if not is_traced(exponent):
        if exponent < 0:
            return power(astype(base, np.float64), float(exponent))
        result = power(base, exponent)
        estimate = _u(np.power, astype(base, np.float64), float(exponent))
        return bind("python_int", result, _outside(estimate, 2.0 ** 63), site=_site())
    result = power(astype(base, np.float64) if is_traced(base) else float(base),
                   astype(exponent, np.float64))
    inexact = _u(np.logical_and, _u(np.greater_equal, exponent, 0),
                 _u(np.greater, _u(np.absolute, result), 2.0 ** 53))
    return bind("python_int", result, inexact, site=_site())


def _outside(estimate, bound: float):
    """Where the float `estimate` of an int is out of [-bound, bound)."""
    return _u(np.logical_or, _u(np.greater_equal, estimate, bound),
              _u(np.less, estimate, -bound))


def _is_int(value) -> bool:
    return type(value) is int or is_traced(value) and value.dtype == _INT64
