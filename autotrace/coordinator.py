"""Threads that stop together, and queues that threads fill: TensorFlow's "Threading and
Queues" (`tf.train.Coordinator`, `tf.train.QueueRunner`, `tf.queue.FIFOQueue`).

    queue = autotrace.FIFOQueue(capacity=32)
    runner = autotrace.QueueRunner(queue, [read_example] * 4)   # four reading threads
    coord = autotrace.Coordinator()
    threads = runner.create_threads(coord, start=True)
    dataset = autotrace.data.Dataset.from_generator(lambda: queue).batch(8)
    try:
        for x, y in dataset:           # ends when every reader is done and the queue empty
            step(x, y)
    finally:
        coord.request_stop()           # the readers stop, blocked ones too
        coord.join(threads)            # and an error in any of them is raised here

A `Coordinator` is a stop flag that threads share: each worker loops `while not
coord.should_stop()`, any thread may `request_stop()`, and `join` waits for the workers and
raises the first exception one of them reported (`with coord.stop_on_exception():`), so an
error in a worker is not lost in its thread.
"""
from __future__ import annotations

import collections
import contextlib
import threading
import time
from typing import Callable, Iterable, Iterator


class OutOfRangeError(Exception):
    """A closed queue has no elements left (TensorFlow's tf.errors.OutOfRangeError); a
    Coordinator takes it for a clean stop, not an error.

    Examples:
        >>> queue = autotrace.FIFOQueue(2)
        >>> queue.put(1.0); queue.close()
        >>> queue.get()
        1.0
        >>> try:
        ...     queue.get()
        ... except OutOfRangeError as error:
        ...     print(error)
        FIFOQueue is closed and has no elements left
    """


class QueueClosedError(Exception):
    """An element was put into a closed queue, or the queue was closed with
    cancel_pending_enqueues while a put waited for room.

    Examples:
        >>> queue = autotrace.FIFOQueue(2)
        >>> queue.close()
        >>> try:
        ...     queue.put(1.0)
        ... except QueueClosedError as error:
        ...     print(error)
        FIFOQueue.put: the queue is closed
    """


class Coordinator:
    """Coordinates the stop of a set of threads.

    Arguments:
        clean_stop_exception_types: exceptions that stop the threads without being an error
            (default: OutOfRangeError, what a drained queue raises): `request_stop(e)` with one
            of them stops, and `join` does not raise it.

    Examples:
        >>> coord = Coordinator()
        >>> def work():
        ...     with coord.stop_on_exception():
        ...         while not coord.should_stop():
        ...             raise ValueError("bad input")
        >>> thread = threading.Thread(target=work); thread.start()
        >>> coord.join([thread])
        Traceback (most recent call last):
        ValueError: bad input
    """

    def __init__(self, clean_stop_exception_types: tuple = (OutOfRangeError,)):
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._exception: BaseException | None = None
        self._registered: list[threading.Thread] = []
        self._joined = False

    def should_stop(self) -> bool:
        """Whether a stop was requested."""
        return self._stop.is_set()

    def request_stop(self, ex: BaseException | tuple | None = None) -> None:
        """Ask the threads to stop. `ex` (an exception, or sys.exc_info()) is the reason:
        the first one reported, unless a clean-stop type, is raised by `join`."""
        if isinstance(ex, tuple):
            ex = ex[1]
        with self._lock:
            if ex is not None and self._exception is None and \
                    not isinstance(ex, self._clean_stop_exception_types):
                self._exception = ex
            self._stop.set()

    def clear_stop(self) -> None:
        """Forget a stop request and the exception reported, so the threads can start again."""
        with self._lock:
            self._stop.clear()
            self._exception = None
            self._joined = False

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        """Wait until a stop is requested (at most `timeout` seconds); whether it was."""
        return self._stop.wait(timeout)

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A block whose exception is reported to the coordinator (and stops the threads)
        instead of propagating: the body of a worker thread."""
        try:
            yield
        except Exception as error:
            self.request_stop(error)

    def register_thread(self, thread: threading.Thread) -> None:
        """Have `join` wait for `thread` too."""
        with self._lock:
            self._registered.append(thread)

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        """Raise the exception reported to request_stop, if any."""
        with self._lock:
            exception = self._exception
        if exception is not None:
            raise exception

    def join(self, threads: Iterable[threading.Thread] | None = None,
             stop_grace_period_secs: float = 120, ignore_live_threads: bool = False) -> None:
        """Wait until every thread (`threads` and those registered) has ended, or a stop is
        requested; then give those still running `stop_grace_period_secs` to end. Raise the
        exception a thread reported to request_stop, if any; else, if threads are still
        running, a RuntimeError naming them (unless `ignore_live_threads`).
        """
        given = list(threads or ())
        with self._lock:
            threads = given + [thread for thread in self._registered if thread not in given]
        while any(thread.is_alive() for thread in threads) and not self.wait_for_stop(0.05):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._joined = True
        self.raise_requested_exception()
        alive = [thread.name for thread in threads if thread.is_alive()]
        if alive and not ignore_live_threads:
            raise RuntimeError(f"Coordinator stopped with threads still running: "
                               f"{', '.join(alive)}; make each thread end on "
                               f"coord.should_stop(), or give join a longer "
                               f"stop_grace_period_secs")


class FIFOQueue:
    """A first-in first-out queue that threads put elements into and take them from, and that
    can be closed: after `close()`, `get` takes the elements left, then raises
    OutOfRangeError. Iterating over it takes elements until then, so
    `Dataset.from_generator(lambda: queue)` reads it as a dataset.

    Arguments:
        capacity: how many elements it holds before `put` waits for room (None: no limit).

    Examples:
        >>> queue = FIFOQueue(capacity=2)
        >>> queue.put(1.0); queue.put(2.0); queue.close()
        >>> queue.get()
        1.0
        >>> list(queue)                          # what is left, then the end
        [2.0]
    """

    def __init__(self, capacity: int | None = None):
        if capacity is not None and (isinstance(capacity, bool) or not isinstance(capacity, int)
                                     or capacity < 1):
            raise ValueError(f"FIFOQueue: capacity must be a positive int or None; got "
                             f"{capacity!r}")
        self._capacity = capacity
        self._items: collections.deque = collections.deque()
        self._changed = threading.Condition()
        self._closed = self._cancelled = False
        self._error: BaseException | None = None

    def put(self, element, timeout: float | None = None) -> None:
        """Append `element`, waiting for room (at most `timeout` seconds: TimeoutError)."""
        with self._changed:
            if self._closed:
                raise QueueClosedError("FIFOQueue.put: the queue is closed")
            if not self._changed.wait_for(
                    lambda: self._cancelled or self._capacity is None
                    or len(self._items) < self._capacity, timeout):
                raise TimeoutError(f"FIFOQueue.put: no room within {timeout} s")
            if self._cancelled:
                raise QueueClosedError("FIFOQueue.put: the queue was closed with "
                                       "cancel_pending_enqueues while this put waited")
            self._items.append(element)
            self._changed.notify_all()

    def get(self, timeout: float | None = None):
        """The first element, waiting for one (at most `timeout` seconds: TimeoutError).
        Raises OutOfRangeError once the queue is closed and empty, or the error it was closed
        with."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._items or self._closed, timeout):
                raise TimeoutError(f"FIFOQueue.get: no element within {timeout} s")
            if self._items:
                element = self._items.popleft()
                self._changed.notify_all()
                return element
            if self._error is not None:
                raise RuntimeError("FIFOQueue.get: a thread filling the queue failed; its "
                                   "error is above") from self._error
            raise OutOfRangeError("FIFOQueue is closed and has no elements left")

    def close(self, cancel_pending_enqueues: bool = False,
              error: BaseException | None = None) -> None:
        """No more puts; `get` takes what is left, then raises OutOfRangeError (or a
        RuntimeError from `error`, the failure of what was filling it). With
        `cancel_pending_enqueues`, puts waiting for room raise QueueClosedError."""
        with self._changed:
            self._closed = True
            self._cancelled = self._cancelled or cancel_pending_enqueues
            if error is not None and self._error is None:
                self._error = error
            self._changed.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed

    def size(self) -> int:
        with self._changed:
            return len(self._items)

    def __iter__(self) -> Iterator:
        while True:
            try:
                yield self.get()
            except OutOfRangeError:
                return


class QueueRunner:
    """Threads that fill a queue: one per enqueue function, each calling its function and
    putting the result into `queue` until the function raises StopIteration or
    OutOfRangeError, or the coordinator stops. When the last one ends, the queue is closed, so
    that its reader ends too.

    An error in an enqueue function stops the coordinator (join raises it) and closes the
    queue with it: a reader gets a RuntimeError from it rather than a dataset that merely ends
    early.

    Arguments:
        queue: the FIFOQueue.
        enqueue_functions: functions of no arguments, each giving the next element
            (`iter(source).__next__` reads an iterable).

    Examples:
        >>> queue = autotrace.FIFOQueue(capacity=4)
        >>> runner = QueueRunner(queue, [iter(range(3)).__next__])
        >>> coordinator = autotrace.Coordinator()
        >>> threads = runner.create_threads(coordinator, start=True)
        >>> list(queue)                          # closed by the runner once range(3) is read
        [0, 1, 2]
        >>> coordinator.request_stop(); coordinator.join(threads)
    """

    def __init__(self, queue: FIFOQueue, enqueue_functions: list[Callable]):
        if not enqueue_functions or not all(callable(f) for f in enqueue_functions):
            raise TypeError(f"QueueRunner: enqueue_functions must be a non-empty list of "
                            f"functions of no arguments; got {enqueue_functions!r}")
        self.queue = queue
        self.enqueue_functions = list(enqueue_functions)
        self.exceptions_raised: list[BaseException] = []
        self._lock = threading.Lock()
        self._running = 0

    def create_threads(self, coord: Coordinator | None = None, daemon: bool = False,
                       start: bool = False) -> list[threading.Thread]:
        """The threads that run the enqueue functions (and, with `coord`, one that cancels
        the queue's pending puts when a stop is requested), registered with `coord`; started
        if `start`."""
        with self._lock:
            self._running += len(self.enqueue_functions)
        threads = [threading.Thread(target=self._run, args=(function, coord), daemon=daemon,
                                    name=f"QueueRunner_{index}")
                   for index, function in enumerate(self.enqueue_functions)]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(coord,),
                                            daemon=True, name="QueueRunner_close_on_stop"))
            for thread in threads:
                coord.register_thread(thread)
        if start:
            for thread in threads:
                thread.start()
        return threads

    def _run(self, function: Callable, coord: Coordinator | None) -> None:
        try:
            while coord is None or not coord.should_stop():
                try:
                    element = function()
                except (StopIteration, OutOfRangeError):
                    return
                self.queue.put(element)
        except QueueClosedError:
            return  # closed by a stop while waiting for room
        except Exception as error:
            with self._lock:
                self.exceptions_raised.append(error)
            self.queue.close(cancel_pending_enqueues=True, error=error)
            if coord is not None:
                coord.request_stop(error)
            else:
                raise
        finally:
            with self._lock:
                self._running -= 1
                last = self._running == 0
            if last:
                self.queue.close()

    def _close_on_stop(self, coord: Coordinator) -> None:
        coord.wait_for_stop()
        self.queue.close(cancel_pending_enqueues=True)
