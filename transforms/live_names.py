"""The globals of generated code: read when the code runs, as the user's function reads them.

A derivative's own names (runtime helpers, the derivatives of the functions it calls, lifted
nested functions) are entries of a `LiveNamespace`. The user function's globals and closure
variables are not copied in: a lookup that misses the entries reads the closure cell, then the
module's globals, at that moment. So `LR = 10.0` after `grad(loss)` was built, or a `nonlocal`
rebinding, reaches the derivative exactly as it reaches the primal.

The transform itself looked at some of those values: which function a call runs (and so which
derivative rule applies), whether a name holds a module, a class, a list or a number. Each such
value is recorded (`seen`); a value read later that would have been transformed differently
(another function, a list where a number was) raises `StaleDerivativeError` instead of giving a
gradient of code that no longer runs.
"""
from __future__ import annotations

import threading
import types

from transforms.errors import Location, TransformError
from transforms.rules.core import constant
from transforms.sequences import INEXACT, NUMBER, UNKNOWN, _value_kind


# Transforms run one at a time: parsing and code generation share state (the standard
# library's parser among it, which fails under concurrent use from threads).
transform_lock = threading.RLock()


def is_current(derivative) -> bool:
    """Whether every namespace a generated derivative reads (its own and those of the
    derivatives it calls) holds what it was generated for (see `LiveNamespace.is_current`)."""
    return all(namespace.is_current()
               for namespace in getattr(derivative, "__autotrace_namespaces__", ()))


class StaleDerivativeError(TransformError):
    """A global or closure variable now holds what the derivative was not generated for."""


def transform_token(value):
    """What the transform depends on in `value`: functions, modules, classes and other callables
    by identity; numbers, arrays and sequences by kind; anything else by its type."""
    if callable(value) or isinstance(value, types.ModuleType):
        return ("is", id(value))
    kind = _value_kind(value)
    return ("kind", kind) if kind != UNKNOWN else ("type", type(value))


def _same_to_the_transform(seen, value) -> bool:
    """Whether code generated when a name held `seen` is right for `value`. Code for a number
    that may be an integer (`LR = 1`) also serves a float: it leaves to the run whether
    `x * LR` repeats a list."""
    token, was = transform_token(value), transform_token(seen)
    return token == was or (was == ("kind", NUMBER) and token == ("kind", INEXACT))


def _describe(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"a {type(value).__name__}"


class LiveNamespace(dict):
    """Generated code's globals (see the module docstring); `snapshot()` is what the names
    mean now, for transforming the generated code again (second derivatives)."""

    def __init__(self, parsed):
        """The namespace of `parsed` (a transforms.parsing.ParsedFunction): its globals and
        closure values as entries while the transform reads them (see `read_live`)."""
        super().__init__(parsed.namespace)
        function = parsed.function
        self.function = function  # whose names these are
        self.user_values = parsed.namespace
        self.live_globals = function.__globals__  # the user's module dict (or a LiveNamespace)
        # closure variable name -> its cell
        self.cells = dict(zip(function.__code__.co_freevars, function.__closure__ or ()))
        self.location: Location = parsed.location
        self.seen = {}  # name -> its value when the transform read it

    def __missing__(self, key: str):
        # Generated code reads the user's names through here: kept short, it runs often.
        cell = self.cells.get(key) if self.cells else None
        if cell is not None:
            try:
                value = cell.cell_contents
            except ValueError:
                raise NameError(f"cannot access free variable {key!r} where it is not "
                                "associated with a value in enclosing scope") from None
        else:
            value = self.live_globals[key]  # KeyError: Python goes on to the builtins
        seen = self.seen.get(key, value)
        if seen is not value and not _same_to_the_transform(seen, value):
            raise StaleDerivativeError(
                f"{key!r} was {_describe(seen)} when autotrace generated the derivative "
                f"of {self.location.name}, and is now {_describe(value)}; the derivative "
                "follows the old value. Call autotrace.grad (or the transform you used) again "
                "after rebinding it.", self.location.filename, self.location.first_line, key)
        return value

    def read_live(self, *generated_code) -> None:
        """Once the code is generated: leave the user's globals and closure values to be read
        when it runs (entries still holding what the transform saw), recording what it saw of
        the names the function or `generated_code` (code objects) read."""
        read = set().union(*(_names_read(code) for code in
                             (self.function.__code__,) + generated_code))
        for key, value in self.user_values.items():
            if key != "__builtins__" and dict.get(self, key, _ABSENT) is value:
                del self[key]
                if key in read:
                    self.seen[key] = value
        self.user_values = {}

    def is_current(self) -> bool:
        """Whether every name the transform read holds what the code was generated for."""
        for key in self.seen:
            try:
                self[key]  # a missing key: read through `__missing__`, which checks it
            except (KeyError, NameError, StaleDerivativeError):
                return False
        return True

    def snapshot(self) -> dict:
        """Every name's current value: the user's globals and cells, then own entries."""
        live = self.live_globals
        values = live.snapshot() if isinstance(live, LiveNamespace) else dict(live)
        for key, cell in self.cells.items():
            try:
                values[key] = cell.cell_contents
            except ValueError:  # not assigned yet
                pass
        values.update(self)
        return values


_ABSENT = object()


def _names_read(code) -> set:
    """The global, free and attribute names `code` and the code objects inside it read."""
    names = set(code.co_names) | set(code.co_freevars)
    for constant in code.co_consts:
        if hasattr(constant, "co_names"):
            names |= _names_read(constant)
    return names


class _Default:
    """The default of a derivative's parameter that has one in the primal: the derivative reads
    the primal's default when it runs (`default_argument`), as a call of the primal does."""

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT = _Default()


def default_argument(function, parameter: str):
    """`function`'s default value for `parameter` now (its __defaults__ / __kwdefaults__)."""
    code = function.__code__
    positional = code.co_varnames[:code.co_argcount]
    if parameter in positional:
        defaults = function.__defaults__ or ()
        index = positional.index(parameter) - (len(positional) - len(defaults))
        if index >= 0:
            return defaults[index]
    keywords = function.__kwdefaults__ or {}
    if parameter in keywords:
        return keywords[parameter]
    raise TypeError(f"{function.__name__}() missing required argument: {parameter!r} (its "
                    "default was removed after the derivative was generated)")


constant(default_argument)  # a second derivative reads the default as the first one does
