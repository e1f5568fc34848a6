"""Traced values that stand for Python numbers (a weak value, runtime/tracing/weak_scalars.py:
its `_weak`) given to an elementwise NumPy function that is no ufunc (np.where, np.clip).

NumPy 2 converts a Python number given to one to the dtype the arrays beside it give
(`np.where(x > 0, x, lr)` and `np.clip(x, -lr, lr)` are float32 for a float32 x and a Python
float lr); a graph value of the number's dtype (float64) would promote the result instead.
"""
from __future__ import annotations

import numpy as np

from .registry import bind

# Python's numbers' dtypes, and their types: the type of the Python number a weak value of
# each dtype stands for
WEAK_DTYPES = {np.dtype(np.int64): int, np.dtype(np.float64): float,
               np.dtype(np.complex128): complex}


def cast_weak_inputs(function, inputs: tuple) -> tuple:
    """`inputs` of the elementwise `function`, each weak value cast to the floating dtype
    NumPy converts the Python number it stands for to among the others (an integer dtype is
    left alone: NumPy checks the int fits it, which a cast would wrap instead)."""
    weak = [hasattr(type(value), "_weak") and value._weak and value.dtype in WEAK_DTYPES
            for value in inputs]
    if not any(weak):
        return inputs
    examples = [WEAK_DTYPES[value.dtype](0) if is_weak else _example(value)
                for value, is_weak in zip(inputs, weak)]
    with np.errstate(all="ignore"):
        dtype = np.asarray(function(*examples)).dtype
    if dtype.kind not in "fc":
        return inputs
    return tuple(bind("astype", value, dtype=dtype) if is_weak and value.dtype != dtype
                 else value for value, is_weak in zip(inputs, weak))


def _example(value):
    """A 0-d stand-in of a non-weak input's dtype (a literal as it is)."""
    if value is None or isinstance(value, (bool, int, float, complex)):
        return value
    return np.zeros((), np.asarray(value).dtype if not hasattr(value, "dtype")
                    else value.dtype)
