"""autotrace.custom_vjp and autotrace.custom_jvp, with JAX's interface: rules honoured in
reverse mode (both) and forward mode (custom_jvp), traced and of second order, against hand
computation and central differences; a custom_vjp function refused in forward mode, and a
custom_jvp rule whose tangent is not linear refused in reverse mode, with exact messages."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference


@autotrace.custom_vjp
def clipped_product(x, y):
    return x * y


def clipped_product_fwd(x, y):
    return x * y, (x, y)


def clipped_product_bwd(residuals, dy):
    x, y = residuals
    return np.clip(dy * y, -1.0, 1.0), dy * x  # x's gradient clipped: no true derivative


clipped_product.defvjp(clipped_product_fwd, clipped_product_bwd)


def product_loss(x, y):
    return np.sum(clipped_product(x, y) ** 2)


@autotrace.custom_vjp
def sine(x):
    return np.sin(x)


sine.defvjp(lambda x: (np.sin(x), np.cos(x)), lambda cos_x, dy: (cos_x * dy,))


@autotrace.custom_jvp
def scaled_sine(x, y):
    return np.sin(x) * y


def scaled_sine_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    return scaled_sine(x, y), np.cos(x) * y * tx + np.sin(x) * ty


scaled_sine.defjvp(scaled_sine_jvp)


@autotrace.custom_jvp
def square(x):
    return x * x


square.defjvp(lambda primals, tangents: (primals[0] ** 2, tangents[0] ** 2))  # not linear


X = np.array([0.1, 2.0, -0.4])
Y = np.array([3.0, 0.2, 1.5])


def test_custom_vjp_direct_call_runs_the_function():
    assert clipped_product(2.0, 3.0) == 6.0


def test_custom_vjp_in_reverse_mode_uses_its_rules():
    dx, dy = autotrace.grad(product_loss, wrt=(0, 1))(X, Y)
    seed = 2 * X * Y  # the gradient of sum(z ** 2) at z = x * y
    np.testing.assert_allclose(dx, np.clip(seed * Y, -1.0, 1.0))  # by hand: bwd's rule
    np.testing.assert_allclose(dy, seed * X)
    assert dx[0] == 1.0 and dx[1] == pytest.approx(2 * 2.0 * 0.2 * 0.2)  # 1.8 clipped to 1
    value, vjp_fn = autotrace.vjp(clipped_product, X, Y)
    np.testing.assert_allclose(value, X * Y)
    gx, gy = vjp_fn(np.ones(3))
    np.testing.assert_allclose(gx, np.clip(Y, -1.0, 1.0))
    np.testing.assert_allclose(gy, X)
    assert autotrace.grad(clipped_product, wrt=(0, 1))(2.0, 0.25) == (0.25, 2.0)


def test_custom_vjp_traced_and_of_second_order():
    traced = autotrace.function(autotrace.grad(product_loss, wrt=(0, 1)))
    for expected, result in zip(autotrace.grad(product_loss, wrt=(0, 1))(X, Y), traced(X, Y)):
        np.testing.assert_allclose(result, expected)
    # bwd's gradient cos(x) * dy differentiated again: -sin(x)
    assert autotrace.grad(autotrace.grad(sine))(0.3) == pytest.approx(-np.sin(0.3))
    np.testing.assert_allclose(autotrace.grad(lambda a: np.sum(sine(a) * a))(X),
                               central_difference(lambda a: np.sum(np.sin(a) * a), X),
                               rtol=1e-6)


def test_custom_vjp_is_refused_in_forward_mode():
    with pytest.raises(autotrace.TransformError) as error:
        autotrace.forward(product_loss)(X, Y)
    assert error.value.message == (
        "clipped_product is a custom_vjp function, whose rules give its gradient in reverse "
        "mode only; forward mode (forward, jvp, hessian, jacobian with mode='forward') cannot "
        "use them: give clipped_product a custom_jvp rule instead (autotrace.custom_jvp), "
        "which both modes use")
    assert error.value.filename == __file__
    with pytest.raises(autotrace.TransformError, match="clipped_product is a custom_vjp"):
        autotrace.jvp(clipped_product, (X, Y), (X, Y))


def test_bwd_that_returns_no_gradient_per_argument_is_refused():
    @autotrace.custom_vjp
    def pair_product(x, y):
        return x * y
    pair_product.defvjp(lambda x, y: (x * y, (x, y)), lambda r, dy: dy * r[1])
    with pytest.raises(TypeError) as error:
        autotrace.grad(pair_product)(2.0, 3.0)
    assert str(error.value) == (
        "the bwd rule of the custom_vjp function pair_product "
        "(test_bwd_that_returns_no_gradient_per_argument_is_refused.<locals>.<lambda>) must "
        "return a tuple with one gradient per argument of pair_product (2), but it returned "
        "a float")


def test_bwd_that_returns_none_or_calls_by_keyword_are_refused():
    @autotrace.custom_vjp
    def half_rule(x, y):
        return x * y
    half_rule.defvjp(lambda x, y: (x * y, y), lambda y, dy: (dy * y, None))
    with pytest.raises(TypeError) as error:
        autotrace.grad(lambda a, b: half_rule(a, b), wrt=(0, 1))(2.0, 3.0)
    assert str(error.value) == (
        "the bwd rule of the custom_vjp function half_rule (test_bwd_that_returns_none_or_"
        "calls_by_keyword_are_refused.<locals>.<lambda>) returned None as the gradient of "
        "argument 1; return zeros shaped like it where it gets no gradient")
    with pytest.raises(autotrace.TransformError) as error:
        autotrace.grad(lambda a, b: clipped_product(a, y=b))(2.0, 3.0)
    assert error.value.message == (
        "pass y to clipped_product by position: the bwd rule of a custom_vjp function "
        "returns the gradients of its parameters in order")


def test_rules_not_given_are_an_error():
    @autotrace.custom_jvp
    def no_rule(x):
        return x
    with pytest.raises(autotrace.TransformError) as error:
        autotrace.grad(lambda x: no_rule(x) * 2.0)(1.0)
    assert error.value.message == ("no_rule is a custom_jvp function whose rules were not "
                                   "given: call no_rule.defjvp(jvp) before differentiating it")


def test_custom_jvp_in_forward_mode_uses_its_rule():
    value, tangent = autotrace.jvp(scaled_sine, (X, Y), (np.ones(3), np.zeros(3)))
    np.testing.assert_allclose(value, np.sin(X) * Y)
    np.testing.assert_allclose(tangent, np.cos(X) * Y)

    @autotrace.custom_jvp
    def rounded(x):  # the rule, not the code, gives the tangent: a straight-through estimate
        return np.round(x)
    rounded.defjvp(lambda primals, tangents: (np.round(primals[0]), tangents[0]))
    value, tangent = autotrace.forward(lambda x: 3.0 * rounded(x))(1.4)
    assert (value, tangent) == (3.0, 3.0)
    np.testing.assert_allclose(
        autotrace.jacobian(lambda a: scaled_sine(a, Y), mode="forward")(X),
        np.diag(np.cos(X) * Y))


def test_custom_jvp_in_reverse_mode_transposes_its_rule():
    def loss(x, y):
        return np.sum(scaled_sine(x, y) ** 2)
    dx, dy = autotrace.grad(loss, wrt=(0, 1))(X, Y)
    np.testing.assert_allclose(dx, central_difference(lambda a: loss(a, Y), X), rtol=1e-6)
    np.testing.assert_allclose(dy, central_difference(lambda b: loss(X, b), Y), rtol=1e-6)
    traced = autotrace.function(autotrace.grad(loss, wrt=(0, 1)))(X, Y)
    np.testing.assert_allclose(traced[0], dx)
    np.testing.assert_allclose(traced[1], dy)
    # second order: d2/dx2 of 2 sin(x) is -2 sin(x)
    assert autotrace.grad(autotrace.grad(lambda a: scaled_sine(a, 2.0)))(0.3) == \
        pytest.approx(-2 * np.sin(0.3))


def test_custom_jvp_with_a_tangent_not_linear_is_refused_in_reverse_mode():
    def loss(x):
        return np.sum(square(x))
    value, tangent = autotrace.jvp(loss, (X,), (np.ones(3),))  # forward mode takes the rule
    assert tangent == pytest.approx(3.0)
    line = loss.__code__.co_firstlineno + 1
    message = (f"reverse mode cannot transpose the jvp rule of the custom_jvp function square "
               f"(called on line {line} of {__file__}): the tangent it returns is not linear in "
               "the tangents (its derivative in them changes with them); make it linear, or "
               "give the function a custom_vjp for reverse mode")
    with pytest.raises(TypeError) as error:
        autotrace.grad(loss)(X)
    assert str(error.value) == message
    with pytest.raises(TypeError) as error:  # traced: checked on values of the traced shapes
        autotrace.function(autotrace.grad(loss))(X)
    assert str(error.value) == message


def test_hessians_through_the_rules():
    # forward mode over reverse: through bwd's cos(x) * dy, and through the custom_jvp
    # rule's transposed tangent cos(x) * y * t
    np.testing.assert_allclose(autotrace.hessian(lambda a: np.sum(sine(a)))(X),
                               np.diag(-np.sin(X)), atol=1e-12)
    np.testing.assert_allclose(autotrace.hessian(lambda a: np.sum(scaled_sine(a, Y)))(X),
                               np.diag(-np.sin(X) * Y), atol=1e-12)


@autotrace.custom_jvp
def activation(x, kind):
    return np.tanh(x) if kind == "tanh" else x


activation.defjvp(lambda primals, tangents: (
    activation(*primals),
    (1 - np.tanh(primals[0]) ** 2) * tangents[0] if primals[1] == "tanh" else tangents[0]))


def test_custom_jvp_with_an_argument_that_carries_no_gradient():
    def loss(x):
        return np.sum(activation(x, "tanh"))
    expected = 1 - np.tanh(X) ** 2
    np.testing.assert_allclose(autotrace.grad(loss)(X), expected)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(X), expected)
