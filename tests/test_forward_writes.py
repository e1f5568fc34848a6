"""Forward mode and arrays written in place: `A[s] = ...` in the user's code.

The tangent of a subscript assignment reads the values from before it, as the primal does.
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
