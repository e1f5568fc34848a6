"""Forward mode and arrays written in place: `A[s] = ...` in the user's code, and tangents that
must be arrays of their own wherever the primal value is an array of its own.

A tangent that shares memory with another (an input's tangent, the tangent the user passed) is
changed by the tangent of a later subscript assignment: the value stays right, the directional
derivative goes wrong, and the user's tangent array changes under them.
"""
import numpy as np
import pytest

import autotrace
from autotrace.testing import check_grads


def scale_first_half(x):
    A = np.ones(4)
    A[0:2] = A[0:2] * x[0]
    return np.sum(A ** 2)


def scale_even_entries(x):
    A = np.ones(4)
    A[::2] *= x[1]
    return np.sum(A ** 2)


def scale_first_row(x):
    A = np.ones((2, 2))
    A[0] = A[0] * x
    return np.sum(A ** 2)


@pytest.mark.parametrize("function, tangent, expected", [
    # A = [x0, x0, 1, 1]: d sum(A^2) = 4 x0 dx0 = 8 at x0 = 2.
    (scale_first_half, [1.0, 0.0], 8.0),
    # A = [x1, 1, x1, 1]: 4 x1 dx1 = 12 at x1 = 3.
    (scale_even_entries, [0.0, 1.0], 12.0),
    # A[0] = [x0, x1]: 2 x0 dx0 = 4 at x0 = 2.
    (scale_first_row, [1.0, 0.0], 4.0),
])
def test_tangent_of_a_subscript_assignment_reads_the_values_before_it(function, tangent,
                                                                      expected):
    x = np.array([2.0, 3.0])
    value, derivative = autotrace.forward(function)(x, tangent=np.array(tangent))
    assert value == pytest.approx(function(x))
    assert derivative == pytest.approx(expected)
    check_grads(function, (x,), modes=("reverse", "forward"))


def overwrite_an_array_copy(x):
    y = np.array(x)
    y[0] = 5.0
    return np.sum(y * x)


def overwrite_unary_plus(x):
    y = +x
    y[0] = 0.0
    return np.sum(y) * x[0]


def overwrite_minus_zero(x):
    y = x - 0.0
    y[0] = 0.0
    return np.sum(y * x)


def overwrite_plus_constant(x):
    y = x + 1.0
    y[1] = 0.0
    return np.sum(y * x)


def overwrite_sum_with_zeros(x):
    y = x + np.zeros(3)
    y[2] = 0.0
    return np.sum(y * x)


def overwrite_a_shifted_slice(x):
    y = x[0:2] + 0.0  # x[0:2]'s tangent is a view of x's
    y[0] = 5.0
    return np.sum(y * x[1:])


def overwrite_either_branch(x):
    y = (x if x[0] > 0 else x * 2.0) + 0.0
    y[1] = 0.0
    return np.sum(y * x)


@pytest.mark.parametrize("function", [overwrite_an_array_copy, overwrite_unary_plus,
                                      overwrite_minus_zero, overwrite_plus_constant,
                                      overwrite_sum_with_zeros, overwrite_a_shifted_slice,
                                      overwrite_either_branch])
def test_a_new_array_gets_a_tangent_of_its_own(function):
    x = np.array([1.0, 2.0, 3.0])
    tangent = np.ones(3)
    value, derivative = autotrace.forward(function)(x, tangent=tangent)
    eps = 1e-6
    expected = (function(x + eps * tangent) - function(x - eps * tangent)) / (2 * eps)
    assert value == pytest.approx(function(x))
    assert derivative == pytest.approx(expected, rel=1e-6)
    np.testing.assert_array_equal(tangent, np.ones(3))  # the caller's tangent is unchanged
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
    check_grads(function, (x,), order=2, modes=("reverse", "forward"))


def test_an_array_copy_has_the_tangent_of_its_value():
    # 15: y = [5, x1, x2], so d sum(y * x) = 5 dx0 + 2 x1 dx1 + 2 x2 dx2 with dx = ones.
    value, derivative = autotrace.forward(overwrite_an_array_copy)(np.array([1.0, 2.0, 3.0]),
                                                                   tangent=np.ones(3))
    assert (value, derivative) == (18.0, 15.0)


def test_new_array_tangents_are_copied_in_the_generated_source():
    text = autotrace.source(autotrace.forward(overwrite_unary_plus))
    assert "dy = snapshot(dx)" in text


def shifted_exponential(x, c):
    return np.sum(np.exp(x) + c)


def test_a_temporary_with_an_array_of_its_own_is_not_copied():
    text = autotrace.source(autotrace.forward(shifted_exponential))
    assert "snapshot" not in text
