"""A call run again by a derivative of a derivative, from the object state it first saw.

A derivative of a derivative runs a called method's derivative whole where its adjoint sweep
needs it, after the call itself ran (as a forward derivative, or the primal sweep of one run in
halves). A method that writes into its object's state (a counter, a cache, a parameter made on
the first call, running statistics) would then see the state the first run left and write it
again. So generated code notes the state before such a call, and runs the call again with that
state back:

    _written1 = state_writes_log()          before the call: writes from here are noted
    _t1, d_t1 = jvp_call(layer.forward, ...)   the call: its writes go through write_state
    ...
    with state_as_at(_written1):            the state before the call, for the recomputation
        bx = vjp_call(layer.forward, ...)
    with state_as_at(_written1):            (each recomputation in a `with` of its own)
        dbx = vjp_call_tangent(layer.forward, ...)

`state_as_at` takes back every write noted since the log began (the call's, and those after
it), runs its block, takes back the block's writes, and puts back what the slots held when it
began: the block changes no state. A slot the block writes that the log never noted was
written by code that wrote it plainly, unnoted (the call's first run, where it ran as written):
the block then saw the state the first run left, so it is refused (`StateWriteError`), as the
write of a derivative that runs its function twice is where no `state_as_at` is open.

A draw in the call (a dropout mask from np.random.rand, random.random(), a generator the callee
or its arguments reach) would give other numbers in the recomputation, whose derivative would
then be that of another draw than the value's. So the log also notes, when it begins, the
random states the call can draw from (`state_writes_log(random_states(g, (x,), {}))`:
NumPy's and Python's global ones and the generators the callee and its arguments reach;
random_states.py), and `state_as_at` runs its block from them, putting back afterwards the
states they hold then.
Where those may not be all the call draws from (a generator made in the call, one held where
the walk cannot see it), `state_as_at` first runs the call twice from them, putting back what
each run writes, and refuses values that differ (random_states.py `refuse_other_draws_again`):
a generator made without a seed draws from the system's entropy, which no state holds.
"""
from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager

from .objects import ObjectGradient, StateWriteError, recomputation
from .random_states import RandomStates, random_states, refuse_other_draws_again, same_draws
from .structure import add
from ..scopes import TraceRecord
from ..state import cells_as_of, cells_now

_ABSENT = object()  # a slot that held nothing: an attribute or a key not there yet
_UNDOABLE = object()  # a container changed by a method, whose contents cannot be copied


class StateLog(TraceRecord):
    """The writes noted since it began: (owner, kind, key, what the slot held before, where)
    in order, kind "." for an attribute, "[" for an item, "*" for a container's contents."""

    __slots__ = ("entries", "barrier", "draws", "cells", "__weakref__")

    def __init__(self, barrier: bool = False, draws: RandomStates | None = None):
        self.entries: list = []
        self.barrier = barrier  # a recomputation's: the logs begun before it note nothing
        self.draws = draws  # the random states when it began, for the recomputation
        self.cells = cells_now()  # (while tracing: the trace's cells, for the recomputation)

    def same_in_graph(self, other) -> bool:
        """Two logs that noted no write are one loop or branch value; a call in a traced loop
        or branch that writes objects' state is refused there (its writes would be noted once,
        while the body was traced, and read back for every iteration)."""
        return type(other) is type(self) and not self.entries and not other.entries

    def refusal(self, other, statement: str) -> str:
        entries = self.entries or getattr(other, "entries", None)
        what = ""
        if entries:
            owner, kind, key, _, where = entries[0]
            slot = {".": f"attribute {key!r}", "[": f"item {key!r}"}.get(kind, "the contents")
            what = f" ({slot} of a {type(owner).__name__}" + (f", written at {where})"
                                                              if where else ")")
        return (f"a call in this {statement} writes into an object's state{what}, and "
                f"autotrace cannot trace a second derivative (a derivative of a derivative "
                f"under autotrace.function) of a call that writes state inside a traced loop "
                f"or if: its writes would be noted once, while the body is traced, and read "
                f"back for every run of it. Move the state write (or the call) out of the "
                f"{statement}, or take the second derivative eagerly: autotrace.hessian(f) "
                f"without autotrace.function")

    def take_back(self) -> None:
        """Put back what each noted slot held before its first noted write."""
        for owner, kind, key, held, where in reversed(self.entries):
            _put(owner, kind, key, held, where)


class _Logs(threading.local):
    def __init__(self):
        self.open: list = []  # weak references to the StateLogs noting writes, innermost last


_logs = _Logs()


class _Reruns(threading.local):
    def __init__(self):
        self.depth = 0  # the `writes_refused` blocks running in this thread


_reruns = _Reruns()


def running_again() -> bool:
    """Whether a `writes_refused` block is running in this thread: a call run again."""
    return bool(_reruns.depth)


def innermost_log():
    """The log begun last of those generated code still holds, or None: that of a call that
    begins now, where a derivative of a derivative notes its writes (`_written1 =
    state_writes_log()` right before it)."""
    for reference in reversed(_logs.open):
        log = reference()
        if log is not None:
            return None if log.barrier else log
    return None


def state_writes_log(draws: RandomStates | None = None) -> StateLog:
    """A log of the writes into objects' state from now on, for `state_as_at`; it notes them
    while generated code holds it. It holds the random states the call can draw from too,
    `draws` (random_states.py `random_states`; the global ones where not given)."""
    log = StateLog(draws=random_states(()) if draws is None else draws)
    _logs.open.append(weakref.ref(log))
    return log


def note_write(owner, kind: str, key=None, where: str = "") -> None:
    """Note, in each open log, what the slot (`owner`'s attribute or item `key`, or with kind
    "*" `owner`'s contents) holds before a write changes it."""
    if not _logs.open:
        return
    logs = []
    for reference in reversed(_logs.open):
        log = reference()
        if log is not None:
            logs.append(log)
            if log.barrier:
                break
    _logs.open[:] = [reference for reference in _logs.open if reference() is not None]
    if logs:
        held = _held(owner, kind, key)
        for log in logs:
            log.entries.append((owner, kind, key, held, where))


@contextmanager
def writes_refused(message):
    """Run the block, which runs again a call that ran as written before it; where the block
    writes into an object's state, the writes are taken back and StateWriteError is raised
    (`where: message()`): the call's first run made that write, so the block saw what it
    wrote. (A tangent's ObjectGradient, written by derivatives alone, is no object's state.)"""
    log = StateLog()
    _logs.open.append(weakref.ref(log))
    _reruns.depth += 1
    try:
        yield
    finally:
        _reruns.depth -= 1
        _logs.open[:] = [reference for reference in _logs.open
                         if reference() is not None and reference() is not log]
    written = [entry for entry in log.entries if type(entry[0]) is not ObjectGradient]
    if written:
        log.take_back()
        raise StateWriteError(f"{written[0][4]}: {message()}")


@contextmanager
def state_as_at(log: StateLog):
    """Run the block with the state as it was when `log` began (see the module docstring)."""
    now = [(owner, kind, key, _held(owner, kind, key), where)
           for owner, kind, key, _, where in _first_of_each(log.entries)]
    noted = {(id(owner), kind, key) for owner, kind, key, _, _ in now}
    log.take_back()
    recomputed = StateLog(barrier=True)
    _logs.open.append(weakref.ref(recomputed))
    try:
        refuse_other_draws_again(log.draws, lambda: _take_back_all(recomputed, log))
        with recomputation(log), same_draws(log.draws), cells_as_of(log.cells):
            yield
        for owner, kind, key, _, where in recomputed.entries:
            # (a tangent's ObjectGradient is written by derivatives alone, always noted: one
            # the first run did not write is the recomputation's own)
            if (id(owner), kind, key) not in noted and type(owner) is not ObjectGradient:
                raise StateWriteError(
                    f"{where}: autotrace cannot differentiate this write into an object's "
                    "state here: a derivative of a derivative runs the call that makes it "
                    "again, and its first run wrote the state unnoted (it ran as written, not "
                    "as a derivative), so the second run would see what the first one wrote. "
                    "Take the derivative of a function that calls it directly, or keep the "
                    "state out of the differentiated call")
    finally:
        _logs.open[:] = [reference for reference in _logs.open
                         if reference() is not None and reference() is not recomputed]
        recomputed.take_back()
        for owner, kind, key, held, where in now:
            _put(owner, kind, key, held, where)


def _take_back_all(recomputed: StateLog, log: StateLog) -> None:
    """Put back what a run of the call in a `state_as_at` block wrote: the slots its first run
    wrote (noted in `log`), and those `recomputed` noted."""
    recomputed.take_back()
    recomputed.entries.clear()
    log.take_back()


def _first_of_each(entries: list) -> list:
    seen, first = set(), []
    for entry in entries:
        slot = (id(entry[0]), entry[1], entry[2])
        if slot not in seen:
            seen.add(slot)
            first.append(entry)
    return first


def _held(owner, kind: str, key):
    if kind == ".":
        return getattr(owner, key, _ABSENT)
    if kind == "[":
        try:
            return owner[key]
        except (KeyError, IndexError):
            return _ABSENT
    if isinstance(owner, (list, dict, set)):
        return type(owner)(owner)
    return _UNDOABLE


def _put(owner, kind: str, key, held, where: str) -> None:
    if kind == ".":
        if held is _ABSENT:
            if hasattr(owner, key):
                delattr(owner, key)
        else:
            setattr(owner, key, held)
    elif kind == "[":
        if held is _ABSENT:
            if isinstance(owner, dict):
                owner.pop(key, None)
        else:
            owner[key] = held
    elif held is _UNDOABLE:
        raise StateWriteError(
            f"{where}: autotrace cannot differentiate this change of a "
            f"{type(owner).__name__} in an object's state here: a derivative of a derivative "
            "runs the call that makes it again, which needs what it held before, and autotrace "
            "copies lists, dicts and sets only")
    elif isinstance(owner, list):
        owner[:] = held
    else:
        owner.clear()
        owner.update(held)


def add_recomputed(gradient, recomputed):
    """The gradient of an object as of before a call that a derivative of a derivative runs
    again in a `state_as_at` block: `gradient`, what the call's adjoint hands back (None:
    none), plus `recomputed`, what the block gives the object, which is a gradient of that
    state too, held apart from the gradient after the call until here
    (transforms/reverse/reverse_control.py `held_apart`), so no longer marked as made in a
    recomputation (ObjectGradient's `recomputed`). Both are of the state before the call, so
    neither is a caller's gradient after it (`add`'s reading of two ObjectGradients): they
    are summed slot by slot."""
    return _not_recomputed(_summed(gradient, recomputed))


def _summed(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, ObjectGradient) and isinstance(b, ObjectGradient):
        out = ObjectGradient(a)
        out.written = a.written | b.written
        for key, value in b.items():
            out[key] = _summed(out.get(key), value)
        return out
    return add(a, b)


def _not_recomputed(gradient):
    if isinstance(gradient, ObjectGradient):
        out = ObjectGradient((key, _not_recomputed(value)) for key, value in gradient.items())
        out.written, out.recomputed = gradient.written, frozenset()
        return out
    return gradient
