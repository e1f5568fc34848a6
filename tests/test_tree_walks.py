"""codegen/nodes.py's walks hand out the nodes the standard library's walks do, in their order.

They skip the fields that hold a name, a number or a constant's value (a table by class
name): checked here against gast.walk and ast.iter_child_nodes over autotrace's own source,
parsed by gast and by ast, and on the nodes where a field of a name is a node in gast.
"""
import ast
from pathlib import Path

import gast
import pytest

from autotrace.transforms.codegen.naming import SCOPES, walk_scope
from autotrace.transforms.codegen.nodes import add_children, children, nodes_of, walk
from autotrace.transforms.codegen.visitors import NodeTransformer, NodeVisitor

PACKAGE = Path(__file__).resolve().parent.parent / "transforms"
SOURCES = sorted(PACKAGE.rglob("*.py"))


def scope_reference(node):
    """walk_scope as a recursion over every field: depth first, in source order."""
    yield node
    if isinstance(node, SCOPES):
        return
    for child in ast.iter_child_nodes(node):
        yield from scope_reference(child)


@pytest.mark.parametrize("path", SOURCES[::4], ids=lambda p: p.name)
def test_walks_meet_the_nodes_of_the_standard_walks_in_order(path):
    source = path.read_text()
    for tree, standard_walk in ((gast.parse(source), gast.walk), (ast.parse(source), ast.walk)):
        expected = list(standard_walk(tree))
        assert nodes_of(tree) == expected
        assert list(walk(tree)) == expected
        for node in expected:
            assert children(node) == list(ast.iter_child_nodes(node))
    tree = gast.parse(source)
    assert list(walk_scope(tree)) == list(scope_reference(tree))


def test_walks_reach_names_that_are_nodes():
    """gast makes an except clause's name a Name, where ast keeps a string: a walk reaches
    it; a def's name, an attribute's and a constant's value are strings in both."""
    tree = gast.parse("try:\n    pass\nexcept ValueError as error:\n    f.x = 'c'\n")
    names = [n.id for n in nodes_of(tree) if isinstance(n, gast.Name)]
    assert names == ["ValueError", "error", "f"]
    handler = tree.body[0].handlers[0]
    found = []
    add_children(handler, found.append)
    assert [type(n).__name__ for n in found] == ["Name", "Name", "Assign"]


def _visits(base):
    class Visits(base):
        """Records each node visited; each Name seen as a visit of its own."""
        def __init__(self):
            self.met = []

        def generic_visit(self, node):
            self.met.append(node)
            return super().generic_visit(node)

        def visit_Name(self, node):
            self.met.append(("name", node.id))
    return Visits


def _rewrites(base):
    class Rewrites(base):
        """Each kind of change a transformer makes: a node replaced (a name renamed), removed
        from a list (a pass statement) or from a field (a return's value), a statement
        replaced by two."""
        def visit_Name(self, node):
            return gast.Name(id=node.id + "_", ctx=node.ctx, annotation=None, type_comment=None)

        def visit_Pass(self, node):
            return None

        def visit_Return(self, node):
            self.generic_visit(node)
            return None if node.value is None else node

        def visit_Expr(self, node):
            self.generic_visit(node)
            return [node, gast.Pass()]
    return Rewrites


@pytest.mark.parametrize("path", [PACKAGE / "reverse" / "reverse.py", PACKAGE / "front" / "anf.py",
                                  PACKAGE / "codegen" / "visitors.py"], ids=lambda p: p.name)
def test_visitors_visit_and_change_as_the_standard_ones(path):
    """visitors.NodeVisitor and NodeTransformer visit the nodes the standard library's do, in
    their order, and leave the same tree."""
    source = path.read_text()
    fast, standard = _visits(NodeVisitor)(), _visits(gast.NodeVisitor)()
    fast.visit(gast.parse(source))
    standard.visit(gast.parse(source))
    assert [n if isinstance(n, tuple) else type(n) for n in fast.met] == \
        [n if isinstance(n, tuple) else type(n) for n in standard.met]
    assert len(fast.met) > 100
    trees = [_rewrites(base)().visit(gast.parse(source))
             for base in (NodeTransformer, gast.NodeTransformer)]
    assert gast.dump(trees[0]) == gast.dump(trees[1])
    assert gast.dump(trees[0]) != gast.dump(gast.parse(source))
