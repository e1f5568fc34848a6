"""The derivative operators (jvp, vjp, jacobian, hessian, hvp, elementwise_grad), nesting them
in any order, custom gradients, rules users register, and stop_gradient.

Expected values are finite differences (`numerical_jacobian`) or derivatives worked out by
hand; every function differentiated here is a module-level function whose source autotrace
reads.
"""
import inspect
import math

import numpy as np
import pytest

import autotrace
from autotrace import d


def numerical_jacobian(f, x, eps=1e-6):
    """The Jacobian of `f` at the array `x` by central differences, shaped output + input."""
    x = np.asarray(x, dtype=float)
    columns = []
    for e in np.eye(x.size):
        step = eps * e.reshape(x.shape)
        columns.append((np.asarray(f(x + step)) - np.asarray(f(x - step))) / (2 * eps))
    return np.stack(columns, axis=-1).reshape(np.shape(f(x)) + x.shape)


# --- jvp and vjp ----------------------------------------------------------------------------

def layer_and_penalty(x, W):
    return np.tanh(W @ x), np.sum(x ** 2)


def layer_and_penalty_tangent(x, W, dx, dW):
    """The tangent of layer_and_penalty along (dx, dW), by hand."""
    slope = 1 - np.tanh(W @ x) ** 2
    return slope * (dW @ x + W @ dx), np.sum(2 * x * dx)


def layer_and_penalty_vjp(x, W, u, s):
    """The gradients of x and W for the output cotangent (u, s), by hand."""
    slope = 1 - np.tanh(W @ x) ** 2
    return W.T @ (slope * u) + 2 * s * x, np.outer(slope * u, x)


def test_jvp_gives_value_and_tangent_over_all_arguments():
    rng = np.random.default_rng(0)
    x, W = rng.standard_normal(3), rng.standard_normal((2, 3))
    dx, dW = rng.standard_normal(3), rng.standard_normal((2, 3))
    value, tangent = autotrace.jvp(layer_and_penalty, (x, W), (dx, dW))
    expected_value = layer_and_penalty(x, W)
    expected_tangent = layer_and_penalty_tangent(x, W, dx, dW)
    assert isinstance(value, tuple) and isinstance(tangent, tuple) and len(tangent) == 2
    np.testing.assert_allclose(value[0], expected_value[0])
    assert value[1] == pytest.approx(expected_value[1])
    assert tangent[0].shape == (2,)
    np.testing.assert_allclose(tangent[0], expected_tangent[0])
    assert np.shape(tangent[1]) == () and tangent[1] == pytest.approx(expected_tangent[1])


def test_jvp_needs_one_tangent_per_primal():
    with pytest.raises(ValueError, match="2 primals but 1 tangents"):
        autotrace.jvp(layer_and_penalty, (np.ones(3), np.ones((2, 3))), (np.ones(3),))


def test_vjp_gives_value_and_one_gradient_per_argument():
    rng = np.random.default_rng(1)
    x, W = rng.standard_normal(3), rng.standard_normal((2, 3))
    value, vjp_fn = autotrace.vjp(layer_and_penalty, x, W)
    np.testing.assert_allclose(value[0], np.tanh(W @ x))
    for u, s in [(np.ones(2), 1.0), (rng.standard_normal(2), -0.5)]:
        gradients = vjp_fn((u, s))
        assert isinstance(gradients, tuple) and len(gradients) == 2
        assert gradients[0].shape == x.shape and gradients[1].shape == W.shape
        expected = layer_and_penalty_vjp(x, W, u, s)
        np.testing.assert_allclose(gradients[0], expected[0])
        np.testing.assert_allclose(gradients[1], expected[1])


def test_jvp_and_vjp_are_transposes():
    """<J v, u> = <v, J^T u> for the same random v and u."""
    rng = np.random.default_rng(2)
    x, W = rng.standard_normal(3), rng.standard_normal((2, 3))
    dx, dW = rng.standard_normal(3), rng.standard_normal((2, 3))
    u, s = rng.standard_normal(2), float(rng.standard_normal())
    _, tangent = autotrace.jvp(layer_and_penalty, (x, W), (dx, dW))
    _, vjp_fn = autotrace.vjp(layer_and_penalty, x, W)
    gx, gW = vjp_fn((u, s))
    assert np.dot(tangent[0], u) + tangent[1] * s == pytest.approx(
        np.dot(gx, dx) + np.sum(gW * dW))


def scaled_sine(x, a):
    return a * np.sin(x)


def test_jvp_and_vjp_with_float_arguments():
    value, tangent = autotrace.jvp(scaled_sine, (0.5, 2.0), (1.0, 0.0))
    assert value == pytest.approx(2.0 * math.sin(0.5))
    assert tangent == pytest.approx(2.0 * math.cos(0.5))
    value, vjp_fn = autotrace.vjp(scaled_sine, 0.5, 2.0)
    gx, ga = vjp_fn(3.0)
    assert type(gx) is float and type(ga) is float
    assert gx == pytest.approx(3.0 * 2.0 * math.cos(0.5))
    assert ga == pytest.approx(3.0 * math.sin(0.5))


# --- jacobian, hessian, hvp, elementwise_grad ---------------------------------------------------

def lift_to_five(x):
    """R^3 -> R^5."""
    return np.array([x[0] * x[1], np.sin(x[2]), x[0] ** 2 - x[2], np.exp(x[1] * 0.5), 3 * x[0]])


def matrix_to_four(A):
    """R^(2x3) -> R^4."""
    rows = np.tanh(A).sum(axis=1)
    return np.concatenate([rows, A[0, :2] * A[1, 1:]])


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_of_a_vector_map_from_three_to_five(mode):
    x = np.array([0.3, -1.2, 0.8])
    jacobian = autotrace.jacobian(lift_to_five, mode=mode)(x)
    assert jacobian.shape == (5, 3)
    np.testing.assert_allclose(jacobian, numerical_jacobian(lift_to_five, x), rtol=1e-6,
                               atol=1e-8)
    expected_row = [2 * x[0], 0.0, -1.0]
    np.testing.assert_allclose(jacobian[2], expected_row)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_runs_its_derivative_for_every_row_or_column_in_one_batched_call(
        mode, monkeypatch):
    """With batched=True, eagerly, on arrays, a Jacobian is one vmapped call of the derivative
    code, not one call per row or column."""
    import autotrace.jacobians
    batched_calls = []
    vmap = autotrace.jacobians.vmap

    def counted_vmap(function, **options):
        mapped = vmap(function, **options)

        def call(*args):
            batched_calls.append(np.shape(args[0]))
            return mapped(*args)
        return call

    monkeypatch.setattr(autotrace.jacobians, "vmap", counted_vmap)
    W = np.random.default_rng(4).standard_normal((40, 30))
    x = np.random.default_rng(5).standard_normal(30)
    jacobian = autotrace.jacobian(lambda x: np.tanh(W @ x), mode=mode, batched=True)
    for point in (x, 2 * x):
        np.testing.assert_allclose(jacobian(point), (1 - np.tanh(W @ point) ** 2)[:, None] * W,
                                   rtol=1e-12, atol=1e-15)
    basis = (40, 40) if mode == "reverse" else (30, 30)  # the output's or the input's
    assert batched_calls == [basis, basis]
    batched_calls.clear()  # by default, once per row or column, as eager code runs
    np.testing.assert_allclose(autotrace.jacobian(lambda x: np.tanh(W @ x), mode=mode)(x),
                               (1 - np.tanh(W @ x) ** 2)[:, None] * W, rtol=1e-12, atol=1e-15)
    assert batched_calls == []


SCALE = {"now": 2.0}  # read by scaled_tanh on each call; changed between calls below


def scaled_tanh(x):
    return np.tanh(x) * SCALE["now"]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_by_default_reads_what_the_function_captures_on_every_call(mode):
    """The default Jacobian runs the derivative code as it is, not a trace cached per
    signature: a value the function reads from outside (a global, a closure) that changes
    between calls is read again. (A trace would keep the value it saw, and nothing in the
    trace tells a read of a captured value that will change from one that will not: that is
    why batched=True stays a choice the user makes.)"""
    x = np.array([0.3, -1.2, 0.8])
    jacobian = autotrace.jacobian(scaled_tanh, mode=mode)
    try:
        for scale in (2.0, 5.0):
            SCALE["now"] = scale
            np.testing.assert_allclose(jacobian(x), np.diag((1 - np.tanh(x) ** 2) * scale),
                                       rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(jacobian(x), numerical_jacobian(scaled_tanh, x),
                                       rtol=1e-6, atol=1e-8)
    finally:
        SCALE["now"] = 2.0


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_runs_once_per_row_where_vmap_cannot_batch_it(mode):
    """A boolean mask's selection has a length of its own in each example, which vmap
    refuses: the Jacobian is then the derivative run once per row or column."""
    def selected(x):
        return np.tanh(x[x > 0.0]) * 3.0

    x = np.array([0.5, -1.0, 2.0, 0.1])
    with pytest.raises(NotImplementedError):
        autotrace.vmap(autotrace.grad(selected))(np.stack([x, -x]))
    jacobian = autotrace.jacobian(selected, mode=mode, batched=True)(x)
    np.testing.assert_allclose(jacobian, numerical_jacobian(selected, x), rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_of_a_matrix_argument(mode):
    A = np.random.default_rng(3).standard_normal((2, 3))
    jacobian = autotrace.jacobian(matrix_to_four, mode=mode)(A)
    assert jacobian.shape == (4, 2, 3)
    np.testing.assert_allclose(jacobian, numerical_jacobian(matrix_to_four, A), rtol=1e-6,
                               atol=1e-8)


def test_jacobian_modes_agree_and_take_wrt_by_name():
    x, W = np.array([0.3, -1.2, 0.8]), np.random.default_rng(4).standard_normal((2, 3))
    by_reverse = autotrace.jacobian(layer, wrt="W")(x, W)
    by_forward = autotrace.jacobian(layer, wrt="W", mode="forward")(x, W)
    assert by_reverse.shape == by_forward.shape == (2, 2, 3)
    np.testing.assert_allclose(by_reverse, by_forward, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(by_forward, numerical_jacobian(lambda w: layer(x, w), W),
                               rtol=1e-6, atol=1e-8)


def layer(x, W):
    return np.tanh(W @ x)


def two_outputs(x):
    return x * 2.0, np.sum(x ** 2)


def named_outputs(x):
    return {"double": x * 2.0, "parts": [np.sin(x[0]), x[:2] * x[1:]]}


def twice_and_thrice(x):
    return x * 2.0, x * 3.0


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_of_a_structured_output_has_its_structure(mode):
    x = np.array([0.3, -1.2, 0.8])
    double, squares = autotrace.jacobian(two_outputs, mode=mode)(x)
    np.testing.assert_allclose(double, 2.0 * np.eye(3))
    np.testing.assert_allclose(squares, 2.0 * x)
    named = autotrace.jacobian(named_outputs, mode=mode)(x)
    assert set(named) == {"double", "parts"} and isinstance(named["parts"], list)
    np.testing.assert_allclose(named["double"], 2.0 * np.eye(3))
    np.testing.assert_allclose(named["parts"][0], [np.cos(x[0]), 0.0, 0.0])
    products = named["parts"][1]  # x[:2] * x[1:]: rows (x1, x0, 0) and (0, x2, x1)
    assert products.shape == (2, 3)
    np.testing.assert_allclose(products, [[x[1], x[0], 0.0], [0.0, x[2], x[1]]])
    # Outputs of one shape are two Jacobians, not one array stacked from them.
    same = autotrace.jacobian(twice_and_thrice, mode=mode)(x)
    assert isinstance(same, tuple) and len(same) == 2
    np.testing.assert_allclose(same[1], 3.0 * np.eye(3))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_traced_by_function_matches_the_eager_one(mode):
    """autotrace.function traces the Jacobian's loops over unit vectors: the vectors are
    built from the traced value's shape, not its value (which is unknown while tracing)."""
    x = np.array([0.3, -1.2, 0.8])
    traced = autotrace.function(autotrace.jacobian(lift_to_five, mode=mode))
    np.testing.assert_allclose(traced(x), numerical_jacobian(lift_to_five, x), rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(traced(x + 1.0), autotrace.jacobian(lift_to_five, mode=mode)(
        x + 1.0), rtol=1e-12)
    assert traced.trace_count == 1
    double, squares = autotrace.function(autotrace.jacobian(two_outputs, mode=mode))(x)
    np.testing.assert_allclose(double, 2.0 * np.eye(3))
    np.testing.assert_allclose(squares, 2.0 * x)
    A = np.random.default_rng(3).standard_normal((2, 3))
    np.testing.assert_allclose(autotrace.function(autotrace.jacobian(matrix_to_four, mode=mode))(
        A), numerical_jacobian(matrix_to_four, A), rtol=1e-6, atol=1e-8)
    slope = autotrace.function(autotrace.jacobian(np.sin, mode=mode))(0.5)  # a float argument
    np.testing.assert_allclose(slope, np.cos(0.5))


def test_jacobian_with_respect_to_a_container_says_what_to_do():
    with pytest.raises(TypeError, match="that argument is a dict, and jacobian takes one array"):
        autotrace.jacobian(named_outputs)({"w": np.ones(3)})


def test_jacobian_rejects_bad_modes_and_tuple_wrt():
    with pytest.raises(ValueError, match="mode must be"):
        autotrace.jacobian(layer, mode="sideways")
    with pytest.raises(TypeError, match="one wrt argument"):
        autotrace.jacobian(layer, wrt=(0, 1))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_loop(x):
    """The same function, written the way it reads in a textbook: a sum over a loop."""
    total = 0.0
    for i in range(len(x) - 1):
        total = total + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


def rosenbrock_hessian(x):
    """The Hessian of the Rosenbrock function, by hand."""
    n = len(x)
    H = np.zeros((n, n))
    for i in range(n - 1):
        H[i, i] += 1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0
        H[i + 1, i + 1] += 200.0
        H[i, i + 1] = H[i + 1, i] = -400.0 * x[i]
    return H


ROSENBROCK_POINTS = [np.array([1.0, 2.0, 3.0]), np.array([-1.2, 1.0, 0.4, -0.7, 2.1])]


@pytest.mark.parametrize("function", [rosenbrock, rosenbrock_loop])
@pytest.mark.parametrize("x", ROSENBROCK_POINTS, ids=["n3", "n5"])
def test_hessian_of_rosenbrock_is_the_analytic_hessian(function, x):
    hessian = autotrace.hessian(function)(x)
    assert hessian.shape == (len(x), len(x))
    np.testing.assert_allclose(hessian, rosenbrock_hessian(x), rtol=1e-12, atol=1e-9)


def test_hessian_at_the_minimum_of_rosenbrock():
    np.testing.assert_allclose(autotrace.hessian(rosenbrock)(np.ones(2)),
                               [[802.0, -400.0], [-400.0, 200.0]])


@pytest.mark.parametrize("x", ROSENBROCK_POINTS, ids=["n3", "n5"])
def test_hessian_traced_by_function_is_the_analytic_hessian(x):
    traced = autotrace.function(autotrace.hessian(rosenbrock_loop))
    np.testing.assert_allclose(traced(x), rosenbrock_hessian(x), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(autotrace.function(autotrace.hessian(weighted_energy))(
        x, np.ones_like(x)), autotrace.hessian(weighted_energy)(x, np.ones_like(x)))


@pytest.mark.parametrize("function", [rosenbrock, rosenbrock_loop])
def test_hvp_is_hessian_times_vector(function):
    rng = np.random.default_rng(5)
    x, v = ROSENBROCK_POINTS[1], rng.standard_normal(5)
    product = autotrace.hvp(function)(x, v)
    assert product.shape == (5,)
    np.testing.assert_allclose(product, rosenbrock_hessian(x) @ v, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(product, autotrace.hessian(function)(x) @ v, rtol=1e-12,
                               atol=1e-9)


def weighted_energy(x, w):
    return np.sum(w * np.sin(x) * x)


def test_hessian_and_hvp_with_respect_to_another_argument():
    x, w = np.array([0.2, -0.4, 1.1]), np.array([1.5, 0.5, -2.0])
    # f = sum(w * sin(x) * x) is linear in w: its Hessian in w is zero; in x it is diagonal.
    np.testing.assert_allclose(autotrace.hessian(weighted_energy, wrt="w")(x, w),
                               np.zeros((3, 3)), atol=1e-12)
    second = w * (2 * np.cos(x) - x * np.sin(x))
    np.testing.assert_allclose(autotrace.hessian(weighted_energy)(x, w), np.diag(second))
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(autotrace.hvp(weighted_energy)(x, w, v), second * v)


def cubic_product(x):
    return np.sum(x[0] * x[1] ** 2 * x[2] ** 3)


def test_a_function_that_calls_hvp_is_differentiated():
    # grad of sum(H(x) v) is the third derivative contracted with v: compare with grad of the
    # same written with forward over grad
    x, v = np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.0])

    def through_hvp(z):
        return np.sum(autotrace.hvp(cubic_product)(z, v))

    def through_forward(z):
        return np.sum(autotrace.forward(autotrace.grad(cubic_product))(z, tangent=v)[1])
    np.testing.assert_allclose(autotrace.grad(through_hvp)(x), [162.0, 108.0, 234.0])
    np.testing.assert_allclose(autotrace.grad(through_hvp)(x),
                               autotrace.grad(through_forward)(x))
    np.testing.assert_allclose(autotrace.function(autotrace.grad(through_hvp))(x),
                               [162.0, 108.0, 234.0])


def test_hvp_with_respect_to_an_argument_passed_by_keyword():
    x, w = np.array([0.2, -0.4, 1.1]), np.array([1.5, 0.5, -2.0])
    v = np.array([1.0, -2.0, 0.5])
    second = w * (2 * np.cos(x) - x * np.sin(x))
    np.testing.assert_allclose(autotrace.hvp(weighted_energy, wrt="x")(v, x=x, w=w),
                               second * v)


class Counter:
    def __init__(self):
        self.calls = 0.0

    def step(self, x):
        self.calls = self.calls + 1.0
        return x * self.calls


def test_vjp_fn_is_the_derivative_at_the_arguments_of_the_call():
    x = np.array([0.2, 0.5])
    value, vjp_fn = autotrace.vjp(sine_times_x, x)
    x[0] = 100.0  # a later change to the argument changes nothing
    expected = np.cos([0.2, 0.5]) * [0.2, 0.5] + np.sin([0.2, 0.5])
    np.testing.assert_allclose(vjp_fn(np.ones(2))[0], expected)
    np.testing.assert_allclose(vjp_fn(np.ones(2))[0], expected)  # run again, alike


def test_a_second_vjp_fn_call_of_a_function_that_keeps_state_is_refused():
    counter = Counter()

    def squared_step(x):
        return counter.step(x) ** 2
    value, vjp_fn = autotrace.vjp(squared_step, 3.0)
    assert (value, vjp_fn(1.0)) == (9.0, (6.0,))
    with pytest.raises(autotrace.StateError, match=(
            r"^vjp_fn runs .*squared_step again at the arguments it was made at, and this "
            r"time it returned another value: it keeps state or draws random numbers")):
        vjp_fn(1.0)


def test_linearize_is_the_derivative_at_the_primals_of_the_call():
    x = np.array([0.5, 1.0])
    value, f_jvp = autotrace.linearize(np.sin, x)
    x[0] = 3.0
    np.testing.assert_allclose(f_jvp(np.ones(2)), np.cos([0.5, 1.0]))
    counter = Counter()

    def squared_step(x):
        return counter.step(x) ** 2
    value, f_jvp = autotrace.linearize(squared_step, 3.0)
    assert value == 9.0
    with pytest.raises(autotrace.StateError, match=(
            r"^f_jvp runs .*squared_step again at the arguments it was made at, and this "
            r"time it returned another value.*call autotrace.jvp for each tangent")):
        f_jvp(1.0)


def weights_and_bias(p):
    w, b = p
    return np.sum(w * 2.0) + b


def test_linearize_at_a_tuple():
    p = (np.ones(3), 1.0)
    value, f_jvp = autotrace.linearize(weights_and_bias, p)
    assert value == 7.0
    assert f_jvp((np.ones(3), 1.0)) == 7.0
    assert f_jvp((np.arange(3.0), 0.5)) == 6.5
    with pytest.raises(ValueError, match=r"^the tangent of p\[0\] has shape \(2,\), but "
                       r"p\[0\] has shape \(3,\)"):
        f_jvp((np.ones(2), 1.0))


def sine_times_x(x):
    return np.sin(x) * x


def test_elementwise_grad():
    x = np.linspace(-2.0, 2.0, 7)
    gradient = autotrace.elementwise_grad(sine_times_x)(x)
    assert gradient.shape == x.shape
    np.testing.assert_allclose(gradient, np.cos(x) * x + np.sin(x))


# --- Nesting the transforms in any order ------------------------------------------------------

def quintic_sine(x):
    return np.sin(x) * x ** 3


def quintic_sine_derivatives(x):
    """The first three derivatives of sin(x) * x**3, by hand."""
    s, c = math.sin(x), math.cos(x)
    first = 3 * x ** 2 * s + x ** 3 * c
    second = 6 * x * s + 6 * x ** 2 * c - x ** 3 * s
    third = 6 * s + 18 * x * c - 9 * x ** 2 * s - x ** 3 * c
    return first, second, third


# Generated functions called from user code: autotrace reads these callers' source and
# differentiates the generated code they call.
quintic_sine_tangent = autotrace.forward(quintic_sine)


def tangent_of_quintic_sine(x):
    value, tangent = quintic_sine_tangent(x)
    return tangent


def tangent_of_quintic_sine_along(x, v):
    value, tangent = quintic_sine_tangent(x, tangent=v)
    return tangent * value


def test_grad_of_grad_of_grad():
    x = 0.7
    first, second, third = quintic_sine_derivatives(x)
    once = autotrace.grad(quintic_sine)
    twice = autotrace.grad(once)
    thrice = autotrace.grad(twice)
    assert once(x) == pytest.approx(first, rel=1e-12)
    assert twice(x) == pytest.approx(second, rel=1e-12)
    assert thrice(x) == pytest.approx(third, rel=1e-12)


def test_forward_of_grad():
    x = 0.7
    first, second, _ = quintic_sine_derivatives(x)
    value, tangent = autotrace.forward(autotrace.grad(quintic_sine))(x)
    assert value == pytest.approx(first, rel=1e-12)
    assert tangent == pytest.approx(second, rel=1e-12)
    _, scaled = autotrace.forward(autotrace.grad(quintic_sine))(x, tangent=-2.0)
    assert scaled == pytest.approx(-2.0 * second, rel=1e-12)


def test_grad_of_forward():
    x = 0.7
    first, second, _ = quintic_sine_derivatives(x)
    assert autotrace.grad(tangent_of_quintic_sine)(x) == pytest.approx(second, rel=1e-12)
    # f'(x) v f(x), differentiated in x and in the tangent v.
    v = 1.5
    gx, gv = autotrace.grad(tangent_of_quintic_sine_along, wrt=(0, 1))(x, v)
    assert gx == pytest.approx(v * (second * quintic_sine(x) + first * first), rel=1e-12)
    assert gv == pytest.approx(first * quintic_sine(x), rel=1e-12)


def test_forward_of_forward():
    x = 0.7
    first, second, _ = quintic_sine_derivatives(x)
    (value, tangent), (tangent_of_value, tangent_of_tangent) = autotrace.forward(
        autotrace.forward(quintic_sine))(x)
    assert value == pytest.approx(quintic_sine(x))
    assert tangent == pytest.approx(first) and tangent_of_value == pytest.approx(first)
    assert tangent_of_tangent == pytest.approx(second, rel=1e-12)


def test_forward_of_grad_of_grad():
    x = 0.7
    _, second, third = quintic_sine_derivatives(x)
    value, tangent = autotrace.forward(autotrace.grad(autotrace.grad(quintic_sine)))(x)
    assert value == pytest.approx(second, rel=1e-12)
    assert tangent == pytest.approx(third, rel=1e-12)


def test_jacobian_of_grad_is_the_hessian():
    x = ROSENBROCK_POINTS[1]
    for mode in ("reverse", "forward"):
        hessian = autotrace.jacobian(autotrace.grad(rosenbrock), mode=mode)(x)
        np.testing.assert_allclose(hessian, rosenbrock_hessian(x), rtol=1e-12, atol=1e-9)


# --- Custom gradients --------------------------------------------------------------------------

def log1pexp_plain(x):
    return np.log(1 + np.exp(x))


@autotrace.custom_gradient
def log1pexp(x):
    e = np.exp(x)

    def grad_fn(dy):
        return dy * (1 - 1 / (1 + e))
    return np.log(1 + e), grad_fn


def log1pexp_user(x):
    return log1pexp(x)


def test_log1pexp_plain_gradient():
    assert autotrace.grad(log1pexp_plain)(0.0) == 0.5
    # In float64, exp(100) does not overflow: the plain gradient is exp(100) / (1 + exp(100)),
    # which rounds to exactly 1.0.
    assert autotrace.grad(log1pexp_plain)(100.0) == 1.0
    # In float32 (TensorFlow's example), exp(100) overflows to inf, and inf / inf is nan.
    with np.errstate(over="ignore", invalid="ignore"):
        gradient = autotrace.grad(log1pexp_plain)(np.float32(100.0))
    assert np.isnan(gradient)


def test_log1pexp_custom_gradient():
    gradient = autotrace.grad(log1pexp_user)
    assert gradient(0.0) == 0.5
    assert gradient(100.0) == 1.0
    with np.errstate(over="ignore"):
        at_100 = gradient(np.float32(100.0))
        at_0 = gradient(np.float32(0.0))
    assert at_100 == 1.0 and at_100.dtype == np.float32
    assert at_0 == 0.5 and at_0.dtype == np.float32


def test_custom_gradient_called_directly_returns_the_value():
    assert log1pexp(0.0) == pytest.approx(math.log(2.0))
    np.testing.assert_allclose(log1pexp(np.array([0.0, 1.0])),
                               np.log1p(np.exp([0.0, 1.0])))


def test_custom_gradient_shows_in_the_generated_source():
    text = autotrace.source(autotrace.grad(log1pexp_user))
    # the adjoint calls the function's own grad_fn, through its generated twin log1pexp__vjp
    assert "log1pexp__vjp(" in text and "log1pexp__value(" in text


def log1pexp_in_a_loop(x):
    total = 0.0
    for i in range(3):
        total = total + log1pexp(x * (i + 1.0))
    return np.sum(total)


def calls_log1pexp_helper(x):
    return np.sum(log1pexp_user(x * 2.0) * x)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def test_custom_gradient_in_a_loop():
    x = np.array([-0.5, 0.3, 2.0])
    expected = sum((i + 1.0) * sigmoid(x * (i + 1.0)) for i in range(3))
    np.testing.assert_allclose(autotrace.grad(log1pexp_in_a_loop)(x), expected)
    with np.errstate(over="ignore"):
        large = autotrace.grad(log1pexp_in_a_loop)(np.full(2, 100.0, dtype=np.float32))
    np.testing.assert_array_equal(large, [6.0, 6.0])


def test_custom_gradient_inside_a_user_function_call():
    x = np.array([-0.5, 0.3, 2.0])
    expected = 2.0 * sigmoid(2.0 * x) * x + np.log1p(np.exp(2.0 * x))
    np.testing.assert_allclose(autotrace.grad(calls_log1pexp_helper)(x), expected)


@autotrace.custom_gradient
def scaled_product(x, y):
    """x * y, with a gradient that doubles y's share (so the test sees grad_fn was used)."""
    def grad_fn(dy):
        return dy * y, 2.0 * dy * x
    return x * y, grad_fn


def uses_scaled_product(x, y):
    return np.sum(scaled_product(x, y) + x)


def test_custom_gradient_with_two_arguments():
    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    gx, gy = autotrace.grad(uses_scaled_product, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(gx, y + 1.0)
    np.testing.assert_allclose(gy, 2.0 * x)
    np.testing.assert_allclose(autotrace.grad(uses_scaled_product, wrt="y")(x, y), 2.0 * x)


def test_second_derivative_through_a_custom_gradient():
    """The gradient of grad_fn: d/dx (1 - 1 / (1 + e^x)) = e^x / (1 + e^x)^2."""
    second = autotrace.grad(autotrace.grad(log1pexp_user))
    for x in (0.0, 1.0):
        e = math.exp(x)
        assert second(x) == pytest.approx(e / (1 + e) ** 2, rel=1e-12)


def test_forward_mode_through_a_custom_gradient_uses_its_grad_fn():
    value, tangent = autotrace.forward(log1pexp_user)(0.0)
    assert value == pytest.approx(math.log(2.0))
    assert tangent == pytest.approx(0.5)


@autotrace.custom_gradient
def tripled_halved_gradient(x):
    """3 x, with a gradient of dy / 2 instead of 3 dy (as a clipped or straight-through
    gradient differs from the derivative of the value)."""
    def grad_fn(dy):
        return dy * 0.5
    return x * 3.0, grad_fn


def square_of_tripled(x):
    return np.sum(tripled_halved_gradient(x) ** 2)


def test_forward_and_reverse_agree_on_a_custom_gradient():
    x = np.array([1.0, 2.0, 3.0])
    expected = 2.0 * (3.0 * x) * 0.5  # d sum(y^2) = 2 y dy, sent back through grad_fn
    np.testing.assert_allclose(autotrace.grad(square_of_tripled)(x), expected)
    np.testing.assert_allclose(autotrace.jacobian(square_of_tripled, mode="forward")(x),
                               expected)
    _, tangent = autotrace.forward(square_of_tripled)(x, tangent=np.array([1.0, -1.0, 2.0]))
    assert tangent == pytest.approx(np.dot(expected, [1.0, -1.0, 2.0]))
    # Second order: forward over the custom gradient, and reverse over forward.
    np.testing.assert_allclose(autotrace.hessian(square_of_tripled)(x), 3.0 * np.eye(3))
    tangent_sum = autotrace.grad(lambda x: autotrace.forward(square_of_tripled)(x)[1])
    np.testing.assert_allclose(tangent_sum(x), [3.0, 3.0, 3.0])


def test_forward_mode_uses_each_argument_of_a_custom_gradient():
    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    for wrt in (0, 1):
        np.testing.assert_allclose(
            autotrace.jacobian(uses_scaled_product, wrt=wrt, mode="forward")(x, y),
            autotrace.jacobian(uses_scaled_product, wrt=wrt, mode="reverse")(x, y))


@autotrace.custom_gradient
def gradient_without_rule(x):
    def grad_fn(dy):
        return np.real_if_close(dy) * 2.0  # refused: no rule
    return x * 3.0, grad_fn


def calls_gradient_without_rule(x):
    return np.sum(gradient_without_rule(x))


def test_forward_mode_names_a_grad_fn_it_cannot_differentiate():
    lines, first = inspect.getsourcelines(gradient_without_rule.function)
    line = first + next(i for i, text in enumerate(lines) if "real_if_close" in text)
    call = inspect.getsourcelines(calls_gradient_without_rule)[1] + 1
    with pytest.raises(autotrace.TransformError) as caught:
        autotrace.forward(calls_gradient_without_rule)(np.ones(2))
    assert str(caught.value).startswith(
        f'File "{__file__}", line {line}: forward mode takes the tangent of '
        f"tests.test_operators.gradient_without_rule (called on line {call} of {__file__}) "
        "from its grad_fn, and cannot differentiate it in dy: no derivative rule for "
        "numpy.real_if_close: complex values")


# --- Rules users register for functions autotrace cannot read ------------------------------------

# A stand-in for scipy.special.erf: a C function (math.erf) vectorized, so it has no Python
# source. Registering mutates the global rule registries, so the rules go on this object,
# private to this module.
erf = np.vectorize(math.erf, otypes=[float])


@autotrace.register_adjoint(erf)
def erf_adjoint(y, x):
    d[x] = d[y] * 2.0 / np.sqrt(np.pi) * np.exp(-x * x)


@autotrace.register_tangent(erf)
def erf_tangent(y, x):
    d[y] = d[x] * 2.0 / np.sqrt(np.pi) * np.exp(-x * x)


def erf_model(x, w):
    return np.sum(erf(x * w) * x)


def erf_model_derivative(x, w):
    """d/dx of erf(x * w) * x, element by element."""
    return 2.0 / np.sqrt(np.pi) * np.exp(-(x * w) ** 2) * w * x + erf(x * w)


def test_registered_rule_in_reverse_mode():
    x, w = np.linspace(-1.0, 1.5, 4), 0.8
    np.testing.assert_allclose(autotrace.grad(erf_model)(x, w), erf_model_derivative(x, w))
    text = autotrace.source(autotrace.grad(erf_model))
    assert "2.0 / np.sqrt(np.pi) * np.exp(-" in text


def test_registered_rule_in_forward_mode():
    x, w = np.linspace(-1.0, 1.5, 4), 0.8
    v = np.array([1.0, 0.0, -2.0, 0.5])
    value, tangent = autotrace.forward(erf_model)(x, w, tangent=v)
    assert value == pytest.approx(erf_model(x, w))
    assert tangent == pytest.approx(np.dot(erf_model_derivative(x, w), v))
    text = autotrace.source(autotrace.forward(erf_model))
    assert "2.0 / np.sqrt(np.pi) * np.exp(-" in text


def test_registered_rules_pass_the_checker_to_second_order():
    x = np.linspace(-1.0, 1.5, 4)
    autotrace.testing.check_grads(erf_model, (x, 0.8), wrt=(0, 1), order=2,
                                  modes=("reverse", "forward"))


# Only an adjoint: forward mode must say what is missing, not guess.
erf_reverse_only = np.vectorize(math.erf, otypes=[float])
autotrace.register_adjoint(erf_reverse_only)(erf_adjoint)


def erf_reverse_only_model(x):
    return np.sum(erf_reverse_only(x))


def test_forward_mode_without_a_tangent_rule_says_how_to_register_one():
    x = np.linspace(-1.0, 1.0, 3)
    np.testing.assert_allclose(autotrace.grad(erf_reverse_only_model)(x),
                               2.0 / np.sqrt(np.pi) * np.exp(-x * x))
    with pytest.raises(autotrace.TransformError, match="no tangent .* rule") as error:
        autotrace.forward(erf_reverse_only_model)
    assert "register_tangent" in str(error.value)


# --- stop_gradient ----------------------------------------------------------------------------

def stopped_square(x):
    return np.sum(autotrace.stop_gradient(x) * x)


def test_stop_gradient_passes_the_value_and_stops_the_gradient():
    x = np.array([1.0, -2.0, 3.0])
    assert autotrace.stop_gradient(x) is x
    assert stopped_square(x) == pytest.approx(np.sum(x * x))
    np.testing.assert_allclose(autotrace.grad(stopped_square)(x), x)  # not 2 x
    value, tangent = autotrace.forward(stopped_square)(x, tangent=np.ones(3))
    assert value == pytest.approx(np.sum(x * x))
    assert tangent == pytest.approx(np.sum(x))  # not 2 sum(x)


def fully_stopped(x):
    return np.sum(autotrace.stop_gradient(np.sin(x)))


def test_stop_gradient_of_everything_gives_zeros():
    x = np.array([0.5, 1.5])
    np.testing.assert_array_equal(autotrace.grad(fully_stopped)(x), np.zeros(2))
    value, tangent = autotrace.forward(fully_stopped)(x)
    assert value == pytest.approx(np.sum(np.sin(x)))
    assert tangent == 0.0
