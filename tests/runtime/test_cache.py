"""The trace cache: LRU bound, one build per new signature across threads, release of weakly
held objects, and the bookkeeping behind the frequent-retrace warning."""
import gc
import threading
import time

import numpy as np
import pytest

from autotrace.runtime.tracing.cache import TraceCache
from autotrace.runtime.tracing.signature import signature_of


def key(*args):
    return signature_of(args, {})


def test_hit_and_miss():
    cache = TraceCache()
    assert cache.get(key(np.zeros(3))) is None
    entry = cache.get_or_build(key(np.zeros(3)), lambda: "compiled")
    assert entry == "compiled" and cache.get(key(np.ones(3))) == "compiled"
    assert cache.get_or_build(key(np.ones(3)), lambda: pytest.fail("built twice")) == "compiled"
    assert cache.trace_count == 1


def test_least_recently_used_is_evicted_first():
    evicted = []
    cache = TraceCache(maxsize=2, on_evict=lambda k, entry: evicted.append(entry))
    for n in (1, 2):
        cache.get_or_build(key(n), lambda n=n: n)
    cache.get(key(1))                   # 1 is now the most recently used
    cache.get_or_build(key(3), lambda: 3)
    assert evicted == [2] and len(cache) == 2
    assert cache.get(key(1)) == 1 and cache.get(key(2)) is None


def test_threads_asking_for_a_new_signature_build_once():
    cache, builds, results = TraceCache(), [], []
    start = threading.Barrier(8)

    def build():
        builds.append(1)
        time.sleep(0.05)
        return object()

    def call():
        start.wait()
        results.append(cache.get_or_build(key(np.zeros(5)), build))
    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1 and len(results) == 8 and len({id(r) for r in results}) == 1
    assert cache.trace_count == 1


def test_a_failed_build_reaches_every_waiter_and_is_retried():
    cache, start = TraceCache(), threading.Barrier(3)
    errors = []

    def build():
        time.sleep(0.05)
        raise ValueError("bad trace")

    def call():
        start.wait()
        try:
            cache.get_or_build(key(1), build)
        except ValueError as error:
            errors.append(str(error))
    threads = [threading.Thread(target=call) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == ["bad trace"] * 3
    assert cache.get_or_build(key(1), lambda: "second try") == "second try"


def test_building_the_same_signature_from_inside_its_build_is_an_error():
    cache = TraceCache()
    with pytest.raises(RecursionError, match="called itself with the same signature"):
        cache.get_or_build(key(1), lambda: cache.get_or_build(key(1), lambda: None))


class Model:
    pass


def test_entries_of_released_objects_are_evicted():
    evicted = []
    cache = TraceCache(on_evict=lambda k, entry: evicted.append(entry))
    model = Model()
    cache.get_or_build(key(model, np.zeros(2)), lambda: "model entry")
    cache.get_or_build(key(3), lambda: "other entry")
    assert cache.get(key(model, np.ones(2))) == "model entry"
    del model
    gc.collect()
    assert evicted == ["model entry"] and len(cache) == 1


def test_retrace_bookkeeping_and_explanation():
    cache = TraceCache(window=10)
    for n in range(12):
        shape = (n % 6,)
        k = key(np.zeros(shape))
        if cache.get(k) is None:
            if n:
                last = cache.explain(k, ("x",))
            cache.get_or_build(k, lambda: "entry")
    # calls 0..5 traced, 6..11 hit; the window holds the last ten
    assert cache.recent_calls() == [True] * 4 + [False] * 6
    assert cache.retrace_count() == 4 and cache.trace_count == 6
    assert last == "argument 'x': shape (4,) -> (5,)"
    assert cache.explain(key(1)) == "argument 0: an array f64[5] -> int 1"


def test_a_widened_signature_is_an_entry_of_its_own():
    cache = TraceCache()
    concrete = key(np.zeros((2, 3)))
    widened = ((("array", (None, 3), np.dtype("float64"), "cpu"),), ())
    cache.get_or_build(concrete, lambda: "for two rows")
    cache.get_or_build(widened, lambda: "for any rows")
    assert cache.get(concrete) == "for two rows" and cache.get(widened) == "for any rows"
    assert cache.trace_count == 2
    assert cache.explain(key(np.zeros((5, 3))), ("x",)) == (
        "argument 'x': shape (None, 3) -> (5, 3)")
