"""Lists grown and stored into other lists, and lists copied with .copy().

The adjoint sweep undoes `items.append(v)` by binding `items` to the shorter list, never by
popping in place: the grown list may be held elsewhere too (stored into another list, or
returned), and what holds it must keep what the function made. The adjoint of
`rows[0] = row` leaves zeros in the slot that the gradient of the list the slot held before,
of another length, replaces (runtime.derivatives.structure.ClearedList); two gradients of one
list that differ in length otherwise are an error, never a sum that drops items. A loop reads a
copy of the list it runs over, as it was when the loop began. `.copy()` of a list or dict keeps it
one (np.copy would make it an array). Second derivatives are checked against finite differences of
the first derivative, eager and traced.
"""
import numpy as np
import pytest

import autotrace
from autotrace.testing import check_grads

X = np.array([0.5, -1.0, 2.0])


def concatenated_into_a_row(x):
    """rows[0] becomes [x, x**2]: 2 x**2."""
    rows = [[x]]
    rows[0] = rows[0] + [x * x]
    return np.sum(rows[0][1] * 2.0)


def appended_copy_of_a_row(x):
    """rows[0] becomes [x, x**3]: 2 x**3 + x."""
    rows = [[x]]
    row = list(rows[0])
    row.append(x * x * x)
    rows[0] = row
    return np.sum(rows[0][1] * 2.0 + rows[0][0])


def appended_in_a_loop(x):
    """rows[0] becomes [x, x, 2x, 3x] over three trips: x * (x + 2x + 3x) = 6 x**2."""
    rows = [[x]]
    for step in range(1, 4):
        row = list(rows[0])
        row.append(x * step)
        rows[0] = row
    return np.sum(rows[0][0] * (rows[0][1] + rows[0][2] + rows[0][3]) - rows[0][0] * x)


def copied_list(x):
    """The copy is a list that grows, the original does not: x * 2x + x**2 = 3 x**2."""
    items = [x, 2.0 * x]
    more = items.copy()
    more.append(x * x)
    joined = [x, x].copy() + [x]
    return np.sum(items[0] * more[1] + more[2] + 0.0 * joined[2] * len(items))


def shortened_copy_of_a_row(x):
    """rows[0] becomes [x, x**2]: x**3 + 2x."""
    rows = [[x, x * x, x * x * x]]
    row = list(rows[0])
    row.pop()
    rows[0] = row
    return np.sum(rows[0][1] * rows[0][0] + len(rows[0]) * x)


def looped_over_then_grown(x):
    """x**2 + (2x)**2 + x**3: the loop reads the list as it was before the append."""
    items = [x, 2.0 * x]
    total = 0.0
    for item in items:
        total = total + item * item
    items.append(x * x * x)
    return np.sum(total + items[2])


FUNCTIONS = [  # each with its first and second derivatives
    (concatenated_into_a_row, lambda x: 4 * x, lambda x: 4 + 0 * x),
    (appended_copy_of_a_row, lambda x: 6 * x ** 2 + 1, lambda x: 12 * x),
    (appended_in_a_loop, lambda x: 10 * x, lambda x: 10 + 0 * x),
    (copied_list, lambda x: 6 * x, lambda x: 6 + 0 * x),
    (shortened_copy_of_a_row, lambda x: 3 * x ** 2 + 2, lambda x: 6 * x),
    (looped_over_then_grown, lambda x: 10 * x + 3 * x ** 2, lambda x: 10 + 6 * x),
]


@pytest.mark.parametrize("function, first, second", FUNCTIONS,
                         ids=[f.__name__ for f, _, _ in FUNCTIONS])
def test_second_derivatives_of_lists_held_in_lists(function, first, second):
    gradient = autotrace.grad(function)
    hessian = autotrace.grad(gradient)
    assert autotrace.forward(function)(1.5)[1] == pytest.approx(first(1.5), rel=1e-12)
    for x in (1.5, X):  # the sum of elementwise functions: their derivatives elementwise
        np.testing.assert_allclose(gradient(x), first(x), rtol=1e-12)
        np.testing.assert_allclose(autotrace.function(gradient)(x), first(x), rtol=1e-12)
        np.testing.assert_allclose(hessian(x), second(x), rtol=1e-12)
        np.testing.assert_allclose(autotrace.function(hessian)(x), second(x), rtol=1e-12)
    step = 1e-6  # the second derivative against differences of the eager first derivative
    assert hessian(1.5) == pytest.approx((gradient(1.5 + step) - gradient(1.5 - step))
                                         / (2 * step), rel=1e-6)
    check_grads(function, (X,), order=2, modes=("reverse", "forward"))


def shortened_argument(items):
    rows = [items]
    row = list(rows[0])
    row.pop()
    rows[0] = row
    return rows[0][0] * rows[0][1]


def test_a_list_argument_shortened_and_stored_back_gets_a_gradient_of_its_length():
    assert autotrace.grad(shortened_argument)([1.0, 2.0, 3.0]) == [2.0, 1.0, 0.0]


def grown_and_returned(x):
    row = [x]
    row.append(x * x)
    return row


def test_the_adjoint_sweep_leaves_a_returned_list_as_the_function_made_it():
    value, gradient = autotrace.value_and_grad(grown_and_returned)(2.0, dy=[1.0, 1.0])
    assert value == [2.0, 4.0]
    assert gradient == 5.0
    value, backward = autotrace.vjp(grown_and_returned, 2.0)
    assert backward([1.0, 0.5]) == (3.0,)
    assert value == [2.0, 4.0]


def test_list_gradients_of_different_lengths_never_add_by_dropping_items():
    from autotrace.runtime.derivatives.structure import ClearedList, add
    assert add(ClearedList([0.0, 0.0]), [3.0]) == [3.0]
    assert add([3.0, 1.0, 2.0], ClearedList([0.0])) == [3.0, 1.0, 2.0]
    total = add(ClearedList([0.0]), [2.0])
    assert total == [2.0] and type(total) is list  # real gradient: no longer a cleared zero
    with pytest.raises(ValueError, match="cannot add two gradients of one list that have 2 and "
                                         "1 items"):
        add([1.0, 2.0], [1.0])
