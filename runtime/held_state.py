"""Whether a value holds state cells (Variables): what implicit_grad follows to reach them.

`holds_state(value)` looks in containers, in an object's attributes (its own, its slots, and
its class's: `class M: w = Variable(...)` read as `self.w`), in a class's attributes, and in a
user's module's (followed to any depth, each object once). It runs on each call of a method
through a variable under implicit_grad (transforms/dynamic_calls.py), several times a step,
so the values most objects and classes hold (numbers, strings, arrays, functions, methods,
descriptors) are passed over by a set look-up of their exact type, a class's in one pass in C.
Nothing is cached: what a class holds is looked at on each call, so a Variable given to a
class after a step (`Model.w = Variable(...)`) is found on the next.
"""
from __future__ import annotations

import collections
import types
import weakref

import numpy as np

from .python_modules import is_standard_library
from .state import StateCell

_NO_STATE = (str, bytes, int, float, complex, bool, type(None), np.ndarray, np.generic,
             types.FunctionType, types.BuiltinFunctionType)
# What a class's attributes mostly are, none of which holds a cell: its methods and docstring.
_NO_CLASS_STATE = _NO_STATE + (staticmethod, classmethod, property, types.MemberDescriptorType,
                               types.GetSetDescriptorType)
# The exact types of most values an object or a class holds, none of which holds a cell:
# told apart in C by a set (`type(x) in`, `issuperset(map(type, ...))`), where `isinstance`
# against the tuples above, for an object that is none of them, asks each type in turn.
# holds_state runs on each call of a method through a variable under implicit_grad.
_PLAIN_TYPES = frozenset((str, bytes, int, float, complex, bool, type(None), np.ndarray,
                          np.float64, np.float32, np.int64, np.bool_, types.FunctionType,
                          types.BuiltinFunctionType))
_PLAIN_CLASS_TYPES = _PLAIN_TYPES | {
    staticmethod, classmethod, property, types.MemberDescriptorType, types.GetSetDescriptorType,
    types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType}
# The types of _NO_STATE that can be subclassed: what an object not of a plain type may still be
_NO_STATE_BASES = (str, bytes, int, float, complex, np.ndarray, np.generic)


def holds_state(value) -> bool:
    """Whether `value` is a cell or holds one: in a container, in an object's attributes (its
    own, its slots, and its class's), in a class's attributes, or in a module's (see the
    module docstring)."""
    if isinstance(value, StateCell):
        return True
    if type(value) in _PLAIN_TYPES:
        return False
    seen, classes = set(), []
    if _holds_state(value, seen, classes):
        return True
    # The classes met, last: their attributes seldom hold a cell, and are mostly methods.
    while classes:
        for klass in classes.pop().__mro__:
            if klass.__module__ == "builtins" or id(klass) in seen:
                continue
            seen.add(id(klass))
            attributes = vars(klass).values()
            if _PLAIN_CLASS_TYPES.issuperset(map(type, attributes)):
                continue
            for item in attributes:
                if type(item) not in _PLAIN_CLASS_TYPES and not isinstance(
                        item, _NO_CLASS_STATE) and _holds_state(item, seen, classes):
                    return True
    return False


def _holds_state(value, seen: set, classes: list) -> bool:
    """Whether `value` holds a cell but for the attributes of classes, which it puts in
    `classes` (its own, or its class)."""
    if isinstance(value, StateCell):
        return True
    if type(value) in _PLAIN_TYPES or isinstance(value, _NO_STATE_BASES):
        return False
    if isinstance(value, type):
        classes.append(value)
        return False
    if id(value) in seen:
        return False
    seen.add(id(value))
    if isinstance(value, (tuple, list, set, frozenset, collections.deque)):
        return _any_holds_state(value, seen, classes)
    if isinstance(value, (dict, types.MappingProxyType)):
        return _any_holds_state(value.values(), seen, classes)
    if isinstance(value, types.MethodType):
        return _holds_state(value.__self__, seen, classes)
    if isinstance(value, types.ModuleType):
        return _module_holds_state(value, seen, classes)
    cls = type(value)
    classes.append(cls)
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict) and _any_holds_state(attributes.values(), seen, classes):
        return True
    for slot in slot_names(cls):
        if _holds_state(getattr(value, slot, None), seen, classes):
            return True
    return False


def _any_holds_state(items, seen: set, classes: list) -> bool:
    """Whether one of `items` holds a cell (`_holds_state`): none where all are of plain
    types (told in C)."""
    if _PLAIN_TYPES.issuperset(map(type, items)):
        return False
    for item in items:
        if type(item) not in _PLAIN_TYPES and _holds_state(item, seen, classes):
            return True
    return False


def _module_holds_state(module: types.ModuleType, seen: set, classes: list) -> bool:
    """Whether a module (a file of settings: `params.W`) holds a cell in its data; its
    functions, classes and the modules it imports are not followed, nor are NumPy's and
    Python's own modules."""
    package = module.__name__.partition(".")[0]
    if package in _LIBRARY_MODULES or is_standard_library(package):
        return False
    return any(_holds_state(item, seen, classes) for item in vars(module).values()
               if not isinstance(item, (type, types.ModuleType)))


_LIBRARY_MODULES = frozenset({"numpy", "builtins", "autotrace", "scipy", "cupy", "gast"})


class PerClass:
    """A value worked out once per class by `compute(cls)`, found again by the class's
    identity, not its `==` (a metaclass may make two classes equal: a class defined again
    under its name must not read the first one's value), and dropped with the class."""

    def __init__(self, compute):
        self._compute, self._values = compute, {}

    def __call__(self, cls: type):
        entry = self._values.get(id(cls))
        if entry is not None and entry[0]() is cls:
            return entry[1]
        value, key = self._compute(cls), id(cls)
        self._values[key] = (weakref.ref(cls, lambda _, key=key: self._values.pop(key, None)),
                             value)
        return value


def _slots_of(cls: type) -> tuple:
    names = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return tuple(name for name in names if name not in ("__dict__", "__weakref__"))


# The names of the `__slots__` of a class and of those it inherits from (but for __dict__ and
# __weakref__). Kept per class: a class's slots are made with it, and a `__slots__` assigned
# later makes none.
slot_names = PerClass(_slots_of)
