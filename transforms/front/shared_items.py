"""The run-time check before `L[k] op= v` where the source does not say which items of L share
memory (transforms/analysis/alias_keys.py check_other_items): an index that is no constant, a
list made by `append` or a comprehension, a container a function returned.

NumPy's `L[k] += v` runs the item's own `+=`: an array item changes in place, and so does every
other item of L that shares its memory (`L = [A, A[1:]]`), or a list item that is the same list
(`L = [M, M]`). The derivative gives L[k] alone a new value, so where another item of L that
the function reads afterwards shares the item's memory, the write is refused at the user's line.

Decisions:
- Another item counts where it is, or holds (in a list, tuple or dict, or as an attribute of an
  object of the user's class), an array sharing an element with the item. Two NumPy arrays share
  one where np.shares_memory says so; two traced values where they view one root array and
  their view links, read on that root's element positions, pick a common one (for a link a
  traced condition chose, one of the views it chose between; a read that gives no positions
  counts as sharing). Traced arguments the caller passed sharing memory may share every
  element.
- Only the items at the keys the function reads afterwards count, where it reads L by constant
  keys alone (`read`).
- An array no other object refers to (its reference count) has no view and no other name: the
  check ends there without looking at the other items, so a loop writing into each item of a
  long list of new arrays stays linear.
"""
from __future__ import annotations

import itertools
import operator
import sys

import numpy as np

from ...runtime.derivatives.snapshots import array_root, is_mutable_array, note_memory_read
from ...runtime.primitives.memory import (ONLY_THE_CONTAINERS, held_overlaps, held_values,
                                           memory_owner)
from ..errors import TransformError
from ..rules.core import constant



def refuse_shared_items(container, key, message: str, filename: str, line: int,
                        read=None) -> None:
    """Raise TransformError where `container[key] op= v` is about to change an item of list or
    dict `container` in place (an array, or a list, which `+=` extends), and another item of it
    shares that item's memory (see the module's docstring). `read`: the constant keys at which
    the function reads `container` afterwards, or None where it reads it otherwise too."""
    if not isinstance(container, (list, dict)):
        return
    item = container[key]
    is_list = isinstance(item, list)
    if not (is_list or _may_be_array(item)):
        return
    note_memory_read(item)
    if type(item) is np.ndarray and item.base is None and \
            sys.getrefcount(item) <= ONLY_THE_CONTAINERS:
        return
    if isinstance(container, list):
        count = len(container)
        slot = operator.index(key) % count
        positions = range(count) if read is None else sorted(
            {operator.index(k) % count for k in read if -count <= operator.index(k) < count})
        others = [container[position] for position in positions if position != slot]
    else:
        keys = container.keys() if read is None else [k for k in read if k in container]
        others = [container[k] for k in keys if not (k is key or k == key)]
    if _any_shares(item, others, is_list):
        raise TransformError(message, filename, line, "write into shared memory")


def _any_shares(item, others: list, is_list: bool) -> bool:
    """Whether one of `others`, or what one holds, is the list `item` (`is_list`) or shares an
    element with the array `item`. NumPy arrays among `others` first, by a loop that does little
    for each: a NumPy view's base is the array that owns its memory."""
    if is_list:
        return any(leaf is item for leaf in held_values(others))
    root, nested = _root(item), others
    if type(item) is np.ndarray:
        nested, owner = [], memory_owner(item)
        for other in others:
            if type(other) is not np.ndarray:
                nested.append(other)
            elif (other is owner or other.base is owner or memory_owner(other) is owner) \
                    and np.may_share_memory(item, other) and _shares_an_element(item, root, other):
                return True
    return any(_shares_an_element(item, root, leaf) for leaf in held_values(nested))


def refuse_shared_argument(value, others: dict, name: str, write: str, filename: str,
                           line: int, list_alone: bool = False) -> None:
    """Raise TransformError where an array or list of argument `name`, which the function
    changes in place (`write`, at `line`), is, or shares memory with, one of the function's
    other arguments `others` (name -> value): NumPy's write would change that one too, where
    the derivative gives `name` alone a new value (or writes into a copy of it).
    `list_alone`: the function changes only the list `name` (by list methods), not the arrays
    it holds, which other arguments may then be (a loop's list of the states it carries)."""
    mine = list(held_values([value]))
    containers = {id(leaf) for leaf in mine if isinstance(leaf, (list, dict))}
    arrays = [(leaf, _root(leaf)) for leaf in mine if _may_be_array(leaf)]
    for leaf, _ in arrays:
        note_memory_read(leaf)
    arrays = [] if list_alone else arrays
    for other, held in others.items():
        for leaf in held_values([held]):
            if id(leaf) in containers or _may_be_array(leaf) and any(
                    _shares_an_element(array, root, leaf) for array, root in arrays):
                raise TransformError(
                    f"the function changes argument {name!r} in place ({write}), and argument "
                    f"{other!r} shares its memory: autotrace gives {name} alone the new value, "
                    f"so that the caller's arrays never change, and {other} would not see the "
                    f"change NumPy makes. Pass {name} a copy of its own ({name}.copy()), or "
                    f"the shared value once", filename, line, "write into shared memory")


def _shares_an_element(item, root, other) -> bool:
    """Whether `other` shares an element with the array `item`, whose root is `root`."""
    if other is item:
        return True
    if not _may_be_array(other):
        return False
    if isinstance(item, np.ndarray) and isinstance(other, np.ndarray):
        if memory_owner(item) is not memory_owner(other):
            return False
        try:
            return bool(np.shares_memory(item, other, max_work=10_000))
        except np.exceptions.TooHardError:
            return True
    if isinstance(other, np.ndarray) and (held_overlaps(other) or frozenset()) & (
            _overlaps(root) or frozenset()):
        return True  # an array an object argument holds, which the caller passed sharing
    if _root(other) is not root:
        return _may_overlap(root, _root(other))
    return _traced_overlap(item, root, other)


def shares_written_part(item, array, index) -> bool:
    """Whether the array `item` shares an element with the part of `array` that `array[index]
    = v` writes: the view `array[index]`, an integer index read as a slice one wide (so that
    `A[i, j]` gives a view, not a number); all of `array` where the part is no view (an
    advanced index) or cannot be made. A traced `item`'s trace asks which arrays share
    memory (note_memory_read)."""
    note_memory_read(item)
    part = array
    try:
        part = array[_one_wide(index)]
    except (TypeError, ValueError, IndexError):
        pass
    if part is not array and 0 in tuple(getattr(part, "shape", ())):
        return False  # an empty part (`A[1:1] = v`): nothing is written
    if part is not array and not _views(part, array):
        part = array  # a copy: the write's part is not known from it
    return _shares_an_element(item, _root(item), part)


def _one_wide(index):
    """`index` with each integer (Python's or NumPy's) made a slice one wide: `i` ->
    `slice(i, i + 1)`, the same elements as a view."""
    parts = index if isinstance(index, tuple) else (index,)
    wide = tuple(slice(part, int(part) + 1 or None) if isinstance(part, (int, np.integer))
                 and not isinstance(part, bool) else part for part in parts)
    return wide if isinstance(index, tuple) else wide[0]


def _views(part, array) -> bool:
    """Whether `part`, just read from `array` by an index, is a view of it: a NumPy array
    sharing its memory, or a traced value with a view link."""
    if isinstance(part, np.ndarray) and isinstance(array, np.ndarray):
        return bool(np.may_share_memory(part, array))
    return getattr(part, "_link", None) is not None


def may_share(first, second) -> bool:
    """Whether two traced values may share memory: views of one array (even of parts that do
    not meet), or of arguments the caller passed sharing memory."""
    first, second = _root(first), _root(second)
    return first is second or _may_overlap(first, second)


def _may_overlap(first, second) -> bool:
    """Whether two traced roots stand for arrays the caller passed sharing memory (a common
    overlaps token of their memories, runtime/tracing/views.py Memory)."""
    first, second = _overlaps(first), _overlaps(second)
    return bool(first and second and first & second)


def _overlaps(root):
    """The overlaps tokens of a traced root's memory."""
    memory = getattr(root, "_memory", None)
    return memory.overlaps if memory is not None else None


def _root(value):
    """The array whose memory `value` views: following a traced value's view links (and from a
    subgraph's input to the view from outside it stands for), or a NumPy (or CuPy) array's
    bases."""
    if isinstance(value, np.ndarray):
        return array_root(value)
    while True:
        base = _base(value)
        if base is None or not hasattr(base, "shape"):
            return value
        value = base


def _base(value):
    """What `value` is a view of: a traced value's base, or for a subgraph's input the value
    from outside it stands for (runtime/tracing/views.py Memory.outer); an array's base."""
    link = getattr(value, "_link", None)
    if link is not None:
        return link.base
    if hasattr(value, "_builder"):
        return value._memory.outer if value._memory is not None else None
    return getattr(value, "base", None)


def _traced_overlap(first, root, second) -> bool:
    """Whether two traced views of `root` pick a common element of it (see the module's
    docstring); yes where that cannot be told."""
    if not hasattr(root, "shape"):
        return True
    every = np.arange(int(np.prod(root.shape, dtype=np.int64))).reshape(root.shape)
    picked = [_picked(first, every), _picked(second, every)]
    if any(p is None for p in picked):
        return True
    first_positions, second_positions = (np.concatenate([np.ravel(positions) for positions in p])
                                         if p else np.zeros(0, np.int64) for p in picked)
    return bool(np.intersect1d(first_positions, second_positions).size)


def _picked(tracer, every):
    """The positions in its root (whose elements' positions are `every`) of the elements the
    traced view `tracer` may be, one array of its shape for each view it may be: each view
    link read on the positions, and for a link a traced condition chose, those of each view
    it chose between; None where a read does not give positions (one that depends on traced
    values)."""
    base = _base(tracer)
    if base is None:
        return [every]
    link = tracer._link
    if link is None:  # a subgraph's input: the positions of the view it stands for
        return _picked(base, every)
    outers = _picked(link.base, every)
    if outers is None:
        return None
    paths = [(link,)] if link.choice is None else [
        alias[1] for _, alias in link.choice if isinstance(alias, tuple)]  # (else made new)
    found = []
    for outer, chain in itertools.product(outers, paths):
        positions = outer
        for step in chain:
            if step is not link and step.choice is not None:
                return None
            try:
                positions = step.read(positions)
            except (TypeError, ValueError, IndexError):
                return None
            if not isinstance(positions, np.ndarray):
                return None
        found.append(positions)
    return found


def _may_be_array(value) -> bool:
    """is_mutable_array, or a 0-d traced value not known for a NumPy number (a 0-d argument,
    which the caller may have passed twice): the checks here refuse where it may share."""
    return is_mutable_array(value) or getattr(value, "_may_be_array", lambda: False)()


# They check values and give nothing: constants to the gradient.
constant(refuse_shared_items, refuse_shared_argument)
