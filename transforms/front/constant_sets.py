"""A set display of constants (`{"a", "b"}`) written as the call `set(("a", "b"))`, which the
transforms follow as a constant without gradient, as they do a tuple of constants: its
membership tests and len() are differentiated through. A display holding any other value is
left as it is, which A-normal form refuses (autotrace follows no values through a set).
"""
from __future__ import annotations

import gast

from ..codegen.nodes import walk


def write_out_constant_sets(function: gast.FunctionDef) -> None:
    """Rewrite each set display of constants in `function` in place."""
    for node in walk(function):
        for field in node._fields:
            value = getattr(node, field, None)
            if _constant_set(value):
                setattr(node, field, _set_call(value))
            elif isinstance(value, list) and any(_constant_set(item) for item in value):
                setattr(node, field, [_set_call(item) if _constant_set(item) else item
                                      for item in value])


def _constant_set(node) -> bool:
    return isinstance(node, gast.Set) and all(_constant(element) for element in node.elts)


def _constant(node) -> bool:
    if isinstance(node, gast.Tuple):
        return all(_constant(element) for element in node.elts)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        return _constant(node.operand)
    return isinstance(node, gast.Constant)


def _set_call(display: gast.Set) -> gast.Call:
    items = gast.Tuple(elts=display.elts, ctx=gast.Load())
    call = gast.Call(func=gast.Name(id="set", ctx=gast.Load(), annotation=None,
                                    type_comment=None), args=[items], keywords=[])
    return gast.copy_location(call, display)
