"""Swaps: rows exchanged at a pivot found while running (`A[[k, p]] = A[[p, k]]`, p from
np.argmax), and two buffers exchanged by a tuple assignment (`u, un = un, u`) in a stencil loop.

A traced integer inside an index list makes the index traced, as a traced index array does:
the gradient of the write keeps the last write to each element, computed in the graph.
"""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

RNG = np.random.default_rng(3)


def swap_to_front(b):
    b = b.copy()
    p = np.argmax(np.abs(b))
    b[[0, p]] = b[[p, 0]]
    return b[0] * 2.0 + b[1]


def lu_partial_pivot(A):
    """Solve A x = (1, ..., n) by Gaussian elimination with partial pivoting."""
    A = A.copy()
    n = A.shape[0]
    b = np.arange(1.0, n + 1)
    for k in range(n - 1):
        p = k + np.argmax(np.abs(A[k:, k]))
        A[[k, p]] = A[[p, k]]
        b[[k, p]] = b[[p, k]]
        for i in range(k + 1, n):
            m = A[i, k] / A[k, k]
            A[i, k:] = A[i, k:] - m * A[k, k:]
            b[i] = b[i] - m * b[k]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return np.sum(x ** 2)


def assert_every_mode(f, x, batch):
    """f's gradient at x against central differences: eager, traced, of the traced function,
    forward mode, and vmap(grad(f)) over `batch`."""
    expected = central_difference(f, x)
    options = dict(rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.grad(f)(x), expected, **options)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(x), expected, **options)
    np.testing.assert_allclose(autotrace.grad(autotrace.function(f))(x), expected, **options)
    assert autotrace.function(f)(x) == pytest.approx(f(x))
    direction = RNG.standard_normal(np.shape(x))
    value, tangent = autotrace.forward(f)(x, tangent=direction)
    assert value == pytest.approx(f(x))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(batch),
                               np.stack([central_difference(f, x) for x in batch]), **options)


@pytest.mark.parametrize("f, x, batch", [
    (swap_to_front, np.array([1.0, -3.0, 2.0]),
     np.array([[1.0, -3.0, 2.0], [4.0, 1.0, 2.0], [0.5, 0.1, -2.0]])),
    (lu_partial_pivot, RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3, 3))),
], ids=["vector", "lu"])
def test_a_swap_at_a_traced_pivot(f, x, batch):
    assert_every_mode(f, x, batch)


def test_the_traced_gradient_of_a_swap_to_front():
    np.testing.assert_allclose(
        autotrace.function(autotrace.grad(swap_to_front))(np.array([1.0, -3.0, 2.0])),
        [1.0, 2.0, 0.0])
