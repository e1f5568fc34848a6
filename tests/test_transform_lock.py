"""Transforms run one at a time under transform_lock (transforms/analysis/live_names.py), which
also pauses Python's cyclic garbage collector while a transform runs and restores it after:
no collection starts inside a transform, the collector runs again after it (unless the user
had switched it off), and an error inside a transform leaves the collector as it was."""
import gc
import threading

import numpy as np
import pytest

import autotrace
from autotrace.transforms.analysis.live_names import transform_lock
from tests.numeric import central_difference


def _long_function(x):
    # Many statements, a loop and a branch: a transform that allocates enough objects to
    # start dozens of collections if the collector ran.
    total = 0.0
    for i in range(3):
        a = np.sin(x) * x + i
        b = np.cos(a) * a
        if i > 0:
            c = np.tanh(b) + a * b
        else:
            c = np.exp(-b * b)
        d = c * c + np.log1p(a * a)
        total = total + np.sum(d * b) + np.sum(c)
    return total


@pytest.fixture
def collections_while_held():
    """The depth transform_lock was held at when each collection started."""
    depths = []

    def record(phase, info):
        if phase == "start":
            depths.append(transform_lock._depth)

    thresholds = gc.get_threshold()
    gc.set_threshold(700, 10, 10)  # Python's own (tests/conftest.py sets larger ones)
    gc.callbacks.append(record)
    yield depths
    gc.callbacks.remove(record)
    gc.set_threshold(*thresholds)


def test_no_collection_starts_inside_a_transform(collections_while_held):
    assert gc.isenabled()
    x = np.linspace(0.1, 0.9, 5)
    gradient = autotrace.grad(lambda x: _long_function(x) + 0.0)(x)
    np.testing.assert_allclose(gradient, central_difference(_long_function, x), rtol=1e-6,
                               atol=1e-8)
    assert gc.isenabled()
    assert [depth for depth in collections_while_held if depth > 0] == []
    # The collector still runs outside transforms: the objects left behind are collected.
    for _ in range(20000):
        [[]]
    assert collections_while_held, "no collection started after the transform"


def test_the_collector_paused_by_the_outermost_acquisition_only():
    assert gc.isenabled()
    with transform_lock:
        assert not gc.isenabled()
        with transform_lock:
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_the_user_switched_off_stays_off():
    gc.disable()
    try:
        autotrace.grad(lambda x: np.sum(np.sin(x) * x))(np.ones(3))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_error_in_a_transform_restores_the_collector():
    def refused(x):
        yield x

    with pytest.raises(autotrace.TransformError, match="cannot differentiate yield"):
        autotrace.grad(refused)(np.ones(3))
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError):
        with transform_lock:
            1 / 0
    assert gc.isenabled()
    assert transform_lock._depth == 0


def test_another_thread_waits_for_the_transform():
    order = []
    inside = threading.Event()

    def other():
        inside.wait()
        with transform_lock:
            order.append("other")

    thread = threading.Thread(target=other)
    thread.start()
    with transform_lock:
        inside.set()
        thread.join(0.2)  # it cannot enter while this one holds the lock
        order.append("first")
    thread.join()
    assert order == ["first", "other"]
    assert gc.isenabled()
