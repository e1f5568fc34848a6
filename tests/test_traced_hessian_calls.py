"""The hessian of a function that calls a function of the user's in one branch of an `if` on a
traced value, traced by autotrace.function.

A derivative of a derivative runs such a call whole, noting the writes into objects' state from
just before it (`_written1 = state_writes_log()`, runtime/derivatives/state_log.py), so that its
recomputation in the adjoint sweep sees the state the call saw. In a traced `if` that log is
begun in the branch that makes the call only; the other branch never reads it. Each function
here is checked against finite differences of its gradient, written by hand, on both paths.
"""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

POINTS = [np.array([0.5, 1.2, -0.3]), np.array([-0.5, -1.2, 0.3])]  # each path taken


def squares(x):
    return np.sum(x ** 2)


def called_in_the_true_branch(x):
    if x[0] > 0:
        y = squares(x)
    else:
        y = np.sum(x)
    return y * x[1]


def gradient_of_called_in_the_true_branch(x):
    e1 = np.array([0.0, 1.0, 0.0])
    if x[0] > 0:
        return 2.0 * x * x[1] + e1 * np.sum(x ** 2)
    return x[1] * np.ones(3) + e1 * np.sum(x)


def called_in_the_false_branch(x):
    y = np.sum(x * x[2])
    z = y * 2.0 if x[0] > 0 else squares(x * x[1])
    return z


def gradient_of_called_in_the_false_branch(x):
    e2 = np.array([0.0, 0.0, 1.0])
    if x[0] > 0:
        return 2.0 * (x[2] + e2 * np.sum(x))
    e1 = np.array([0.0, 1.0, 0.0])
    return 2.0 * x * x[1] ** 2 + e1 * 2.0 * x[1] * np.sum(x ** 2)


class Scaled:
    def __init__(self):
        self.scale = 3.0

    def forward(self, x):
        return np.sum(x ** 2) * self.scale


LAYER = Scaled()


def method_called_in_a_branch(x):
    if x[0] > 0:
        y = LAYER.forward(x)
    else:
        y = np.sum(x)
    return y * x[1]


def gradient_of_method_called_in_a_branch(x):
    e1 = np.array([0.0, 1.0, 0.0])
    if x[0] > 0:
        return 3.0 * (2.0 * x * x[1] + e1 * np.sum(x ** 2))
    return x[1] * np.ones(3) + e1 * np.sum(x)


CASES = [(called_in_the_true_branch, gradient_of_called_in_the_true_branch),
         (called_in_the_false_branch, gradient_of_called_in_the_false_branch),
         (method_called_in_a_branch, gradient_of_method_called_in_a_branch)]


@pytest.mark.parametrize("x", POINTS, ids=["true", "false"])
@pytest.mark.parametrize("f, gradient", CASES, ids=[case[0].__name__ for case in CASES])
def test_the_traced_hessian_of_a_call_in_a_traced_branch(f, gradient, x):
    expected = np.stack([central_difference(lambda p, i=i: gradient(p)[i], x)
                         for i in range(x.size)])
    np.testing.assert_allclose(autotrace.grad(f)(x), gradient(x), rtol=1e-12)
    np.testing.assert_allclose(autotrace.hessian(f)(x), expected, rtol=1e-6, atol=1e-8)
    traced = autotrace.function(autotrace.hessian(f))
    np.testing.assert_allclose(traced(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(traced(x + 0.01), autotrace.hessian(f)(x + 0.01), rtol=1e-12)
