"""Where dtypes and Python's types decide a value, autotrace's is NumPy's, in every mode:

- NumPy's products given lists (np.dot(xs, xs) of a list of lists) read each list as the
  array NumPy makes of it, in their derivatives too.
"""

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

RNG = np.random.default_rng(11)


# NumPy's products of lists.

PRODUCTS = {
    "dot": np.dot, "matmul": np.matmul, "inner": np.inner, "outer": np.outer,
    "tensordot": np.tensordot, "tensordot_1": lambda a, b: np.tensordot(a, b, 1),
    "vdot": np.vdot, "kron": np.kron, "cross": np.cross,
}


@pytest.mark.parametrize("product", PRODUCTS.values(), ids=PRODUCTS.keys())
def test_products_of_lists_have_the_gradients_of_the_arrays_numpy_reads(product):
    def f(xs):
        return np.sum(product(xs, xs) ** 2)

    matrix = RNG.standard_normal((3, 3))
    xs = matrix.tolist()
    expected = central_difference(lambda a: f(a.tolist()), matrix)
    for gradient in (autotrace.grad(f)(xs), autotrace.function(autotrace.grad(f))(xs)):
        assert isinstance(gradient, list) and isinstance(gradient[0], list)
        np.testing.assert_allclose(np.array(gradient), expected, rtol=1e-6, atol=1e-8)
    direction = RNG.standard_normal((3, 3))
    value, tangent = autotrace.jvp(f, (xs,), (direction.tolist(),))
    assert value == pytest.approx(f(xs))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6)


def dot_of_a_list_and_an_array(x):
    rows = [x[0] * 2.0, x[1]]
    return np.sum(np.dot(rows, x) * np.matmul(x, rows))


def test_a_list_of_traced_rows_meets_an_array():
    x = RNG.standard_normal((2, 2))
    expected = central_difference(dot_of_a_list_and_an_array, x)
    for gradient in (autotrace.grad(dot_of_a_list_and_an_array)(x),
                     autotrace.function(autotrace.grad(dot_of_a_list_and_an_array))(x),
                     autotrace.vmap(autotrace.grad(dot_of_a_list_and_an_array))(x[None])[0]):
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
