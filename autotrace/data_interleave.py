"""`Dataset.interleave`'s steps: on the consumer's thread, or with the datasets of the cycle
read on background threads (`num_parallel_calls`), in tf.data's order or as elements come.

The order is tf.data's InterleaveDataset: `cycle_length` places, visited in turn; at a visit
the place's dataset gives up to `block_length` elements, or is dropped (the visit ends) when it
ends; an empty place opens the dataset of the next input element and reads it at once.

With threads, each open dataset reads a chunk of elements ahead on a pool thread while the
consumer takes those of other places, and the datasets of the next input elements are opened
ahead, in input order, so that a place that ends is refilled without a wait. The
input and `map_func` stay on the consumer's thread, in input order. An error is raised where
the one-thread order would raise it, after the elements before it, with its own traceback.
"""
from __future__ import annotations

import collections
import concurrent.futures
import threading
from typing import Callable, Iterator

import numpy as np

from autotrace.data_threads import _END

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
    """One dataset of the cycle, read ahead on pool threads a chunk of elements at a time (one
    chunk at a time: the dataset is never read by two threads at once). A chunk of many
    elements, not one visit's block, is what makes the threads pay: handing one element from a
    thread to another costs more than reading a line of a file."""

    def __init__(self, iterator: Iterator, source, chunk_size: int, stop: threading.Event,
                 pool: concurrent.futures.Executor):
        self.iterator, self.source = iterator, source
        self._chunk_size, self._stop, self._pool = chunk_size, stop, pool
        self._lock = threading.Lock()  # orders closing against a chunk being read
        self._busy = self._abandoned = False
        self.chunk: concurrent.futures.Future | None = None  # the chunk being read
        self.buffer: collections.deque = collections.deque()  # read, not yet given
        self.ended = False                 # whether the dataset has ended (or raised)
        self.error: Exception | None = None  # what it raised after the buffer's elements

    def start(self) -> None:
        self.chunk = self._pool.submit(self._read_chunk)

    def _read_chunk(self) -> tuple[list, bool, Exception | None]:
        """(up to chunk_size elements, whether the dataset ended, the error that ended it or
        None). Returns the error rather than raising it, so that the elements read before it
        are given first."""
        with self._lock:
            if self._abandoned:
                return [], True, None
            self._busy = True
        elements: list = []
        try:
            while len(elements) < self._chunk_size and not self._stop.is_set():
                element = next(self.iterator, _END)
                if element is _END:
                    return elements, True, None
                elements.append(element)
            return elements, False, None
        except Exception as error:  # noqa: BLE001 - handed to the consumer, raised there
            return elements, True, _noted(error, self.source)
        finally:
            with self._lock:
                self._busy = False
                if self._abandoned:  # the consumer left while this chunk was read
                    _close(self.iterator)

    def receive(self) -> None:
        """Wait for the chunk being read, keep its elements and start reading the next."""
        elements, self.ended, self.error = self.chunk.result()
        self.buffer.extend(elements)
        self.chunk = None
        if not self.ended:
            self.start()

    def take(self, count: int) -> tuple[list, bool, Exception | None]:
        """(up to `count` elements, whether the dataset ended before `count` were given, and
        the error to raise after them or None)."""
        if len(self.buffer) >= count:  # the usual case, kept short
            return [self.buffer.popleft() for _ in range(count)], False, None
        taken: list = []
        while len(taken) < count:
            if self.buffer:
                taken.append(self.buffer.popleft())
            elif self.ended:
                return taken, True, self.error
            else:
                self.receive()
        return taken, False, None

    def close(self) -> None:
        """Stop reading: a chunk not started never starts; one being read closes the dataset
        when it is done (a generator cannot be closed from another thread while it runs)."""
        if self.chunk is not None:
            self.chunk.cancel()
        with self._lock:
            self._abandoned = True
            if not self._busy:
                _close(self.iterator)


def interleaved_on_threads(elements: Iterator, open_element: Callable[[object], Iterator],
                           cycle_length: int, block_length: int, threads: int,
                           deterministic: bool) -> Iterator:
    """The interleave with the cycle's datasets read on `threads` pool threads: in the
    one-thread order if `deterministic`, else a chunk as soon as it is read. The threads end
    when the iteration ends, is closed or is dropped."""
    pool = concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix=THREAD_PREFIX)
    chunk_size = max(block_length, CHUNK_ELEMENTS)
    stop = threading.Event()
    readers: set = set()   # every reader not closed yet
    upcoming: collections.deque = collections.deque()  # opened ahead: readers, or the error
    input_done = False

    def open_ahead(open_count: int) -> None:
        """Open the next input elements, so that open and upcoming datasets fill the cycle."""
        nonlocal input_done
        while not input_done and open_count + len(upcoming) < cycle_length:
            try:
                source = next(elements, _END)
                if source is _END:
                    input_done = True
                    return
                try:
                    reader = _Reader(open_element(source), source, chunk_size, stop, pool)
                except Exception as error:
                    raise _noted(error, source)
            except Exception as error:  # raised when its place in the order is reached
                upcoming.append(error)
                input_done = True
                return
            readers.add(reader)
            reader.start()
            upcoming.append(reader)

    def take_upcoming() -> _Reader:
        item = upcoming.popleft()
        if isinstance(item, Exception):
            raise item
        return item

    def drop(reader: _Reader) -> None:
        reader.close()
        readers.discard(reader)

    def in_order() -> Iterator:
        cycle: list = [None] * cycle_length
        position, open_count = 0, 0
        while True:
            open_ahead(open_count)
            reader = cycle[position]
            if reader is None:
                if not upcoming:  # the input is done: skip the place, or end
                    if not open_count:
                        return
                    position = (position + 1) % cycle_length
                    continue
                reader = cycle[position] = take_upcoming()
                open_count += 1
            block, ended, error = reader.take(block_length)
            yield from block
            if error is not None:
                raise error
            if ended:
                drop(reader)
                cycle[position] = None
                open_count -= 1
            position = (position + 1) % cycle_length

    def as_they_come() -> Iterator:
        reading: dict = {}   # a chunk's future: its reader
        while True:
            open_ahead(len(reading))
            while upcoming and not isinstance(upcoming[0], Exception):
                reader = take_upcoming()
                reading[reader.chunk] = reader
            if not reading:
                if upcoming:
                    take_upcoming()  # raises the input's error, once all else is given
                return
            done, _ = concurrent.futures.wait(reading, return_when="FIRST_COMPLETED")
            for chunk in done:
                reader = reading.pop(chunk)
                reader.receive()
                given = list(reader.buffer)
                reader.buffer.clear()
                yield from given
                if reader.error is not None:
                    raise reader.error
                if reader.ended:
                    drop(reader)
                else:
                    reading[reader.chunk] = reader

    try:
        yield from (in_order() if deterministic else as_they_come())
    finally:
        stop.set()
        for reader in list(readers):
            reader.close()
        pool.shutdown(wait=False, cancel_futures=True)


def _close(iterator: Iterator) -> None:
    close = getattr(iterator, "close", None)
    if close is not None:
        close()


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
