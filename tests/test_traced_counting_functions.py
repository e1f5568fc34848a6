"""np.count_nonzero, np.allclose and np.searchsorted under autotrace.function, written with the
ops of comparisons and sums (runtime/primitives/reduce.py): each gives NumPy's value and dtype,
for arguments of several shapes and options; they raised "it has no op"."""
import numpy as np
import pytest

import autotrace

SORTED = np.array([1.0, 2.0, 2.0, 3.0, 5.0])
VALUES = np.array([[0.0, 2.0], [2.5, 9.0]])
X = np.array([[0.0, 1.0, 2.0], [0.3, 0.0, 0.9]])


def counted(x):
    return (np.count_nonzero(x), np.count_nonzero(x > 0.5, axis=0),
            np.count_nonzero(x, axis=1, keepdims=True), np.count_nonzero(x, axis=(0, 1)))


def placed(a, v):
    return (np.searchsorted(a, v), np.searchsorted(a, v, side="right"), np.searchsorted(a, 2.0),
            np.searchsorted(a[::-1], v, sorter=np.arange(a.size)[::-1]),
            np.searchsorted(a, v.ravel(), "right"))


def compared(x):
    return (np.allclose(x, x + 1e-9), np.allclose(x, x + 1.0), np.allclose(x, x * 1.001, rtol=0.01),
            np.allclose(x * np.nan, np.nan, equal_nan=True), np.allclose(x * np.nan, np.nan))


@pytest.mark.parametrize("function, args", [(counted, (X,)), (placed, (SORTED, VALUES)),
                                            (compared, (X,))])
def test_values_and_dtypes_are_numpys(function, args):
    for traced, eager in zip(autotrace.function(function)(*args), function(*args)):
        np.testing.assert_array_equal(traced, eager)
        assert np.result_type(traced) == np.result_type(eager)


def test_a_gradient_through_a_count():
    def loss(x):
        return np.sum(x ** 2) / np.count_nonzero(x > 0.1)
    expected = autotrace.grad(loss)(X)
    np.testing.assert_allclose(expected, 2 * X / 4)  # (four elements above 0.1)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(X), expected)


def test_searchsorted_places_nan_last_as_numpy_sorts_it():
    values = np.array([np.nan, 0.5, 2.0, 9.0])
    for sorted_values in (np.array([1.0, 2.0, np.nan]), np.array([np.nan, np.nan]),
                          np.array([1.0, 2.0, 3.0])):
        for traced, eager in zip(autotrace.function(placed)(sorted_values, values.reshape(2, 2)),
                                 placed(sorted_values, values.reshape(2, 2))):
            np.testing.assert_array_equal(traced, eager)
