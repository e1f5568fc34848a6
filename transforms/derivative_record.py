"""The record a generated derivative carries: `Derivative`, kept on it as
`__autotrace_derivative__` (transforms/codegen/loading.py makes it).

What its readers need to know of a derivative autotrace generated is a field here: which mode
made it and with respect to what, the names its user's code sets to None (which a derivative
of it reads back), the keyword by which it takes its object's gradient after the call, and the
namespaces whose values it was generated for. (The seed keyword, source, line map and primal,
which code outside transforms/ reads too, are still attributes of their own.)
"""
from __future__ import annotations

from dataclasses import dataclass

from .wrt import WithRespectTo


@dataclass(frozen=True)
class Derivative:
    """mode: "reverse" or "forward". wrt: what it is taken with respect to. user_nones: the
    variables the user's own code sets to None (None in them is a value the code may test,
    never a placeholder the derivative left unset). object_after: the keyword by which a
    method's derivative takes the gradient of its object after the call, or None (see
    transforms/dynamic_calls.py `vjp_call`). namespaces: those of every function its build
    transformed, checked before a cache hands it out again (transforms/analysis/live_names.py)."""

    mode: str
    wrt: WithRespectTo
    user_nones: frozenset
    object_after: str | None
    namespaces: list


def derivative_record(function) -> Derivative | None:
    """The record of a derivative autotrace generated from source (None for any other)."""
    return getattr(function, "__autotrace_derivative__", None)
