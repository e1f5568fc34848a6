"""Swaps: rows exchanged at a pivot found while running (`A[[k, p]] = A[[p, k]]`, p from
np.argmax), and two buffers exchanged by a tuple assignment (`u, un = un, u`) in a stencil loop.

A traced integer inside an index list makes the index traced, as a traced index array does:
the gradient of the write keeps the last write to each element, computed in the graph.
"""
import inspect
import re

import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.control_scope import ControlFlowError
from autotrace import TransformError
from tests.numeric import central_difference

RNG = np.random.default_rng(3)


def line_of(function, marker: str) -> int:
    """The line of the file that holds `marker` in `function`'s source."""
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, text in enumerate(lines) if marker in text)


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


# --- two buffers exchanged --------------------------------------------------------------------
# After `u, un = un, u` in a loop each name may hold either array, yet never both the same one
# (transforms/analysis/distinct_names.py): a write into one leaves the other as it was.

def heat(u0, alpha=0.2):
    u = u0.copy()
    un = np.zeros(len(u))
    for _ in range(5):
        un[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
        un[0] = u[0]
        un[-1] = u[-1]
        u, un = un, u
    return np.sum(u ** 2)


def heat_in_a_copied_buffer(u0):
    u = u0.copy()
    un = np.empty_like(u).copy()
    for _ in range(4):
        un[0] = u[0]
        un[-1] = u[-1]
        un[1:-1] = u[1:-1] + 0.2 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u, un = un, u
    return np.sum(u ** 2)


def heat_by_augmented_writes(u0):
    u = u0 * 1.0
    un = np.zeros_like(u0)
    for _ in range(3):
        un[:] = u
        un[1:-1] += 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        u, un = un, u
    return np.sum(np.sin(u))


@pytest.mark.parametrize("f", [heat, heat_in_a_copied_buffer, heat_by_augmented_writes])
def test_two_buffers_exchanged_in_a_loop(f):
    x = np.sin(np.linspace(0.0, 3.0, 8))
    assert_every_mode(f, x, np.stack([x, np.cos(x), x ** 2]))


def test_the_gradient_of_two_exchanged_buffers_with_respect_to_a_number():
    u0 = np.sin(np.linspace(0.0, 3.0, 8))
    step = 1e-6
    expected = (heat(u0, 0.2 + step) - heat(u0, 0.2 - step)) / (2 * step)
    for gradient in (autotrace.grad(heat, wrt=1),
                     autotrace.function(autotrace.grad(heat, wrt=1))):
        assert gradient(u0, 0.2) == pytest.approx(expected, rel=1e-6)


def one_array_under_two_names(x):
    u = x.copy()
    un = u
    for _ in range(3):
        un[0] = u[1] * 2.0
        u, un = un, u
    return np.sum(u * x)


def held_by_the_other(x):
    a = np.zeros(3)
    b = [a]
    for _ in range(3):
        a, b = b, a
    b[0] = x[0]
    return a[0][0] * x[1]


def test_names_exchanged_that_may_be_one_array_are_refused():
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(TransformError, match=re.escape(
            "un[0] = ... writes into 'un', which may share its memory with 'u' (un = u, line "
            f"{line_of(one_array_under_two_names, 'un = u')}), read after it on line "
            f"{line_of(one_array_under_two_names, 'un[0] =') + 1}: the write changes 'u' too, "
            "which autotrace does not follow; if 'u' should keep its old values, work on a "
            "copy, e.g. un = u.copy(); if it should change too, as in NumPy, write into 'u' "
            "itself")):
        autotrace.grad(one_array_under_two_names)(x)
    np.testing.assert_allclose(autotrace.function(one_array_under_two_names)(x),
                               one_array_under_two_names(x.copy()))


def test_an_array_another_name_holds_after_an_exchange_is_refused():
    x = np.array([1.0, 2.0, 3.0])
    message = re.escape("b[0] = ... changes 'b' in place, and 'a' shares its memory")
    with pytest.raises(TransformError, match=message):
        autotrace.grad(held_by_the_other)(x)
    with pytest.raises(ControlFlowError, match=re.escape(
            "this writes traced values into the NumPy array 'b'")):
        autotrace.function(held_by_the_other)(x)
