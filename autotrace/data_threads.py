"""The threads of autotrace.data: `prefetch` fills a queue from a background thread, and
`map(num_parallel_calls=k)` runs the function on k threads, keeping the input order."""
from __future__ import annotations

import collections
import concurrent.futures
import queue
import threading
from typing import Callable, Iterator

_END = object()  # what a finished iterator gives next(iterator, _END)


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
            close = getattr(elements, "close", None)
            if close is not None:
                close()

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
    """map_one of each element, up to `threads` calls running at once, results in order. The
    input is read on the consumer's thread (a pipeline is not safe to share between threads);
    an error is raised at the element where it happened."""
    pool = concurrent.futures.ThreadPoolExecutor(threads,
                                                 thread_name_prefix="autotrace-data-map")
    running: collections.deque = collections.deque()
    try:
        for element in elements:
            running.append(pool.submit(map_one, element))
            if len(running) >= threads:
                yield running.popleft().result()
        while running:
            yield running.popleft().result()
    finally:
        for call in running:
            call.cancel()
        pool.shutdown(wait=False)
