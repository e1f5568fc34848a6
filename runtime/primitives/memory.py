"""Facts about NumPy's memory that the checks of writes into shared memory rest on: which object
owns an array's memory, how many references a container alone gives an item, and what a value
holds (`held_values`: the items of its lists, tuples and dicts, the attributes of the user's
objects).
"""
from __future__ import annotations

import sys
import weakref

import numpy as np


def memory_owner(array):
    """The object that owns the memory of a NumPy array: the array itself, or what its chain of
    bases ends in (an array, or a buffer: bytes, an mmap, the object a memoryview is of),
    through objects that are no arrays too (np.lib.stride_tricks.as_strided keeps its array
    as the base of an object of its own). Arrays with different owners share no memory."""
    while True:
        base = array.obj if isinstance(array, memoryview) else getattr(array, "base", None)
        if base is None:
            return array
        array = base


def _references_in_a_container() -> int:
    """The references sys.getrefcount counts for an item a container alone holds, read as
    `item = container[key]` in a function, then `sys.getrefcount(item)` (the container's, the
    local name's, the call's argument's): measured, since Python versions count them
    differently."""
    container = [object()]
    item = container[0]
    return sys.getrefcount(item)


# Where an item read so has no more references, nothing but its container holds it.
ONLY_THE_CONTAINERS = _references_in_a_container()


def held_values(values):
    """The values in `values` and all they hold, each once: items of lists, tuples and dicts,
    attributes of objects of classes that are not NumPy's, autotrace's or Python's."""
    pending, seen = [iter(values)], set()  # (iterators: a long list is not copied)
    while pending:
        value = next(pending[-1], _DONE)
        if value is _DONE:
            pending.pop()
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        yield value
        if isinstance(value, (list, tuple)):
            pending.append(iter(value))
        elif isinstance(value, dict):
            pending.append(iter(value.values()))
        elif is_users_object(value):
            pending.append(iter(attributes(value)))


_DONE = object()


def holds_no_arrays(value) -> bool:
    """Whether `value` surely holds no other array (nor a view of one) as an item or an
    attribute: a NumPy array of numbers, a traced value, a number. A write into another array
    then changes `value` only where `value` is that array, or a view of its memory."""
    if getattr(value, "_builder", None) is not None:  # a traced value
        return True
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype != object
    return value is None or isinstance(value, (bool, int, float, complex))


def is_users_object(value) -> bool:
    """Whether `value` is an object of a class of the user's (with a __dict__ or __slots__)."""
    module = (getattr(type(value), "__module__", None) or "").split(".")[0]
    return module not in _LIBRARIES and not isinstance(value, type) and (
        hasattr(value, "__dict__") or _slots(type(value)))


def attributes(value) -> list:
    """The values of an object's attributes: its __dict__'s, and its __slots__' that are set."""
    found = list(vars(value).values()) if hasattr(value, "__dict__") else []
    for slot in _slots(type(value)):
        if slot not in ("__dict__", "__weakref__") and hasattr(value, slot):
            found.append(getattr(value, slot))
    return found


def _slots(kind) -> tuple:
    names = []
    for klass in kind.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return tuple(names)


_LIBRARIES = {"numpy", "cupy", "autotrace", "runtime", "transforms", "builtins", "types"}


def object_held_arrays(values) -> list:
    """The NumPy arrays that the user's objects in `values` (or in their lists, tuples and
    dicts) hold: not arguments of a trace themselves (those are its array leaves), but memory a
    write into one may reach. A traced call whose trace asked looks for them on every call, so
    the walk is kept short: no list of more than _NUMBERS items whose first and last are
    numbers (an object's data), and at most _HELD_BUDGET values."""
    found, seen, budget = [], set(), [_HELD_BUDGET]

    def visit(value, held: bool) -> None:
        if budget[0] <= 0 or (id(value), held) in seen:
            return
        budget[0] -= 1
        seen.add((id(value), held))
        if type(value) is np.ndarray:
            if held:
                found.append(value)
        elif isinstance(value, (list, tuple)):
            if len(value) > _NUMBERS and isinstance(value[0], _PLAIN) and \
                    isinstance(value[-1], _PLAIN):
                return
            for item in value:
                visit(item, held)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item, held)
        elif is_users_object(value):
            for item in attributes(value):
                visit(item, True)
    for value in values:
        visit(value, False)
    return found


_HELD_BUDGET = 4096
_NUMBERS = 16
_PLAIN = (int, float, complex)


# id(array) -> (a weak reference to it, the overlaps tokens of the traced arguments sharing its
# memory): NumPy arrays that objects among a trace's arguments hold (note_held_overlap)
_HELD: dict = {}


def note_held_overlap(array: np.ndarray, token) -> None:
    """Note that the NumPy array `array`, which an object argument of a trace holds, shares
    memory with the traced arguments whose memory has the overlaps token `token`
    (runtime/tracing/views.py Memory)."""
    key = id(array)
    entry = _HELD.get(key)
    if entry is None or entry[0]() is not array:
        entry = _HELD[key] = (weakref.ref(array, lambda ref, key=key: _forget(key, ref)),
                              set())
    entry[1].add(token)


def _forget(key: int, ref) -> None:
    if key in _HELD and _HELD[key][0] is ref:
        del _HELD[key]


def held_overlaps(array: np.ndarray) -> frozenset | None:
    """The overlaps tokens noted for `array` (note_held_overlap), or None."""
    entry = _HELD.get(id(array))
    return frozenset(entry[1]) if entry is not None and entry[0]() is array else None


# In the refusal of a traced write that the source showed no other name sharing, the place of
# the name found sharing it when the write runs (transforms/control_flow/concrete_writes.py,
# runtime/tracing/control_concrete_arrays.py).
OTHER_NAME = "\x00other\x00"
