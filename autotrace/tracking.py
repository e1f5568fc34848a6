"""Finding the Variables an object holds, each under a stable path name.

    for path, variable in tracked_variables(model, "model"):
        print(path)          # model/layer1/kernel, model/layers/0/bias, ...

Paths follow attributes (in the order they were first set), list and tuple positions, and dict
keys, depth first; an object reached twice is walked once, under its first path. Modules,
optimizers, metrics and plain user objects are all walked the same way, so
`Module.variables`, `Checkpoint` and `implicit_grad` agree on what an object holds.

`Module.__setattr__` calls `attribute_set` so that listeners (a Checkpoint restoring into
variables that do not exist yet) hear when a lazily built layer makes its Variables.
"""
from __future__ import annotations

import types
from typing import Callable, Iterator

import numpy as np

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


def tracked_variable_routes(root, prefix: str = "") -> list[tuple[str, str, Variable]]:
    """(path, route, Variable) as `tracked_variables` finds them, where the route is the Python
    expression that reaches the Variable from `prefix` (`model.layers[0].kernel`,
    `extra['a/b']`): two Variables can share a path (`{"a/b": v}` and `{"a": {"b": w}}`), never
    a route, so the route tells them apart."""
    found: list = []
    _walk(root, prefix, prefix, set(), found)
    return found


def _join(prefix: str, part) -> str:
    return f"{prefix}/{part}" if prefix else str(part)


def _walk(value, path: str, route: str, seen: set, found: list) -> None:
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
            _walk(item, _join(path, index), f"{route}[{index}]", seen, found)
    elif isinstance(value, dict):
        for key, item in value.items():
            _walk(item, _join(path, key), f"{route}[{key!r}]", seen, found)
    else:
        attributes = getattr(value, "__dict__", None)
        if isinstance(attributes, dict):
            for key, item in list(attributes.items()):
                if key not in getattr(type(value), "_untracked_attributes", ()):
                    _walk(item, _join(path, key), f"{route}.{key}" if route else key, seen,
                          found)


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
