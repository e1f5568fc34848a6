"""`x[mask] = values` with a traced boolean mask and one value per selected element (LeakyReLU
as `z[z < 0] = z[z < 0] * 0.3`): NumPy puts the i-th value into the i-th selected element in C
order, for any number of them (none included). Traced values agree with NumPy's, and gradients
in both modes, eager and traced, with central differences."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

WEIGHTS = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
INPUTS = [np.array([[1.0, -0.3, 0.2], [-0.6, 1.0, -2.0]]),   # some elements selected
          np.array([[1.0, 0.3, 0.2], [0.6, 1.0, 2.0]]),      # none
          np.array([[-1.0, -0.3, -0.2], [-0.6, -1.0, -2.0]])]  # all


def leaky_relu(z):
    z = z * 1.0
    z[z < 0] = z[z < 0] * 0.3
    return z


def leaky_relu_of_a_copy(z):
    out = z.copy()
    out[out < 0] = out[out < 0] * 0.3
    return out


def leaky_relu_in_place(z):
    y = np.tanh(z)
    y[y < 0] *= 0.3
    return y


def reference(function, z):
    """What NumPy computes, written without a masked write."""
    inner = np.tanh(z) if function is leaky_relu_in_place else z
    return np.where(inner < 0, inner * 0.3, inner)


@pytest.mark.parametrize("function", [leaky_relu, leaky_relu_of_a_copy, leaky_relu_in_place])
def test_a_traced_masked_write_places_each_value_at_its_element(function):
    traced = autotrace.function(function)
    for z in INPUTS:
        np.testing.assert_array_equal(traced(z), reference(function, z))
        np.testing.assert_array_equal(traced(z), function(z))
    assert traced.trace_count == 1


def test_the_hand_example_of_a_masked_write():
    z = np.array([[1.0, -1.0], [-2.0, 1.0]])
    np.testing.assert_allclose(autotrace.function(leaky_relu_of_a_copy)(z),
                               [[1.0, -0.3], [-0.6, 1.0]])


def test_a_traced_masked_write_casts_to_the_array_dtype():
    def clip_negative_to_minus_one(x):
        y = x * 1
        y[y < 0] = y[y < 0] * 0.0 - 1.5
        return y
    x = np.array([3, -2, 0, -7])
    np.testing.assert_array_equal(autotrace.function(clip_negative_to_minus_one)(x),
                                  clip_negative_to_minus_one(x))


@pytest.mark.parametrize("function", [leaky_relu, leaky_relu_of_a_copy, leaky_relu_in_place])
def test_gradients_of_a_masked_write_in_every_mode(function):
    def loss(z):
        return np.sum(function(z) * WEIGHTS)
    gradient = autotrace.grad(loss)
    traced_gradient = autotrace.function(gradient)
    tangent = autotrace.forward(loss)
    traced_tangent = autotrace.function(tangent)
    direction = np.array([[0.3, -1.0, 0.5], [2.0, 0.1, -0.4]])
    for z in INPUTS:
        expected = central_difference(loss, z)
        np.testing.assert_allclose(gradient(z), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(traced_gradient(z), expected, rtol=1e-6, atol=1e-8)
        slope = np.sum(expected * direction)
        np.testing.assert_allclose(tangent(z, tangent=direction)[1], slope, rtol=1e-6)
        np.testing.assert_allclose(traced_tangent(z, tangent=direction)[1], slope, rtol=1e-6)
    assert traced_gradient.trace_count == 1 and traced_tangent.trace_count == 1
