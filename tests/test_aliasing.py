"""Python's and NumPy's semantics of writes under the transforms.

A new array stays a new array: the derivatives of functions that write into an array they
computed must neither change the caller's arrays nor read values that a write through
another name has changed. And a write keeps what NumPy keeps.
"""
import numpy as np
import pytest

import autotrace
from autotrace.testing import check_grads


def times_one_then_write(x):
    A = x * 1.0
    A[0] = 0.0
    return np.sum(A) * x[0]


def one_times_then_write(x):
    A = 1.0 * x
    A[0] = 0.0
    return np.sum(A) * x[0]


def divided_by_one_then_write(x):
    A = x / 1.0
    A[0] = 0.0
    return np.sum(A) * x[0]


def power_one_then_write(x):
    A = x ** 1
    A[0] = 0.0
    return np.sum(A) * x[0]


def negated_twice_then_write(x):
    A = -(-x)
    A[0] = 0.0
    return np.sum(A) * x[0]


def reshaped_times_one_then_write(x):
    A = x.reshape(3) * 1.0
    A[0] = 0.0
    return np.sum(A) * x[0]


COPIES_THEN_WRITE = [times_one_then_write, one_times_then_write, divided_by_one_then_write,
                     power_one_then_write, negated_twice_then_write,
                     reshaped_times_one_then_write]


@pytest.mark.parametrize("function", COPIES_THEN_WRITE, ids=lambda f: f.__name__)
def test_an_identity_operation_makes_a_new_array(function):
    # f = (x1 + x2) * x0: the gradient is (x1 + x2, x0, x0)
    x = np.array([1.0, 2.0, 3.0])
    value, gradient = autotrace.value_and_grad(function)(x)
    assert value == 5.0
    np.testing.assert_allclose(gradient, [5.0, 1.0, 1.0])
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("function", COPIES_THEN_WRITE, ids=lambda f: f.__name__)
def test_an_identity_operation_makes_a_new_tangent(function):
    x = np.array([1.0, 2.0, 3.0])
    tangent = np.array([1.0, 1.0, 0.0])
    value, derivative = autotrace.forward(function)(x, tangent=tangent)
    assert (value, derivative) == (5.0, 6.0)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(tangent, [1.0, 1.0, 0.0])


def square_sum(x):
    return np.sum(x ** 2)


def test_identities_inside_arithmetic_are_still_folded():
    # power's rule gives `2 * x ** (2 - 1)`: the `** 1` feeds a product, and goes
    assert "* 2 * x\n" in autotrace.source(autotrace.grad(square_sum))
    assert "dx * 2 * x," in autotrace.source(autotrace.forward(square_sum))


# Writes that NumPy makes through other names are refused (tests/test_errors.py); these,
# which change nothing another name sees, are differentiated.

def adds_to_a_float_alias(a, b):
    s = a
    s += b
    return s * s


def extends_a_slice_of_a_list(x):
    items = [x, 2.0 * x]
    head = items[:1]
    head += [x]
    return np.sum(head[0] * head[1])


def accumulates_from_an_item(x):
    total = x[0]
    total += x[1]
    return total * x[2]


def test_writes_that_no_other_name_sees():
    assert autotrace.grad(adds_to_a_float_alias, wrt=(0, 1))(1.5, 2.0) == (7.0, 7.0)
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(autotrace.grad(extends_a_slice_of_a_list)(x), 2 * x)
    np.testing.assert_allclose(autotrace.grad(accumulates_from_an_item)(x), [3.0, 3.0, 3.0])


# Assignment through an integer array that repeats a position keeps the last write, as NumPy
# does: the values written before it get no gradient.

def assign_repeated(x):
    A = np.zeros(3)
    A[np.array([0, 0, 2])] = x
    return np.sum(A * np.arange(1, 4))


def add_repeated(x):
    A = np.zeros(3)
    A[[0, 0, 2]] += x  # buffered: A[0] is x[1] alone
    return np.sum(A * np.arange(1, 4))


def assign_repeated_in_two_dimensions(x):
    A = np.zeros((2, 3))
    A[[1, 0, 1], [2, 2, 2]] = x       # A[1, 2] is x[2]
    A[:, [0, 0]] = x[:2] * 2.0        # column 0 is 2 x[1]
    return np.sum(A * np.arange(1.0, 7.0).reshape(2, 3))


@pytest.mark.parametrize("function, expected", [
    (assign_repeated, [0.0, 1.0, 3.0]),
    (add_repeated, [0.0, 1.0, 3.0]),
    (assign_repeated_in_two_dimensions, [0.0, 13.0, 6.0]),
], ids=["assign", "add", "two-dimensions"])
def test_repeated_indices_keep_the_last_write(function, expected):
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(autotrace.grad(function)(x), expected)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(function))(x), expected)
    check_grads(function, (x,), order=2, modes=("reverse", "forward"))
