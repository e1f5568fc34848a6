"""Edge cases of np.interp, np.average, np.bincount and np.piecewise, and the advice the
limitations page gives for NaNs that reach a NaN-skipping reduction through arithmetic.

np.interp with a repeated first or last knot (a segment of zero width, chosen for the x
outside) has a finite gradient, and one sample point is a constant; np.average takes a tuple of
axes with weights of the array's shape or of its sizes along those axes; a traced np.bincount
counts a boolean x; np.piecewise takes a 0-d x under autotrace.function.
"""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

X = np.array([-0.5, 0.45, 1.7, 2.4, -1.1, 0.8])


def interp_repeated_first(x):
    return np.sum(np.interp(x, [0.0, 0.0, 1.0], [0.0, 1.0, 2.0]) ** 2)


def interp_repeated_last(x):
    return np.sum(np.interp(x, [0.0, 1.0, 2.0, 2.0], [0.0, 1.0, 5.0, 6.0]) * x)


def interp_repeated_fp(x):
    return np.sum(np.interp([-0.5, 0.3, 2.5], [0.0, 0.0, 1.0, 2.0, 2.0], x[:5] ** 2))


def interp_single_point(x):
    return np.sum(np.interp(x, [0.0], [3.0]) * x ** 2)


def average_all_axes(x):
    return np.sum(np.average(x.reshape(2, 3), axis=(0, 1), weights=np.abs(x.reshape(2, 3)))
                  ** 2)


def average_axes_of_weights(x):
    return np.sum(np.average(x.reshape(1, 2, 3), axis=(1, 2),
                             weights=np.exp(x.reshape(2, 3))) ** 2)


def average_one_axis_tuple(x):
    return np.sum(np.average(x.reshape(2, 3), axis=(-1,), weights=x[:3] ** 2) ** 2)


def bincount_of_signs(x):
    return np.sum(np.bincount(x > 0, weights=x ** 2, minlength=2) ** 2 * np.array([1.0, 3.0]))


def piecewise_of_a_value(x):
    total = np.sum(x)
    return np.piecewise(total, [total < 0, total >= 0], [lambda t: t ** 2, lambda t: t ** 3])


@pytest.mark.parametrize("f", [
    interp_repeated_first, interp_repeated_last, interp_repeated_fp, interp_single_point,
    average_all_axes, average_axes_of_weights, average_one_axis_tuple, bincount_of_signs,
], ids=lambda f: f.__name__)
def test_gradients_against_finite_differences(f):
    assert autotrace.function(f)(X) == pytest.approx(f(X), rel=1e-12)
    expected = central_difference(f, X)
    np.testing.assert_allclose(autotrace.grad(f)(X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(X), expected, rtol=1e-6,
                               atol=1e-8)
    direction = np.linspace(0.3, -0.7, X.size)
    assert autotrace.jvp(f, (X,), (direction,))[1] == pytest.approx(
        np.sum(expected * direction), rel=1e-6, abs=1e-8)


def test_interp_gradients_at_a_repeated_knot_are_the_slopes():
    # x below a repeated first knot takes fp[0] (slope 0), not 0 * inf
    gradient = autotrace.grad(lambda x: np.sum(np.interp(x, [0.0, 0.0, 1.0], [0.0, 1.0, 2.0])))
    np.testing.assert_array_equal(gradient(np.array([-1.0, 0.5, 2.0])), [0.0, 1.0, 0.0])
    np.testing.assert_allclose(autotrace.hessian(interp_single_point)(X), np.diag(6.0 * X ** 0))


def test_average_with_weights_along_axes_in_another_order_is_refused():
    a = np.arange(6.0).reshape(2, 3)
    with pytest.raises(NotImplementedError, match=r"list the axes in increasing order"):
        autotrace.function(lambda a: np.average(a, axis=(1, 0), weights=np.ones((3, 2))))(a)
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        autotrace.function(lambda a: np.average(a, axis=(0, 1), weights=np.ones(3)))(a)


def test_traced_bincount_of_a_boolean_array_counts_it():
    counts = autotrace.function(lambda x: np.bincount(x > 0, minlength=3))(X)
    np.testing.assert_array_equal(counts, np.bincount(X > 0, minlength=3))
    assert counts.dtype == np.bincount(X > 0, minlength=3).dtype


@pytest.mark.parametrize("x", [X, -X], ids=["positive-sum", "negative-sum"])
def test_piecewise_of_a_0d_value(x):
    assert autotrace.function(piecewise_of_a_value)(x) == pytest.approx(
        piecewise_of_a_value(x), rel=1e-12)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(piecewise_of_a_value))(x),
                               central_difference(piecewise_of_a_value, x), rtol=1e-6)


# docs/limitations.md: NaNs replaced before the arithmetic, masked after it
def masked_squared_error(w, t, y):
    missing = np.isnan(y)
    y0 = np.where(missing, 0.0, y)
    return np.sum(np.where(missing, 0.0, (w * t - y0) ** 2)) / np.sum(~missing)


def test_nan_targets_replaced_before_the_arithmetic_give_the_gradient():
    t = np.array([1.0, 2.0, -1.0, 0.5])
    y = np.array([0.5, np.nan, 2.0, np.nan])
    w = np.array(1.3)
    naive = autotrace.grad(lambda w: np.nanmean((w * t - y) ** 2))(w)
    assert np.isnan(naive)  # zero times NaN, as the page says
    expected = central_difference(lambda w: np.nanmean((w * t - y) ** 2), w)
    np.testing.assert_allclose(autotrace.grad(masked_squared_error)(w, t, y), expected,
                               rtol=1e-7)
