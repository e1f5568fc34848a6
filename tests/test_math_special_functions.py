"""math.erf, math.erfc, math.gamma and math.lgamma, which NumPy has no twin of, and math.cbrt
and math.exp2 (Python 3.11's), in every mode: their derivatives against central differences
to second order, traced and batched; traced, each gives the float math gives. The polygamma
functions that lgamma's derivatives are (runtime/primitives/math_special.py) against known
values and central differences."""
import math
import sys

import numpy as np
import pytest

import autotrace
from autotrace.runtime.primitives.math_special import polygamma
from tests.numeric import central_difference, check_every_mode

X = np.array([0.3, 1.7, -1.4, 2.6])


def log_gamma(x):
    return math.lgamma(x[1]) * math.lgamma(x[2]) + math.lgamma(x[0] + 3.0)


def gamma(x):
    return math.gamma(x[1]) + math.gamma(x[2]) * math.gamma(x[3] * 0.5)


def error_functions(x):
    return math.erf(x[0]) * math.erfc(x[1]) + math.erfc(x[2] * 2.0)


def roots_and_powers_of_two(x):
    return math.cbrt(x[2]) * math.exp2(x[1]) + math.cbrt(x[0])


NEEDS_311 = pytest.mark.skipif(sys.version_info < (3, 11), reason="math.cbrt is Python 3.11's")
FUNCTIONS = [log_gamma, gamma, error_functions,
             pytest.param(roots_and_powers_of_two, marks=NEEDS_311)]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, X)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_hessian_traced_and_not(f):
    expected = np.stack([central_difference(lambda y: autotrace.grad(f)(y)[i], X)
                         for i in range(4)])
    np.testing.assert_allclose(autotrace.hessian(f)(X), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(autotrace.function(autotrace.hessian(f))(X), expected,
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_vmap(f):
    batch = np.stack([X, X * 0.9, X + 0.15])
    np.testing.assert_allclose(autotrace.vmap(f)(batch), [f(row) for row in batch], rtol=1e-15)
    gradients = autotrace.vmap(autotrace.grad(f))(batch)
    for gradient, row in zip(gradients, batch):
        np.testing.assert_allclose(gradient, central_difference(f, row), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("function", [math.erfc, math.gamma, math.lgamma])
def test_traced_is_maths_float(function):
    traced = autotrace.function(lambda x: function(x[0]))
    for value in (0.3, 2.5, -1.7, 6.0, 30.0):
        assert traced(np.array([value])) == function(value)
    # A graph of float64 numbers runs as Python floats (runtime/passes/floats.py): math itself.
    both = autotrace.function(lambda s: function(s) * 2.0 + function(s * 0.5))
    assert both(np.float64(2.5)) == function(2.5) * 2.0 + function(1.25)


def test_traced_poles_give_what_c_gives():
    # math raises there; the graph, which has no value to test while tracing, gives C's.
    traced = autotrace.function(lambda x: [math.lgamma(x[0]), math.gamma(x[0]),
                                           math.gamma(x[1]), math.gamma(x[2])])
    results = traced(np.array([0.0, -2.0, 200.0]))
    assert results[0] == math.inf and results[1] == math.inf
    assert math.isnan(results[2]) and results[3] == math.inf
    scalar = autotrace.function(lambda s: math.lgamma(s) + math.lgamma(s + 1.0))
    assert scalar(np.float64(0.0)) == math.inf  # the float version hands over at the pole


def test_known_values_of_polygamma():
    euler = 0.5772156649015329
    zeta_3 = 1.2020569031595942
    np.testing.assert_allclose(
        [polygamma(0, 1.0), polygamma(1, 1.0), polygamma(2, 1.0), polygamma(0, 0.5),
         polygamma(1, 0.5), polygamma(0, -0.5), polygamma(3, 1.0)],
        [-euler, math.pi ** 2 / 6, -2 * zeta_3, -euler - 2 * math.log(2.0), math.pi ** 2 / 2,
         2 - euler - 2 * math.log(2.0), math.pi ** 4 / 15], rtol=1e-14, atol=1e-15)
    assert np.isnan(polygamma(1, np.array([0.0, -3.0]))).all()
    assert polygamma(0, np.inf) == np.inf and polygamma(2, np.inf) == 0.0


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_polygamma_is_the_slope_of_the_one_before(n):
    x = np.array([0.2, 0.9, 3.3, 11.5, 40.0, -0.4, -2.7, -7.45])
    before = (lambda v: np.array([math.lgamma(item) for item in v])) if n == 0 else (
        lambda v: polygamma(n - 1, v))
    step = 1e-6 * np.maximum(1.0, np.abs(x))
    slopes = (before(x + step) - before(x - step)) / (2 * step)
    np.testing.assert_allclose(polygamma(n, x), slopes, rtol=1e-6)


def test_polygamma_refuses_an_order_that_is_no_count():
    with pytest.raises(ValueError, match=r"^polygamma's order n is an int, 0 or more, not -1$"):
        polygamma(-1, 2.0)


def shifted_exponent(x):
    return math.ldexp(x[0], 3)


def test_a_math_function_without_rules_says_what_to_write():
    with pytest.raises(autotrace.TransformError, match=r"no derivative rule for math\.ldexp: "
                                                       r"write x \* 2\.0 \*\* i$"):
        autotrace.grad(shifted_exponent)(X)
