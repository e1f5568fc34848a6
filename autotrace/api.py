"""The gradient functions users call."""
from __future__ import annotations

import inspect
import types
from typing import Callable

from transforms.errors import TransformError
from transforms.pipeline import Session, reverse_function


def _derivative(f: Callable, wrt, optimized: bool, with_value: bool) -> Callable:
    if not callable(f):
        raise TypeError(f"expected a function to differentiate, got {type(f).__name__}")
    if inspect.ismethod(f):
        # A bound method: differentiate its function, with `self` bound and not differentiated.
        shifted = tuple(w + 1 if isinstance(w, int) and w >= 0 else w
                        for w in (wrt if isinstance(wrt, tuple) else (wrt,)))
        inner = reverse_function(f.__func__, shifted if isinstance(wrt, tuple) else shifted[0],
                                 session=Session(optimized), with_value=with_value)
        inner.__module__ = getattr(f, "__module__", None)
        return types.MethodType(inner, f.__self__)
    derivative = reverse_function(f, wrt, session=Session(optimized), with_value=with_value)
    derivative.__module__ = getattr(f, "__module__", None)
    return derivative


def grad(f: Callable, wrt=0, *, optimized: bool = True) -> Callable:
    """The gradient of `f`, as a new function generated from f's source.

    Arguments:
        f: a Python function of NumPy arrays and numbers.
        wrt: the parameter (index or name) to differentiate with respect to, or a tuple of
            them.
        optimized: remove dead code, unneeded saves and single-use temporaries from the
            generated code (False shows the raw form).

    Returns:
        A function taking f's arguments and an optional keyword `dy`, the gradient of f's
        output to start from (default: ones shaped like the output, so a non-scalar output
        gives the gradient of its sum). It returns one gradient for an int or str `wrt`, a
        tuple of them for a tuple `wrt`; each has the type and shape of its argument.

    Example:
        >>> def f(x, y):
        ...     return x ** 2 - 2 * x * y + 3 * y
        >>> grad(f, wrt=(0, 1))(2.0, 1.0)
        (2.0, -1.0)
    """
    return _derivative(f, wrt, optimized, with_value=False)


def value_and_grad(f: Callable, wrt=0, *, optimized: bool = True) -> Callable:
    """Like `grad`, but the generated function returns `(f's value, gradient)`."""
    return _derivative(f, wrt, optimized, with_value=True)


def source(derivative: Callable) -> str:
    """The generated Python source of a function made by autotrace (grad, value_and_grad)."""
    text = getattr(derivative, "__autotrace_source__", None)
    if text is None:
        raise TypeError(f"{getattr(derivative, '__name__', derivative)!r} was not generated "
                        "by autotrace; source() shows the code of functions that grad and "
                        "value_and_grad return")
    return text


__all__ = ["grad", "value_and_grad", "source", "TransformError"]
