"""Constant folding, a cleanup pass (transforms/codegen/cleanup.py lists them in order):
arithmetic on numbers is done once, where the code is generated, not each time it runs.

`2 * 3.0` becomes `6.0`. A product by a float and then by a power of two of at least 2
becomes one product (`g * 0.1 * 2 * x`, what power's rule gives beside a constant factor,
becomes `g * 0.2 * x`): multiplying by a power of two is exact, so the two products round
once, to the same value, in every floating dtype, overflow included, wherever the first
product is not a subnormal number (below 6.1e-5 in float16, 1.2e-38 in float32); there the
folded one is the closer. Identities that rules leave (`x * 1`, `x ** 1`, `-(-x)`) are dropped
where an operator reads them.
"""
from __future__ import annotations

import math
import operator

import gast

from .nodes import nodes_of

_FOLDABLE = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
             gast.Div: operator.truediv, gast.Pow: operator.pow}
# A float folded into a product is a float16's normal number, as the product is: neither
# rounds to zero, a subnormal or infinity in any floating dtype (NumPy casts a Python float to
# the array's dtype).
_SMALLEST, _LARGEST = 2.0 ** -14, 65504.0


def fold_constants(body) -> None:
    """Fold arithmetic on numbers (`2 * 3.0` is `6.0`) and drop identities (`x * 1`, `1 * x`,
    `x / 1`, `x ** 1`, `-(-x)`) where what they compute feeds another operator.

    Elsewhere an identity stays: `A = x * 1.0` makes a new array, and folding it into `A = x`
    would let a later `A[0] = ...` (or a view of A) write into x.
    """
    for statement in body:
        # Most statements hold neither: one walk finds out, where each pass below visits
        # every node.
        folds = identities = False
        for node in nodes_of(statement):
            if isinstance(node, gast.BinOp):
                folds = folds or (_number_of(node.left) is not None
                                  and _number_of(node.right) is not None) or \
                    _factors_folded(node) is not None
            elif not isinstance(node, gast.UnaryOp):
                continue
            identities = identities or _identity_operand(node) is not None
        if folds:  # a fold may make an identity (`x * (0.5 * 2)`)
            _FoldNumbers().visit(statement)
        if folds or identities:
            _DropIdentities().visit(statement)


class _FoldNumbers(gast.NodeTransformer):
    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = _number_of(node.left), _number_of(node.right)
        if left is not None and right is not None and type(node.op) in _FOLDABLE:
            try:
                value = _FOLDABLE[type(node.op)](left, right)
            except (ArithmeticError, ValueError):
                return node
            if isinstance(value, (int, float)) and abs(value) < 1e15:
                return _number(value)
        return folded_factors(node)


def folded_factors(node):
    """`e * a * b` (the BinOp `node`; a a float, b a power of two of at least 2) as `e * c`,
    c the number a * b; else `node` as it is. (Inlining a temporary `t = g * 0.1` into `t * 2`
    makes one: transforms/codegen/cleanup.py asks there too.)"""
    factor = _factors_folded(node)
    if factor is None:
        return node
    return gast.BinOp(left=node.left.left, op=gast.Mult(), right=_number(factor))


def _factors_folded(node) -> float | None:
    if not (isinstance(node.op, gast.Mult) and isinstance(node.left, gast.BinOp)
            and isinstance(node.left.op, gast.Mult)):
        return None
    first, second = _number_of(node.left.right), _number_of(node.right)
    # (an integer first factor could overflow an integer e where the product would not; a
    # second factor below 1 could bring back what the first product overflowed)
    if type(first) is not float or second is None or abs(second) < 2 or \
            not _power_of_two(second):
        return None
    product = first * second
    if not (_SMALLEST <= abs(first) and abs(product) <= _LARGEST):
        return None
    return float(product)


def _power_of_two(number) -> bool:
    return math.isfinite(number) and abs(math.frexp(number)[0]) == 0.5


class _DropIdentities(gast.NodeTransformer):
    """Top down: `fresh` says whether the value of the node visited is read only by an
    arithmetic operator, which makes a new value of it (so it may as well be the operand)."""

    def __init__(self):
        self.fresh = False

    def generic_visit(self, node):
        fresh, self.fresh = self.fresh, False
        node = super().generic_visit(node)
        self.fresh = fresh
        return node

    def operands(self, node):
        fresh, self.fresh = self.fresh, True
        node = super().generic_visit(node)
        self.fresh = fresh
        return node

    def visit_BinOp(self, node):
        operand = _identity_operand(_without_zeroth_powers(node))
        if operand is not None and self.fresh:
            return self.visit(operand)
        return self.operands(node)

    def visit_UnaryOp(self, node):
        operand = _identity_operand(node)
        if operand is not None and self.fresh:
            return self.visit(operand)
        return self.operands(node)


def _identity_operand(node):
    """`x` for `x * 1`, `1 * x`, `x / 1`, `x ** 1` and `-(-x)` (what rules like power's give
    for a constant exponent); else None."""
    if isinstance(node, gast.UnaryOp):
        if (isinstance(node.op, gast.USub) and isinstance(node.operand, gast.UnaryOp)
                and isinstance(node.operand.op, gast.USub)):
            return node.operand.operand
        return None
    if isinstance(node.op, (gast.Pow, gast.Mult, gast.Div)) and _is_one(node.right):
        return node.left
    if isinstance(node.op, gast.Mult) and _is_one(node.left):
        return node.right
    return None


def _without_zeroth_powers(node):
    """`d * e ** 0` as `d * 1` (what power's partial of `e ** 1` gives): NumPy's `e ** 0` is 1
    for every e (0, nan and inf too), where differentiating it again would give 0 * e ** -1,
    nan at e = 0. (A factor: the product's shape is the other's, at least e's.)"""
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult):
        for side in ("left", "right"):
            if _is_zeroth_power(getattr(node, side)):
                setattr(node, side, gast.Constant(value=1, kind=None))
    return node


def _is_one(node) -> bool:
    return _is_constant(node, 1)


def _is_zeroth_power(node) -> bool:
    return isinstance(node, gast.BinOp) and isinstance(node.op, gast.Pow) and \
        _is_constant(node.right, 0)


def _is_constant(node, value) -> bool:
    return (isinstance(node, gast.Constant) and not isinstance(node.value, bool)
            and isinstance(node.value, (int, float)) and node.value == value)


def _number_of(node):
    """The int or float that `node` writes (`2.5`, `-1`), else None."""
    sign = 1
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        node, sign = node.operand, -1
    if isinstance(node, gast.Constant) and type(node.value) in (int, float):
        return sign * node.value
    return None


def _number(value):
    if value < 0:
        return gast.UnaryOp(op=gast.USub(), operand=gast.Constant(value=-value, kind=None))
    return gast.Constant(value=value, kind=None)
