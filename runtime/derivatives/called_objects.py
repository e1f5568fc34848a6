"""The gradient of the object whose method a call `owner.attribute(...)` runs.

A call `p.f(x)` whose callee is found only when it runs (transforms/dynamic_calls.py
`vjp_call`, `jvp_call`), with `p` carrying gradient, passes the derivative the gradient (or
tangent) of the object `f` runs a method of, and takes that object's gradient back:

- `f` a method of `p` (`self.forward(x)`): `p`'s own;
- `f` an object `p` holds whose class has `__call__` (a layer in a field: `self.layer(x)`):
  that of `p.f`, the entry of `p`'s gradient for the attribute;
- `f` a function held in the attribute: none (its call has no object);
- `f` a method of an object `p` holds (`self.act = self.layer.forward`): that of the
  attribute holding it.

These helpers find it in `p`'s gradient, and put it back there.
"""
from __future__ import annotations

import types

from .items import accumulate_attribute, attribute_gradient, attribute_tangent
from .objects import (ObjectGradient, field_names, is_dataclass_instance, is_plain_object,
                      replaced_at)
from .structure import is_namedtuple


def _method_of(held, owner) -> bool:
    """Whether `held`, read as `owner.<attribute>`, is a method of `owner` (of `super()`: a
    method of its object), one of Python's (a dict's `get`) too."""
    bound = getattr(held, "__self__", None)
    return bound is not None and (
        bound is owner or isinstance(owner, super) and bound is owner.__self__)


def _entry(owner, attribute: str):
    """The attribute of `owner` whose gradient is that of the object a call of
    `owner.<attribute>` runs a method of: None for a method of `owner` (its gradient is
    `owner`'s own); `attribute` for an object held there (or a function: it has none);
    for a method of another object held there (`self.act = self.layer.forward`), the
    attribute that holds that object (`layer`), refused where none does."""
    held = getattr(owner, attribute)
    if _method_of(held, owner):
        return None
    if not isinstance(held, types.MethodType) or not (
            is_plain_object(held.__self__) or is_dataclass_instance(held.__self__)):
        return attribute
    holding = [name for name, value in _attributes(owner) if value is held.__self__]
    if not holding:
        raise TypeError(
            f"autotrace cannot differentiate a call of {type(owner).__name__}.{attribute}, a "
            f"method of an object (a {type(held.__self__).__name__}) that no attribute of the "
            f"{type(owner).__name__} holds: the gradient of that object does not pass "
            f"through it; hold the object in an attribute and call its method through it")
    return holding[0]


def _attributes(owner) -> list:
    """(name, value) of the attributes of `owner`: a dataclass's fields, a namedtuple's, an
    object's own."""
    if is_namedtuple(owner):
        return list(owner._asdict().items())
    if is_dataclass_instance(owner):
        return [(name, getattr(owner, name)) for name in field_names(type(owner))]
    return list(getattr(owner, "__dict__", {}).items())


def callee_tangent(tangent, attribute: str, owner):
    """The tangent of the object a call of `owner.<attribute>` runs a method of, given
    `owner`'s tangent (see `_entry`). Where `owner`'s is an ObjectGradient with no entry for
    an object it holds, an empty one is put there: the method's writes into that object's
    state change it in place (runtime/derivatives/state_writes.py `state_tangent`), and so
    `owner`'s tangent with it."""
    entry = _entry(owner, attribute)
    if entry is None:
        return tangent
    found = attribute_tangent(tangent, entry, owner)
    if found is None and type(tangent) is ObjectGradient and \
            is_plain_object(getattr(owner, entry)):
        found = ObjectGradient()
        dict.__setitem__(tangent, entry, found)
    return found


def callee_gradient(gradient, attribute: str, owner):
    """The gradient, after a call of `owner.<attribute>`, of the object the call runs a
    method of, given `owner`'s then (see `_entry`): what the call is passed as its `after`
    (transforms/dynamic_calls.py `vjp_call`)."""
    entry = _entry(owner, attribute)
    return gradient if entry is None else attribute_tangent(gradient, entry, owner)


def with_callee_gradient(gradient, attribute: str, owner, called):
    """The gradient of `owner` before a call of `owner.<attribute>`, given `gradient`,
    `owner`'s after the call (None: none), and `called`, the gradient of the object the call
    ran a method of, before it, which includes what `callee_gradient` read of `gradient`:
    `called` where that object is `owner`, else `gradient` with its entry for the object
    replaced by `called`."""
    entry = _entry(owner, attribute)
    if entry is None:
        return called
    if gradient is None:
        return attribute_gradient(owner, entry, called)
    if is_namedtuple(gradient):
        rest = gradient._replace(**{entry: None})
    elif isinstance(gradient, dict) or is_dataclass_instance(gradient) and (
            entry in field_names(type(gradient))):
        rest = replaced_at(gradient, (entry,), None)
    else:
        rest = gradient
    return accumulate_attribute(rest, entry, called, owner)
