"""A derivative generated for one function, rebound to another function of the same code.

A closure made again each call (`opt.minimize(lambda: np.mean((model(x) - y) ** 2))` in a
training step, `grad(lambda w: loss(w, batch))` in a loop) is a new function of the same code
each time, with new cells. Generated code reads the user's globals, closure variables and
defaults when it runs (transforms/analysis/live_names.py), so the code generated for one such
function is right for another whose names hold what is the same to the transform (`serves`),
as it stays right when the first one's cells are rebound: the same check, made before the
derivative is handed out.

`DerivativeTemplate.of` keeps of a derivative what another function needs, and nothing of the
function it was made for: its code, autotrace's own cells (helpers), where each of the user's
cells goes, and what the transform saw of each name (functions and other callables by
identity, the rest by kind). `bind` makes the derivative of another function of that code; it
and `of` give None where the derivative could not be rebound exactly (a name now holds another
function or kind of value, or the build reached the function's cells other than through the
derivative's own closure: a nested function lifted, a recursive call), and the caller generates
it anew.
"""
from __future__ import annotations

import dataclasses
import functools
import types
import weakref

from .codegen import register_source
from .loading import note_loaded
from ..analysis.live_names import LiveNamespace, serves, transform_token
from ..derivative_record import derivative_record
from ..front.parsing import LITERALS as _LITERALS
from ...runtime.generated_source import forget_with

# Where a cell of the derivative's closure comes from, when it is bound to a function.
_USER, _OWN, _PRIMAL, _SELF, _CHECK = "user", "own", "primal", "self", "check"


class DerivativeTemplate:
    """The derivative generated for one function, apart from that function (see the module
    docstring); `bind(function)` gives it for another function of the same code."""

    def __init__(self, derivative, record, top, slots: list, watched: list, tainted: tuple,
                 function: types.FunctionType):
        # The code of the function it derives (a rebound derivative's: its template's).
        self.primal_code = _template_code(record.primal)
        self.code = derivative.__code__
        self.name, self.qualname = derivative.__name__, derivative.__qualname__
        self.module, self.doc = derivative.__module__, derivative.__doc__
        self.defaults = derivative.__defaults__
        # The primal's defaults by kind: a module default is bound to the template's module.
        self.primal_defaults = _defaults_kind(function)
        # Made from the one running calls whole of a derivative (`_parsed`): its code.
        self.parsed_code = None if function is record.primal else _template_code(function)
        self.kwdefaults = derivative.__kwdefaults__
        # The module's globals, by identity and name (no reference: it would keep the module).
        self.globals_id = id(derivative.__globals__)
        self.globals_name = derivative.__globals__.get("__name__")
        self.slots, self.watched = slots, watched
        own_names = {}  # the top namespace's own names -> a slot of the closure, or a cell
        slot_of = {id(cell): index for index, cell in enumerate(derivative.__closure__)}
        for key, cell in top.own_cells.items():
            index = slot_of.get(id(cell))
            if index is not None:
                own_names[key] = index
            elif not _reaches(cell.cell_contents if _filled(cell) else None, tainted):
                own_names[key] = cell
        self.own_names = own_names
        self.namespace = top.rebound(None, {}, {}, lambda value: not _reaches(value, tainted))
        self.namespace.live_globals = None  # (the function's, when bound)
        self.record = dataclasses.replace(record, primal=None, namespaces=tuple(
            None if namespace is top else namespace for namespace in record.namespaces),
            **_rebuilt_for(record, None))

    @classmethod
    def of(cls, derivative, function: types.FunctionType) -> "DerivativeTemplate | None":
        """The template of `derivative`, generated from source for the Python `function`;
        None where it cannot serve another function exactly."""
        record = derivative_record(derivative)
        if (record is None or record.primal is not function or record.source is None
                or not isinstance(derivative, types.FunctionType)
                or derivative.__closure__ is None
                or record.traced_primal is not None or record.specialized is not None
                or any(late is not None and not hasattr(late, "for_function")
                       for late in (record.whole_calls, record.top_calls))):
            return None
        primal, function = function, _parsed(function, built=False)
        if function is None:
            return None
        if _defaults_kind(function) is None:
            # (a default of another kind is a name of the namespace, bound to the first
            # function's value: transforms/front/parsing.py _defaults_as_evaluated)
            return None
        if any(isinstance(constant, types.CodeType) for constant in function.__code__.co_consts):
            # (a nested function's or lambda's defaults, which may read the closure, are
            # evaluated by the transform where it generates the code: `def g(v, s=a)`)
            return None
        if any(_made_in_a_function(cell.cell_contents) for cell in function.__closure__ or ()
               if _filled(cell)):
            return None  # (the derivatives of its calls, which a template keeps, would keep it)
        tops = [namespace for namespace in record.namespaces if namespace.function is function]
        if len(tops) != 1:
            return None
        top = tops[0]
        if any(key in top for key in function.__code__.co_freevars):
            return None  # a closure variable the build bound to a value of its own
        user_cells = {id(cell): index for index, cell in enumerate(function.__closure__ or ())}
        tainted = ({id(primal), id(function), id(derivative), id(top)}, set(user_cells))
        slots = []
        for cell in derivative.__closure__:
            if id(cell) in user_cells:
                slots.append((_USER, user_cells[id(cell)]))
                continue
            if not _filled(cell):
                return None
            value = cell.cell_contents
            if value is function:
                slots.append((_PRIMAL, None))
            elif value is derivative:
                slots.append((_SELF, None))
            elif (getattr(value, "__self__", None) is top
                  and getattr(value, "__func__", None) is LiveNamespace.check):
                slots.append((_CHECK, None))
            elif _reaches(value, tainted):
                return None
            else:
                slots.append((_OWN, cell))
        for namespace in record.namespaces:  # those of the functions it calls
            if namespace is not top and (
                    any(id(cell) in user_cells for cell in namespace.cells.values())
                    or _reaches(namespace.function, tainted)
                    or any(_reaches(value, tainted, 1) for value in namespace.values())):
                return None
        if any(_reaches(value, tainted, 1) for value in
               tuple(derivative.__defaults__ or ()) + tuple(
                   (derivative.__kwdefaults__ or {}).values())):
            return None
        watched = []
        for key, cell, seen in top.watched:
            if cell is not None and id(cell) not in user_cells:
                return None
            token = transform_token(seen)
            watched.append((key, None if cell is None else user_cells[id(cell)], token,
                            _keeper(seen) if token[0] == "is" else None))
        shared = record.namespaces
        if isinstance(shared, list):
            # The derivatives of the functions it calls (kept by the template) share the
            # build's list of namespaces (transforms/codegen/loading.py), whose entry for the
            # function is no concern of theirs: the derivative keeps it, in a copy of the list,
            # and they do not keep the function alive.
            record = dataclasses.replace(record, namespaces=tuple(shared))
            derivative.__autotrace_derivative__ = record
            shared[:] = [namespace for namespace in shared if namespace is not top]
        return cls(derivative, record, top, slots, watched, tainted, function)

    def bind(self, function: types.FunctionType):
        """The derivative for `function`, a function of the code the template's was made for;
        None where one of its names holds what the transform would have generated other code
        for."""
        primal = function
        if _template_code(primal) is not self.primal_code:
            return None
        if self.parsed_code is not None:
            function = _parsed(primal, built=True)
            if function is None or _template_code(function) is not self.parsed_code:
                return None
        globals_ = function.__globals__
        if id(globals_) != self.globals_id or globals_.get("__name__") != self.globals_name \
                or _defaults_kind(function) != self.primal_defaults:
            return None
        closure = function.__closure__ or ()
        seen = {}
        for key, index, token, keeper in self.watched:
            try:
                value = globals_[key] if index is None else closure[index].cell_contents
            except (KeyError, ValueError):  # unbound now: generated anew, as before
                return None
            if not (keeper() is value if keeper is not None else serves(token, value)):
                return None
            seen[key] = value
        cells = [closure[where] if kind == _USER else where if kind == _OWN
                 else types.CellType(function) if kind == _PRIMAL else types.CellType()
                 for kind, where in self.slots]
        own_cells = {key: cells[where] if isinstance(where, int) else where
                      for key, where in self.own_names.items()}
        namespace = self.namespace.rebound(function, seen, own_cells, lambda value: True)
        namespace.live_globals = globals_
        # Its own file of the same source: the lines live as long as it (forget_with).
        filename = register_source(self.record.source, self.name)
        derivative = types.FunctionType(_in_file(self.code, filename), globals_, self.name,
                                        self.defaults, tuple(cells))
        for (kind, _), cell in zip(self.slots, cells):
            if kind == _SELF:
                cell.cell_contents = derivative
            elif kind == _CHECK:
                cell.cell_contents = namespace.check
        derivative.__kwdefaults__ = None if self.kwdefaults is None else dict(self.kwdefaults)
        derivative.__qualname__, derivative.__module__ = self.qualname, self.module
        derivative.__doc__ = self.doc
        # (what a derivative of it is made from: the template made for this one's code)
        derivative.__autotrace_template_code__ = self.code
        derivative.__autotrace_derivative__ = dataclasses.replace(
            self.record, primal=primal, namespaces=[
                namespace if kept is None else kept for kept in self.record.namespaces],
            **_rebuilt_for(self.record, primal))
        forget_with(derivative, filename)
        note_loaded(derivative, namespace.location.name)
        return derivative


def _parsed(function, built: bool):
    """The function the transform read for `function` (transforms/front/parsing.py `_unwrap`):
    for a derivative that runs its calls in halves, the one running them whole (None where
    that one is not built yet and not `built` now, or is no Python function)."""
    record = derivative_record(function)
    if record is None or record.whole_calls is None:
        return function
    parsed = record.whole_calls() if built else record.whole_calls.made
    return parsed if isinstance(parsed, types.FunctionType) else None


def _template_code(function) -> types.CodeType:
    """The code `function` runs, or for a rebound derivative, its template's code (of which it
    runs a copy: not a function that functools.wraps gave a rebound derivative's attributes)."""
    code = function.__code__
    template = function.__dict__.get("__autotrace_template_code__")
    if template is None or template.co_code != code.co_code \
            or template.co_freevars != code.co_freevars:
        return code
    return template


def _rebuilt_for(record, function) -> dict:
    """The record's `whole_calls` and `top_calls` (transforms/pipeline.py RebuiltWithCalls),
    for `function`."""
    return {late: getattr(record, late).for_function(function)
            for late in ("whole_calls", "top_calls") if getattr(record, late) is not None}


def _defaults_kind(function) -> tuple | None:
    """`function`'s defaults as the transform depends on them: a literal by its type, a module
    itself (parameters read as it: transforms/front/module_defaults.py); None where one is of
    another kind."""
    keywords = function.__kwdefaults__ or {}
    kinds = []
    for value in (*(function.__defaults__ or ()), *(keywords[key] for key in sorted(keywords))):
        if isinstance(value, types.ModuleType):
            kinds.append(value)
        elif type(value) in _LITERALS:
            kinds.append(type(value))
        else:
            return None
    return tuple(kinds) + tuple(sorted(keywords))


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _reaches(value, tainted: tuple, depth: int = 2) -> bool:
    """Whether `value` is, or (within `depth` steps: a function's closure and defaults, a
    method's function and object, a partial's function and arguments) refers to, one of the
    objects or cells of `tainted` (ids of objects, ids of cells)."""
    objects, cells = tainted
    if id(value) in objects:
        return True
    if depth == 0:
        return False
    if isinstance(value, types.FunctionType):
        closure = value.__closure__ or ()
        if any(id(cell) in cells for cell in closure):
            return True
        parts = [cell.cell_contents for cell in closure if _filled(cell)]
        parts += list(value.__defaults__ or ()) + list((value.__kwdefaults__ or {}).values())
        record = derivative_record(value)
        if record is not None:  # (not its namespaces: those of the whole build, see `of`)
            parts.append(record.primal)
    elif isinstance(value, types.MethodType):
        parts = [value.__func__, value.__self__]
    elif isinstance(value, functools.partial):
        parts = [value.func, *value.args, *value.keywords.values()]
    else:
        return False
    return any(_reaches(part, tainted, depth - 1) for part in parts)


def _made_in_a_function(value) -> bool:
    """Whether `value` is a class or function defined inside a function, or an object of such a
    class: one the user may drop, which a template kept for the code would keep alive."""
    kind = value if isinstance(value, type) else type(value)
    named = value if isinstance(value, (type, types.FunctionType)) else kind
    return "<locals>" in getattr(named, "__qualname__", "") or \
        "<locals>" in getattr(kind, "__qualname__", "")


def _keeper(value):
    """A function giving `value` back (or None once it is gone): weakly where it can be."""
    try:
        return weakref.ref(value)
    except TypeError:  # (NumPy's ufuncs, builtins: they live as long as their module)
        return lambda: value


def _in_file(code: types.CodeType, filename: str) -> types.CodeType:
    """`code`, and the code objects inside it, compiled as from file `filename`."""
    constants = tuple(_in_file(constant, filename) if isinstance(constant, types.CodeType)
                      else constant for constant in code.co_consts)
    return code.replace(co_filename=filename, co_consts=constants)
