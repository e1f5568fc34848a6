"""Dataset.zip, concatenate, flat_map, cache, reduce, padded_batch, unbatch and window,
against the examples of tf.data's documentation."""
import doctest

import numpy as np
import pytest

import autotrace.data.combining
import autotrace.data.windows
from autotrace.data import Dataset


def values(dataset) -> list:
    """The elements as Python values (lists for arrays), for comparing with a literal."""
    def plain(element):
        if isinstance(element, tuple):
            return tuple(plain(item) for item in element)
        if isinstance(element, dict):
            return {key: plain(item) for key, item in element.items()}
        return np.asarray(element).tolist()
    return [plain(element) for element in dataset]


def windows(dataset) -> list:
    return [values(window) for window in dataset]


def test_zip_takes_a_structure_or_separate_datasets_and_ends_with_the_shortest():
    a, b = Dataset.range(1, 4), Dataset.range(4, 7)
    c = Dataset.range(7, 13).batch(2)
    assert values(Dataset.zip((a, b))) == [(1, 4), (2, 5), (3, 6)]
    assert values(Dataset.zip(a, b)) == values(Dataset.zip((a, b)))
    assert values(Dataset.zip((b, a))) == [(4, 1), (5, 2), (6, 3)]
    assert values(Dataset.zip((a, b, c))) == [(1, 4, [7, 8]), (2, 5, [9, 10]), (3, 6, [11, 12])]
    assert values(Dataset.zip((a, Dataset.range(2)))) == [(1, 0), (2, 1)]
    assert values(Dataset.zip({"x": a, "pair": (b, a)})) == [
        {"x": 1, "pair": (4, 1)}, {"x": 2, "pair": (5, 2)}, {"x": 3, "pair": (6, 3)}]
    assert values(Dataset.zip(a)) == [1, 2, 3]
    assert values(Dataset.zip(datasets=(a, b))) == values(Dataset.zip((a, b)))
    # iterated again, it starts over
    zipped = Dataset.zip(a, b)
    assert values(zipped) == values(zipped)
    # and map receives a zipped element as separate arguments
    assert values(zipped.map(lambda x, y: x * y)) == [4, 10, 18]


def test_zip_refuses_what_is_not_a_dataset():
    with pytest.raises(TypeError) as error:
        Dataset.zip((Dataset.range(2), [1, 2]))
    assert str(error.value) == ("Dataset.zip: datasets must be Datasets in a tuple or dict, "
                                "nested; datasets[1] is list")
    for wrong in ((), (Dataset.range(1),)):
        with pytest.raises(TypeError) as error:
            Dataset.zip(*wrong, **({"datasets": (Dataset.range(1),)} if wrong else {}))
        assert str(error.value) == ("Dataset.zip: give the datasets once, as a tuple or dict "
                                    "of Datasets (nested), as separate arguments, or as "
                                    "datasets=")


def test_concatenate_needs_the_same_structure_and_dtypes():
    a, b = Dataset.range(1, 4), Dataset.range(4, 8)
    assert values(a.concatenate(b)) == [1, 2, 3, 4, 5, 6, 7]
    rows = Dataset.from_tensor_slices(np.ones((2, 3))).concatenate(
        Dataset.from_tensor_slices(np.zeros((1, 5))))  # shapes may differ
    assert values(rows) == [[1.0] * 3, [1.0] * 3, [0.0] * 5]
    pairs = Dataset.zip(a, b)
    with pytest.raises(TypeError) as error:
        list(a.concatenate(pairs))
    assert str(error.value) == (
        "Dataset.concatenate: the datasets must have elements of the same structure and "
        "dtypes; int64[] and (int64[], int64[]) differ in structure")
    with pytest.raises(TypeError) as error:
        list(a.concatenate(Dataset.from_tensor_slices([0.5])))
    assert str(error.value) == (
        "Dataset.concatenate: the datasets must have elements of the same structure and "
        "dtypes; element is int64 in one and float64 in the other")


def test_dicts_of_the_same_keys_in_another_order_batch_and_concatenate():
    # tf.data walks a dict's keys sorted: the insertion order is not part of the structure,
    # and elements come out in the first element's (the first dataset's) key order
    def records():
        yield {"a": 1, "b": 2.0}
        yield {"b": 3.0, "a": 4}
    batches = list(Dataset.from_generator(records).batch(2))
    assert [list(batch) for batch in batches] == [["a", "b"]]
    assert values(batches) == [{"a": [1, 4], "b": [2.0, 3.0]}]
    later = Dataset.from_generator(lambda: iter([{"b": 5.0, "a": 6}]))
    joined = list(Dataset.from_generator(records).take(1).concatenate(later))
    assert [list(element) for element in joined] == [["a", "b"], ["a", "b"]]
    assert values(joined) == [{"a": 1, "b": 2.0}, {"a": 6, "b": 5.0}]
    padded = Dataset.from_generator(lambda: iter([{"y": [1], "x": 0}, {"x": 1, "y": [2, 3]}]))
    assert values(padded.padded_batch(2, padded_shapes={"x": [], "y": [3]})) == [
        {"y": [[1, 0, 0], [2, 3, 0]], "x": [0, 1]}]
    with pytest.raises(TypeError) as error:
        list(Dataset.from_generator(records).take(1).concatenate(
            Dataset.from_generator(lambda: iter([{"b": 5.0, "c": 6}]))))
    assert str(error.value) == (
        "Dataset.concatenate: the datasets must have elements of the same structure and "
        "dtypes; {a: int64[], b: float64[]} and {b: float64[], c: int64[]} differ in "
        "structure")


def test_flat_map_flattens_the_datasets_made_of_each_element():
    rows = Dataset.from_tensor_slices([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    assert values(rows.flat_map(Dataset.from_tensor_slices)) == list(range(1, 10))
    pairs = Dataset.zip(Dataset.range(1, 3), Dataset.range(10, 12))
    assert values(pairs.flat_map(lambda n, m: Dataset.range(m, m + n))) == [10, 11, 12]
    with pytest.raises(TypeError) as error:
        list(rows.flat_map(lambda row: row))
    assert str(error.value) == ("Dataset.flat_map: map_func must return a Dataset; <lambda> "
                                "returned ndarray")


def test_cache_runs_the_pipeline_once_and_keeps_nothing_of_a_partial_iteration():
    calls = []
    dataset = Dataset.range(4).map(lambda x: calls.append(int(x)) or x * 10).cache()
    assert values(dataset.take(2)) == [0, 10]      # left before the end: nothing kept
    assert values(dataset) == [0, 10, 20, 30]
    assert values(dataset) == [0, 10, 20, 30]
    assert calls == [0, 1, 0, 1, 2, 3]
    shuffled = dataset.shuffle(4, seed=1)            # after a cache: still reshuffled
    assert sorted(values(shuffled)) == [0, 10, 20, 30] and calls == [0, 1, 0, 1, 2, 3]


def test_cache_to_a_file_is_read_by_later_datasets(tmp_path):
    path = tmp_path / "cache"
    calls = []

    def pipeline():
        return Dataset.range(3).map(lambda x: calls.append(int(x)) or (x, np.full(2, x))
                                    ).cache(path)
    first = values(pipeline())
    assert first == [(0, [0, 0]), (1, [1, 1]), (2, [2, 2])] and path.exists()
    assert values(pipeline()) == first and calls == [0, 1, 2]
    with pytest.raises(TypeError, match="Dataset.cache: filename must be a path"):
        Dataset.range(2).cache(3)


@pytest.mark.parametrize("in_a_file", [False, True])
def test_a_cache_serves_read_only_arrays_from_the_first_iteration_on(tmp_path, in_a_file):
    # The cache hands out the arrays it keeps: a write in place into a batch of the first
    # epoch would change every later epoch. It raises instead, as into from_tensor_slices'.
    def pipeline():
        return Dataset.from_tensor_slices(np.arange(4.0)).batch(2).cache(
            tmp_path / "cache" if in_a_file else "")
    dataset = pipeline()
    for reader in (dataset, dataset, pipeline()):   # recording, kept, read from the file
        epoch = []
        for batch in reader:
            epoch.append(batch.tolist())
            with pytest.raises(ValueError, match="output array is read-only"):
                batch *= 10
            batch = batch * 10   # a copy may be changed
        assert epoch == [[0.0, 1.0], [2.0, 3.0]]


@pytest.mark.parametrize("in_a_file", [False, True])
def test_a_cache_hands_out_containers_of_each_epochs_own(tmp_path, in_a_file):
    # (a dict changed by the user in one epoch was the one the cache served in the next)
    def pipeline():
        return Dataset.from_tensor_slices({"x": np.arange(6.0).reshape(3, 2)}).cache(
            tmp_path / "dicts" if in_a_file else "")
    dataset = pipeline()
    for reader in (dataset, dataset, pipeline()):
        epoch = []
        for element in reader:
            epoch.append(element["x"].tolist())
            element["x"] = element["x"] * 10
        assert epoch == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


def test_overlapping_windows_share_read_only_elements():
    dataset = Dataset.range(3).map(lambda x: np.full(2, x))
    first, second = list(dataset.window(2, shift=1, drop_remainder=True))
    for row in first:
        with pytest.raises(ValueError, match="output array is read-only"):
            row += 100
    assert values(first) == [[0, 0], [1, 1]] and values(second) == [[1, 1], [2, 2]]


def test_reduce_folds_the_elements_into_a_state():
    assert Dataset.range(5).reduce(np.int64(0), lambda count, _: count + 1) == 5
    assert Dataset.range(5).reduce(0, lambda total, x: total + x) == 10
    pairs = Dataset.zip(Dataset.range(1, 4), Dataset.range(4, 7))
    state = pairs.reduce((0, 1), lambda state, pair: (state[0] + pair[0], state[1] * pair[1]))
    assert state == (6, 120) and isinstance(state[0], np.int64)
    assert Dataset.range(0).reduce(7, lambda s, x: s + x) == 7
    with pytest.raises(TypeError) as error:
        Dataset.range(3).reduce(0, lambda total, x: total + 0.5)
    assert str(error.value) == (
        "Dataset.reduce: reduce_func must return a state of the structure and dtypes of "
        "initial_state; element is int64 in one and float64 in the other")


def filled(x):
    return np.full(int(x), x)  # tf.fill([x], x)


def test_padded_batch_pads_each_batch_to_its_longest():
    dataset = Dataset.range(1, 5).map(filled)
    assert values(dataset.padded_batch(2)) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    assert values(dataset.padded_batch(2, padded_shapes=5)) == [
        [[1, 0, 0, 0, 0], [2, 2, 0, 0, 0]], [[3, 3, 3, 0, 0], [4, 4, 4, 4, 0]]]
    assert values(dataset.padded_batch(2, padded_shapes=[None], padding_values=-1)) == [
        [[1, -1], [2, 2]], [[3, 3, 3, -1], [4, 4, 4, 4]]]
    assert values(dataset.padded_batch(3, drop_remainder=True)) == [
        [[1, 0, 0], [2, 2, 0], [3, 3, 3]]]


def test_padded_batch_pads_components_by_structure():
    pairs = Dataset.range(1, 4).map(lambda x: (filled(x), np.full((int(x), 2), 1.5), x))
    batches = list(pairs.padded_batch(3, padded_shapes=((4,), (None, 2), ()),
                                      padding_values=(-1, 0.0, 0)))
    (a, b, c), = batches
    np.testing.assert_array_equal(a, [[1, -1, -1, -1], [2, 2, -1, -1], [3, 3, 3, -1]])
    assert b.shape == (3, 3, 2) and b.dtype == np.float64
    np.testing.assert_array_equal(b[:, :, 0], [[1.5, 0, 0], [1.5, 1.5, 0], [1.5, 1.5, 1.5]])
    np.testing.assert_array_equal(c, [1, 2, 3])
    named = Dataset.range(1, 3).map(lambda x: {"ids": filled(x), "n": x})
    batch, = named.padded_batch(2, padded_shapes={"ids": (3,), "n": ()},
                                padding_values={"ids": 9, "n": 0})
    np.testing.assert_array_equal(batch["ids"], [[1, 9, 9], [2, 2, 9]])
    np.testing.assert_array_equal(batch["n"], [1, 2])
    words = Dataset.from_tensor_slices(np.array([["a", "b"], ["c", "d"]])).map(
        lambda row: row[: 1 if row[0] == "a" else 2])
    assert values(words.padded_batch(2)) == [[["a", ""], ["c", "d"]]]


def test_padded_batch_refuses_an_array_longer_than_its_padded_shape():
    with pytest.raises(ValueError) as error:
        list(Dataset.range(1, 5).map(filled).padded_batch(4, padded_shapes=(3,)))
    assert str(error.value) == ("Dataset.padded_batch: an array at element of shape (4,) is "
                                "larger than its padded shape (3,)")
    with pytest.raises(ValueError) as error:
        list(Dataset.range(1, 3).map(lambda x: (filled(x), x)).padded_batch(
            2, padded_shapes=((2,),)))
    assert str(error.value).startswith("Dataset.padded_batch: padded_shapes must have the "
                                       "structure of the elements")
    with pytest.raises(ValueError, match="Dataset.padded_batch: batch_size must be a positive"):
        Dataset.range(3).padded_batch(0)


def test_unbatch_undoes_batch():
    pairs = Dataset.zip(Dataset.range(5), Dataset.range(5).map(lambda x: np.full(2, x)))
    assert values(pairs.batch(2).unbatch()) == values(pairs)
    assert values(Dataset.from_tensor_slices(np.arange(6).reshape(1, 2, 3)).unbatch()) == [
        [0, 1, 2], [3, 4, 5]]
    uneven = Dataset.zip(Dataset.range(3).batch(3), Dataset.range(2).batch(2))
    with pytest.raises(ValueError) as error:
        list(uneven.unbatch())
    assert str(error.value) == ("Dataset.unbatch: the arrays of an element must have the same "
                                "first dimension; element[0] has 3, element[1] has 2")
    with pytest.raises(ValueError, match=r"element is a scalar \(np.int64\(0\)\)"):
        list(Dataset.range(2).unbatch())


def test_window_gives_datasets_of_size_shift_and_stride():
    dataset = Dataset.range(7)
    assert windows(dataset.window(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert windows(dataset.window(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert windows(dataset.window(3, 2, 1, drop_remainder=True)) == [
        [0, 1, 2], [2, 3, 4], [4, 5, 6]]
    assert windows(dataset.window(3, 1, 2, drop_remainder=True)) == [
        [0, 2, 4], [1, 3, 5], [2, 4, 6]]
    assert windows(dataset.window(3, 1)) == [
        [0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6], [5, 6], [6]]
    assert windows(Dataset.range(10).window(2, shift=4)) == [[0, 1], [4, 5], [8, 9]]
    assert windows(Dataset.range(0).window(2)) == []
    with pytest.raises(ValueError, match="Dataset.window: shift must be a positive int"):
        dataset.window(2, shift=0)


def test_window_of_structured_elements_is_a_structure_of_datasets():
    pairs = Dataset.zip(Dataset.range(1, 5), Dataset.range(5, 9))
    first, second = list(pairs.window(2))
    assert isinstance(first, tuple) and all(isinstance(part, Dataset) for part in first)
    assert (values(first[0]), values(first[1])) == ([1, 2], [5, 6])
    assert values(second[1]) == values(second[1]) == [7, 8]   # a window iterates again
    batched = pairs.window(3, 1, drop_remainder=True).flat_map(
        lambda a, b: Dataset.zip(a.batch(3), b.batch(3)))
    assert values(batched) == [([1, 2, 3], [5, 6, 7]), ([2, 3, 4], [6, 7, 8])]
    named = Dataset.zip({"x": Dataset.range(3)}).window(2)
    assert [values(window["x"]) for window in named] == [[0, 1], [2]]


def test_docstring_examples_hold():
    for module in (autotrace.data.combining, autotrace.data.windows):
        results = doctest.testmod(module, extraglobs={"Dataset": Dataset, "np": np})
        assert results.attempted >= 4 and results.failed == 0
