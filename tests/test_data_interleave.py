"""Dataset.interleave with num_parallel_calls: the one-thread order exactly when deterministic
(elements and errors), the same elements when not, the cycle's datasets really read at once,
errors raised with their traceback and the input element named, nothing lost at epoch ends,
and no thread or open dataset left behind. Also prefetch's thread running ahead."""
import collections
import gc
import threading
import time
import traceback

import numpy as np
import pytest

from autotrace.summary import records as tfrecords
from autotrace.data import AUTOTUNE, Dataset, TextLineDataset, TFRecordDataset
from autotrace.data.interleave import THREAD_PREFIX


def _threads_named(prefix: str, wait: float = 5.0) -> list:
    """The threads named `prefix...` still alive after waiting up to `wait` seconds for them
    to end (a pool thread ends once it sees the pool shut down)."""
    deadline = time.monotonic() + wait
    while True:
        alive = [t for t in threading.enumerate() if t.name.startswith(prefix)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.01)


def _elements_and_error(dataset) -> tuple[list, str | None]:
    """Every element given before the iteration ended, and the error that ended it."""
    given = []
    try:
        for element in dataset:
            given.append(element.tolist() if isinstance(element, np.ndarray) else element)
    except Exception as error:  # noqa: BLE001 - compared, not swallowed
        return given, f"{type(error).__name__}: {error}"
    return given, None


def _numbers(lengths: dict):
    """map_func: input element n gives the numbers 1000 n, 1000 n + 1, ... (lengths[n] of
    them, default 3); a length -k gives k numbers, then raises."""
    def make(n):
        n = int(n)
        if lengths.get(n, 3) < 0:
            def failing():
                yield from range(1000 * n, 1000 * n - lengths[n])
                raise RuntimeError(f"dataset {n} failed")
            return Dataset.from_generator(failing)
        return Dataset.range(1000 * n, 1000 * n + lengths.get(n, 3))
    return make


SCENARIOS = {
    "even": ({}, 5, 2, 1),
    "uneven blocks": ({0: 7, 1: 1, 2: 0, 3: 4, 4: 2}, 5, 2, 3),
    "exactly a block": ({0: 2, 1: 4, 2: 2}, 3, 2, 2),
    "wide cycle": ({1: 9, 3: 0}, 6, 4, 1),
    "cycle of one": ({0: 2, 2: 5}, 4, 1, 2),
    "more places than inputs": ({}, 2, 5, 2),
    "a dataset fails": ({0: 5, 2: -2, 3: 6}, 5, 2, 2),
    # Datasets longer than the chunks that threads read ahead (CHUNK_ELEMENTS).
    "longer than a chunk": ({0: 150, 1: 64, 2: 65, 3: 0, 4: 130, 5: 128}, 6, 3, 5),
    "fails after a chunk": ({0: 200, 1: -70, 2: 90}, 3, 3, 1),
}


@pytest.mark.parametrize("threads", [1, 2, 3, AUTOTUNE])
@pytest.mark.parametrize("lengths, inputs, cycle_length, block_length", SCENARIOS.values(),
                         ids=SCENARIOS.keys())
def test_deterministic_parallel_interleave_is_the_one_thread_order(
        lengths, inputs, cycle_length, block_length, threads):
    make = _numbers(lengths)
    threads = threads if threads == AUTOTUNE else min(threads, cycle_length)
    one_thread = Dataset.range(inputs).interleave(make, cycle_length, block_length)
    parallel = Dataset.range(inputs).interleave(make, cycle_length, block_length,
                                                num_parallel_calls=threads,
                                                deterministic=True)
    expected = _elements_and_error(one_thread)
    assert _elements_and_error(parallel) == expected
    assert _threads_named(THREAD_PREFIX) == []


def test_parallel_interleave_matches_the_tf_data_documentation_example():
    dataset = Dataset.range(1, 6).interleave(
        lambda x: Dataset.from_tensor_slices(np.full(6, x)), cycle_length=2, block_length=4,
        num_parallel_calls=2)
    assert [int(x) for x in dataset] == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3,
                                         4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5]


@pytest.mark.parametrize("block_length", [1, 3])
def test_nondeterministic_interleave_gives_the_same_elements(block_length):
    lengths = {0: 40, 1: 3, 2: 0, 3: 150, 4: 1, 5: 17, 6: 30}
    make = _numbers(lengths)
    dataset = Dataset.range(7).interleave(make, cycle_length=3, block_length=block_length,
                                          num_parallel_calls=3, deterministic=False)
    given = [int(x) for x in dataset]
    expected = [int(x) for x in Dataset.range(7).interleave(make, 3, block_length)]
    assert collections.Counter(given) == collections.Counter(expected)
    assert len(given) == sum(lengths.values())
    for n in range(7):                            # each dataset's own order is kept
        assert [x for x in given if x // 1000 == n] == list(range(1000 * n,
                                                                  1000 * n + lengths[n]))


def test_nondeterministic_interleave_raises_a_datasets_error_after_giving_what_came_before():
    dataset = Dataset.range(4).interleave(_numbers({1: -2}), cycle_length=2,
                                          num_parallel_calls=2, deterministic=False)
    given, error = _elements_and_error(dataset)
    assert error == "RuntimeError: dataset 1 failed"
    assert {1000, 1001} <= set(given)


def test_the_cycles_datasets_are_read_at_once():
    # The first place's dataset can give its second element only after the second place's
    # dataset has given its first one: on one thread, in this order, that never happens.
    second_started = threading.Event()

    def first():
        yield "a0"
        if not second_started.wait(30.0):
            raise AssertionError("the second dataset was not read while the first one waited")
        yield "a1"

    def second():
        second_started.set()
        yield "b0"
        yield "b1"
    sources = {"a": first, "b": second}
    dataset = Dataset.from_tensor_slices(["a", "b"]).interleave(
        lambda name: Dataset.from_generator(sources[str(name)]), cycle_length=2,
        block_length=2, num_parallel_calls=2)
    assert [str(x) for x in dataset] == ["a0", "a1", "b0", "b1"]


def test_an_error_in_a_worker_keeps_its_traceback_and_names_the_input_element(tmp_path):
    def read_shard(name):
        def lines():
            for line in TextLineDataset(name):
                if line == "bad":
                    raise ValueError(f"cannot parse {line!r}")
                yield line
        return Dataset.from_generator(lines)

    names = [str(tmp_path / f"{i}.txt") for i in range(3)]
    for name, text in zip(names, ["a\nb\n", "c\nbad\n", "d\ne\n"]):
        open(name, "w").write(text)
    dataset = Dataset.from_tensor_slices(names).interleave(read_shard, cycle_length=3,
                                                           num_parallel_calls=3)
    given = []
    with pytest.raises(ValueError) as raised:
        for line in dataset:
            given.append(str(line))
    assert given == ["a", "c", "d", "b"]
    assert str(raised.value) == "cannot parse 'bad'"
    assert raised.value.__notes__ == [
        f"(in Dataset.interleave, reading the dataset of input element {names[1]!r})"]
    frames = [frame.name for frame in traceback.extract_tb(raised.value.__traceback__)]
    assert frames[-1] == "lines" and "_read" in frames   # raised in lines(), in a worker


def test_a_corrupt_file_among_parallel_reads_names_itself_after_the_records_before_it(tmp_path):
    good = tmp_path / "good.tfrecord"
    bad = tmp_path / "bad.tfrecord"
    good.write_bytes(b"".join(tfrecords.frame_record(r) for r in [b"g1", b"g2", b"g3"]))
    framed = b"".join(tfrecords.frame_record(r) for r in [b"b1", b"b2"])
    bad.write_bytes(framed[:-1])
    dataset = TFRecordDataset([str(good), str(bad)], num_parallel_reads=2)
    given, error = _elements_and_error(dataset)
    assert given == [b"g1", b"b1", b"g2"]
    assert error == (f"ValueError: {bad}: the record at byte 18 is cut off: it holds 2 bytes "
                     f"of data, the file ends 5 bytes after its header; the file is truncated")


@pytest.mark.parametrize("deterministic", [True, False])
def test_nothing_is_lost_at_epoch_ends(tmp_path, deterministic):
    names = []
    for shard, text in enumerate([b"1\n2\n3\n", b"4\n5", b"", b"6\n7\n8\n9\n"]):
        path = tmp_path / f"{shard}.txt"
        path.write_bytes(text)
        names.append(str(path))
    lines = Dataset.from_tensor_slices(names).interleave(
        TextLineDataset, cycle_length=2, block_length=2, num_parallel_calls=2,
        deterministic=deterministic).map(int)
    batches = [b.tolist() for b in lines.repeat(3).batch(4)]
    epoch = [1, 2, 4, 5, 3, 6, 7, 8, 9]
    if deterministic:
        assert batches == [[1, 2, 4, 5], [3, 6, 7, 8], [9, 1, 2, 4], [5, 3, 6, 7],
                           [8, 9, 1, 2], [4, 5, 3, 6], [7, 8, 9]]
        assert sum(batches, []) == epoch * 3
    else:
        assert sorted(sum(batches, [])) == sorted(epoch * 3)
        assert [len(b) for b in batches] == [4] * 6 + [3]


@pytest.mark.parametrize("how", ["break", "close", "del", "exhaust", "error"])
def test_no_thread_and_no_open_dataset_is_left_behind(how):
    opened, closed = [], []

    def numbers(n):
        def generate():
            opened.append(int(n))
            try:
                for i in range(1000):
                    if how == "error" and n == 2 and i == 3:
                        raise RuntimeError("stop here")
                    yield 1000 * int(n) + i
            finally:
                closed.append(int(n))
        return Dataset.from_generator(generate)

    assert _threads_named("autotrace-data") == []     # those of earlier tests have ended
    before = threading.active_count()
    dataset = Dataset.range(6).interleave(numbers, cycle_length=3, block_length=4,
                                          num_parallel_calls=2)
    iterator = iter(dataset)
    if how == "exhaust":
        assert len(list(iterator)) == 6000
    elif how == "error":
        with pytest.raises(RuntimeError, match="stop here"):
            list(iterator)
    else:
        for _ in range(10):
            next(iterator)
        if how == "break":                            # a for loop left with break
            for _ in iterator:
                break
            iterator.close()
        elif how == "close":
            iterator.close()
        else:
            del iterator
            gc.collect()
    assert _threads_named(THREAD_PREFIX) == []
    assert threading.active_count() == before
    deadline = time.monotonic() + 5.0
    while sorted(closed) != sorted(opened) and time.monotonic() < deadline:
        time.sleep(0.01)                              # a turn being read closes its dataset
    assert sorted(closed) == sorted(opened)
    assert len(opened) >= 3


def test_interleave_argument_errors():
    with pytest.raises(ValueError) as raised:
        Dataset.range(2).interleave(lambda x: Dataset.range(1), 2, num_parallel_calls=0)
    assert str(raised.value) == ("Dataset.interleave: num_parallel_calls must be a positive int; "
                                 "got 0")
    with pytest.raises(ValueError) as raised:
        Dataset.range(2).interleave(lambda x: Dataset.range(1), 2, num_parallel_calls=3)
    assert str(raised.value) == ("Dataset.interleave: num_parallel_calls=3 is more than "
                                 "cycle_length=2, as in tf.data an error: only cycle_length "
                                 "datasets are open to be read at once")
    with pytest.raises(TypeError) as raised:
        Dataset.range(2).interleave(lambda x: Dataset.range(1), 2, num_parallel_calls=2,
                                    deterministic="yes")
    assert str(raised.value) == ("Dataset.interleave: deterministic must be True, False or None; "
                                 "got 'yes'")
    dataset = Dataset.range(3).interleave(lambda x: Dataset.range(2) if x < 2 else [x],
                                          cycle_length=2, num_parallel_calls=2)
    given, error = _elements_and_error(dataset)
    assert given == [0, 0, 1, 1]
    assert error == ("TypeError: Dataset.interleave: map_func must return a Dataset; <lambda> "
                     "returned list")
    assert repr(dataset).endswith(".interleave(<lambda>, 2, 1, num_parallel_calls=2)>")


def test_an_error_in_the_input_is_raised_where_the_one_thread_order_needs_that_input():
    def names():
        yield 0
        yield 1
        raise OSError("listing failed")
    make = _numbers({0: 1, 1: 4})
    one_thread = Dataset.from_generator(names).interleave(make, cycle_length=2)
    parallel = Dataset.from_generator(names).interleave(make, cycle_length=2,
                                                        num_parallel_calls=2)
    expected = ([0, 1000, 1001], "OSError: listing failed")
    assert _elements_and_error(one_thread) == expected
    assert _elements_and_error(parallel) == expected


# --- prefetch -------------------------------------------------------------------------------------

def test_prefetch_produces_ahead_on_another_thread():
    # The source can give its third element only once the consumer has taken the first and is
    # holding off: only a producer running on its own thread, ahead of the consumer, gets there.
    producer_threads, third_reached = [], threading.Event()

    def source():
        for n in range(4):
            producer_threads.append(threading.current_thread())
            if n == 2:
                third_reached.set()
            yield n
    iterator = iter(Dataset.from_generator(source).prefetch(3))
    assert int(next(iterator)) == 0
    assert third_reached.wait(30.0), "the prefetch thread did not produce ahead"
    assert [int(n) for n in iterator] == [1, 2, 3]
    assert threading.current_thread() not in producer_threads
    assert {thread.name for thread in producer_threads} == {"autotrace-data-prefetch"}
