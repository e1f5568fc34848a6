"""autotrace.custom_vjp and autotrace.custom_jvp, with JAX's interface: rules honoured in
reverse mode (both) and forward mode (custom_jvp), traced and of second order, against hand
computation and central differences; a custom_vjp function refused in forward mode, and a
custom_jvp rule whose tangent is not linear refused in reverse mode, with exact messages; a
bwd's None (zeros) and nondiff_argnums, eager, traced and under vmap."""
import dataclasses
import re

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
        "return a tuple with one gradient (or None, for zeros) per argument of pair_product "
        "(2), but it returned a float")


def test_calls_by_keyword_are_refused():
    with pytest.raises(autotrace.TransformError) as error:
        autotrace.grad(lambda a, b: clipped_product(a, y=b))(2.0, 3.0)
    assert error.value.message == (
        "pass y to clipped_product by position: the bwd rule of a custom_vjp function "
        "returns the gradients of its parameters in order")


# --- bwd's None, and nondiff_argnums, as in JAX -------------------------------------------

@autotrace.custom_vjp
def half_rule(x, y):
    return x * y


half_rule.defvjp(lambda x, y: (x * y, x), lambda x, dy: (None, dy * x))  # None: x gets zeros


@autotrace.custom_vjp(nondiff_argnums=(1,))
def scaled_sine_vjp(x, k, y):
    return np.sin(x) * k * y


def scaled_sine_bwd(k, residuals, dy):  # k first; gradients of x and y only
    x, y = residuals
    return dy * np.cos(x) * k * y, None  # y's gradient left out on purpose: zeros


scaled_sine_vjp.defvjp(lambda x, k, y: (np.sin(x) * k * y, (x, y)), scaled_sine_bwd)


def half_loss(x, y):
    return np.sum(half_rule(x, y) ** 2)


def scaled_loss(x, y, k):
    return np.sum(scaled_sine_vjp(x, k, y) ** 2)


def test_a_bwd_that_returns_none_gives_zeros():
    by_hand = (np.zeros(3), 2 * X * Y * X)  # d/dy of sum((x y)^2), x's None: zeros
    transforms = [autotrace.grad(half_loss, wrt=(0, 1)),
                  autotrace.function(autotrace.grad(half_loss, wrt=(0, 1)))]
    for gradient in transforms:
        for got, expected in zip(gradient(X, Y), by_hand):
            np.testing.assert_allclose(got, expected, rtol=1e-14)
    per_example = autotrace.vmap(autotrace.grad(half_loss, wrt=(0, 1)))(
        np.stack([X, Y]), np.stack([Y, X]))
    np.testing.assert_allclose(per_example[0], np.zeros((2, 3)))
    np.testing.assert_allclose(per_example[1], [2 * X * Y * X, 2 * Y * X * Y], rtol=1e-14)
    assert autotrace.grad(half_rule, wrt=(0, 1))(2.0, 3.0) == (0.0, 2.0)


def test_nondiff_arguments_go_to_bwd_first_and_get_no_gradient():
    k = 3.0
    value = np.sin(X) * k * Y
    by_hand = (2 * value * np.cos(X) * k * Y, np.zeros(3))
    transforms = [autotrace.grad(scaled_loss, wrt=(0, 1)),
                  autotrace.function(autotrace.grad(scaled_loss, wrt=(0, 1)))]
    for gradient in transforms:
        for got, expected in zip(gradient(X, Y, k), by_hand):
            np.testing.assert_allclose(got, expected, rtol=1e-14)
    xs, ys = np.stack([X, Y, -X]), np.stack([Y, X, Y])
    per_example = autotrace.vmap(autotrace.grad(scaled_loss), in_axes=(0, 0, None))(xs, ys, k)
    np.testing.assert_allclose(per_example, [
        2 * np.sin(x) * k * y * np.cos(x) * k * y for x, y in zip(xs, ys)], rtol=1e-14)
    # k's gradient is zero though the value depends on it: bwd gives none
    assert autotrace.grad(scaled_sine_vjp, wrt=(0, 1, 2))(0.3, 2.0, 1.5) == (
        pytest.approx(np.cos(0.3) * 2.0 * 1.5), 0.0, 0.0)
    # second order through bwd: d/dx of cos(x) k y is -sin(x) k y
    assert autotrace.grad(autotrace.grad(scaled_sine_vjp))(0.3, 2.0, 1.5) == pytest.approx(
        -np.sin(0.3) * 2.0 * 1.5)


def test_nondiff_argnums_that_are_no_positions_or_a_bwd_that_gives_too_many():
    def one(x):
        return x
    with pytest.raises(ValueError) as error:
        autotrace.custom_vjp(one, nondiff_argnums=(1,))
    assert str(error.value) == ("custom_vjp(one): nondiff_argnums must be distinct positions "
                                "of its parameters (ints from 0 to 0), not (1,)")

    @autotrace.custom_vjp(nondiff_argnums=(1,))
    def times(x, n):
        return x * n
    times.defvjp(lambda x, n: (x * n, None), lambda n, residuals, dy: (dy * n, 0.0))
    with pytest.raises(TypeError) as error:
        autotrace.grad(times)(1.0, 2.0)
    assert str(error.value) == (
        "the bwd rule of the custom_vjp function times (test_nondiff_argnums_that_are_no_"
        "positions_or_a_bwd_that_gives_too_many.<locals>.<lambda>) must return a tuple with one "
        "gradient (or None, for zeros) per argument of times not in nondiff_argnums (1: all "
        "but n), but it returned a tuple of 2")


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


@autotrace.custom_jvp
def dense(params, x):
    return np.tanh(x @ params["w"] + params["b"])


def _dense_jvp(primals, tangents):
    (params, x), (dparams, dx) = primals, tangents
    y = dense(params, x)
    return y, (1 - y ** 2) * (x @ dparams["w"] + dparams["b"] + dx @ params["w"])


dense.defjvp(_dense_jvp)


@dataclasses.dataclass
class Line:
    slope: float
    offset: float


@autotrace.custom_jvp
def line(p, x):
    return np.sin(p.slope * x + p.offset)


line.defjvp(lambda primals, tangents: (
    line(*primals),
    np.cos(primals[0].slope * primals[1] + primals[0].offset) * (
        tangents[0].slope * primals[1] + tangents[0].offset + primals[0].slope * tangents[1])))

PARAMS = {"w": np.linspace(-1.0, 1.0, 6).reshape(3, 2), "b": np.array([0.1, -0.2])}


def test_custom_jvp_of_a_dict_argument_in_reverse_mode():
    def loss(x, w):
        return np.sum(dense({"w": w, "b": PARAMS["b"]}, x) ** 2)
    for wrt, point, of in ((0, X, lambda x: loss(x, PARAMS["w"])),
                           (1, PARAMS["w"], lambda w: loss(X, w))):
        expected = central_difference(of, point)
        gradient = autotrace.grad(loss, wrt=wrt)
        np.testing.assert_allclose(gradient(X, PARAMS["w"]), expected, rtol=1e-6)
        np.testing.assert_allclose(autotrace.function(gradient)(X, PARAMS["w"]), expected,
                                   rtol=1e-6)
    rows = autotrace.vmap(autotrace.grad(loss), in_axes=(0, None))(np.stack([X, -X]),
                                                                    PARAMS["w"])
    np.testing.assert_allclose(rows[1], central_difference(lambda x: loss(x, PARAMS["w"]), -X),
                               rtol=1e-6)


def test_custom_jvp_of_a_dataclass_argument_in_reverse_mode():
    def loss(slope, x):
        return np.sum(line(Line(slope, 0.3), x))
    dslope, dx = autotrace.grad(loss, wrt=(0, 1))(0.7, X)
    assert dslope == pytest.approx(central_difference(lambda s: loss(float(s), X),
                                                      np.array(0.7)), rel=1e-6)
    np.testing.assert_allclose(dx, central_difference(lambda x: loss(0.7, x), X), rtol=1e-6)
    traced = autotrace.function(autotrace.grad(loss, wrt=1))(0.7, X)
    np.testing.assert_allclose(traced, dx, rtol=1e-6)
    gradient = autotrace.grad(line, wrt=(0, 1))(Line(2.0, 1.0), 0.5)
    assert gradient[0] == Line(pytest.approx(0.5 * np.cos(2.0)), pytest.approx(np.cos(2.0)))
@autotrace.custom_vjp
def scale(s, x):
    return s * x


# bwd forgets to sum the gradient of the scalar s over x's shape
scale.defvjp(lambda s, x: (s * x, (s, x)), lambda r, g: (g * r[1], g * r[0]))

BWD_RULE = ("a bwd rule returns one gradient per argument, with its structure, shapes and "
            "floating dtype (sum a gradient over the axes its argument was broadcast along)")


@pytest.mark.parametrize("differentiate", [
    lambda: autotrace.grad(lambda s: np.sum(scale(s, X)))(2.0),
    lambda: autotrace.grad(lambda s, x: np.sum(scale(s, x)), wrt=(0, 1))(2.0, X),
    lambda: autotrace.function(autotrace.grad(lambda s: np.sum(scale(s, X))))(2.0),
], ids=["one", "both", "traced"])
def test_a_bwd_gradient_unlike_its_argument_is_refused(differentiate):
    with pytest.raises(ValueError) as refused:
        differentiate()
    assert str(refused.value).split("\n")[0] == (
        "the gradient of s that the bwd rule of the custom_vjp function scale (<lambda>) "
        f"returned has shape {X.shape}, but s has shape (): " + BWD_RULE)


def test_an_integer_bwd_gradient_of_a_float_is_refused():
    @autotrace.custom_vjp
    def copied(x):
        return x * 1.0
    copied.defvjp(lambda x: (x * 1.0, None), lambda r, g: (np.ones(np.shape(g), dtype=int),))
    with pytest.raises(TypeError, match=re.escape(
            "the gradient of x that the bwd rule of the custom_vjp function copied "
            "(test_an_integer_bwd_gradient_of_a_float_is_refused.<locals>.<lambda>) returned "
            "is an array of int64, but x is floating: " + BWD_RULE)):
        autotrace.grad(lambda x: np.sum(copied(x)))(np.array([1.5, 2.5]))


@autotrace.custom_gradient
def scale_by_hand(s, x):
    return s * x, lambda g: (g * x, g * s)


GRAD_FN_RULE = ("a grad_fn returns one gradient per argument (a tuple of them for several), "
                "with its structure and shapes (sum a gradient over the axes its argument was "
                "broadcast along)")


@pytest.mark.parametrize("differentiate", [
    lambda: autotrace.grad(lambda s: np.sum(scale_by_hand(s, X)))(2.0),
    lambda: autotrace.forward(lambda s: np.sum(scale_by_hand(s, X)))(2.0),
], ids=["reverse", "forward"])
def test_a_grad_fn_gradient_unlike_its_argument_is_refused(differentiate):
    with pytest.raises(ValueError) as refused:
        differentiate()
    assert str(refused.value).split("\n")[0] == (
        f"the gradient of s that the grad_fn of scale_by_hand returned has shape {X.shape}, "
        "but s has shape (): " + GRAD_FN_RULE)


def test_gradients_shaped_like_their_arguments_are_taken():
    @autotrace.custom_vjp
    def summed_scale(s, x):
        return s * x
    summed_scale.defvjp(lambda s, x: (s * x, (s, x)),
                        lambda r, g: (np.sum(g * r[1]), g * r[0]))
    gradient = autotrace.grad(lambda s: np.sum(summed_scale(s, X)))(2.0)
    assert gradient == pytest.approx(np.sum(X))
