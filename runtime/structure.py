"""Gradients shaped like their values: zeros, ones and sums over nested containers.

A gradient has the structure of what it is the gradient of: an array gets an array of the same
shape, a Python float a float, a tuple/list/dict/namedtuple the same container of gradients.
Integer and boolean values carry no gradient; their gradient is a zero of float type.
"""
from __future__ import annotations

import numbers

import numpy as np


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _rebuild(value, items):
    """A container of the same kind as `value` holding `items`."""
    if _is_namedtuple(value):
        return type(value)(*items)
    return type(value)(items)


def _float_dtype(dtype):
    return dtype if np.issubdtype(dtype, np.inexact) else np.float64


def zeros_like(value):
    """The zero gradient of `value`, with its structure."""
    if isinstance(value, (tuple, list)):
        return _rebuild(value, [zeros_like(v) for v in value])
    if isinstance(value, dict):
        return type(value)((k, zeros_like(v)) for k, v in value.items())
    if isinstance(value, (bool, numbers.Integral)) and not hasattr(value, "dtype"):
        return 0.0
    if isinstance(value, float):
        return 0.0
    if isinstance(value, complex):
        return 0j
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        if isinstance(value, np.generic):
            return np.dtype(_float_dtype(value.dtype)).type(0)
        return array_module(value).zeros(value.shape, dtype=_float_dtype(value.dtype))
    if value is None or isinstance(value, str):
        return None
    raise TypeError(f"cannot make a gradient for a value of type {type(value).__name__}")


def ones_like(value):
    """Ones with the structure of `value`: the default seed for a function's output."""
    if isinstance(value, (tuple, list)):
        return _rebuild(value, [ones_like(v) for v in value])
    if isinstance(value, dict):
        return type(value)((k, ones_like(v)) for k, v in value.items())
    if isinstance(value, (bool, numbers.Integral, float)) and not hasattr(value, "dtype"):
        return 1.0
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        if isinstance(value, np.generic):
            return np.dtype(_float_dtype(value.dtype)).type(1)
        return array_module(value).ones(value.shape, dtype=_float_dtype(value.dtype))
    raise TypeError(f"cannot make a seed gradient for a value of type {type(value).__name__}")


def add(a, b):
    """The sum of two gradients of the same value (containers are summed element by element)."""
    if isinstance(a, (tuple, list)):
        return _rebuild(a, [add(x, y) for x, y in zip(a, b)])
    if isinstance(a, dict):
        return type(a)((k, add(v, b[k])) for k, v in a.items())
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def seed(value, dy):
    """The gradient that starts the adjoint sweep: `dy` if given, else ones like `value`."""
    return ones_like(value) if dy is None else dy


def match(gradient, value):
    """`gradient` in the form of `value`: a float for a Python float, a 0-d result for a scalar.

    Arithmetic on a Python float argument often yields a NumPy scalar or a 0-d array; users
    expect the gradient of a float to be a float.
    """
    if isinstance(value, float) and not hasattr(value, "dtype"):
        return float(gradient)
    if isinstance(value, (tuple, list)):
        return _rebuild(value, [match(g, v) for g, v in zip(gradient, value)])
    if isinstance(value, dict):
        return type(value)((k, match(gradient[k], v)) for k, v in value.items())
    if isinstance(value, np.ndarray) and not isinstance(gradient, np.ndarray):
        return np.asarray(gradient, dtype=_float_dtype(value.dtype)).reshape(value.shape)
    return gradient


def array_module(value):
    """numpy, or cupy for a CuPy array."""
    module = type(value).__module__
    if module.startswith("cupy"):
        import cupy
        return cupy
    return np
