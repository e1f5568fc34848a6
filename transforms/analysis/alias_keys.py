"""The items of lists, tuples and dicts by key, for transforms/analysis/aliases.py's analysis:
`d = {"w": A, "b": x[::-1]}` then `d["w"][0] = 1.0` writes into A, which x does not share.

A display with constant keys (`[A, B]`, `(A, B)`, `{"w": A}`) notes what each of its items may
be; `d["w"]` and `L[-1]` are then those memories alone, not every item. The notes are one
set for the whole function, as the analysis's holds are: a constant-key store (`d["w"] = C`,
through any name of that memory, on any path) adds to its key's memories; anything else that
may change which item a key gives forgets the container's notes: a store with another index,
`+=`, a method of a list or dict, `del`, and any call that is not NumPy's (a function or
method may change a container it reaches in ways the source here does not show). These are
methods of aliases.Sharing, mixed in from here to keep each module to one idea.
"""
from __future__ import annotations

from typing import NamedTuple

import gast

NO_KEY = object()
_KEY_TYPES = (str, bytes, int, float, complex, bool, type(None))


def key_of(index):
    """The constant key of a subscript's index (`"w"`, `2`, `-1`), or NO_KEY."""
    if isinstance(index, gast.Constant) and isinstance(index.value, _KEY_TYPES):
        return index.value
    if isinstance(index, gast.UnaryOp) and isinstance(index.op, gast.USub) and isinstance(
            index.operand, gast.Constant) and type(index.operand.value) is int:
        return -index.operand.value
    return NO_KEY


def has_key(key) -> bool:
    return key is not NO_KEY


class KeyedItems:
    """Mixed into aliases.Sharing: the items of containers by key (see the module docstring).
    `self.keyed`: container memory -> (its length, for a list or tuple, else None; {key: the
    memories its item may be})."""

    def note_display(self, node, memory, values) -> None:
        """Note the items of the display `node`, made as `memory`, by key; `values` are the
        memories each of its elements may be."""
        if isinstance(node, gast.Dict):
            keys = [key_of(k) if k is not None else NO_KEY for k in node.keys]  # (None: **d)
            length = None
        else:
            keys = list(range(len(node.elts)))
            keys = [NO_KEY if isinstance(e, gast.Starred) else k for e, k in zip(node.elts, keys)]
            length = len(node.elts)
        if any(key is NO_KEY for key in keys):
            return
        items = {}
        for key, memories in zip(keys, values):
            items.setdefault(key, set()).update(memories)
        self.keyed[memory] = (length, items)

    def item_at(self, memories, key, unnoted=None) -> set:
        """The memories item `key` (a constant) of a value in `memories` may be or view: of a
        container with notes, those of its key alone (not what they hold, which an item is
        not: `L = [A + B]` then `L[0][1] = v` writes into the sum, not into what A holds); of
        another, `unnoted` of it (by default `item`)."""
        found = set()
        for memory in memories:
            entry = self.keyed.get(memory)
            slot = None if entry is None else _slot(entry, key)
            found |= (unnoted or self.item)({memory}) if slot is None else set(entry[1][slot])
        return found

    def items_by_position(self, memories, targets) -> list | None:
        """What each of `targets` (`a, b = pair`, none starred) is, where every container of
        `memories` is a list or tuple of as many items, each noted: the memories noted at its
        position, as `pair[0]` reads them; else None."""
        if not memories or any(isinstance(t, gast.Starred) for t in targets):
            return None
        placed = [set() for _ in targets]
        for memory in memories:
            entry = self.keyed.get(memory)
            if entry is None or entry[0] != len(targets) or set(entry[1]) != set(
                    range(len(targets))):
                return None
            for position, found in enumerate(placed):
                found.update(entry[1][position])
        return placed

    def check_other_items(self, node, owners, key, written, sure: bool, what: str) -> None:
        """`L[k] op= v` changes the item L[k] in place, and autotrace gives L[k] alone a new
        value: refuse it where L is read afterwards and another item of L may share its memory
        (`L = [A, A[1:]]`). Where the items are `sure`ly arrays or numbers of a surely
        container with notes for constant key k, the notes decide: refused where another
        noted item may share it, unless the function reads L by constant keys alone and never
        that item's (`_keys_read`). Anywhere else (an index that is no constant, a list made
        by `append`), the check runs with the values (refuse_shared_items)."""
        container = node.target.value
        if not (owners and isinstance(container, gast.Name)
                and container.id in self.live_after.get(id(self.statement), ())):
            return
        entries = [self.keyed.get(memory) for memory in owners]
        if not (sure and has_key(key) and all(
                entry is not None and _slot(entry, key) is not None for entry in entries)):
            if not isinstance(node.target.slice, gast.Slice):
                message = self.item_message(container.id, written, node, what,
                                            f"another item of {container.id}")
                read = _constant_keys_read(self.body, container.id, node)
                self.guards.setdefault(id(node), []).append(
                    (node, message, OtherItems(container.id, read)))
            return
        for entry in entries:
            slot = _slot(entry, key)
            others = [other for other, held in entry[1].items()
                      if other != slot and self.reach(held) & written]
            read = _keys_read(self.body, container.id, entry, node) if others else None
            others = [other for other in others if read is None or other in read]
            if others:
                message = self.item_message(container.id, written, node, what,
                                            f"{container.id}[{others[0]!r}]")
                raise self.location.error(node, message, "write into shared memory")

    def store_key(self, memory, key, value) -> bool:
        """`memory[key] = value`, the value's memories `value`: add them to the key's, and
        say whether the container's notes are kept (False: forgotten, where the index is no
        constant or the container has no notes)."""
        entry = self.keyed.get(memory)
        if entry is None:
            return False
        slot = _slot(entry, key) if has_key(key) else None
        if slot is None and (entry[0] is not None or not has_key(key)):
            del self.keyed[memory]  # another index, or one past a list's end
            return False
        entry[1].setdefault(key if slot is None else slot, set()).update(value)
        return True

    def forget_keys(self, memory=None) -> None:
        """Forget the notes of `memory`, and of every container noting it as an item (None:
        of every container)."""
        if memory is None:
            self.keyed.clear()
            return
        self.keyed.pop(memory, None)
        for container in [c for c, (_, items) in self.keyed.items()
                          if any(memory in self.reach(held) for held in items.values())]:
            del self.keyed[container]

    def keys_now(self) -> dict:
        return {memory: {key: frozenset(held) for key, held in items.items()}
                for memory, (_, items) in self.keyed.items()}


class OtherItems(NamedTuple):
    """The run-time check of `L[k] op= v` (transforms/front/shared_items.py): `container`, L's
    name; `read`, the constant keys the function reads L by, or None (_constant_keys_read)."""
    container: str
    read: tuple | None


def _constant_keys_read(body, name: str, write) -> tuple | None:
    """The constant keys by which `body` reads container `name` after the statement `write`
    (on a later line, in a loop around it, or in a nested function), each once; None where it
    reads the container any other way then (`len(L)`, `L[i]`)."""
    module = gast.Module(body, [])
    # (a nested function may run later, wherever it is defined)
    around = [node for node in gast.walk(module) if isinstance(node, (
        gast.FunctionDef, gast.Lambda)) or isinstance(node, (gast.For, gast.While)) and any(
        inner is write for inner in gast.walk(node))]
    spans = [(node.lineno, node.end_lineno) for node in around] + [
        (write.end_lineno + 1, float("inf"))]
    by_key = {id(node.value): key_of(node.slice) for node in gast.walk(module)
              if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
              and node.value.id == name}
    keys = []
    for node in gast.walk(module):
        if not (isinstance(node, gast.Name) and node.id == name and isinstance(
                node.ctx, gast.Load) and node is not write.target.value and any(
                start <= node.lineno <= end for start, end in spans)):
            continue
        key = by_key.get(id(node), NO_KEY)
        if not has_key(key):
            return None
        if key not in keys:
            keys.append(key)
    return tuple(keys)


def _keys_read(body, name: str, entry, write):
    """The keys (as `entry` notes them) of the items of container `name` that `body` reads by
    a constant key after `write` (see _constant_keys_read); None where it reads the container
    any other way."""
    keys = _constant_keys_read(body, name, write)
    slots = None if keys is None else [_slot(entry, key) for key in keys]
    return None if slots is None or None in slots else set(slots)


def _slot(entry, key):
    """The key under which `entry` notes item `key`, or None where it has none: of a list or
    tuple, a position counted from the start (`-1` is the last)."""
    length, items = entry
    if length is not None:
        if type(key) not in (int, bool):
            return None
        key = int(key) + (length if key < 0 else 0)
    try:
        return key if key in items else None
    except TypeError:  # (an unhashable key cannot be a constant's)
        return None
