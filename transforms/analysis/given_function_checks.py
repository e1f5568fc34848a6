"""Calls of a function of the user's that calls one of its parameters, given for it a value
the source does not name: a function a factory returned (`apply(make_writer(), buf)`), a
parameter's default, an attribute of an object. Which function it is is known when the call
runs; generated code calls `check_functions_given` before the call, which reads the function
called again with that parameter standing for the function given (given_functions.py) and
refuses the call where it writes into an argument the caller reads afterwards, as the analysis
before running refuses a call given a function it can name.
"""
from __future__ import annotations

import collections
import copy
import functools
import inspect

import gast

from .aliases import Sharing
from .argument_writes import arguments_read_after, parameter_names, refuse_arguments_written
from .liveness import live_after
from .object_state import statement_blocks
from ..codegen.naming import walk_scope
from ..codegen.nodes import walk
from ..front.parsing import MISSING, parse_function, resolve
from ..rules.core import constant


def check_functions_given(callee, arguments: tuple, keywords: dict, filename: str, line: int,
                          read_after: tuple) -> None:
    """Raise TransformError at `filename`, `line` where the Python function `callee`, given
    `arguments` and `keywords` (None for one not read again), calls a function among them
    that writes into its own argument, and so writes into an argument of the call whose
    memory the caller reads afterwards (`read_after`: argument_writes.arguments_read_after)."""
    function, bound = (callee.__func__, callee.__self__) if inspect.ismethod(callee) else (
        callee, None)
    if not inspect.isfunction(function):
        return
    first = 0 if bound is None else 1
    given = {}
    try:
        parsed = parse_function(function)
    except Exception:  # noqa: BLE001 - no source: nothing known, as for any other call
        return
    parameters = parameter_names(parsed.node)
    for key, value in [*enumerate(arguments), *keywords.items()]:
        name = parameters[key + first] if isinstance(key, int) and key + first < len(
            parameters) else key
        written = _value_writes(value)
        if written and name in parameters:
            given[name] = written
    if not given:
        return
    found = Sharing.writes_into_parameters(parsed.node, parsed.location, parsed.namespace,
                                           given=given)
    written = tuple((parameters.index(parameter), parameter, what, parsed.location.filename,
                     at, surely, items)
                    for parameter, (what, at, surely, items) in found.items())
    refuse_arguments_written(function, written, bound, read_after, filename, line)


# It checks, and gives nothing: no gradient passes through it.
constant(check_functions_given)


def _value_writes(value) -> tuple:
    """parameters_written's tuples of the function `value` is (a method's, its object's
    parameter left out; a partial's, those it gives left out), or of any function a list,
    tuple or dict `value` holds."""
    if isinstance(value, (list, tuple)) or isinstance(value, dict):
        return tuple(w for item in (value.values() if isinstance(value, dict) else value)
                     if callable(item) and not isinstance(item, (list, tuple, dict))
                     for w in _value_writes(item))
    skipped = 0
    while isinstance(value, functools.partial):
        skipped += len(value.args)
        value = value.func
    if inspect.ismethod(value):
        skipped, value = skipped + 1, value.__func__
    if not inspect.isfunction(value):
        return ()
    return tuple((position - skipped, *rest) for position, *rest in
                 Sharing.parameters_written(value) if position >= skipped)


def guard_functions_given(body: list, returned: list, location, classify, helper,
                          namespace: dict) -> None:
    """Put a `check_functions_given` before each call in `body` (A-normal form; `returned`:
    the return statements split off it) of a function of the user's that calls one of its
    parameters, given for it a value the source does not name (not a function or a list,
    tuple or dict of the module's). classify(func): what the callee `func` is
    (transforms/analysis/calls.py); helper(name): the name generated code calls a helper by."""
    nodes = [n for statement in body + list(returned) for n in walk_scope(statement)]
    sources = {n.targets[0].id: n.value for n in nodes if isinstance(n, gast.Assign)
               and isinstance(n.targets[0], gast.Name)}
    loads = collections.Counter(n.id for n in nodes if isinstance(n, gast.Name)
                                and isinstance(n.ctx, gast.Load))
    later = live_after(body + list(returned))
    for block in statement_blocks(body):
        for index in reversed(range(len(block))):
            statement = block[index]
            call = statement.value if isinstance(statement, (gast.Expr, gast.Assign)) else None
            if not isinstance(call, gast.Call) or any(
                    isinstance(a, gast.Starred) for a in call.args):
                continue
            resolved = classify(call.func)
            called = _parameters_called(resolved.value) if resolved.kind == "user" else ()
            if not any(_unnamed(argument, namespace) for argument in _arguments_for(
                    call, resolved.value, called)):
                continue
            read_after = arguments_read_after(call, later.get(id(statement), set()), sources,
                                              loads)
            guard = gast.Expr(value=gast.Call(
                func=gast.Name(id=helper("check_functions_given"), ctx=gast.Load(),
                               annotation=None, type_comment=None),
                args=[copy.deepcopy(call.func),
                      gast.Tuple(elts=[_read_again(a) for a in call.args], ctx=gast.Load()),
                      gast.Dict(keys=[gast.Constant(value=k.arg, kind=None)
                                      for k in call.keywords],
                                values=[_read_again(k.value) for k in call.keywords]),
                      gast.Constant(value=location.filename, kind=None),
                      gast.Constant(value=location.line_of(statement), kind=None),
                      gast.Constant(value=read_after, kind=None)],
                keywords=[]))
            for node in walk(guard):
                if "lineno" in node._attributes:
                    gast.copy_location(node, statement)
            block.insert(index, guard)


def _parameters_called(function) -> frozenset:
    """The parameters of the Python function `function` that it may call: by name, as an item
    (`fns[0](...)`), or through a name bound to one (`g = fn`, `for fn in fns`)."""
    if not inspect.isfunction(function):
        return frozenset()
    try:
        node = parse_function(function).node
    except Exception:  # noqa: BLE001 - no source: not read
        return frozenset()
    parameters = set(parameter_names(node))
    from_parameter = {}  # a name bound from a parameter -> that parameter
    for statement in walk(node):
        if isinstance(statement, gast.Assign) and isinstance(statement.value, gast.Name):
            targets = [statement.targets[0]]
        elif isinstance(statement, gast.For) and isinstance(statement.iter, gast.Name):
            targets, statement = [statement.target], gast.Assign(
                targets=[statement.target], value=statement.iter)
        else:
            continue
        source = statement.value.id
        for target in targets:
            if isinstance(target, gast.Name) and source in parameters | set(from_parameter):
                from_parameter[target.id] = from_parameter.get(source, source)
    called = set()
    for call in walk(node):
        if isinstance(call, gast.Call):
            func = call.func
            while isinstance(func, gast.Subscript):
                func = func.value
            if isinstance(func, gast.Name) and func.id in parameters | set(from_parameter):
                called.add(from_parameter.get(func.id, func.id))
    return frozenset(called)


def _arguments_for(call, function, called) -> list:
    """The arguments of `call` given for the parameters `called` of `function`."""
    if not called:
        return []
    parameters = parameter_names(parse_function(function).node)
    found = [argument for parameter, argument in zip(parameters, call.args)
             if parameter in called]
    return found + [k.value for k in call.keywords if k.arg in called]


def _unnamed(argument, namespace: dict) -> bool:
    """Whether the source does not say what function `argument` is: it is not a constant, a
    lambda, a display, nor a global function, list, tuple or dict the analysis before running
    reads (given_functions.py)."""
    if isinstance(argument, (gast.Constant, gast.Lambda, gast.List, gast.Tuple, gast.Dict,
                             gast.Set)):
        return False
    value = resolve(argument, namespace)
    return value is MISSING or not (inspect.isfunction(value) or isinstance(
        value, (list, tuple, dict)))


def _read_again(argument):
    """`argument` read once more for the check (a name, an attribute or an item of a name:
    A-normal form keeps calls out of them), else None."""
    base = argument
    while isinstance(base, (gast.Attribute, gast.Subscript)):
        base = base.value
    if isinstance(base, gast.Name) and not any(
            isinstance(n, gast.Call) for n in gast.walk(argument)):
        return copy.deepcopy(argument)
    return gast.Constant(value=None, kind=None)

