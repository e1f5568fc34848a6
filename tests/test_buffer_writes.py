"""A buffer the function makes (np.zeros, np.arange, np.empty_like), filled from the input and
then used: the gradient's code restores the buffer by the name that holds it
(transforms/codegen/restores.py), which the write must reach where that code is traced
(function, vmap) or differentiated again (hessian: forward over reverse). Each function is
checked in every mode against finite differences, with inputs taking each branch.
"""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference


def filled_then_multiplied(x):
    t = np.zeros(3)
    t[:] = x
    t = t * x
    return np.sum(t ** 2)


def filled_item_by_item_then_multiplied_in_place(x):
    t = np.zeros(3)
    for i in range(3):
        t[i] = x[i]
    t *= x
    return np.sum(t ** 2)


def part_of_a_range_filled(x):
    t = np.arange(3.0)
    t[1:] = x[:2]
    t *= x
    return np.sum(t ** 2)


def made_like_the_input(x):
    t = np.empty_like(x)
    t[:] = np.sin(x)
    t *= x
    return np.sum(t)


def added_into_item_by_item(x):
    t = np.ones(3)
    for i in range(3):
        t[i] += x[i]
    t = t * x
    return np.sum(t ** 2)


def filled_in_a_traced_if(x):
    t = np.zeros(3)
    if np.sum(x) > 0:
        t[:2] = x[1:]
    else:
        t[1:] = x[:2] * 2
    t = t * x
    return np.sum(t ** 2)


def filled_in_a_traced_loop(x):
    t = np.zeros(3)
    i = 0
    while np.sum(t) < 1.0 and i < 3:
        t[i] = x[i] ** 2 + 0.5
        i += 1
    t = t * x
    return np.sum(t ** 2)


def read_between_two_writes(x):
    t = np.zeros(3)
    t[0] = x[0]
    s = t * 2.0
    t[1] = x[1] * s[0]
    t = t * x
    return np.sum(t ** 2) + np.sum(s)


FUNCTIONS = [filled_then_multiplied, filled_item_by_item_then_multiplied_in_place,
             part_of_a_range_filled, made_like_the_input, added_into_item_by_item,
             filled_in_a_traced_if, filled_in_a_traced_loop, read_between_two_writes]


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [np.array([0.3, -0.7, 1.1]), np.array([-0.3, 0.7, -1.1])],
                         ids=["positive_sum", "negative_sum"])
def test_every_mode_against_finite_differences(function, x):
    expected = central_difference(function, x)
    options = dict(rtol=1e-6, atol=1e-8)
    gradient = autotrace.grad(function)
    np.testing.assert_allclose(gradient(x), expected, **options)
    np.testing.assert_allclose(autotrace.function(gradient)(x), expected, **options)
    np.testing.assert_allclose(autotrace.grad(autotrace.function(function))(x), expected,
                               **options)
    batch = np.stack([x, 1.1 * x])
    np.testing.assert_allclose(autotrace.vmap(gradient)(batch),
                               [expected, central_difference(function, 1.1 * x)], **options)
    direction = np.array([0.4, -1.3, 0.8])
    _, tangent = autotrace.jvp(function, (x,), (direction,))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)
    # The Hessian's rows against differences of the (eager, right) gradient.
    rows = [central_difference(lambda point: gradient(point)[i], x, eps=1e-5)
            for i in range(3)]
    np.testing.assert_allclose(autotrace.hessian(function)(x), rows, rtol=1e-5, atol=1e-6)
