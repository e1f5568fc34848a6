"""Second derivatives through traced graphs of autotrace's own ops (erf, math's erfc, gamma,
lgamma, polygamma, conv2d, max and average pooling, np.linalg.lstsq): jacfwd of jacrev runs the inner jacrev as a vmapped trace and then
differentiates that graph, so each op the graph calls must be called by a function with
rules (runtime/primitives/registry.py, define_runtime_function's `dispatcher`). Each second
derivative is checked against central differences of the gradient."""
from __future__ import annotations

import math

import numpy as np
import pytest

import autotrace
from autotrace.runtime.primitives.convolution import conv2d
from autotrace.runtime.primitives.math_special import polygamma
from autotrace.runtime.primitives.pooling import avg_pool2d, max_pool2d
from autotrace.runtime.primitives.special import erf


def erf_twice(x):
    return np.sum(erf(x) * 2.0)


def math_erf(x):
    return math.erf(x[0]) * x[1]


def math_erfc(x):
    return math.erfc(x[0]) * x[1]


def math_gamma(x):
    return math.gamma(x[0]) * x[1]


def math_lgamma(x):
    return math.lgamma(x[0]) * x[1]


def digamma_sum(x):
    return np.sum(polygamma(0, x) * x)


IMAGE_WEIGHTS = np.random.default_rng(0).standard_normal((1, 3, 3, 2))
FIRST_WEIGHTS = np.random.default_rng(6).standard_normal((1, 2, 2, 4))
POOL_WEIGHTS = np.random.default_rng(1).standard_normal((1, 2, 2, 2))


def convolved(p):
    """A (1, 4, 4, 1) image and a (2, 2, 1, 2) kernel, both from p."""
    image, kernel = np.reshape(p[:16], (1, 4, 4, 1)), np.reshape(p[16:], (2, 2, 1, 2))
    return np.sum(np.tanh(conv2d(image, kernel)) * IMAGE_WEIGHTS)


def convolved_channels_first(p):
    image, kernel = np.reshape(p[:16], (1, 1, 4, 4)), np.reshape(p[16:], (2, 2, 1, 2))
    out = conv2d(image, kernel, strides=(2, 1), padding="same", data_format="channels_first")
    return np.sum(np.tanh(out) * FIRST_WEIGHTS)  # out: (1, 2, 2, 4)


def max_pooled(x):
    return np.sum(max_pool2d(np.reshape(x, (1, 4, 4, 2))) ** 2 * POOL_WEIGHTS)


def avg_pooled(x):
    pooled = avg_pool2d(np.reshape(x, (1, 4, 4, 2)), pool_size=3, strides=1, padding="same")
    return np.sum(np.sin(pooled) * np.reshape(np.tile(POOL_WEIGHTS, (1, 2, 2, 1)), (1, 4, 4, 2)))


LSTSQ_BASE = np.array([[2.0, 0.3], [0.1, 1.5], [0.4, -0.6]])


def least_squares(p):
    """The solution and the residual of a tall a and b, both from p."""
    solution, residuals, _, _ = np.linalg.lstsq(LSTSQ_BASE + np.reshape(p[:6], (3, 2)), p[6:],
                                                rcond=None)
    return np.sum(np.sin(solution)) + 0.5 * residuals[0]


SECOND_DERIVATIVES = {
    "jacfwd(jacrev)": lambda f: autotrace.jacfwd(autotrace.jacrev(f)),
    "jacrev(jacrev)": lambda f: autotrace.jacrev(autotrace.jacrev(f)),
    "hessian": autotrace.hessian,
    "function(hessian)": lambda f: autotrace.function(autotrace.hessian(f)),
}

CASES = {
    "erf": (erf_twice, np.array([0.3, -0.7, 1.4, 2.9])),
    "math.erf": (math_erf, np.array([0.4, -1.3])),
    "math.erfc": (math_erfc, np.array([0.4, -1.3])),
    "math.gamma": (math_gamma, np.array([2.3, 0.7])),
    "math.gamma/negative": (math_gamma, np.array([-1.6, 0.7])),
    "math.lgamma": (math_lgamma, np.array([2.3, 0.7])),
    "math.lgamma/negative": (math_lgamma, np.array([-2.4, 1.1])),
    "polygamma": (digamma_sum, np.array([0.6, 2.2, -0.3])),
    "conv2d": (convolved, np.random.default_rng(2).standard_normal(24) * 0.5),
    "conv2d/channels-first-same": (convolved_channels_first,
                                   np.random.default_rng(3).standard_normal(24) * 0.5),
    # distinct values, 0.1 or more apart: no window of the max pool holds a tie
    "max_pool2d": (max_pooled, np.random.default_rng(4).permutation(32) * 0.3 - 4.0),
    "avg_pool2d": (avg_pooled, np.random.default_rng(5).standard_normal(32)),
    "linalg.lstsq": (least_squares, np.random.default_rng(7).standard_normal(9) * 0.3),
}


def differenced_hessian(f, x, step=1e-5):
    """Central differences of autotrace.grad(f), one column per coordinate."""
    gradient = autotrace.grad(f)
    columns = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = step
        columns.append((np.asarray(gradient(x + e)) - np.asarray(gradient(x - e))) / (2 * step))
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("how", SECOND_DERIVATIVES)
@pytest.mark.parametrize("case", CASES)
def test_second_derivative_through_graph(case, how):
    f, x = CASES[case]
    hessian = np.asarray(SECOND_DERIVATIVES[how](f)(x))
    np.testing.assert_allclose(hessian, differenced_hessian(f, x), rtol=1e-6, atol=1e-7)


def test_erf_hessian_by_hand():
    """d^2/dx^2 2 erf(x) = -8 x exp(-x^2) / sqrt(pi), on the diagonal."""
    x = np.array([0.3, -0.7, 1.4])
    expected = np.diag(-8.0 * x * np.exp(-x * x) / math.sqrt(math.pi))
    np.testing.assert_allclose(autotrace.jacfwd(autotrace.jacrev(erf_twice))(x), expected,
                               rtol=1e-12, atol=1e-15)


def test_lgamma_hessian_by_hand():
    """d^2/da^2 lgamma(a) b = polygamma(1, a) b; d^2/da db = digamma(a); d^2/db^2 = 0."""
    x = np.array([2.0, 0.7])
    trigamma_of_two = math.pi ** 2 / 6 - 1.0
    digamma_of_two = 1.0 - 0.5772156649015329
    expected = np.array([[trigamma_of_two * 0.7, digamma_of_two], [digamma_of_two, 0.0]])
    np.testing.assert_allclose(autotrace.jacfwd(autotrace.jacrev(math_lgamma))(x), expected,
                               rtol=1e-12, atol=1e-15)
