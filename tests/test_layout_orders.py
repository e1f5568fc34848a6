"""Derivatives of np.reshape, np.ravel and .flatten with order "A" or "K", which read the items
in the order of the array's memory layout: the gradient and the tangent, laid out anew, are read
in that same order, named (a transposed matrix is read down its rows' memory, in Fortran
order). Where the layout is not known (a traced value) or not one order (order "K" of a strided
view), the derivative refuses with what to write instead."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

WEIGHTS = np.arange(12.0)
X = np.arange(12.0).reshape(3, 4) / 5.0 - 1.0


def ravels_a_transpose_in_memory_order(x):
    return np.sum(np.ravel(x.T, order="A") * WEIGHTS)


def ravels_a_transpose_in_the_order_of_memory(x):
    return np.sum(np.ravel(x.T, order="K") * WEIGHTS)


def reshapes_a_transpose_in_memory_order(x):
    return np.sum(np.reshape(x.T, (2, 6), order="A") * WEIGHTS.reshape(2, 6))


def flattens_a_transpose_in_memory_order(x):
    return np.sum(x.T.flatten("A") * WEIGHTS)


def ravels_a_matrix_in_memory_order(x):
    return np.sum(np.ravel(x * 2.0, order="A") ** 2 * WEIGHTS)


@pytest.mark.parametrize("function", [
    ravels_a_transpose_in_memory_order, ravels_a_transpose_in_the_order_of_memory,
    reshapes_a_transpose_in_memory_order, flattens_a_transpose_in_memory_order,
    ravels_a_matrix_in_memory_order], ids=lambda f: f.__name__)
def test_memory_orders_have_the_gradient_and_tangent_of_the_order_they_read(function):
    expected = central_difference(function, X)
    np.testing.assert_allclose(autotrace.grad(function)(X), expected, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(autotrace.grad(autotrace.function(function))(X), expected,
                               rtol=1e-7, atol=1e-9)
    direction = np.cos(X)
    _, tangent = autotrace.jvp(function, (X,), (direction,))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-7)


def ravels_a_strided_view_in_the_order_of_memory(x):
    return np.sum(np.ravel(x[:, ::2], order="K") * WEIGHTS[:6])


def test_the_order_of_memory_of_a_strided_view_is_refused():
    with pytest.raises(NotImplementedError) as refused:
        autotrace.grad(ravels_a_strided_view_in_the_order_of_memory)(X)
    assert str(refused.value) == ("autotrace differentiates np.ravel with order='K' of a "
                                  "contiguous array only: give order='C' or order='F'")
