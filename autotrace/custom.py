"""Gradients the user writes: custom_gradient and stop_gradient."""
from __future__ import annotations

import functools
from typing import Callable

from autotrace.transforms.analysis.calls import CustomGradient
from autotrace.transforms.rules.core import constant

__all__ = ["custom_gradient", "stop_gradient"]


def custom_gradient(f: Callable) -> CustomGradient:
    """Give `f` a gradient of your own.

    The decorated function returns `(value, grad_fn)`; `grad_fn(dy)` returns the gradient of
    each argument (one value for one argument, a tuple for several) given `dy`, the gradient of
    the value. grad_fn may use values computed by f. Called directly, the decorated function
    returns the value alone; under `grad` the gradient comes from grad_fn.

    Example:
        >>> @custom_gradient
        ... def log1pexp(x):
        ...     e = np.exp(x)
        ...     def grad_fn(dy):
        ...         return dy * (1 - 1 / (1 + e))
        ...     return np.log(1 + e), grad_fn
        >>> grad(lambda x: log1pexp(x))(100.0)
        1.0
    """
    wrapper = CustomGradient(f)
    functools.update_wrapper(wrapper, f)
    return wrapper


def stop_gradient(x):
    """`x` itself, through which no gradient (or tangent) flows."""
    return x


constant(stop_gradient)
