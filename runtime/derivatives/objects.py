"""Gradients of objects: dataclass instances, and objects a differentiated function builds.

A dataclass gets a gradient of its own class, as a namedtuple does: an instance whose fields
hold the gradients of the fields (made without running `__init__` or `__post_init__`, so a
frozen dataclass works too). Any other object gets an `ObjectGradient`: a dict of the
gradients of its attributes, by name, where an attribute no gradient reached is absent.

An object is built in differentiated code as `build_object(cls, fields)`, the attributes its
`__init__` sets given as a dict (transforms/objects.py writes the call), so that its fields
carry gradient the way a dict's items do.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import numbers
import types


class ObjectGradient(dict):
    """The gradient of an object that is no container, array or dataclass: attribute name ->
    the gradient of that attribute (read with runtime.derivatives.structure.read_attribute)."""

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


def build_object(cls, fields: dict):
    """An instance of `cls` holding the attribute values `fields`, without running its
    `__init__` (what it computes is `fields`; see transforms/objects.py). A dataclass field
    that `fields` leaves out gets its default. Where `fields` holds the object its
    `__init__` built (transforms/objects.py `Fields`), that object."""
    built = getattr(fields, "instance", None)
    if type(built) is cls:
        return built
    instance = cls.__new__(cls)
    if dataclasses.is_dataclass(cls):
        for field in dataclasses.fields(cls):
            if field.name in fields:
                value = fields[field.name]
            elif field.default is not dataclasses.MISSING:
                value = field.default
            else:
                value = field.default_factory()
            object.__setattr__(instance, field.name, value)
        return instance
    for attribute, value in fields.items():
        object.__setattr__(instance, attribute, value)
    return instance


def field_gradients(gradient, fields: dict, cls, built=None) -> dict:
    """The gradient of the dict `fields` that `build_object(cls, fields)` was given, from the
    gradient of the object it built (a dataclass, an ObjectGradient, or None).

    `built`: that object, checked to hold `fields` still: an attribute set again after it was
    built (by a method called for its effect) would have changed values the gradient
    follows without it seeing."""
    from runtime.derivatives.structure import zeros_like  # which imports this module
    if built is not None:
        _check_unchanged(built, fields)
    out = {}
    for attribute, value in fields.items():
        if gradient is None:
            entry = None
        elif is_dataclass_instance(gradient):
            entry = getattr(gradient, attribute)
        else:
            entry = gradient.get(attribute)
        out[attribute] = zeros_like(value) if entry is None else entry
    return out


def _check_unchanged(built, fields: dict) -> None:
    if dataclasses.is_dataclass(built):  # (fields left out took their defaults)
        now = {name: getattr(built, name) for name in field_names(type(built))}
        names = set(fields)
    else:
        now = vars(built)
        names = set(now) | set(fields)
    changed = sorted(name for name in names
                     if name not in now or name not in fields or now[name] is not fields[name])
    if changed:
        cls = type(built)
        try:
            where = f" (defined at {inspect.getsourcefile(cls)}, line " \
                    f"{inspect.getsourcelines(cls)[1]})"
        except (OSError, TypeError):
            where = ""
        raise RuntimeError(
            f"autotrace cannot differentiate through this {cls.__name__}{where}: its "
            f"attribute {changed[0]!r} was set after the differentiated function built it "
            "(by a method or function called on it), and the gradient follows the values it "
            "was built with. Have the method return a new object instead of changing this "
            "one")


def object_gradient(cls, gradients: dict, like=None):
    """The gradient of an object of class `cls`, given the gradients of its fields; a field of
    the dataclass `like` that `gradients` leaves out (it took its default) gets zeros."""
    if dataclasses.is_dataclass(cls):
        if like is not None:
            from runtime.derivatives.structure import zeros_like  # which imports this module
            gradients = {name: gradients[name] if name in gradients
                         else zeros_like(getattr(like, name)) for name in field_names(cls)}
        return new_dataclass(cls, gradients)
    return ObjectGradient(gradients)
