"""Statistics, hand-written machine learning and code that changes arrays in place: programs
whose derivatives once differed from finite differences, or that failed where NumPy runs."""
import re

import numpy as np
import pytest

import autotrace
from autotrace.runtime.derivatives.objects import StateWriteError
from tests.numeric import central_difference

WEIGHTS = np.arange(6.0)
POINT = np.array([0.3, -0.8, 1.2, 0.05, -0.2, 0.7])


# --- an in-place method called on part of a variable --------------------------------------------

def slice_filled(x):
    a = x ** 2
    a[2:4].fill(0.5)
    return np.sum(a * WEIGHTS)


def column_filled_through_transpose(x):
    A = (x ** 2).reshape(2, 3)
    A.T[0].fill(1.0)
    return np.sum(A * WEIGHTS.reshape(2, 3))


def list_item_filled(x):
    arrays = [x[:3] ** 2, x[3:] ** 2]
    arrays[0].fill(2.0)
    return np.sum(arrays[0] * x[:3]) + np.sum(arrays[1])


def slice_partitioned(x):
    a = x * np.array([1.0, 2.0, 0.5, 3.0, -1.0, 1.5])
    a[:4].partition(1)
    return np.sum(a[:2] * WEIGHTS[:2]) + np.sum(a)


@pytest.mark.parametrize("f, message", [
    (slice_filled, "a[2:4].fill(), which changes 'a' in place; compute a new value instead: "
                   "a[2:4] = np.full_like(a[2:4], 0.5)"),
    (column_filled_through_transpose,
     "A.T[0].fill(), which changes 'A' in place; write its new value into 'A' itself instead "
     "(A[...] = ...)"),
    (list_item_filled, "arrays[0].fill(), which changes 'arrays' in place; compute a new value "
                       "instead: arrays[0] = np.full_like(arrays[0], 2.0)"),
    (slice_partitioned, "a[:4].partition(), which changes 'a' in place; compute a new value "
                        "instead: a[:4] = np.partition(a[:4], 1)"),
])
@pytest.mark.parametrize("transform", [autotrace.grad, autotrace.forward])
def test_in_place_method_on_part_of_a_variable_is_refused(f, message, transform):
    # The derivative once read the variable as unchanged: a wrong gradient, no error.
    with pytest.raises(autotrace.TransformError) as error:
        transform(f)(POINT)
    assert f"autotrace cannot differentiate {message}" in str(error.value)
    assert f"line {f.__code__.co_firstlineno + 2}" in str(error.value)


def slice_filled_as_advised(x):
    a = x ** 2
    a[2:4] = np.full_like(a[2:4], 0.5)
    return np.sum(a * WEIGHTS)


def test_slice_fill_advice_gives_the_gradient():
    np.testing.assert_allclose(autotrace.grad(slice_filled_as_advised)(POINT),
                               central_difference(slice_filled, POINT), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.grad(slice_filled_as_advised)(POINT),
                               2 * POINT * WEIGHTS * [1, 1, 0, 0, 1, 1])


def item_set_through_a_slice(x):
    a = x ** 2
    a[1:].__setitem__(0, 5.0)
    return np.sum(a * WEIGHTS)


def fill_method_taken_as_a_value(x):
    a = x ** 2
    fill = a.fill
    fill(1.0)
    return np.sum(a * x)


@pytest.mark.parametrize("f, message", [
    (item_set_through_a_slice, "a[1:].__setitem__(), which changes 'a' in place; write its new "
                               "value into 'a' itself instead (a[...] = ...)"),
    (fill_method_taken_as_a_value, "a.fill taken as a value: calling it changes 'a' in place"),
])
def test_in_place_method_reached_another_way_is_refused(f, message):
    with pytest.raises(autotrace.TransformError) as error:
        autotrace.grad(f)(POINT)
    assert f"autotrace cannot differentiate {message}" in str(error.value)


def list_sorted_through_another_name(x):
    items = [x[1] * 3, x[0] * 1]
    sort = items.sort
    sort()
    return items[0] * 10 + items[1]


def test_list_method_taken_as_a_value_is_refused():
    # The gradient once read the list as unsorted: [1, 30] where it is [10, 3].
    with pytest.raises(autotrace.TransformError, match="autotrace cannot differentiate "
                       "items.sort taken as a value: calling it changes 'items' in place, "
                       "which autotrace does not follow; compute a new value instead: items = "
                       "np.sort"):
        autotrace.grad(list_sorted_through_another_name)(np.array([1.0, 2.0]))


# --- an array held by an object changed in place, in a traced derivative ------------------------

class Filter:
    def __init__(self):
        self.state = np.zeros(3)
        self.cache = {}

    def filled(self, x):
        self.state = x ** 2
        self.state.fill(0.5)
        return np.sum(self.state * WEIGHTS[:3]) + np.sum(x)

    def sorted_state(self, x):
        self.state = x * np.array([1.0, -2.0, 0.5])
        self.state.sort()
        return np.sum(self.state * WEIGHTS[:3])

    def written_element(self, x):
        self.state = x ** 2
        self.state[0] = 5.0 * x[1]
        return np.sum(self.state * WEIGHTS[:3])

    def scaled_item(self, x):
        self.cache = {"a": x ** 2}
        self.cache["a"] *= 2.0
        return np.sum(self.cache["a"] * WEIGHTS[:3])


@pytest.mark.parametrize("method, message", [
    ("filled", "autotrace cannot change an array held by an object in place (.fill)"),
    ("sorted_state", "autotrace cannot change an array held by an object in place (.sort)"),
    ("written_element", "autotrace cannot write into an array held by an object (an item of a "
                        "ndarray)"),
    ("scaled_item", "autotrace cannot change the array an item 'a' in place (*=)"),
])
@pytest.mark.parametrize("derivative", [
    lambda f: autotrace.grad(f),
    lambda f: autotrace.function(autotrace.grad(f)),
    lambda f: autotrace.function(lambda x: autotrace.forward(f)(x, tangent=np.ones(3))),
], ids=["grad", "function(grad)", "function(forward)"])
def test_traced_derivative_refuses_an_object_array_changed_in_place(method, message, derivative):
    # Traced, the write once went through: gradients [1.6, -2.2, 8.2] for [1, 1, 1] (fill),
    # [1, -4, 1.5] for [1, -6, 1] (sort), [0.6, -3.2, 7.2] for [0, 1.8, 7.2] (an element
    # written), zeros for [1.2, -6.4, 14.4] (*= on a dict's item).
    with pytest.raises(StateWriteError, match=re.escape(message)):
        derivative(getattr(Filter(), method))(POINT[:3])


# --- a k-means step counting points per cluster, traced -----------------------------------------

CENTRES = np.array([[0.0, 0.0], [1.0, 1.0]])


def cluster_counts(points):
    labels = np.argmin(((points[:, None, :] - CENTRES[None]) ** 2).sum(-1), axis=1)
    counts = np.zeros(2)
    np.add.at(counts, labels, 1.0)
    return counts


def test_traced_add_at_at_traced_indices_into_a_numpy_array():
    points = np.array([[0.1, 0.2], [0.9, 1.2], [1.1, 0.8]])
    traced = autotrace.function(cluster_counts)
    for labels, counts in (((0, 1, 1), [1.0, 2.0]), ((1, 1, 1), [0.0, 3.0])):
        chosen = CENTRES[list(labels)] + 0.1
        result = traced(chosen)  # the same graph: the labels are computed when it runs
        assert result.dtype == np.float64
        np.testing.assert_array_equal(result, counts)
    np.testing.assert_array_equal(traced(points), cluster_counts(points))
