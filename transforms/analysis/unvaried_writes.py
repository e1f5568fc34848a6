"""Which in-place writes into part of a variable change a constant of the derivative.

`mask = np.ones(4); mask[:2].fill(0.0)` changes an array that holds no value made from the
function's arguments: the derivative reads it as it is after the write, as NumPy does, and
nothing is lost. `a = x ** 2; a[2:4].fill(0.5)` changes a value that carries gradient, which
the derivative would read as unchanged. This module tells the two apart, conservatively: any
parameter may be differentiated, and a name is varied where anything it may be bound to, be
written with or share memory with reads a varied name (flow-insensitive, as
transforms/analysis/activity.py). A constant array read before the write (or in a loop
around it) is taken as varied too: the adjoint sweep would read its new value where the
forward sweep read the old one.
"""
from __future__ import annotations

import gast
import numpy as np

from .value_reads import value_reads
from ..codegen.nodes import walk
from ..front.parsing import MISSING, resolve

_ASSIGNMENTS = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.NamedExpr)


def varied_names(nodes: list, parameters: set, variables: set, namespace: dict) -> set:
    """The names of `nodes` (those of a function whose parameters are `parameters`, and
    `variables` those and the names it binds) that may hold a value made from a parameter,
    or share memory with one that does."""
    varied = set(parameters) | {n.id for n in nodes if isinstance(n, gast.Name)
                                and isinstance(n.ctx, gast.Param)}
    flows, links = [], []  # (sources expression, names written), (name, name) sharing memory
    for node in nodes:
        if isinstance(node, _ASSIGNMENTS) and node.value is not None:
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            flows.extend((node.value, _names(target)) for target in targets)
            links.extend((_root(target), _root(node.value)) for target in targets)
        elif isinstance(node, (gast.For, gast.comprehension)):
            flows.append((node.iter, _names(node.target)))
            links.append((_root(node.target), _root(node.iter)))
        elif isinstance(node, gast.withitem) and node.optional_vars is not None:
            flows.append((node.context_expr, _names(node.optional_vars)))
        elif isinstance(node, gast.Expr) and isinstance(node.value, gast.Call) or \
                isinstance(node, gast.Call) and any(k.arg == "out" for k in node.keywords):
            # a call made for what it does may write what it is given into its arguments
            call = node.value if isinstance(node, gast.Expr) else node
            given = call.args + [k.value for k in call.keywords]
            written = {_root(a) for a in given} | (
                {_root(call.func.value)} if isinstance(call.func, gast.Attribute) else set())
            flows.append((call, written & variables))
    links = [(a, b) for a, b in links if a in variables and b in variables]
    changed = True
    while changed:
        changed = False
        for value, written in flows:
            if not written <= varied and value_reads(value, namespace) & varied:
                varied |= written
                changed = True
        for first, second in links:
            if (first in varied) != (second in varied):
                varied |= {first, second}
                changed = True
    return varied


def constant_part_written(call, owner: str, nodes: list, varied: set, namespace: dict) -> bool:
    """Whether `call`, an in-place method of part of the variable `owner` (`mask[:2].fill(0)`),
    writes a constant into a constant: `owner` and the call's arguments are not `varied`
    (varied_names), and `owner` is neither read before the call with a varied value (`y = A @
    x`, whose derivative reads A again) nor written in a loop."""
    given = call.args + [k.value for k in call.keywords]
    if owner in varied or any(value_reads(a, namespace) & varied for a in given):
        return False
    if any(isinstance(n, (gast.For, gast.While)) and call in set(walk(n)) for n in nodes):
        return False
    at = (call.lineno, call.col_offset)
    for statement in nodes:
        if isinstance(statement, (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr,
                                  gast.Return)) and (statement.lineno, statement.col_offset) < at:
            read = value_reads(statement, namespace)
            if owner in read and read & varied:
                return False
    return _made_here_alone(owner, nodes, at, namespace)


# NumPy's functions that return new memory, whatever they are given.
_FRESH = (np.zeros, np.ones, np.empty, np.full, np.eye, np.identity, np.arange, np.linspace,
          np.array, np.copy, np.zeros_like, np.ones_like, np.empty_like, np.full_like)


# NumPy's functions that write into their first argument, and return None.
_WRITERS = (np.fill_diagonal, np.put, np.place, np.putmask, np.copyto)


def _made_here_alone(owner: str, nodes: list, at: tuple, namespace: dict) -> bool:
    """Whether `owner` is bound only to new arrays (`np.zeros(...)`, `np.arange(6.).reshape(2,
    3)`, `a.copy()`) and, before the position `at`, read only as the root of a write of its own
    (`A[0] = 1.0`, `A[1].fill(2.0)`): no other name, view, container or call may hold its
    memory, whose reads the write would change behind the derivative's back."""
    writes = set()
    for node in nodes:
        if isinstance(node, (gast.Assign, gast.AugAssign)):
            for target in node.targets if isinstance(node, gast.Assign) else [node.target]:
                if isinstance(target, gast.Name) and target.id == owner:
                    if isinstance(node, gast.AugAssign) or not _fresh(node.value, namespace):
                        return False
                elif isinstance(target, (gast.Tuple, gast.List)) and owner in _names(target):
                    return False
                elif _root(target) == owner:  # (a write of its own, reading it too:
                    writes.update(id(n) for n in walk(node)  # W[i] = np.where(m, 2., W))
                                  if isinstance(n, gast.Name) and n.id == owner)
        elif isinstance(node, (gast.For, gast.comprehension, gast.withitem, gast.NamedExpr,
                               gast.AnnAssign)):
            bound = getattr(node, "target", None) or getattr(node, "optional_vars", None)
            if bound is not None and owner in _names(bound):
                return False
        elif isinstance(node, gast.Expr) and isinstance(node.value, gast.Call) and \
                isinstance(node.value.func, gast.Attribute) and _root(node.value.func) == owner:
            writes.add(id(_root_name(node.value.func)))
        elif isinstance(node, gast.Expr) and isinstance(node.value, gast.Call) and \
                node.value.args and _root(node.value.args[0]) == owner and any(
                    resolve(node.value.func, namespace) is writer for writer in _WRITERS):
            writes.add(id(_root_name(node.value.args[0])))  # np.fill_diagonal(W, 2.0)
    return not any(isinstance(node, gast.Name) and node.id == owner and
                   isinstance(node.ctx, gast.Load) and id(node) not in writes and
                   (node.lineno, node.col_offset) < at for node in nodes)


def _fresh(value, namespace: dict) -> bool:
    """Whether `value` makes an array of new memory that nothing else holds."""
    if not isinstance(value, gast.Call):
        return False
    if any(k.arg == "copy" for k in value.keywords):  # (copy=False may share)
        return False
    if isinstance(value.func, gast.Attribute) and not isinstance(value.func.value, gast.Name) \
            and resolve(value.func, namespace) is MISSING:  # a method of a new array
        method = value.func.attr
        return method in ("copy", "astype") or method in ("reshape", "ravel", "flatten") \
            and _fresh(value.func.value, namespace)
    if isinstance(value.func, gast.Attribute) and value.func.attr == "copy":
        return resolve(value.func, namespace) is MISSING  # x.copy() of a name
    function = resolve(value.func, namespace)
    return function is not MISSING and any(function is known for known in _FRESH)


def _root_name(node):
    while isinstance(node, (gast.Subscript, gast.Attribute)) or isinstance(
            node, gast.Call) and isinstance(node.func, gast.Attribute):
        node = node.func.value if isinstance(node, gast.Call) else node.value
    return node


def _names(target) -> set:
    return {n.id for n in walk(target) if isinstance(n, gast.Name)}


def _root(node) -> str | None:
    """The variable `node` (`a`, `a[2:4]`, `A.T[0]`, `a.reshape(2, 3)`) names or a part of."""
    while isinstance(node, (gast.Subscript, gast.Attribute)) or isinstance(
            node, gast.Call) and isinstance(node.func, gast.Attribute):
        node = node.func.value if isinstance(node, gast.Call) else node.value
    return node.id if isinstance(node, gast.Name) else None
