"""The terms a zero tangent makes vanish, dropped from the tangent statements forward mode
writes (transforms/forward/forward.py): `0 * x + c * dx` is `c * dx`. A zero standing for a
whole term is marked folded: its shape may be another than its own.
"""
from __future__ import annotations

import copy

import gast

from ..codegen.nodes import walk
from ..codegen.visitors import NodeTransformer
from ..codegen.codegen import to_source


def is_zero(node) -> bool:
    return getattr(node, "symbolic_zero", False)


def _folded(zero):
    """The zero `zero` standing for a whole term, whose shape may be another than its own."""
    folded = copy.copy(zero)
    folded.folded_zero = True
    return folded


def holds_folded_zero(node) -> bool:
    return any(getattr(part, "folded_zero", False) for part in walk(node))


class ZeroTerms(NodeTransformer):
    """Drop the terms a zero tangent makes vanish: `0 * x + c * dx` is `c * dx`.

    A zero from a number has no shape to lose. One from an array may broadcast the sum it is
    dropped from; `dropped_array_zero` then tells the caller to restore the result's shape.
    """

    def __init__(self, linear: dict):
        self.linear = linear
        self.dropped_array_zero = False

    def visit_Call(self, node):
        self.generic_visit(node)
        spelling = to_source(node.func).strip()
        positions = self.linear.get(spelling)
        if positions and any(p < len(node.args) and is_zero(node.args[p]) for p in positions):
            zero = next(node.args[p] for p in positions
                        if p < len(node.args) and is_zero(node.args[p]))
            return _folded(zero)
        return node

    def drop(self, zero, kept):
        if getattr(zero, "symbolic_zero", None) == "array":
            self.dropped_array_zero = True
        return kept

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = is_zero(node.left), is_zero(node.right)
        if isinstance(node.op, (gast.Mult, gast.MatMult)) and (left or right):
            return _folded(node.left if left else node.right)
        if isinstance(node.op, (gast.Div, gast.FloorDiv, gast.Mod)) and left:
            return _folded(node.left)
        if isinstance(node.op, gast.Add) and (left or right):
            return self.drop(node.left, node.right) if left else self.drop(node.right,
                                                                           node.left)
        if isinstance(node.op, gast.Sub) and right:
            return self.drop(node.right, node.left)
        if isinstance(node.op, gast.Sub) and left:
            return self.drop(node.left, gast.UnaryOp(op=gast.USub(), operand=node.right))
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        return node.operand if is_zero(node.operand) else node
