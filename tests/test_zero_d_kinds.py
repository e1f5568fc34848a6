"""A 0-d value that a traced `if` or loop makes a 0-d array on one path and a NumPy scalar on
another (runtime/tracing/control_aliases.py note_zero_d_kind).

NumPy's `u += v` changes a 0-d array in place, with every name for it, and gives a NumPy scalar a
new value. After a traced branch or loop a value may be either, by the condition: a trace
follows what it shares where it is an array on some path, and refuses `op=` on one that may be
either, naming the line. Each function runs at x = [1, 2, 3, 4] (the condition false, or the
loop runs) and at 100 times that (true, or no iteration).
"""
import re

import numpy as np
import pytest

import autotrace as at
from autotrace.runtime.ops import UntraceableError
from autotrace.runtime.tracing.control import ControlFlowError

SMALL = np.array([1.0, 2.0, 3.0, 4.0])
POINTS = [SMALL, 100.0 * SMALL]


def branch_arrays_one_shared(x):
    a = np.asarray(np.sum(x))
    u = a
    if np.sum(x) > 100.0:
        u = np.asarray(np.sum(x) * 2.0)
    u += 1.0  # the condition false: u is a, which changes
    return a * 2.0 + u


def branch_either_read_after_a_write(x):
    a = np.asarray(np.sum(x))
    if np.sum(x) > 100.0:
        u = a
    else:
        u = np.sum(x) * 3.0
    a += 1.0  # the condition true: u is a, which changes
    return u * 2.0


def loop_arrays_one_shared(x):
    a = np.asarray(np.sum(x))
    u = a
    while u < 50.0:
        u = np.asarray(u * 2.0)
    u += 1.0  # no iteration: u is a, which changes
    return a * 2.0 + u


def loop_either_read_after_a_write(x):
    a = np.asarray(np.sum(x))
    u = a
    while u < 50.0:
        u = u * 2.0
    a += 1.0  # no iteration: u is a, which changes
    return u * 2.0


def loop_keeps_a_scalar(x):
    u = np.sum(x)
    while u < 50.0:
        u += 1.0
    return u * 1.0


def branch_either_only_read(x):
    a = np.asarray(np.sum(x))
    u = a if np.sum(x) > 100.0 else np.sum(x) * 3.0
    return u * 2.0 + 1.0


FOLLOWED = [branch_arrays_one_shared, branch_either_read_after_a_write, loop_arrays_one_shared,
            loop_either_read_after_a_write, loop_keeps_a_scalar, branch_either_only_read]


@pytest.mark.parametrize("function", FOLLOWED, ids=lambda f: f.__name__)
def test_a_0d_value_that_is_an_array_on_a_path_shares_its_memory_there(function):
    for x in POINTS:
        expected = function(x)
        assert at.function(function)(x) == expected
        np.testing.assert_array_equal(at.vmap(function)(np.stack([x, x])), [expected] * 2)


def test_the_followed_values_depend_on_the_path():
    # a changed through u (or u through a) on the path named in each function's comment
    assert [branch_arrays_one_shared(x) for x in POINTS] == [33.0, 4001.0]
    assert [branch_either_read_after_a_write(x) for x in POINTS] == [60.0, 2002.0]
    assert [loop_arrays_one_shared(x) for x in POINTS] == [101.0, 3003.0]
    assert [loop_either_read_after_a_write(x) for x in POINTS] == [160.0, 2002.0]


def branch_array_becomes_a_scalar(x):
    u = np.asarray(np.sum(x))
    a = u
    if np.sum(x) > 100.0:
        u = u * 1.0  # a NumPy scalar
    u += 1.0
    return a * 2.0


def branch_scalar_becomes_an_array(x):
    u = np.sum(x)
    if np.sum(x) > 100.0:
        u = np.asarray(u)
    a = u
    u += 1.0
    return a * 2.0


def loop_array_becomes_a_scalar(x):
    u = np.asarray(np.sum(x))
    a = u
    while u < 50.0:
        u = u * 2.0
    u += 1.0
    return a * 2.0 + u


def branch_array_made_new_then_named_twice(x):
    u = np.sum(x)
    if np.sum(x) > 100.0:
        u = np.where(u > 500.0, 500.0, u)  # a new 0-d array
    a = u
    u += 1.0  # the condition true: a changes
    return a * 2.0


def branch_either_written_through_a_view(x):
    u = np.sum(x)
    if np.sum(x) > 100.0:
        u = np.asarray(u * 2.0)
    v = np.asarray(u)  # u itself where u is an array
    v[...] = 0.0
    u += 1.0
    return u * 1.0


def branch_either_through_another_branch(x):
    a = np.asarray(np.sum(x))
    u = a if np.sum(x) > 100.0 else np.sum(x) * 3.0
    if np.sum(x) > 500.0:
        u = np.sum(x) * 5.0
    u += 1.0  # the first condition true, the second false: a changes
    return a * 1.0


EITHER = [branch_array_becomes_a_scalar, branch_scalar_becomes_an_array,
          loop_array_becomes_a_scalar, branch_array_made_new_then_named_twice,
          branch_either_through_another_branch]


@pytest.mark.parametrize("function", EITHER, ids=lambda f: f.__name__)
def test_an_in_place_operator_on_a_value_of_either_kind_is_refused(function):
    lines = [line.split("#")[0].strip() for line in open(__file__).read().splitlines()]
    first = lines.index(f"def {function.__name__}(x):")
    line = lines.index("u += 1.0", first) + 1
    message = re.escape(
        "this changes in place (`+=` and the like, `u[...] = v`, `out=u`) a 0-d value that is a "
        "0-d array or a NumPy scalar depending on a traced condition (a traced `if`, or whether "
        "a traced loop ran): NumPy changes a 0-d array in place, with every name for it, but "
        "gives a NumPy scalar a new value, and a traced graph cannot do both. Write u = u + v")
    for traced in (at.function(function), lambda x: at.vmap(function)(x[None])):
        with pytest.raises(UntraceableError, match=message) as error:
            traced(SMALL)
        assert f'test_zero_d_kinds.py", line {line}, in {function.__name__}' in str(error.value)


def scalar_made_an_array_in_a_loop(x):
    u = np.sum(x)
    n = np.sum(x) * 0.0
    b = u
    while n < 2.0:
        b = u
        u += 1.0  # a new value on the first run; from the second on, b changes too
        u = np.asarray(u)
        n = n + 1.0
    return b * 1.0




def test_a_write_through_a_view_of_a_value_of_either_kind_is_refused():
    with pytest.raises(UntraceableError, match=re.escape("this changes in place (`+=` and the "
                                                         "like, `u[...] = v`, `out=u`)")):
        at.function(branch_either_written_through_a_view)(SMALL)


def branch_array_made_new(x):
    s = np.sum(x)
    if s > 100.0:
        s = np.where(s > 500.0, 500.0, s)  # a new 0-d array, no other name for it
    s += 1.0
    return s * 2.0


def loop_array_made_new(x):
    s = np.sum(x)
    while s < 40.0:
        s += 3.0
        s = np.where(s > 10.0, s, s * 1.5)
    s += 1.0
    return s


@pytest.mark.parametrize("function", [branch_array_made_new, loop_array_made_new],
                         ids=lambda f: f.__name__)
def test_a_new_array_under_one_name_is_written_as_numpy_writes_it(function):
    for x in POINTS:
        expected = function(x)
        assert at.function(function)(x) == expected
        np.testing.assert_array_equal(at.vmap(function)(np.stack([x, x])), [expected] * 2)


def scalar_made_an_array_after_a_branch_in_a_loop(x):
    u = np.sum(x)
    n = np.sum(x) * 0.0
    b = u
    while n < 2.0:
        b = u
        if np.sum(x) > 0.0:
            u += 1.0  # a new value on the first run; from the second on, b changes too
        u = np.asarray(u)
        n = n + 1.0
    return b * 1.0


def scalar_made_an_array_after_a_nested_loop(x):
    u = np.sum(x)
    n = np.sum(x) * 0.0
    b = u
    while n < 2.0:
        b = u
        m = np.sum(x) * 0.0
        while m < 1.0:
            u += 1.0  # a new value on the first run; from the second on, b changes too
            m = m + 1.0
        u = np.asarray(u)
        n = n + 1.0
    return b * 1.0


@pytest.mark.parametrize("function", [scalar_made_an_array_in_a_loop,
                                      scalar_made_an_array_after_a_branch_in_a_loop,
                                      scalar_made_an_array_after_a_nested_loop],
                         ids=lambda f: f.__name__)
def test_a_loop_that_rebinds_a_scalar_and_makes_it_an_array_is_refused(function):
    assert function(SMALL) == 12.0  # (not 11.0)
    with pytest.raises(ControlFlowError, match=re.escape(
            "a traced loop gives a NumPy scalar a new value by an in-place operator (u += v) "
            "and then makes the name a 0-d array (u = np.asarray(u)")):
        at.function(function)(SMALL)
