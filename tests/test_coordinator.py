"""autotrace.Coordinator, FIFOQueue and QueueRunner: TensorFlow's "Threading and Queues",
with real threads synchronised by events (no sleeps)."""
import itertools
import threading

import numpy as np
import pytest

import autotrace
from autotrace import Coordinator, FIFOQueue, OutOfRangeError, QueueClosedError, QueueRunner

WAIT = 5  # seconds: a bound that only a broken implementation reaches


def started(target, *args) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def test_workers_loop_until_a_stop_is_requested():
    coord = Coordinator()
    counts = [0, 0]
    looping = [threading.Event(), threading.Event()]

    def work(index):
        while not coord.should_stop():
            counts[index] += 1
            looping[index].set()
            coord.wait_for_stop(WAIT)
    threads = [started(work, 0), started(work, 1)]
    assert all(event.wait(WAIT) for event in looping) and not coord.should_stop()
    coord.request_stop()
    coord.join(iter(threads), stop_grace_period_secs=WAIT)  # any iterable of threads
    assert coord.should_stop() and coord.joined
    assert not any(thread.is_alive() for thread in threads) and counts == [1, 1]


def test_join_raises_the_first_exception_a_worker_reported():
    coord = Coordinator()
    first = ValueError("bad record 7")
    reported = threading.Event()

    def failing():
        with coord.stop_on_exception():
            raise first

    def failing_later():
        reported.wait(WAIT)
        with coord.stop_on_exception():
            raise KeyError("second")

    def stopping_cleanly():
        with coord.stop_on_exception():
            coord.wait_for_stop(WAIT)
    threads = [started(failing), started(failing_later), started(stopping_cleanly)]
    assert coord.wait_for_stop(WAIT)
    reported.set()
    with pytest.raises(ValueError) as error:
        coord.join(threads, stop_grace_period_secs=WAIT)
    assert error.value is first
    assert not any(thread.is_alive() for thread in threads)


def test_a_clean_stop_exception_is_not_raised():
    coord = Coordinator()
    coord.request_stop(OutOfRangeError("queue drained"))
    coord.join([])
    assert coord.should_stop()
    coord.clear_stop()
    assert not coord.should_stop()
    try:
        raise IndexError("as sys.exc_info()")
    except IndexError:
        import sys
        coord.request_stop(sys.exc_info())
    with pytest.raises(IndexError, match="as sys.exc_info"):
        coord.join()


def test_join_names_threads_that_do_not_stop():
    coord = Coordinator()
    release = threading.Event()
    stubborn = threading.Thread(target=release.wait, args=(WAIT,), name="stubborn",
                                daemon=True)
    stubborn.start()
    coord.register_thread(stubborn)
    coord.request_stop()
    with pytest.raises(RuntimeError) as error:
        coord.join(stop_grace_period_secs=0.01)
    assert str(error.value) == (
        "Coordinator stopped with threads still running: stubborn; make each thread end on "
        "coord.should_stop(), or give join a longer stop_grace_period_secs")
    release.set()
    stubborn.join(WAIT)
    coord.join(ignore_live_threads=True)


def test_a_closed_queue_gives_what_is_left_then_out_of_range():
    queue = FIFOQueue(capacity=2)
    queue.put(1)
    queue.put(2)
    with pytest.raises(TimeoutError, match=r"FIFOQueue.put: no room within 0.01 s"):
        queue.put(3, timeout=0.01)
    queue.close()
    with pytest.raises(QueueClosedError, match="FIFOQueue.put: the queue is closed"):
        queue.put(3)
    assert (queue.get(), list(queue)) == (1, [2])
    with pytest.raises(OutOfRangeError, match="FIFOQueue is closed and has no elements left"):
        queue.get()
    with pytest.raises(ValueError, match="FIFOQueue: capacity must be a positive int"):
        FIFOQueue(capacity=0)


def test_a_queue_runner_feeds_a_dataset_until_every_thread_is_done():
    queue = FIFOQueue(capacity=2)  # small: the threads wait for room
    sources = [iter(range(start, 30, 3)) for start in range(3)]
    runner = QueueRunner(queue, [source.__next__ for source in sources])
    coord = Coordinator()
    threads = runner.create_threads(coord, start=True)
    dataset = autotrace.data.Dataset.from_generator(lambda: queue).batch(4)
    batches = list(dataset)
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=WAIT)
    assert [len(batch) for batch in batches] == [4] * 7 + [2]
    assert sorted(np.concatenate(batches).tolist()) == list(range(30))
    # each thread's elements keep their order
    elements = np.concatenate(batches).tolist()
    for start in range(3):
        assert [e for e in elements if e % 3 == start] == list(range(start, 30, 3))
    assert runner.exceptions_raised == [] and queue.closed


def test_a_stop_ends_threads_waiting_for_room_in_the_queue():
    queue = FIFOQueue(capacity=1)
    counter = itertools.count()
    runner = QueueRunner(queue, [lambda: next(counter)] * 2)  # never ends by itself
    coord = Coordinator()
    threads = runner.create_threads(coord, start=True)
    taken = [queue.get(timeout=WAIT) for _ in range(3)]
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=WAIT)
    assert not any(thread.is_alive() for thread in threads)
    assert len(set(taken)) == 3  # two threads: in the order their puts came


def test_an_error_in_an_enqueue_function_reaches_the_reader_and_join():
    queue = FIFOQueue()
    failure = OSError("cannot read shard 3")
    elements = iter([1, 2])

    def read():
        for element in elements:
            return element
        raise failure
    runner = QueueRunner(queue, [read])
    coord = Coordinator()
    threads = runner.create_threads(coord, start=True)
    with pytest.raises(RuntimeError) as error:
        list(autotrace.data.Dataset.from_generator(lambda: queue))
    assert error.value.__cause__ is failure
    with pytest.raises(OSError) as raised:
        coord.join(threads, stop_grace_period_secs=WAIT)
    assert raised.value is failure and runner.exceptions_raised == [failure]


def test_a_queue_runner_needs_functions():
    with pytest.raises(TypeError, match="QueueRunner: enqueue_functions must be a non-empty "
                                        "list of functions of no arguments; got \\[\\]"):
        QueueRunner(FIFOQueue(), [])
