"""State that lives across calls: cells that eager code and traced graphs read and write, and
the sink that gathers gradients for the cells a function reads.

    cell = StateCell(np.zeros(3))
    with capturing(builder.new_input) as scope:   # while tracing
        cell.read()          # a graph input, fed with the cell's array on every call
        cell.write(t)        # recorded: the graph outputs t, written back after each call

`autotrace.Variable` is a StateCell. Decisions:
- Eagerly, `read()` returns the cell's array and `write()` replaces it (never in place, so an
  array handed out earlier keeps its values).
- While a function is traced, the first read of a cell makes it a graph input (a capture), and
  later reads see what the trace wrote into it since; every written cell's last value becomes
  an extra graph output that the caller stores back into the cell after the graph runs.
- Gradients: inside `collecting()`, generated adjoint code `deposit`s the gradient of each
  trainable cell it reached (through an attribute, a container or a global) into the sink;
  outside it, a gradient that reaches a cell this way is an error, since nothing would
  receive it.
- Writes while gradients are collected are held back and made when collecting ends (the
  last write to a cell wins). Meanwhile reads see them: a cell read after it was written
  gives the value written, as in plain Python (and TensorFlow's GradientTape, which also
  sends that read's gradient to the cell).
- The adjoint sweep recomputes the primal of each function it calls, after the forward pass
  is over. So that a recomputation sees what the call saw (the same random key, the same
  moving averages), generated code takes `state_version()` before such a call and recomputes
  it inside `with state_as_of(version):`. Each run of a function, the forward pass or one
  recomputation, is an `Epoch`: the writes made before it began, and its own, which are
  dropped when a recomputation ends. Held back, a batch-norm layer's or a random
  generator's writes happen once, however often the adjoint sweep recomputes the call.
- A function's adjoint sweep reads cells again (`bx = by * w` reads w). It sees the value
  the function's forward pass saw: the old one if the forward pass read the cell only before
  writing it, the new one if only after. A cell the forward pass read both before and after
  writing it is ambiguous there, and an error.
"""
from __future__ import annotations

import sys
import threading
import weakref
from contextlib import contextmanager, nullcontext

import numpy as np

from .abstract import abstractify
from .scopes import active_subgraphs
from .errors import TracingError


class StateError(TypeError, TracingError):
    """State used in a way a trace or a gradient cannot follow.

    Examples:
        >>> v = autotrace.Variable(1.0)
        >>> def f(x):
        ...     v.assign(x)
        ...     return x * x
        >>> try:
        ...     autotrace.grad(f)(2.0)
        ... except StateError as error:
        ...     print(error)   # doctest: +ELLIPSIS
        Variable 'Variable' is assigned inside a function that autotrace.grad differentiates: ...
    """


class StateCell:
    """An array that lives across calls (the base of autotrace.Variable)."""

    _trainable = False
    owns_values = True  # its arrays are its own, read-only (`owned`); not a slot's (object_slots)

    def __init__(self, value):
        self._value = owned(value)

    @property
    def trainable(self) -> bool:
        """Whether gradients reach the cell (implicit_grad, optimizers). A trace notes the
        cells whose flag it reads, and traces again when one changes (object_slots.py)."""
        scope = current_scope()
        if scope is not None:
            scope.flagged[id(self)] = self
        return self._trainable

    @trainable.setter
    def trainable(self, value) -> None:
        self._trainable = bool(value)

    def read(self, updating: bool = False):
        """The current value: an array, or while tracing, the graph value that stands for it.
        `updating`: the read of an update of the cell from its own value (assign_add), which
        an adjoint sweep never reads again: not a read before the write (see Epoch.read)."""
        sink = current_sink()
        if sink is not None:
            held = sink.epochs[-1].read(self, updating)
            if held is not None:
                return held[1]
        scope = current_scope()
        if scope is not None:
            return scope.read(self)
        rerun = reruns.top()
        return self._value if rerun is None else rerun.read(self)

    def write(self, value) -> None:
        """Replace the value (while tracing: record the write; while gradients are collected:
        hold it back until they are; see the module docstring)."""
        sink = current_sink()
        if sink is not None:
            sink.epochs[-1].writes[id(self)] = (self, value)
            return
        scope = current_scope()
        if scope is None and reruns.top() is not None:
            reruns.top().write(self, value)  # a call run again: dropped at its end
            return
        if scope is not None and scope.running_again:
            scope.write(self, value)  # (dropped at its end, as_of)
            return
        inside = _inside_reverse_derivative(
            reverse_derivative_code if scope is None else traced_reverse_derivative_code)
        if inside == _FIRST_RUN:
            _refuse_read_by_caller(self, reverse_derivative_code if scope is None else
                                   traced_reverse_derivative_code)
            if scope is None:  # (a trace's CaptureScope notes its own)
                whole_call_writes.log.append((self, self._value))
        elif inside and not replaying(self):
            raise StateError(
                f"{self.state_label()} is assigned inside a function that autotrace.grad "
                "differentiates: its adjoint sweep runs the forward pass of the functions it "
                "calls again, which would assign it again (and draw different random numbers); "
                "take the gradient with autotrace.implicit_grad or implicit_value_and_grad, "
                "which hold assignments back until the gradient is done")
        if scope is None:
            self._value = owned(value) if self.owns_values else value
        else:
            scope.write(self, value)

    def state_label(self) -> str:
        return type(self).__name__


def owned(value):
    """`value`, an array that a cell now holds alone, made read-only where it is NumPy's: what
    the cell hands out (`np.asarray(v)`, `v[1:]`, `v.reshape(...)`) is its memory, and a write
    into that would change the cell behind its writes, and the values handed out before."""
    if isinstance(value, np.ndarray):
        value.setflags(write=False)  # (quicker than reading the flag first)
    return value


def read_cells(value):
    """`value` with each state cell (a Variable), also in tuples, lists and dicts, replaced by
    what it holds in this trace: NumPy hands a Tracer's protocols Variables as they are."""
    if isinstance(value, StateCell):
        return value.read()
    if isinstance(value, (tuple, list)) and any(isinstance(item, (StateCell, tuple, list, dict))
                                                for item in value):
        items = [read_cells(item) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {key: read_cells(item) for key, item in value.items()}
    return value


# --- captures while tracing ---------------------------------------------------------------------

class CaptureScope:
    """The cells one trace has read (its extra inputs) and written (its extra outputs)."""

    def __init__(self, new_input, owner, allow_creation: bool = True):
        self.new_input = new_input  # aval -> a Tracer that is a new graph input
        self.owner = owner  # the builder writes must belong to
        self.allow_creation = allow_creation
        self.captured: dict[int, StateCell] = {}  # the cells read, in the order first read
        self.inputs: dict[int, object] = {}  # id(cell) -> the graph input that reads it
        self.current: dict[int, object] = {}  # id(cell) -> the value the trace sees now
        self.written: dict[int, StateCell] = {}
        self.flagged: dict[int, StateCell] = {}  # the cells whose trainable flag it read
        self.running_again = 0  # how many `as_of` blocks are open

    def read(self, cell: StateCell):
        key = id(cell)
        if key not in self.current:
            self.captured[key] = cell
            self.current[key] = self.inputs[key] = self.new_input(abstractify(cell._value))
        return self.current[key]

    def write(self, cell: StateCell, value) -> None:
        builder = getattr(value, "_builder", None)
        if active_subgraphs() or (
                builder is not None and builder is not self.owner):
            raise StateError(
                f"{cell.state_label()} is assigned inside a traced `if` or loop; compute the "
                "new value there (np.where(condition, new, old) for an if) and assign it "
                "after the statement")
        self.current[id(cell)] = value
        self.written[id(cell)] = cell

    def values_now(self) -> dict:
        """What the trace's cells hold now, for `as_of`."""
        return dict(self.current)

    @contextmanager
    def as_of(self, values: dict):
        """Within it, the cells read as they did when `values_now()` gave `values` (a call run
        again by a derivative's adjoint sweep sees what the call saw); what it writes is
        dropped at the end (the call made those writes already)."""
        after, written = dict(self.current), dict(self.written)
        self.current.clear()
        self.current.update(values)
        # a cell first read since: the graph input; one written but never read: read anew
        self.current.update((key, self.inputs[key]) for key in after
                            if key not in values and key in self.inputs)
        self.running_again += 1
        try:
            yield
        finally:
            self.running_again -= 1
            self.current.clear()
            self.current.update(after)
            self.written.clear()
            self.written.update(written)

    @property
    def captured_cells(self) -> list:
        return list(self.captured.values())

    @property
    def written_cells(self) -> list:
        return list(self.written.values())

    def written_values(self) -> list:
        return [self.current[key] for key in self.written]


# The code objects of generated reverse-mode derivatives (registered as they are made), and of
# their versions converted for tracing (autotrace/conversion.py). Held weakly: a derivative no
# longer used takes its code with it.
reverse_derivative_code: "weakref.WeakSet" = weakref.WeakSet()
traced_reverse_derivative_code: "weakref.WeakSet" = weakref.WeakSet()


_FIRST_RUN = "first run"


def _inside_reverse_derivative(codes=reverse_derivative_code):
    """Whether the write being made (two frames up) runs inside generated reverse code (of
    `codes`): True; _FIRST_RUN where it runs inside the first run of a call that such code runs
    whole, then again for its gradient (derivatives/whole_calls.py `whole_call_state`)."""
    first_run = first_runs.top()
    frame = sys._getframe(2)
    while frame is not None:
        if frame is first_run:
            return _FIRST_RUN
        if frame.f_code in codes:
            return True
        frame = frame.f_back
    return False


class _ThreadItems(threading.local):
    """A list per thread, made empty on the first look from each thread (a default read
    through getattr would raise and catch an AttributeError on each look in a thread that
    pushed nothing: 0.6 us, where generated code asks several times a call)."""

    def __init__(self):
        self.items = []


class ThreadStack:
    """A stack of values per thread, for contexts that nest (`with stack.pushed(value):`)."""

    def __init__(self):
        self._local = _ThreadItems()

    def top(self):
        """The innermost value pushed in this thread, or None."""
        items = self._local.items
        return items[-1] if items else None

    @contextmanager
    def pushed(self, value):
        items = self._local.items
        items.append(value)
        try:
            yield value
        finally:
            items.pop()


_scopes = ThreadStack()  # the traces in progress in this thread, innermost last
_sinks = ThreadStack()  # the gradient sinks open in this thread, innermost last
# the cells of the random sources a derivative's run again of a call draws from, set back to
# their states before the call (runtime/derivatives/random_states.py `same_draws`), innermost
# last: their writes draw again what the call drew, and are undone after
_replays = ThreadStack()


def replays(cells):
    """Within it, writes to `cells` inside a reverse derivative replay a call's draws."""
    return _replays.pushed(frozenset(id(cell) for cell in cells))


def replaying(cell: StateCell) -> bool:
    """Whether writes to `cell` replay a call's draws now (see `replays`)."""
    replayed = _replays.top()
    return replayed is not None and id(cell) in replayed


# --- calls that generated reverse code runs whole (runtime/derivatives/whole_calls.py) ---------

class _WholeCalls(threading.local):
    """The writes of the first runs of calls that generated reverse code runs whole, then
    again for their gradient (a module's call, transforms/dynamic_calls.py `_called_whole`),
    while one such call waits for its run again: (cell, its value before the write) in
    order, so that a run again sees the cells as its call did."""

    def __init__(self):
        self.log: list = []
        self.waiting = 0


whole_call_writes = _WholeCalls()
first_runs = ThreadStack()  # the frames that run a whole call the first time, innermost last
# the runs again in progress, innermost last (derivatives/whole_calls.py RunAgain)
reruns = ThreadStack()


def _refuse_read_by_caller(cell: StateCell, codes=reverse_derivative_code) -> None:
    """Refuse a write, in the first run of a call that generated reverse code runs whole, to a
    cell that code read before the call (it holds the cell in a name): its adjoint sweep would
    read the cell again, and see the new value where its forward pass saw the old one."""
    seen: set = set()
    pending = []
    frame = first_runs.top().f_back
    while frame is not None:
        pending.append(frame)
        frame = frame.f_back
    while pending:
        frame = pending.pop()
        if id(frame) in seen or frame.f_code not in codes:
            continue
        seen.add(id(frame))
        for value in frame.f_locals.values():
            items = value if isinstance(value, (tuple, list)) else (value,)
            if any(item is cell for item in items):
                raise StateError(
                    f"{cell.state_label()} is read by a function that autotrace.grad "
                    "differentiates, then assigned by a call it makes (a layer's update); the "
                    "function's adjoint sweep would read the new value where its forward pass "
                    "read the old one. Read it after the call, or take the gradient with "
                    "autotrace.implicit_grad")
            suspended = getattr(value, "gi_frame", None)  # a callee's derivative, halfway
            if suspended is not None:
                pending.append(suspended)


def current_scope() -> CaptureScope | None:
    return _scopes.top()


def cells_now():
    """While tracing, the trace's scope and what its state cells hold now (a batch-norm
    layer's moving averages, which a call moves), for `cells_as_of`; else None."""
    scope = current_scope()
    return None if scope is None else (scope, scope.values_now())


def cells_as_of(noted):
    """Within it, the trace's state cells read as when `cells_now()` gave `noted`, and what
    they are written is dropped after (CaptureScope.as_of): a call run again by a derivative
    sees what the call saw. Nothing where `noted` is None or its trace is not the current."""
    if noted is None or current_scope() is not noted[0]:
        return nullcontext()
    return noted[0].as_of(noted[1])


def capturing(new_input, owner, allow_creation: bool = True):
    """Within it, cells read and written belong to the trace that `new_input` adds inputs to."""
    return _scopes.pushed(CaptureScope(new_input, owner, allow_creation))


# --- gradients of the cells a function reads ----------------------------------------------------

class Epoch:
    """One run of a function while gradients are collected: the forward pass, or one
    recomputation of a call by the adjoint sweep (see the module docstring)."""

    def __init__(self, before: dict):
        self.before = before  # id(cell) -> (cell, value): writes made before this run began
        self.writes: dict[int, tuple] = {}  # the writes of this run
        # set as its adjoint sweep starts (runtime.derivatives.structure.seed)
        self.forward_done = False
        self.read_before_write: set[int] = set()
        self.read_after_write: set[int] = set()

    def read(self, cell: StateCell, updating: bool = False):
        """(cell, value) for a cell this run sees a held-back value of; None for its own.
        A read `updating` the cell (assign_add's) is not noted as a read of the forward pass."""
        key = id(cell)
        written = self.writes.get(key)
        if not (self.forward_done or updating):
            (self.read_before_write if written is None else self.read_after_write).add(key)
        elif written is not None and key in self.read_before_write:
            if key in self.read_after_write:
                raise StateError(
                    f"{cell.state_label()} is read both before and after it is assigned in "
                    "a function implicit_grad differentiates, and that function's adjoint "
                    "sweep reads it again, so it cannot tell which value to use; read it once "
                    "into a name and use that name, before or after the assignment (to update "
                    "it from its own value, `assign_add` or `assign_sub` reads it for the "
                    "update only: `v.assign_add(d)`, not `v.assign(v + d)`)")
            written = None  # the forward pass read it only before writing it
        return written if written is not None else self.before.get(key)

    def state(self) -> dict:
        """What this run sees now: the writes before it, then its own."""
        return {**self.before, **self.writes}


class GradientSink:
    """Gradients of trainable cells, summed per cell, in the order cells first got one; and
    the writes held back meanwhile, by run (`epochs`: the forward pass first, then the
    recomputations in progress, innermost last)."""

    def __init__(self):
        self.gradients: dict[int, list] = {}  # id(cell) -> [cell, gradient]
        self.epochs: list[Epoch] = [Epoch({})]
        self.versions: list[dict] = []  # states calls began with, for their recomputations

    @property
    def pending(self) -> dict:
        """The writes of the forward pass: made when collecting ends."""
        return self.epochs[0].writes

    def add(self, cell: StateCell, gradient) -> None:
        entry = self.gradients.get(id(cell))
        if entry is None:
            self.gradients[id(cell)] = [cell, gradient]
        else:
            entry[1] = entry[1] + gradient


def current_sink() -> GradientSink | None:
    return _sinks.top()


@contextmanager
def collecting():
    """Gather what `deposit` is given, into the GradientSink this yields; make the writes
    held back meanwhile when it ends without an error."""
    with _sinks.pushed(GradientSink()) as sink:
        yield sink
    for cell, value in sink.pending.values():
        cell.write(value)


def state_version():
    """A token for the state the code running now sees, for `state_as_of` to bring back when
    the adjoint sweep recomputes the call that comes next (None: no held-back writes)."""
    sink = current_sink()
    if sink is None:
        return None
    state = sink.epochs[-1].state()
    if not state:
        return None
    sink.versions.append(state)
    return len(sink.versions) - 1


@contextmanager
def state_as_of(version):
    """Recompute a call, inside it, with the state `state_version()` gave `version` for; the
    call's writes are dropped at the end (its forward pass made them already)."""
    sink = current_sink()
    if sink is None:
        yield
        return
    sink.epochs.append(Epoch({} if version is None else sink.versions[version]))
    try:
        yield
    finally:
        sink.epochs.pop()


def deposit(value, gradient) -> None:
    """Hand `gradient`, the gradient of `value`, to the cells in `value`: a cell itself, cells
    in a tuple, list or dict (with a gradient of the same structure), or nothing for other
    values (their cells, if any, were reached through their attributes and got theirs)."""
    if gradient is None:
        return
    if isinstance(value, StateCell):
        if not value.trainable:
            return
        if active_subgraphs() and getattr(gradient, "_builder", None):
            raise StateError(
                f"{value.state_label()} is read inside a traced `if` or loop only, so its "
                "gradient is made inside it, where a traced implicit gradient cannot hand it "
                "out; read the Variable into a name before the statement (w = model.w) and use "
                "the name inside")
        sink = current_sink()
        if sink is None:
            raise StateError(
                f"a gradient reached {value.state_label()} through an attribute or a global, "
                "where autotrace.grad returns none; use autotrace.implicit_grad(f) for the "
                "gradients of the Variables f reads, or pass the values as arguments")
        sink.add(value, gradient)
    elif isinstance(value, (tuple, list)) and isinstance(gradient, (tuple, list)):
        for item, item_gradient in zip(value, gradient):
            deposit(item, item_gradient)
    elif isinstance(value, dict) and isinstance(gradient, dict):
        for key, item_gradient in gradient.items():
            if key in value:
                deposit(value[key], item_gradient)
