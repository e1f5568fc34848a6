"""What converted code does on traced values besides `if` and loops: autotrace.print with Python
values only, np.isscalar and NumPy's scalar types, `except ... as e` in a loop; and the errors
for what it cannot trace (an ndarray attribute, a generator function, np.ascontiguousarray and
its kin, recursion stopped by a traced test, a None returned on one path).
"""
from __future__ import annotations

import numpy as np
import pytest

import autotrace
from autotrace.runtime.ops import UntraceableError
from autotrace.runtime.tracing.control import ControlFlowError


def test_a_print_of_python_values_prints_on_every_call_in_the_branch_taken(capsys):
    @autotrace.function
    def f(x):
        autotrace.print("call")
        if np.sum(x) > 0:
            autotrace.print("positive")
        else:
            autotrace.print("not positive", 3)
        return x
    for value in (1.0, -1.0, 1.0):
        f(np.array([value]))
    assert capsys.readouterr().out.split("\n") == [
        "call", "positive", "call", "not positive 3", "call", "positive", ""]


def scalar_or_items(v):
    return [v] if np.isscalar(v) else list(v)


def test_np_isscalar_answers_as_for_the_numpy_value():
    def f(x):
        return (scalar_or_items(x[0]), scalar_or_items(np.sum(x)), scalar_or_items(x),
                np.isscalar(np.asarray(x[0])), np.iterable(x[0]))
    x = np.array([3.0, 4.0])
    eager, traced = f(x), autotrace.function(f)(x)
    assert [len(part) for part in traced[:3]] == [len(part) for part in eager[:3]] == [1, 1, 2]
    assert traced[3:] == eager[3:] == (False, False)
    assert autotrace.function(lambda s: 1.0 if np.isscalar(s) else 2.0)(np.float64(5.0)) == 1.0


def scalar_types(x):
    return np.sum(np.float32(x) * np.float64(x[0])) + np.float32(x[1]) * 2


def test_numpy_scalar_types_of_traced_values():
    x = np.array([1.5, 2.0])
    eager, traced = scalar_types(x), autotrace.function(scalar_types)(x)
    assert type(traced) is type(eager)
    assert traced == eager
    assert autotrace.function(lambda x: np.int64(x[0]))(x) == np.int64(1)


def test_an_except_name_in_a_loop_is_not_carried():
    def scaled(x):
        results = []
        for s in (2.0, None):
            try:
                results.append(x * float(s))
            except TypeError as e:
                results.append(x + len(str(e)) * 0.0)
        return results
    x = np.array([1.0])
    np.testing.assert_array_equal(autotrace.function(scaled)(x), scaled(x))


@pytest.mark.parametrize("code, message", [
    (lambda y: y.flags.c_contiguous, r"x.flags of a traced array is not known while tracing"),
    (lambda y: y.strides, r"x.strides of a traced array is not known while tracing"),
    (lambda y: y.partition(1), r"ndarray.partition is not supported on a traced array"),
], ids=["flags", "strides", "partition"])
def test_an_ndarray_attribute_a_traced_value_lacks_says_so(code, message):
    with pytest.raises(AttributeError, match=message):
        autotrace.function(lambda x: code(x * 2.0))(np.ones(3))
    assert not hasattr(autotrace.function, "flags")


def test_a_generator_function_is_refused_at_its_line():
    def doubled(x):
        for v in x:
            yield v * 2.0
    with pytest.raises(TypeError, match=r"test_traced_conversions.py:\d+: autotrace.function "
                       r"cannot trace the generator function 'doubled'"):
        autotrace.function(doubled)


@pytest.mark.parametrize("function, message", [
    (np.ascontiguousarray, "a traced value has no memory layout"),
    (np.asfortranarray, "a traced value has no memory layout"),
    (np.require, "a traced value has no memory layout"),
    (np.asarray_chkfinite, "a traced value's items are not known while tracing"),
    (lambda x: np.vectorize(lambda v: v * 2.0)(x), "calls the Python function on each item"),
], ids=["ascontiguousarray", "asfortranarray", "require", "asarray_chkfinite", "vectorize"])
def test_functions_that_need_memory_or_items_say_what_to_write(function, message):
    def f(x):
        return function(x) * 2.0
    with pytest.raises(UntraceableError, match=message):
        autotrace.function(f)(np.ones(2))


def test_a_conditional_expression_of_numbers_promotes_as_an_if_does():
    def f(x):
        return 1.0 if np.sum(x) > 0 else 2
    assert autotrace.function(f)(np.ones(2)) == 1.0
    assert autotrace.function(f)(-np.ones(2)) == 2.0

    def g(x, y):
        m = 0.1 if x[0] > 0 else x[0]
        return m * y
    x, y = np.array([1.0, 2.0], np.float32), np.array([1.0, 10.0])
    np.testing.assert_array_equal(autotrace.function(g)(x, y), g(x, y))


def test_a_none_returned_on_one_path_is_named_the_return_value():
    def f(x):
        if x[0] > 0:
            return None
        return x
    with pytest.raises(ControlFlowError, match=r"the return value is None after the true "
                                               r"branch and f64\[2\] after the false branch"):
        autotrace.function(f)(np.ones(2))


def rec_traced(x):
    if x > 10:
        return x
    return rec_traced(x * 2)


def test_recursion_stopped_by_a_traced_test_says_to_write_a_loop():
    with pytest.raises(RecursionError, match=r"rec_traced calls itself, and the test that "
                       r"stops it is on a traced value[\s\S]*write it as a while loop"):
        autotrace.function(rec_traced)(np.float64(1.0))
