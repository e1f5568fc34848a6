"""A traced branch or loop that changes an array from outside it through another name: a list
made in it that holds the array (`items = [v]; items[0] -= w`), or a view made in it
(`w = v[1:]; w *= 2.0`).

The array is no variable the statement assigns, yet NumPy changes it: the converted statement
takes it as a variable too (transforms/analysis/write_sharing.py says which names a write may
change), so the change is carried out of the graph op. Before, the first raised "a traced value
from another trace" and the second was refused.
"""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference


def list_made_in_a_branch(x, a):
    v = x * 2.0
    if a > 0:
        items = [v]
        items[0] -= v ** 2
    return np.sum(np.sin(v)) + a


def list_made_after_an_early_return(x, a):
    v = x * 2.0
    if np.max(v) < 0.47:
        x = v - 1.0
    else:
        v[-1] *= 3.0
        if a > -0.57:
            return np.sum(x) + np.sum(v)
    items = [v]
    items[0] -= v ** 2
    return np.sum(np.sin(items[0])) + np.sum(x)


def view_made_in_a_branch(x, a):
    v = x * 2.0
    if a > 0:
        w = v[1:]
        w *= a
    return np.sum(np.sin(v))


def view_made_in_a_loop(x, n):
    v = x * 2.0
    for _ in range(n):
        w = v[1:]
        w += 0.5
    return np.sum(v * v)


def held_by_a_list_from_before(x, a):
    v = x * 2.0
    items = [v]
    i = 0
    while i < a:
        items[0] *= 1.5
        i = i + 1
    return np.sum(np.sin(v))


CASES = [list_made_in_a_branch, list_made_after_an_early_return, view_made_in_a_branch,
         held_by_a_list_from_before]
X = np.array([0.3, -0.5, 0.2])


@pytest.mark.parametrize("function", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("a", [np.float64(0.3), np.float64(-0.3), np.int64(2)])
def test_the_traced_function_changes_the_array_as_numpy_does(function, a):
    traced = autotrace.function(function)
    assert traced(X.copy(), a) == pytest.approx(function(X.copy(), a), rel=1e-12)


@pytest.mark.parametrize("n", [np.int64(0), np.int64(2), np.int64(3)])
def test_a_view_made_in_a_traced_loop_changes_its_base(n):
    traced = autotrace.function(view_made_in_a_loop)
    assert traced(X.copy(), n) == pytest.approx(view_made_in_a_loop(X.copy(), n), rel=1e-12)


@pytest.mark.parametrize("a", [np.float64(0.3), np.float64(-0.3), np.float64(-0.7)])
def test_the_traced_gradient_of_a_change_through_another_name(a):
    # (derivatives refuse a write another name reads afterwards: here none reads v after it)
    function = list_made_after_an_early_return
    expected = central_difference(lambda x: function(x.copy(), a), X)
    eager = autotrace.grad(function)(X.copy(), a)
    traced = autotrace.function(autotrace.grad(function))(X.copy(), a)
    np.testing.assert_allclose(eager, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(traced, expected, rtol=1e-6, atol=1e-8)
