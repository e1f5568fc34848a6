"""Writes a called function makes into what it neither makes nor is given: an attribute of a
class, a module or another global object (`A.k = v`), or a global variable (`global K; K = v`).

autotrace follows values: where such a write stores a value that carries gradient, what
reads it back afterwards (`A.k`, a property reading `self.k` of the class's `k`, `K`) reads
a constant, and the gradient through it would be lost without an error. The analysis of
what a call changes (transforms/analysis/object_state.py) takes these roots as it takes the
parameters of the function called, and refuses the call with the message here.
"""
from __future__ import annotations

import inspect

import gast

from ..codegen.nodes import walk
from ..front.parsing import MISSING, resolve


def outside_roots(nodes: list, own: set, namespace: dict) -> list:
    """The names `nodes` read (those of a function whose own names are `own`) that
    `namespace` binds to an object whose attributes a write changes for everyone: a class,
    a module or another object (not a function, which no one reads attributes of)."""
    roots = []
    for node in nodes:
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and \
                node.id not in own and node.id not in roots:
            value = resolve(node, namespace)
            if value is not MISSING and not inspect.isroutine(value) and not isinstance(
                    value, (int, float, complex, str, bytes, bool, type(None))):
                roots.append(node.id)
    return roots


def global_write(node, declared: set, varied: set):
    """(name, text) where `node` binds a name the function declares `global` or `nonlocal`
    (`declared`) to a value depending on `varied`, else None."""
    if not isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)) or \
            node.value is None or not _reads(node.value) & varied:
        return None
    targets = node.targets if isinstance(node, gast.Assign) else [node.target]
    for target in targets:
        for name in walk(target):
            if isinstance(name, gast.Name) and name.id in declared:
                return name.id, f"{name.id} = ..."
    return None


def declared_names(nodes: list) -> set:
    return {name for node in nodes if isinstance(node, (gast.Global, gast.Nonlocal))
            for name in node.names}


def state_write_message(function, owner: str, what: str, filename: str, line: int) -> str:
    """Why a call of `function` is refused: it sets an attribute of `owner` (one of its
    parameters, or a global `outside_roots` found) or the global `owner` (`what`, at
    `filename`, `line`) to a value that carries gradient."""
    where = f"({what}, {filename}, line {line})"
    lost = ("to a value that carries gradient, and autotrace follows what a call returns, not "
            "what it changes")
    if owner in inspect.signature(function).parameters:
        return (f"autotrace cannot differentiate this call of {function.__qualname__}: it "
                f"changes an attribute of {owner!r} {where} {lost} in the objects it is given, "
                "so that gradient would be lost; return the new value (or a new object) from "
                "the function instead, and assign it")
    held = inspect.getclosurevars(function)
    value = {**held.globals, **held.nonlocals}.get(owner, MISSING)
    target = what.split(" ")[0]
    if isinstance(value, type):
        kind, instead = (f"the class attribute {target}", f"pass the value as an argument to "
                         f"what reads {target}, or keep it on an instance (self."
                         f"{target.split('.')[-1]} = value in a method of {owner}'s) instead")
    elif target == owner:
        kind, instead = (f"the global {owner!r}",
                         "return the value instead, or pass it as an argument to what reads it")
    else:
        kind, instead = (f"{target}, an attribute of the global {owner!r}",
                         "return the value instead, or pass it as an argument to what reads it")
    return (f"autotrace cannot differentiate this call of {function.__qualname__}: it sets "
            f"{kind} {where} {lost} outside the function, so that gradient would be lost where "
            f"it is read back; {instead}")


def _reads(node) -> set:
    return {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
