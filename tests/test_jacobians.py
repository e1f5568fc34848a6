"""Jacobians and derivatives of derivatives of functions with traced control flow, built
arrays, keyword arguments and structured results: jacrev and jacfwd batch a derivative with
vmap, whose batching of a traced `cond` or `while` must give each column the values of its
own run. Each is checked against central differences."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

X = np.array([0.3, -0.7, 1.2])


def central_jacobian(f, x, eps=1e-6):
    """The Jacobian of `f` at `x` (one row per element of f(x)), by central differences."""
    columns = []
    for i in range(x.size):
        step = np.zeros_like(x)
        step.flat[i] = eps
        columns.append((np.asarray(f(x + step)) - np.asarray(f(x - step))) / (2 * eps))
    return np.stack(columns, axis=-1)


def built_array(p):
    k = np.array([p[1], -p[0] * p[1]])  # an array built from traced scalars
    return np.sum(k ** 2)


@pytest.mark.parametrize("second", {
    "jacrev(grad)": lambda f: autotrace.jacrev(autotrace.grad(f)),
    "jacfwd(grad)": lambda f: autotrace.jacfwd(autotrace.grad(f)),
    "hessian": autotrace.hessian,
    "function(jacrev(grad))": lambda f: autotrace.function(autotrace.jacrev(autotrace.grad(f))),
}.items(), ids=lambda item: item[0])
def test_second_derivatives_of_an_array_built_from_scalars(second):
    p = np.array([1.3, 0.8])
    expected = central_jacobian(autotrace.grad(built_array), p)
    np.testing.assert_allclose(second[1](built_array)(p), expected, rtol=1e-6, atol=1e-6)


def test_traced_and_batched_grad_of_grad_of_an_array_built_from_scalars():
    def f(t):
        return built_array(np.array([t, 2 * t]))
    ts = np.array([0.7, 0.3])
    expected = [central_difference(autotrace.grad(f), t) for t in ts]
    second = autotrace.grad(autotrace.grad(f))
    np.testing.assert_allclose([autotrace.function(second)(t) for t in ts], expected, rtol=1e-6)
    np.testing.assert_allclose(autotrace.vmap(second)(ts), expected, rtol=1e-6)


def squares_where_positive(x):
    out = np.zeros(3)
    for i in range(3):
        if x[i] > 0:
            out[i] = x[i] ** 2
    return out


def scaled_or_shifted(x):
    y = x.copy()
    i = 0
    while i < 3:
        if y[i] > 0.5:
            y[i] = y[i] * 3
            i += 1
            continue
        y[i] = y[i] - x[0]
        i += 1
    return y


@pytest.mark.parametrize("function", [squares_where_positive, scaled_or_shifted])
@pytest.mark.parametrize("jacobian", [autotrace.jacrev, autotrace.jacfwd, autotrace.jacobian])
def test_jacobians_of_a_branch_in_a_loop(jacobian, function):
    np.testing.assert_allclose(jacobian(function)(X), central_jacobian(function, X),
                               rtol=1e-6, atol=1e-8)


def test_grad_batched_over_cotangents_of_a_branch_in_a_loop():
    def weighted(x, s):
        return np.sum(squares_where_positive(x) * s)
    rows = autotrace.vmap(autotrace.grad(weighted), in_axes=(None, 0))(X, np.eye(3))
    np.testing.assert_allclose(rows, central_jacobian(squares_where_positive, X), atol=1e-8)


def test_vmap_of_a_loop_and_branch_the_same_for_every_example():
    """The loop and the branch run once for the batch; what they compute from the batched
    argument is batched, the rest is one example's (a constant in one branch, a value the
    other makes batched)."""
    def f(x, s):
        total, i = 0.0, 0
        while i < 3:
            if x[i] > 0:
                total = total + s * x[i]
            else:
                total = 1.0
            i += 1
        return total
    s = np.array([0.5, -2.0, 3.0])
    np.testing.assert_allclose(autotrace.vmap(f, in_axes=(None, 0))(X, s),
                               [f(X, value) for value in s])
    np.testing.assert_allclose(autotrace.vmap(f, in_axes=(None, 0))(-X, s),
                               [f(-X, value) for value in s])
