"""Finite differences that tests compare traced and eager gradients with, and a walk over two
results of one structure that compares their leaves."""
import numpy as np

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
