"""Lists and dicts that a traced `if` or loop changes in place, changed in place after it.

A traced statement's variables come into its body as new values: a list or dict variable as a
new list or dict of traced values (map_arrays), and its results are new ones again. Python
changes a list in place (`d[0] = v`, `d["k"] += v`), and every other name for it (`d2 = d`,
a list holding it) sees the change. Where a path gives back the very list or dict it was given,
the statement changed it in place, and `KeptContainers.write_back` puts what it holds after the
statement into the list or dict the variable held before it: the items that path changed,
nothing else. A path that binds the name to a new list leaves the old one as it was, as
Python does. Where one branch of an `if` changes the list in place and the other binds a new
one, the graph cannot say which object the name holds: that is an error. A dataclass object
such a list or dict holds (and a trace's copy of a dataclass argument) is followed by its
fields the same way: the fields a path changed are set on the object held before.
"""
from __future__ import annotations

import dis
import functools
import types

from ..containers import instance_fields, is_dataclass_instance
from ..object_walk import cell_filled
from .arguments_containers import is_argument_copy
from .control_scope import ControlFlowError
from .tracer import Tracer

_MIXED = (
    "variable {variable!r} holds a {kind} that one branch of this traced `if` changes in place "
    "and the other replaces with a new {kind}: the graph runs both, and cannot say which {kind} "
    "the name holds after it (other names for the old one would see the change on one path "
    "only). Change it in place in both branches, or give it a new {kind} in both "
    "({variable} = {kind}({variable}) before the change)")


_SHARED = (
    "this traced statement changes in place the {kind} that {variable!r} holds, and {other!r}, "
    "which the statement reads too, holds it as well (or one is an item of the other): "
    "autotrace traces the statement's variables as {kind}s of their own and cannot keep them "
    "the same {kind}. Change and read it through one name only in the statement, or give the "
    "other a copy before it ({other} = {kind}({other}))")


_LOST_MESSAGE = (
    "this traced statement changes the {kind} that {variable!r} holds in place and then gives "
    "the name a new {kind}: the other names for the old one see the change NumPy makes to it, "
    "which autotrace cannot follow from the graph. Change it in place only, or make the new "
    "{kind} first ({variable} = {kind}({variable})) and change that")
_LOST_TUPLE_MESSAGE = (
    "this traced statement changes a list or dict that the tuple {variable!r} holds in place "
    "and then gives the name a new tuple: the other names for the old tuple see the change "
    "NumPy makes, which autotrace cannot follow from the graph. Change them in place only, or "
    "give the tuple new lists and dicts first and change those")

_LOST = "lost"  # what _changed gives for a list or dict changed, then replaced by a new one


def _is_container(value) -> bool:
    """A list or dict, or a tuple (whose lists and dicts may change, not it), or a dataclass
    object (its fields: a trace's copy of a dataclass argument)."""
    return isinstance(value, (list, dict, tuple)) or is_dataclass_instance(value)


def _keys(container):
    if is_dataclass_instance(container):
        return instance_fields(container)
    return list(container) if isinstance(container, dict) else range(len(container))


def _item(container, key):
    return getattr(container, key) if is_dataclass_instance(container) else container[key]


class KeptContainers:
    """Notes, for the traced statement over `values` (its variables, `names`; `made`: those
    holding a list or dict the function makes; `shared`: those of them another name holds),
    which of those each path gives back as themselves, and what it changed in them."""

    def __init__(self, values, names, where: str, made=(), functions=(), shared=()):
        self.values, self.names, self.where = values, names, where
        # the names the statement's functions read from the function around them, and what
        # they hold
        self.read = {name: cell.cell_contents for function in functions
                     for reads in (_names_read(function.__code__),)
                     for name, cell in zip(function.__code__.co_freevars,
                                           function.__closure__ or ())
                     if cell_filled(cell) and name in reads}
        # (a copy of a list or dict argument too: the change written into it is refused,
        # arguments_containers.py; the caller holds it)
        copies = {name for name, value in zip(names, values) if is_argument_copy(value)}
        self.shared = (*shared, *copies)
        self.indexes = [index for index, (name, value) in enumerate(zip(names, values))
                        if (name in made or name in copies) and _is_container(value)]
        self.found = {}  # side -> {index: what _changed found}

    def noting(self, body_fn, side=None, offset: int = 0):
        """`body_fn`, noting (as path `side`) the containers it changes in place; its first
        `offset` arguments are no variables (a `for` loop's item)."""
        if not self.indexes:
            return body_fn

        def body(*state):
            given = state[offset:]
            entries = {index: _entries(given[index]) for index in self.indexes}
            results = tuple(body_fn(*state))
            self.found[side] = {index: _changed(entries[index], results[index])
                                for index in self.indexes}
            return results
        return body

    def write_back(self, results) -> tuple:
        """`results` (the statement's new values), where every path gave a list or dict back
        as itself: that list or dict as it was before the statement, with the items a path
        changed set to their new values."""
        if not self.found:
            return results
        results = list(results)
        for index in self.indexes:
            before, name = self.values[index], self.names[index]
            paths = [found[index] for found in self.found.values()]
            kind = type(before).__name__
            changed = any(isinstance(path, dict) and path for path in paths)
            if _LOST in paths or changed and None in paths:
                # given a new one after a change, or on one path only: where no other name
                # holds the old one, the new one is all that is seen
                if name not in self.shared:
                    continue
                message = _MIXED if _LOST not in paths else \
                    _LOST_TUPLE_MESSAGE if kind == "tuple" else _LOST_MESSAGE
                raise ControlFlowError(f"{self.where}\n  " + message.format(variable=name,
                                                                            kind=kind))
            if not changed:
                continue  # (given a new one, or left as it was)
            self._refuse_shared(index)
            results[index] = _put(before, results[index], _merged(paths))
        return tuple(results)

    def _refuse_shared(self, index: int) -> None:
        """Raise where another variable of the statement holds the list or dict at `index`
        (`d2 = d`, `outer = [d]`), or it holds another's: each came in as a list of its own."""
        mine = _containers(self.values[index])
        others = [(self.names[other], value) for other, value in enumerate(self.values)
                  if other != index] + list(self.read.items())
        # (a function the statement calls reads what its closure holds: `get` in
        # `def get(): return items[0]`)
        others += [(name, cell.cell_contents) for name, value in self.read.items()
                   if isinstance(value, types.FunctionType) for cell in value.__closure__ or ()
                   if cell_filled(cell)]
        for other, value in others:
            if _containers(value) & mine:
                raise ControlFlowError(f"{self.where}\n  " + _SHARED.format(
                    variable=self.names[index], other=other,
                    kind=type(self.values[index]).__name__))


@functools.lru_cache(maxsize=4096)
def _names_read(code, nested: bool = False) -> frozenset:
    """The names of the function around it that `code` (and the functions it defines) read,
    but for a function that only gives one name's value (`lambda: alias`, the check of a
    write converted code passes a statement's test: concrete_writes.checked_test). (Kept per
    code object: a traced loop's body is read again for each statement it converts.)"""
    instructions = list(dis.get_instructions(code))
    reads = {i.argval for i in instructions if i.opname in ("LOAD_DEREF", "LOAD_CLASSDEREF")}
    if nested and len(reads) == 1 and sum(i.opname not in _PLUMBING for i in instructions) == 2:
        return frozenset()
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            reads |= _names_read(constant, nested=True)
    return frozenset(reads)


# What a function's code does besides its work (Python 3.11's frame set-up).
_PLUMBING = {"RESUME", "COPY_FREE_VARS", "MAKE_CELL", "NOP", "CACHE"}


def _containers(value, found=None) -> set:
    """id() of the lists and dicts `value` is or holds."""
    found = set() if found is None else found
    if _is_container(value) and id(value) not in found:
        if not isinstance(value, tuple):
            found.add(id(value))
        for key in _keys(value):
            _containers(_item(value, key), found)
    return found


def _entries(value):
    """(`value`, what it holds now): for a list or dict, each item's entries; for a traced
    value, the graph value it holds (another after a write into it in place)."""
    if _is_container(value):
        return value, {key: _entries(_item(value, key)) for key in _keys(value)}
    return value, value.graph_var if isinstance(value, Tracer) else None


def _changed(entries, result) -> dict | None:
    """None where `result` is not the list or dict the path was given (`entries[0]`), which it
    left as it was (_LOST where it changed it first); else {key: True for an item the path
    replaced, wrote into, added or removed, a dict like this one for an item list or dict it
    changed in turn}."""
    given, items = entries
    changed = {}
    for key in _keys(given):
        item = _item(given, key)
        if key not in items or items[key][0] is not item:
            changed[key] = True
        elif _is_container(item):
            inner = _changed(items[key], item)
            if inner:
                changed[key] = inner
        elif isinstance(item, Tracer) and item.graph_var is not items[key][1]:
            changed[key] = True
    changed.update((key, True) for key in items if key not in changed and (
        isinstance(given, list) and key >= len(given) or isinstance(given, dict) and
        key not in given))
    if result is not given:
        return _LOST if changed else None
    return changed


def _merged(paths: list) -> dict:
    """What any of the paths changed."""
    merged: dict = {}
    for path in paths:
        for key, what in path.items():
            if what is True or merged.get(key) is True:
                merged[key] = True
            else:
                merged[key] = _merged([merged.get(key, {}), what])
    return merged


def _put(before, after, changed: dict):
    """`before` holding what `after` (the statement's new value of it) holds: the items at
    `changed` from `after` (a list or dict changed in turn: that one, so changed), the others
    as they were; keys `after` lacks removed, in `after`'s order."""
    if isinstance(before, tuple):  # its lists and dicts, changed in place
        for key, what in changed.items():
            if isinstance(what, dict):
                _put(before[key], after[key], what)
        return before
    if is_dataclass_instance(before):  # its fields (a frozen one's too, as NumPy's writes go)
        for key, what in changed.items():
            object.__setattr__(before, key, _item(after, key) if what is True else
                               _put(_item(before, key), _item(after, key), what))
        return before
    items = {}
    for key in _keys(after):
        what = changed.get(key)
        if what is True or not _has(before, key):
            items[key] = after[key]
        elif what:
            items[key] = _put(before[key], after[key], what)
        else:
            items[key] = before[key]
    if isinstance(before, list):
        before[:] = list(items.values())
    else:
        before.clear()
        before.update(items)
    return before


def _has(container, key) -> bool:
    return key in container if isinstance(container, dict) else key < len(container)
