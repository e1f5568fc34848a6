"""Transforms of functions that call transforms: jvp of jvp, grad of a function that calls jvp,
vjp or grad, forward of one that calls vjp or grad; second derivatives against the formula,
eager and under autotrace.function. And a tangent rule registered alone, which forward mode
uses by itself."""
import numpy as np
import pytest

import autotrace
from autotrace import d
from tests.numeric import central_difference

X = np.array([0.3, -0.8, 1.1, 2.0])
V = np.array([1.0, -0.5, 2.0, 0.25])   # the inner direction or cotangent
U = np.array([0.5, 1.5, -1.0, 2.0])    # the outer direction


def sine_times(x):
    return np.sin(x) * x


def first(x):  # d/dx of sin(x) x, element by element
    return np.cos(x) * x + np.sin(x)


def second(x):
    return 2.0 * np.cos(x) - x * np.sin(x)


def total(x):
    return np.sum(np.sin(x) * x)


def inner_jvp(x):
    return autotrace.jvp(sine_times, (x,), (V,))[1]


def summed_jvp(x):
    return np.sum(inner_jvp(x))


def inner_vjp(x):
    value, vjp_fn = autotrace.vjp(sine_times, x)
    return vjp_fn(V)[0] + 0.0 * value


def summed_vjp(x):
    return np.sum(inner_vjp(x))


def inner_grad(x):
    return autotrace.grad(total)(x)


def inner_value_and_grad(x):
    value, gradient = autotrace.value_and_grad(total)(x)
    return gradient * value


def product(x, w):
    return np.sum(np.tanh(x * w))


def vjp_of_two_arguments(x):
    _, vjp_fn = autotrace.vjp(product, x, 2.0 * x)
    gx, gw = vjp_fn(1.0)
    return np.sum(gx * V) + np.sum(gw * gw)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_jvp_of_jvp(traced):
    def outer_jvp(x):
        return autotrace.jvp(inner_jvp, (x,), (U,))
    run = autotrace.function(outer_jvp) if traced else outer_jvp
    value, tangent = run(X)
    np.testing.assert_allclose(value, first(X) * V, rtol=1e-12)
    np.testing.assert_allclose(tangent, second(X) * V * U, rtol=1e-10)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("function", [summed_jvp, summed_vjp],
                         ids=["calls jvp", "calls vjp"])
def test_grad_of_a_function_that_calls_jvp_or_vjp(function, traced):
    gradient = autotrace.grad(function)
    if traced:
        gradient = autotrace.function(gradient)
    np.testing.assert_allclose(gradient(X), second(X) * V, rtol=1e-10)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("function, expected_tangent", [
    (inner_vjp, lambda x, u: second(x) * V * u),
    (inner_grad, lambda x, u: second(x) * u),
    # d(g f) = dg f + g <grad f, u>, g the gradient of f
    (inner_value_and_grad,
     lambda x, u: second(x) * u * total(x) + first(x) * np.sum(first(x) * u)),
], ids=["calls vjp", "calls grad", "calls value_and_grad"])
def test_forward_of_a_function_that_calls_vjp_or_grad(function, expected_tangent, traced):
    forward = autotrace.forward(function)
    if traced:
        forward = autotrace.function(forward)
    value, tangent = forward(X, tangent=U)
    np.testing.assert_allclose(value, function(X), rtol=1e-12)
    np.testing.assert_allclose(tangent, expected_tangent(X, U), rtol=1e-10)


def third(x):
    return -3.0 * np.sin(x) - x * np.cos(x)


@pytest.mark.parametrize("function", [summed_jvp, summed_vjp], ids=["calls jvp", "calls vjp"])
def test_third_derivative_through_jvp_and_vjp(function):
    """hvp (forward over reverse) of a function that calls jvp or vjp."""
    np.testing.assert_allclose(autotrace.hvp(function)(X, U), third(X) * V * U, rtol=1e-10)


def applied(x, function):
    return np.sum(function(x) * x)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_forward_over_forward_of_a_function_passed_in(traced):
    """forward of forward mode through a call resolved when it runs (jvp_call's tangent)."""
    def tangent(x):
        return autotrace.forward(applied)(x, np.sin, tangent=U)[1]
    forward = autotrace.forward(tangent)
    if traced:
        forward = autotrace.function(forward)
    assert forward(X, tangent=V)[1] == pytest.approx(np.sum(second(X) * U * V), rel=1e-12)


def test_grad_of_grad_through_a_call():
    def summed(x):
        return np.sum(inner_grad(x) * U)
    np.testing.assert_allclose(autotrace.grad(summed)(X), second(X) * U, rtol=1e-10)


def test_vjp_of_a_function_of_two_arguments_inside_grad():
    expected = central_difference(vjp_of_two_arguments, X)
    np.testing.assert_allclose(autotrace.grad(vjp_of_two_arguments)(X), expected, rtol=1e-6,
                               atol=1e-8)
    traced = autotrace.function(autotrace.grad(vjp_of_two_arguments))
    np.testing.assert_allclose(traced(X), expected, rtol=1e-6, atol=1e-8)
    _, tangent = autotrace.forward(vjp_of_two_arguments)(X, tangent=U)
    assert tangent == pytest.approx(np.sum(expected * U), rel=1e-6)


# --- A tangent rule registered alone -----------------------------------------------------------

def soft_clip(x):
    try:  # a construct autotrace cannot differentiate: only the rule gives a derivative
        return 2.0 * np.tanh(x)
    except FloatingPointError:
        return x


@autotrace.register_tangent(soft_clip)
def soft_clip_tangent(y, x):
    d[y] = d[x] * 2.0 * (1.0 - np.tanh(x) ** 2)


def clipped_energy(x):
    return np.sum(soft_clip(3.0 * x) ** 2)


def expected_energy_tangent(x, u):
    t = np.tanh(3.0 * x)
    return np.sum(8.0 * t * (1.0 - t ** 2) * 3.0 * u)


def test_forward_uses_a_tangent_rule_registered_alone():
    value, tangent = autotrace.forward(clipped_energy)(X, tangent=U)
    assert value == pytest.approx(clipped_energy(X), rel=1e-12)
    assert tangent == pytest.approx(expected_energy_tangent(X, U), rel=1e-12)
    traced = autotrace.function(autotrace.forward(clipped_energy))
    assert traced(X, tangent=U)[1] == pytest.approx(expected_energy_tangent(X, U), rel=1e-12)
    value, tangent = autotrace.jvp(soft_clip, (X,), (U,))
    np.testing.assert_allclose(tangent, 2.0 * (1.0 - np.tanh(X) ** 2) * U, rtol=1e-12)


def held(x, function):
    return np.sum(function(x) ** 2)


def test_forward_uses_it_for_a_function_called_through_a_variable():
    expected = np.sum(2.0 * 2.0 * np.tanh(X) * 2.0 * (1.0 - np.tanh(X) ** 2) * U)
    assert autotrace.forward(held)(X, soft_clip, tangent=U)[1] == pytest.approx(expected,
                                                                                 rel=1e-12)


def test_reverse_mode_asks_for_an_adjoint_rule():
    with pytest.raises(autotrace.TransformError) as raised:
        autotrace.grad(clipped_energy)(X)
    error = raised.value
    assert error.filename == __file__
    assert error.message.startswith(
        "no derivative rule for tests.test_composed_transforms.soft_clip; it has a tangent rule "
        "(autotrace.register_tangent), which forward mode uses, but reverse mode needs an "
        "adjoint rule. Register one:\n\n"
        "    @autotrace.register_adjoint(tests.test_composed_transforms.soft_clip)\n")


def smooth(x):
    return np.log1p(np.exp(x))


@autotrace.register_tangent(smooth)
def smooth_tangent(y, x):
    d[y] = d[x] / (1.0 + np.exp(-x))


def test_reverse_mode_of_a_function_with_source_and_a_tangent_rule_reads_the_source():
    def energy(x):
        return np.sum(smooth(x) * x)
    expected = central_difference(energy, X)
    np.testing.assert_allclose(autotrace.grad(energy)(X), expected, rtol=1e-6)
    assert autotrace.forward(energy)(X, tangent=U)[1] == pytest.approx(np.sum(expected * U),
                                                                       rel=1e-6)
