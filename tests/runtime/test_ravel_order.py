"""np.ravel and .flatten with an order in a traced function: "F" runs down the columns (the
C-order ravel of the transpose), as NumPy's; "A" and "K" follow the memory layout, which a
trace does not know, so they are refused (but of one dimension, where every order is one)."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.primitives.registry import UntraceableError
from tests.numeric import central_difference

MATRIX = np.arange(6.0).reshape(2, 3)
CUBE = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("x", [MATRIX, CUBE, MATRIX.T, np.arange(5.0)],
                         ids=["matrix", "cube", "transposed", "vector"])
@pytest.mark.parametrize("spelling", ["np.ravel", "ravel", "flatten"])
def test_a_traced_ravel_takes_numpys_order(spelling, x, order):
    def function(x):
        y = x * 1.0
        if spelling == "np.ravel":
            return np.ravel(y, order=order)
        return getattr(y, spelling)(order)
    np.testing.assert_array_equal(autotrace.function(function)(x), function(x))


@pytest.mark.parametrize("order", ["A", "K"])
def test_a_ravel_in_the_memory_order_is_refused(order):
    def function(x):
        return np.ravel(x * 1.0, order=order)
    with pytest.raises(UntraceableError) as refused:
        autotrace.function(function)(MATRIX)
    assert str(refused.value).startswith(
        f"autotrace cannot trace numpy.ravel with order={order!r} of an array of 2 dimensions: "
        "the order of its items is that of the memory layout, which the trace does not know; "
        "give order='C' or order='F'")
    vector = np.arange(4.0)  # of one dimension every order is the same
    np.testing.assert_array_equal(autotrace.function(function)(vector), function(vector))


def test_the_gradient_through_a_column_ravel():
    weights = np.linspace(1.0, 2.0, 6)

    def loss(x):
        return np.sum(np.sin(np.ravel(x, order="F")) * weights)
    expected = central_difference(loss, MATRIX)
    for gradient in (autotrace.grad(loss), autotrace.function(autotrace.grad(loss)),
                     autotrace.grad(autotrace.function(loss))):
        np.testing.assert_allclose(gradient(MATRIX), expected, rtol=1e-6, atol=1e-8)
