"""Reverse mode over forward mode through calls that generated code makes at run time: a
method of an object (`m.f`), with keyword arguments, a function held in a variable. The
forward derivative calls `jvp_call`; its gradient is reverse mode over the called function's
forward derivative (transforms/dynamic_calls.py jvp_call_transpose). Each gradient, with
respect to the point and to the direction, is checked against finite differences, eagerly
and traced."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

X = np.array([0.1, 0.2, 0.3])
V = np.array([1.0, -1.0, 0.5])


class Wave:
    def __init__(self, w):
        self.w = w

    def energy(self, x, scale=1.0):
        return np.sum(np.sin(self.w * x) * scale) + np.sum(x * x * self.w)


WAVE = Wave(np.array([1.0, 2.0, 3.0]))


def through_a_method(x):
    return WAVE.energy(x)


def with_a_keyword(x):
    return WAVE.energy(x, scale=2.0)


def held_in_a_variable(x):
    chosen = WAVE.energy if x.shape[0] == 3 else np.sum
    return chosen(x * x)


@pytest.mark.parametrize("function", [through_a_method, with_a_keyword, held_in_a_variable])
@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_the_gradient_of_a_directional_derivative_through_a_call(function, traced):
    def directional(x, v):
        _, tangent = autotrace.jvp(function, (x,), (v,))
        return tangent

    gradient = autotrace.grad(directional, wrt=(0, 1))
    if traced:
        gradient = autotrace.function(gradient)
    by_point, by_direction = gradient(X, V)
    slope = lambda x: np.dot(central_difference(function, x), V)  # noqa: E731
    # (a difference of differences: good to about 1e-5)
    np.testing.assert_allclose(by_point, central_difference(slope, X, eps=1e-4), rtol=1e-4)
    np.testing.assert_allclose(by_direction, central_difference(function, X), atol=1e-6)
