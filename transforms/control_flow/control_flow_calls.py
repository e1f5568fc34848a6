"""The calls of runtime helpers that converted code makes (transforms/control_flow/control_flow.py), and the
expressions rewritten into them.

Each helper is bound to `_autotrace_<name>` in the converted function's namespace (`helper`).
In expressions, `a if c else b` becomes `if_exp(c, lambda: a, lambda: b)`, `a and b`
`and_(a, lambda: b)`, `not a` `not_(a)`, a chained comparison a chain of `and_`, a call
`g(x)` `converted(g)(x)`, so that the function it calls is converted too, and `a * b` where
one side may be a list and the other an array `binary("*", a, b)` (NumPy reads such a list
as an array, and cannot read traced values in it).
"""
from __future__ import annotations

import builtins
import types

import gast

from ..codegen.visitors import NodeTransformer
from ..codegen.nodes import copy_tree
from ..codegen.codegen import to_source
from .control_flow_variables import MUTATING_METHODS
from ..codegen.templates import name


# The runtime helpers converted code calls, each bound to `_autotrace_<name>`.
HELPER_NAMES = ("if_stmt", "while_stmt", "for_stmt", "if_exp", "and_", "or_", "not_",
                "range_", "Undefined", "converted", "set_item", "in_place_target",
                "python_test", "tracing_error_caught", "unsuppressing",
                "SavedValues",
                "checked_out", "checked_out_item", "added_at", "refuse_outside_write",
                "indexable", "refuse_traced_writes", "diagonal_index", "diagonal_values",
                "binary", "masked_operand", "where")


# Builtins whose calls go through `converted` all the same: max and min compare values as
# Python values, and the runtime's versions say what to use for traced ones; isinstance,
# type, hasattr and getattr answer for a traced value as for the NumPy value it stands for.
_COMPARING_BUILTINS = frozenset({"max", "min", "isinstance", "type", "hasattr", "getattr"})


# The attribute that marks the nodes of the user's own source (and what stands for one of
# them: a `binary` call), which keep their lines inside a branch or loop function.
USER_NODE = "_autotrace_user_node"
# The operators for which NumPy reads a list beside an array as an array, by their symbols.
_ARRAY_OPERATORS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/",
                    gast.FloorDiv: "//", gast.Mod: "%", gast.Pow: "**", gast.MatMult: "@"}


def _may_be_list(operand) -> bool:
    """Whether the operand `operand` may hold a list: not a number, nor an operator's result
    (an array; a `binary` call's too)."""
    if isinstance(operand, gast.Call) and isinstance(operand.func, gast.Name):
        return operand.func.id != helper("binary")
    return not isinstance(operand, (gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare))


def may_be_traced_index(index) -> bool:
    """Whether the subscript `index` may hold a traced value: not only numbers, `None`,
    `...` and slices of those."""
    if isinstance(index, gast.Tuple):
        return any(may_be_traced_index(part) for part in index.elts)
    if isinstance(index, gast.Slice):
        return any(part is not None and may_be_traced_index(part)
                   for part in (index.lower, index.upper, index.step))
    if isinstance(index, gast.UnaryOp) and isinstance(index.op, (gast.USub, gast.UAdd)):
        return may_be_traced_index(index.operand)
    return not isinstance(index, gast.Constant)


def helper(helper_name: str) -> str:
    """The name converted code calls a runtime helper by."""
    return f"_autotrace_{helper_name}"


def _lazy(expression) -> gast.Lambda:
    arguments = gast.arguments(args=[], posonlyargs=[], vararg=None, kwonlyargs=[],
                               kw_defaults=[], kwarg=None, defaults=[])
    return gast.Lambda(args=arguments, body=expression)


def may_give_outside(converter, expression) -> bool:
    """Whether the conditional expression `expression` may give memory the function does not
    make (transforms/analysis/write_sharing.py; converted code says so to if_exp)."""
    if converter.generated_code:
        return False
    return converter.unfollowed is None or converter.unfollowed.get(
        id(expression), {}).get("outside") is True


class _ConditionalExpressions(NodeTransformer):
    """`a if c else b` -> `if_exp(c, lambda: a, lambda: b)`, in this scope only.

    converter: the transforms/control_flow/control_flow.py `ControlFlowConverter` this rewrites for (its
    namer, namespace, the functions it made, and where a node sits in the user's source)."""

    def __init__(self, converter):
        self.converter = converter

    def visit_IfExp(self, node):
        where = self.converter._where(node, to_source(node).strip())  # as the user wrote it
        self.generic_visit(node)
        test = _Conditions(self.converter).visit(node.test)
        keywords = [gast.keyword(arg="where", value=gast.Constant(value=where, kind=None))]
        if may_give_outside(self.converter, node):
            keywords.append(gast.keyword(arg="outside", value=gast.Constant(value=True,
                                                                            kind=None)))
        call = gast.Call(func=name(helper("if_exp")),
                         args=[test, _lazy(node.body), _lazy(node.orelse)], keywords=keywords)
        return gast.copy_location(call, node)

    def visit_Call(self, node):
        self.generic_visit(node)
        callee = node.func
        if isinstance(callee, gast.Name) and (callee.id.startswith("_autotrace_")
                                              or callee.id in self.converter.generated
                                              or hasattr(builtins, callee.id)
                                              and callee.id not in self.converter.namespace
                                              and callee.id not in _COMPARING_BUILTINS):
            return node
        if isinstance(callee, gast.Attribute) and callee.attr in MUTATING_METHODS and not (
                isinstance(callee.value, gast.Name) and isinstance(
                    self.converter.namespace.get(callee.value.id), types.ModuleType)):
            return node  # a container's method (and how `assigned_names` sees a mutation),
            # not a module's function of the same name (np.sort, np.put)
        node.func = gast.copy_location(
            gast.Call(func=name(helper("converted")), args=[callee], keywords=[]), callee)
        return node

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        return _Conditions(self.converter).visit_BoolOp(node)

    def visit_BinOp(self, node):
        """`a * b` -> `binary("*", a, b)` where one side may be a list and the other is no
        number (`np.split(x, 3) * W`)."""
        self.generic_visit(node)
        symbol = _ARRAY_OPERATORS.get(type(node.op))
        if symbol is None or not any(
                _may_be_list(one) and not isinstance(other, gast.Constant)
                for one, other in ((node.left, node.right), (node.right, node.left))):
            return node
        call = gast.Call(func=name(helper("binary")),
                         args=[gast.Constant(value=symbol, kind=None), node.left, node.right],
                         keywords=[])
        for part in (call, call.func, call.args[0]):
            setattr(gast.copy_location(part, node), USER_NODE, True)  # (the user's line)
        return call

    def visit_Compare(self, node):
        self.generic_visit(node)
        return gast.copy_location(self._chain(node.left, node.ops, node.comparators), node)

    def _chain(self, left, ops, comparators):
        """`a < b < c` -> `and_(a < (t := b), lambda: t < c)`: a chained comparison asks
        for the truth of each link, which and_ gives for traced values too."""
        if len(ops) == 1:
            return gast.Compare(left=left, ops=ops, comparators=comparators)
        middle = comparators[0]
        if isinstance(middle, (gast.Name, gast.Constant)):
            reused = copy_tree(middle)
        else:
            temporary = self.converter.namer.temporary("compared")
            middle = gast.NamedExpr(target=name(temporary, store=True), value=middle)
            reused = name(temporary)
        first = gast.Compare(left=left, ops=ops[:1], comparators=[middle])
        rest = self._chain(reused, ops[1:], comparators[1:])
        return gast.Call(func=name(helper("and_")), args=[first, _lazy(rest)], keywords=[])

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        return _Conditions(self.converter).visit_UnaryOp(node)

    def visit_Subscript(self, node):
        """`a[i]` -> `indexable(a)[i]` where `i` may be traced: NumPy's own indexing of a
        NumPy array `a` cannot read a traced index. What a write goes into (`a[i][j] = v`)
        stays NumPy's, so that the write reaches `a`."""
        if not isinstance(node.ctx, gast.Load):
            self._written(node)
            return node
        self.generic_visit(node)
        if may_be_traced_index(node.slice):
            node.value = gast.copy_location(gast.Call(func=name(helper("indexable")),
                                                      args=[node.value], keywords=[]), node)
        return node

    def visit_Attribute(self, node):
        if not isinstance(node.ctx, gast.Load):
            self._written(node)
            return node
        self.generic_visit(node)
        return node

    def _written(self, target) -> None:
        """Convert the indices in a written target (`a[i][j]`, `a[i].b`), not what it
        writes into."""
        while isinstance(target, (gast.Subscript, gast.Attribute)):
            if isinstance(target, gast.Subscript):
                target.slice = self.visit(target.slice)
            if not isinstance(target.value, (gast.Subscript, gast.Attribute)):
                target.value = self.visit(target.value)
            target = target.value

    def visit_FunctionDef(self, node):
        return node  # converted on its own

    def visit_Lambda(self, node):
        self.generic_visit(node)
        return node


class _Conditions(NodeTransformer):
    """In a condition: `a and b` -> `and_(a, lambda: b)`, `not a` -> `not_(a)` (converter: as
    for _ConditionalExpressions)."""

    def __init__(self, converter):
        self.converter = converter

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        kind = helper("and_" if isinstance(node.op, gast.And) else "or_")
        result = node.values[0]
        for value in node.values[1:]:
            result = gast.Call(func=name(kind), args=[result, _lazy(value)], keywords=[])
        return gast.copy_location(result, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, gast.Not):
            return node
        call = gast.Call(func=name(helper("not_")), args=[node.operand], keywords=[])
        return gast.copy_location(call, node)

    def visit_Lambda(self, node):
        return node

    def visit_Call(self, node):
        return node  # a call's arguments are not conditions
