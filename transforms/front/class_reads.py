"""Under implicit_grad, `type(x)` is read as `x.__class__`.

A Variable held by a class (`class Model: w = Variable(...)`) may be read through the class
of an object: `type(self).w`. `type` is a function without gradient, so its result would carry
none, and the Variable would get none, silently; `self.__class__` is an attribute of `self`,
through which the Variable gets its gradient as through `self.w`:

    type(self).w          ->  self.__class__.w

    cls = type(self)      ->  cls = self.__class__

Only the class of `self`, or an attribute of a class other than a dunder: `type(x) is
np.ndarray`, `type(x).__name__` and `type(self).__mro__` stay the builtin's, which a traced
function answers for a traced array as NumPy would (its `__class__` is the tracer's).
"""
from __future__ import annotations

import builtins

import gast

from .parsing import resolve
from ..codegen.nodes import walk


def rewrite_class_reads(function: gast.FunctionDef, namespace: dict) -> None:
    """Rewrite, in place, each `type(self)` and `type(x).name` (the builtin called with one
    argument, `name` no dunder) in `function` (nested functions too) into `self.__class__` and
    `x.__class__.name`."""
    for node in walk(function):
        for field, value in gast.iter_fields(node):
            if _is_class_read(value, namespace) and (
                    _of_self(value) or (isinstance(node, gast.Attribute) and field == "value"
                                        and not node.attr.startswith("__"))):
                setattr(node, field, _class_of(value))


def _of_self(call: gast.Call) -> bool:
    return isinstance(call.args[0], gast.Name) and call.args[0].id == "self"


def _is_class_read(node, namespace: dict) -> bool:
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and len(node.args) == 1 and not node.keywords
            and not isinstance(node.args[0], gast.Starred)
            and resolve(node.func, namespace) is builtins.type)


def _class_of(call: gast.Call) -> gast.Attribute:
    return gast.copy_location(
        gast.Attribute(value=call.args[0], attr="__class__", ctx=gast.Load()), call)
