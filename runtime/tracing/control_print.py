"""`autotrace.print`: recorded as a graph `print` op (runtime/tracing/control.py registers it),
so that it prints on every call of a traced function, in the branch or iteration that runs,
and in program order with the other prints.

    if np.sum(x) > 0:
        autotrace.print("positive:", x)   # a print op in the true branch
    else:
        autotrace.print("not positive")   # one in the false branch, with no traced value

Decisions:
- A print with no traced value is recorded too while a function is traced (tf.print is a graph
  op whatever it prints): Python's print would run only while tracing, in both branches of a
  traced `if`, and never on a later call. Outside a trace it prints at once.
"""
from __future__ import annotations

from ..ops import primitives
from ..scopes import active_subgraphs
from ..state import current_scope
from .control_scope import current_builder
from .tracer import GraphBuilder, Tracer


def print_values(*values, sep: str = " ", end: str = "\n") -> None:
    """Print `values` like Python's print: now outside a trace, else on every run of the
    traced graph (a `print` op, kept by the passes in program order)."""
    tracers = [value for value in values if isinstance(value, Tracer)]
    builder = _recording_builder(tracers)
    if builder is None:
        print(*values, sep=sep, end=end)
        return
    texts = tuple(None if isinstance(value, Tracer) else str(value) for value in values)
    builder.record(primitives["print"], tracers, {"texts": texts, "sep": sep, "end": end})


def _recording_builder(tracers: list) -> GraphBuilder | None:
    """The builder that records what is done now: the innermost subgraph being traced (a
    branch, a loop body) of the trace in progress, that trace's own, or None outside one."""
    if tracers:
        return current_builder(tracers[0])
    scope = current_scope()
    owner = getattr(scope, "owner", None)
    if not isinstance(owner, GraphBuilder) or getattr(owner, "finished", False):
        return None
    active = active_subgraphs()
    if active and active[-1].root() is owner:
        return active[-1]
    return owner
