"""Calls that generated reverse code runs whole, then again for its gradient (a module's call:
transforms/dynamic_calls.py `_called_whole`), and the state cells they write.

The first run makes its writes (a batch-norm layer's moving averages, a Dropout's random key)
once. The run again reads the cells as the call began with them, and its writes are dropped
at its end. Eagerly, runtime/state.py notes the first runs' writes (cell, value before) in
order; traced, the trace's CaptureScope.as_of does the same. Either way a write is refused
where the calling derivative read the cell before the call: its adjoint sweep would read the
new value where its forward pass read the old one.
"""
from __future__ import annotations

from contextlib import contextmanager, nullcontext

from ..state import (StateCell, StateError, first_runs, reruns, whole_call_writes, current_scope,
                     current_sink)


class RunAgain:
    """The cells as a call run again sees them: those written since the call began, as they
    were then, and its own writes (dropped at its end). A cell it reads, writes and then
    reads again is refused: the adjoint sweep of what it runs would read the cell's new
    value where the forward pass read the old one."""

    def __init__(self, values: dict):
        self.values = values  # id(cell) -> (cell, value)
        self.read_before_write: set = set()
        self.written: set = set()

    def read(self, cell: StateCell):
        key = id(cell)
        if key in self.written and key in self.read_before_write:
            raise StateError(
                f"{cell.state_label()} is read both before and after it is assigned in a "
                "call that autotrace.grad differentiates, and the call's adjoint sweep reads "
                "it again, so it cannot tell which value to use; read it once into a name and "
                "use that name, before or after the assignment")
        if key not in self.written:
            self.read_before_write.add(key)
        held = self.values.get(key)
        return cell._value if held is None else held[1]

    def write(self, cell: StateCell, value) -> None:
        self.values[id(cell)] = (cell, value)
        self.written.add(id(cell))


def whole_call_state(frame):
    """Outside implicit gradients: a context in which the call that `frame` (a generator's)
    runs whole for generated reverse code makes its writes, and which yields, eagerly, a
    token for `run_again_as_of` (None while tracing: the trace's CaptureScope.as_of serves)."""
    if current_sink() is not None:
        return nullcontext()
    if current_scope() is not None:
        return _traced_first_run(frame)
    return _first_run(frame)


@contextmanager
def _traced_first_run(frame):
    with first_runs.pushed(frame):
        yield None


@contextmanager
def _first_run(frame):
    rerun = reruns.top()
    token = (dict(rerun.values),) if rerun is not None else len(whole_call_writes.log)
    whole_call_writes.waiting += 1
    try:
        with first_runs.pushed(frame):
            yield token
    except BaseException:
        end_whole_call(token)
        raise


@contextmanager
def run_again_as_of(token):
    """Within it, cells read as when `whole_call_state` gave `token`, and what is written is
    dropped at the end: the call ran once and made its writes. Nothing where token is None."""
    if token is None:
        yield
        return
    if isinstance(token, tuple):
        values = dict(token[0])
    else:
        values = {}
        for cell, before in whole_call_writes.log[token:]:
            values.setdefault(id(cell), (cell, before))
    try:
        with reruns.pushed(RunAgain(values)):
            yield
    finally:
        end_whole_call(token)


def end_whole_call(token) -> None:
    """A call `whole_call_state` gave `token` for will not run again: its first run's notes of
    writes go when no other call waits for them."""
    if token is None:
        return
    whole_call_writes.waiting -= 1
    if whole_call_writes.waiting <= 0:
        whole_call_writes.waiting = 0
        whole_call_writes.log.clear()
