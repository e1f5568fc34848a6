"""The elements of datasets, nests of tuples and dicts of NumPy values: walking them, stacking
them into batches, and the checks of the arguments Dataset's methods share (see
autotrace/data/dataset.py).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from autotrace.runtime.pytrees import sorted_keys


# --- structure of elements ------------------------------------------------------------------------

def _leaves(structure, path: str = "x") -> list[tuple[str, object]]:
    """(path, leaf) for each leaf of a nest of tuples and dicts, in order: a dict's in sorted
    key order, as tf.data's and autotrace's pytrees walk them, so that dicts of the same keys
    in another insertion order have the same leaves."""
    if isinstance(structure, tuple):
        return [pair for index, item in enumerate(structure)
                for pair in _leaves(item, f"{path}[{index}]")]
    if isinstance(structure, dict):
        return [pair for key in sorted_keys(structure)
                for pair in _leaves(structure[key], f"{path}[{key!r}]")]
    return [(path, structure)]


def _frozen_copy(value) -> np.ndarray:
    array = np.array(value, copy=True)
    array.flags.writeable = False
    return array


def _unequal_items(value, path: str) -> str | None:
    """Where a list (or nested lists) that NumPy cannot make one array of holds items of
    different shapes, the first two such (`tensors[0] has shape (3,), tensors[1] has shape
    (2,)`); None if nowhere. Looked for only once np.array has failed: a walk through every
    number of a long list costs."""
    if not isinstance(value, (list, tuple)) or not value:
        return None
    for index, item in enumerate(value):
        inner = _unequal_items(item, f"{path}[{index}]")
        if inner is not None:
            return inner
    shapes = [np.shape(item) for item in value]
    for index, shape in enumerate(shapes):
        if shape != shapes[0]:
            return f"{path}[0] has shape {shapes[0]}, {path}[{index}] has shape {shape}"
    return None


def _read_only(element):
    """`element` with each writeable array replaced by a read-only view of it, no copy made:
    for the elements a dataset keeps and serves again (cache, window), so that a write in
    place into one (`batch *= 10` in an epoch) cannot change what a later iteration or an
    overlapping window sees; the write raises instead, as into from_tensor_slices' slices."""
    return _map_structure(_read_only_leaf, element)


def _read_only_leaf(leaf):
    if isinstance(leaf, np.ndarray) and leaf.flags.writeable:
        leaf = leaf.view()
        leaf.flags.writeable = False
    return leaf


def _map_structure(function: Callable, *structures):
    """`function` of the leaves at the same place in each structure, in the structure of the
    first. It is called on the leaves in `_leaves`' order (a dict's in sorted key order); a
    dict keeps the first's key order, as tf.data packs elements in their structure's."""
    first = structures[0]
    if isinstance(first, tuple):
        items = [_map_structure(function, *parts) for parts in zip(*structures)]
        return type(first)(*items) if hasattr(first, "_fields") else tuple(items)
    if isinstance(first, dict):
        mapped = {key: _map_structure(function, *(s[key] for s in structures))
                  for key in sorted_keys(first)}
        return {key: mapped[key] for key in first}
    return function(*structures)


def _to_numpy(value):
    """A leaf as a NumPy value: arrays and NumPy scalars as they are, a 0-d result as a NumPy
    scalar, anything else (numbers, lists, Variables) through np.asarray."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value
    array = np.asarray(value)
    return array[()] if array.ndim == 0 else array


def _apply(method: str, function: Callable, element):
    """function(element), a tuple element as separate arguments. A StopIteration it raises
    would end the iteration around it without a word (builtins.map, a `for` loop over a
    pipeline), so it is raised as a RuntimeError naming the function, as a generator's is."""
    try:
        return function(*element) if isinstance(element, tuple) else function(element)
    except StopIteration as stop:
        raise RuntimeError(f"Dataset.{method}: {_name(function)} raised StopIteration, which "
                           f"would end the dataset early without a word; raise another "
                           f"error, or end the dataset with take or filter") from stop


def _stack(group: list):
    """Elements of the same structure stacked leaf by leaf."""
    first_leaves = _leaves(group[0], "")
    for position, element in enumerate(group[1:], start=1):
        leaves = _leaves(element, "")
        if [path for path, _ in leaves] != [path for path, _ in first_leaves]:
            raise ValueError(f"Dataset.batch: elements must have the same structure; element "
                             f"0 of the batch is {group[0]!r}, element {position} is "
                             f"{element!r}")
        for (path, leaf), (_, first_leaf) in zip(leaves, first_leaves):
            if np.shape(leaf) != np.shape(first_leaf):
                where = f" (at element{path})" if path else ""
                raise ValueError(f"Dataset.batch: elements must have the same shape to stack; "
                                 f"element 0 of the batch has shape {np.shape(first_leaf)}, "
                                 f"element {position} has shape {np.shape(leaf)}{where}")
    return _map_structure(lambda *leaves: np.stack(leaves), *group)


def _name(function) -> str:
    return getattr(function, "__name__", type(function).__name__)


def _check_callable(method: str, argument: str, value) -> None:
    if not callable(value):
        raise TypeError(f"Dataset.{method}: {argument} must be callable; got "
                        f"{type(value).__name__}")


def _check_positive(method: str, argument: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"Dataset.{method}: {argument} must be a positive int; got {value!r}")


def _check_count(method: str, count) -> None:
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < -1:
        raise ValueError(f"Dataset.{method}: count must be an int >= -1 (-1 for all); got "
                         f"{count!r}")
