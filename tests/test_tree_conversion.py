"""nodes.to_ast, which every printed and compiled derivative goes through, makes what
gast.gast_to_ast makes: the same classes, fields and locations, node for node."""
import ast
import textwrap

import gast
import pytest

import autotrace
from autotrace.transforms.codegen import nodes
from autotrace.transforms.codegen.codegen import to_source

SOURCES = {
    "parameters": """
        def f(a, /, b: int, c=2.0, *args, d, e=None, **kwargs) -> float:
            return a + b * c
    """,
    "lambda_and_comprehensions": """
        def f(xs):
            g = lambda u, v=1: u * v
            return [g(x) for x in xs if x], {k: v for k, v in xs}, {x for x in xs}, (
                x for x in xs)
    """,
    "exceptions": """
        def f(x):
            try:
                y = 1 / x
            except ZeroDivisionError as error:
                raise ValueError(str(error)) from error
            except (TypeError, KeyError):
                y = 0
            else:
                y += 1
            finally:
                x = None
            return y
    """,
    "classes_and_async": """
        @decorated
        class C(Base, metaclass=Meta):
            n: int = 0

            async def run(self, *, when):
                async with lock as held:
                    async for item in items:
                        await item
                return held
    """,
    "subscripts_and_strings": """
        def f(x, name):
            x[1:2, ::2] = x[..., None][0]
            a, *rest = x
            y = f"{name!r:>{10}} {x[0]:.3f}" + b"bytes".decode() + 'it\\'s'
            del rest
            global counter
            with open(name) as handle, other():
                pass
            while x:
                break
            else:
                assert x, "never"
            return -y if not x else y ** 2 @ x
    """,
}


def _differences(expected, actual, path="tree") -> list:
    """Where two standard library trees differ: class, the attributes each node has, values."""
    if type(expected) is not type(actual):
        return [f"{path}: {type(expected).__name__} against {type(actual).__name__}"]
    if isinstance(expected, list):
        if len(expected) != len(actual):
            return [f"{path}: {len(expected)} items against {len(actual)}"]
        return [d for i, (e, a) in enumerate(zip(expected, actual))
                for d in _differences(e, a, f"{path}[{i}]")]
    if isinstance(expected, ast.AST):
        if set(vars(expected)) != set(vars(actual)):
            return [f"{path}: attributes {sorted(vars(expected))} against {sorted(vars(actual))}"]
        return [d for key in vars(expected)
                for d in _differences(getattr(expected, key), getattr(actual, key),
                                      f"{path}.{key}")]
    return [] if expected == actual else [f"{path}: {expected!r} against {actual!r}"]


@pytest.mark.parametrize("name", SOURCES)
def test_to_ast_makes_what_gast_makes(name):
    tree = gast.parse(textwrap.dedent(SOURCES[name]))
    assert _differences(gast.gast_to_ast(tree), nodes.to_ast(tree)) == []


def test_to_ast_makes_what_gast_makes_of_nodes_without_locations():
    """As the passes make them: some nodes located, most not, an end position set to None."""
    tree = gast.parse(textwrap.dedent(SOURCES["subscripts_and_strings"]))
    for index, node in enumerate(nodes.walk(tree)):
        if index % 3:
            for attribute in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                node.__dict__.pop(attribute, None)
        elif index % 2:
            node.end_lineno = None
    expected, actual = gast.gast_to_ast(tree), nodes.to_ast(tree)
    assert _differences(expected, actual) == []
    assert (ast.unparse(ast.fix_missing_locations(actual))
            == ast.unparse(ast.fix_missing_locations(expected)))


def _loss(w, x):
    total = 0.0
    for row in x:
        if row[0] > 0:
            total = total + (row @ w) ** 2
    return total


def test_a_derivative_prints_as_through_gast():
    """A derivative's own tree (a function autotrace made): printed the same either way."""
    source = autotrace.source(autotrace.grad(_loss))
    tree = gast.parse(source)
    assert _differences(gast.gast_to_ast(tree), nodes.to_ast(tree)) == []
    assert to_source(tree) == ast.unparse(ast.fix_missing_locations(gast.gast_to_ast(tree))) + "\n"


@pytest.mark.parametrize("name", SOURCES)
def test_children_are_iter_child_nodes(name):
    tree = gast.parse(textwrap.dedent(SOURCES[name]))
    for node in nodes.walk(tree):
        assert nodes.children(node) == list(gast.iter_child_nodes(node))
