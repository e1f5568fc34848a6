"""Items a call replaced, moved or removed in a traced `if` or loop body, after writing into them.

`restore_item(x, ..., saved)` (items.py) undoes a call that may write into what it is given:
into the items it left in their place it writes the saved values back (`note_kept`), and the
others it puts back as the objects they were, writing the saved values into those. In a traced
`if` or loop body such an object, written into (`lst[0][0] = 0.0; lst[0] = lst[0] * 0.5`), is a
value of the body's own: the names the adjoint sweep reads for it after the statement (`b =
items[0]` read before the call) are other values, which the restore does not reach.
`moved_traced_item` finds such an item, for transforms/front/inplace.py's refusal.
"""
from __future__ import annotations

from .items import _UNCHANGED, _Held, _mapping
from ..scopes import active_subgraphs


def moved_traced_item(saved, container) -> bool:
    """Whether, in a traced `if` or loop body, the call after which it is asked took out of
    `container` (or of an item it left in its place) an item of a list, dict or object that
    `saved` (what `read_item(container, ...)` saved before the call) found there, and changed
    it in place: a traced array written into, or a container so changed that holds one."""
    if not active_subgraphs() or not isinstance(saved, _Held):
        return False
    items, held = saved
    versions = getattr(saved, "versions", None) or [object()] * len(held)
    if items is None:  # a tuple's, whose items stay
        return any(moved_traced_item(item_held, item) for item, item_held in zip(
            container if isinstance(container, tuple) else (), held))
    mapping = _mapping(container)
    if isinstance(items, list) and isinstance(container, list):
        keys, now, present = range(len(items)), container, range(len(container))
    elif isinstance(items, dict) and mapping is not None:
        keys, now, present = list(items), mapping, mapping
    else:
        return _holds_traced(saved)
    for key, item_held, version in zip(keys, held, versions):
        if key in present and now[key] is items[key]:
            if moved_traced_item(item_held, now[key]):
                return True
        elif _changed(items[key], version, item_held):
            return True
    return False


def _changed(value, version, held) -> bool:
    """Whether `value`, whose traced value was `version` and of which `_held` saved `held`,
    was changed since: written into, or, a container holding a traced array, given other
    items or items changed so."""
    if getattr(value, "_builder", None) is not None:
        return getattr(value, "_var", None) is not version
    if not isinstance(held, _Held) or not _holds_traced(held):
        return False
    items, inner = held
    versions = getattr(held, "versions", None)
    values = list(value.values() if isinstance(value, dict) else vars(value).values()
                  if hasattr(value, "__dict__") else value)
    saved = list(items.values() if isinstance(items, dict) else value if items is None
                 else items)
    if versions is None or len(values) != len(saved) or any(
            now is not then for now, then in zip(values, saved)):
        return True
    return any(_changed(item, item_version, item_held)
               for item, item_version, item_held in zip(values, versions, inner))


def _holds_traced(held) -> bool:
    """Whether what `_held` saved of a value is, or holds, a traced array's copy."""
    if isinstance(held, _Held):
        return any(_holds_traced(item) for item in held[1])
    return held is not _UNCHANGED and getattr(held, "_builder", None) is not None
