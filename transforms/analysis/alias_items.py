"""Items of arrays, for transforms/analysis/aliases.py's analysis: `A[2]` is a NumPy number
where A has one dimension and a view of A where it has more, so what a write into A does to it
is known when the code runs, not from the source.

A name bound to one (`s = A[2]`) and read after a write into A is checked when it runs. So is an
item of a tuple display unpacked into targets that write (`A[0], A[1] = A[1], A[0]`): Python
makes the right side's tuple first, then assigns its items to the targets from left to right.
An item that is a view is no copy: where an earlier target writes into its array, a later
target gets what the write left there (NumPy's `A[0], A[1] = A[1], A[0]` makes both rows of a
matrix the old `A[1]`, where `a[0], a[1] = a[1], a[0]` swaps two numbers). autotrace takes each
item's value where the right side is made; an item that may view memory an earlier target
wrote is refused (a slice, `A[:, 0]`, surely a view), or checked when it runs. These are
methods of aliases.Sharing, mixed in from here to keep each module to one idea.
"""
from __future__ import annotations

from typing import NamedTuple

import gast

from .alias_calls import _text
from .argument_writes import base_name
from ..codegen.naming import walk_scope
from ..codegen.nodes import walk
from ..codegen.templates import index_value
from ..front.parsing import resolve


class UnpackedItem(NamedTuple):
    """The run-time check (transforms/front/inplace.py's refuse_shared_item) of an item of the
    right side of `A[0], A[1] = A[1], A[0]`: `item`, its source (`A[0]`), evaluated before the
    assignment; `container`, the source of what it indexes (`A`), of which an item is no view
    where it is a list, tuple or dict."""
    item: str
    container: str


class WrittenItem(NamedTuple):
    """The run-time check (transforms/front/inplace.py's refuse_shared_item) of `item`, a name
    bound to an item of an array (`pivot = A[k]`), read after the write `array[index] = v`
    into that array's memory: `array` and `index` are the sources of what the write indexes
    (`A`, `i`), evaluated before it; the check refuses only where the part written meets the
    item (i == k)."""
    item: str
    array: str
    index: str


class ArrayItems:
    """Mixed into aliases.Sharing: items of arrays (see the module docstring)."""

    def checked_when_run(self, other, memory, bound, target, statement):
        """What checks, when the write into `target` (by `statement`) runs, `other`, read after
        it and bound to `memory` by `bound`; None where the write is refused now. `s = A[2]`
        (an item of A by integers, A that memory or a view of it) is a NumPy number where A
        has one dimension, which the write leaves as it was, and a view where it has more:
        refused where it is a view (`other` alone), or, where the write is into a part of an
        array (`A[i] = v`), where it meets that part (a WrittenItem). A view by slices too
        (`row = A[k, :]`) is checked where the write is into a part."""
        if not (isinstance(bound, gast.Assign) and len(bound.targets) == 1
                and isinstance(bound.targets[0], gast.Name) and bound.targets[0].id == other):
            return None
        item = self.indexes_an_item(bound.value, memory)
        if not (item or self.indexes_an_item(bound.value, memory, views=True)):
            return None
        part = None
        if isinstance(target, gast.Subscript) and hoistable(statement, target):
            # (the check evaluates the target's array and index once more, before the write:
            # the calls of the index and of the value are made once, before it, by
            # inplace.follow_writes, which then names the index it computed)
            part = WrittenItem(other, _text(target.value), _text(index_value(target.slice)))
        return part or (other if item else None)

    def indexes_an_item(self, node, memory, views=False) -> bool:
        """Whether expression `node` is `A[i]` with integers for the index (no slice, `...`
        or None; with `views`, those too: basic indexing, which gives a view), A `memory` or
        a view of it, not a container holding it."""
        if not isinstance(node, gast.Subscript):
            return False
        index = node.slice
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        views_only = (gast.Tuple, gast.List, gast.Starred) if views else (
            gast.Slice, gast.Tuple, gast.List, gast.Starred)
        if any(isinstance(part, views_only) or (
                isinstance(part, gast.Constant) and not isinstance(part.value, int) and not (
                views and part.value in (None, Ellipsis))) for part in parts):
            return False  # `A[1:]`, `A[...]`, `A[None]`: views; `A[[0, 1]]`: a copy
        return memory[1] not in self.base_held.get(id(node), {memory[1]})

    def item_depth(self, name: str, parameter: str) -> int:
        """How many integer indices `name` takes of the argument of `parameter`, where `name`
        op= v may write into that argument: k where every binding of `name` is `name =
        parameter[i, ...]` with k indices, each an integer written in the source or a name
        that a `for` over `range(...)` alone binds (or a new value: a number, arithmetic), or
        `for name in parameter:` (one index), and the parameter is never bound anew. Such an
        item is a NumPy number, which `op=` binds anew, where the argument has k dimensions or
        fewer; a view of it where it has more. 0 where not known: in place wherever the
        argument is an array."""
        depths = set()
        bindings = 0
        for node in (n for statement in self.body for n in walk_scope(statement)):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and (
                    node.id in (name, parameter)):
                bindings += 1
            elif isinstance(node, (gast.Global, gast.Nonlocal)) and name in node.names:
                return 0
            elif isinstance(node, gast.AugAssign) and isinstance(
                    node.target, gast.Name) and node.target.id == name:
                bindings -= 1  # (the write itself: the name holds what it held)
            elif isinstance(node, gast.For) and isinstance(
                    node.target, gast.Name) and node.target.id == name:
                bindings -= 1  # `for name in parameter:`, an item by one index
                if not (isinstance(node.iter, gast.Name) and node.iter.id == parameter):
                    return 0
                depths.add(1)
            elif isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(
                    node.targets[0], gast.Name) and node.targets[0].id == name:
                bindings -= 1
                if isinstance(node.value, _NEW_VALUES):
                    continue
                depth = self._integer_indices(node.value, parameter)
                if depth is None:
                    return 0
                depths.add(depth)
        if bindings or len(depths) != 1:
            return 0
        return depths.pop()

    def _integer_indices(self, node, parameter: str):
        """k for `parameter[i, ...]` with k integer indices (see item_depth); else None."""
        if not (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
                and node.value.id == parameter):
            return None
        index = node.slice
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        if all(_is_integer(part) or isinstance(part, gast.Name) and self._counter(part.id)
               for part in parts):
            return len(parts)
        return None

    def _counter(self, name: str) -> bool:
        """Whether every binding of `name` is the target of a `for` over `range(...)`."""
        bindings = loops = 0
        for node in (n for statement in self.body for n in walk_scope(statement)):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and \
                    node.id == name:
                bindings += 1
            elif isinstance(node, (gast.Global, gast.Nonlocal)) and name in node.names:
                return False
            elif isinstance(node, gast.For) and isinstance(node.target, gast.Name) and \
                    node.target.id == name and isinstance(node.iter, gast.Call) and \
                    resolve(node.iter.func, self.namespace) is range:
                loops += 1
        return bindings == loops > 0

    def bind_display(self, target, display, statement, values) -> None:
        """`a, b = x, y` (a tuple or list display, as many items as targets, none starred):
        each target bound to its item's memories (`values`); an item that may be or view
        memory an earlier target wrote into is refused, or checked when it runs (see the
        module docstring)."""
        written, stale = [], []  # (a target, the memories it wrote into); (target, item, ...)
        for element, item, memories in zip(target.elts, display.elts, values):
            reached = self.reach(memories)
            for earlier, into in written:
                shared = reached & into
                if shared:
                    checked = shared <= set(memories) and all(
                        self.indexes_an_item(item, memory) for memory in shared)
                    stale.append((element, item, earlier, checked))
                    break
            if isinstance(element, gast.Subscript):
                written.append((element, self.subscript_written(element)))
            self.bind(element, memories, statement)
        if stale:
            self.refuse_stale_items(statement, target, stale)

    def refuse_stale_items(self, statement, target, stale) -> None:
        """Refuse `statement` (unpacked into `target`) for the items of its right side that an
        earlier target may have written into (`stale`: (the target of the item, the item, that
        earlier target, whether the item is `A[i]` of integers, then checked when it runs))."""
        element, item, earlier, _ = stale[0]
        owner = _text(base_name(earlier) or earlier)
        copied = [f"{_text(e)}.copy()" if any(e is s[1] for s in stale) else _text(e)
                  for e in statement.value.elts]
        swap = _as_one_assignment(target, statement.value)
        message = (
            f"{_text(earlier)} = ... writes into {owner!r} before {_text(element)} = "
            f"{_text(item)} is assigned, and the right side's {_text(item)} is a view of "
            f"{owner!r} where that is an array, not a copy: NumPy assigns what the write left "
            f"there, which autotrace does not follow. "
            + (f"To swap, write {swap}, or copy" if swap else "Copy")
            + f" the item: {', '.join(_text(e) for e in target.elts)} = {', '.join(copied)}")
        if not all(stale_item[-1] for stale_item in stale) or any(
                isinstance(n, gast.Call) for s in stale for n in walk(s[1])):
            raise self.location.error(statement, message, "write into shared memory")
        for _, item, _, _ in stale:
            self.guards.setdefault(id(statement), []).append(
                (statement, message, UnpackedItem(_text(item), _text(item.value))))


def hoistable(statement, target) -> bool:
    """Whether `statement`, writing into `target` (`A[i] = v`, `A[i] op= v`), can be checked
    when it runs for what its write meets: no name is bound inside it (`:=`), its array (`A`)
    calls nothing, and any call in its index, or in the value of a single assignment, can be
    made once before the check (inplace.follow_writes hoists them, in Python's order)."""
    if any(isinstance(n, gast.NamedExpr) for n in walk(statement)) or any(
            isinstance(n, gast.Call) for n in walk(target.value)):
        return False
    if isinstance(statement, gast.Assign):
        return len(statement.targets) == 1 and statement.targets[0] is target
    return isinstance(statement, gast.AugAssign) and statement.target is target


# Values that are new, never the memory of an argument (a number, a new array of arithmetic)
_NEW_VALUES = (gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare)


def _is_integer(node) -> bool:
    """Whether `node` is an integer written in the source (`0`, `-1`; not `True`)."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) is int


def _as_one_assignment(target, display) -> str | None:
    """`A[[0, 1]] = A[[1, 0]]` for `A[0], A[1] = A[1], A[0]`, where every target and item
    indexes one array by one index that is not a slice (a list index copies); else None."""
    pairs = list(zip(target.elts, display.elts))
    if not all(isinstance(side, gast.Subscript) and not isinstance(
            side.slice, (gast.Slice, gast.Tuple)) for pair in pairs for side in pair):
        return None
    bases = {_text(side.value) for pair in pairs for side in pair}
    if len(bases) != 1:
        return None
    base = bases.pop()
    written = ", ".join(_text(target.slice) for target, _ in pairs)
    read = ", ".join(_text(item.slice) for _, item in pairs)
    return f"{base}[[{written}]] = {base}[[{read}]]"
