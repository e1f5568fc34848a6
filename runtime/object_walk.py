"""The state of objects a traced function can reach: the places (slots) that hold its values.

    slots = walk([Root("layer", layer, ...)])
    slots[0].label, slots[0].value     # "layer.parameters['running_mean']", array([...])

A slot is one place a value is kept: an attribute of an object of the user's classes, an item
of a dict or list, a global a function names, a variable a closure reads, a parameter's
default value (`def f(x, seen=[])`, one list on every call). The walk starts at
roots (the traced function, the objects among its arguments) and follows, breadth first, the
globals and closure variables of user functions (also through a method's `__self__`, the
function a derivative derives and a traced function's Python function), the attributes
of objects of user classes, and the items of dicts, lists and tuples. It goes a few levels
deep and no further than a budget of values: what lies past them is not state it sees.
Each slot is reached by a path of steps from its root, which `follow` takes again on a later
call, so a dict replaced in between is found anew. Library objects (NumPy's, autotrace's,
the standard library's), modules and classes are not entered.

`place_of_write` finds the user's line that writes a slot (for messages), by reading the
source of the classes of the objects on its path and of the functions it was reached through.
"""
from __future__ import annotations

import ast
import inspect
import linecache
import types
from collections import deque
from itertools import islice

import numpy as np

from .python_modules import is_standard_library, source_lines
from .state import StateCell

MAX_DEPTH = 8  # steps from a root
MAX_VALUES = 20000  # values looked at in one walk
MAX_ITEMS = 1000  # items of one dict or list
_LIBRARIES = frozenset({"numpy", "autotrace", "scipy", "cupy", "gast", "llvmlite",
                        "_pytest", "pytest", "pluggy"})
# The links from a function to another whose globals and closure it reads: a wrapper's
# function, the `primal` of the record a derivative autotrace generated carries (one attribute,
# transforms/derivative_record.py, read here by name: runtime/ imports no transform), and an
# autotrace.function's Python function. A dotted link is followed attribute by attribute.
_FUNCTION_LINKS = ("__wrapped__", "__autotrace_derivative__.primal",
                   "__autotrace_python_function__")
NUMBERS = (int, float, complex, np.number)  # Python state a counter is kept in (not bool)
_LEAVES = (np.ndarray, np.generic, str, bytes, int, float, complex, type(None), StateCell)
_SCALARS = frozenset({int, float, complex, bool, str, bytes, type(None)})
_TEXT = frozenset({bool, str, bytes, type(None)})


class Root:
    """Where a walk starts: `value`, named `label` in messages, found again on a later call by
    `find()` (None when it is gone); `key` names it in paths."""

    __slots__ = ("key", "value", "label", "find")

    def __init__(self, key: tuple, value, label: str, find):
        self.key, self.value, self.label, self.find = key, value, label, find


class Slot:
    """One place a value is kept: `container` holds it under the last step of `path`.

    Attributes:
        container: the object, dict, list, globals dict or closure cell holding the value.
        step: how the container holds it: ("attr", name), ("item", key), ("global", name),
            ("cell", name), ("default", a parameter's name: the function holds its default).
        value: what it held when walked.
        path: (root key, steps...): the same place on a later walk or call.
        root: the Root it was reached from.
        owners: the objects and functions on the way to it, nearest last.
    """

    __slots__ = ("container", "step", "value", "path", "root", "owners")

    def __init__(self, container, step, value, path, root, owners):
        self.container, self.step, self.value = container, step, value
        self.path, self.root, self.owners = path, root, owners

    @property
    def place(self) -> tuple:
        """What tells this slot apart from others while the walk's values live."""
        return id(self.container), self.step

    @property
    def label(self) -> str:
        """How messages name it: `layer.parameters['running_mean']`."""
        label = self.root.label
        for step in self.path[1:]:
            label = _label(label, step)
        return label

    def set(self, value) -> None:
        store(self.container, self.step, value)

    def delete(self) -> None:
        kind, key = self.step
        if kind == "attr":
            delattr(self.container, key)
        elif kind == "cell":
            del self.container.cell_contents
        elif kind != "default":  # (a parameter keeps its default)
            del self.container[key]


def walk(roots: list) -> list:
    """The slots reachable from `roots` (see the module docstring), nearest first."""
    slots, seen = [], set()
    queue = deque((root.value, (root.key,), root, ()) for root in roots)
    budget = MAX_VALUES
    while queue and budget > 0:
        value, path, root, owners = queue.popleft()
        if id(value) in seen or len(path) > MAX_DEPTH:
            continue
        seen.add(id(value))
        if _is_owner(value):
            owners = owners + (value,)
        kind = type(value)
        # The most of the state, spelled out for speed. Numbers in a list (a history of
        # losses) are no slots (object_slots.py reads lists whole); text in a dict is none.
        if kind is list:
            children = [(("item", index), child, value) for index, child in
                        enumerate(islice(value, MAX_ITEMS)) if type(child) not in _SCALARS]
        elif kind is dict:
            children = [(("item", key), child, value) for key, child in
                        islice(value.items(), MAX_ITEMS) if type(child) not in _TEXT]
        else:
            children = _children(value, root)
        for step, child, container in children:
            budget -= 1
            if container is not None:
                slots.append(Slot(container, step, child, path + (step,), root, owners))
            if not isinstance(child, _LEAVES) and _enters(child):
                queue.append((child, path + (step,), root, owners))
    return slots


def follow(value, steps):
    """The value reached from `value` by `steps` (LookupError, AttributeError or TypeError
    where the path no longer leads anywhere)."""
    for kind, key in steps:
        if kind == "attr":
            value = getattr(value, key)
        elif kind == "via":
            for name in key.split("."):
                value = getattr(value, name)
        elif kind in ("item", "tuple"):
            value = value[key]
        elif kind == "global":
            value = value.__globals__[key]
        elif kind == "default":
            value = load(value, (kind, key))
        else:  # "cell"
            value = value.__closure__[value.__code__.co_freevars.index(key)].cell_contents
    return value


def container_of(value, step):
    """What holds the slot `step` of `value` (the value a path's last step starts from)."""
    kind = step[0]
    if kind == "global":
        return value.__globals__
    if kind == "cell":
        return value.__closure__[value.__code__.co_freevars.index(step[1])]
    return value


def load(container, step):
    kind, key = step
    if kind == "attr":
        return getattr(container, key)
    if kind == "cell":
        return container.cell_contents
    if kind == "default":
        index, keywords = _default_index(container, key)
        return container.__defaults__[index] if keywords is None else keywords[key]
    return container[key]


def store(container, step, value) -> None:
    kind, key = step
    if kind == "attr":
        setattr(container, key, value)
    elif kind == "cell":
        container.cell_contents = value
    elif kind == "default":
        index, keywords = _default_index(container, key)
        if keywords is None:
            defaults = list(container.__defaults__)
            defaults[index] = value
            container.__defaults__ = tuple(defaults)
        else:
            keywords[key] = value
    else:
        container[key] = value


def _children(value, root):
    """(step, child, container) for what `value` holds; container is None where the step
    is no place one can write (a tuple's item, a method's function)."""
    if isinstance(value, types.FunctionType):
        if value is root.value or _is_user_code(value):
            code_globals = value.__globals__
            for name in _global_names(value.__code__):
                if name in code_globals:
                    yield ("global", name), code_globals[name], code_globals
            for name, cell in zip(value.__code__.co_freevars, value.__closure__ or ()):
                if cell_filled(cell):
                    yield ("cell", name), cell.cell_contents, cell
            for name, default in _defaults(value):  # `def f(x, seen=[])`: kept across calls
                yield ("default", name), default, value
            yield from _links(value)
    elif isinstance(value, types.MethodType):
        yield ("via", "__self__"), value.__self__, None
        yield ("via", "__func__"), value.__func__, None
    elif isinstance(value, dict):
        for key in list(value)[:MAX_ITEMS]:
            yield ("item", key), value[key], value
    elif isinstance(value, list):
        for index, item in enumerate(value[:MAX_ITEMS]):
            yield ("item", index), item, value
    elif isinstance(value, tuple):
        for index, item in enumerate(value[:MAX_ITEMS]):
            yield ("tuple", index), item, None
    elif is_user_object(value):
        for name, item in list(vars(value).items()):
            yield ("attr", name), item, value
    else:
        yield from _links(value)  # an autotrace.function: its Python function


def _defaults(function) -> list:
    """(parameter name, default value) for each parameter of `function` that has one."""
    code = function.__code__
    positional = code.co_varnames[:code.co_argcount]
    values = function.__defaults__ or ()
    return list(zip(positional[len(positional) - len(values):], values)) + list(
        (function.__kwdefaults__ or {}).items())


def _default_index(function, name: str):
    """Where the default of parameter `name` of `function` is kept: (its __defaults__ index,
    None), or (None, the __kwdefaults__ dict)."""
    code = function.__code__
    positional = code.co_varnames[:code.co_argcount]
    if name in positional:
        return len(function.__defaults__) - (len(positional) - positional.index(name)), None
    return None, function.__kwdefaults__


def cell_filled(cell) -> bool:
    """Whether a closure's `cell` holds a value (an empty one: a name assigned later)."""
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _links(value):
    for link in _FUNCTION_LINKS:
        linked = value if not isinstance(value, StateCell) else None
        for name in link.split("."):
            linked = None if linked is None else _attribute(linked, name)
        if linked is not None and linked is not value and callable(linked):
            yield ("via", link), linked, None


def _attribute(value, name: str):
    """`value.name`, or None where it has none (or its __getattr__ fails another way)."""
    try:
        return getattr(value, name, None)
    except Exception:  # noqa: BLE001 - a user's __getattr__ may raise anything
        return None


def _global_names(code) -> set:
    """The global names `code` and the functions defined in it read or write."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _global_names(constant)
    return names


def _enters(value) -> bool:
    return isinstance(value, (types.FunctionType, types.MethodType, dict, list, tuple)) or \
        is_user_object(value) or _attribute(value, _FUNCTION_LINKS[2]) is not None


def _is_owner(value) -> bool:
    """Whether `value` is an object or function whose source may hold a write (for
    place_of_write)."""
    return isinstance(value, types.FunctionType) or is_user_object(value)


def is_user_object(value) -> bool:
    """Whether `value` is an object of a class of the user's, whose attributes are state (not
    a class, module, function or state cell)."""
    cls = type(value)
    return isinstance(getattr(value, "__dict__", None), dict) and not isinstance(
        value, (type, types.ModuleType, types.FunctionType, types.MethodType, StateCell)) \
        and _is_user_module(cls.__module__)


def _is_user_code(function) -> bool:
    return _is_user_module(getattr(function, "__module__", None))


def users_classes(cls) -> list:
    """`cls` and its bases that are the user's: none of Python's, its standard library's,
    NumPy's or autotrace's."""
    return [base for base in cls.__mro__ if _is_user_module(base.__module__)]


def _is_user_module(module) -> bool:
    top = (module or "").split(".")[0]
    return top not in _LIBRARIES and not is_standard_library(module)


def _label(label: str, step) -> str:
    kind, key = step
    if kind in ("global", "cell"):
        return key
    if kind == "attr":
        return f"{label}.{key}"
    if kind == "default":
        return f"{label}'s default {key}"
    if kind == "via":
        return "self" if key == "__self__" else label
    return f"{label}[{key!r}]"


# --- the user's line that writes a slot ---------------------------------------------------------

_CHANGING_METHODS = frozenset({"append", "extend", "insert"})


def place_of_write(slot: Slot, grown: bool = False) -> tuple | None:
    """(filename, line) of a statement that writes `slot` (or, `grown`, appends to the list
    it is an item of), in the source of the classes of the objects on its path and of the
    functions it was reached through, nearest first; None where none is found."""
    for owner in reversed(slot.owners):
        for filename, first, last in _source_ranges(owner):
            tree = _parsed(filename)
            if tree is None:
                continue
            # what __init__ writes is written when the object is made, not when it is called
            made = [range(node.lineno, node.end_lineno + 1) for node in ast.walk(tree)
                    if isinstance(node, ast.FunctionDef) and node.name == "__init__"]
            lines = sorted(node.lineno for node in ast.walk(tree)
                           if first <= getattr(node, "lineno", 0) <= last
                           and _writes(node, slot, grown))
            called = [line for line in lines if not any(line in lines_ for lines_ in made)]
            if lines:
                return filename, (called or lines)[0]
    return None


def _source_ranges(owner) -> list:
    """(filename, first line, last line) of the source of a function or of the user classes
    an object is an instance of."""
    found = []
    for item in ([owner] if isinstance(owner, types.FunctionType) else
                 users_classes(type(owner))):
        try:
            if isinstance(item, types.FunctionType) and not hasattr(item, "__wrapped__"):
                lines, first, filename = source_lines(item.__code__, item.__globals__)
            else:  # (a class; a decorated function, whose source inspect follows to the one
                # it wraps)
                lines, first = inspect.getsourcelines(item)
                filename = inspect.getsourcefile(item)
        except (OSError, TypeError):
            continue
        if filename:
            found.append((filename, first, first + len(lines) - 1))
    return found


def _parsed(filename: str):
    try:
        return ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return None


def _writes(node, slot: Slot, grown: bool) -> bool:
    if grown:  # x.append(v), x.extend(...), x.insert(...) on the list holding the slot
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in _CHANGING_METHODS and _names_list(node.func.value, slot)
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    else:
        return False
    return any(_names(target, slot.step) for target in targets)


def _names(target, step) -> bool:
    """Whether an assignment's target writes the slot `step` names."""
    kind, key = step
    if kind == "attr":
        return isinstance(target, ast.Attribute) and target.attr == key
    if kind == "item":
        return isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) \
            and target.slice.value == key
    return isinstance(target, ast.Name) and target.id == key


def _names_list(expression, slot: Slot) -> bool:
    """Whether `expression` names the list that holds `slot` (its path's second-last step)."""
    steps = [step for step in slot.path[1:] if step[0] != "via"]
    return len(steps) >= 2 and _names(expression, steps[-2])
