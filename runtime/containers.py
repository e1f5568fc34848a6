"""Values with structure, below gradients and tracing: namedtuples, dataclasses, and the zero of
a value with its structure.

The tracer (signatures, output trees, stacks of saved values), the recomputation barrier and
the derivative helpers all take containers apart and build them again; what a container is,
and how one is rebuilt with other items, is stated here once. The derivative helpers
(runtime/derivatives/) build gradients on top of it.
"""
from __future__ import annotations

import collections
import dataclasses
import numbers
import types

import numpy as np

from .devices import array_module
from .held_state import PerClass, holds_state, slot_names


def is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


class ClearedList(list):
    """The zeros `clear_item` (runtime/derivatives/items.py) leaves in the slot of a list's
    gradient that an assignment (`rows[0] = row`) cleared. The list the slot held before may
    have had another length than the one assigned, so the gradient of the slot's earlier reads,
    of that other length, takes the place of these zeros when added to them (they add nothing,
    whatever their length)."""


def rebuild(value, items):
    """A container of the same kind as `value` holding `items` (a plain list for a
    ClearedList: the items may be no zeros); for a dict, `items` are (key, item) pairs. A
    dict of another class whose constructor takes other arguments (a defaultdict's factory,
    a Counter's counting, a class of the user's) is a new object of its class holding
    `value`'s attributes and `items`, made without its __init__ and __setitem__ (dict's own
    methods set the items: the class's may do something else, or refuse)."""
    if is_namedtuple(value):
        return type(value)(*items)
    if type(value) is ClearedList:
        return list(items)
    if isinstance(value, dict) and type(value) not in _DICTS_BY_ITEMS and \
            not getattr(type(value), "rebuilt_from_items", False):
        made = type(value).__new__(type(value))  # (its __init__ and __setitem__ not run)
        if isinstance(value, collections.defaultdict):
            made.default_factory = value.default_factory
        for name in slot_names(type(value)):
            if hasattr(value, name):
                object.__setattr__(made, name, getattr(value, name))
        if hasattr(value, "__dict__"):
            made.__dict__.update(value.__dict__)
        dict.update(made, items)
        return made
    return type(value)(items)


# Dicts whose constructor takes (key, item) pairs and does nothing else with them.
_DICTS_BY_ITEMS = {dict, collections.OrderedDict}


def is_dataclass_instance(value) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


# (a class's fields do not change once it is made)
field_names = PerClass(lambda cls: tuple(field.name for field in dataclasses.fields(cls)))


def instance_fields(instance) -> tuple:
    """The names a dataclass object holds its values by, as traces take it apart and make it
    again (new_dataclass): its fields, then the attributes set on it beside them
    (`__post_init__`'s `self.n = len(self.w)`, `self.w2 = 2 * self.w`), in the order they
    were set, but for those `kept_as_they_are`."""
    return instance_parts(instance)[0]


def kept_as_they_are(instance) -> dict:
    """The attributes of a dataclass object beside its fields that hold a list, dict, set,
    deque or object (a history, a reference to its parent or to itself): made again, the
    object holds them as they are (a trace keys them by what they hold, objects by identity:
    runtime/tracing/signature.py kept_key)."""
    return instance_parts(instance)[1]


def instance_parts(instance) -> tuple:
    """(instance_fields, kept_as_they_are) of a dataclass object, found in one pass."""
    names = field_names(type(instance))
    attributes = getattr(instance, "__dict__", None)
    if attributes is None or len(attributes) <= len(names) and all(
            name in names for name in attributes):
        return names, {}
    extra, kept = [], {}
    for name, value in attributes.items():
        if name not in names:
            if _kept_as_it_is(value):
                kept[name] = value
            else:
                extra.append(name)
    return names + tuple(extra), kept


def _kept_as_it_is(value) -> bool:
    if isinstance(value, tuple):  # (a tuple of arrays and numbers is taken apart)
        return any(_kept_as_it_is(item) for item in value)
    return isinstance(value, KEPT_CONTAINERS) or (
        hasattr(value, "__dict__") and not isinstance(value, np.ndarray))


# The containers a dataclass object keeps as they are beside its fields (kept_as_they_are)
KEPT_CONTAINERS = (list, dict, set, collections.deque)


def new_dataclass(cls, values: dict, like=None):
    """An instance of the dataclass `cls` holding `values` by name (its fields, None where
    one is not given, and attributes beside them: instance_fields), and the attributes that
    `like` (an instance it is made again from) keeps as they are, made without `__init__`,
    so that a frozen one and one whose `__post_init__` checks its values can hold
    gradients."""
    instance, fields = cls.__new__(cls), field_names(cls)
    for field in fields:
        object.__setattr__(instance, field, values.get(field))
    for name, value in values.items():
        if name not in fields:
            object.__setattr__(instance, name, value)
    if like is None:
        return instance
    for name, value in values.items():  # a method in a field (`act: object = None`)
        if isinstance(value, types.MethodType):
            object.__setattr__(instance, name, rebound(value, like, instance))
    for name, value in kept_as_they_are(like).items():
        object.__setattr__(instance, name, rebound(value, like, instance))
    return instance


def rebound(value, like, instance):
    """`value`, which `like` holds in a field or beside its fields, as `instance`, made again
    from `like`, holds it: a method of `like` (`self.act = self.forward`) or of an object in
    one of its fields (`self.act = self.layer.forward`) a method of `instance`, or of the
    object that `instance` holds in that field; anything else as it is. So the method reads
    what the copy holds (the trace's values), not what `like` held when traced."""
    owner = getattr(value, "__self__", None)
    if not isinstance(value, types.MethodType) or owner is None:
        return value
    if owner is like:
        return types.MethodType(value.__func__, instance)
    for name in instance_fields(like):
        if getattr(like, name, None) is owner:
            held = getattr(instance, name)
            return value if held is owner else types.MethodType(value.__func__, held)
    return value


def rebound_items(items: list, like) -> list:
    """`items`, made from those of the sequence `like` (a namedtuple's), with a method of an
    object `like` holds as another item (`Block(layer, layer.forward)`) a method of the item
    made from that object, as `rebound` does for a dataclass's fields."""
    for index, item in enumerate(items):
        owner = getattr(item, "__self__", None)
        if isinstance(item, types.MethodType) and owner is not None:
            for other, held in enumerate(like):
                if held is owner and items[other] is not owner:
                    items[index] = types.MethodType(item.__func__, items[other])
                    break
    return items


def map_fields(function, *instances):
    """A dataclass like `instances[0]` whose fields are `function` of the instances' fields."""
    cls = type(instances[0])
    return new_dataclass(cls, {field: function(*(getattr(i, field) for i in instances))
                               for field in field_names(cls)})


def float_dtype(dtype):
    """`dtype` where it is floating or complex, else float64 (the dtype of its gradient)."""
    return dtype if np.dtype(dtype).kind in "fc" else np.float64


def zeros_like(value):
    """The zero gradient of `value`, with its structure."""
    if isinstance(value, (tuple, list)):
        return rebuild(value, [zeros_like(v) for v in value])
    if isinstance(value, dict):
        return rebuild(value, ((k, zeros_like(v)) for k, v in value.items()))
    if isinstance(value, (bool, numbers.Integral, float)) and not hasattr(value, "dtype"):
        return 0.0
    if isinstance(value, complex) and not hasattr(value, "dtype"):
        return 0j
    if hasattr(value, "dtype") and hasattr(value, "shape") and not isinstance(value, type):
        # (a class has them too, as descriptors: dtype=np.float64 carries no gradient)
        if isinstance(value, np.generic):
            return np.dtype(float_dtype(value.dtype)).type(0)
        if type(value) is not np.ndarray:  # a CuPy array or a traced value: its own zeros
            module = array_module(value)
            try:
                dtype = float_dtype(value.dtype)
            except TypeError:  # an array-API library's dtype, which NumPy does not read
                space = value.__array_namespace__()
                dtype = value.dtype if space.isdtype(
                    value.dtype, ("real floating", "complex floating")) else space.float64
            return module.zeros_like(value, dtype=dtype)
        return np.zeros(value.shape, dtype=float_dtype(value.dtype))
    if is_dataclass_instance(value) and not holds_state(value):
        return map_fields(zeros_like, value)  # a dataclass gets a dataclass of gradients
    # None, strings, functions and other objects carry no gradient.
    return None
