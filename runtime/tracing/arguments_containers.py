"""Lists, dicts and dataclass objects among a traced function's arguments must not change.

A trace runs the function on its own copy of each list, dict and dataclass object the caller
passed that holds arrays (runtime/tracing/trees.py map_arrays makes them, with traced values in
place of the arrays), and the graph it records gives only the function's result. Changed in
place (`xs.append(v)`, `d['k'] = v`, `p.w = v`), the copy would change, and the caller's
container would not, on the call that traced or on any later one, where the Python function
changes it. So the copies are noted as they are made, and a change to one, found when the
function returns, raises ArgumentChangedError naming the argument, as a write into an array
argument does (runtime/tracing/arguments.py).
"""
from __future__ import annotations

import ast
import inspect
import operator
import textwrap
import traceback

from ..containers import field_names, is_dataclass_instance
from ..pytrees import registered
from .arguments import ArgumentChangedError, parameter_of

# Methods of lists and dicts that change them in place, and operators that do (`xs += ys`).
_CHANGING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                     "update", "setdefault", "popitem", "__setitem__", "__delitem__"}


class ArgumentContainers:
    """The lists, dicts and dataclass objects a trace made of the caller's arguments (`args`,
    `kwargs`) for the function (`traced_args`, `traced_kwargs`), each with what it held then."""

    def __init__(self, args: tuple, kwargs: dict, traced_args: tuple, traced_kwargs: dict,
                 parameters: tuple):
        self.made: list = []  # (container, what it held, parameter, path)
        for index, (arg, traced) in enumerate(zip(args, traced_args)):
            self._note(arg, traced, *parameter_of(index, parameters))
        for key, value in kwargs.items():
            self._note(value, traced_kwargs[key], key, "")

    def _note(self, original, copy, parameter: str, path: str) -> None:
        if copy is original or type(copy) is not type(original):  # (a static argument's value)
            return
        node_type = registered(type(original))
        if node_type is not None:
            for index, (child, copied) in enumerate(zip(node_type.flatten(original)[0],
                                                        node_type.flatten(copy)[0])):
                self._note(child, copied, parameter, f"{path}[{index}]")
            return
        if isinstance(original, (tuple, list)):
            for index, (item, copied) in enumerate(zip(original, copy)):
                self._note(item, copied, parameter, f"{path}[{index}]")
        elif isinstance(original, dict):
            for key in original:
                self._note(original[key], copy[key], parameter, f"{path}[{key!r}]")
        elif is_dataclass_instance(original):
            for name in field_names(type(original)):
                self._note(getattr(original, name), getattr(copy, name), parameter,
                           f"{path}.{name}")
        else:
            return
        if not isinstance(copy, tuple):
            self.made.append((copy, _held(copy), parameter, path))

    def refuse_changes(self, function) -> None:
        """Raise ArgumentChangedError if the function changed one of the copies, naming the
        argument, the change and the line of `function`'s source that makes it."""
        for copy, held, parameter, path in self.made:
            change = _change(copy, held, _held(copy))
            if change is None:
                continue
            kind = ("list" if isinstance(copy, list) else "dict" if isinstance(copy, dict)
                    else "object")
            shown = f"{parameter}{path}" if parameter.isidentifier() else "x"
            name = f"{parameter!r}{path}" if parameter.isidentifier() else f"{parameter}{path}"
            instead = {"list": f"new = {shown} + [...] or a copy, list({shown})",
                       "dict": f"new = {{**{shown}, key: value}} or a copy, dict({shown})",
                       "object": f"dataclasses.replace({shown}, field=value)"}[kind]
            error = ArgumentChangedError(
                f"the traced function changes argument {name} in place ({change}): called "
                f"eagerly, that changes the caller's {kind}, but a traced call works on a copy "
                f"of it, so the change would be lost. Make a new {kind} and return it instead "
                f"({instead}); lists, dicts and objects made inside the function may be "
                f"changed in place")
            error.place = _place(function, parameter)  # (autotrace/trace_errors.py shows it)
            raise error


def _held(container) -> dict | list:
    """What `container` holds, to tell later whether it changed: its items (a list), or its
    values by key (a dict) or by attribute (an object)."""
    if isinstance(container, list):
        return list(container)
    if isinstance(container, dict):
        return dict(container)
    attributes = dict(getattr(container, "__dict__", {}))
    for name in field_names(type(container)) if is_dataclass_instance(container) else ():
        attributes.setdefault(name, getattr(container, name, None))
    return attributes


def _change(container, before, after) -> str | None:
    """What changed in `container` between two of its `_held`s, in words; None if nothing
    did."""
    if not isinstance(container, list):
        return _change_by_name(before, after, "key" if isinstance(container, dict)
                               else "attribute")
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


def _place(function, parameter: str) -> traceback.FrameSummary | None:
    """The line of `function`'s source that changes `parameter` (a method of it called that
    changes lists and dicts, an item or attribute of it set or deleted, `+=` to it), else the
    first that calls a method of it or passes it to a function, else its first line; None
    for no function."""
    code = getattr(inspect.unwrap(function), "__code__", None) if function else None
    if code is None:
        return None
    line = code.co_firstlineno
    try:
        lines, first = inspect.getsourcelines(code)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        tree = None
    nodes = list(ast.walk(tree)) if tree is not None else []
    found = [node.lineno for node in nodes if _changes(node, parameter)] or \
        [node.lineno for node in nodes if _passes(node, parameter)]
    if found:
        line = first + min(found) - 1
    return traceback.FrameSummary(code.co_filename, line, code.co_name)


def _changes(node, name: str) -> bool:
    """Whether `node` changes in place what the variable `name` holds, or a container it
    holds (`name[1][0] = v`, `name.items.append(v)`)."""
    def rooted(value):
        while isinstance(value, (ast.Subscript, ast.Attribute)):
            value = value.value
        return isinstance(value, ast.Name) and value.id == name
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in _CHANGING_METHODS and rooted(node.func.value)
    if isinstance(node, (ast.Subscript, ast.Attribute)) and \
            isinstance(node.ctx, (ast.Store, ast.Del)):
        return rooted(node)
    return isinstance(node, ast.AugAssign) and rooted(node.target)


def _passes(node, name: str) -> bool:
    """Whether `node` is a call of a method of the variable `name` or a call passing it."""
    if not isinstance(node, ast.Call):
        return False
    receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
    return any(isinstance(value, ast.Name) and value.id == name
               for value in (receiver, *node.args, *(keyword.value for keyword in node.keywords)))
