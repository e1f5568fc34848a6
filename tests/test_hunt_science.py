"""Scientific and container-heavy programs whose traced values once differed from NumPy's."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference


# --- an array multiplied by a list or tuple of weights, in a traced gradient -------------------

def list_weights_squared(x):
    y = x * [1.0, 2.0, 3.0]
    return np.sum(y * y)


def tuple_weights_on_the_left(x):
    w = (0.5, 1.0, 1.5)
    return np.sum(np.sin(w * x) * x)


def list_weights_changed_after_use(x):
    scales = [1.0, 2.0, 3.0]
    y = x * scales
    scales[0] = 7.0
    return np.sum(y * x)


@pytest.mark.parametrize("f", [list_weights_squared, tuple_weights_on_the_left,
                               list_weights_changed_after_use], ids=lambda f: f.__name__)
def test_traced_gradient_of_an_array_times_a_list(f):
    x = np.array([0.3, -0.8, 1.2])
    expected = central_difference(f, x)
    np.testing.assert_allclose(autotrace.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(x), expected,
                               rtol=1e-6, atol=1e-8)
    batch = np.stack([x, -x])
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(batch),
                               np.stack([expected, central_difference(f, -x)]),
                               rtol=1e-6, atol=1e-8)


def test_list_weights_gradient_by_hand():
    # d/dx sum((x * w) ** 2) = 2 * x * w ** 2
    x = np.array([0.3, -0.8, 1.2])
    np.testing.assert_allclose(autotrace.function(autotrace.grad(list_weights_squared))(x),
                               2 * x * np.array([1.0, 4.0, 9.0]), rtol=1e-12)
