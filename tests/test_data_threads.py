"""The threads of autotrace.data under stress: a map function that raises StopIteration, a
source that fails or waits while map and interleave run on threads, and leaving such loops
early. The workers are steered with events, never with sleeps: a timeout only turns a hang
into a failure."""
import gc
import os
import pathlib
import subprocess
import sys
import textwrap
import threading
import time
from typing import Callable

import pytest

from autotrace.data import Dataset

ROOT = pathlib.Path(__file__).resolve().parent.parent
HANG = 60.0  # seconds after which a wait that should end at once counts as a hang


def _finishes_within(seconds: float, function: Callable):
    """function()'s result, computed on another thread; fails (rather than hangs) if it takes
    longer than `seconds`."""
    result: list = []
    worker = threading.Thread(target=lambda: result.append(function()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still waiting after {seconds} s"
    return result[0]


def _threads_named(prefix: str, wait: float = HANG) -> list:
    """The threads named `prefix...` still alive after waiting up to `wait` seconds for them
    to end (a worker ends once its current call returns)."""
    deadline = time.monotonic() + wait
    while True:
        alive = [t for t in threading.enumerate() if t.name.startswith(prefix)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.01)


# --- StopIteration in the user's function -----------------------------------------------------

def stops_at_two(x):
    if x == 2:
        raise StopIteration
    return x


def _single(x):
    return Dataset.range(int(x), int(x) + 1)


def stops_opening_two(x):
    if x == 2:
        raise StopIteration
    return _single(x)


STOPPING = {
    "map": (lambda: Dataset.range(5).map(stops_at_two), "map", "stops_at_two"),
    "map, prefetch": (lambda: Dataset.range(5).map(stops_at_two).prefetch(2), "map",
                      "stops_at_two"),
    "map on threads": (lambda: Dataset.range(5).map(stops_at_two, num_parallel_calls=3),
                       "map", "stops_at_two"),
    "filter": (lambda: Dataset.range(5).filter(lambda x: bool(stops_at_two(x) + 1)),
               "filter", "<lambda>"),
    "interleave": (lambda: Dataset.range(5).interleave(stops_opening_two, cycle_length=1),
                   "interleave", "stops_opening_two"),
    "interleave on threads": (lambda: Dataset.range(5).interleave(
        stops_opening_two, cycle_length=1, num_parallel_calls=1), "interleave",
        "stops_opening_two"),
}


@pytest.mark.parametrize("make, method, name", STOPPING.values(), ids=STOPPING.keys())
def test_stop_iteration_in_the_function_is_an_error_naming_it(make, method, name):
    given = []
    with pytest.raises(RuntimeError) as raised:
        for x in make():
            given.append(int(x))
    assert given == [0, 1]
    assert str(raised.value) == (
        f"Dataset.{method}: {name} raised StopIteration, which would end the dataset early "
        f"without a word; raise another error, or end the dataset with take or filter")
    assert type(raised.value.__cause__) is StopIteration


# --- an error in the source of a map on threads ---------------------------------------------

@pytest.mark.parametrize("threads", [2, 3, 4, 8, 25])
def test_map_on_threads_gives_every_element_made_before_the_sources_error(threads):
    def source():
        yield from range(20)
        raise OSError("the source broke")

    given = []
    with pytest.raises(OSError, match="the source broke"):
        for x in Dataset.from_generator(source).map(lambda x: x * 10,
                                                    num_parallel_calls=threads):
            given.append(int(x))
    assert given == [10 * n for n in range(20)]


# --- a source that waits holds back nothing ready -------------------------------------------

def _waiting_source(first, release: threading.Event):
    """A generator function yielding `first`, then, once `release` is set, the rest."""
    def generate():
        yield from first[:1]
        assert release.wait(HANG), "the test never released the source"
        yield from first[1:]
    return generate


def test_map_on_threads_gives_what_is_ready_while_the_source_waits():
    release = threading.Event()
    dataset = Dataset.from_generator(_waiting_source([1, 2, 3], release)).map(
        lambda x: x * 10, num_parallel_calls=4)
    iterator = iter(dataset)
    try:
        assert int(_finishes_within(HANG / 2, lambda: next(iterator))) == 10
    finally:
        release.set()
    assert [int(x) for x in iterator] == [20, 30]


@pytest.mark.parametrize("deterministic", [True, False])
def test_interleave_gives_what_is_ready_while_its_input_waits(deterministic):
    release = threading.Event()
    dataset = Dataset.from_generator(_waiting_source([1, 2], release)).interleave(
        lambda n: Dataset.range(10 * int(n), 10 * int(n) + 2), cycle_length=2,
        num_parallel_calls=2, deterministic=deterministic)
    iterator = iter(dataset)
    try:
        assert int(_finishes_within(HANG / 2, lambda: next(iterator))) == 10
    finally:
        release.set()
    rest = [int(x) for x in iterator]            # tf.data's order: 10, 20, 11, 21
    assert (rest == [20, 11, 21]) if deterministic else sorted(rest) == [11, 20, 21]


@pytest.mark.parametrize("deterministic", [True, False])
def test_interleave_gives_what_a_dataset_has_read_while_it_waits(deterministic):
    release = threading.Event()
    dataset = Dataset.range(1).interleave(
        lambda n: Dataset.from_generator(_waiting_source(["a", "b", "c"], release)),
        cycle_length=1, block_length=3, num_parallel_calls=1, deterministic=deterministic)
    iterator = iter(dataset)
    try:
        assert str(_finishes_within(HANG / 2, lambda: next(iterator))) == "a"
    finally:
        release.set()
    assert [str(x) for x in iterator] == ["b", "c"]


# --- leaving a loop early -------------------------------------------------------------------

EXIT_SCRIPT = """
import sys, threading
from autotrace.data import Dataset

never = threading.Event()      # set by nobody: a call that waits on it never returns
stuck = threading.Event()      # set once a worker waits on `never`

def stuck_at_one(x):
    if x == 1:
        stuck.set()
        never.wait()
    return x

def dataset_stuck_after_one(n):
    def generate():
        yield int(n)
        stuck.set()
        never.wait()
        yield -1
    return Dataset.from_generator(generate)

if sys.argv[1] == "map":
    dataset = Dataset.range(10).map(stuck_at_one, num_parallel_calls=2)
else:
    dataset = Dataset.range(4).interleave(dataset_stuck_after_one, cycle_length=2,
                                          num_parallel_calls=2)
for x in dataset:
    print("got", int(x), flush=True)
    assert stuck.wait(60.0), "no worker got stuck"
    break
print("left the loop", flush=True)
"""


@pytest.mark.parametrize("kind", ["map", "interleave"])
def test_a_process_that_leaves_a_loop_early_exits(tmp_path, kind):
    script = tmp_path / "leave_early.py"
    script.write_text(textwrap.dedent(EXIT_SCRIPT))
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), environment.get("PYTHONPATH")]))
    try:
        finished = subprocess.run([sys.executable, str(script), kind], cwd=tmp_path,
                                  env=environment, capture_output=True, text=True,
                                  timeout=HANG * 2)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the process did not exit after leaving a loop over {kind} on threads")
    assert finished.stderr == "" and finished.returncode == 0
    assert finished.stdout == "got 0\nleft the loop\n"


@pytest.mark.parametrize("how", ["close", "del", "break", "error"])
def test_map_on_threads_leaves_no_thread_behind(how):
    assert _threads_named("autotrace-data") == []   # those of earlier tests have ended
    before = threading.active_count()
    release = threading.Event()

    def waits_at_five(x):
        if x == 5:
            assert release.wait(HANG), "the test never released the call"
            if how == "error":
                raise ValueError("five")
        return x

    iterator = iter(Dataset.range(100).map(waits_at_five, num_parallel_calls=3))
    assert [int(next(iterator)) for _ in range(4)] == [0, 1, 2, 3]
    if how == "close":
        iterator.close()
    elif how == "del":
        del iterator
        gc.collect()
    elif how == "break":
        for _ in iterator:
            break
        iterator.close()
    release.set()                   # the call at 5 returns; its worker ends then
    if how == "error":
        with pytest.raises(ValueError, match="five"):
            list(iterator)
    assert _threads_named("autotrace-data") == []
    assert threading.active_count() == before
