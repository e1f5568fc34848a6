"""The trace cache: compiled entries by signature, least recently used first out.

    cache = TraceCache(maxsize=64)
    key, arrays = signature_and_arrays(args, kwargs)
    entry = cache.get(key)                       # the fast path: a hit, or None
    if entry is None:
        entry = cache.get_or_build(key, lambda: build_entry(args, kwargs))
    if cache.retrace_count() >= 5: ...           # "5 retraces in the last 10 calls"

Thread-safe: a lock guards insertion and eviction; concurrent calls with the same new
signature build once (the others wait for the first builder's result, or its exception).
Keys holding objects weakly (signature.WeakIdentity) are stored with a release hook: when such
an object dies its entries are evicted (at once, or on the next insertion if the hook fires
while this thread holds the lock).
"""
from __future__ import annotations

import threading
from collections import OrderedDict, deque
from typing import Callable

from .identity_keys import is_alive, with_release_hook
from .signature import describe_difference


class _Pending:
    """An entry being built by one thread; others wait for it."""

    def __init__(self):
        self.done = threading.Event()
        self.thread = threading.get_ident()
        self.entry = None
        self.error: BaseException | None = None

    def wait(self):
        self.done.wait()
        if self.error is not None:
            raise self.error
        return self.entry


class TraceCache:
    """An LRU-bounded, thread-safe dict from signature to compiled entry.

    Arguments:
        maxsize: how many entries to keep; the least recently used goes first.
        window: how many recent calls `retrace_count` looks at.
        on_evict: called as `on_evict(key, entry)` for each entry evicted (by size or because
            an object in its key died).
    """

    def __init__(self, maxsize: int = 64, window: int = 10,
                 on_evict: Callable | None = None):
        self.maxsize = maxsize
        self.on_evict = on_evict
        self.trace_count = 0
        self._entries: OrderedDict = OrderedDict()
        self._pending: dict = {}
        self._lock = threading.Lock()
        self._recent = deque(maxlen=window)  # True for a call that traced
        self._released = False               # an object in a key died; purge when we can
        self._last_key = None
        self._most_recent = None  # the entry last found or inserted: already at the LRU end

    def __len__(self) -> int:
        return len(self._entries)

    def keys(self) -> list:
        return list(self._entries)

    def entries(self) -> list:
        """The entries, least recently used first (reading them is not a call)."""
        return list(self._entries.values())

    def get(self, key):
        """The entry for `key` (marked most recently used), or None. Records a call if found."""
        entry = self._entries.get(key)
        if entry is not None:
            self.touch(key, entry)
        return entry

    def touch(self, key, entry) -> None:
        """Record a call that runs `entry`, found under `key` by the caller's own index of this
        cache (kept in step through `on_evict`): it becomes the most recently used."""
        if entry is not self._most_recent:  # a run of calls to one trace moves it once
            try:
                self._entries.move_to_end(key)
            except KeyError:  # evicted by another thread since; the entry still works
                pass
            self._most_recent = entry
        self._recent.append(False)

    def get_or_build(self, key, build: Callable):
        """The entry for `key`, calling `build()` to make it if there is none (once, even when
        several threads ask for the same new key at the same time)."""
        entry = self.get(key)
        if entry is not None:
            return entry
        with self._lock:
            entry = self._entries.get(key)
            pending = self._pending.get(key) if entry is None else None
            builds = entry is None and pending is None
            if builds:
                pending = self._pending[key] = _Pending()
        if entry is not None:
            self._recent.append(False)
            return entry
        if not builds:
            if pending.thread == threading.get_ident():
                raise RecursionError("a traced function called itself with the same signature "
                                     "while it was being traced")
            self._recent.append(False)
            return pending.wait()
        try:
            pending.entry = entry = build()
        except BaseException as error:
            pending.error = error
            raise
        else:
            self._insert(key, entry)
        finally:
            with self._lock:
                del self._pending[key]
            pending.done.set()
        return entry

    def _insert(self, key, entry) -> None:
        stored_key = with_release_hook(key, self._object_released)
        evicted = []
        with self._lock:
            self._entries[stored_key] = entry
            self._most_recent = entry
            self.trace_count += 1
            self._recent.append(True)
            self._last_key = stored_key
            while len(self._entries) > self.maxsize:
                evicted.append(self._entries.popitem(last=False))
            evicted.extend(self._purge_released())
        self._report(evicted)

    def _object_released(self, reference) -> None:
        """A weakly held object in some key died: evict its entries (the weakref's hook)."""
        self._released = True
        if self._lock.acquire(blocking=False):  # not if this thread is inside the lock now
            try:
                evicted = self._purge_released()
            finally:
                self._lock.release()
            self._report(evicted)

    def _purge_released(self) -> list:
        if not self._released:
            return []
        self._released = False
        dead = [key for key in self._entries if not is_alive(key)]
        return [(key, self._entries.pop(key)) for key in dead]

    def _report(self, evicted) -> None:
        if self.on_evict is not None:
            for key, entry in evicted:
                self.on_evict(key, entry)

    def discard(self, entry) -> None:
        """Forget `entry`, a trace that no longer fits its function's state (as if evicted);
        the next call of its signature traces again."""
        with self._lock:
            evicted = [(key, found) for key, found in self._entries.items() if found is entry]
            for key, _ in evicted:
                del self._entries[key]
            if self._most_recent is entry:
                self._most_recent = None
        self._report(evicted)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._recent.clear()
            self._most_recent = None

    # --- retrace bookkeeping ------------------------------------------------------------------

    def retrace_count(self) -> int:
        """How many of the last `window` calls traced anew (the first trace counts)."""
        return sum(self._recent)

    def recent_calls(self) -> list:
        """True for each recent call that traced, oldest first."""
        return list(self._recent)

    def explain(self, key, parameter_names=()) -> str:
        """Why `key` missed, against the most recently traced signature:
        `argument 'x': shape (3,) -> (4,)`."""
        if self._last_key is None:
            return "first call"
        return describe_difference(self._last_key, key, parameter_names)
