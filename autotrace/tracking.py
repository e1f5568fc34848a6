"""Finding the Variables an object holds, each under a stable path name.

    for path, variable in tracked_variables(model, "model"):
        print(path)          # model/layer1/kernel, model/layers/0/bias, ...

Paths follow attributes (in the order they were first set, then its `__slots__` as named),
list and tuple positions, and dict keys, depth first; an object reached twice is walked once,
under its first path. Modules, optimizers, metrics and plain user objects are all walked the
same way, so `Module.variables` and `Checkpoint` agree on what an object holds.

A Checkpoint also saves what the classes of the objects walked hold (`class Model: w =
Variable(...)`, read as `self.w`), which implicit_grad reaches too (runtime/held_state.py)
but `Module.variables` leaves out, as tf.Module does: they come last, under a path named by
the class that defines them, not by the objects that share them (`classes/Model/w`, whatever
the prefix).

`Module.__setattr__` calls `attribute_set` so that listeners (a Checkpoint restoring into
variables that do not exist yet) hear when a lazily built layer makes its Variables.
"""
from __future__ import annotations

import types
from typing import Callable, Iterator

import numpy as np

from autotrace.runtime.held_state import class_state_items, slot_names
from autotrace.variables import Variable

_LEAVES = (str, bytes, int, float, complex, bool, type(None), np.ndarray, np.generic, type,
           types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType)

# Called as listener(owner, attribute, value) after a Module attribute is set (filled at run
# time by checkpoints waiting to restore values into variables not yet made).
_listeners: list = []


def tracked_variables(root, prefix: str = "") -> list[tuple[str, Variable]]:
    """(path, Variable) for every Variable `root` holds, in a stable order (see the module
    docstring); `prefix` starts every path."""
    return [(path, variable) for path, _, variable in tracked_variable_routes(root, prefix)]


def tracked_variable_routes(root, prefix: str = "", classes: bool = False
                            ) -> list[tuple[str, str, Variable]]:
    """(path, route, Variable) as `tracked_variables` finds them, where the route is the Python
    expression that reaches the Variable from `prefix` (`model.layers[0].kernel`,
    `extra['a/b']`): two Variables can share a path (`{"a/b": v}` and `{"a": {"b": w}}`), never
    a route, so the route tells them apart. With `classes`, also those the classes of the
    objects walked hold (see the module docstring)."""
    found: list = []
    seen, met = set(), []
    _walk(root, prefix, prefix, seen, met, found)
    if classes:
        _walk_classes(met, seen, found)
    return found


def _walk_classes(classes: list, seen: set, found: list) -> None:
    # The classes met, last, each once: what a class holds is found once for all its objects.
    for cls in classes:
        for klass in cls.__mro__:
            if klass.__module__ == "builtins" or id(klass) in seen:
                continue
            seen.add(id(klass))
            for name, item in class_state_items(klass):
                _walk(item, f"classes/{klass.__qualname__}/{name}",
                      f"{klass.__module__}.{klass.__qualname__}.{name}", seen, classes, found)


def _join(prefix: str, part) -> str:
    return f"{prefix}/{part}" if prefix else str(part)


def _walk(value, path: str, route: str, seen: set, classes: list, found: list) -> None:
    if isinstance(value, Variable):
        if id(value) not in seen:
            seen.add(id(value))
            found.append((path, route, value))
        return
    if isinstance(value, _LEAVES) or id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _walk(item, _join(path, index), f"{route}[{index}]", seen, classes, found)
    elif isinstance(value, dict):
        for key, item in value.items():
            _walk(item, _join(path, key), f"{route}[{key!r}]", seen, classes, found)
    else:
        cls = type(value)
        untracked = getattr(cls, "_untracked_attributes", ())
        attributes = getattr(value, "__dict__", None)
        # An object's slots are attributes too, after those in its __dict__.
        items = list(attributes.items()) if isinstance(attributes, dict) else []
        items += [(name, getattr(value, name, None)) for name in slot_names(cls)]
        for key, item in items:
            if key not in untracked:
                _walk(item, _join(path, key), f"{route}.{key}" if route else key, seen,
                      classes, found)
        if all(known is not cls for known in classes):
            classes.append(cls)


def add_listener(listener: Callable) -> None:
    _listeners.append(listener)


def remove_listener(listener: Callable) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def attribute_set(owner, attribute: str, value) -> None:
    for listener in list(_listeners):
        listener(owner, attribute, value)


def iter_variables(root) -> Iterator[Variable]:
    return (variable for _, variable in tracked_variables(root))
