"""autotrace.jvp, vjp, grad, value_and_grad, forward, jacobian, hessian and hvp called inside
autotrace.function: the derivative code they run converts its control flow on traced values as
`function(forward(f))` does, so one trace serves inputs that take either branch, and the values
agree with the eager ones and with central differences."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

POSITIVE = np.array([0.3, -1.2, 2.0])
NEGATIVE = np.array([-0.3, 1.2, -2.0])


def energy(x):
    y = x * 2.0
    if np.sum(x) > 0:  # a traced condition: a cond op in the trace
        y = np.sin(x)
    return np.sum(y * y)


def energy_hessian_by_hand(x):
    """sum(sin(x) ** 2) has Hessian diag(2 cos(2x)); sum(4 x ** 2) has 8 I."""
    return np.diag(2.0 * np.cos(2.0 * x)) if np.sum(x) > 0 else 8.0 * np.eye(len(x))


ONES = np.ones(3)
OPERATORS = {
    "jvp": lambda x: autotrace.jvp(energy, (x,), (np.ones_like(x),)),
    "vjp": lambda x: autotrace.vjp(energy, x)[1](1.0)[0],
    "vjp value": lambda x: autotrace.vjp(energy, x)[0],
    "grad": lambda x: autotrace.grad(energy)(x),
    "value_and_grad": lambda x: autotrace.value_and_grad(energy)(x),
    "forward": lambda x: autotrace.forward(energy)(x, tangent=np.ones_like(x)),
    "jacobian": lambda x: autotrace.jacobian(energy)(x),
    "jacobian forward": lambda x: autotrace.jacobian(energy, mode="forward")(x),
    "hessian": lambda x: autotrace.hessian(energy)(x),
    "hvp": lambda x: autotrace.hvp(energy)(x, np.ones_like(x)),
}


@pytest.mark.parametrize("operator", OPERATORS.values(), ids=list(OPERATORS))
def test_a_derivative_taken_inside_a_traced_function_converts_its_control_flow(operator):
    traced = autotrace.function(operator)
    for x in (POSITIVE, NEGATIVE):
        expected = operator(x)
        result = traced(x)
        for got, want in zip(np.atleast_1d(result) if not isinstance(result, tuple) else result,
                             np.atleast_1d(expected) if not isinstance(expected, tuple)
                             else expected):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert traced.trace_count == 1


def test_the_eager_values_are_the_derivatives():
    for x in (POSITIVE, NEGATIVE):
        gradient = central_difference(energy, x)
        np.testing.assert_allclose(OPERATORS["grad"](x), gradient, rtol=1e-6)
        np.testing.assert_allclose(OPERATORS["jvp"](x)[1], np.sum(gradient), rtol=1e-6)
        np.testing.assert_allclose(OPERATORS["hessian"](x), energy_hessian_by_hand(x),
                                   rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(OPERATORS["hvp"](x), energy_hessian_by_hand(x) @ ONES,
                                   rtol=1e-12, atol=1e-14)
