"""Objects that differentiated code builds, and the gradients of their fields.

An object is built in differentiated code as `build_object(cls, fields)`, the attributes its
`__init__` sets given as a dict (transforms/objects.py writes the call), so that its fields
carry gradient the way a dict's items do: `field_gradients` and `object_gradient` turn the
gradient of the object into the gradient of that dict and back (runtime/derivatives/objects.py
says what the gradient of an object is).
"""
from __future__ import annotations

import dataclasses
import inspect

from autotrace.runtime.derivatives.objects import (ObjectGradient, field_names,
                                                   is_dataclass_instance, new_dataclass)
from autotrace.runtime.derivatives.structure import zeros_like


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
                    gradients = {name: gradients[name] if name in gradients
                         else zeros_like(getattr(like, name)) for name in field_names(cls)}
        return new_dataclass(cls, gradients)
    return ObjectGradient(gradients)
