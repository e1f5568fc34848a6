"""What traced control flow shares with the modules control.py builds on: its error, and the
subgraphs being traced now.

views.py and control_writes.py raise the error (a branch writing into the memory of an
enclosing trace; a loop changing in place a value that another loop value shares memory with),
and state.py asks whether a subgraph is tracing (a Variable assigned inside a traced `if` or
loop is refused), while control.py, which pushes the subgraphs, imports them.
"""
from __future__ import annotations

import threading

# The subgraph builders now tracing in this thread, innermost last.
_ACTIVE = threading.local()


class ControlFlowError(TypeError):
    """The branches of a cond, or the body of a while_loop, do not fit together."""


def active_subgraphs() -> list:
    """The builders of the subgraphs (branches, loop bodies) now tracing in this thread,
    innermost last: the list itself, which control.py pushes onto and pops."""
    return _ACTIVE.__dict__.setdefault("builders", [])
