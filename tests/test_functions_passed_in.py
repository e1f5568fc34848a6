"""Functions that generated code derives only when it runs (a function passed as a default
argument, or held in a variable), inside autotrace.function: their control flow on traced
values converts too, to second order."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference


def branching(x):
    if x > 0:
        return x * x
    return -3.0 * x


def calls_its_default(x, inner=branching):
    """inner(x) * x: x**3 for x > 0, -3 x**2 otherwise."""
    return inner(x) * x


GRADIENT_OF_BRANCHING = autotrace.grad(branching)


def calls_a_default_gradient(x, inner=GRADIENT_OF_BRANCHING):
    """inner(x) * x: 2 x**2 for x > 0, -3x otherwise."""
    return inner(x) * x


@pytest.mark.parametrize("x", [1.5, -0.5])
def test_a_function_passed_as_a_default_converts_inside_the_traced_gradient(x):
    traced = autotrace.function(autotrace.grad(calls_its_default))
    expected = central_difference(calls_its_default, np.array(x))
    assert autotrace.grad(calls_its_default)(np.array(x)) == pytest.approx(expected, rel=1e-6)
    assert traced(np.array(x)) == pytest.approx(expected, rel=1e-6)
    forward = autotrace.function(autotrace.forward(calls_its_default))
    assert forward(np.array(x))[1] == pytest.approx(expected, rel=1e-6)
    # a first derivative passed in, traced as the function's own code
    expected = central_difference(calls_a_default_gradient, np.array(x))
    assert autotrace.function(calls_a_default_gradient)(np.array(x)) == pytest.approx(
        2 * x ** 2 if x > 0 else -3 * x)
    assert autotrace.grad(calls_a_default_gradient)(np.array(x)) == pytest.approx(expected,
                                                                                 rel=1e-6)


@pytest.mark.parametrize("x", [1.5, -0.5])
def test_a_second_derivative_passed_in_traces_through_its_branch(x):
    # the gradient passed in branches on a traced value: differentiated again inside the trace
    traced = autotrace.function(autotrace.grad(calls_a_default_gradient))
    expected = central_difference(calls_a_default_gradient, np.array(x))
    assert traced(np.array(x)) == pytest.approx(expected, rel=1e-6)
    assert traced(np.array(x)) == autotrace.grad(calls_a_default_gradient)(np.array(x))
