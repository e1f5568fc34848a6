"""Dataset methods that change how elements group, with tf.data's semantics: `padded_batch`,
`unbatch` and `window` (autotrace/data/dataset.py's Dataset has them).
"""
from __future__ import annotations

import collections
import itertools

import numpy as np

from autotrace.runtime.pytrees import sorted_keys

from .elements import _check_positive, _leaves, _map_structure, _read_only

_END = object()


class WindowMethods:
    """padded_batch, unbatch and window, for Dataset to inherit."""

    def padded_batch(self, batch_size: int, padded_shapes=None, padding_values=None,
                     drop_remainder: bool = False):
        """Batches of elements whose shapes may differ: each array is padded at the end of
        each axis, to the size `padded_shapes` gives, or to the largest in its batch.

        Arguments:
            batch_size: elements a batch (a positive int).
            padded_shapes: the shape to pad each component to, in the elements' structure (a
                tuple of ints, with None or -1 for "the largest in the batch"; an int n for a
                vector is (n,)); default: every axis to the largest in the batch. A
                component longer than its size is an error.
            padding_values: what to pad with, in the elements' structure or one value for
                all (default 0: False for bools, "" for strings).
            drop_remainder: leave out a last batch smaller than batch_size.

        Examples:
            >>> ds = Dataset.range(1, 4).map(lambda n: np.arange(n))
            >>> next(iter(ds.padded_batch(2)))
            array([[0, 0],
                   [0, 1]])
        """
        _check_positive("padded_batch", "batch_size", batch_size)

        def batches(elements):
            while True:
                group = list(itertools.islice(elements, batch_size))
                if not group or (drop_remainder and len(group) < batch_size):
                    return
                yield _padded(group, padded_shapes, padding_values)
        return self._then(f"padded_batch({batch_size})", batches)

    def unbatch(self):
        """The rows of each element: the inverse of batch, each array sliced along its first
        axis (all of an element's arrays must have the same first dimension).

        Examples:
            >>> list(Dataset.range(3).batch(2).unbatch())
            [np.int64(0), np.int64(1), np.int64(2)]
        """
        def rows(elements):
            for element in elements:
                leaves = _leaves(element, "element")
                for path, leaf in leaves:
                    if np.ndim(leaf) == 0:
                        raise ValueError(f"Dataset.unbatch: every array of an element must "
                                         f"have a first axis to split; {path} is a scalar "
                                         f"({leaf!r})")
                sizes = {len(leaf) for _, leaf in leaves}
                if len(sizes) > 1:
                    shown = ", ".join(f"{path} has {len(leaf)}" for path, leaf in leaves)
                    raise ValueError(f"Dataset.unbatch: the arrays of an element must have "
                                     f"the same first dimension; {shown}")
                for index in range(sizes.pop() if sizes else 0):
                    yield _map_structure(lambda leaf: leaf[index], element)
        return self._then("unbatch()", rows)

    def window(self, size: int, shift: int | None = None, stride: int = 1,
               drop_remainder: bool = False):
        """A dataset of windows, as tf.data's: window i holds the elements i * shift,
        i * shift + stride, ... (`size` of them), as a Dataset, or for tuple and dict elements
        a tuple or dict of Datasets, one for each component. Windows start at every `shift`-th
        element; those at the end may hold fewer than `size`, unless `drop_remainder`.

        Arguments:
            size: elements a window (a positive int).
            shift: elements from one window's start to the next (default: size).
            stride: elements from one element of a window to the next.
            drop_remainder: leave out windows with fewer than `size` elements.

        The arrays of the windows' elements are read-only: windows that overlap share them,
        and a window's dataset reads the same ones each time it is iterated.

        Examples:
            >>> windows = Dataset.range(5).window(3, shift=2)
            >>> [batch.tolist() for batch in windows.flat_map(lambda w: w.batch(3))]
            [[0, 1, 2], [2, 3, 4], [4]]
        """
        _check_positive("window", "size", size)
        shift = size if shift is None else shift
        _check_positive("window", "shift", shift)
        _check_positive("window", "stride", stride)
        span = (size - 1) * stride + 1
        dataset_class = type(self)

        def as_datasets(window: list):
            if not isinstance(window[0], (tuple, dict)):
                return dataset_class(lambda: iter(window), f"window({len(window)})")
            return _map_structure(lambda *leaves: dataset_class(
                lambda: iter(leaves), f"window({len(leaves)})"), *window)

        def windows(elements):
            buffer: collections.deque = collections.deque()
            first = start = 0  # the index of buffer[0]; of the next window's first element
            exhausted = False
            while True:
                while not exhausted and first + len(buffer) < start + span:
                    element = next(elements, _END)
                    if element is _END:
                        exhausted = True
                    elif first + len(buffer) < start:  # between windows: not needed
                        first += 1
                    else:  # read-only: overlapping windows share it, and each reads it anew
                        buffer.append(_read_only(element))
                window = [buffer[index - first] for index in range(start, start + span, stride)
                          if index - first < len(buffer)]
                if not window or (drop_remainder and len(window) < size):
                    return
                yield as_datasets(window)
                start += shift
                while buffer and first < start:
                    buffer.popleft()
                    first += 1
        return self._then(f"window({size}, {shift}, {stride})", windows)


def _padded(group: list, padded_shapes, padding_values):
    """The elements of `group` padded to one shape per component and stacked."""
    first_paths = [path for path, _ in _leaves(group[0], "element")]
    for position, element in enumerate(group[1:], start=1):
        if [path for path, _ in _leaves(element, "element")] != first_paths:
            raise ValueError(f"Dataset.padded_batch: elements must have the same structure; "
                             f"element 0 of the batch is {group[0]!r}, element {position} "
                             f"is {element!r}")
    shapes = _per_component(group[0], padded_shapes, "padded_shapes", is_shape=True)
    values = _per_component(group[0], padding_values, "padding_values", is_shape=False)
    columns = [[leaf for _, leaf in _leaves(element)] for element in group]
    padded = [_padded_component(path, [np.asarray(row[index]) for row in columns],
                                shapes[index], values[index])
              for index, path in enumerate(first_paths)]
    taken = iter(padded)
    return _map_structure(lambda _: next(taken), group[0])


def _per_component(element, given, argument: str, is_shape: bool) -> list:
    """`given` for each component of `element`: one value for all, or its structure."""
    count = len(_leaves(element))
    if given is None:
        return [None] * count
    # a shape is a tuple itself: one shape for all where the element is one array
    one_for_all = not isinstance(element if is_shape else given, (tuple, dict))
    if one_for_all:
        return [given] * count
    if is_shape:  # a component's shape is a tuple: it is the leaf, not the structure
        try:
            return [shape for _, shape in _shape_leaves(given, element)]
        except (TypeError, KeyError, IndexError):
            raise ValueError(f"Dataset.padded_batch: {argument} must have the structure of "
                             f"the elements, {element!r}; got {given!r}") from None
    leaves = _leaves(given)
    if [path for path, _ in leaves] != [path for path, _ in _leaves(element)]:
        raise ValueError(f"Dataset.padded_batch: {argument} must have the structure of the "
                         f"elements, {element!r}, or be one value; got {given!r}")
    return [value for _, value in leaves]


def _shape_leaves(shapes, element):
    """The shapes in `shapes`, walked along `element`'s structure (in `_leaves`' order)."""
    if isinstance(element, tuple):
        if len(shapes) != len(element):
            raise TypeError("different lengths")
        return [pair for item_shapes, item in zip(shapes, element)
                for pair in _shape_leaves(item_shapes, item)]
    if isinstance(element, dict):
        return [pair for key in sorted_keys(element)
                for pair in _shape_leaves(shapes[key], element[key])]
    return [("", shapes)]


def _padded_component(path: str, arrays: list, padded_shape, padding_value) -> np.ndarray:
    ranks = {array.ndim for array in arrays}
    if len(ranks) > 1:
        raise ValueError(f"Dataset.padded_batch: the arrays at {path} must have the same "
                         f"number of dimensions; got shapes "
                         f"{[array.shape for array in arrays]}")
    rank = ranks.pop()
    largest = tuple(max(array.shape[axis] for array in arrays) for axis in range(rank))
    if isinstance(padded_shape, (int, np.integer)) and not isinstance(padded_shape, bool):
        padded_shape = (padded_shape,)  # tf.data's padded_shapes=5 for a vector
    if padded_shape is not None and not isinstance(padded_shape, (tuple, list)):
        raise ValueError(f"Dataset.padded_batch: padded_shapes must give {path} a shape (a "
                         f"tuple of ints and None); got {padded_shape!r}")
    wanted = largest if padded_shape is None else tuple(padded_shape)
    if len(wanted) != rank:
        raise ValueError(f"Dataset.padded_batch: padded_shapes gives {path} the shape "
                         f"{padded_shape!r}, but its arrays have {rank} dimensions")
    shape = tuple(big if n is None or n == -1 else int(n)
                  for n, big in zip(wanted, largest))
    for array in arrays:
        if any(size > target for size, target in zip(array.shape, shape)):
            raise ValueError(f"Dataset.padded_batch: an array at {path} of shape "
                             f"{array.shape} is larger than its padded shape {shape}")
    dtype = np.result_type(*arrays)
    fill = padding_value if padding_value is not None else (
        "" if dtype.kind in "US" else False if dtype == bool else 0)
    if np.asarray(fill).ndim != 0:
        raise ValueError(f"Dataset.padded_batch: the padding value for {path} must be a "
                         f"scalar; got {padding_value!r}")
    batch = np.full((len(arrays), *shape), fill, dtype=dtype)
    for row, array in enumerate(arrays):
        batch[(row, *(slice(0, n) for n in array.shape))] = array
    return batch
