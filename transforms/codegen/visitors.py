"""`ast.NodeVisitor` and `ast.NodeTransformer`, made fast: the same visits, in the same order,
with the same changes to the tree.

A derivative's passes visit every node of the function many times over, and the standard
library's versions spend most of that time finding each node's fields (a generator a node, a
field a resumption) rather than in the visits. These read the fields that may hold nodes
(nodes.NODE_FIELDS: not a Name's id, nor a Constant's value), which is all a visit can reach.
"""
from __future__ import annotations

import ast

from .nodes import NODE_FIELDS

_AST = ast.AST


class NodeVisitor(ast.NodeVisitor):
    """ast.NodeVisitor: `visit_<class name>(node)` where the class defines it, else
    `generic_visit(node)`, which visits the nodes directly under `node` in source order."""

    def visit(self, node):
        visitor = getattr(self, "visit_" + node.__class__.__name__, None)
        return self.generic_visit(node) if visitor is None else visitor(node)

    def generic_visit(self, node):
        visit = self.visit
        for field in NODE_FIELDS[type(node)]:
            value = getattr(node, field, None)
            if value is None:
                continue
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, _AST):
                        visit(item)
            elif isinstance(value, _AST):
                visit(value)


class NodeTransformer(ast.NodeTransformer):
    """ast.NodeTransformer: each node replaced by what its visit returns (None: removed; a
    list, in a list of nodes: its items in its place), in place."""

    visit = NodeVisitor.visit

    def generic_visit(self, node):
        visit = self.visit
        for field in NODE_FIELDS[type(node)]:
            old_value = getattr(node, field, None)
            if old_value is None:
                continue
            if isinstance(old_value, list):
                new_values = []
                for value in old_value:
                    if isinstance(value, _AST):
                        value = visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, _AST):
                            new_values.extend(value)
                            continue
                    new_values.append(value)
                old_value[:] = new_values
            elif isinstance(old_value, _AST):
                new_node = visit(old_value)
                if new_node is None:
                    delattr(node, field)
                else:
                    setattr(node, field, new_node)
        return node
