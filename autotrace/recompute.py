"""Gradient checkpointing: recompute a function's values in the adjoint sweep, not store them."""
from __future__ import annotations

import inspect
from typing import Callable

from autotrace.runtime.user_frames import user_site
from autotrace.transforms.analysis.calls import Checkpointed, classify_value, describe

__all__ = ["checkpoint"]


def checkpoint(function: Callable) -> Checkpointed:
    """Mark `function` to be recomputed, not stored, by reverse mode (JAX's `jax.checkpoint`,
    also called remat; TensorFlow's `tf.recompute_grad`).

    In a function differentiated by `grad`, `value_and_grad` or `vjp`, a call of the marked
    function runs plainly in the primal sweep, keeping nothing of what it computes inside but
    its inputs; the adjoint sweep runs its primal sweep again from those inputs, then its
    adjoint. Memory falls from all of its intermediate values to its inputs, for one more run
    of it. `autotrace.source` shows where the recomputation runs, and in a traced graph
    (`autotrace.function(autotrace.grad(f))`) a barrier keeps the graph passes from merging
    the recomputed ops back into the primal sweep's. Outside a transform, and under forward
    mode, the marked function is the function itself.

    Not to be confused with `autotrace.Checkpoint`, which saves Variables to files.

    Arguments:
        function: a Python function (or method, lambda, `autotrace.function`).

    Returns:
        A callable that calls `function`; use it as a decorator or as `checkpoint(g)(x)`.

    Examples:
        >>> @checkpoint
        ... def cell(h, w):
        ...     return np.tanh(h @ w)
        >>> def loss(h, w):
        ...     for _ in range(100):
        ...         h = cell(h, w)
        ...     return np.sum(h)
        >>> dloss = grad(loss, wrt=1)   # stores 100 h's, not each step's intermediate values
    """
    if isinstance(function, Checkpointed):
        return function
    problem = _problem_with(function)
    if problem is not None:
        raise TypeError(f"{user_site()}: autotrace.checkpoint takes a Python function "
                        f"whose calls reverse mode recomputes; {problem}")
    wrapper = Checkpointed(function)
    for attribute in ("__name__", "__qualname__", "__doc__", "__module__"):
        if hasattr(function, attribute):
            setattr(wrapper, attribute, getattr(function, attribute))
    wrapper.__wrapped__ = function
    return wrapper


def _problem_with(function) -> str | None:
    """Why `function` cannot be checkpointed, or None."""
    if not callable(function):
        return f"got {function!r} (a {type(function).__name__}), which cannot be called"
    if isinstance(function, type):
        return (f"got the class {function.__name__}; checkpoint a function that computes "
                "with arrays")
    kind = classify_value(function).kind
    if kind == "rule":
        return (f"{describe(function)} has a derivative rule and keeps no intermediate "
                "values to recompute; checkpoint a function of yours that calls it")
    if kind in ("unknown", "constant") and not inspect.isfunction(function):
        return (f"got {describe(function)}, which is no Python function autotrace can read "
                "(write the computation as a def or lambda and checkpoint that)")
    return None


checkpoint.__autotrace_makes_checkpointed__ = True  # `checkpoint(g)(x)`: transforms/front/segments.py
