"""`Dataset.interleave`'s steps: on the consumer's thread, or with the datasets of the cycle
read on background threads (`num_parallel_calls`), in tf.data's order or as elements come.

The order is tf.data's InterleaveDataset: `cycle_length` places, visited in turn; at a visit
the place's dataset gives up to `block_length` elements, or is dropped (the visit ends) when it
ends; an empty place opens the dataset of the next input element and reads it at once.

With threads, each open dataset reads elements ahead on a pool thread while the consumer
takes those of other places, and the datasets of the next input elements are opened ahead, in
input order, on a thread of their own, so that a place that ends is refilled without a wait.
An element is given as soon as the order allows, whatever waits elsewhere (a slow input, a
dataset of another place). An error is raised where the one-thread order would raise it, after
the elements before it, with its own traceback.
"""
from __future__ import annotations

import collections
import concurrent.futures
import queue
import threading
from typing import Callable, Iterator

import numpy as np

from .threads import _END, WorkerPool, close_iterator

THREAD_PREFIX = "autotrace-data-interleave"
CHUNK_ELEMENTS = 64  # each open dataset reads up to max(block_length, this) elements ahead


def interleaved(elements: Iterator, open_element: Callable[[object], Iterator],
                cycle_length: int, block_length: int) -> Iterator:
    """The one-thread interleave; `open_element` makes the iterator of an input element."""
    cycle: list = [None] * cycle_length
    sources: list = [None] * cycle_length   # the input element each place reads
    position, taken, open_count, input_done = 0, 0, 0, False
    while not input_done or open_count:
        current = cycle[position]
        if current is not None:
            try:
                element = next(current, _END)
            except Exception as error:
                raise _noted(error, sources[position])
            if element is not _END:
                yield element
                taken += 1
                if taken == block_length:
                    position, taken = (position + 1) % cycle_length, 0
                continue
            cycle[position] = None  # this one ended: move on, refill its place next time
            open_count -= 1
        elif not input_done:
            source = next(elements, _END)
            if source is _END:
                input_done = True
            else:
                try:
                    cycle[position], sources[position] = open_element(source), source
                except Exception as error:
                    raise _noted(error, source)
                open_count += 1
            continue
        position, taken = (position + 1) % cycle_length, 0


class _Reader:
    """One dataset of the cycle, read ahead on a pool thread into a buffer of up to
    `chunk_size` elements. Each element can be taken as soon as it is read, so a dataset that
    waits for its next element holds back none read before. A pool thread reads until the
    buffer is full, then gives its thread back; taking half of the buffer starts it again (one
    hand-over between threads per many elements, not per element). The dataset is never read
    by two threads at once. The buffer and flags are guarded by `changed`, the condition the
    whole interleave shares and is told of every element read."""

    def __init__(self, iterator: Iterator, source, chunk_size: int,
                 changed: threading.Condition, pool: WorkerPool):
        self.iterator, self.source = iterator, source
        self._chunk_size, self._changed, self._pool = chunk_size, changed, pool
        self.buffer: collections.deque = collections.deque()  # read, not yet given
        self.ended = False                   # whether the dataset has ended (or raised)
        self.error: Exception | None = None  # what it raised after the buffer's elements
        self._reading: concurrent.futures.Future | None = None  # the read running or due
        self._closed = False

    def read_more(self) -> None:
        """Start reading on a pool thread, unless one is, or the buffer is over half full.
        Called with `changed` held."""
        if self._reading is None and not (self.ended or self._closed) \
                and len(self.buffer) <= self._chunk_size // 2:
            self._reading = self._pool.submit(self._read)

    def _read(self) -> None:
        while True:
            with self._changed:
                closed = self._closed
                if closed or len(self.buffer) >= self._chunk_size:
                    self._reading = None
                    break
            try:
                element, error = next(self.iterator, _END), None
            except Exception as raised:  # noqa: BLE001 - raised by the consumer, in its place
                element, error = _END, _noted(raised, self.source)
            with self._changed:
                if element is _END:
                    self.ended, self.error, self._reading = True, error, None
                else:
                    self.buffer.append(element)
                self._changed.notify_all()
            if element is _END:
                return
        if closed:  # the consumer left while this thread was reading: it closes the dataset
            close_iterator(self.iterator)

    def next_element(self):
        """The next element, waiting until it is read; _END once the dataset has ended, or
        the error it ended with raised."""
        with self._changed:
            while not self.buffer:
                if self.ended:
                    if self.error is not None:
                        raise self.error
                    return _END
                self.read_more()
                self._changed.wait()
            element = self.buffer.popleft()
            self.read_more()
            return element

    def take_buffer(self) -> tuple[list, bool]:
        """(every element read and not given, whether the dataset ended after them); called
        with `changed` held."""
        elements, ended = list(self.buffer), self.ended
        self.buffer.clear()
        self.read_more()
        return elements, ended

    def close(self) -> None:
        """Stop reading: a read not started never starts; one running closes the dataset when
        its current element is read (a generator cannot be closed from another thread while it
        runs)."""
        with self._changed:
            self._closed = True
            if self._reading is not None and self._reading.cancel():
                self._reading = None
            close_now = self._reading is None
        if close_now:
            close_iterator(self.iterator)


class _Opener:
    """The input read, and map_func called, on a thread of its own, in input order, so that a
    slow input holds back no element of the datasets already open. The consumer asks for the
    next datasets with `request`, which never waits; each request is a future that the thread
    answers with the next input element's reader, _END once the input has ended, or the error
    of the input or of map_func, and then tells `changed`."""

    def __init__(self, elements: Iterator, open_reader: Callable, changed: threading.Condition):
        self._elements, self._open_reader, self._changed = elements, open_reader, changed
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self.upcoming: collections.deque = collections.deque()  # asked for, not yet taken
        self.input_done = False  # whether an answer taken said the input ended (or failed)
        threading.Thread(target=self._answer_requests, name=f"{THREAD_PREFIX}-input",
                         daemon=True).start()

    def request(self, count: int) -> None:
        """Ask for datasets until `count` are asked for and not yet taken."""
        while not self.input_done and len(self.upcoming) < count:
            request: concurrent.futures.Future = concurrent.futures.Future()
            self._requests.put(request)
            self.upcoming.append(request)

    def take(self):
        """The next answer, waiting for it: a reader, or None once the input has ended."""
        if not self.upcoming:
            return None
        try:
            answer = self.upcoming.popleft().result()
        except BaseException:
            self.input_done = True
            raise
        if answer is _END:
            self.input_done = True
            self.upcoming.clear()
            return None
        return answer

    def stop(self) -> None:
        self._requests.put(None)

    def _answer_requests(self) -> None:
        ended = False
        try:
            while True:
                request = self._requests.get()
                if request is None:
                    return
                if ended:
                    request.set_result(_END)
                    continue
                try:
                    source = next(self._elements, _END)
                    answer = _END if source is _END else self._open_reader(source)
                except BaseException as error:  # noqa: BLE001 - raised by the consumer
                    ended = True
                    request.set_exception(error)
                else:
                    ended = answer is _END
                    request.set_result(answer)
                with self._changed:
                    self._changed.notify_all()
        finally:
            close_iterator(self._elements)


def interleaved_on_threads(elements: Iterator, open_element: Callable[[object], Iterator],
                           cycle_length: int, block_length: int, threads: int,
                           deterministic: bool) -> Iterator:
    """The interleave with the cycle's datasets read on `threads` pool threads and the input
    on one more: in the one-thread order if `deterministic`, else elements as they are read.
    Every element is given as soon as the order allows. The threads are daemon threads that
    end when the iteration ends, is closed or is dropped (a thread inside a dataset that
    waits ends when that returns)."""
    pool = WorkerPool(threads, THREAD_PREFIX)
    chunk_size = max(block_length, CHUNK_ELEMENTS)
    changed = threading.Condition()
    readers: set = set()   # every reader not closed yet; guarded by `changed`
    stopped = False        # whether the consumer has left; guarded by `changed`

    def open_reader(source):
        try:
            iterator = open_element(source)
        except Exception as error:
            raise _noted(error, source)
        reader = _Reader(iterator, source, chunk_size, changed, pool)
        with changed:
            if not stopped:
                readers.add(reader)
                reader.read_more()
                return reader
        close_iterator(iterator)
        return _END

    opener = _Opener(elements, open_reader, changed)

    def drop(reader: _Reader) -> None:
        reader.close()
        with changed:
            readers.discard(reader)

    def in_order() -> Iterator:
        cycle: list = [None] * cycle_length
        position, open_count = 0, 0
        while True:
            opener.request(cycle_length - open_count)
            reader = cycle[position]
            if reader is None:
                reader = opener.take()
                if reader is None:  # the input is done: skip the place, or end
                    if not open_count:
                        return
                    position = (position + 1) % cycle_length
                    continue
                cycle[position] = reader
                open_count += 1
            for _ in range(block_length):
                element = reader.next_element()
                if element is _END:
                    drop(reader)
                    cycle[position] = None
                    open_count -= 1
                    break
                yield element
            position = (position + 1) % cycle_length

    def as_they_come() -> Iterator:
        reading: list = []  # the readers of the cycle
        turn = 0            # where the next search for a reader with elements starts
        input_error = None  # raised once all else is given
        while True:
            opener.request(cycle_length - len(reading))
            with changed:
                while True:
                    while opener.upcoming and opener.upcoming[0].done():
                        try:
                            reader = opener.take()
                        except Exception as error:  # noqa: BLE001 - raised below
                            input_error = error
                            continue
                        if reader is not None:
                            reading.append(reader)
                    turn = turn % len(reading) if reading else 0
                    reader = next((reader for reader in reading[turn:] + reading[:turn]
                                   if reader.buffer or reader.ended), None)
                    if reader is not None or not (reading or opener.upcoming):
                        break
                    changed.wait()
                if reader is None:
                    if input_error is not None:
                        raise input_error
                    return
                turn = reading.index(reader) + 1
                given, ended = reader.take_buffer()
            yield from given
            if ended:
                reading.remove(reader)
                drop(reader)
                if reader.error is not None:
                    raise reader.error

    try:
        yield from (in_order() if deterministic else as_they_come())
    finally:
        with changed:
            stopped = True
            leaving = list(readers)
        for reader in leaving:
            reader.close()
        opener.stop()
        pool.shutdown()


def _noted(error: Exception, source) -> Exception:
    """`error`, with a note naming the input element whose dataset raised it (shown under its
    traceback), so that an error in one of many files says which."""
    note = f"(in Dataset.interleave, reading the dataset of input element " \
           f"{_source_text(source)})"
    if hasattr(error, "add_note"):
        error.add_note(note)
    else:  # Python 3.10 keeps the note where 3.11 would, without printing it
        error.__notes__ = [*getattr(error, "__notes__", ()), note]
    return error


def _source_text(source) -> str:
    if isinstance(source, np.generic) and source.ndim == 0:
        source = source.item()   # np.str_('a.txt') reads as 'a.txt'
    text = repr(source)
    return text if len(text) <= 200 else text[:197] + "..."
