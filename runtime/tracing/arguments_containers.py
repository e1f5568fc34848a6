"""Lists, dicts and dataclass objects among a traced function's arguments must not change.

A trace runs the function on its own copy of each list, dict, dataclass object and registered
pytree node the caller passed (runtime/tracing/trees.py map_arrays makes them, with traced
values in place of the arrays), and the graph it records gives only the function's result.
Changed in place (`xs.append(v)`, `d['k'] = v`, `p.w = v`), the copy would change, and the
caller's container would not, on the call that traced or on any later one, where the Python
function changes it. So the copies are noted as they are made (`GraphBuilder.argument_copies`),
and a change to one, found when the function returns, raises ArgumentChangedError naming the
argument, as a write into an array argument does (runtime/tracing/arguments.py). A traced `if`
or loop that changes one in place writes the change into it (control_containers.py), so that
the change is found there too.

A deque or a set is passed as it is (no copy): changed in place, it changes once, while the
function traces, and never on the calls the trace serves, and may keep traced values after the
trace. Those are watched too, and put back as they were when a change is refused.
"""
from __future__ import annotations

import ast
import collections
import functools
import inspect
import operator
import textwrap
import traceback

from ..containers import field_names, instance_fields, is_dataclass_instance
from ..pytrees import registered
from ..state import current_scope
from .arguments import ArgumentChangedError, argument_names, parameter_of

# What changes a list or dict in place, by the change it makes (`_place` looks for it).
_ADDING = {"append", "extend", "insert", "setdefault", "update", "__setitem__"}
_REMOVING = {"pop", "remove", "clear", "popitem", "__delitem__"}
_SETTING = {"update", "setdefault", "__setitem__", "sort", "reverse", "move_to_end"}
_CHANGING = _ADDING | _REMOVING | _SETTING
# Functions and methods that only read what they are given: a call of one is not where an
# argument changes.
_READING = {"len", "list", "dict", "tuple", "set", "frozenset", "sorted", "reversed", "iter",
            "next", "enumerate", "zip", "sum", "min", "max", "any", "all", "print", "repr",
            "str", "id", "type", "isinstance", "hasattr", "getattr", "get", "keys", "values",
            "items", "copy", "index", "count"}
_MISSING = object()  # a field or slot that holds nothing
_PASSED_AS_IS = (collections.deque, set)  # mutable containers a trace does not copy


class ArgumentContainers:
    """The lists, dicts and objects a trace (recorded by `builder`) made of the caller's
    arguments (`given`: (args, kwargs)) for the function (`copies`: (args, kwargs)), each with
    what it held then."""

    def __init__(self, builder, given: tuple, copies: tuple, parameters: tuple):
        self.made: list = []  # (container, what it held, parameter, path)
        self.shared: list = []  # the same for a list or dict a copy holds as the caller's does
        (args, kwargs), (traced_args, traced_kwargs) = given, copies
        for index, (arg, traced) in enumerate(zip(args, traced_args)):
            self._note(arg, traced, *parameter_of(index, parameters))
        for key, value in kwargs.items():
            self._note(value, traced_kwargs[key], key, "")
        builder.argument_copies.update((id(copy), copy) for copy, *_ in self.made)

    def _note(self, original, copy, parameter: str, path: str) -> None:
        if copy is original and isinstance(original, _PASSED_AS_IS):
            self.shared.append((original, _held(original), parameter, path))
        if copy is original or type(copy) is not type(original):  # (a static argument's value)
            return
        node_type = registered(type(original))
        if node_type is not None:
            for index, (child, copied) in enumerate(zip(node_type.flatten(original)[0],
                                                        node_type.flatten(copy)[0])):
                self._note(child, copied, parameter, f"{path}[{index}]")
        elif isinstance(original, (tuple, list)):
            for index, (item, copied) in enumerate(zip(original, copy)):
                self._note(item, copied, parameter, f"{path}[{index}]")
        elif isinstance(original, dict):
            for key in original:
                self._note(original[key], copy[key], parameter, f"{path}[{key!r}]")
        elif is_dataclass_instance(original):
            for name in instance_fields(original):
                self._note(getattr(original, name), getattr(copy, name), parameter,
                           f"{path}.{name}")
        else:
            return
        if not isinstance(copy, tuple) or hasattr(copy, "__dict__"):
            self.made.append((copy, _held(copy), parameter, path))
        for name, value in getattr(copy, "__dict__", {}).items():
            # a list or dict the copy holds as the caller's object does (its attributes are
            # copied as they are): changed, it would hold traced values after the call
            if isinstance(value, (list, dict)) and value is getattr(original, name, None):
                self.shared.append((value, _held(value), parameter, f"{path}.{name}"))

    def refuse_changes(self, function) -> None:
        """Raise ArgumentChangedError if the function changed one of the copies, naming the
        argument, the change and the line of `function`'s source that makes it."""
        for copy, held, parameter, path in self.made + self.shared:
            change = _change(held, _held(copy))
            if change is None:
                continue
            kind = ("list" if isinstance(copy, list) else "dict" if isinstance(copy, dict)
                    else type(copy).__name__ if isinstance(copy, _PASSED_AS_IS) else "object")
            shown, subject = argument_names(parameter, path, kind)
            instead = {"list": f"new = {shown} + [...] or a copy, list({shown})",
                       "dict": f"new = {{**{shown}, key: value}} or a copy, dict({shown})",
                       "object": f"dataclasses.replace({shown}, field=value)",
                       "deque": f"a copy, collections.deque({shown})",
                       "set": f"new = {shown} | {{...}} or a copy, set({shown})"}[kind]
            lost = ("makes the change once, while it traces, and never on the calls the "
                    "trace serves" if isinstance(copy, _PASSED_AS_IS) else
                    "works on a copy of it, so the change would be lost")
            error = ArgumentChangedError(
                f"the traced function changes {subject} in place ({change}): called "
                f"eagerly, that changes the caller's {kind}, but a traced call {lost}. Make a "
                f"new {kind} and return it instead ({instead}); lists, dicts and objects made "
                f"inside the function may be changed in place")
            error.place = _place(function, parameter, change)  # (trace_errors.py shows it)
            for container, (items, _), *_ in self.shared:
                _restore(container, items)  # (the caller's: it keeps what it held)
            raise error


def is_argument_copy(value) -> bool:
    """Whether `value` is the copy of a list, dict or object argument that the trace being
    recorded now made (a traced `if` or loop that changes it writes the change into it)."""
    scope = current_scope()
    builder = scope.owner if scope is not None else None
    copies = builder.root().argument_copies if hasattr(builder, "root") else {}
    return copies.get(id(value)) is value


def _held(container) -> tuple:
    """What `container` holds, to tell later whether it changed: (its items, a list's, or its
    values by key, a dict's, or None; its attributes by name, or None)."""
    items = list(container) if isinstance(container, (list, *_PASSED_AS_IS)) else \
        dict(container) if isinstance(container, dict) else None
    if not hasattr(container, "__dict__") and not is_dataclass_instance(container):
        return items, None
    attributes = dict(getattr(container, "__dict__", {}))
    for name in field_names(type(container)) if is_dataclass_instance(container) else ():
        attributes.setdefault(name, getattr(container, name, _MISSING))
    cached = [name for name in attributes if isinstance(
        inspect.getattr_static(type(container), name, None), functools.cached_property)]
    for name in cached:  # (a value read and kept: no change)
        del attributes[name]
    return items, {name: value for name, value in attributes.items() if value is not _MISSING}


def _restore(container, items) -> None:
    """`container`, a list, dict, deque or set, holding `items` (its `_held` items) again."""
    if isinstance(container, list):
        container[:] = items
    else:
        container.clear()
        (container.extend if isinstance(container, collections.deque) else
         container.update)(items)


def _change(before: tuple, after: tuple) -> str | None:
    """What changed between two `_held`s of one container, in words; None if nothing did."""
    (items_before, attributes_before), (items_after, attributes_after) = before, after
    if isinstance(items_before, dict):
        change = _change_by_name(items_before, items_after, "key")
    elif items_before is not None:
        change = _change_of_items(items_before, items_after)
    else:
        change = None
    return change or (_change_by_name(attributes_before, attributes_after, "attribute")
                      if attributes_before is not None else None)


def _change_of_items(before: list, after: list) -> str | None:
    if len(before) == len(after) and all(map(operator.is_, before, after)):
        return None
    if len(after) > len(before):
        return "adds items to it"
    if len(after) < len(before):
        return "removes items from it"
    index = next(index for index, (first, second) in enumerate(zip(before, after))
                 if first is not second)
    return f"sets its item [{index}]"


def _change_by_name(before: dict, after: dict, what: str) -> str | None:
    """The change between a dict's or an object's values by key (`what`: "key", "attribute")."""
    shown = repr if what == "key" else str
    for key, value in after.items():
        if key not in before or value is not before[key]:
            return f"sets its {what} {shown(key)}"
    for key in before:
        if key not in after:
            return f"deletes its {what} {shown(key)}"
    if list(before) != list(after):
        return f"changes the order of its {what}s"
    return None


def _place(function, parameter: str, change: str) -> traceback.FrameSummary | None:
    """The line of `function`'s source that makes `change` to `parameter` (a method of it
    called that changes lists and dicts so, an item or attribute of it set or deleted, `+=`
    to it); else one that changes it otherwise; else the first that calls a method of it or
    passes it to a function that may change it; else its first line. None for no function
    whose code can be read."""
    function = inspect.unwrap(function)
    if isinstance(function, functools.partial):
        function = function.func
    code = getattr(function, "__code__", None) or getattr(  # (a callable object's method)
        getattr(type(function), "__call__", None), "__code__", None)
    if code is None:
        return None
    line = code.co_firstlineno
    try:
        lines, first = inspect.getsourcelines(code)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        tree = None
    root = tree.body[0] if tree is not None and tree.body else None
    own = list(_own_nodes(root) if isinstance(root, (ast.FunctionDef, ast.AsyncFunctionDef))
               else ast.walk(root) if root is not None else ())
    for found in ([node for node in own if _changes(node, parameter, change)],
                  [node for node in own if _changes(node, parameter, "")],
                  [node for node in own if _passes(node, parameter)]):
        if found:
            line = first + min(node.lineno for node in found) - 1
            break
    return traceback.FrameSummary(code.co_filename, line, code.co_name)


def _own_nodes(definition):
    """The nodes of a function's body, but not of the functions and lambdas defined in it
    (whose parameters may have the same names)."""
    todo = list(definition.body)
    while todo:
        node = todo.pop()
        yield node
        todo.extend(child for child in ast.iter_child_nodes(node)
                    if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                              ast.Lambda, ast.ClassDef)))


def _changes(node, name: str, change: str) -> bool:
    """Whether `node` changes in place what the variable `name` holds, or a container it
    holds (`name[1][0] = v`, `name.items.append(v)`), making `change` ("adds items to it",
    ...; any change for "")."""
    def rooted(value):
        while isinstance(value, (ast.Subscript, ast.Attribute)):
            value = value.value
        return isinstance(value, ast.Name) and value.id == name
    adds, removes = change.startswith("adds"), change.startswith(("removes", "deletes its key"))
    sets = change.startswith(("sets its item", "sets its key", "changes the order"))
    attribute = "attribute" in change
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        methods = _ADDING if adds else _REMOVING if removes else _SETTING if sets else \
            set() if attribute else _CHANGING
        return node.func.attr in methods and rooted(node.func.value)
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return (attribute or not change) and rooted(node)
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
        deletes = isinstance(node.ctx, ast.Del)
        return (not change or (removes if deletes else sets or adds)) and rooted(node.value)
    return isinstance(node, ast.AugAssign) and (not change or adds or sets) and \
        rooted(node.target)


def _passes(node, name: str) -> bool:
    """Whether `node` calls a method of the variable `name` or passes it to a function, other
    than those that only read what they are given (`len(name)`, `name.get(k)`)."""
    if not isinstance(node, ast.Call):
        return False
    called = node.func.attr if isinstance(node.func, ast.Attribute) else \
        node.func.id if isinstance(node.func, ast.Name) else None
    if called in _READING:
        return False
    receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
    return any(isinstance(value, ast.Name) and value.id == name
               for value in (receiver, *node.args, *(keyword.value for keyword in node.keywords)))
