"""A parameter whose default is a module, read as that module: `def mse(w, batch, xp=np)`.

Code written for several array libraries takes its NumPy module as a parameter. The transform
cannot tell which function `xp.mean(...)` calls where `xp` is any parameter, and generated code
then resolves each call when it runs (transforms/dynamic_calls.py), at many times the cost of
the rule the transform would have inlined for `np.mean`. A parameter that the function never
rebinds and whose default holds a module is read as that module (`read_as_modules`): its reads
become reads of the name the default is bound to (transforms/front/parsing.py
`_defaults_as_evaluated`). So is one whose default is None where the function starts by
putting a module in its place (`xp = np if xp is None else xp`; that statement is dropped),
as that module's name. The derivative starts with a guard (`guards`), after the
default is read when it runs: where the parameter holds any other value (a call giving another
module, or the default changed since), the derivative generated without this reading
(`unspecialized`, made once per function) runs instead.
"""
from __future__ import annotations

import types

import gast

from ..analysis.live_names import is_current, transform_lock
from ..rules.core import constant
from ..session import Session
from .function_caches import made_from


class Unspecialized:
    """How the derivative that a guard falls back on is built: the mode, `wrt` as given, the
    builder's options and the session's flags (nothing of the function, which the guard
    passes: a derivative rebound to another function of the same code keeps this)."""

    def __init__(self, mode: str, wrt, options: dict, session: Session, outermost: bool):
        self.mode, self.wrt, self.options = mode, wrt, options
        self.flags = (session.optimized, outermost, session.called, session.split_calls,
                      session.show_after)


def unspecialized(primal, how: Unspecialized):
    """`primal`'s derivative built as `how` says, with no parameter read as its default's
    module: made once per function (kept on it), and again where it is not current."""
    with transform_lock:
        made = made_from(primal, "__autotrace_unspecialized__")
        derivative = made.get(how)
        if derivative is None or not is_current(derivative):
            optimized, outermost, called, split_calls, show_after = how.flags
            session = Session(optimized, False, outermost, called, split_calls, show_after,
                              module_defaults=False)
            derivative = made[how] = session.build(how.mode, primal, how.wrt, **how.options)
        return derivative


constant(unspecialized)  # (a derivative of a derivative calls the one it returns as it is)


def read_as_modules(unit) -> None:
    """Read each parameter of the unit's function whose default holds a module, and which the
    function never rebinds, as that module (see the module docstring); note them, and how the
    guard's fallback is built, in `unit.module_defaults`."""
    unit.module_defaults = None
    function, parsed, session = unit.function, unit.parsed, unit.session
    if (not session.module_defaults or session.implicit or unit.func is not parsed.function
            or not isinstance(unit.func, types.FunctionType)
            or function.args.vararg is not None or function.args.kwarg is not None):
        return
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    pairs = list(zip(positional[len(positional) - len(arguments.defaults):],
                     arguments.defaults))
    pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)
              if d is not None]
    modules = {parameter.id: default.id for parameter, default in pairs
               if isinstance(default, gast.Name)
               and isinstance(parsed.namespace.get(default.id), types.ModuleType)}
    chosen = _module_for_none(function, pairs, parsed.namespace)
    if chosen is not None:  # `xp = np if xp is None else xp`: that statement is dropped
        parameter, module, statement = chosen
        modules[parameter] = module
        function.body.remove(statement)
    if not modules:
        return
    body = [node for statement in function.body for node in gast.walk(statement)]
    for name in _names_bound(body):
        modules.pop(name, None)
        if chosen is not None and name in (chosen[0], chosen[1]):
            function.body.insert(_first_statement(function), chosen[2])  # (as it was)
            modules.pop(chosen[0], None)
            chosen = None
    if not modules:
        return
    for node in body:
        if isinstance(node, gast.Name) and node.id in modules:
            node.id = modules[node.id]
    options = {} if unit.mode == "forward" else dict(
        with_value=unit.with_value, checkpoint_every=unit.checkpoint_every, split=unit.split)
    how = Unspecialized(unit.mode, unit.with_respect_to, options, session, unit.outermost)
    unit.module_defaults = (modules, set() if chosen is None else {chosen[0]}, how)


def _first_statement(function: gast.FunctionDef) -> int:
    """The index of the first statement of `function`'s body after its docstring."""
    body = function.body
    docstring = body and isinstance(body[0], gast.Expr) and isinstance(
        body[0].value, gast.Constant) and isinstance(body[0].value.value, str)
    return 1 if docstring else 0


def _module_for_none(function: gast.FunctionDef, pairs: list, namespace: dict):
    """(parameter, the global name of a module, the statement) where the function's first
    statement gives a parameter whose default is None a module in its place:
    `xp = np if xp is None else xp` or `if xp is None: xp = np`; else None."""
    index = _first_statement(function)
    if index >= len(function.body):
        return None
    statement = function.body[index]
    defaulted_none = {parameter.id for parameter, default in pairs
                      if isinstance(default, gast.Constant) and default.value is None}
    if isinstance(statement, gast.Assign) and isinstance(statement.value, gast.IfExp):
        target, test, module, other = (statement.targets, statement.value.test,
                                       statement.value.body, statement.value.orelse)
        if not (isinstance(other, gast.Name) and len(target) == 1
                and isinstance(target[0], gast.Name) and other.id == target[0].id):
            return None
    elif isinstance(statement, gast.If) and not statement.orelse and len(statement.body) == 1 \
            and isinstance(statement.body[0], gast.Assign):
        test, target, module = (statement.test, statement.body[0].targets,
                                statement.body[0].value)
    else:
        return None
    if not (len(target) == 1 and isinstance(target[0], gast.Name)
            and target[0].id in defaulted_none and isinstance(module, gast.Name)
            and isinstance(namespace.get(module.id), types.ModuleType)
            and isinstance(test, gast.Compare) and isinstance(test.left, gast.Name)
            and test.left.id == target[0].id and len(test.ops) == 1
            and isinstance(test.ops[0], gast.Is) and isinstance(test.comparators[0], gast.Constant)
            and test.comparators[0].value is None):
        return None
    return target[0].id, module.id, statement


def _names_bound(nodes: list) -> set:
    """The names that `nodes` (those of a function's body) bind, delete or declare global or
    nonlocal, or may bind in ways not followed here (a match statement: all of them)."""
    bound = set()
    for node in nodes:
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            bound.add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, gast.alias):
            bound.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, gast.Match):
            return {name.id for name in nodes if isinstance(name, gast.Name)}
    return bound


def guards(unit, arguments: gast.arguments, added: list) -> list:
    """The statements that start the derivative of a unit with parameters read as modules
    (`read_as_modules`): where one holds another value, the fallback derivative runs, given
    the derivative's arguments (`arguments`, with the keywords `added`)."""
    if unit.module_defaults is None:
        return []
    modules, none_too, how = unit.module_defaults
    context = unit.context
    fallback = context.import_value("unspecialized", unspecialized)
    primal = context.import_value("primal", unit.namespace.function)
    built = context.import_value("unspecialized_build", how)
    given = [a.id for a in arguments.posonlyargs] + [
        f"{a.id}={a.id}" for a in arguments.args + arguments.kwonlyargs]
    call = f"{fallback}({primal}, {built})({', '.join(given)})"
    # (a derivative run in halves is a generator: so is the one it falls back on)
    result = f"(yield from {call})" if unit.split else call
    test = " or ".join(f"({parameter} is not None and {parameter} is not {module})"
                       if parameter in none_too else f"{parameter} is not {module}"
                       for parameter, module in sorted(modules.items()))
    return gast.parse(f"if {test}:\n    return {result}\n").body
