"""Walking and copying syntax trees: what `gast.walk` and `copy.deepcopy` do, made fast.

Generating a derivative walks and copies the same trees many times (every cleanup pass counts
the names a body reads; every template filled copies its holes), and the standard library's
generic versions spend most of their time in generators and `__reduce_ex__`. These two give
the same results in the same order.
"""
from __future__ import annotations

import copy

import gast

_AST = gast.AST
# Values copy_tree keeps as they are, as copy.deepcopy does (it copies none of these types).
_ATOMS = frozenset({type(None), bool, int, float, complex, str, bytes, type(Ellipsis)})


def walk(node):
    """`node` and every node under it, breadth first: `gast.walk` (ast.walk), order and all.
    As there, a node's children are listed before the node is handed out, so a caller that
    changes the node still walks the children it had."""
    todo = [node]
    append = todo.append
    for node in todo:  # the list grows as it is read: a queue
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, _AST):
                append(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, _AST):
                        append(item)
        yield node


def copy_tree(value, memo: dict | None = None):
    """A deep copy of a tree (a node, or a list of them): `copy.deepcopy(value)`, node for node,
    every attribute copied (marks that passes set too), a node or list met twice copied once.
    Values other than nodes, lists and atoms go to copy.deepcopy, with the same memo."""
    if memo is None:
        memo = {}
    return _copy(value, memo)


def _copy(value, memo: dict):
    kind = type(value)
    if kind in _ATOMS:
        return value
    copied = memo.get(id(value))
    if copied is not None:
        return copied
    if isinstance(value, _AST):
        # as copy.deepcopy makes it: the class called with no arguments, its __dict__ filled
        copied = kind()
        memo[id(value)] = copied
        state = copied.__dict__
        for key, item in value.__dict__.items():
            state[key] = item if type(item) in _ATOMS else _copy(item, memo)
        return copied
    if kind is list:
        copied = []
        memo[id(value)] = copied
        for item in value:
            copied.append(item if type(item) in _ATOMS else _copy(item, memo))
        return copied
    return copy.deepcopy(value, memo)
