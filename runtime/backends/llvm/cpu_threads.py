"""Fused kernels on every core: how many threads, the threads, and how a kernel's elements are
split between them so that every result is bit for bit the one a single thread computes.

    cpu_threads()          # the count: AUTOTRACE_NUM_THREADS, else the cores this process may
    cpu_threads(1)         # use (os.sched_getaffinity); 1 runs every kernel on the caller's thread

A fused call of at least MIN_PARALLEL_ELEMENTS elements (MIN_PARALLEL_ARITHMETIC_ELEMENTS where
its kernel computes arithmetic alone: runtime/backends/llvm/cpu_calls.py, `parallel_from`) runs
its kernel's `part` function (runtime/backends/llvm/cpu_loop.py) on pieces of its elements: the
calling thread and `cpu_threads() - 1` workers each take the next piece left until none is.
ctypes releases the GIL while a compiled function runs, so the pieces run at once. Smaller calls
stay on the caller's thread.

How the elements are split (`pieces`), so that no sum adds in another order:
- Elementwise results: anywhere, at multiples of the vector width.
- A sum of all elements (cpu_reductions.Totals): the kernel adds blocks of SUM_BLOCK vectors,
  then adds the block sums in order. Pieces start at block boundaries and store their block
  sums, which the kernel's `totals` function then adds in the same order.
- Sums over trailing axes, and row kernels (runtime/backends/llvm/cpu_rows.py): pieces hold
  whole rows.
- Sums over leading axes: each column of the row of accumulators is added to in row order, so
  the pieces split the columns, and each runs its columns of every row (`rows`, `stride`).
So the results do not depend on the number of threads, nor on which thread runs which piece.
"""
from __future__ import annotations

import itertools
import math
import os
import queue
import threading

# Below this many elements a fused call runs on the caller's thread alone: handing pieces to the
# workers and waiting for them costs 15 to 20 us (waking a worker, which takes the GIL to call
# its piece through ctypes, and being woken when it is done; 14 us with calls that do nothing),
# and in a graph more: the pieces of a worker read what the caller's core just wrote, and both
# threads take page faults on fresh outputs. Measured on a 2-core AMD EPYC (Zen 3, AVX2), 1
# thread -> 2 threads, best of 15 on an idle machine:
# - a kernel that computes a function of the C library (`computes_libm_function`), 4 to 5 ns
#   an element with glibc's tanh (less with autotrace's own):
#   tanh(x * y) + x called over and over 25 -> 42 us at 6,144 elements, 49 -> 46 at 12,288,
#   63 -> 58 at 16,384, 94 -> 78 at 24,576, 254 -> 157 at 65,536, 3,650 -> 1,960 at 1e6; but
#   in an MLP's gradient, tanh(x @ W + b) 70 -> 120 us at 16,384, 125 -> 190 at 32,768,
#   500 -> 325 at 65,536, 650 -> 370 at 131,072;
MIN_PARALLEL_ELEMENTS = 65_536
# - a kernel of arithmetic alone, 0.4 to 1 ns an element, bound by memory: x * y + x 57 -> 75 us
#   at 131,072, 91 -> 87 at 262,144, 138 -> 111 at 393,216, 410 -> 300 at 1e6; (1 - x * x) * y
#   475 -> 356 at 1,048,576; twelve multiplies and adds 60 -> 61 at 65,536, 236 -> 160 at
#   262,144.
MIN_PARALLEL_ARITHMETIC_ELEMENTS = 500_000
# A piece of the columns of every row (a sum over leading axes) reads its own stretch of each
# row; where stretches are narrow both threads read and fault in the same pages, slower than
# one thread: (1 - h * h) * d and its sum over rows, 1e6 elements, 534 -> 952 us in pieces of
# 32 columns, 535 -> 649 in 256, 549 -> 524 in 512, 625 -> 443 in 2,048.
MIN_PIECE_COLUMNS = 2048
# Pieces per thread, each thread taking the next piece left when it is done with one, so that
# a thread that starts late or shares its core with another process finishes when the others
# do (the GELU gradient on 1e6 values takes 2.7 ms with 1, 2, 4 or 8 on an idle machine); no
# piece smaller than MIN_PIECE_ELEMENTS, as each costs a call through ctypes (~2 us).
PIECES_PER_THREAD = 4
MIN_PIECE_ELEMENTS = 4096

_settings: dict = {"threads": None}  # None: not read yet (AUTOTRACE_NUM_THREADS, the cores)


def cpu_threads(count: int | None = None) -> int:
    """Set (with a count) or read how many threads a large fused CPU kernel runs on: by
    default AUTOTRACE_NUM_THREADS, else as many as the cores this process may run on
    (os.sched_getaffinity). 1 runs every kernel on the calling thread. The results are the
    same, bit for bit, with any count; it applies to calls made afterwards, of functions
    compiled before too."""
    if count is not None:
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"cpu_threads: the count must be a positive int, not {count!r}")
        _settings["threads"] = count
    elif _settings["threads"] is None:
        _settings["threads"] = _default_count()
    return _settings["threads"]


def _default_count() -> int:
    configured = os.environ.get("AUTOTRACE_NUM_THREADS", "").strip()
    if configured:
        if not configured.isdigit() or int(configured) < 1:
            raise ValueError(f"AUTOTRACE_NUM_THREADS must be a positive integer (1 runs fused "
                             f"kernels on one thread), not {configured!r}")
        return int(configured)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (macOS)
        return os.cpu_count() or 1


# --- how a kernel's elements are split ----------------------------------------------------------

def pieces(size: int, width: int, threads: int, block: int | None = None, rows: tuple = (),
           columns: int | None = None) -> list | None:
    """The pieces of a kernel's `size` elements for `threads` threads, as (start, stop, rows,
    stride) for its `part` function (rows of elements start + r * stride to stop + r * stride),
    or None where it runs whole: one piece, or no split keeps its sums' order.

    Arguments:
        width: the kernel's vector width: pieces start at multiples of it.
        block: with sums of all elements, the elements a block sum adds: pieces start at
            multiples of it.
        rows: the row lengths of its sums over trailing axes: pieces hold whole rows.
        columns: the row length of its sums over leading axes (one length only): the pieces
            split the columns, each running its own columns of every row.
    """
    if threads < 2:
        return None
    align = math.lcm(width, block or 1, *rows)
    count = threads * PIECES_PER_THREAD
    if columns is None:
        step = _multiple(max(-(-size // count), MIN_PIECE_ELEMENTS), align)
        if step >= size:
            return None
        return [(start, min(start + step, size), 1, 0) for start in range(0, size, step)]
    if columns % align:  # a block or a row of a trailing sum across two rows of columns
        return None
    step = _multiple(max(-(-columns // count), MIN_PIECE_COLUMNS,
                         MIN_PIECE_ELEMENTS * columns // size), align)
    if step >= columns:
        return None
    return [(start, min(start + step, columns), size // columns, columns)
            for start in range(0, columns, step)]


def _multiple(value: int, align: int) -> int:
    """The least multiple of `align` at or above `value`."""
    return -(-value // align) * align


# --- the threads --------------------------------------------------------------------------------

class Workers:
    """Threads that run calls handed to them, each waiting on its own queue. `run(calls,
    threads)` runs the calls on the calling thread and `threads - 1` workers (started as
    needed), each taking the next call not yet taken until none is left, so that a thread that
    starts late or runs slowly (on a core another process wants) takes fewer.

    The caller waits only for the calls a worker took, never for a worker to wake up: one
    that starts after the caller took the last call finds none left and does nothing. On a
    machine whose every core is busy (a multithreaded BLAS's threads spin for a while after
    each product) a woken worker may wait a scheduler's time slice for a core; the caller,
    which runs, does its calls meanwhile. (The GELU gradient on 2 threads, a busy loop on the
    second core: 131,072 values 261 -> 190 us, against 230 on one thread; 262,144 values
    414-488 -> 327-354 us, against 467.)"""

    def __init__(self):
        self._queues: list = []
        self._lock = threading.Lock()

    def run(self, calls: list, threads: int) -> list:
        """The results of `calls` (functions of no arguments), in order. An exception raised
        by one is raised here, after every call taken has returned (none writes to memory the
        caller may use again afterwards)."""
        if not calls:
            return []
        batch = _Batch(calls)
        for tasks in self._queues_for(min(threads, len(calls)) - 1):
            tasks.put(batch)
        batch.take_calls()
        batch.finished.wait()
        if batch.errors:
            raise batch.errors[0]
        return batch.results

    def _queues_for(self, count: int) -> list:
        with self._lock:
            while len(self._queues) < count:
                tasks: queue.SimpleQueue = queue.SimpleQueue()
                threading.Thread(target=_work, args=(tasks,), daemon=True,
                                 name=f"autotrace-kernels-{len(self._queues) + 1}").start()
                self._queues.append(tasks)
            return self._queues[:count]

    def forget(self) -> None:
        """After a fork: the child has none of its parent's threads."""
        self._queues = []
        self._lock = threading.Lock()


class _Batch:
    """The calls of one `Workers.run`: each taken once, by whichever thread asks first (next()
    on the iterator and on the counter hold the GIL), and `finished` set by the thread that
    returns from the last one."""

    def __init__(self, calls: list):
        self.pending = iter(enumerate(calls))
        self.results = [None] * len(calls)
        self.errors: list = []
        self.returned = itertools.count(1)
        self.finished = threading.Event()

    def take_calls(self) -> None:
        for index, call in self.pending:
            try:
                self.results[index] = call()
            except BaseException as error:
                self.errors.append(error)
            if next(self.returned) == len(self.results):
                self.finished.set()


def _work(tasks: queue.SimpleQueue) -> None:
    while True:
        tasks.get().take_calls()


WORKERS = Workers()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=WORKERS.forget)
