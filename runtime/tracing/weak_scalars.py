"""Weak scalars: traced values that stand for Python numbers, and meet arrays as those do.

A traced loop or `if` carries a Python number that its body leaves a Python number (`lr *=
0.9`) as a 0-d value of Python's dtype (int64, float64, complex128), marked weak (`make_weak`):
as the number itself would, it takes the dtype of the arrays it meets in a ufunc (`lr * g` is
float32 for a float32 g, as eager NumPy 2 computes it), and Python's arithmetic on it with other
Python numbers (`lr * 0.9`, `-lr`) leaves it weak. A NumPy function of it alone (np.sqrt(lr))
gives a NumPy scalar, which is not weak, as NumPy's is not. runtime/tracing/control_weak.py
says where loops and branches make them; the Tracer's operators (runtime/tracing/tracer.py)
compute through `weak_ufunc` and `weak_power`.
"""
from __future__ import annotations

import numpy as np

from ..primitives.elementwise import apply_ufunc, astype, power
from ..primitives.registry import is_traced
from ..python_operators import BINARY_OPERATORS, UNARY_OPERATORS

WEAK_NUMBERS = (int, float, complex)  # not bool: flags of generated code stay Python bools
# Python's numbers' dtypes, and their types
WEAK_DTYPES = {np.dtype(np.int64): int, np.dtype(np.float64): float,
               np.dtype(np.complex128): complex}
# The ufuncs of Python's arithmetic operators: on Python numbers alone they give a Python
# number (weak); comparisons give a bool, which is never weak.
_PYTHON_ARITHMETIC = frozenset(ufunc for _, ufunc in BINARY_OPERATORS + UNARY_OPERATORS
                               if ufunc is not np.matmul)


# Comparisons of an integer array with a Python int: NumPy 2 compares the number as it is,
# also one out of the array's range (`a_uint8 > -1`), so a weak int is not cast for them.
_COMPARISONS = frozenset({np.equal, np.not_equal, np.less, np.less_equal, np.greater,
                          np.greater_equal})


def make_weak(value):
    """Mark the 0-d traced `value` of a Python number's dtype weak; returns it."""
    if hasattr(type(value), "_weak") and value.shape == () and value.dtype in WEAK_DTYPES:
        value._weak = True
    return value


def is_weak(value) -> bool:
    """A Python number (not a bool) or a traced value that stands for one."""
    return type(value) in WEAK_NUMBERS or _traced_weak(value)



def _traced_weak(value) -> bool:
    # a Tracer has the slot (asked of its type: a placeholder for an unassigned variable
    # raises on any attribute)
    return hasattr(type(value), "_weak") and value._weak


def weak_ufunc(ufunc, *inputs):
    """`ufunc(*inputs)` where an input may be a weak traced value, with the result NumPy 2's
    for the Python number it stands for: a weak value that meets other arrays is cast first to
    the dtype NumPy would convert the number to (float32 beside a float32 array, int8 beside
    an int8 array, which wraps around as NumPy's arithmetic does; a number out of the integer
    dtype's range, which NumPy refuses with OverflowError when it converts it, is not checked
    in the graph; a comparison compares the number as it is). The result of Python's
    operators on weak values and Python numbers alone is weak again."""
    if not any(_traced_weak(value) for value in inputs):
        return apply_ufunc(ufunc, "__call__", *inputs)
    if all(is_weak(value) for value in inputs):
        result = apply_ufunc(ufunc, "__call__", *inputs)
        return make_weak(result) if ufunc in _PYTHON_ARITHMETIC else result
    return apply_ufunc(ufunc, "__call__", *_cast_weak(ufunc, inputs))


def weak_power(base, exponent):
    """`base ** exponent` (primitives/elementwise.py `power`) where either may be weak."""
    if not (_traced_weak(base) or _traced_weak(exponent)):
        return power(base, exponent)
    if is_weak(base) and is_weak(exponent):
        return make_weak(power(base, exponent))
    return power(*_cast_weak(np.power, (base, exponent)))


def _cast_weak(ufunc, inputs) -> tuple:
    """`inputs` with each weak traced value cast to the dtype the ufunc would convert the
    Python number it stands for to, among the others."""
    def described(value):  # as ufunc.resolve_dtypes takes it: a Python type for a weak one
        if _traced_weak(value):
            return WEAK_DTYPES[value.dtype]
        if type(value) in WEAK_NUMBERS:
            return type(value)
        return value.dtype if is_traced(value) else np.result_type(value)
    try:
        resolved = ufunc.resolve_dtypes(tuple(described(value) for value in inputs)
                                        + (None,) * ufunc.nout)
    except (TypeError, ValueError):  # no loop for them: the ufunc's own error, as NumPy's
        return inputs
    kinds = "fc" if ufunc in _COMPARISONS else "fciu"  # (NumPy compares the number itself)
    return tuple(astype(value, dtype) if _traced_weak(value) and dtype != value.dtype
                 and dtype.kind in kinds else value for value, dtype in zip(inputs, resolved))
