"""Starred assignment as the indexing it is, where the starred name comes first or last:

    coef, *rest = np.linalg.lstsq(A, y)   ->  _unpacked = np.linalg.lstsq(A, y)
                                               coef = _unpacked[0]
                                               rest = list(_unpacked[1:])
    *init, last = values                  ->  _unpacked = values
                                               init = list(_unpacked[:-1])
                                               last = _unpacked[-1]

The transforms follow items and slices. A sequence too short for the names before (or after)
the starred one raises IndexError at its item, as Python's unpacking raises ValueError there.
A starred name between others (`a, *middle, b = values`) stays, and checks.py refuses it: an
item there could be read twice from a short sequence.
"""
from __future__ import annotations

import gast

from ..codegen.naming import names_in
from ..codegen.nodes import walk
from ..codegen.templates import name


def spell_out_starred_targets(function: gast.FunctionDef) -> None:
    """Rewrite each statement `a, *rest = value` (and `*init, last = value`) of `function` into
    the assignments of its items (see the module docstring)."""
    taken = names_in(function)
    for node in walk(function):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and statements:
                setattr(node, field, [new for statement in statements
                                      for new in _spelled_out(statement, taken)])


def _spelled_out(statement, taken: set) -> list:
    if not (isinstance(statement, gast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], (gast.Tuple, gast.List))):
        return [statement]
    targets = statement.targets[0].elts
    starred = [i for i, target in enumerate(targets) if isinstance(target, gast.Starred)]
    if len(starred) != 1 or starred[0] not in (0, len(targets) - 1) or len(targets) == 1:
        return [statement]
    unpacked = _fresh("_unpacked", taken)
    out = [gast.Assign(targets=[name(unpacked, store=True)], value=statement.value,
                       type_comment=None)]
    first = starred[0] == 0
    for position, target in enumerate(targets):
        if isinstance(target, gast.Starred):
            rest = gast.Slice(lower=None, upper=_number(-(len(targets) - 1)), step=None) \
                if first else gast.Slice(lower=_number(len(targets) - 1), upper=None, step=None)
            value = gast.Call(func=name("list"), args=[_item(unpacked, rest)], keywords=[])
            target = target.value
        else:
            value = _item(unpacked, _number(position - len(targets) if first else position))
        out.append(gast.Assign(targets=[target], value=value, type_comment=None))
    for new in out:
        for node in walk(new):
            if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
                gast.copy_location(node, statement)
    return out


def _fresh(hint: str, taken: set) -> str:
    identifier, count = hint, 1
    while identifier in taken:
        count += 1
        identifier = f"{hint}{count}"
    taken.add(identifier)
    return identifier


def _number(value: int) -> gast.expr:
    return gast.Constant(value=value, kind=None)


def _item(variable: str, index) -> gast.Subscript:
    return gast.Subscript(value=name(variable), slice=index, ctx=gast.Load())
