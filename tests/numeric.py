"""Finite differences that tests compare traced and eager gradients with, each mode's
derivative checked against them, and a walk over two results of one structure that compares
their leaves."""
import numpy as np
import pytest

import autotrace


def assert_same_structure(result, reference, check_leaf, where=""):
    """`result` has the structure of `reference`: dicts with the same keys, tuples and lists
    of the same type and length, nested alike; `check_leaf(result_leaf, reference_leaf,
    where)` checks each pair of leaves, `where` naming the path to them (`[0]['w']`)."""
    if isinstance(reference, dict):
        assert isinstance(result, dict) and result.keys() == reference.keys(), where
        for key in reference:
            assert_same_structure(result[key], reference[key], check_leaf, f"{where}[{key!r}]")
    elif isinstance(reference, (tuple, list)):
        assert type(result) is type(reference) and len(result) == len(reference), where
        for index, (item, expected) in enumerate(zip(result, reference)):
            assert_same_structure(item, expected, check_leaf, f"{where}[{index}]")
    else:
        check_leaf(result, reference, where)


def central_difference(f, x, eps=1e-6):
    """The gradient of the scalar function `f` at the array `x`, one element at a time."""
    gradient = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step.flat[i] = eps
        gradient.flat[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return gradient


def assert_gradients_eager_and_traced(function, x):
    """grad(function)(x) and function(grad(function))(x) against central differences (1e-6
    relative); returns the differences."""
    expected = central_difference(function, x)
    np.testing.assert_allclose(autotrace.grad(function)(x), expected, rtol=1e-6, atol=1e-8)
    traced = autotrace.function(autotrace.grad(function))
    np.testing.assert_allclose(traced(x), expected, rtol=1e-6, atol=1e-8)
    return expected


def assert_gradients_in_both_orders(function, x):
    """As assert_gradients_eager_and_traced, and the gradient of the traced function,
    grad(function(function))(x), too; returns the differences."""
    expected = assert_gradients_eager_and_traced(function, x)
    np.testing.assert_allclose(autotrace.grad(autotrace.function(function))(x), expected,
                               rtol=1e-6, atol=1e-8)
    return expected


def check_every_mode(f, x) -> None:
    """f's derivative at x (f: array -> float) in every mode against central differences:
    grad, value_and_grad, vjp, the traced gradient, forward mode, jvp, and the gradient of a
    directional derivative."""
    expected = central_difference(f, x)
    options = dict(rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.grad(f)(x), expected, **options)
    value, gradient = autotrace.value_and_grad(f)(x)
    assert value == pytest.approx(f(x))
    np.testing.assert_allclose(gradient, expected, **options)
    value, vjp_fn = autotrace.vjp(f, x)
    assert value == pytest.approx(f(x))
    np.testing.assert_allclose(vjp_fn(2.0)[0], 2.0 * expected, **options)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(x), expected, **options)
    direction = np.random.default_rng(0).standard_normal(np.shape(x))
    value, tangent = autotrace.forward(f)(x, tangent=direction)
    assert value == pytest.approx(f(x))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)
    value, tangent = autotrace.jvp(f, (x,), (direction,))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)

    def directional(point):
        return np.sum(autotrace.grad(f)(point) * direction)
    np.testing.assert_allclose(autotrace.grad(directional)(x),
                               central_difference(directional, x), rtol=1e-5, atol=1e-6)
