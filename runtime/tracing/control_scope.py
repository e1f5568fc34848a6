"""The error of traced control flow, which the modules control.py builds on raise too.

views.py and control_writes.py raise it (a branch writing into the memory of an enclosing
trace; a loop changing in place a value that another loop value shares memory with), as do
control.py's branches and loops. The subgraphs tracing now are runtime/scopes.py's
`active_subgraphs`.
"""
from __future__ import annotations

from ..scopes import active_subgraphs
from ..errors import TracingError


class ControlFlowError(TypeError, TracingError):
    """The branches of a cond, or the body of a while_loop, do not fit together."""


def used_after_its_trace(builder, var) -> str:
    """The error for a traced value of `builder`, a trace that has ended, used again (`var`,
    what it stands for): one that a traced `if` or loop body made was kept past the statement
    other than as one of its variables."""
    if getattr(builder, "parent", None) is None:
        return ("a traced value was used after its trace ended (kept in a global or an "
                "attribute?); return it from the traced function instead")
    site = next((equation.site for equation in builder.equations if var in equation.outputs),
                None)
    made = f" (made at {site[0]}:{site[1]})" if site is not None else ""
    return (f"a traced value that a traced `if` or loop body made{made} was used after that "
            f"statement, which kept it other than as one of its variables: set as an attribute "
            f"of an object (o.w = ...), or put into a list or dict that the statement only "
            f"reads. autotrace traces the statement as one graph op, whose results are its "
            f"variables: make the value one (w = ... inside the statement, o.w = w after it)")


def current_builder(tracer):
    """The builder that records now what is done to `tracer`: the innermost subgraph being
    traced, if `tracer` belongs to it or to a trace enclosing it; else its own."""
    active = active_subgraphs()
    if active:
        innermost = active[-1]
        if tracer._builder is innermost or any(
                tracer._builder is builder for builder in innermost.enclosing()):
            return innermost
    return tracer._builder
