"""The power rule where the exponent is a constant 1: its partial `d * 1 * x ** 0` is `d`
(transforms/codegen/cleanup.py), since NumPy's `x ** 0` is 1 for every x. Differentiated
again, `x ** 0` would give 0 * x ** -1: nan at x = 0."""
import numpy as np

import autotrace


def squares_the_first_power(x):
    y = x ** 1
    return np.sum(y * y)


X = np.array([0.0, 1.5, -2.0])


def test_second_derivatives_of_a_first_power_at_zero_are_finite():
    def directional(point):
        return np.sum(autotrace.grad(squares_the_first_power)(point) * np.arange(1.0, 4.0))
    np.testing.assert_allclose(autotrace.grad(squares_the_first_power)(X), 2.0 * X)
    np.testing.assert_allclose(autotrace.grad(directional)(X), [2.0, 4.0, 6.0])
    np.testing.assert_allclose(autotrace.function(autotrace.grad(directional))(X),
                               [2.0, 4.0, 6.0])
    np.testing.assert_allclose(autotrace.hessian(squares_the_first_power)(X), 2.0 * np.eye(3))
    _, tangent = autotrace.jvp(autotrace.grad(squares_the_first_power), (X,), (np.ones(3),))
    np.testing.assert_allclose(tangent, [2.0, 2.0, 2.0])


def test_the_partial_of_a_first_power_reads_no_zeroth_power():
    source = autotrace.source(autotrace.grad(squares_the_first_power))
    assert "** 0" not in source
    assert "bx = by * 1" in source
