"""Registering derivative rules for functions autotrace cannot read (compiled, external)."""
from __future__ import annotations

from typing import Callable

from autotrace.transforms.rules.core import adjoint, d, tangent

__all__ = ["register_adjoint", "register_tangent", "d"]


def register_adjoint(*functions) -> Callable:
    """Register the decorated template as the adjoint rule of each of `functions`.

    The template's first parameter is the result, the others mirror the function's own
    parameters; its body assigns `d[arg]`, the gradient of each argument, from `d[result]`:

        @autotrace.register_adjoint(scipy.special.erf)
        def erf_adjoint(y, x):
            d[x] = d[y] * 2 / np.sqrt(np.pi) * np.exp(-x * x)

    Generated code shows the body inlined where the function is called.

    Examples:
        >>> def softsign(x):
        ...     return x / (1 + np.abs(x))
        >>> @register_adjoint(softsign)
        ... def softsign_adjoint(y, x):
        ...     d[x] = d[y] / (1 + np.abs(x)) ** 2
        >>> grad(lambda x: 3.0 * softsign(x))(1.0)
        0.75
    """
    return adjoint(*functions)


def register_tangent(*functions) -> Callable:
    """Register the decorated template as the tangent (forward-mode) rule of `functions`.

    Parameters as for register_adjoint; the body assigns `d[result]`, the tangent of the
    result, from the tangents `d[arg]` of the arguments (zeros for arguments with none):

        @autotrace.register_tangent(scipy.special.erf)
        def erf_tangent(y, x):
            d[y] = d[x] * 2 / np.sqrt(np.pi) * np.exp(-x * x)

    Examples:
        >>> def softsign(x):
        ...     return x / (1 + np.abs(x))
        >>> @register_tangent(softsign)
        ... def softsign_tangent(y, x):
        ...     d[y] = d[x] / (1 + np.abs(x)) ** 2
        >>> value, tangent = jvp(lambda x: 3.0 * softsign(x), (1.0,), (1.0,))
        >>> float(value), float(tangent)
        (1.5, 0.75)
    """
    return tangent(*functions)
