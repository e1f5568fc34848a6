"""Under implicit_grad, `type(x)` is read as `x.__class__`.

A Variable held by a class (`class Model: w = Variable(...)`) may be read through the class
of an object: `type(self).w`. `type` is a function without gradient, so its result would carry
none, and the Variable would get none, silently; `self.__class__` is an attribute of `self`,
through which the Variable gets its gradient as through `self.w`:

    type(self).w          ->  self.__class__.w

    cls = type(self)      ->  cls = self.__class__

    k = type(o)           ->  k = o.__class__       (where k is read only as `k.name`)

Only the class of `self`, or an attribute of a class other than a dunder: `type(x) is
np.ndarray`, `type(x).__name__` and `type(self).__mro__` stay the builtin's, which a traced
function answers for a traced array as NumPy would (its `__class__` is the tracer's). A name
bound to `type(o)` and read both as `k.name` and otherwise (`k is np.ndarray`, `k(...)`) is
refused: neither reading gives both the builtin's class and the Variable's gradient.
"""
from __future__ import annotations

import builtins

import gast

from .parsing import resolve
from ..codegen.codegen import to_source
from ..codegen.nodes import walk
from ..errors import Location


def rewrite_class_reads(function: gast.FunctionDef, namespace: dict,
                        location: Location) -> None:
    """Rewrite, in place, each `type(self)`, `type(x).name` and `k = type(x)` whose `k` is
    read only as `k.name` (the builtin called with one argument, `name` no dunder) in
    `function` (nested functions too) into `self.__class__`, `x.__class__.name` and
    `k = x.__class__`; raise TransformError at a `k = type(x)` whose `k` is read as `k.name`
    and otherwise too."""
    classes = _names_read_as_classes(function, namespace, location)
    for node in walk(function):
        for field, value in gast.iter_fields(node):
            if _is_class_read(value, namespace) and (
                    _of_self(value) or (isinstance(node, gast.Attribute) and field == "value"
                                        and not node.attr.startswith("__"))
                    or (field == "value" and _bound_name(node) in classes)):
                setattr(node, field, _class_of(value))


def _names_read_as_classes(function, namespace: dict, location: Location) -> set:
    """The names bound to `type(x)` (x no `self`) that the function reads only as `k.name`,
    `name` no dunder; refuses one read so and otherwise too."""
    bound = {_bound_name(node): node for node in walk(function)
             if _bound_name(node) is not None and _is_class_read(node.value, namespace)
             and not _of_self(node.value)}
    attribute_reads = {id(node.value): node for node in walk(function)
                       if isinstance(node, gast.Attribute) and not node.attr.startswith("__")}
    as_class = set()
    for name, binding in bound.items():
        reads = [node for node in walk(function) if isinstance(node, gast.Name)
                 and node.id == name and isinstance(node.ctx, gast.Load)]
        attribute = next((attribute_reads[id(n)] for n in reads if id(n) in attribute_reads),
                         None)
        other = next((n for n in reads if id(n) not in attribute_reads), None)
        if attribute is not None and other is not None:
            raise location.error(other, (
                f"under implicit_grad, '{name}' ({_text(binding)}, line "
                f"{location.line_of(binding)}) is read both as a class ({_text(attribute)}) "
                f"and otherwise, so a Variable of the class would get no gradient through "
                f"it; read the Variable as {_text(binding.value)}.{attribute.attr}"),
                "type(x) bound to a name")
        if attribute is not None:
            as_class.add(name)
    return as_class


def _bound_name(node) -> str | None:
    """The name `node` binds, where it is `name = value`."""
    if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(
            node.targets[0], gast.Name):
        return node.targets[0].id
    return None


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


def _text(node) -> str:
    return to_source(node).strip()
