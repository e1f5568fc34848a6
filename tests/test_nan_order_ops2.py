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
    ("quantile-tuple", quantile_of, (_values((3, 4)), (0.37, 0.61)), (0, 1)),
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
