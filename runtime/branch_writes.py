"""Python values in objects' state written inside a traced `if` or loop.

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
Python value is the same for every call of the graph: it cannot hold what the branch taken,
or the number of iterations, leaves when the graph runs.

So around each traced `if` (`BranchNumbers`), the Python values of the trace's state
(object_slots `_Trace.before`: the attributes of the user's objects, items of dicts and
lists, globals, closure variables) are taken before the branches, and each branch is traced
from them: the second branch does not see the plain data the first wrote, set or deleted.
Plain data (numbers, strings, bytes, None, bools, NumPy scalars and arrays, and tuples,
lists, dicts and dataclasses of plain data) is compared by what it holds, recursively, with
no user's `__eq__` run: where the two branches leave it different (set on one path only
counts as different), the `if` is refused (BranchStateError, naming the user's line, the
value and what to write instead); where they leave it alike (`self.calls += 1`, a new
`dict(training=training)` in a layer both branches call), it keeps that value. Other objects
(a Variable, a layer, a function made lazily on a first call) are not compared: one the first
branch makes stays for the second, and where both make one, the first's stays; only plain
data on one path and such an object on the other counts as different. A layer building
itself (not yet `built`, Keras's and autotrace.Module's convention, or given a new attribute
holding such an object in a branch: its Variables made under an `is_built` flag of its own)
builds once, while the branch that first calls it is traced: only the numbers of its state
are watched. Around a traced loop's body (`loop_numbers_watched`), plain data the body
changes, or sets where nothing was (but a dict's key, a memo: `cache[n] = np.arange(n)`, or
an array), is refused at the loop. Nothing but the user's own values is ever put into their
state; values holding traced values are object_slots' to refuse.
"""
from __future__ import annotations

import collections
import dataclasses
import os
from contextlib import contextmanager
from itertools import islice

import numpy as np

from .object_slots import ObjectStateError, _holds_tracer, _traces
from .object_walk import MAX_ITEMS, Slot, is_user_object, load, store

_GONE = object()  # what a place holds where the attribute, item or variable is not set
_DICTS = (dict, collections.Counter, collections.OrderedDict, collections.defaultdict)

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

_BRANCHES_VALUES = (
    "{site}: the two branches of this {statement} on a traced value{code} leave {label} "
    "different ({first} and {second}): autotrace traces both branches, running their writes "
    "into Python values while tracing, and a Python value cannot hold what the branch the "
    "graph takes on each call leaves. Set {label} alike on both paths, or compute what it "
    "holds as an array (np.where(condition, new, old)) and write it after the {statement}")

_LOOP_VALUES = (
    "{site}: the body of this {statement} on a traced value{code} changes {label} (from "
    "{first} to {second}): autotrace traces the body once, and the number of iterations is "
    "known only when the graph runs, so a Python value cannot follow it. Set {label} before "
    "the loop, or carry what it holds through the loop as a variable of the function and "
    "write it after the loop")

_SHOWN = 60  # characters of a value's repr a message shows
_ATOMS = (bool, int, float, complex, str, bytes)
_DEPTH = 6  # levels of containers plain data may nest


class BranchStateError(ObjectStateError):
    """A Python value of an object's state that a traced `if` leaves different on its two
    paths, or that a traced loop's body changes."""


def _is_number(value) -> bool:
    """A Python or NumPy number (not a bool)."""
    kind = type(value)
    return kind in (int, float, complex) or (
        isinstance(value, np.generic) and kind is not np.bool_ and
        np.issubdtype(kind, np.number))


def _plain(value, depth: int = 0) -> bool:
    """Whether `value` is plain data, compared by what it holds: None, bools, numbers, strings,
    bytes, NumPy scalars and dtypes, arrays (not of objects), and tuples, lists, dicts and
    dataclasses whose contents are plain data. Variables, layers, functions and other objects
    are not (a branch or loop body making one keeps it, as a layer built while traced)."""
    kind = type(value)
    if value is None or kind in _ATOMS or isinstance(value, (np.generic, np.dtype)):
        return True
    if kind is np.ndarray:
        return value.dtype != object
    if depth >= _DEPTH:
        return False
    if kind in (tuple, list):
        return len(value) <= MAX_ITEMS and all(_plain(item, depth + 1) for item in value)
    if kind is dict:
        return len(value) <= MAX_ITEMS and all(
            _plain(key, depth + 1) and _plain(item, depth + 1) for key, item in value.items())
    return _is_dataclass(value) and all(
        _plain(item, depth + 1) for item in _fields(value))


def _alike(old, new) -> bool:
    """Whether two values of plain data hold the same: numbers, bools, strings, bytes and None
    of one type and value (NaN is NaN), arrays of one dtype, shape and contents, tuples, lists,
    dicts and dataclasses of alike contents (no user's `__eq__` runs); any other object only
    itself."""
    if old is new:
        return True
    kind = type(old)
    if kind is not type(new):
        return False
    if kind in _ATOMS or isinstance(old, np.generic):
        return bool(old == new) or (old != old and new != new)
    if isinstance(old, np.dtype):
        return old == new
    if kind in (tuple, list):
        return len(old) == len(new) and all(map(_alike, old, new))
    if kind is dict:
        return list(old) == list(new) and all(_alike(old[key], new[key]) for key in old)
    if kind is np.ndarray:
        return old.dtype == new.dtype and old.shape == new.shape and \
            old.dtype != object and old.tobytes() == new.tobytes()
    return _is_dataclass(old) and all(map(_alike, _fields(old), _fields(new)))


def _differ(first, second) -> bool:
    """Whether two values of one place count as different: plain data is compared by what it
    holds, plain data and another object (or nothing) differ; two objects that are not plain
    data (a layer made on each path, a Variable, a function) are not compared."""
    first_plain, second_plain = _plain(first), _plain(second)
    if first_plain and second_plain:
        return not _alike(first, second)
    return first_plain or second_plain


def _is_dataclass(value) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _fields(value) -> list:
    return [getattr(value, field.name, _GONE) for field in dataclasses.fields(value)]


def _is_object(value) -> bool:
    """A value set that is not plain data (a layer, a Variable, a function)."""
    return value is not _GONE and not _plain(value)


def _shown(value) -> str:
    if value is _GONE:
        return "not set"
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN - 3] + "..."


class _Watched:
    """The places of a trace's state a branch or loop body may write: the attributes of the
    user's objects and the items of dicts (`mappings`: (mapping, kind, label), keys added and
    removed among them), globals, closure variables and the items of lists (`slots`)."""

    def __init__(self, trace):
        self.mappings, self.slots, seen = [], [], set()
        # The places of layers not yet built (_unbuilt), where numbers alone are watched:
        # mapping indexes, and ("slot", index) for slots.
        self.building: set = set()

        def add(mapping, kind, label, building):
            if id(mapping) not in seen:
                seen.add(id(mapping))
                if building:
                    self.building.add(len(self.mappings))
                self.mappings.append((mapping, kind, label))
        for root in trace.roots:
            if is_user_object(root.value):
                add(root.value, "attr", root.label, _unbuilt(root.value))
        for slot in trace.before:
            if slot.step[0] not in ("attr", "item", "global", "cell"):
                continue
            value, building = slot.value, any(map(_unbuilt, slot.owners))
            if is_user_object(value):
                add(value, "attr", slot.label, building or _unbuilt(value))
            elif type(value) in _DICTS:
                add(value, "item", slot.label, building)
            elif type(value) is list:
                if building:
                    self.building.update(("slot", len(self.slots) + index) for index in
                                         range(min(len(value), MAX_ITEMS)))
                self.slots += [
                    Slot(value, ("item", index), item, slot.path + (("item", index),),
                         slot.root, slot.owners)
                    for index, item in enumerate(islice(value, MAX_ITEMS))]
            if slot.step[0] in ("global", "cell"):
                if building:
                    self.building.add(("slot", len(self.slots)))
                self.slots.append(slot)

    def taken(self) -> dict:
        """place -> what it holds now ((mapping index, key), or (None, slot index))."""
        held = {}
        for index, (mapping, kind, _) in enumerate(self.mappings):
            items = vars(mapping) if kind == "attr" else mapping
            held.update(((index, key), value)
                        for key, value in islice(list(items.items()), MAX_ITEMS))
        for index, slot in enumerate(self.slots):
            held[None, index] = _now(slot)
        return held

    def label(self, place) -> str:
        index, key = place
        if index is None:
            return self.slots[key].label
        _, kind, label = self.mappings[index]
        return f"{label}.{key}" if kind == "attr" else f"{label}[{key!r}]"

    def put(self, place, value) -> None:
        """Make `place` hold `value` (_GONE: remove it)."""
        index, key = place
        if index is None:
            slot = self.slots[key]
            if value is not _GONE:
                store(slot.container, slot.step, value)
            elif _now(slot) is not _GONE:
                slot.delete()
            return
        mapping, kind, _ = self.mappings[index]
        if kind == "attr":
            if value is not _GONE:
                setattr(mapping, key, value)
            elif key in vars(mapping):
                delattr(mapping, key)
        elif value is not _GONE:
            mapping[key] = value
        else:
            mapping.pop(key, None)

    def changes(self, before: dict, after: dict, growing=frozenset()) -> list:
        """(place, before, after) for each place whose value differs, neither holding a
        traced value (object_slots.py refuses those); in a layer building itself (not yet
        built, or one of the mappings `growing`) numbers only."""
        found = []
        for place in before.keys() | after.keys():
            old, new = before.get(place, _GONE), after.get(place, _GONE)
            if old is not new and not _holds_tracer(old) and not _holds_tracer(new) and (
                    _is_number(old) and _is_number(new) or
                    not self._building(place, growing)):
                found.append((place, old, new))
        return found

    def _building(self, place, growing) -> bool:
        index, key = place
        return (index if index is not None else ("slot", key)) in self.building or \
            index in growing

    def growing(self, before: dict, after: dict) -> set:
        """The objects and dicts given a new attribute or key holding an object that is not
        plain data between `before` and `after`: a layer building itself on its first call
        (its Variables made, a flag `is_built` of its own set), whose numbers alone are
        watched."""
        return {place[0] for place, old, new in self.changes(before, after)
                if place[0] is not None and old is _GONE and _is_object(new)}

    def is_memo(self, place) -> bool:
        """Whether `place` is an item of a dict (not an attribute, a global, a list's item,
        nor an item of a Counter or defaultdict, whose new keys count from a default)."""
        if place[0] is None:
            return False
        mapping, kind, _ = self.mappings[place[0]]
        return kind == "item" and type(mapping) in (dict, collections.OrderedDict)

    def restore(self, start: dict, keep_objects: bool = False, growing=frozenset()) -> None:
        """Put back what the places held at `start`; with `keep_objects`, not the objects
        that are not plain data set since (a layer or Variable made stays, as one traced
        branch made it) nor what the layers building themselves (`growing`) set but numbers."""
        for place, _, new in self.changes(start, self.taken(), growing):
            if not (keep_objects and _is_object(new)):
                self.put(place, start.get(place, _GONE))


def _unbuilt(value) -> bool:
    """Whether `value` is an object of the user's that builds itself on its first call and has
    not yet (`built` False, as Keras's layers and autotrace.Module keep it): a layer first
    called in both branches builds once, while the first is traced (built again from its
    state before the `if`, it would make its weights and Variables twice); only the numbers
    of its state (a count of calls) are watched."""
    return is_user_object(value) and vars(value).get("built") is False


def _watched(trace) -> _Watched:
    if trace.watched is None:
        trace.watched = _Watched(trace)
    return trace.watched


def _now(slot):
    try:
        return load(slot.container, slot.step)
    except (LookupError, AttributeError, TypeError, ValueError):
        return _GONE


def _refusal(numbers: str, values: str, where: str, statement: str, label: str, first,
             second, start, instead: str) -> BranchStateError:
    path, colon, rest = where.partition(":")
    line, _, code = rest.partition(": ")
    fields = dict(site=os.path.basename(path) + colon + line, statement=statement,
                  code=f" ({code.strip()})" if code.strip() else "", label=label)
    if _is_number(first) and _is_number(second):
        return BranchStateError(
            numbers.format(first=first, second=second, **fields) +
            _ADVICE.format(label=label, value=start, instead=instead))
    return BranchStateError(values.format(first=_shown(first), second=_shown(second),
                                          **fields))


def _ordered(changes: list, watched: _Watched) -> list:
    """`changes` in the order of the places' labels (the first refused is always the same)."""
    return sorted(changes, key=lambda change: watched.label(change[0]))


class BranchNumbers:
    """The Python values of the trace's state around one traced `if` (see the module
    docstring): `with numbers.branch(side):` around the trace of each branch,
    `numbers.check()` after both."""

    def __init__(self, where: str, statement: str):
        trace = _traces.top()
        self.where, self.statement = where, statement
        self.watched = _watched(trace) if trace is not None else None
        self.start = self.watched.taken() if self.watched is not None else {}
        self.left: dict = {}  # side -> what the branch left in each place
        self.growing: set = set()  # the layers building themselves in a branch (_Watched)

    @contextmanager
    def branch(self, side: bool):
        """Trace a branch from the values as they were before the `if`."""
        if self.watched is None:
            yield
            return
        self.watched.restore(self.start, keep_objects=True, growing=self.growing)
        yield
        self.left[side] = self.watched.taken()
        self.growing |= self.watched.growing(self.start, self.left[side])

    def check(self) -> None:
        """Refuse a value the two branches leave different; one they leave the same keeps
        that value."""
        if True not in self.left or False not in self.left:
            return
        changes = self.watched.changes(self.left[True], self.left[False], self.growing)
        different = [change for change in changes if _differ(change[1], change[2])]
        if different:
            place, first, second = _ordered(different, self.watched)[0]
            self.watched.restore(self.start)  # (the values as before the refused statement)
            raise _refusal(_BRANCHES, _BRANCHES_VALUES, self.where, self.statement,
                           self.watched.label(place), first, second,
                           self.start.get(place, _GONE),
                           ", or compute the new value with np.where(condition, new, old) "
                           f"and write it after the {self.statement}")
        for place, first, second in changes:  # the then-branch's objects stay
            if _is_object(first):
                self.watched.put(place, first)


@contextmanager
def loop_numbers_watched(where: str, statement: str):
    """Around the trace of a loop's body (`where`: the user's line of the loop): refuse a
    value of the trace's state the body changes."""
    trace = _traces.top()
    if trace is None:
        yield
        return
    watched = _watched(trace)
    before = watched.taken()
    yield
    after = watched.taken()
    # A key the body adds to a dict (a memo: `cache[n] = np.arange(n)`) or an array it keeps
    # where nothing was (`self.row = rows[:3]`) is allowed, as an object made (a layer built,
    # a Variable) is: the body writes it alike each time.
    changed = [change for change in watched.changes(before, after,
                                                    watched.growing(before, after))
               if _differ(change[1], change[2]) and not (change[1] is _GONE and (
                   watched.is_memo(change[0]) or type(change[2]) is np.ndarray))]
    if changed:
        place, old, new = _ordered(changed, watched)[0]
        watched.restore(before)
        raise _refusal(_LOOP, _LOOP_VALUES, where, statement, watched.label(place), old, new,
                       old, ", or carry it through the loop as a variable of the function "
                       "and write it after the loop")
