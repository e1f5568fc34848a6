"""The gradient functions users call."""
from __future__ import annotations

from typing import Callable

from autotrace.operators import reverse, reverse_with_aux
from autotrace.transforms.derivative_record import source_of
from autotrace.transforms.errors import TransformError
from autotrace.transforms.wrt import FIRST_PARAMETER, WithRespectTo


def grad(f: Callable, wrt=FIRST_PARAMETER, *, argnums=None, has_aux: bool = False,
         optimized: bool = True, checkpoint_every: int | None = None) -> Callable:
    """The gradient of `f`, as a new function generated from f's source.

    Arguments:
        f: a Python function of NumPy arrays and numbers.
        wrt: the parameter (index or name) to differentiate with respect to, or a tuple of
            them (default 0, the first).
        argnums: another name for wrt, as JAX calls it (give one of the two).
        has_aux: f returns a pair `(value, aux)`: only the value is differentiated, and the
            gradient function returns `(gradient, aux)`. Without has_aux, a tuple (list,
            dict) that f returns is differentiated whole: the gradient is that of the sum of
            all the numbers and arrays in it.
        optimized: remove dead code, unneeded saves and single-use temporaries from the
            generated code (False shows the raw form).
        checkpoint_every: gradient checkpointing of f's `for` loops: store the loop's state
            once every so many iterations, and recompute each segment of iterations from it
            in the adjoint sweep (O(n / k + k) stored values for n iterations instead of
            O(n)). None (the default) stores every iteration. See also `checkpoint`.

    Returns:
        A function taking f's arguments and an optional keyword `dy`, the gradient of f's
        output to start from (default: ones shaped like the output, so a non-scalar output
        gives the gradient of its sum). It returns one gradient for an int or str `wrt`, a
        tuple of them for a tuple `wrt`; each has the type and shape of its argument.
        With has_aux, `(gradient, aux)`. (Where f takes a parameter `dy`, or reads a
        global of that name, the keyword is `dy_`; a local variable `dy` changes nothing.)

    Examples:
        >>> def f(x, y):
        ...     return x ** 2 - 2 * x * y + 3 * y
        >>> grad(f, wrt=(0, 1))(2.0, 1.0)
        (2.0, -1.0)
    """
    wrt = WithRespectTo.of_wrt_or_argnums(wrt, argnums)
    if has_aux:
        return reverse_with_aux(f, wrt, optimized, checkpoint_every=checkpoint_every)
    return reverse(f, wrt, optimized, checkpoint_every=checkpoint_every)


def value_and_grad(f: Callable, wrt=FIRST_PARAMETER, *, argnums=None,
                   has_aux: bool = False, optimized: bool = True,
                   checkpoint_every: int | None = None) -> Callable:
    """The value and the gradient of `f` together, as one function generated from f's source:
    its primal sweep computes f's value, which is returned beside the gradient, so f runs
    once, not once for the value and again inside `grad(f)`.

    Arguments:
        f: a Python function of NumPy arrays and numbers.
        wrt: the parameter (index or name) to differentiate with respect to, or a tuple of
            them.
        argnums: another name for wrt, as JAX calls it (give one of the two).
        has_aux: f returns a pair (value, aux), of which only the value is differentiated;
            the function then returns `((value, aux), gradient)`, as in JAX.
        optimized: remove dead code, unneeded saves and single-use temporaries from the
            generated code (False shows the raw form).
        checkpoint_every: gradient checkpointing of f's `for` loops, as for `grad`.

    Returns:
        A function taking f's arguments and an optional keyword `dy` (as `grad`'s) that
        returns `(value, gradient)`: f's output, and what `grad(f, wrt)` returns for the same
        arguments (one gradient, or a tuple of them for a tuple `wrt`).

    Examples:
        >>> def f(x, y):
        ...     return x ** 2 - 2 * x * y + 3 * y
        >>> value_and_grad(f)(2.0, 1.0)
        (3.0, 2.0)
        >>> value_and_grad(f, wrt=(0, 1))(2.0, 1.0)
        (3.0, (2.0, -1.0))
    """
    wrt = WithRespectTo.of_wrt_or_argnums(wrt, argnums)
    if has_aux:
        return reverse_with_aux(f, wrt, optimized, with_value=True,
                                checkpoint_every=checkpoint_every)
    return reverse(f, wrt, optimized, with_value=True, checkpoint_every=checkpoint_every)


def source(derivative: Callable) -> str:
    """The generated Python source of a function made by autotrace (grad, value_and_grad,
    implicit_grad: the derivatives its calls so far generated, one per set of arguments that
    hold Variables; vmap: the batched code of each signature it was called with).

    Examples:
        >>> def f(x):
        ...     return np.sin(x) * x
        >>> print(source(grad(f)), end="")
        def df(x, *, dy=None):
            # Primal sweep
            _t1 = np.sin(x)
            # Adjoint sweep
            # Grad of line 2: return np.sin(x) * x
            b_t2 = seed(_t1 * x, dy)
            bx = b_t2 * _t1
            bx = accumulate(bx, b_t2 * x * np.cos(x))
            return match(bx, x)
    """
    batched = getattr(derivative, "__autotrace_batched_sources__", None)
    if batched is not None:  # autotrace.vmap: the code of the batches traced so far
        sources = batched()
        if not sources:
            raise TypeError(
                f"{derivative!r} has not been called yet: vmap traces and batches the "
                "function on its first call with each signature; call it once, or ask for "
                "vmapped.source(*args)")
        return "\n".join(sources)
    implicit = getattr(derivative, "__autotrace_implicit__", None)
    if implicit is not None:
        generated = implicit.values()
        if not generated:
            raise TypeError(
                f"{getattr(derivative, '__name__', derivative)!r} has not been called yet: "
                "implicit_grad generates its derivative on the first call, for the arguments "
                "that hold Variables; call it once, then ask for its source")
        return "\n".join(source(function) for function in generated)
    text = source_of(derivative)
    if text is None:
        raise TypeError(f"{getattr(derivative, '__name__', derivative)!r} was not generated "
                        "by autotrace; source() shows the code of functions that grad and "
                        "value_and_grad return")
    return text


__all__ = ["grad", "value_and_grad", "source", "TransformError"]
