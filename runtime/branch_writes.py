"""Python numbers in objects' state written inside a traced `if` or loop.

    class Counter:
        def up(self, v):
            self.n += 1.0
            return v
    def f(x):
        if np.sum(x) > 0:          # traced: both branches run while tracing
            y = counter.up(x[0])
        else:
            y = x[1]
        return y + counter.n       # NumPy reads 1.0 only where the sum is positive

autotrace.function traces both branches of an `if` on a traced value and a loop's body once,
and Python runs each write they make into the state of an object (`self.n += 1.0`, an item of
a dict an object or a global holds) while tracing, as tf.function runs Python side effects. A
Python number is the same for every call of the graph: it cannot hold what the branch taken,
or the number of iterations, leaves when the graph runs.

So around each traced `if` (`BranchNumbers`), the Python numbers of the trace's state
(object_slots `_Trace.before`: attributes, items of dicts and lists, globals, closure
variables, NumPy scalars among them) are taken before the branches, and each branch is traced
from them: the second branch does not see what the first wrote. Where the two branches leave
a number different, the `if` is refused (BranchStateError, naming the user's line, the number
and what to write instead); where they leave it the same (`self.calls += 1` in a layer both
branches call), it keeps that value. Around a traced loop's body (`loop_numbers_watched`), a
number the body changes is refused at the loop. Nothing but the user's own values is ever put
into their state. Bools (a layer's `self.built = True`) are left as they are; numbers a branch
replaces by a traced value are object_slots' to refuse.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from itertools import islice

import numpy as np

from .object_slots import ObjectStateError, _traces
from .object_walk import MAX_ITEMS, Slot, load, store

_GONE = object()

_ADVICE = (
    "Keep {label} in an autotrace.Variable ({label} = autotrace.Variable({value!r}) where it is "
    "made, {label}.assign_add(...) where it changes){instead}")

_BRANCHES = (
    "{site}: the two branches of this {statement} on a traced value{code} leave different "
    "Python numbers in {label} ({first!r} and {second!r}): autotrace traces both branches, running "
    "their writes into Python values while tracing, and a Python number cannot hold what the "
    "branch the graph takes on each call leaves. ")

_LOOP = (
    "{site}: the body of this {statement} on a traced value{code} changes the Python number "
    "{label} "
    "(from {first!r} to {second!r}): autotrace traces the body once, and the number of "
    "iterations is known only when the graph runs, so a Python number cannot follow it. ")


class BranchStateError(ObjectStateError):
    """A Python number of an object's state that a traced `if` leaves different on its two
    paths, or that a traced loop's body changes."""


def _is_number(value) -> bool:
    """A Python or NumPy number (not a bool: a flag such as `self.built` is no counter)."""
    kind = type(value)
    return kind in (int, float, complex) or (
        isinstance(value, np.generic) and kind is not np.bool_ and
        np.issubdtype(kind, np.number))


def _numbers(trace) -> list:
    """The slots of the trace's state that held a number when it began, the items of its
    lists among them (which object_walk makes no slots of)."""
    if trace.numbers is None:
        trace.numbers = [slot for slot in trace.before
                         if _is_number(slot.value) and
                         slot.step[0] in ("attr", "item", "global", "cell") and
                         not isinstance(slot.container, tuple)]
        trace.numbers += [
            Slot(slot.value, ("item", index), item, slot.path + (("item", index),), slot.root,
                 slot.owners)
            for slot in trace.before if type(slot.value) is list
            for index, item in enumerate(islice(slot.value, MAX_ITEMS))
            if _is_number(item)]
    return trace.numbers


def _now(slot):
    try:
        return load(slot.container, slot.step)
    except (LookupError, AttributeError, TypeError):
        return _GONE


def _differ(old, new) -> bool:
    """Whether two numbers differ in type or value (NaN is the same as NaN)."""
    if old is new:
        return False
    return type(old) is not type(new) or not (old == new or (old != old and new != new))


def _refusal(template: str, where: str, statement: str, slot, first, second, start,
             instead: str) -> BranchStateError:
    path, colon, rest = where.partition(":")
    line, _, code = rest.partition(": ")
    message = template.format(site=os.path.basename(path) + colon + line, statement=statement,
                              code=f" ({code.strip()})" if code.strip() else "",
                              label=slot.label, first=first, second=second)
    return BranchStateError(message + _ADVICE.format(label=slot.label, value=start,
                                                     instead=instead))


class BranchNumbers:
    """The numbers of the trace's state around one traced `if` (see the module docstring):
    `with numbers.branch(side):` around the trace of each branch, `numbers.check()` after
    both."""

    def __init__(self, where: str, statement: str):
        trace = _traces.top()
        self.where, self.statement = where, statement
        self.slots = _numbers(trace) if trace is not None else []
        self.start = [_now(slot) for slot in self.slots]
        self.left: dict = {}  # side -> what the branch left in each slot

    def _restore(self) -> None:
        for slot, old in zip(self.slots, self.start):
            now = _now(slot)
            if _is_number(old) and _is_number(now) and _differ(old, now):
                store(slot.container, slot.step, old)

    @contextmanager
    def branch(self, side: bool):
        """Trace a branch from the numbers as they were before the `if`."""
        self._restore()
        yield
        self.left[side] = [_now(slot) for slot in self.slots]

    def check(self) -> None:
        """Refuse a number the two branches leave different; one they leave the same keeps
        that value."""
        if True not in self.left or False not in self.left:
            return
        for slot, old, first, second in zip(self.slots, self.start, self.left[True],
                                            self.left[False]):
            if _is_number(first) and _is_number(second) and _differ(first, second):
                self._restore()  # (the numbers as they were before the refused statement)
                raise _refusal(_BRANCHES, self.where, self.statement, slot, first, second, old,
                               ", or compute the new value with np.where(condition, new, old) "
                               f"and write it after the {self.statement}")


@contextmanager
def loop_numbers_watched(where: str, statement: str):
    """Around the trace of a loop's body (`where`: the user's line of the loop): refuse a
    number of the trace's state the body changes."""
    trace = _traces.top()
    slots = _numbers(trace) if trace is not None else []
    before = [_now(slot) for slot in slots]
    yield
    for slot, old in zip(slots, before):
        new = _now(slot)
        if _is_number(old) and _is_number(new) and _differ(old, new):
            store(slot.container, slot.step, old)
            raise _refusal(_LOOP, where, statement, slot, old, new, old,
                           ", or carry it through the loop as a variable of the function "
                           "and write it after the loop")
