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
    pending, seen = list(values), set()
    while pending:
        value = pending.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        yield value
        if isinstance(value, (list, tuple)):
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
        elif is_users_object(value):
            pending.extend(attributes(value))


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
    write into one may reach."""
    objects = [value for value in held_values(values) if is_users_object(value)]
    return [value for value in held_values([attributes(obj) for obj in objects])
            if type(value) is np.ndarray]


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
