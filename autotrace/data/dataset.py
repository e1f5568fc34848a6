"""`Dataset`, the recipe of an input pipeline, and its transformations (see autotrace/data/).
"""
from __future__ import annotations

import builtins
import itertools
import os
from typing import Callable, Iterator

import numpy as np

from .combining import CombiningMethods
from .elements import (_apply, _check_callable, _check_count, _check_positive, _frozen_copy,
                       _leaves, _map_structure, _name, _stack, _to_numpy, _unequal_items)
from .interleave import interleaved, interleaved_on_threads
from .threads import _mapped_on_threads, _prefetched
from .windows import WindowMethods

AUTOTUNE = -1  # for prefetch's buffer_size (and accepted by map), as tf.data.AUTOTUNE
_AUTOTUNE_PREFETCH = 2


# --- datasets -------------------------------------------------------------------------------------

class Dataset(CombiningMethods, WindowMethods):
    """A sequence of elements that can be iterated many times, built from a source and a chain
    of transformations. Make one with `from_tensor_slices`, `range` or `from_generator`, or
    several with `zip`; zip, concatenate, flat_map, cache and reduce are in combining.py,
    padded_batch, unbatch and window in windows.py.

    Iterating (`for element in dataset`, `iter(dataset)`, `as_numpy_iterator()`) starts from
    the beginning each time.

    Examples:
        >>> list(Dataset.range(5).map(lambda x: x * 2).batch(2))
        [array([0, 2]), array([4, 6]), array([8])]
        >>> list(Dataset.from_tensor_slices(np.arange(4.0)).shuffle(4, seed=0).batch(4))[0].shape
        (4,)
    """

    def __init__(self, make_iterator: Callable[[], Iterator], description: str = "Dataset"):
        self._make_iterator = make_iterator
        self._description = description

    def __iter__(self) -> Iterator:
        return iter(self._make_iterator())

    def as_numpy_iterator(self) -> Iterator:
        """An iterator over the elements (NumPy values already; kept for tf.data's API)."""
        return iter(self)

    def __repr__(self) -> str:
        return f"<autotrace.data.Dataset {self._description}>"

    def _then(self, description: str, transform: Callable[[Iterator], Iterator]) -> "Dataset":
        return Dataset(lambda: transform(iter(self)), f"{self._description}.{description}")

    # --- sources -----------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors) -> "Dataset":
        """The slices of `tensors` along their first axis: element i is `tensors` with every
        array replaced by its row i.

        Arguments:
            tensors: an array (or list, number list, anything np.asarray takes), or a tuple or
                dict of them, nested. Every array must have the same first dimension.

        Returns:
            a Dataset of len(first axis) elements of the same structure as `tensors`. It
            holds a read-only copy of the arrays: changing them later does not change the
            dataset, and its elements cannot be changed in place.

        Examples:
            >>> ds = Dataset.from_tensor_slices(({"a": [1, 2]}, np.eye(2)))
            >>> list(ds)[1]
            ({'a': np.int64(2)}, array([0., 1.]))
        """
        try:
            arrays = _map_structure(_frozen_copy, tensors)
        except ValueError:  # NumPy's "inhomogeneous shape": name the items that differ
            for path, leaf in _leaves(tensors, "tensors"):
                unequal = _unequal_items(leaf, path)
                if unequal is not None:
                    raise ValueError(
                        f"Dataset.from_tensor_slices: the items of a list must have the same "
                        f"shape to stack into one array; {unequal} (pad them to one shape, or "
                        f"make the dataset with Dataset.from_generator)") from None
            raise
        leaves = _leaves(arrays, "tensors")
        if not leaves:
            raise ValueError("Dataset.from_tensor_slices: tensors must hold at least one "
                             "array; got an empty structure")
        for path, array in leaves:
            if array.ndim == 0:
                raise ValueError(f"Dataset.from_tensor_slices: {path} must have a first axis "
                                 f"to slice; got a scalar ({array!r})")
        first_path, first = leaves[0]
        for path, array in leaves[1:]:
            if len(array) != len(first):
                raise ValueError(
                    f"Dataset.from_tensor_slices: every component must have the same first "
                    f"dimension; {first_path} has {len(first)}, {path} has {len(array)}")

        def slices():
            for index in builtins.range(len(first)):
                yield _map_structure(lambda array: array[index], arrays)
        return Dataset(slices, f"from_tensor_slices({len(first)} elements)")

    @staticmethod
    def range(*args) -> "Dataset":
        """Integers like Python's range: `range(stop)`, `range(start, stop[, step])`, as
        np.int64 scalars.

        Examples:
            >>> list(Dataset.range(1, 7, 2))
            [np.int64(1), np.int64(3), np.int64(5)]
        """
        if not 1 <= len(args) <= 3 or not all(
                isinstance(arg, (int, np.integer)) and not isinstance(arg, bool)
                for arg in args):
            raise TypeError(f"Dataset.range takes 1 to 3 ints (stop, or start, stop, step); "
                            f"got {args!r}")
        numbers = builtins.range(*args)  # ValueError for a step of 0, as Python's
        return Dataset(lambda: (np.int64(n) for n in numbers), f"range{args!r}")

    @staticmethod
    def from_generator(generator: Callable[[], Iterator]) -> "Dataset":
        """The elements a generator yields; `generator` is called anew on each iteration.

        Arguments:
            generator: a function of no arguments that returns an iterable (a generator
                function, for one). What it yields is converted leaf by leaf to NumPy values.

        Examples:
            >>> list(Dataset.from_generator(lambda: ((i, i * i) for i in range(2))))
            [(np.int64(0), np.int64(0)), (np.int64(1), np.int64(1))]
        """
        if not callable(generator):
            raise TypeError(f"Dataset.from_generator: generator must be a function that "
                            f"returns an iterable; got {type(generator).__name__}")
        name = getattr(generator, "__name__", "generator")
        return Dataset(lambda: (_map_structure(_to_numpy, element) for element in generator()),
                       f"from_generator({name})")

    # --- transformations ---------------------------------------------------------------------
    def map(self, map_func: Callable, num_parallel_calls=None, deterministic=None) -> "Dataset":
        """Each element through `map_func` (a tuple element as separate arguments); what it
        returns is converted leaf by leaf to NumPy values.

        Arguments:
            map_func: the function.
            num_parallel_calls: None to map one element at a time; k to run up to k calls at
                once on k threads (AUTOTUNE: one per CPU), with the results in the input's
                order all the same, each as soon as it and those before it are ready (the
                input is read on one more thread). Threads pay where map_func spends its
                time outside Python's lock (reading files, NumPy work on large arrays), and
                map_func must be safe to call from several threads at once.
            deterministic: accepted for tf.data's API; the order is always the input's.

        Examples:
            >>> list(Dataset.range(3).map(lambda x: x * 10))
            [np.int64(0), np.int64(10), np.int64(20)]
        """
        _check_callable("map", "map_func", map_func)
        threads = _thread_count("map", "num_parallel_calls", num_parallel_calls)

        def map_one(element):
            return _map_structure(_to_numpy, _apply("map", map_func, element))

        def mapped(elements):
            if threads is None or threads == 1:
                return builtins.map(map_one, elements)
            return _mapped_on_threads(elements, map_one, threads)
        return self._then(f"map({_name(map_func)})", mapped)

    def filter(self, predicate: Callable) -> "Dataset":
        """The elements for which `predicate` (a tuple element as separate arguments) is true;
        it must return a bool or a scalar boolean array.

        Examples:
            >>> list(Dataset.range(6).filter(lambda x: x % 2 == 0))
            [np.int64(0), np.int64(2), np.int64(4)]
        """
        _check_callable("filter", "predicate", predicate)

        def kept(elements):
            for element in elements:
                verdict = _apply("filter", predicate, element)
                if not isinstance(verdict, (bool, np.bool_)) and not (
                        isinstance(verdict, np.ndarray) and verdict.shape == ()
                        and verdict.dtype == bool):
                    raise TypeError(f"Dataset.filter: predicate must return a bool; "
                                    f"{_name(predicate)} returned {verdict!r}")
                if verdict:
                    yield element
        return self._then(f"filter({_name(predicate)})", kept)

    def shuffle(self, buffer_size: int, seed: int | None = None,
                reshuffle_each_iteration: bool = True) -> "Dataset":
        """Elements in random order, as tf.data shuffles: a buffer is filled with the first
        `buffer_size` elements; each element out is drawn at random from the buffer and its
        place taken by the next element in. A buffer at least as large as the dataset gives a
        uniform shuffle; a smaller one only mixes nearby elements.

        Arguments:
            buffer_size: how many elements the buffer holds (a positive int).
            seed: an int for the same orders in every run; default, fresh randomness.
            reshuffle_each_iteration: False to give every iteration the same order.

        Examples:
            >>> sorted(Dataset.range(5).shuffle(5, seed=0))
            [np.int64(0), np.int64(1), np.int64(2), np.int64(3), np.int64(4)]
        """
        _check_positive("shuffle", "buffer_size", buffer_size)
        root = np.random.SeedSequence(seed)
        iterations = itertools.count()

        def shuffled(elements):
            iteration = next(iterations) if reshuffle_each_iteration else 0
            rng = np.random.default_rng(np.random.SeedSequence(root.entropy,
                                                               spawn_key=(iteration,)))
            buffer: list = []
            for element in elements:
                if len(buffer) < buffer_size:
                    buffer.append(element)
                    continue
                index = rng.integers(len(buffer))
                yield buffer[index]
                buffer[index] = element
            while buffer:
                index = rng.integers(len(buffer))
                buffer[index], buffer[-1] = buffer[-1], buffer[index]
                yield buffer.pop()
        return self._then(f"shuffle({buffer_size})", shuffled)

    def batch(self, batch_size: int, drop_remainder: bool = False) -> "Dataset":
        """Consecutive elements stacked into batches: each leaf gains a first axis of size
        `batch_size` (the last batch may be smaller, unless `drop_remainder`).

        Examples:
            >>> list(Dataset.range(5).batch(2))
            [array([0, 1]), array([2, 3]), array([4])]
        """
        _check_positive("batch", "batch_size", batch_size)

        def batches(elements):
            while True:
                group = list(itertools.islice(elements, batch_size))
                if not group or (drop_remainder and len(group) < batch_size):
                    return
                yield _stack(group)
        return self._then(f"batch({batch_size})", batches)

    def repeat(self, count: int | None = None) -> "Dataset":
        """The dataset `count` times over (forever for None or -1), starting over (and
        reshuffling) each time. As in tf.data, repeating forever ends where an epoch yields
        nothing (an empty dataset, a filter that keeps nothing), rather than looping for ever.

        Examples:
            >>> list(Dataset.range(2).repeat(2))
            [np.int64(0), np.int64(1), np.int64(0), np.int64(1)]
        """
        if count is not None and (not isinstance(count, (int, np.integer)) or count < -1):
            raise ValueError(f"Dataset.repeat: count must be an int >= -1 or None (forever); "
                             f"got {count!r}")
        forever = count is None or count == -1

        def repeated():
            if not forever:
                return itertools.chain.from_iterable(self for _ in builtins.range(count))
            return _until_an_epoch_is_empty(self)
        return Dataset(repeated, f"{self._description}.repeat({count})")

    def take(self, count: int) -> "Dataset":
        """The first `count` elements (all of them for -1).

        Examples:
            >>> list(Dataset.range(10).take(2))
            [np.int64(0), np.int64(1)]
        """
        _check_count("take", count)
        stop = None if count == -1 else count
        return self._then(f"take({count})", lambda elements: itertools.islice(elements, stop))

    def skip(self, count: int) -> "Dataset":
        """All but the first `count` elements (none for -1).

        Examples:
            >>> list(Dataset.range(4).skip(2))
            [np.int64(2), np.int64(3)]
        """
        _check_count("skip", count)
        if count == -1:
            return self._then("skip(-1)", lambda elements: iter(()))
        return self._then(f"skip({count})",
                          lambda elements: itertools.islice(elements, count, None))

    def shard(self, num_shards: int, index: int) -> "Dataset":
        """Every `num_shards`-th element, starting at element `index` (tf.data's `shard`): the
        part of the data that rank `index` of `num_shards` trains on. Shard before batching,
        and shuffle before sharding only with a seed that every rank shares, so that the
        shards are disjoint and together are the whole data set.

        Examples:
            >>> list(Dataset.range(7).shard(3, 1))
            [np.int64(1), np.int64(4)]
        """
        _check_positive("shard", "num_shards", num_shards)
        if (isinstance(index, bool) or not isinstance(index, (int, np.integer))
                or not 0 <= index < num_shards):
            raise ValueError(f"Dataset.shard: index must be an int from 0 to num_shards - 1 = "
                             f"{num_shards - 1}; got {index!r}")
        return self._then(f"shard({num_shards}, {index})",
                          lambda elements: itertools.islice(elements, index, None, num_shards))

    def prefetch(self, buffer_size: int) -> "Dataset":
        """The same elements, produced ahead by a background thread into a queue of at most
        `buffer_size` (AUTOTUNE: 2), so that the pipeline's work overlaps with the consumer's.

        An error in the pipeline is raised in the consumer, at the element where it happened.
        The thread starts on the first element asked for and stops when the iteration ends,
        is closed, or is dropped, so a loop left with `break` leaves no thread running. Closing
        returns at once; a thread inside a slow element (a generator that waits) ends as soon
        as that element is done, and does not start the next.
        """
        if buffer_size != AUTOTUNE:
            _check_positive("prefetch", "buffer_size", buffer_size)
        size = _AUTOTUNE_PREFETCH if buffer_size == AUTOTUNE else buffer_size
        return self._then(f"prefetch({buffer_size})",
                          lambda elements: _prefetched(elements, size))

    def interleave(self, map_func: Callable, cycle_length: int | None = None,
                   block_length: int = 1, num_parallel_calls=None,
                   deterministic: bool | None = None) -> "Dataset":
        """The elements of the datasets that `map_func` makes of each element, interleaved as
        tf.data does: `cycle_length` of them are open at once, and `block_length` elements are
        taken from each in turn; one that ends is replaced, in its place in the cycle, by the
        dataset of the next input element when its turn comes.

        Arguments:
            map_func: a function of an element (a tuple as separate arguments) returning a
                Dataset, such as a file reader of a file name.
            cycle_length: how many datasets are open at once (None or AUTOTUNE: one per CPU,
                as tf.data; give a number for the same order on every machine).
            block_length: how many consecutive elements are taken from each.
            num_parallel_calls: None to read the datasets on the consumer's thread; k to read
                the open datasets on k <= cycle_length threads (AUTOTUNE: one per CPU, at
                most cycle_length), each working ahead on its next elements while the
                others are taken, and the next input elements' datasets opened ahead, in
                order, on one more thread (map_func is called there).
            deterministic: with num_parallel_calls, True or None for exactly the order above;
                False to give elements as soon as they are read (the same elements, in an
                order that may change from run to run).

        An error in a dataset is raised where the order above reaches it, with its traceback
        and a note naming the input element (the file) whose dataset raised it.

        Examples:
            >>> list(Dataset.range(1, 4).interleave(
            ...     lambda x: Dataset.from_tensor_slices([x] * 2), cycle_length=2))
            [np.int64(1), np.int64(2), np.int64(1), np.int64(2), np.int64(3), np.int64(3)]
        """
        _check_callable("interleave", "map_func", map_func)
        cycles = _thread_count("interleave", "cycle_length", cycle_length) or os.cpu_count()
        _check_positive("interleave", "block_length", block_length)
        threads = _thread_count("interleave", "num_parallel_calls", num_parallel_calls)
        if threads is not None and threads > cycles and cycle_length is not None \
                and AUTOTUNE not in (cycle_length, num_parallel_calls):
            raise ValueError(f"Dataset.interleave: num_parallel_calls={num_parallel_calls} is "
                             f"more than cycle_length={cycle_length}, as in tf.data an error: "
                             f"only cycle_length datasets are open to be read at once")
        if deterministic not in (None, True, False):
            raise TypeError(f"Dataset.interleave: deterministic must be True, False or None; "
                            f"got {deterministic!r}")

        def open_element(element) -> Iterator:
            return iter(_dataset_made(map_func, element))

        def interleave_elements(elements):
            if threads is None:
                return interleaved(elements, open_element, cycles, block_length)
            return interleaved_on_threads(elements, open_element, cycles, block_length,
                                          min(threads, cycles), deterministic is not False)
        parallel = "" if threads is None else f", num_parallel_calls={num_parallel_calls}"
        return self._then(
            f"interleave({_name(map_func)}, {cycle_length}, {block_length}{parallel})",
            interleave_elements)


# --- helpers --------------------------------------------------------------------------------------

def _thread_count(method: str, argument: str, value) -> int | None:
    """None for None, a CPU count for AUTOTUNE, else `value` once checked positive."""
    if value is None:
        return None
    if value == AUTOTUNE and not isinstance(value, bool):
        return os.cpu_count() or 1
    _check_positive(method, argument, value)
    return int(value)


def _until_an_epoch_is_empty(dataset: Dataset) -> Iterator:
    """The elements of `dataset` over and over, ending after an epoch that yields none."""
    while True:
        empty = True
        for element in dataset:
            empty = False
            yield element
        if empty:
            return


def _dataset_made(map_func: Callable, element) -> "Dataset":
    dataset = _apply("interleave", map_func, element)
    if not isinstance(dataset, Dataset):
        raise TypeError(f"Dataset.interleave: map_func must return a Dataset; "
                        f"{_name(map_func)} returned {type(dataset).__name__}")
    return dataset
