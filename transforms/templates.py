"""Generated code is written as quoted Python with holes, not built node by node.

    replace("target = value * scale", target="bx", value=some_node, scale="2.0")

Each keyword names a hole; its value is a gast expression, or a string holding Python source
(a name is the common case). Holes that are statements (`body`) take a list of statements.

The same few templates are filled thousands of times for one derivative: each text is parsed
once, and every fill works on a copy of that tree (copying is much cheaper than parsing).
"""
from __future__ import annotations

import functools

import gast

from autotrace.transforms.codegen import parse_expression, parse_statements
from .nodes import copy_tree


@functools.lru_cache(maxsize=4096)
def _parsed(text: str, expression: bool):
    """The tree of `text`, parsed once: never handed out, only copies of it."""
    return parse_expression(text) if expression else parse_statements(text)


class _FillHoles(gast.NodeTransformer):
    def __init__(self, holes: dict):
        self.holes = holes

    def visit_Name(self, node):
        if node.id not in self.holes:
            return node
        value = self.holes[node.id]
        value = copy_tree(_parsed(value, True) if isinstance(value, str) else value)
        if isinstance(value, (gast.Name, gast.Attribute, gast.Subscript, gast.Tuple, gast.List)):
            _set_context(value, node.ctx)
        return value

    def visit_Expr(self, node):
        # A statement hole: a bare name standing alone on its line.
        if isinstance(node.value, gast.Name) and isinstance(self.holes.get(node.value.id), list):
            return copy_tree(self.holes[node.value.id])
        return self.generic_visit(node)


def _set_context(node, ctx) -> None:
    node.ctx = type(ctx)()
    if isinstance(node, (gast.Tuple, gast.List)):
        for element in node.elts:
            _set_context(element, ctx)


def replace(template: str, **holes) -> list:
    """Statements parsed from `template` with each hole filled (see the module docstring)."""
    statements = copy_tree(_parsed(template, False))
    filler = _FillHoles(holes)
    out = []
    for statement in statements:
        result = filler.visit(statement)
        out.extend(result if isinstance(result, list) else [result])
    return out


def replace_expression(template: str, **holes) -> gast.expr:
    """One expression parsed from `template` with its holes filled."""
    return _FillHoles(holes).visit(copy_tree(_parsed(template, True)))


def name(identifier: str, store: bool = False) -> gast.Name:
    """A gast Name node."""
    ctx = gast.Store() if store else gast.Load()
    return gast.Name(id=identifier, ctx=ctx, annotation=None, type_comment=None)
