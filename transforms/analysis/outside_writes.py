"""Writes a called function makes into what it neither makes nor is given: an attribute of a
class, a module or another global object (`A.k = v`), a global variable (`global K; K = v`,
`globals()["K"] = v`), the class of an object (`type(self).k = v`), or an item of a global or
closure array, dict or list (`G[0] = v`, `D["k"] = v`, `L.append(v)`).

autotrace follows values: where such a write stores a value that carries gradient, what
reads it back afterwards (`A.k`, a property reading `self.k` of the class's `k`, `K`) reads
a constant, and the gradient through it would be lost without an error. The analysis of
what a call changes (transforms/analysis/object_state.py) takes these roots as it takes the
parameters of the function called, and refuses the call with the message here.
"""
from __future__ import annotations

import inspect

import gast

from .argument_writes import CONTAINER_WRITES, IN_PLACE_METHODS, write_text
from .value_reads import value_reads
from ..codegen.codegen import to_source
from ..codegen.nodes import walk
from ..front.parsing import MISSING, resolve

# Methods that store what they are given into their object (`L.append(v)`, `D.update(k=v)`).
_STORING = CONTAINER_WRITES | IN_PLACE_METHODS | {"add", "appendleft", "__setitem__"}


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
            node.value is None or not value_reads(node.value) & varied:
        return None
    targets = node.targets if isinstance(node, gast.Assign) else [node.target]
    for target in targets:
        for name in walk(target):
            if isinstance(name, gast.Name) and name.id in declared:
                return name.id, f"{name.id} = ..."
    return None


def outside_item_write(node, roots: set, varied: set):
    """(owner, text) where `node` stores a value depending on `varied` into what the global
    objects `roots` hold (`G[0] = v`, `D["k"] = v`, `L.append(v)`), into the class of an object
    (`type(self).k = v`, owner `type(self)`) or into the module's globals (`globals()["K"] = v`,
    owner `globals()`), else None."""
    if isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
        if node.value is None or not value_reads(node.value) & varied:
            return None
        targets = node.targets if isinstance(node, gast.Assign) else [node.target]
        for part in _parts(targets):
            owner = _outside_owner(part, roots, isinstance(part, gast.Subscript))
            if owner is not None:
                return owner, (f"{to_source(node.target).strip()} = ..." if isinstance(
                    node, gast.AnnAssign) else write_text(node))
        return None
    if not isinstance(node, gast.Call) or not any(
            value_reads(a) & varied for a in node.args + [k.value for k in node.keywords]):
        return None
    func = node.func
    if isinstance(func, gast.Attribute) and func.attr in _STORING:
        owner = _outside_owner(func.value, roots, True)
        if owner is not None:
            return owner, f"{to_source(func).strip()}(...)"
    if isinstance(func, gast.Name) and func.id == "setattr" and node.args:
        owner = _outside_owner(node.args[0], set(), False)
        if owner is not None and owner != "globals()":
            return owner, to_source(node).strip()
    return None


def _outside_owner(node, roots: set, item: bool):
    """`type(p)` where `node` is (inside) `type(p)`, `globals()` where inside `globals()`,
    the name in `roots` it is (inside) where `item` (an item of it, or it whole), else None."""
    chain = node
    while isinstance(chain, (gast.Attribute, gast.Subscript)):
        chain = chain.value
    if isinstance(chain, gast.Call) and isinstance(chain.func, gast.Name) and (
            chain.func.id, len(chain.args)) in (("type", 1), ("globals", 0)) and (
            chain is not node or item or chain.func.id == "type"):
        return to_source(chain).strip()
    if item and isinstance(chain, gast.Name) and chain.id in roots:
        return chain.id
    return None


def _parts(targets: list) -> list:
    """The targets each of `targets` assigns to (`a, b[0] = ...`: `a`, `b[0]`)."""
    parts = []
    for target in targets:
        if isinstance(target, (gast.Tuple, gast.List)):
            parts += _parts(target.elts)
        else:
            parts.append(target.value if isinstance(target, gast.Starred) else target)
    return parts


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
    scope = "closure variable" if owner in held.nonlocals else "global"
    if owner == "globals()":
        kind, instead = (f"a global through {target}",
                         "return the value instead, or pass it as an argument to what reads it")
    elif owner.startswith("type("):
        read = "it" if target.startswith("setattr(") else target
        kind, instead = (f"the class attribute {target}" if read == target else
                         f"an attribute of the class {owner}",
                         f"pass the value as an argument to what reads {read}, or keep it on "
                         "the instance instead")
    elif target.startswith(f"{owner}[") or target.startswith(f"{owner}.") and \
            target.endswith("(...)") and target[:-5].count(".") == 1:
        kind, instead = (f"an item of the {scope} {owner!r}",
                         "return the value instead, or pass it as an argument to what reads it")
    elif isinstance(value, type):
        kind, instead = (f"the class attribute {target}", f"pass the value as an argument to "
                         f"what reads {target}, or keep it on an instance (self."
                         f"{target.split('.')[-1]} = value in a method of {owner}'s) instead")
    elif target == owner:
        kind, instead = (f"the {scope} {owner!r}",
                         "return the value instead, or pass it as an argument to what reads it")
    else:
        kind, instead = (f"{target}, an attribute of the {scope} {owner!r}",
                         "return the value instead, or pass it as an argument to what reads it")
    return (f"autotrace cannot differentiate this call of {function.__qualname__}: it sets "
            f"{kind} {where} {lost} outside the function, so that gradient would be lost where "
            f"it is read back; {instead}")
