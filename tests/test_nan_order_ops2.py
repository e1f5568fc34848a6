"""Gradients of order 2 through arguments given as Python lists; np.nanmedian, nanquantile,
nanpercentile, nancumsum, nancumprod, np.partition and np.argpartition in every mode; and
traced np.average with weights that sum to zero."""
from __future__ import annotations

import numpy as np
import pytest

import autotrace
from autotrace.testing import check_grads


def _values(shape, seed=0):
    """Distinct values (no ties), in a random order."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    return (rng.permutation(size) * 0.3 + rng.uniform(0.0, 0.1, size) - 0.15 * size).reshape(
        shape)


# Functions of a list: a rule that computes the gradient of a list as one array hands it back
# as a list of numbers (`match`); the gradient of that gradient goes back through the array.

def stack_of(xs):
    return np.sum(np.sin(np.stack(xs)) ** 2)


def concatenate_of(xs):
    return np.sum(np.concatenate(xs) ** 3)


def array_of(xs):
    return np.sum(np.tanh(np.array(xs)) * np.array(xs))


def einsum_of(xs):
    return np.sum(np.einsum("i,ij->j", *xs) ** 2)


def polyval_of(p, x):
    return np.sum(np.polyval(p, x) ** 2)


def quantile_of(a, q):
    return np.sum(np.sin(np.quantile(a, q, axis=1)))


def percentile_of(a, q):
    return np.sum(np.percentile(a, q) ** 2)


_RNG = np.random.default_rng(1)
LIST_CASES = [
    ("stack", stack_of, ([_RNG.standard_normal(3), _RNG.standard_normal(3)],), (0,)),
    ("concatenate", concatenate_of, ([_RNG.standard_normal(3), _RNG.standard_normal(2)],), (0,)),
    ("array", array_of, ([0.3, -0.4, 0.7],), (0,)),
    ("einsum", einsum_of, ([_RNG.standard_normal(3), _RNG.standard_normal((3, 2))],), (0,)),
    ("polyval", polyval_of, ([0.5, -1.2, 0.3], _RNG.standard_normal(4)), (0, 1)),
    ("quantile-list", quantile_of, (_values((3, 4)), [0.37, 0.61]), (0, 1)),
    ("percentile-list", percentile_of, (_values((5,)), [[20.0, 45.0], [70.0, 90.0]]), (0, 1)),
]


@pytest.mark.parametrize("name, function, args, wrt", LIST_CASES,
                         ids=[c[0] for c in LIST_CASES])
def test_second_order_through_list_arguments(name, function, args, wrt):
    check_grads(function, args, wrt=wrt, order=2, modes=("reverse", "forward"))
    gradient = autotrace.grad(function, argnums=wrt)(*args)
    assert type(gradient[0]) is type(args[0])  # a list's gradient is a list


def weighted(a, w):
    return np.average(a, axis=1, weights=w)


def weighted_loss(a, w):
    return np.sum(np.sin(np.average(a, axis=1, weights=w)))


def test_average_of_weights_summing_to_zero_raises_as_numpy():
    a = np.arange(12.0).reshape(3, 4)
    zero_sum, good = np.array([1.0, -1.0, 2.0, -2.0]), np.array([1.0, 1.0, 2.0, -2.0])
    line = weighted.__code__.co_firstlineno + 1
    at_line = f'(numpy.average at File "{__file__}", line {line})'
    at_loss_line = f'(numpy.average at File "{__file__}", line {line + 4})'
    with pytest.raises(ZeroDivisionError, match=r"^Weights sum to zero, can't be normalized$"):
        weighted(a, zero_sum)
    traced = autotrace.function(weighted)
    np.testing.assert_allclose(traced(a, good), weighted(a, good), rtol=1e-15)
    for function, args, site in [
            (traced, (a, zero_sum), at_line),
            (autotrace.vmap(weighted, in_axes=(0, None)), (a[None], zero_sum), at_line),
            (autotrace.function(autotrace.grad(weighted_loss)), (a, zero_sum), at_loss_line),
            (autotrace.function(autotrace.grad(weighted_loss, argnums=1)), (a, zero_sum),
             at_loss_line)]:
        with pytest.raises(ZeroDivisionError) as raised:
            function(*args)
        assert str(raised.value) == f"Weights sum to zero, can't be normalized {site}"
    # Eager derivatives: NumPy's own error, from the call of np.average.
    with pytest.raises(ZeroDivisionError, match="^Weights sum to zero, can't be normalized"):
        autotrace.grad(weighted_loss)(a, zero_sum)
    # The check passes the sums through: derivatives as before.
    check_grads(weighted_loss, (a, good), wrt=(0, 1), order=2, modes=("reverse", "forward"))


def _with_nans(shape, seed=0):
    """Distinct values with NaNs, a different number in each row, none in the first."""
    a = _values(shape, seed)
    a[1, 1] = a[2, 0] = a[2, 3] = np.nan
    return a


# (id, function of one (3, 4) array with NaNs, whether NumPy's value is promised exactly)
CASES = [
    ("nanmedian", lambda a: np.nanmedian(a, axis=1), True),
    ("nanmedian-all", lambda a: np.nanmedian(a, keepdims=True), True),
    ("nanquantile", lambda a: np.nanquantile(a, 0.37, axis=1), True),
    ("nanquantile-array", lambda a: np.nanquantile(a, [0.2, 0.9], axis=0, keepdims=True), True),
    ("nanquantile-midpoint", lambda a: np.nanquantile(a, 0.4, axis=1, method="midpoint"), True),
    ("nanquantile-nearest", lambda a: np.nanquantile(a, 0.7, axis=1, method="nearest"), True),
    ("nanpercentile", lambda a: np.nanpercentile(a, 65.0, axis=(0, 1)), True),
    ("nancumsum", lambda a: np.nancumsum(a, axis=1), True),
    ("nancumprod", lambda a: np.nancumprod(a / 4.0), True),
    ("partition", lambda a: np.partition(np.nan_to_num(a), (0, 2), axis=0), False),
    ("partition-flat", lambda a: np.partition(np.nan_to_num(a), -3, axis=None), False),
]
SECOND_ORDER = ("nanmedian", "nanquantile", "nancumprod", "partition")


def _loss(function):
    return lambda a: np.nansum(np.sin(function(a)))


def _assert_partition(traced, expected, kth, axis):
    """`traced` is a valid partition with NumPy's values at the kth positions."""
    if axis is None:
        traced, expected, axis = np.ravel(traced), np.ravel(expected), 0
    np.testing.assert_array_equal(np.take(traced, kth, axis=axis),
                                  np.take(expected, kth, axis=axis))
    np.testing.assert_array_equal(np.sort(traced, axis=axis), np.sort(expected, axis=axis))
    for k in np.atleast_1d(kth):
        at_k = np.take(traced, [k], axis=axis)
        before = np.take(traced, np.arange(k % traced.shape[axis]), axis=axis)
        after = np.take(traced, np.arange(k % traced.shape[axis] + 1, traced.shape[axis]),
                        axis=axis)
        assert np.all(before <= at_k) and np.all(after >= at_k)


@pytest.mark.parametrize("name, function, exact", CASES, ids=[c[0] for c in CASES])
def test_every_mode(name, function, exact):
    a = _with_nans((3, 4))
    loss = _loss(function)
    # Traced: NumPy's values and dtypes (partition: see _assert_partition), float32 kept.
    def assert_numpy_value(traced, expected):
        if exact:
            np.testing.assert_array_equal(traced, expected)
        else:
            kth, axis = ((0, 2), 0) if name == "partition" else (-3, None)
            _assert_partition(traced, expected, kth, axis)

    for x in (a, a.astype(np.float32)):
        expected, traced = function(x), autotrace.function(function)(x)
        assert np.asarray(traced).dtype == np.asarray(expected).dtype
        assert_numpy_value(traced, expected)
    # Both modes against finite differences (to order 2 for a few).
    check_grads(loss, (a,), order=2 if name in SECOND_ORDER else 1,
                modes=("reverse", "forward"), atol=1e-5, rtol=1e-4)
    gradient = autotrace.grad(loss)(a)
    assert np.all(gradient[np.isnan(a)] == 0.0)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(a), gradient,
                               rtol=1e-12, atol=1e-12)
    gradient32 = autotrace.grad(loss)(a.astype(np.float32))
    assert gradient32.dtype == np.float32
    np.testing.assert_allclose(gradient32, gradient, rtol=1e-3, atol=1e-3)
    # vmap and vmap(grad) against a loop over examples.
    batch = np.stack([a * scale for scale in (1.0, -0.5, 2.0)])
    for traced, x in zip(autotrace.vmap(function)(batch), batch):
        assert_numpy_value(traced, function(x))
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(loss))(batch),
                               np.stack([autotrace.grad(loss)(x) for x in batch]),
                               rtol=1e-12, atol=1e-12)


def nanquantile_of(a, q):
    return np.sum(np.sin(np.nanquantile(a, q, axis=1)))


def nanpercentile_of(a, q):
    return np.sum(np.nanpercentile(a, q, axis=0) ** 2)


def test_gradients_in_q_the_hessian_and_slices_of_nans():
    a = _with_nans((3, 4))
    check_grads(nanquantile_of, (a, np.array([0.2, 0.7])), wrt=(0, 1), order=2,
                modes=("reverse", "forward"))
    check_grads(nanpercentile_of, (a, [30.0, 80.0]), wrt=(0, 1), order=2,
                modes=("reverse", "forward"))
    # The Hessian, against finite differences of the gradient.
    x = a[:2]
    hessian = autotrace.hessian(lambda x: nanquantile_of(x, 0.37))(x)
    gradient = autotrace.grad(lambda x: nanquantile_of(x, 0.37))
    for index in [(0, 0), (1, 2), (1, 3)]:
        step = np.zeros_like(x)
        step[index] = 1e-6
        np.testing.assert_allclose(hessian[(...,) + index],
                                   (gradient(x + step) - gradient(x - step)) / 2e-6, atol=1e-6)
    # A slice of NaNs alone: NaN, as NumPy's, and no gradient.
    b = np.array([[np.nan, np.nan, np.nan], [3.0, np.nan, 1.0]])
    with pytest.warns(RuntimeWarning):
        expected = np.nanmedian(b, axis=1)
    np.testing.assert_array_equal(autotrace.function(lambda b: np.nanmedian(b, axis=1))(b),
                                  expected)
    np.testing.assert_array_equal(
        autotrace.grad(lambda b: np.nansum(np.nanquantile(b, 0.25, axis=1)))(b),
        [[0.0, 0.0, 0.0], [0.25, 0.0, 0.75]])


def test_traced_argpartition_is_a_valid_partition():
    a = np.array([[3.0, 1.0, 2.0, 1.0, 5.0], [0.5, 4.0, 4.0, -1.0, 2.0]])
    for kth, axis in [(1, -1), ((0, 3), 1), (-2, None), (0, 0)]:
        def argpartition(a):
            return np.argpartition(a, kth, axis=axis)
        expected, traced = argpartition(a), autotrace.function(argpartition)(a)
        assert traced.dtype == expected.dtype and traced.shape == expected.shape
        line = a if axis is not None else np.ravel(a)
        along = 0 if axis is None else axis
        _assert_partition(np.take_along_axis(line, traced, along),
                          np.take_along_axis(line, expected, along), kth, along)
    with pytest.raises(ValueError, match=r"kth\(=5\) out of bounds \(5\)"):
        autotrace.function(lambda a: np.partition(a, 5))(a)
