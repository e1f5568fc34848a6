"""NumPy arrays made before a traced `if` or loop, held read-only while its body is traced.

A traced statement becomes one graph op, its body traced once. Its variables come in as traced
values, so a write into one of them is traced. A NumPy array it reaches another way (a name it
only reads, `helper(a)` writing into its argument, `o.a += 1.0`, `a.__iadd__(v)`,
`np.copyto(a, ...)`) is concrete: NumPy would make the change once, while tracing, and never
again as the graph runs, or make it where the graph takes the other branch. NumPy changes it
on each iteration, or only on the path taken.

`held_read_only` finds the arrays the statement's functions reach: what their closures, defaults
and the globals they name hold (memory.held_values: through lists, tuples, dicts and the user's
objects), and so on through the user's functions among them; it marks them read-only while the
body is traced, and restores them after. A write into one fails in NumPy ("read-only"), and
becomes an error that names the user's line and says what to do. Lists and dicts cannot be
held so: what each holds is noted before the body is traced, and one the body put a traced
value into is put back as it was and refused (a change of Python values alone is a side effect
made while tracing, as tf.function's guide says of Python side effects).
"""
from __future__ import annotations

import collections.abc
import types

import numpy as np

from ..object_walk import cell_filled
from ..primitives.memory import held_values, is_users_object, memory_owner
from ..user_frames import PACKAGE_DIRS, library_frame
from .control_scope import ControlFlowError
from .tracer import Tracer

_MESSAGE = (
    "{site}: NumPy refused to write into a read-only array ({numpy}). This runs inside "
    "{statement} on a traced value ({where}), which autotrace traces once as a graph op; while "
    "it does, it holds the NumPy arrays made before it read-only, because a change to one "
    "there would be made once, while tracing, not on each iteration or only on the path "
    "taken. Make the array traced where it is made (np.zeros_like(x, shape=...), x a traced "
    "value), or give the statement the new value as a variable (a = a + v, not a helper "
    "changing `a` in place)")


def _reached(functions) -> dict:
    """id -> (what `functions` reach, the name it is reached through): what their closures,
    defaults and the globals they name hold (a module's attributes they name), and so for the
    user's functions among those and the methods of the user's objects among those."""
    reached, pending, seen = {}, list(functions), set()
    while pending:
        function = pending.pop()
        if not isinstance(function, types.FunctionType) or id(function) in seen or \
                function.__code__.co_filename.startswith(PACKAGE_DIRS):
            continue
        seen.add(id(function))
        for name, root in _roots(function):
            for value in held_values([root]):
                reached.setdefault(id(value), (value, name))
                if isinstance(value, types.FunctionType):
                    pending.append(value)
                elif is_users_object(value):  # its methods, which the body may call
                    pending += [method for cls in type(value).__mro__
                                for method in vars(cls).values()
                                if isinstance(method, types.FunctionType)]
    return reached


def _roots(function) -> list:
    """(name, value) for what `function`'s closure, defaults and the globals it names hold (a
    module's attributes it names)."""
    code = function.__code__
    roots = [(name, cell.cell_contents) for name, cell in zip(
        code.co_freevars, function.__closure__ or ()) if cell_filled(cell)]
    roots += [(function.__name__, value) for value in (
        *(function.__defaults__ or ()), *(function.__kwdefaults__ or {}).values())]
    roots += [(name, function.__globals__[name]) for name in code.co_names
              if name in function.__globals__]
    return roots + [(f"{name}.{attribute}", module.__dict__[attribute])
                    for name, module in roots if isinstance(module, types.ModuleType)
                    for attribute in code.co_names if attribute in module.__dict__]


def _refuse_iterators(functions, where: str, statement: str) -> None:
    """Raise where one of the user's `functions` reads an iterator made before the statement:
    traced once, the body would take its items once, while tracing (`next(it)`, `for v in it`,
    `zip(w, it)`), where Python takes them on each iteration, or only on the path taken, and
    a later read of it sees what they left."""
    for function in functions:
        if isinstance(function, types.FunctionType) and \
                not function.__code__.co_filename.startswith(PACKAGE_DIRS):
            for name, value in _roots(function):
                if isinstance(value, collections.abc.Iterator) and \
                        not isinstance(value, Tracer):
                    raise ControlFlowError(_ITERATOR.format(
                        where=where, statement=statement, name=name,
                        kind=type(value).__name__))


def _bases(array: np.ndarray) -> list:
    """The arrays in `array`'s chain of bases."""
    found = []
    while isinstance(array.base, np.ndarray):
        array = array.base
        found.append(array)
    return found


class held_read_only:  # noqa: N801 - used as `with held_read_only(...)`, as a function
    """Hold the NumPy arrays `functions` reach read-only while the `statement` (on a traced
    value, at `where`) is traced; a write into one is an error naming the user's line. An array
    NumPy could not make writeable again after (one viewing a read-only array) is left as it
    is. Views the body takes of the held arrays, where `functions` reach them after, are made
    writeable too, as NumPy's views of writeable arrays are. A list or dict they reach that the
    body changes is an error too, and holds again what it held."""

    def __init__(self, functions, where: str, statement: str):
        self.functions, self.where = functions, where
        self.statement = ("an " if statement[1:2] in "aeiou" else "a ") + statement

    def __enter__(self):
        _refuse_iterators(self.functions, self.where, self.statement)
        reached = _reached(self.functions).values()
        arrays = [value for value, _ in reached if type(value) is np.ndarray]
        self.held = [array for array in arrays if array.flags.writeable and all(
            base.flags.writeable for base in _bases(array))]
        self.read_only = {id(array) for array in arrays if not array.flags.writeable}
        self.contents = [(value, name, _contents(value)) for value, name in reached
                         if isinstance(value, (list, dict))]
        for array in self.held:
            array.flags.writeable = False
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        self._give_back()
        if error is None:
            _refuse_changed(self.contents, self.where, self.statement)
        elif isinstance(error, ValueError) and self.held and "read-only" in str(error):
            raise ControlFlowError(_MESSAGE.format(
                site=_user_site(traceback), numpy=error, where=self.where,
                statement=self.statement)) from error
        return False

    def _give_back(self) -> None:
        # a base first: NumPy lets a view be writeable again only once its base is
        for array in sorted(self.held, key=lambda array: len(_bases(array))):
            array.flags.writeable = True
        # views taken of a held array (NumPy made them read-only), where its bases now let
        owners = {id(memory_owner(array)) for array in self.held}
        for array, _ in _reached(self.functions).values():
            if type(array) is np.ndarray and not array.flags.writeable and \
                    id(array) not in self.read_only and id(memory_owner(array)) in owners and \
                    all(base.flags.writeable for base in _bases(array)):
                array.flags.writeable = True


def _contents(container) -> list:
    """What a list or dict holds now: its items (a dict's key and item pairs)."""
    return list(container.items()) if isinstance(container, dict) else list(container)


def _same(before: list, now: list, pairs: bool) -> bool:
    """Whether a list (or, with `pairs`, a dict's key and item pairs) holds the very items it
    held."""
    if pairs:
        return len(before) == len(now) and all(
            a[0] == b[0] and a[1] is b[1] for a, b in zip(before, now))
    return len(before) == len(now) and all(a is b for a, b in zip(before, now))


def _refuse_changed(contents: list, where: str, statement: str) -> None:
    """Raise where the body put a traced value into one of the lists and dicts it reaches
    (`contents`: each with the name it is reached through and what it held before), putting
    back what each held. A change of Python values only (`calls.append(i)`, a cache filled) is
    a Python side effect, made while tracing, as tf.function's and jax.jit's are."""
    changed = [(container, name, before) for container, name, before in contents
               if not _same(before, _contents(container), isinstance(container, dict))]
    traced = [entry for entry in changed if _holds_traced(entry[0])]
    if not traced:
        return
    for container, _, before in changed:
        if isinstance(container, dict):
            container.clear()
            container.update(before)
        else:
            container[:] = before
    container, name, _ = traced[0]
    raise ControlFlowError(_CHANGED.format(where=where, statement=statement, name=name,
                                           kind=type(container).__name__))


def _holds_traced(container) -> bool:
    """Whether a list or dict holds a traced value (among its items, or theirs)."""
    return any(isinstance(value, Tracer) for value in held_values([container]))


_CHANGED = (
    "{where}\n  this body puts a traced value into a {kind} that it reaches through {name!r}, "
    "not as one of the statement's variables: {statement} on a traced value is traced once as "
    "a graph op, so the change would be made once, while tracing, not on each iteration or "
    "only on the path taken (it is undone). Assign the {kind} in the statement so that it is "
    "one of its variables, or change it outside the statement")


_ITERATOR = (
    "{where}\n  this body reads the iterator {name!r} (a {kind}) made before it: {statement} on "
    "a traced value is traced once as a graph op, so the items it takes from it would be "
    "taken once, while tracing, not on each iteration or only on the path taken. Make it a "
    "list before the statement (list(...)) and index that")


def _user_site(traceback) -> str:
    """`file:line` of the innermost frame of `traceback` outside autotrace and NumPy."""
    site = "<unknown>"
    while traceback is not None:
        if not library_frame(traceback.tb_frame):
            site = f"{traceback.tb_frame.f_code.co_filename}:{traceback.tb_lineno}"
        traceback = traceback.tb_next
    return site
