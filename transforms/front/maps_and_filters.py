"""`map` and `filter` written out as the list comprehensions they stand for, which every mode
differentiates:

    sum(map(lambda v: v * v, x))          sum([v * v for v in x])
    list(map(np.sin, xs))                 list([np.sin(_item1) for _item1 in xs])
    tuple(map(f, xs, ys))                 tuple([f(_item1, _item2) for _item1, _item2 in zip(xs, ys)])
    for v in filter(keep, xs):            for v in [_item1 for _item1 in xs if keep(_item1)]:

Only where the iterator is read whole, at once: the argument of list, tuple, sum, min, max,
sorted, any or all, or a for loop's iterable. (`np.array(map(...))` is a 0-d object array in
NumPy and `np.stack(map(...))` an error, so neither is rewritten: write np.array(list(map(...))).)
A lambda's body is inlined with its parameters as the comprehension's variables; a lambda with
defaults, *args or **kwargs is called as any other function.
"""
from __future__ import annotations

import builtins

import gast

from ..codegen.naming import Namer, names_in
from ..codegen.nodes import copy_tree, walk
from .parsing import resolve

WHOLE_READERS = (list, tuple, sum, min, max, sorted, any, all)


def write_out_maps_and_filters(function: gast.FunctionDef, namespace: dict) -> None:
    """Rewrite each `map(...)`/`filter(...)` of `function` read whole (see the module
    docstring) in place."""
    assigned = {n.id for n in walk(function)
                if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
    namer = None

    def builtin(node, function) -> bool:
        return isinstance(node, gast.Name) and node.id not in assigned and \
            resolve(node, namespace) is function

    def rewritten(call):
        nonlocal namer
        if not (isinstance(call, gast.Call) and not call.keywords
                and (builtin(call.func, builtins.map) and len(call.args) >= 2
                     or builtin(call.func, builtins.filter) and len(call.args) == 2)
                and not any(isinstance(a, gast.Starred) for a in call.args)
                and not (builtin(call.func, builtins.map) and _is_none(call.args[0]))):
            return None
        namer = namer or Namer(names_in(function))
        return gast.copy_location(_comprehension(call, builtin(call.func, builtins.map),
                                                 namer), call)

    for node in walk(function):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.args and \
                any(builtin(node.func, reader) for reader in WHOLE_READERS):
            node.args[0] = rewritten(node.args[0]) or node.args[0]
        elif isinstance(node, (gast.For, gast.comprehension)):
            node.iter = rewritten(node.iter) or node.iter


def _comprehension(call, mapping: bool, namer: Namer) -> gast.ListComp:
    """`[f(v) for v in xs]` for map(f, xs), `[v for v in xs if f(v)]` for filter(f, xs)."""
    function, iterables = call.args[0], call.args[1:]
    lambda_parameters = _plain_parameters(function)
    if lambda_parameters is not None and len(lambda_parameters) == len(iterables):
        items = lambda_parameters
        value = copy_tree(function.body)
    else:
        items = [namer.temporary("item") for _ in iterables]
        value = None if _is_none(function) else gast.Call(
            func=function, args=[_name(item) for item in items], keywords=[])
    if len(iterables) == 1:
        target, iterable = _name(items[0], gast.Store()), iterables[0]
    else:
        target = gast.Tuple(elts=[_name(item, gast.Store()) for item in items],
                            ctx=gast.Store())
        iterable = gast.Call(func=_name("zip"), args=list(iterables), keywords=[])
    item = _name(items[0])
    if mapping:
        element, conditions = value, []
    else:
        element, conditions = item, [item if value is None else value]
    generator = gast.comprehension(target=target, iter=iterable, ifs=conditions, is_async=0)
    return gast.ListComp(elt=element, generators=[generator])


def _plain_parameters(function):
    """The parameter names of a lambda of positional parameters only, without defaults;
    None for anything else."""
    if not isinstance(function, gast.Lambda):
        return None
    arguments = function.args
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.defaults \
            or arguments.posonlyargs:
        return None
    return [argument.id for argument in arguments.args]


def _is_none(node) -> bool:
    return isinstance(node, gast.Constant) and node.value is None


def _name(identifier: str, ctx=None) -> gast.Name:
    return gast.Name(id=identifier, ctx=ctx or gast.Load(), annotation=None, type_comment=None)
