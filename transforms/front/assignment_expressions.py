"""Assignment expressions (`:=`) hoisted into statements of their own where that keeps what
the statement computes, which every mode then follows:

    if (s := np.sum(x)) > 0:           s = np.sum(x)
        return s * 2                   if s > 0:
                                           return s * 2

An `:=` is hoisted from an `if` test, an expression statement, an assignment's value or a
return value, when nothing evaluated before it in the statement calls a function or reads the
name it assigns (so moving it first changes no order of effects, and no read sees another
value). One under `and`/`or`, a conditional expression, a comprehension, a lambda or a dict
display (where it may run once, many times or not at all), or in a `while` test (which runs
again each iteration), is left where it is: the checks refuse it (transforms/front/checks.py).
"""
from __future__ import annotations

import gast

from ..codegen.nodes import copy_tree, rewrite_statements, walk

# Where an expression may run more than once or not at all.
_CONDITIONAL = (gast.BoolOp, gast.IfExp, gast.ListComp, gast.SetComp, gast.DictComp,
                gast.GeneratorExp, gast.Lambda, gast.Dict)


def hoist_assignment_expressions(function: gast.FunctionDef) -> None:
    """Rewrite each statement of `function` (nested functions too) holding an `:=` that can be
    hoisted, in place."""
    rewrite_statements(function, lambda statement: _hoisted(statement)
                       if _holds_walrus(statement) else None)


def _expression_field(statement):
    """The field of `statement` holding the expression an `:=` may be hoisted from."""
    if isinstance(statement, gast.If):
        return "test"
    if isinstance(statement, (gast.Expr, gast.Assign, gast.Return)) or \
            isinstance(statement, gast.AnnAssign) and statement.value is not None:
        return "value"
    return None


def _holds_walrus(statement) -> bool:
    field = _expression_field(statement)
    value = getattr(statement, field, None) if field else None
    return value is not None and any(isinstance(n, gast.NamedExpr) for n in walk(value))


def _hoisted(statement) -> list:
    """The assignments `statement`'s `:=`s become, then the statement reading their names;
    `[statement]` unchanged where one cannot be hoisted (see the module docstring)."""
    field = _expression_field(statement)
    hoister = _Hoister()
    expression = hoister.visit(copy_tree(getattr(statement, field)))
    if hoister.refused:
        return [statement]
    setattr(statement, field, expression)
    return hoister.assignments + [statement]


class _Hoister:
    """Walks an expression in the order Python evaluates it, taking out each `:=`."""

    def __init__(self):
        self.assignments = []
        self.refused = False
        self.called = False  # whether a call was evaluated before the node at hand
        self.read = set()  # the names read before it

    def visit(self, node, conditional: bool = False):
        if isinstance(node, gast.NamedExpr):
            called, read = self.called, set(self.read)
            value = self.visit(node.value, conditional)
            # (what its value evaluates is hoisted with it, in order: not "before" the rest)
            self.called, self.read = called, read
            target = node.target.id
            if conditional or called or target in read:
                self.refused = True
                return node
            assignment = gast.Assign(targets=[gast.Name(id=target, ctx=gast.Store(),
                                                        annotation=None, type_comment=None)],
                                     value=value, type_comment=None)
            self.assignments.append(gast.copy_location(assignment, node))
            return gast.copy_location(gast.Name(id=target, ctx=gast.Load(), annotation=None,
                                                type_comment=None), node)
        conditional = conditional or isinstance(node, _CONDITIONAL)
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, gast.AST):
                setattr(node, field, self.visit(value, conditional))
            elif isinstance(value, list):
                setattr(node, field, [self.visit(item, conditional)
                                      if isinstance(item, gast.AST) else item
                                      for item in value])
        if isinstance(node, gast.Call):
            self.called = True
        elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            self.read.add(node.id)
        return node
