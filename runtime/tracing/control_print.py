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
- A Variable prints its value; a traced value inside a tuple, list, dict or dataclass prints
  its value in the container's text, by repr as Python prints a container's items.
"""
from __future__ import annotations

import re
import uuid

from ..ops import primitives
from ..scopes import active_subgraphs
from ..state import StateCell, current_scope, read_cells
from .control_scope import current_builder
from .tracer import GraphBuilder, Tracer
from .trees import map_arrays


def print_values(*values, sep: str = " ", end: str = "\n") -> None:
    """Print `values` like Python's print: now outside a trace, else on every run of the
    traced graph (a `print` op, kept by the passes in program order)."""
    values = read_cells(values)  # a Variable prints its value, as tf.print's does
    tracers = []
    texts = tuple(_text(value, tracers) for value in values)
    builder = _recording_builder(tracers)
    if builder is None:
        print(*values, sep=sep, end=end)
        return
    builder.record(primitives["print"], tracers, {"texts": texts, "sep": sep, "end": end})


class _Mark:
    """Stands for the traced value `index` in a container's text."""

    def __init__(self, nonce: str, index: int):
        self.nonce, self.index = nonce, index

    def __repr__(self) -> str:
        return f"\x00{self.nonce}:{self.index}\x00"


def _text(value, tracers: list):
    """What the print op shows for `value` (control.py _printed): None for a traced value (its
    own text, appended to `tracers`), its text for a value with none, and for a container
    holding traced values the pieces of its text, None for each of theirs (shown by repr,
    as Python shows a container's items), appended to `tracers` in the order the text shows
    them (a dict's keys in its own order, a field its repr leaves out not at all)."""
    if isinstance(value, Tracer):
        tracers.append(value)
        return None
    held: list = []
    nonce = uuid.uuid4().hex  # no text of the user's can hold the marks

    def mark(leaf):
        if isinstance(leaf, StateCell):  # a Variable in a dataclass: its value in this trace
            leaf = leaf.read()
        if not isinstance(leaf, Tracer):
            return leaf
        held.append(leaf)
        return _Mark(nonce, len(held) - 1)
    marked = map_arrays(value, mark, is_leaf=lambda leaf: isinstance(leaf, (Tracer, StateCell)))
    if not held:
        return str(value)
    pieces = re.split(f"\x00{nonce}:([0-9]+)\x00", str(marked))
    tracers.extend(held[int(index)] for index in pieces[1::2])
    return tuple(None if index % 2 else piece for index, piece in enumerate(pieces))


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
