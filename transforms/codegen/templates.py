"""Generated code is written as quoted Python with holes, not built node by node.

    replace("target = value * scale", target="bx", value=some_node, scale="2.0")

Each keyword names a hole; its value is a gast expression, or a string holding Python source
(a name is the common case). Holes that are statements (`body`) take a list of statements.

The same few templates are filled thousands of times for one derivative: each text is parsed
once, and every fill works on a copy of that tree (copying is much cheaper than parsing).
"""
from __future__ import annotations

import copy
import functools

import gast

from .codegen import parse_expression, parse_statements
from .nodes import copy_tree


@functools.lru_cache(maxsize=4096)
def _parsed(text: str, expression: bool):
    """The tree of `text`, parsed once: never handed out, only copies of it."""
    return parse_expression(text) if expression else parse_statements(text)


def _filled(node, holes: dict):
    """A copy of the template node `node` with its holes filled: a node, a list of statements
    (a statement hole) or None (a hole given None, which leaves its place empty). Copying and
    filling are one pass; the parsed template is never changed."""
    if isinstance(node, gast.Name):
        if node.id not in holes:
            return copy_tree(node)
        value = holes[node.id]
        value = copy_tree(_parsed(value, True) if isinstance(value, str) else value)
        if isinstance(value, (gast.Name, gast.Attribute, gast.Subscript, gast.Tuple, gast.List)):
            _set_context(value, node.ctx)
        return value
    if (isinstance(node, gast.Expr) and isinstance(node.value, gast.Name)
            and isinstance(holes.get(node.value.id), list)):
        # A statement hole: a bare name standing alone on its line.
        return copy_tree(holes[node.value.id])
    copied = type(node)()  # as copy.deepcopy makes it: the class, its __dict__ filled
    state = copied.__dict__
    for key, value in node.__dict__.items():
        if isinstance(value, gast.AST):
            value = _filled(value, holes)
            if value is None:
                continue  # as ast.NodeTransformer leaves it: no attribute
        elif isinstance(value, list):
            items = []
            for item in value:
                if isinstance(item, gast.AST):
                    item = _filled(item, holes)
                    if item is None:
                        continue
                    if isinstance(item, list):
                        items.extend(item)
                        continue
                items.append(item)
            value = items
        state[key] = value  # else a string, number or None, which a copy shares too
    return copied


def _set_context(node, ctx) -> None:
    node.ctx = type(ctx)()
    if isinstance(node, (gast.Tuple, gast.List)):
        for element in node.elts:
            _set_context(element, ctx)


def replace(template: str, **holes) -> list:
    """Statements parsed from `template` with each hole filled (see the module docstring)."""
    out = []
    for statement in _parsed(template, False):
        result = _filled(statement, holes)
        out.extend(result if isinstance(result, list) else [result])
    return out


def replace_expression(template: str, **holes) -> gast.expr:
    """One expression parsed from `template` with its holes filled."""
    return _filled(_parsed(template, True), holes)


def name(identifier: str, store: bool = False) -> gast.Name:
    """A gast Name node."""
    ctx = gast.Store() if store else gast.Load()
    return gast.Name(id=identifier, ctx=ctx, annotation=None, type_comment=None)


def keywords_dict(keywords: list) -> gast.Dict:
    """`{'name': value, ...}` of a call's keyword arguments, as `vjp_call` and `jvp_call`
    take them."""
    return gast.Dict(keys=[gast.Constant(value=k.arg, kind=None) for k in keywords],
                     values=[copy_tree(k.value) for k in keywords])


def index_value(node, part=copy.deepcopy):
    """A subscript's index as the value Python passes to __getitem__, an expression that can
    be passed to a function: `1:3` -> `slice(1, 3)`, `0, 1:` -> `(0, slice(1, None))`.
    part(expression): each expression of it, as the caller writes one (a copy)."""
    if isinstance(node, gast.Slice):
        parts = [gast.Constant(value=None, kind=None) if p is None else part(p)
                 for p in (node.lower, node.upper, node.step)]
        while len(parts) > 2 and isinstance(parts[-1], gast.Constant) and parts[-1].value is None:
            parts.pop()
        return gast.Call(func=name("slice"), args=parts, keywords=[])
    if isinstance(node, gast.Tuple):
        return gast.Tuple(elts=[index_value(e, part) for e in node.elts], ctx=gast.Load())
    return part(node)
