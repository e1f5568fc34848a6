"""An object that holds a Variable and also an array computed from it (or from an argument):
the computed attribute gets its gradient through the object's, in implicit_grad, grad, forward
mode, traced and to second order; the Variable gets its own as ever. (The object's gradient
used to be dropped whenever it held a Variable: the computed attribute then gave none.)"""
import numpy as np
import pytest

import autotrace
from tests.variable_helpers import check_variable_gradients

X = np.array([3.0, 4.0])


class Holder:
    def __init__(self, variable, computed):
        self.variable = variable
        self.computed = computed

    def out(self, x):
        return np.sum(self.computed * x)

    def both(self, x):
        return np.sum(self.variable * self.computed * x)


def make_variable():
    return autotrace.Variable(np.array([1.0, 2.0]), name="v")


def test_implicit_gradient_through_a_computed_attribute_read_by_a_method():
    v = make_variable()

    def loss():
        holder = Holder(v, v * X)
        return holder.out(X) + holder.both(X)  # sum(v x**2) + sum(v**2 x**2)
    pairs = check_variable_gradients(loss)
    np.testing.assert_allclose(pairs[0][0], X ** 2 + 2 * v.numpy() * X ** 2)
    step = autotrace.function(autotrace.implicit_grad(loss))
    np.testing.assert_allclose(step()[0][0], X ** 2 + 2 * v.numpy() * X ** 2)


def built_around(x, v):
    """sum(v x**2) through the object's method."""
    return Holder(v, v * x).out(x)


def test_gradient_of_an_argument_through_an_object_holding_a_variable():
    v = make_variable()
    first, second = 2 * v.numpy() * X, 2 * v.numpy()
    np.testing.assert_allclose(autotrace.grad(built_around)(X, v), first)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(built_around))(X, v), first)
    assert autotrace.forward(built_around)(X, v)[1] == pytest.approx(np.sum(first))
    hessian = autotrace.grad(autotrace.grad(built_around))  # elementwise: the diagonal
    np.testing.assert_allclose(hessian(X, v), second)
    np.testing.assert_allclose(autotrace.function(hessian)(X, v), second)
    np.testing.assert_allclose(autotrace.forward(autotrace.grad(built_around))(X, v)[1],
                               second)
    gradient = autotrace.grad(built_around)
    step = 1e-6
    differences = [(gradient(X + step * e, v) - gradient(X - step * e, v))[i] / (2 * step)
                   for i, e in enumerate(np.eye(2))]
    np.testing.assert_allclose(hessian(X, v), differences, rtol=1e-6)
