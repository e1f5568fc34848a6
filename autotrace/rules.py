"""Registering derivative rules for functions autotrace cannot read (compiled, external)."""
from __future__ import annotations

from typing import Callable

from transforms.rules.core import adjoint, d

__all__ = ["register_adjoint", "d"]


def register_adjoint(*functions) -> Callable:
    """Register the decorated template as the adjoint rule of each of `functions`.

    The template's first parameter is the result, the others mirror the function's own
    parameters; its body assigns `d[arg]`, the gradient of each argument, from `d[result]`:

        @autotrace.register_adjoint(scipy.special.erf)
        def erf_adjoint(y, x):
            d[x] = d[y] * 2 / np.sqrt(np.pi) * np.exp(-x * x)

    Generated code shows the body inlined where the function is called.
    """
    return adjoint(*functions)
