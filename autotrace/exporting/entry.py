"""The entry point of an exported module: its parameters, their checks, and its result.

The entry point takes the traced function's arguments that hold arrays, under the names and in
the kinds of the function's parameters: a positional parameter stays positional (and can be
given by keyword), a keyword-only one or one of `**kwargs` is keyword-only. Python values the
trace fixed (a learning rate, a flag) are keyword-only parameters defaulting to their exported
value, which refuse any other value: the same call works on the traced function and on the
module. Its result is the function's, rebuilt: tuples, lists and dicts as they are, and a
namedtuple or dataclass as a class of the same name and fields that the module defines
(`collections.namedtuple`, `dataclasses.make_dataclass`), since the user's class cannot be
imported there.
"""
from __future__ import annotations

import dataclasses
import keyword

import numpy as np

from .op_sources import ExportError, is_literal
from autotrace.runtime.abstract import AbstractArray
from autotrace.runtime.tracing.trees import (_Slot, is_dataclass_instance, leaves_with_paths,
                                     sorted_keys)

# What the entry point's body uses besides its parameters: a parameter of one of these names
# gets a trailing underscore.
_ENTRY_NAMES = {"variables", "_check", "_fixed", "_outputs"}


class EntryPoint:
    """The entry point's parameters, and the graph's inputs as expressions of them.

    Arguments:
        traced: the autotrace.function exported.
        args, kwargs: the call traced, bound to the parameters, without a method's instance.
        skipped: how many positional parameters the instance filled (a method's `self`).
        reserved: the module's names the entry point calls (its graph function, result
            classes), which no parameter may shadow.
    """

    def __init__(self, traced, args: tuple, kwargs: dict, skipped: int, reserved: set):
        reserved = _ENTRY_NAMES | set(reserved)
        names = traced._positional[skipped:]
        self.positional, self.keywords, self.fixed, self.inputs = [], [], [], []
        self.renamed = []  # (parameter, name): parameters renamed not to shadow the module's
        for index, argument in enumerate(args):
            declared = names[index] if index < len(names) else "*"
            parameter = f"argument{index}" if declared.startswith("*") else declared
            self._add(parameter, argument, self.positional, reserved,
                      named=not declared.startswith("*"))
        for key in kwargs:
            if not key.isidentifier() or keyword.iskeyword(key):
                raise ExportError(f"autotrace.export: the keyword argument {key!r} is not a "
                                  f"Python name, which an entry point's parameter must be")
            self._add(key, kwargs[key], self.keywords, reserved)
        # The graph takes the arrays of the positional arguments, then those of the keyword
        # arguments by sorted key (runtime/trees.map_arrays' order).
        renamed = dict(self.keywords)
        self.inputs += [_input(renamed[key], leaf_path, leaf) for key in sorted_keys(kwargs)
                        if key in renamed for leaf_path, leaf in leaves_with_paths(kwargs[key])]
        self._arguments = [*self.positional,
                           *((name, kwargs[key]) for key, name in self.keywords)]

    def _add(self, parameter: str, argument, kind: list, reserved: set,
             named: bool = True) -> None:
        leaves = leaves_with_paths(argument)
        if not leaves:
            # A literal of a named parameter can be passed by keyword (checked to be this
            # value); one of *args has no name to pass it by.
            keyword = named and is_literal(argument) and parameter not in reserved
            self.fixed.append((parameter, argument, keyword))
            return
        name = parameter + "_" if parameter in reserved else parameter
        if name != parameter:
            self.renamed.append((parameter, name))
        if kind is self.positional:
            kind.append((name, argument))
            self.inputs.extend(_input(name, leaf_path, leaf) for leaf_path, leaf in leaves)
        else:
            kind.append((parameter, name))

    def signature(self) -> str:
        """`w, X, *, y, scale=2.0`: positional parameters, then keyword-only ones."""
        keyword_only = [name for _, name in self.keywords] + [
            f"{parameter}={literal(value)}" for parameter, value, keyword in self.fixed
            if keyword]
        positional = [name for name, _ in self.positional]
        return ", ".join(positional + (["*", *keyword_only] if keyword_only else []))

    def checks(self) -> list:
        """The entry point's first lines: each array argument checked, each fixed value too.
        The arrays nested in an argument (a dict, a tuple) are checked where the graph takes
        them (see `_input`)."""
        lines = []
        for name, argument in self.arguments():
            leaves = leaves_with_paths(argument)
            if len(leaves) == 1 and leaves[0][0] == "":
                aval = aval_of(leaves[0][1])
                lines.append(f"    {name} = _check({name!r}, {name}, {aval.shape!r}, "
                             f"{aval.dtype.str!r})")
        lines += [f"    _fixed({parameter!r}, {parameter}, {literal(value)})"
                  for parameter, value, keyword in self.fixed if keyword]
        return lines

    def arguments(self) -> list:
        """(parameter, argument) for each parameter that takes arrays, in signature order."""
        return list(self._arguments)


def _input(name: str, leaf_path: str, leaf) -> str:
    """The graph's input for the array at `leaf_path` in the parameter `name`: the parameter
    itself for an array argument (checked in the entry point's first lines), else the nested
    array checked in place, `_check("batch['x']", batch['x'], (None, 3), '<f8')`, so that an
    array of another shape or dtype is refused by its path rather than computed with."""
    if not leaf_path:
        return name
    aval = aval_of(leaf)
    expression = f"{name}{leaf_path}"
    return f"_check({expression!r}, {expression}, {aval.shape!r}, {aval.dtype.str!r})"


def aval_of(leaf) -> AbstractArray:
    aval = getattr(leaf, "aval", None)
    if aval is not None:
        return aval
    array = np.asarray(leaf)
    return AbstractArray(array.shape, array.dtype, "cpu")


class ResultClasses:
    """The namedtuple and dataclass types of a result, each defined in the module under its
    own name (made unique with _2, _3 where two types share one)."""

    def __init__(self, reserved: set):
        self.reserved = set(reserved)
        self.by_type: dict[type, str] = {}

    def name_of(self, cls: type) -> str:
        if cls not in self.by_type:
            taken = self.reserved | set(self.by_type.values())
            name, number = cls.__name__, 1
            while name in taken:
                number += 1
                name = f"{cls.__name__}_{number}"
            self.by_type[cls] = name
        return self.by_type[cls]

    def names(self) -> list:
        return list(self.by_type.values())

    def modules(self) -> list:
        """The modules the definitions use."""
        kinds = {_is_namedtuple(cls) for cls in self.by_type}
        return [module for module, used in
                (("collections", True in kinds), ("dataclasses", False in kinds)) if used]

    def imports(self) -> list:
        return [f"import {module}" for module in self.modules()]

    def definitions(self) -> list:
        """`Result = collections.namedtuple('Result', ['loss', 'grads'])`, one a type."""
        lines = []
        for cls, name in self.by_type.items():
            if _is_namedtuple(cls):
                lines.append(f"{name} = collections.namedtuple({cls.__name__!r}, "
                             f"{list(cls._fields)!r})")
            else:
                frozen = cls.__dataclass_params__.frozen
                fields = [field.name for field in dataclasses.fields(cls)]
                lines.append(f"{name} = dataclasses.make_dataclass({cls.__name__!r}, "
                             f"{fields!r}{', frozen=True' if frozen else ''})")
        return lines


def _is_namedtuple(cls: type) -> bool:
    return issubclass(cls, tuple) and all(hasattr(cls, attribute)
                                          for attribute in ("_fields", "_make", "_asdict"))


def result_source(structure, entry_name: str, classes: ResultClasses) -> str:
    """The expression that rebuilds the function's result from the graph's `_outputs`."""
    if structure.single:
        return structure.template.source("_outputs")

    def write(template) -> str:
        if isinstance(template, _Slot):
            return template.source("_outputs")
        if type(template) is dict:
            return "{" + ", ".join(f"{literal(key, entry_name)}: {write(value)}"
                                   for key, value in template.items()) + "}"
        if type(template) in (tuple, list):
            items = [write(item) for item in template]
            text = ", ".join(items) + ("," if len(items) == 1 and type(template) is tuple
                                       else "")
            return f"({text})" if type(template) is tuple else f"[{text}]"
        if isinstance(template, tuple) and _is_namedtuple(type(template)):
            return _construction(classes.name_of(type(template)),
                                 zip(type(template)._fields, template), write)
        if is_dataclass_instance(template):
            fields = [field.name for field in dataclasses.fields(template)]
            return _construction(classes.name_of(type(template)),
                                 ((name, getattr(template, name)) for name in fields), write)
        if isinstance(template, (tuple, list, dict)):
            raise ExportError(
                f"autotrace.export: {entry_name} returns a {type(template).__name__}; an "
                f"exported module rebuilds tuples, lists, dicts, namedtuples and dataclasses "
                f"only: return one of those")
        return literal(template, entry_name)
    return write(structure.template)


def _construction(class_name: str, fields, write) -> str:
    return f"{class_name}(" + ", ".join(f"{name}={write(value)}" for name, value in fields) + ")"


def literal(value, entry_name: str | None = None) -> str:
    """`value` as Python source, if it is a literal that reads back as itself."""
    if is_literal(value):
        return repr(value)
    raise ExportError(f"autotrace.export: {entry_name} returns {value!r} (a "
                      f"{type(value).__name__}), which an exported module cannot write; "
                      f"return arrays, numbers, strings and None")
