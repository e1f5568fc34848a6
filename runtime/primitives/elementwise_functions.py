"""NumPy's elementwise functions that are no ufuncs (np.round, np.isclose, np.nan_to_num,
np.real, ...), each a primitive registered by `define_function`, its dtype by example.

A traced value that stands for a Python number (weak_inputs.py) meets the arrays beside it as
the number does in NumPy's function: np.isclose(x_f32, tol) compares in float32; np.imag of
one is a Python number again, as `(0.5).imag` is, and np.isreal of a real one Python's True.
"""
from __future__ import annotations

import numpy as np

from .batching import elementwise_batching
from .elementwise import elementwise_rule
from .registry import (UntraceableError, bind, define_function, reject_arguments, static,
                       traces)
from .weak_inputs import cast_weak_inputs, is_weak_value, weak_result


@traces(np.round, np.around)
def bind_round(a, decimals=0, out=None):
    reject_arguments("numpy.round", out=out)
    return bind("round", a, decimals=static(decimals, "the decimals of numpy.round"))


for _function in (np.round, np.real, np.imag, np.angle, np.nan_to_num, np.isclose, np.sinc,
                  np.isreal, np.iscomplex):
    define_function(_function.__name__, _function, abstract_eval=elementwise_rule(_function),
                    fresh=_function not in (np.real, np.imag),
                    array_api=_function.__name__ if _function in (np.real, np.imag) else None,
                    batching=elementwise_batching)


def _real_view(view, val):
    """The real part of a complex array is a view (of a real one, NumPy gives the array)."""
    if np.issubdtype(val.dtype, np.complexfloating):
        return (lambda base, value: np.astype(value + 1j * np.imag(base), base.dtype)), True, ""
    return None


def _imag_view(view, val):
    """The imaginary part of a complex array is a view; of a real one, read-only zeros."""
    if np.issubdtype(val.dtype, np.complexfloating):
        return (lambda base, value: np.astype(np.real(base) + 1j * value, base.dtype)), True, ""
    return None, True, ""


traces(np.real, view=_real_view)(lambda x: bind("real", x))
traces(np.imag, view=_imag_view)(lambda x: weak_result(x, bind("imag", x)))
for _function in (np.iscomplex, np.sinc):
    traces(_function)(lambda x, _name=_function.__name__: bind(_name, x))


@traces(np.isreal)
def bind_isreal(x):
    # (NumPy's `imag(x) == 0` of a Python int or float is Python's `0 == 0`)
    return True if is_weak_value(x) and x.dtype.kind != "c" else bind("isreal", x)


@traces(np.angle)
def bind_angle(z, deg=False):
    return bind("angle", z, deg=bool(static(deg, "deg of numpy.angle")))


@traces(np.nan_to_num)
def bind_nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    if not copy:
        raise UntraceableError(
            "autotrace cannot trace numpy.nan_to_num with copy=False, which writes into its "
            "argument in place; assign the result instead: x = np.nan_to_num(x)")
    return bind("nan_to_num", x, nan=static(nan, "nan"), posinf=static(posinf, "posinf"),
                neginf=static(neginf, "neginf"))


@traces(np.isclose)
def bind_isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    # NumPy compares in y's dtype made inexact, a Python number beside it weak
    a, b = cast_weak_inputs(lambda x, y: np.result_type(x, y, 1.0), (a, b))
    return bind("isclose", a, b, rtol=static(rtol, "rtol"), atol=static(atol, "atol"),
                equal_nan=bool(equal_nan))
