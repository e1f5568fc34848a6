"""The threads of autotrace.data: `prefetch` fills a queue from a background thread,
`map(num_parallel_calls=k)` runs the function on k threads, keeping the input order, and
`WorkerPool` is the pool of threads that map and interleave run their calls on.

Every thread here is a daemon thread: a thread stuck in a call that never returns (a source
waiting for data nobody will send) must not keep the process from exiting, which the
non-daemon threads of concurrent.futures.ThreadPoolExecutor would (they are joined at exit).
"""
from __future__ import annotations

import concurrent.futures
import queue
import threading
from typing import Callable, Iterator

_END = object()  # what a finished iterator gives next(iterator, _END)


class WorkerPool:
    """`threads` daemon threads named `name_0`, `name_1`, ... that run submitted calls in
    turn. `shutdown` cancels the calls not started and returns at once; each thread ends when
    its current call returns."""

    def __init__(self, threads: int, name: str):
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        self._shut = False
        self._workers = [threading.Thread(target=self._work, name=f"{name}_{index}",
                                          daemon=True) for index in range(threads)]
        for worker in self._workers:
            worker.start()

    def submit(self, function: Callable, *args) -> concurrent.futures.Future:
        """A future of function(*args), run on one of the threads (cancelled after shutdown)."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        if self._shut:
            future.cancel()
        else:
            self._calls.put((future, function, args))
        return future

    def _work(self) -> None:
        while True:
            call = self._calls.get()
            if call is None:
                return
            future, function, args = call
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = function(*args)
            except BaseException as error:  # noqa: BLE001 - handed to whoever waits on it
                future.set_exception(error)
            else:
                future.set_result(result)

    def shutdown(self) -> None:
        self._shut = True
        while True:
            try:
                call = self._calls.get_nowait()
            except queue.Empty:
                break
            if call is not None:
                call[0].cancel()
        for _ in self._workers:
            self._calls.put(None)


class _Places:
    """A count of free places that a producer thread takes one at a time and the consumer
    gives back; a wait for a place ends, with False, once the consumer has stopped."""

    def __init__(self, count: int):
        self._free, self._stopped = count, False
        self._changed = threading.Condition()

    def take(self) -> bool:
        with self._changed:
            self._changed.wait_for(lambda: self._free or self._stopped)
            if self._stopped:
                return False
            self._free -= 1
            return True

    def give(self) -> None:
        with self._changed:
            self._free += 1
            self._changed.notify()

    def stop(self) -> None:
        with self._changed:
            self._stopped = True
            self._changed.notify_all()


def close_iterator(iterator: Iterator) -> None:
    """Close a generator (running its `finally` blocks); other iterators have nothing to do."""
    close = getattr(iterator, "close", None)
    if close is not None:
        close()


def _prefetched(elements: Iterator, size: int) -> Iterator:
    """`elements`, produced by a thread into a queue of `size`; see Dataset.prefetch."""
    slots: queue.Queue = queue.Queue(maxsize=size)
    stop = threading.Event()

    def offer(item) -> bool:
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for element in elements:
                if not offer((element, None)):
                    return
            offer((_END, None))
        except BaseException as error:  # noqa: BLE001 - handed to the consumer, raised there
            offer((_END, error))
        finally:
            close_iterator(elements)

    producer = threading.Thread(target=produce, name="autotrace-data-prefetch", daemon=True)
    producer.start()
    try:
        while True:
            element, error = slots.get()
            if error is not None:
                raise error
            if element is _END:
                return
            yield element
    finally:
        # No join: the producer may be inside the pipeline (a generator that sleeps, a slow
        # map), and cannot be interrupted there; it sees `stop` and ends when that returns.
        stop.set()


def _mapped_on_threads(elements: Iterator, map_one: Callable, threads: int) -> Iterator:
    """map_one of each element, up to `threads` calls running at once, results in order, each
    given as soon as it and those before it are done. The input is read on a thread of its
    own (one thread: a pipeline is not safe to share between threads), so that a slow input
    does not hold back results already made. An error, of map_one or of the input, is raised
    at its place in the order, after every element before it."""
    pool = WorkerPool(threads, "autotrace-data-map")
    places = _Places(threads)  # calls submitted and not yet given to the consumer
    calls: queue.SimpleQueue = queue.SimpleQueue()  # (future, None), then (_END, error)

    def read_input() -> None:
        try:
            while places.take():
                element = next(elements, _END)
                if element is _END:
                    break
                calls.put((pool.submit(map_one, element), None))
            calls.put((_END, None))
        except BaseException as error:  # noqa: BLE001 - raised by the consumer, in its place
            calls.put((_END, error))
        finally:
            close_iterator(elements)

    threading.Thread(target=read_input, name="autotrace-data-map-input", daemon=True).start()
    try:
        while True:
            call, error = calls.get()
            if call is _END:
                if error is not None:
                    raise error
                return
            result = call.result()
            places.give()
            yield result
    finally:
        places.stop()
        pool.shutdown()
