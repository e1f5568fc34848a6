"""Objects that differentiated code builds, and the gradients of their fields.

An object is built in differentiated code as `build_object(cls, fields)`, the attributes its
`__init__` sets given as a dict (transforms/reverse/built_objects_and_super.py writes the call), so that its fields
carry gradient the way a dict's items do: `field_gradients` and `object_gradient` turn the
gradient of the object into the gradient of that dict and back (runtime/derivatives/objects.py
says what the gradient of an object is).

`dataclasses.replace(p, w=v)` and a namedtuple's `p._replace(w=v)` build a new object from the
fields of `p` kept and the values given for the others. Their own code is none autotrace can
differentiate (`replace` passes a dict it changes on as `**changes`; `_replace` maps `dict.pop`
over the fields), so it differentiates `replaced_dataclass` and `replaced_namedtuple` instead,
which build the new object as differentiated code builds one: the gradient of each field goes
to the value given for it, or to the field of `p` it was kept from. transforms/reverse/built_objects_and_super.py
writes a call of `dataclasses.replace` as one of `replaced_dataclass`; `_replace`, a method
found when the call runs, is derived as `replace_namedtuple_call` there
(transforms/dynamic_calls.py).
"""
from __future__ import annotations

import dataclasses
import inspect

from .items import build_namedtuple
from .objects import (ObjectGradient, field_names,
                                                   generated_dataclass_init,
                                                   is_dataclass_instance, new_dataclass)
from .structure import is_namedtuple, zeros_like


def build_object(cls, fields: dict):
    """An instance of `cls` holding the attribute values `fields`, without running its
    `__init__` (what it computes is `fields`; see transforms/reverse/built_objects_and_super.py). A dataclass field
    that `fields` leaves out gets its default. Where `fields` holds the object its
    `__init__` built (transforms/reverse/built_objects_and_super.py `Fields`), that object."""
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
        raise RuntimeError(
            f"autotrace cannot differentiate through this {cls.__name__}{_defined_at(cls)}: its "
            f"attribute {changed[0]!r} was set after the differentiated function built it "
            "(by a method or function called on it), and the gradient follows the values it "
            "was built with. Have the method return a new object instead of changing this "
            "one")


def _defined_at(cls) -> str:
    """` (defined at FILE, line N)` for the class `cls`, where its source can be found."""
    try:
        return f" (defined at {inspect.getsourcefile(cls)}, line " \
               f"{inspect.getsourcelines(cls)[1]})"
    except (OSError, TypeError):
        return ""


def object_gradient(cls, gradients: dict, like=None):
    """The gradient of an object of class `cls`, given the gradients of its fields; a field of
    the dataclass `like` that `gradients` leaves out (it took its default) gets zeros."""
    if dataclasses.is_dataclass(cls):
        if like is not None:
                    gradients = {name: gradients[name] if name in gradients
                         else zeros_like(getattr(like, name)) for name in field_names(cls)}
        return new_dataclass(cls, gradients)
    return ObjectGradient(gradients)


def replaced_dataclass(obj, changes):
    """`dataclasses.replace(obj, **changes)`, written as autotrace differentiates it."""
    fields = {}
    for field in replaced_dataclass_fields(obj, changes):
        if field in changes:
            fields[field] = changes[field]
        else:
            fields[field] = getattr(obj, field)
    return build_object(type(obj), fields)


def replaced_namedtuple(obj, changes):
    """`obj._replace(**changes)` of a namedtuple, written as autotrace differentiates it."""
    values = []
    for field in replaced_namedtuple_fields(obj, changes):
        if field in changes:
            values.append(changes[field])
        else:
            values.append(getattr(obj, field))
    return build_namedtuple(type(obj), tuple(values))


def replace_namedtuple_call(obj, **changes):
    """What a call `obj._replace(**changes)` of a namedtuple's method is derived as."""
    return replaced_namedtuple(obj, changes)


def is_namedtuple_replace(func) -> bool:
    """Whether `func` is the bound `_replace` method of a namedtuple."""
    owner = getattr(func, "__self__", None)
    return is_namedtuple(owner) and getattr(func, "__func__", None) is getattr(
        type(owner), "_replace", None)


def replaced_dataclass_fields(obj, changes: dict) -> list:
    """The fields `dataclasses.replace(obj, **changes)` passes to the class, after the checks
    it makes (with its errors); refused where the new object is not its fields alone."""
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        raise TypeError("replace() should be called on dataclass instances")
    cls = type(obj)
    if not generated_dataclass_init(cls) or hasattr(cls, "__post_init__"):
        raise TypeError(
            f"autotrace cannot differentiate dataclasses.replace on a {cls.__name__}"
            f"{_defined_at(cls)}: it runs {cls.__name__}'s __post_init__ or its own "
            "__init__, which autotrace does not read as the fields it sets; build the new "
            f"object with {cls.__name__}(...) instead")
    init_fields = []
    for field in dataclasses.fields(cls):
        if not field.init:
            if field.name in changes:
                raise ValueError(f"field {field.name} is declared with init=False, it cannot "
                                 "be specified with replace()")
            continue
        init_fields.append(field.name)
    unknown = [key for key in changes if key not in init_fields]
    if unknown:
        raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument "
                        f"{unknown[0]!r}")
    return init_fields


def replaced_namedtuple_fields(obj, changes: dict) -> tuple:
    """The fields of the namedtuple `obj`, after the check `obj._replace(**changes)` makes."""
    if not is_namedtuple(obj):
        raise TypeError(f"_replace() of a {type(obj).__name__}, which is no namedtuple")
    unknown = [key for key in changes if key not in obj._fields]
    if unknown:
        raise ValueError(f"Got unexpected field names: {unknown!r}")
    return obj._fields
