"""Gradients the user writes: custom_gradient, custom_vjp, custom_jvp and stop_gradient."""
from __future__ import annotations

import functools
import sys
from typing import Callable

from autotrace.transforms.analysis.calls import CustomGradient, CustomJVP, CustomVJP, note_own_rule
from autotrace.transforms.rules.core import constant

__all__ = ["custom_gradient", "custom_vjp", "custom_jvp", "stop_gradient"]


def custom_gradient(f: Callable) -> CustomGradient:
    """Give `f` a gradient of your own.

    The decorated function returns `(value, grad_fn)`; `grad_fn(dy)` returns the gradient of
    each argument (one value for one argument, a tuple for several) given `dy`, the gradient of
    the value. grad_fn may use values computed by f. Called directly, the decorated function
    returns the value alone; under `grad` the gradient comes from grad_fn.

    Examples:
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


def custom_vjp(f: Callable | None = None, *, nondiff_argnums: tuple = ()):
    """Give `f` a reverse-mode derivative of your own, as jax.custom_vjp.

    After `f.defvjp(fwd, bwd)`: `fwd(*args)` returns `(value, residuals)`, what bwd needs;
    `bwd(residuals, dy)` returns a tuple with one gradient per argument of f, given `dy`, the
    gradient of the value; None for zeros. The arguments at `nondiff_argnums` (positions)
    get no gradient: bwd takes them first, `bwd(*those, residuals, dy)`, and returns one
    gradient per other argument (`@functools.partial(custom_vjp, nondiff_argnums=(1,))`,
    or `custom_vjp(nondiff_argnums=(1,))` as a decorator). Called directly, f runs as
    written; under grad, vjp and the other
    reverse-mode transforms, fwd gives the value and bwd the gradients (fwd runs again in the
    adjoint sweep, for the residuals). Forward mode cannot use them: it refuses f (give it a
    custom_jvp). f's parameters are positional, and calls pass them by position.

    Examples:
        >>> @custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> clip_gradient.defvjp(lambda x: (x, None),
        ...                      lambda residuals, dy: (np.clip(dy, -1.0, 1.0),))
        >>> grad(lambda x: 5.0 * clip_gradient(x))(2.0)
        1.0
    """
    if f is None:
        return functools.partial(custom_vjp, nondiff_argnums=nondiff_argnums)
    wrapper = CustomVJP(f, nondiff_argnums)
    functools.update_wrapper(wrapper, f)
    return wrapper


def custom_jvp(f: Callable) -> CustomJVP:
    """Give `f` a forward-mode derivative of your own, as jax.custom_jvp.

    After `f.defjvp(jvp)`: `jvp(primals, tangents)` (two tuples, one item per argument of f)
    returns `(value, tangent)`, the tangent of the value. Called directly, f runs as
    written; forward mode (forward, jvp, jacobian with mode="forward") takes the value and
    tangent from the rule. Reverse mode runs f for the value and transposes the rule's
    tangent, which must be linear in the tangents: autotrace differentiates it in them, and
    refuses a rule whose tangent it finds not linear (checked on each call, at the call's
    values; while tracing, on random values of the traced shapes).

    Examples:
        >>> @custom_jvp
        ... def log1pexp(x):
        ...     return np.log1p(np.exp(x))
        >>> log1pexp.defjvp(lambda primals, tangents: (
        ...     log1pexp(primals[0]), tangents[0] / (1 + np.exp(-primals[0]))))
        >>> grad(log1pexp)(100.0)
        1.0
    """
    wrapper = CustomJVP(f)
    functools.update_wrapper(wrapper, f)
    return wrapper


def stop_gradient(x):
    """`x` itself, through which no gradient (or tangent) flows.

    Examples:
        >>> grad(lambda x: x * stop_gradient(x))(3.0)   # the second x counts as a constant
        3.0
    """
    if not sys._getframe(1).f_globals.get("__name__", "").startswith("autotrace."):
        # (the user's: a derivative built from a trace refuses it; autotrace's own, as
        # softmax's shift, change no gradient)
        note_own_rule(stop_gradient, own=True)
    return x


constant(stop_gradient)
