"""Gradients of objects: dataclass instances, and objects a differentiated function builds.

A dataclass gets a gradient of its own class, as a namedtuple does: an instance whose fields
hold the gradients of the fields (made without running `__init__` or `__post_init__`, so a
frozen dataclass works too). Any other object gets an `ObjectGradient`: a dict of the
gradients of its attributes, by name, where an attribute no gradient reached is absent.

Objects that differentiated code builds, and the gradients of their fields, are
runtime/derivatives/built_objects.py.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import numbers
import types


class ObjectGradient(dict):
    """The gradient of an object that is no container, array or dataclass: attribute name ->
    the gradient of that attribute (read with runtime.derivatives.items.read_attribute)."""

    def __repr__(self) -> str:
        return f"ObjectGradient({dict.__repr__(self)})"


_NOT_OBJECTS = (type(None), numbers.Number, str, bytes, tuple, list, dict, set, frozenset,
                type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                types.ModuleType, range, slice)


def is_dataclass_instance(value) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def is_plain_object(value) -> bool:
    """An instance of a user's class that is neither a container, nor an array, nor a
    dataclass: what gets an ObjectGradient."""
    return not (isinstance(value, _NOT_OBJECTS) or hasattr(value, "dtype")
                or is_dataclass_instance(value) or isinstance(value, ObjectGradient))


def generated_dataclass_init(cls) -> bool:
    """A dataclass whose __init__ the decorator wrote (it has no source to read)."""
    if not dataclasses.is_dataclass(cls) or not inspect.isfunction(cls.__init__):
        return False
    try:
        inspect.getsourcelines(cls.__init__.__code__)
    except (OSError, TypeError):
        return True
    return cls.__init__.__code__.co_filename == "<string>"


def field_names(cls) -> tuple:
    return tuple(field.name for field in dataclasses.fields(cls))


def new_dataclass(cls, values: dict):
    """An instance of the dataclass `cls` holding `values` by field name (None where a field
    is not given), made without `__init__`, so that a frozen one and one whose
    `__post_init__` checks its values can hold gradients."""
    instance = cls.__new__(cls)
    for field in field_names(cls):
        object.__setattr__(instance, field, values.get(field))
    return instance


def map_fields(function, *instances):
    """A dataclass like `instances[0]` whose fields are `function` of the instances' fields."""
    cls = type(instances[0])
    return new_dataclass(cls, {field: function(*(getattr(i, field) for i in instances))
                               for field in field_names(cls)})


def with_attribute(gradient, attribute: str, value, add):
    """`gradient` (a dataclass gradient, an ObjectGradient, or None for none yet) with `value`
    added to its entry `attribute` (a new object). An attribute of a dataclass that is none
    of its fields (a class attribute) is a constant: its gradient goes nowhere."""
    if is_dataclass_instance(gradient):
        cls = type(gradient)
        if attribute not in field_names(cls):
            return gradient
        values = {field: getattr(gradient, field) for field in field_names(cls)}
        values[attribute] = add(values[attribute], value)
        return new_dataclass(cls, values)
    out = ObjectGradient(gradient or {})
    out[attribute] = add(out.get(attribute), value)
    return out


def check_stored(owner, attribute: str) -> None:
    """Refuse a gradient through `owner.<attribute>` where the class computes it (a
    property): autotrace would need to differentiate the getter, and it does not."""
    if not (is_plain_object(owner) or is_dataclass_instance(owner)):
        return
    computed = inspect.getattr_static(type(owner), attribute, None)
    if isinstance(computed, (property, functools.cached_property)):
        raise TypeError(
            f"autotrace cannot differentiate through the property {type(owner).__name__}."
            f"{attribute} of an object whose attributes carry gradient; make it a method "
            f"and call it ({attribute}() instead of .{attribute})")


def add_objects(a, b, add):
    """The sum of two gradients of one object (either may be None)."""
    if a is None:
        return b
    if b is None:
        return a
    if is_dataclass_instance(a):
        return map_fields(add, a, b)
    out = ObjectGradient(a)
    for attribute, value in b.items():
        out[attribute] = add(out.get(attribute), value)
    return out
