"""JAX's names for tracing and forward mode: `jit` (autotrace.function with static
arguments) and `linearize`."""
from __future__ import annotations

from typing import Callable

from autotrace.operators import as_run_now, forward, refuse_changed_value
from autotrace.runtime.derivatives.snapshots import snapshot
from autotrace.traced_function import Function
from autotrace.transforms.derivative_record import derivative_record

__all__ = ["jit", "linearize"]


def jit(f: Callable | None = None, *, static_argnums=(), static_argnames=()):
    """Trace `f` once per input signature into cached, optimized graphs, as jax.jit: the
    same traced function as `autotrace.function(f)`, whose arguments it takes as it does,
    with some arguments static.

    Arguments:
        f: the function to trace.
        static_argnums: the positions (int or tuple of ints) of arguments that are static.
        static_argnames: the names (str or tuple of str) of parameters that are static.
            A static argument keys the trace by its value (its hash and equality, with its
            type: 1 and 1.0 are two), and f gets it as the Python value it is, never traced:
            it may steer Python control flow, give shapes, or be any hashable object. An
            unhashable one (a list, an array) is a TypeError.

    Returns:
        an autotrace `Function`, or, without `f`, a decorator that makes one.

    Examples:
        >>> def power(x, n):
        ...     for _ in range(n - 1):
        ...         x = x * x
        ...     return x
        >>> fast = jit(power, static_argnums=1)
        >>> fast(np.array([2.0]), 2)
        array([4.])
    """
    def make(function):
        return Function(function, static_argnums=static_argnums,
                        static_argnames=static_argnames)
    return make if f is None else make(f)


def linearize(f: Callable, *primals):
    """`(f(*primals), f_jvp)`, as jax.linearize: `f_jvp(*tangents)` is the derivative of f
    at `primals` along `tangents` (one per primal, each shaped like it).

    f_jvp runs f's forward-mode derivative (`autotrace.forward`) at the primals, f's own
    computation with it: autotrace keeps no linearized program apart from f's code. The
    primals' arrays are copied here, so a later change to them changes nothing; an f whose
    value differs when f_jvp runs it again (one that keeps state, or draws random numbers) is
    refused there, rather than give the derivative at another point.

    Examples:
        >>> value, f_jvp = linearize(lambda x, y: x * y, 2.0, 3.0)
        >>> value, f_jvp(1.0, 0.0)
        (6.0, 3.0)
    """
    if not primals:
        raise TypeError(f"linearize({getattr(f, '__qualname__', f)}) needs the primals to "
                        "linearize at: linearize(f, *primals)")
    derivative = forward(f, wrt=tuple(range(len(primals))))
    primals = snapshot(primals)  # the point f_jvp is the derivative at
    value = as_run_now(derivative)(*primals)[0]
    name = getattr(f, "__qualname__", "f")
    seed_keyword = derivative_record(derivative).seed  # (tangent_ where f takes a `tangent`)

    def f_jvp(*tangents):
        if len(tangents) != len(primals):
            raise TypeError(f"the linearization of {name} takes {len(primals)} tangents, one "
                            f"per primal, but it was given {len(tangents)}")
        # (the derivative checks each tangent against its primal)
        again, tangent = as_run_now(derivative)(*primals, **{seed_keyword: tangents})
        refuse_changed_value(f, value, again, "f_jvp", "call autotrace.jvp for each tangent")
        return tangent
    f_jvp.__name__ = f"linearized_{getattr(f, '__name__', 'f')}"
    return value, f_jvp
