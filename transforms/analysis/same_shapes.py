"""Which names hold values of the same shape, known before the code runs.

Elementwise code keeps shapes: `np.sin(x)`, `x * 0.9` and `a + b` for `a`, `b` of one shape all
have the shape of their operands. Where the transform can prove a result has its operand's
shape, the adjoint needs no `unbroadcast` (which is most of the cost of scalar code).

The analysis is per name: a name whose assignments do not all keep shape (a reduction, a
subscript, a call) belongs to no class.
"""
from __future__ import annotations

import gast
import numpy as np

from ..front.parsing import resolve
from .list_operators import ARRAY

_ELEMENTWISE_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.Mod)


def is_number(node) -> bool:
    """A numeric literal: `2.0`, or `-1` (which A-normal form keeps as written)."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return (isinstance(node, gast.Constant) and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool))


class ShapeClasses:
    """Union-find over names; `same(a, b)` is True when a and b provably share one shape."""

    def __init__(self, body, namespace: dict, sequences=None):
        """sequences: a transforms.analysis.list_operators.SequenceKinds; `a + b` and `a * n` keep no shape
        where they may join or repeat lists."""
        self.parent: dict[str, str] = {}
        self.unknown: set[str] = set()
        assignments = []
        for node in _assignments(body):
            target, value = node
            operands = self._operands(value, namespace)
            if (sequences is not None and isinstance(value, gast.BinOp)
                    and sequences.operation(target, value) != ARRAY):
                operands = None
            if operands is None:
                self.unknown.add(target)
            else:
                assignments.append((target, operands))
        changed = True
        while changed:  # `a + b` joins a class only once a and b are known to share one
            changed = False
            for target, operands in assignments:
                names = [o for o in operands if isinstance(o, str)]
                if names and all(self.find(n) == self.find(names[0]) for n in names):
                    if self.find(target) != self.find(names[0]):
                        self.parent[self.find(target)] = self.find(names[0])
                        changed = True
        settled = {t for t, operands in assignments
                   if all(isinstance(o, str) for o in operands)
                   and all(self.find(o) == self.find(t) for o in operands)}
        # A name with any assignment not proven shape-keeping spoils its whole class.
        spoiled = {self.find(t) for t, _ in assignments if t not in settled}
        spoiled |= {self.find(n) for n in self.unknown}
        self.spoiled = spoiled

    def find(self, name: str) -> str:
        root = name
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        return root

    def same(self, a: str, b: str) -> bool:
        root = self.find(a)
        return root == self.find(b) and root not in self.spoiled

    @staticmethod
    def _operands(value, namespace):
        """The names (and numbers) an assignment's value keeps the shape of, or None."""
        if isinstance(value, gast.Name):
            return [value.id]
        if isinstance(value, gast.UnaryOp) and isinstance(value.op, (gast.USub, gast.UAdd)):
            return _names([value.operand])
        if isinstance(value, gast.BinOp) and isinstance(value.op, _ELEMENTWISE_OPERATORS):
            return _names([value.left, value.right])
        if (isinstance(value, gast.Call) and not value.keywords and value.args
                and isinstance(value.func, (gast.Name, gast.Attribute))):
            function = resolve(value.func, namespace)
            if isinstance(function, np.ufunc) and function.nin == len(value.args) <= 2 \
                    and function.nout == 1:
                return _names(value.args)
        return None


def _names(operands):
    """Operand names; numbers broadcast to anything and are dropped. None if any is other."""
    out = []
    for operand in operands:
        if isinstance(operand, gast.Name):
            out.append(operand.id)
        elif not is_number(operand):
            return None
    return out or None


def _assignments(body):
    for statement in body:
        if isinstance(statement, gast.Assign) and isinstance(statement.targets[0], gast.Name):
            yield statement.targets[0].id, statement.value
        elif isinstance(statement, (gast.For, gast.While, gast.If, gast.With)):
            if isinstance(statement, gast.For):
                yield statement.target.id, None
            yield from _assignments(statement.body)
            yield from _assignments(getattr(statement, "orelse", []))
