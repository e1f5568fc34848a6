"""The reductions that skip NaNs, np.ptp, np.average, the order statistics (np.median,
np.quantile, np.percentile) and the running extrema (np.maximum.accumulate, minimum's) in every
mode: derivatives of both modes and of order 2 against finite differences, autotrace.function's
values and dtypes against NumPy's, its gradient against the eager one, vmap and vmap(grad)
against a loop, float32 kept float32; and the conventions at NaNs and ties."""
from __future__ import annotations

import warnings

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


def _with_nans(shape, seed=0):
    a = _values(shape, seed)
    a.flat[[1, a.size - 3]] = np.nan
    return a


WEIGHTS = np.array([0.5, 1.5, 1.0, 2.0])

# (id, function of one (3, 4) array, whether its argument holds NaNs)
CASES = [
    ("nansum", lambda a: np.nansum(a, axis=0), True),
    ("nanmean", lambda a: np.nanmean(a, axis=1, keepdims=True), True),
    ("nanmax", lambda a: np.nanmax(a, axis=1), True),
    ("nanmin", lambda a: np.nanmin(a), True),
    ("nanprod", lambda a: np.nanprod(a / 4.0, axis=0), True),
    ("nanvar", lambda a: np.nanvar(a, axis=1, ddof=1), True),
    ("nanstd", lambda a: np.nanstd(a, axis=1), True),
    ("ptp", lambda a: np.ptp(a, axis=1), False),
    ("average", lambda a: np.average(a, axis=1, weights=WEIGHTS), False),
    ("average-returned", lambda a: np.average(a, axis=0, weights=a * a + 1.0, returned=True)[0]
     * np.average(a, axis=0, weights=a * a + 1.0, returned=True)[1], False),
    ("median", lambda a: np.median(a, axis=0), False),
    ("median-all", lambda a: np.median(a), False),
    ("quantile", lambda a: np.quantile(a, 0.37, axis=1), False),
    ("quantile-array", lambda a: np.quantile(a, [0.2, 0.9], axis=(0, 1), keepdims=True), False),
    ("percentile", lambda a: np.percentile(a, 65.0, axis=0), False),
    ("quantile-lower", lambda a: np.quantile(a, 0.5, axis=1, method="lower"), False),
    ("quantile-higher", lambda a: np.quantile(a, 0.5, axis=1, method="higher"), False),
    ("quantile-nearest", lambda a: np.quantile(a, [0.3, 0.8], method="nearest"), False),
    ("quantile-midpoint", lambda a: np.quantile(a, 0.4, axis=0, method="midpoint"), False),
    ("maximum.accumulate", lambda a: np.maximum.accumulate(a, axis=1), False),
    ("minimum.accumulate", lambda a: np.minimum.accumulate(a), False),
]


def _argument(holds_nans):
    return _with_nans((3, 4)) if holds_nans else _values((3, 4))


def _loss(function):
    return lambda a: np.nansum(np.sin(function(a)))


@pytest.mark.parametrize("name, function, holds_nans", CASES, ids=[c[0] for c in CASES])
def test_every_mode(name, function, holds_nans):
    a = _argument(holds_nans)
    loss = _loss(function)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (a slice of NaNs alone)
        # Traced: NumPy's values and dtypes, in float64 and float32.
        for x in (a, a.astype(np.float32)):
            expected, traced = function(x), autotrace.function(function)(x)
            assert np.asarray(traced).dtype == np.asarray(expected).dtype
            np.testing.assert_array_equal(traced, expected)
        # Both modes against finite differences; the gradient of the gradient too.
        check_grads(loss, (a,), order=2 if name in ("nanvar", "quantile") else 1,
                    modes=("reverse", "forward"), atol=1e-5, rtol=1e-4)
        gradient = autotrace.grad(loss)(a)
        assert np.all(gradient[np.isnan(a)] == 0.0)
        np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(a), gradient,
                                   rtol=1e-12, atol=1e-12)
        gradient32 = autotrace.grad(loss)(a.astype(np.float32))
        assert gradient32.dtype == np.float32
        np.testing.assert_allclose(gradient32, gradient, rtol=1e-3, atol=1e-3)
        # vmap and vmap(grad) against a loop over examples.
        batch = np.stack([_argument(holds_nans) * scale for scale in (1.0, -0.5, 2.0)])
        np.testing.assert_allclose(autotrace.vmap(function)(batch),
                                   np.stack([function(x) for x in batch]), rtol=1e-12)
        np.testing.assert_allclose(autotrace.vmap(autotrace.grad(loss))(batch),
                                   np.stack([autotrace.grad(loss)(x) for x in batch]),
                                   rtol=1e-12, atol=1e-12)


def test_gradients_in_weights_and_in_q():
    a = _values((3, 4))

    def weighted(a, w):
        average, total = np.average(a, axis=1, weights=w, returned=True)
        return np.sum(np.sin(average) * total)

    def at_quantiles(a, q):
        return np.sum(np.sin(np.quantile(a, q, axis=1)))

    check_grads(weighted, (a, WEIGHTS), wrt=(0, 1), order=2, modes=("reverse", "forward"))
    check_grads(at_quantiles, (a, np.array([0.2, 0.7])), wrt=(0, 1), order=2,
                modes=("reverse", "forward"))
    check_grads(at_quantiles, (a, 0.45), wrt=1, modes=("reverse", "forward"))


def test_nan_positions_and_ties():
    grad = autotrace.grad
    # A slice of NaNs alone gets no gradient; ties of nanmax share it, as max's do.
    a = np.array([[np.nan, np.nan], [2.0, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(grad(lambda a: np.nansum(np.nanmax(a, axis=1)))(a),
                                      [[0.0, 0.0], [0.5, 0.5]])
        np.testing.assert_array_equal(grad(lambda a: np.nansum(np.nanmean(a, axis=1)))(a),
                                      [[0.0, 0.0], [0.5, 0.5]])
    # A running maximum's gradient goes to the first of tied elements.
    ties = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(grad(lambda a: np.sum(np.maximum.accumulate(a)))(ties),
                                  [1.0, 4.0, 0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(
        autotrace.function(grad(lambda a: np.sum(np.minimum.accumulate(-a))))(ties),
        [-1.0, -4.0, 0.0, 0.0, 0.0, -1.0])
    # The median's gradient goes where np.sort's does among ties.
    tied = np.array([2.0, 1.0, 2.0, 2.0])
    np.testing.assert_array_equal(grad(lambda a: np.median(a))(tied),
                                  grad(lambda a: np.mean(np.sort(a)[1:3]))(tied))


def hazen_median(a):
    return np.sum(np.quantile(a, 0.5, method="hazen"))


def test_methods_outside_jaxs_and_traced_q_are_refused():
    a = _values((3, 4))
    message = (f'File "{__file__}", line {hazen_median.__code__.co_firstlineno + 1}: '
               "autotrace cannot trace or differentiate numpy.quantile with method='hazen': "
               "it supports method= 'linear', 'lower', 'higher', 'nearest', 'midpoint'")
    for transform in (autotrace.function, autotrace.grad):
        with pytest.raises(NotImplementedError) as error:
            transform(hazen_median)(a)
        assert str(error.value).splitlines()[0] == message
    with pytest.raises(NotImplementedError) as error:
        autotrace.function(lambda a, q: np.quantile(a, q))(a, np.array([0.5]))
    assert str(error.value).splitlines()[0] == (
        "q of numpy.quantile must be known while tracing, but it is a traced array; pass it "
        "as a Python value or compute it outside the traced function")
