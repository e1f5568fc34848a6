"""Simulation, assembly, geometry and signal programs whose derivatives once went wrong or were
refused."""
import numpy as np

import autotrace
from tests.numeric import central_difference


# --- a boundary mask `a | b` in a time loop: its name is saved on the gradient's stack -----------

def heat_with_fixed_ends(u):
    index = np.arange(u.size)
    for _ in range(2):
        u = np.where((index == 0) | (index == u.size - 1), 0.0, u * u + 0.1 * np.roll(u, 1))
    return np.sum(u ** 2)


def test_second_derivatives_through_a_mask_joined_with_bitwise_or():
    u = np.array([0.1, 0.3, -0.5, 0.9, 1.2, -0.4])
    gradient = autotrace.grad(heat_with_fixed_ends)
    expected = np.stack([central_difference(lambda p: gradient(p)[i], u) for i in range(u.size)])
    np.testing.assert_allclose(autotrace.hessian(heat_with_fixed_ends)(u), expected,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.jacrev(gradient)(u), expected, rtol=1e-6, atol=1e-8)
