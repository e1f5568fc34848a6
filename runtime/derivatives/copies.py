"""copy.copy and copy.deepcopy of the values a derivative holds, as functions with rules.

`copy.copy(x)` of an array runs `ndarray.__copy__`, a new array; of a list or a dict, a new
container holding the same items. Python's copy module finds that through methods a traced
value does not have, and its source, which a derivative would read, writes into a memo and
calls methods found only when it runs: so a call of either is differentiated as a call of one
of these (transforms/front/python_versions.py), whose derivative is the identity
(transforms/rules/containers.py). And a loop's iterable copied as a list where the loop
starts (`sequence`).
"""
from __future__ import annotations

import copy

import numpy as np

from ..primitives.registry import is_traced


def copied(value):
    """copy.copy(value): an array's copy, as ndarray.__copy__ makes it (a traced array's too);
    a list or a dict with its items shared; anything else as copy.copy makes it."""
    if isinstance(value, (list, dict, np.ndarray, np.generic)) or is_traced(value):
        return value.copy()
    return copy.copy(value)


def deep_copied(value, memo=None):
    """copy.deepcopy(value): as `copied`, the items of a list, tuple or dict copied in their
    turn, an item held twice copied once (`memo`, as copy.deepcopy keeps it)."""
    memo = {} if memo is None else memo
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, (np.ndarray, np.generic)) or is_traced(value):
        made = value.copy()
    elif type(value) in (list, tuple):
        made = type(value)(deep_copied(item, memo) for item in value)
    elif type(value) is dict:
        made = {key: deep_copied(item, memo) for key, item in value.items()}
    else:
        return copy.deepcopy(value, memo)
    memo[id(value)] = made
    return made


def sequence(iterable):
    """Something indexable that iterates like `iterable` (arrays, tuples as they are; a list
    copied, as it is when the loop starts: the function may append to it later, and the
    adjoint sweep reads what the loop read). An iterator whose items are iterators (groupby's
    groups) is refused: listing it first uses them up."""
    if isinstance(iterable, (tuple, range)) or hasattr(iterable, "shape"):
        return iterable
    listed = list(iterable)
    if iter(iterable) is iterable and any(_iterator(item) or isinstance(item, tuple) and any(
            _iterator(part) for part in item) for item in listed):
        raise TypeError(
            "autotrace reads a loop's iterable whole, before the loop, and the items of this "
            "iterator are iterators, used up by then (as groupby's groups are): list each item "
            "where it is made, or loop over the items themselves")
    return listed


def _iterator(value) -> bool:
    return hasattr(value, "__next__") and iter(value) is value
