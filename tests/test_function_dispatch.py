"""The cache-hit path of autotrace.function: a call of NumPy arrays alone finds its trace by the
arrays' shapes and dtypes, without binding or keying the call, and keeps the cache's rules:
least recently used out first, evicted and cleared traces traced again, retraces counted.
"""
import warnings

import numpy as np
import pytest

import autotrace
import autotrace.traced_function as function_module


def count_keying(monkeypatch):
    calls = []
    keyed = function_module.signature_and_arrays

    def counting(args, kwargs, *options):
        calls.append(args)
        return keyed(args, kwargs, *options)
    monkeypatch.setattr(function_module, "signature_and_arrays", counting)
    return calls


def test_a_cache_hit_of_arrays_does_not_key_the_call_again(monkeypatch):
    calls = count_keying(monkeypatch)
    gradient = autotrace.function(autotrace.grad(lambda x: np.sum(x * x)))
    x = np.arange(3.0)
    np.testing.assert_array_equal(gradient(x), 2 * x)
    keyed = len(calls)
    for _ in range(3):
        np.testing.assert_array_equal(gradient(x + 1.0), 2 * (x + 1.0))
    assert len(calls) == keyed
    assert gradient.trace_count == 1


def test_calls_that_are_not_arrays_alone_are_keyed_as_before(monkeypatch):
    calls = count_keying(monkeypatch)
    scale = autotrace.function(lambda x, factor: x * factor)
    x = np.ones(2)
    scale(x, 2.0)
    scale(x, 2.0)
    scale(x, factor=2.0)
    assert len(calls) == 3 and scale.trace_count == 1
    with_list_default = autotrace.function(lambda x, *, weights=[1.0]: x * weights[0])
    assert with_list_default(x)[0] == 1.0
    assert with_list_default(x)[0] == 1.0
    assert len(calls) == 5  # a mutable default could change: every call keys it


def test_a_new_shape_or_dtype_traces_again():
    double = autotrace.function(lambda x: x + x)
    assert double(np.ones(2)).tolist() == [2.0, 2.0]
    assert double(np.ones(3)).tolist() == [2.0, 2.0, 2.0]
    assert double(np.ones(2, np.float32)).dtype == np.float32
    assert double(np.ones(2)).tolist() == [2.0, 2.0]
    assert double.trace_count == 3
    assert double(np.float64(1.5)) == 3.0  # a NumPy scalar is keyed the long way
    assert double.trace_count == 4


def test_the_least_recently_used_trace_goes_first_with_hits_counted():
    double = autotrace.function(lambda x: x + x, max_traces=2)
    a, b, c = np.ones(1), np.ones(2), np.ones(3)
    double(a), double(b)
    double(a)  # a hit: `a` is now the most recently used, so `b` goes when `c` comes
    double(c)
    assert double.trace_count == 3
    double(a)
    assert double.trace_count == 3
    double(b)
    assert double.trace_count == 4


def test_evicted_and_cleared_traces_are_traced_again():
    double = autotrace.function(lambda x: x + x, max_traces=1)
    a, b = np.ones(1), np.ones(2)
    for _ in range(2):
        assert double(a).tolist() == [2.0]
        assert double(b).tolist() == [2.0, 2.0]
    assert double.trace_count == 4
    double.clear_cache()
    double(b)
    assert double.trace_count == 5


def test_hits_between_retraces_keep_the_retrace_warning_away():
    double = autotrace.function(lambda x: x + x)
    x = np.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for size in range(1, 6):
            double(np.ones(size))
            for _ in range(10):
                double(x)
    with pytest.warns(RuntimeWarning, match="was traced"):
        for size in range(6, 12):
            double(np.ones(size))


def test_a_constant_result_is_returned_as_is():
    constant = autotrace.function(lambda x: 1.5)
    assert constant(np.ones(2)) == 1.5
    assert constant(np.ones(2)) == 1.5


def test_an_entry_evicted_while_a_call_finds_it_is_not_kept_for_array_calls(monkeypatch):
    """Another thread may evict the entry a call has just found: the call still runs it, but
    later calls of arrays must not find it outside the cache."""
    traced = autotrace.function(lambda x: x * 2.0)
    x = np.arange(3.0)
    traced(x)  # traced and cached
    traced.clear_cache()
    original_get = traced._cache.get

    def get_then_evicted(key):
        entry = original_get(key)
        traced._forget_array_calls(key, entry)  # as an eviction in another thread would
        return entry

    monkeypatch.setattr(traced._cache, "get", get_then_evicted)
    np.testing.assert_array_equal(traced(x), [0.0, 2.0, 4.0])
    assert traced._array_calls == {}
