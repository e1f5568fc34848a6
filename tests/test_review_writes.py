"""In-place methods on part of a constant array, which change no value that carries gradient,
and writes into a class attribute that a derivative would read as unchanged."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

POINT = np.array([0.3, -1.2, 0.8, 1.5])


# --- an in-place method on part of a constant array ---------------------------------------------

def row_filled(x):
    A = np.zeros((2, 4))
    A[0].fill(1.0)
    return np.sum(A * x)


def columns_filled(x):
    M = np.eye(4)
    M[:, 0].fill(2.0)
    M.T[1].fill(3.0)
    return x @ M @ x


def tail_filled(x):
    buf = np.zeros(4)
    buf[1:].fill(x[0] if False else 0.5)
    return np.sum(buf * x)


def row_put(x):
    t = np.zeros((2, 4))
    t[1].put([0, 2], [1.0, 2.0])
    return np.sum(t[1] * x)


def mask_after_diagonal(x):
    W = np.eye(4)
    np.fill_diagonal(W, 2.0)
    W[0].fill(0.5)
    mask = np.ones(4)
    mask[:2].fill(0.0)
    return x @ W @ (mask * x)


@pytest.mark.parametrize("f", [row_filled, columns_filled, tail_filled, row_put,
                               mask_after_diagonal])
def test_in_place_method_on_part_of_a_constant_array(f):
    want = central_difference(f, POINT)
    np.testing.assert_allclose(autotrace.grad(f)(POINT), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(POINT), want, rtol=1e-6,
                               atol=1e-8)
    direction = np.array([0.5, -1.0, 0.25, 2.0])
    np.testing.assert_allclose(autotrace.jvp(f, (POINT,), (direction,))[1], want @ direction,
                               rtol=1e-6)
    batched = autotrace.vmap(autotrace.grad(f))(np.stack([POINT, POINT]))
    np.testing.assert_allclose(batched[1], want, rtol=1e-6, atol=1e-8)


def product_filled(x):
    M = np.outer(x, x)
    M[0].fill(1.0)
    return np.sum(M * np.arange(16).reshape(4, 4))


def filled_with_an_argument(x):
    y = np.zeros(4)
    y[1:].fill(x[0])
    return np.sum(y * x)


def filled_after_a_product(x):
    A = np.ones((2, 2))
    y = A @ x[:2]
    A[0].fill(5.0)
    return np.sum(y * x[:2]) + np.sum(A @ x[2:])


def filled_in_a_loop(x):
    A = np.ones((2, 4))
    total = 0.0
    for i in range(2):
        total = total + np.sum(A * x)
        A[i].fill(3.0)
    return total


@pytest.mark.parametrize("f, line, message", [
    (product_filled, 2, "M[0].fill(), which changes 'M' in place; compute a new value "
                        "instead: M[0] = np.full_like(M[0], 1.0)"),
    (filled_with_an_argument, 2, "y[1:].fill(), which changes 'y' in place"),
    # the derivative of `A @ x[:2]` would read A after the write
    (filled_after_a_product, 3, "A[0].fill(), which changes 'A' in place"),
    (filled_in_a_loop, 5, "A[i].fill(), which changes 'A' in place"),
])
@pytest.mark.parametrize("transform", [autotrace.grad, autotrace.forward])
def test_in_place_method_on_part_of_a_varied_array_is_refused(f, line, message, transform):
    with pytest.raises(autotrace.TransformError) as error:
        transform(f)(POINT)
    assert f"autotrace cannot differentiate {message}" in str(error.value)
    assert f"line {f.__code__.co_firstlineno + line}" in str(error.value)
