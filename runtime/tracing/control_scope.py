"""The error of traced control flow, which the modules control.py builds on raise too.

views.py and control_writes.py raise it (a branch writing into the memory of an enclosing
trace; a loop changing in place a value that another loop value shares memory with), as do
control.py's branches and loops. The subgraphs tracing now are runtime/scopes.py's
`active_subgraphs`.
"""
from __future__ import annotations


class ControlFlowError(TypeError):
    """The branches of a cond, or the body of a while_loop, do not fit together."""
