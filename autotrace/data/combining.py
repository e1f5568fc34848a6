"""Dataset methods that combine datasets or whole iterations, with tf.data's semantics: `zip`,
`concatenate`, `flat_map`, `cache` and `reduce` (autotrace/data/dataset.py's Dataset has them).
"""
from __future__ import annotations

import os
import pickle
from typing import Callable, Iterator

import numpy as np

from .elements import (_apply, _check_callable, _leaves, _map_structure, _name, _read_only,
                       _to_numpy)


class CombiningMethods:
    """zip, concatenate, flat_map, cache and reduce, for Dataset to inherit."""

    @classmethod
    def zip(cls, *args, datasets=None):
        """The elements of several datasets side by side, as tf.data.Dataset.zip: element i
        has the structure of `datasets` with each dataset replaced by its element i. It ends
        with the shortest.

        Arguments:
            args: a tuple or dict of Datasets, nested (`Dataset.zip((a, (b, c)))`), or the
                datasets as separate arguments (`Dataset.zip(a, b)`, a tuple).
            datasets: the tuple or dict by keyword instead (`Dataset.zip(datasets=(a, b))`).

        Examples:
            >>> a, b = Dataset.range(3), Dataset.range(10, 12)
            >>> list(Dataset.zip(a, b))
            [(np.int64(0), np.int64(10)), (np.int64(1), np.int64(11))]
        """
        if (datasets is None) == (not args):
            raise TypeError("Dataset.zip: give the datasets once, as a tuple or dict of "
                            "Datasets (nested), as separate arguments, or as datasets=")
        structure = datasets if datasets is not None else args[0] if len(args) == 1 else args
        leaves = _leaves(structure, "datasets")
        for path, leaf in leaves:
            if not isinstance(leaf, cls):
                raise TypeError(f"Dataset.zip: datasets must be Datasets in a tuple or dict, "
                                f"nested; {path} is {type(leaf).__name__}")

        def zipped():
            iterators = _map_structure(iter, structure)
            flat = [iterator for _, iterator in _leaves(iterators)]
            for elements in zip(*flat):
                taken = iter(elements)
                yield _map_structure(lambda _: next(taken), iterators)
        return cls(zipped, f"zip({len(leaves)} datasets)")

    def concatenate(self, dataset):
        """The elements of this dataset, then those of `dataset`, which must have elements of
        the same structure and dtypes (shapes may differ; dicts the same keys, in any order:
        they come out in this dataset's order).

        Examples:
            >>> list(Dataset.range(2).concatenate(Dataset.range(5, 6)))
            [np.int64(0), np.int64(1), np.int64(5)]
        """
        if not isinstance(dataset, type(self)):
            raise TypeError(f"Dataset.concatenate: dataset must be a Dataset; got "
                            f"{type(dataset).__name__}")

        def concatenated():
            first = None
            for element in self:
                first = element if first is None else first
                yield element
            for element in dataset:
                if first is not None:
                    _check_same_kind(first, element)
                    # dicts in the first dataset's key order, as tf.data packs its elements
                    element = _map_structure(lambda _, leaf: leaf, first, element)
                yield element
        return type(self)(concatenated, f"{self._description}.concatenate({dataset!r})")

    def flat_map(self, map_func: Callable):
        """The elements of the datasets that `map_func` makes of each element (a tuple element
        as separate arguments), one dataset after another.

        Examples:
            >>> list(Dataset.range(1, 3).flat_map(lambda n: Dataset.range(n)))
            [np.int64(0), np.int64(0), np.int64(1)]
        """
        _check_callable("flat_map", "map_func", map_func)

        def flattened(elements):
            for element in elements:
                dataset = _apply("flat_map", map_func, element)
                if not isinstance(dataset, type(self)):
                    raise TypeError(f"Dataset.flat_map: map_func must return a Dataset; "
                                    f"{_name(map_func)} returned {type(dataset).__name__}")
                yield from dataset
        return self._then(f"flat_map({_name(map_func)})", flattened)

    def cache(self, filename: str = ""):
        """The same elements, kept after the first iteration that runs to the end, so that
        later iterations read them instead of running the pipeline again (a shuffle after the
        cache still reshuffles; one before it is fixed by it).

        Arguments:
            filename: "" to keep them in memory; a path to keep them in that file (pickled
                NumPy values, written when the first full iteration ends), which later
                datasets with the same filename read, also in another run. Only read a cache
                file this method wrote: loading one runs the code pickle says to.

        An iteration left before the end (a `break`, a `take`) keeps nothing. The arrays of
        the elements are read-only, from the first iteration on (an in-place write raises
        instead of changing what later iterations read): to change one, change a copy
        (`x = x * 10`, not `x *= 10`).

        Examples:
            >>> calls = []
            >>> ds = Dataset.range(3).map(lambda x: calls.append(x) or x).cache()
            >>> list(ds) == list(ds), len(calls)
            (True, 3)
        """
        if not isinstance(filename, (str, os.PathLike)):
            raise TypeError(f"Dataset.cache: filename must be a path or \"\" (in memory); "
                            f"got {type(filename).__name__}")
        path = os.fspath(filename)
        kept: list = []  # [the elements], once an iteration has run to the end

        def cached() -> Iterator:
            if kept:  # (each element in containers of its own: see _recording)
                return map(_read_only, kept[0])
            if path and os.path.exists(path):
                with open(path, "rb") as file:
                    kept.append([_read_only(element) for element in pickle.load(file)])
                return map(_read_only, kept[0])
            return _recording(iter(self), kept, path)
        where = f"{path!r}" if path else ""
        return type(self)(cached, f"{self._description}.cache({where})")

    def reduce(self, initial_state, reduce_func: Callable):
        """`reduce_func(state, element)` over the elements in turn, from `initial_state`: the
        last state (NumPy values). The state must keep the structure and dtypes of
        `initial_state`, as in tf.data.

        Examples:
            >>> Dataset.range(5).reduce(np.int64(0), lambda total, x: total + x)
            np.int64(10)
        """
        _check_callable("reduce", "reduce_func", reduce_func)
        state = _map_structure(_to_numpy, initial_state)
        for element in self:
            new_state = _map_structure(_to_numpy, _apply("reduce", reduce_func, (state, element)))
            _check_same_kind(state, new_state, "reduce", "reduce_func must return a state of "
                             "the structure and dtypes of initial_state")
            state = new_state
        return state


def _recording(elements: Iterator, kept: list, path: str) -> Iterator:
    """The elements, recorded; kept (and written to `path`) once they run to the end. Read-only
    already as they are first handed out: the user holds them while they are recorded. Each
    is handed out in dicts and tuples of its own (made again by `_read_only`, which keeps
    read-only arrays as they are), so that `element["x"] = ...` changes no later epoch's."""
    recorded = []
    for element in elements:
        element = _read_only(element)
        recorded.append(element)
        yield _read_only(element)
    if not kept:
        if path:
            partial = f"{path}.partial-{os.getpid()}"
            with open(partial, "wb") as file:
                pickle.dump(recorded, file, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(partial, path)
        kept.append(recorded)


def _check_same_kind(first, element, method: str = "concatenate",
                     what: str = "the datasets must have elements of the same structure and "
                                 "dtypes") -> None:
    first_leaves, leaves = _leaves(first, "element"), _leaves(element, "element")
    if [path for path, _ in first_leaves] != [path for path, _ in leaves]:
        raise TypeError(f"Dataset.{method}: {what}; {_shown(first)} and {_shown(element)} "
                        f"differ in structure")
    for (path, a), (_, b) in zip(first_leaves, leaves):
        if np.asarray(a).dtype != np.asarray(b).dtype:
            raise TypeError(f"Dataset.{method}: {what}; {path} is {np.asarray(a).dtype} in "
                            f"one and {np.asarray(b).dtype} in the other")


def _shown(element) -> str:
    return repr(_map_structure(lambda leaf: f"{np.asarray(leaf).dtype}{list(np.shape(leaf))}",
                               element)).replace("'", "")
