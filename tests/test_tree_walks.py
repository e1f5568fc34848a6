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
