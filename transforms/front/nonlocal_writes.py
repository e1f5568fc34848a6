"""A nested function that assigns its enclosing function's variables through `nonlocal`,
called only as a statement, written as one that takes those variables and returns their new
values, which the call assigns (where it binds them itself: a nonlocal naming a variable of a
function enclosing it stays):

    def f(x):                                   def f(x):
        total = 0.0                                 total = 0.0
        def add(v):                                 def add(v, *, total):
            nonlocal total                              total = total + v
            total = total + v                           return total
        for row in x:                               for row in x:
            add(np.sum(row ** 2))                       total = add(np.sum(row ** 2), total=total)
        return total                                return total

Each call passes the variables as they are when it runs and assigns what the function leaves
in them, as the closure's cell would: the values are the same, and the gradient follows them
through the call's arguments and result. Only where that is all the function does with them:
it is not decorated, yields nothing, has no try, returns no value (`return` alone), calls no
other function defined beside it and defines none of its own; and its name is only called, as
a statement, by the enclosing function. Anything else keeps the nonlocal statement, which
transforms/front/checks.py refuses.
"""
from __future__ import annotations

import gast

from ..codegen.nodes import rewrite_statements, walk


def return_nonlocal_writes(function: gast.FunctionDef) -> None:
    """Rewrite, in place, each function defined in `function` whose nonlocal writes can be
    returned (see the module docstring)."""
    own = _own_scope(function)
    for definition in [n for n in own if isinstance(n, gast.FunctionDef)]:
        names = _nonlocal_names(definition)
        if names and set(names) <= _bound(function, own) and \
                _returnable(definition, function, own):
            _write_returns(definition, names, function)


def _own_scope(function) -> list:
    """The nodes of `function`'s body in its own scope: the functions defined in it, but not
    their bodies."""
    todo = list(function.body)
    for node in todo:  # the list grows as it is read: a queue
        if not isinstance(node, (gast.FunctionDef, gast.Lambda)):
            todo += [c for c in gast.iter_child_nodes(node)]
    return todo


def _bound(function, own: list) -> set:
    """The names `function` binds itself by assignment, its parameters left out (a nested
    function's nonlocal naming a parameter stays, and is refused): not those of a function
    enclosing it, which its own nonlocal or global statement names."""
    arguments = function.args
    parameters = {a.id for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs
                  + [arguments.vararg, arguments.kwarg] if a is not None}
    names = {n.id for n in own if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
    return names - parameters - {name for n in own if isinstance(n, (gast.Nonlocal, gast.Global))
                                 for name in n.names}


def _nonlocal_names(definition) -> list:
    return [n for s in definition.body if isinstance(s, gast.Nonlocal) for n in s.names]


def _returnable(definition, function, own: list) -> bool:
    inner = list(walk(definition))[1:]
    if definition.decorator_list or any(isinstance(
            n, (gast.Yield, gast.YieldFrom, gast.Try, gast.FunctionDef, gast.Lambda, gast.Global))
            or isinstance(n, gast.Return) and n.value is not None
            or isinstance(n, gast.Nonlocal) and n not in definition.body for n in inner):
        return False
    others = {n.name for n in walk(function) if isinstance(n, gast.FunctionDef)}
    if any(isinstance(n, gast.Name) and n.id in others for n in inner):
        return False  # (another function beside it may read the variables while it runs)
    if sum(isinstance(n, gast.FunctionDef) and n.name == definition.name
           for n in walk(function)) != 1:
        return False
    called = {id(s.value.func) for s in own if isinstance(s, gast.Expr)
              and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Name)
              and s.value.func.id == definition.name}
    uses = [n for n in walk(function) if isinstance(n, gast.Name) and n.id == definition.name]
    return bool(uses) and all(id(n) in called for n in uses)


def _write_returns(definition, names: list, function) -> None:
    def values():
        if len(names) == 1:
            return _name(names[0])
        return gast.Tuple(elts=[_name(n) for n in names], ctx=gast.Load())

    definition.body = [s for s in definition.body if not isinstance(s, gast.Nonlocal)] or [
        gast.Pass()]
    for node in walk(definition):
        if isinstance(node, gast.Return):
            node.value = values()
    if not isinstance(definition.body[-1], gast.Return):
        definition.body.append(gast.copy_location(gast.Return(value=values()),
                                                  definition.body[-1]))
    definition.args.kwonlyargs += [_name(n, gast.Param()) for n in names]
    definition.args.kw_defaults += [None] * len(names)

    def assigned(statement):
        if not (isinstance(statement, gast.Expr) and isinstance(statement.value, gast.Call)
                and isinstance(statement.value.func, gast.Name)
                and statement.value.func.id == definition.name):
            return None
        call = statement.value
        call.keywords += [gast.keyword(arg=n, value=_name(n)) for n in names]
        target = _name(names[0], gast.Store()) if len(names) == 1 else gast.Tuple(
            elts=[_name(n, gast.Store()) for n in names], ctx=gast.Store())
        return [gast.copy_location(gast.Assign(targets=[target], value=call, type_comment=None),
                                   statement)]

    rewrite_statements(function, assigned)


def _name(identifier: str, ctx=None) -> gast.Name:
    return gast.Name(id=identifier, ctx=ctx or gast.Load(), annotation=None, type_comment=None)
