"""How generated code reads names: when it runs, as the user's function reads them.

A derivative is a function of the user's module: its globals are the module's own dict, so
`LR = 10.0` after `grad(loss)` was built reaches it as it reaches the primal, at the cost of
any global read. The closure variables of the user's function are its closure variables too,
the same cells, so a `nonlocal` rebinding reaches it. autotrace's own names (runtime helpers,
the derivatives of the functions it calls, lifted nested functions) are closure variables of
cells of their own, so they never enter the user's module (see `LiveNamespace.load`).

The transform itself looked at some of those values: which function a call runs (and so which
derivative rule applies), whether a name holds a module, a class, a list or a number. Each such
value is recorded (`seen`), and each call of the derivative first checks them (once per call,
not once per read): a value that would have been transformed differently (another function, a
list where a number was) raises `StaleDerivativeError` instead of giving a gradient of code
that no longer runs.
"""
from __future__ import annotations

import ast
import builtins
import gc
import threading
import types

from ..codegen.codegen import load_closure
from ..derivative_record import derivative_record
from ..errors import Location, TransformError
from ..codegen.naming import names_in
from ..rules.core import constant
from .list_operators import INEXACT, NUMBER, UNKNOWN, _value_kind


class _TransformLock:
    """Transforms run one at a time: parsing and code generation share state (the standard
    library's parser among it, which fails under concurrent use from threads). A reentrant
    lock, which also pauses Python's cyclic garbage collector from the outermost acquisition
    to its release, if it was running.

    A transform allocates hundreds of thousands of small objects (trees, sets, dicts), which
    trigger a collection every few hundred allocations, each walking the young objects and,
    every hundredth, every object the process keeps: that was about an eighth of the time
    generating a derivative took. What a transform allocates is freed by reference counts as
    it goes; the objects it leaves in cycles wait for the first collection after it, which the
    allocations it made start as soon as the collector runs again."""

    def __init__(self):
        self._lock = threading.RLock()
        self._depth = 0
        self._collecting = False  # whether the collector ran when the outermost one began

    def __enter__(self):
        self._lock.acquire()
        self._depth += 1
        if self._depth == 1:
            self._collecting = gc.isenabled()
            gc.disable()
        return self

    def __exit__(self, *exception):
        self._depth -= 1
        if self._depth == 0 and self._collecting:
            gc.enable()
        self._lock.release()


transform_lock = _TransformLock()


def is_current(derivative) -> bool:
    """Whether every namespace a generated derivative reads (its own and those of the
    derivatives it calls) holds what it was generated for (see `LiveNamespace.is_current`)."""
    record = derivative_record(derivative)
    return record is None or all(namespace.is_current() for namespace in record.namespaces)


class StaleDerivativeError(TransformError):
    """A global or closure variable now holds what the derivative was not generated for."""


def transform_token(value):
    """What the transform depends on in `value`: functions, modules, classes and other callables
    by identity; numbers, arrays and sequences by kind; anything else by its type. The check
    a generated function runs first (`LiveNamespace.check`, which a derivative of it does not
    run) is the same to the transform whichever namespace's it is."""
    if getattr(value, "__func__", None) is LiveNamespace.check:
        return ("check",)
    if callable(value) or isinstance(value, types.ModuleType):
        return ("is", id(value))
    kind = _value_kind(value)
    return ("kind", kind) if kind != UNKNOWN else ("type", type(value))


def _same_to_the_transform(seen, value) -> bool:
    """Whether code generated when a name held `seen` is right for `value`."""
    return serves(transform_token(seen), value)


def serves(was: tuple, value) -> bool:
    """Whether code generated when a name held a value of transform token `was` is right for
    `value`. Code for a number that may be an integer (`LR = 1`) also serves a float: it
    leaves to the run whether `x * LR` repeats a list."""
    token = transform_token(value)
    return token == was or (was == ("kind", NUMBER) and token == ("kind", INEXACT))


def _describe(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"a {type(value).__name__}"


class LiveNamespace(dict):
    """What the names of a function being transformed mean: while the transform runs, its
    globals' and closure variables' values and the entries the transform adds (its own
    names); then the loader of the code generated for it (`load`)."""

    def __init__(self, parsed):
        """The namespace of `parsed` (a transforms.front.parsing.ParsedFunction)."""
        super().__init__(parsed.namespace)
        function = parsed.function
        self.function = function  # whose names these are
        self.live_globals = function.__globals__  # the user's module dict
        # closure variable name -> its cell
        self.cells = dict(zip(function.__code__.co_freevars, function.__closure__ or ()))
        self.source_names = names_in(parsed.node)  # what the user wrote (not ours)
        self.own_cells = {}  # own name -> the cell generated code reads it through
        self.location: Location = parsed.location
        self.seen = {}  # name -> its value when the transform read it
        self.watched = ()  # (name, its cell or None for a global, value seen): see `check`
        self.shadowed: set = set()  # the function's own variables (parsing.resolve)

    def __setitem__(self, key: str, value) -> None:
        # An own name filled after code reading it was loaded (the derivative of a recursive
        # function, a nested function lifted later) reaches that code through its cell.
        super().__setitem__(key, value)
        cell = self.own_cells.get(key)
        if cell is not None:
            cell.cell_contents = value

    def _holds_user_value(self, key: str, value) -> bool:
        """Whether entry `key` holding `value` is the user's own name, to be read live."""
        cell = self.cells.get(key)
        if cell is None:
            return self.live_globals.get(key, _ABSENT) is value
        try:
            return cell.cell_contents is value
        except ValueError:  # not assigned yet
            return False

    def _cell_for(self, key: str):
        """The cell through which generated code reads `key`: the user's closure cell, or one
        of our own; None for a global of the user's module (or a builtin)."""
        value = dict.get(self, key, _ABSENT)
        if value is _ABSENT or self._holds_user_value(key, value):
            if key in self.cells:
                return self.cells[key]
            if value is not _ABSENT or key in self.source_names or key in builtins.__dict__:
                return None
            # Neither the user's nor ours yet: a name the transform binds later.
        cell = self.own_cells.get(key)
        if cell is None:
            cell = self.own_cells[key] = (types.CellType() if value is _ABSENT
                                          else types.CellType(value))
        return cell

    def load(self, source: str, name: str, hint: str, checked: bool = False, parsed=None):
        """The function `source` defines, as a function of the user's module (see the module
        docstring). `checked`: each call first checks the names the transform read (`check`);
        for the functions that the user, or other generated code, calls. `parsed`: `source`
        read by ast.parse, where the caller read it (it is changed here)."""
        def cells_of(read: set) -> dict:
            cells = {key: cell for key in sorted(read)
                     if (cell := self._cell_for(key)) is not None}
            if checked:
                cells[_CHECK] = types.CellType(self.check)
            return cells
        first = [ast.Expr(value=ast.Call(func=ast.Name(id=_CHECK, ctx=ast.Load()), args=[],
                                         keywords=[]))] if checked else []
        return load_closure(source, name, self.live_globals, cells_of, hint, first, parsed)

    def read_live(self, *generated_code) -> None:
        """Once the code is generated: leave the user's globals and closure values to be read
        when it runs, recording what the transform saw of the names the function or
        `generated_code` (code objects) read."""
        read = set().union(*(names_read(code) for code in
                             (self.function.__code__,) + generated_code))
        # (every global of the user's module is an entry: a module of thousands pays this once
        # a derivative, so a global's test is written out here, not a call of
        # _holds_user_value)
        live_globals, cells = self.live_globals, self.cells
        users = [(key, value) for key, value in self.items()
                 if (live_globals.get(key, _ABSENT) is value if key not in cells
                     else self._holds_user_value(key, value))]
        for key, value in users:
            del self[key]
            if key in read:
                self.seen[key] = value
        self.watched = tuple((key, self.cells.get(key), value)
                             for key, value in self.seen.items())

    def check(self) -> None:
        """Raise StaleDerivativeError if a name the transform read holds what the code was
        not generated for. Run by each call of a checked function: kept short."""
        live_globals = self.live_globals
        for key, cell, seen in self.watched:
            try:
                value = live_globals[key] if cell is None else cell.cell_contents
            except (KeyError, ValueError):
                continue  # unbound: the code's own read raises NameError, as the primal's
            if value is not seen and not _same_to_the_transform(seen, value):
                raise StaleDerivativeError(
                    f"{key!r} was {_describe(seen)} when autotrace generated the derivative "
                    f"of {self.location.name}, and is now {_describe(value)}; the derivative "
                    "follows the old value. Call autotrace.grad (or the transform you used) "
                    "again after rebinding it.", self.location.filename,
                    self.location.first_line, key)

    def rebound(self, function, seen: dict, own_cells: dict, keep) -> "LiveNamespace":
        """This namespace for `function` (None: for none yet), a function of the same code
        whose names hold `seen`, values the same to the transform as those this one saw; the
        generated code reads its own names through `own_cells`, and its other entries are
        those whose value `keep(value)` (see transforms/codegen/rebinding.py)."""
        namespace = LiveNamespace.__new__(LiveNamespace)
        namespace.__dict__.update(self.__dict__)
        for key, value in self.items():
            if key not in self.own_cells and keep(value):
                dict.__setitem__(namespace, key, value)
        for key, cell in own_cells.items():
            try:
                dict.__setitem__(namespace, key, cell.cell_contents)
            except ValueError:  # a placeholder, filled for a function
                pass
        namespace.function, namespace.own_cells, namespace.seen = function, own_cells, seen
        namespace.cells = {} if function is None else dict(
            zip(function.__code__.co_freevars, function.__closure__ or ()))
        namespace.watched = tuple((key, namespace.cells.get(key), value)
                                  for key, value in seen.items())
        return namespace

    def is_current(self) -> bool:
        """Whether every name the transform read holds what the code was generated for."""
        try:
            self.check()
        except StaleDerivativeError:
            return False
        return True


# The name under which checked generated code calls `LiveNamespace.check`: not an identifier
# autotrace generates or users write.
_CHECK = "__autotrace_check__"
_ABSENT = object()


def names_read(code) -> set:
    """The global, free and attribute names `code` and the code objects inside it read."""
    names = set(code.co_names) | set(code.co_freevars)
    for constant in code.co_consts:
        if hasattr(constant, "co_names"):
            names |= names_read(constant)
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
