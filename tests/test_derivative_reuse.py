"""A closure made anew each step is another function of the same code: its derivative is the
one made for an earlier function of that code, rebound to its own cells, defaults and globals
(transforms/codegen/rebinding.py), where the transform would have generated the same code, and
generated again where it would not."""
import types

import numpy as np
import pytest

import autotrace as at
import autotrace.transforms.pipeline as pipeline
from autotrace import layers, optimizers
from autotrace.transforms.analysis.live_names import StaleDerivativeError


@pytest.fixture
def generated(monkeypatch):
    """A list that grows by one each time a derivative is generated from source."""
    runs = []
    run_passes = pipeline.run_passes

    def counted(unit, passes=None):
        runs.append(unit.func)
        return run_passes(unit, passes)
    monkeypatch.setattr(pipeline, "run_passes", counted)
    return runs


def finite_difference(f, w, step=1e-6):
    gradient = np.zeros_like(w)
    for index in np.ndindex(w.shape):
        e = np.zeros_like(w)
        e[index] = step
        gradient[index] = (f(w + e) - f(w - e)) / (2 * step)
    return gradient


def scaled_sine(a, c):
    return lambda w: np.sum(np.sin(a * w) * c)


W = np.array([0.3, -1.2, 0.7])


def test_two_closures_of_one_code_give_their_own_gradients_from_one_generation(generated):
    first, second = scaled_sine(np.array([1.0, 2.0, 3.0]), 1.5), scaled_sine(
        np.array([-0.5, 0.25, 4.0]), -2.0)
    assert first.__code__ is second.__code__
    np.testing.assert_allclose(at.grad(first)(W), finite_difference(first, W), rtol=1e-6)
    made = len(generated)
    assert made > 0
    np.testing.assert_allclose(at.grad(second)(W), finite_difference(second, W), rtol=1e-6)
    np.testing.assert_allclose(at.grad(first)(W), finite_difference(first, W), rtol=1e-6)
    assert len(generated) == made  # rebound, not generated again
    # It reads the second closure's cells when it runs, and checks them as before.
    derivative = at.grad(second)
    cell = second.__closure__[second.__code__.co_freevars.index("c")]
    cell.cell_contents = 0.5
    np.testing.assert_allclose(derivative(W), finite_difference(second, W), rtol=1e-6)
    cell.cell_contents = [1.0, -1.0, 2.0]
    with pytest.raises(StaleDerivativeError, match=r"'c' was -2.0 when autotrace generated "
                       r"the derivative of <lambda>, and is now \[1.0, -1.0, 2.0\]"):
        derivative(W)
    np.testing.assert_allclose(at.grad(first)(W), finite_difference(first, W), rtol=1e-6)


def applied(g, c):
    return lambda w: np.sum(g(w) * c)


@pytest.mark.parametrize("first, second", [
    ((np.sin, 1.5), (np.sin, [-0.5, 0.25, 4.0])),  # a list where a number was
    ((np.sin, 1.5), (np.sin, 3)),  # an int where a float was
    ((np.sin, 1.5), (np.cos, 1.5)),  # another function
])
def test_a_closure_whose_name_holds_what_is_not_the_same_is_generated_again(
        generated, first, second):
    first, second = applied(*first), applied(*second)
    np.testing.assert_allclose(at.grad(first)(W), finite_difference(first, W), rtol=1e-6)
    made = len(generated)
    np.testing.assert_allclose(at.grad(second)(W), finite_difference(second, W), rtol=1e-6)
    assert len(generated) > made


def test_closures_over_layers_nested_functions_and_defaults(generated):
    def over_layer(layer):
        return lambda x: np.sum(layer(x) ** 2)

    def nested(a):
        def loss(w):
            def inner(v):
                return a * v
            return np.sum(np.tanh(inner(w)) ** 2)
        return loss

    def with_default(a):
        def loss(w, s=a):
            return np.sum(s * w ** 3)
        return loss

    x = np.array([[0.5, -1.0, 2.0]])
    for make, values in ((over_layer, (layers.Dense(2), layers.Dense(2))),
                         (nested, (np.array([1.0, 2.0, 3.0]), np.array([-2.0, 0.5, 1.0]))),
                         (with_default, (np.array([1.0, 2.0, 3.0]), np.array([-2.0, 0.5, 1.0])))):
        point = x if make is over_layer else W
        for value in values:
            f = make(value)
            f(point)  # (a layer builds on its first call)
            np.testing.assert_allclose(at.grad(f)(point), finite_difference(f, point),
                                       rtol=1e-5)
    second = with_default(np.array([3.0, 3.0, 3.0]))
    made = len(generated)
    np.testing.assert_allclose(at.grad(second)(W), 9 * W ** 2)
    second.__defaults__ = (np.array([1.0, 1.0, 1.0]),)  # read when it runs, as the primal's
    np.testing.assert_allclose(at.grad(second)(W), 3 * W ** 2)
    # A default other than a literal is a name of the namespace bound to the first function's
    # value (which a template would keep alive): such a function is generated for itself, once.
    assert len(generated) == made + 1


def _in_a_loop(mode, a):
    """What `mode` gives for a closure made here over `a`, of f(w) = sum(a * w ** 3), at W,
    and what it should give, as tuples."""
    v = np.array([1.0, 0.5, -2.0])
    if mode == "grad":
        return (at.grad(lambda w: np.sum(a * w ** 3))(W),), (3 * a * W ** 2,)
    if mode == "value_and_grad":
        value, gradient = at.value_and_grad(lambda w: np.sum(a * w ** 3))(W)
        return (value, gradient), (np.sum(a * W ** 3), 3 * a * W ** 2)
    if mode == "jvp":
        return at.jvp(lambda w: np.sum(a * w ** 3), (W,), (v,)), (
            np.sum(a * W ** 3), np.sum(3 * a * W ** 2 * v))
    if mode == "forward":
        return at.forward(lambda w: np.sum(a * w ** 3))(W, tangent=v), (
            np.sum(a * W ** 3), np.sum(3 * a * W ** 2 * v))
    if mode == "hessian":
        return (at.hessian(lambda w: np.sum(a * w ** 3))(W),), (np.diag(6 * a * W),)
    variable = at.Variable(W.copy())
    if mode == "implicit_value_and_grad":
        value, pairs = at.implicit_value_and_grad(lambda: np.sum(a * variable ** 3))()
        return (value, pairs[0][0]), (np.sum(a * W ** 3), 3 * a * W ** 2)
    optimizers.SGD(0.1).minimize(lambda: np.sum(a * variable ** 3))
    return (np.asarray(variable),), (W - 0.1 * 3 * a * W ** 2,)


@pytest.mark.parametrize("mode", ["grad", "value_and_grad", "jvp", "forward", "hessian",
                                  "implicit_value_and_grad", "minimize"])
def test_a_lambda_made_in_a_loop_in_every_mode(generated, mode):
    counts = []
    for a in (np.array([1.0, 2.0, 3.0]), np.array([-0.5, 0.0, 4.0]), np.array([2.0, 2.0, 1.0])):
        got, expected = _in_a_loop(mode, a)
        assert len(got) == len(expected)
        for got_part, expected_part in zip(got, expected):
            np.testing.assert_allclose(got_part, expected_part, rtol=1e-10)
        counts.append(len(generated))
    assert counts[0] > 0
    assert counts[2] == counts[0]  # made once, rebound in the next steps


def test_a_training_step_written_the_keras_way_generates_once(generated):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(8, 3)), rng.normal(size=(8, 1))
    dense = layers.Dense(1)
    optimizer = optimizers.SGD(0.05)

    def step():
        return optimizer.minimize(lambda: np.mean((dense(x) - y) ** 2))
    losses = [float(step()) for _ in range(4)]
    made = len(generated)
    losses += [float(step()) for _ in range(4)]
    assert len(generated) == made
    assert losses == sorted(losses, reverse=True)  # it descends
    kernel, bias = dense.kernel.numpy(), dense.bias.numpy()
    gradient = 2 * x.T @ (x @ kernel + bias - y) / len(x)
    assert float(step()) == pytest.approx(np.mean((x @ kernel + bias - y) ** 2), rel=1e-12)
    np.testing.assert_allclose(dense.kernel.numpy(), kernel - 0.05 * gradient, rtol=1e-10)


def cubed(w, a):
    return np.sum(a * w ** 3)


def test_a_lambda_calling_a_function_in_a_loop_and_its_second_derivatives(generated):
    counts = []
    for a in (np.array([1.0, 2.0, 3.0]), np.array([-0.5, 0.0, 4.0]), np.array([2.0, 2.0, 1.0])):
        f = lambda w: cubed(w, a)  # noqa: E731  (its derivative runs cubed's in halves)
        before = len(generated)
        np.testing.assert_allclose(at.grad(f)(W), 3 * a * W ** 2, rtol=1e-12)
        counts.append(len(generated) - before)
        # a derivative of it reads the one with calls whole, made for this closure
        np.testing.assert_allclose(at.hessian(f)(W), np.diag(6 * a * W), rtol=1e-12)
        np.testing.assert_allclose(at.function(at.grad(f))(W), 3 * a * W ** 2, rtol=1e-12)
    assert counts[0] > 0 and counts[1:] == [0, 0]


def test_a_nested_function_whose_default_reads_the_closure_is_generated_for_each_closure():
    # the default `s=a` is evaluated where the derivative is generated: another closure's `a`
    # must not be read from the first one's derivative
    def make(a):
        def loss(w):
            def g(v, s=a):
                return s * v ** 3
            return np.sum(g(w))
        return loss

    for a in (1.0, 2.0, 3.0):
        f = make(a)
        np.testing.assert_allclose(at.grad(f)(W), 3.0 * a * W ** 2, rtol=1e-12)
        value, gradient = at.value_and_grad(f)(W)
        np.testing.assert_allclose(value, a * np.sum(W ** 3), rtol=1e-12)
        np.testing.assert_allclose(gradient, 3.0 * a * W ** 2, rtol=1e-12)


def test_a_lambda_calling_a_function_has_its_hessian_made_once(generated):
    # the forward derivative over the reverse one (which reads the one running calls whole)
    # is rebound to each closure's derivative, as the reverse one is
    counts = []
    for a in (np.array([1.0, 2.0, 3.0]), np.array([-0.5, 0.0, 4.0]), np.array([2.0, 2.0, 1.0])):
        before = len(generated)
        np.testing.assert_allclose(at.hessian(lambda w: cubed(w, a))(W), np.diag(6 * a * W),
                                   rtol=1e-12)
        counts.append(len(generated) - before)
    assert counts[0] > 0 and counts[1:] == [0, 0]


# Another module of NumPy's names: code written for it must not get NumPy's derivative.
SINE_NUMPY = types.ModuleType("sine_numpy")
SINE_NUMPY.tanh, SINE_NUMPY.mean = np.sin, np.sum


def mse_xp(w, x, xp=np):
    return xp.mean(xp.tanh(x @ w) ** 2)


def mse_keyword_xp(w, x, *, xp=np):
    return xp.mean(xp.tanh(x @ w) ** 2)


def mse_none_xp(w, x, xp=None):
    """The loss, its module NumPy unless given."""
    xp = np if xp is None else xp
    return xp.mean(xp.tanh(x @ w) ** 2)


X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])


def _mse_gradient(w, module):
    """The gradient of mse_xp at w, x=X, computed by hand for `module`."""
    if module is np:
        t = np.tanh(X @ w)
        return X.T @ (2 * t * (1 - t * t)) / t.size
    return X.T @ (2 * np.sin(X @ w) * np.cos(X @ w))


def _gradient_in_mode(mode, f, module, passed: bool):
    """`mode`'s gradient of `f` at W (xp given where `passed`), and the Hessian's diagonal
    column 0 where mode is hessian (from the gradient at nearby points otherwise)."""
    keywords = {"xp": module} if passed else {}
    if mode == "grad":
        return at.grad(f)(W, X, **keywords)
    if mode == "value_and_grad":
        value, gradient = at.value_and_grad(f)(W, X, **keywords)
        assert value == pytest.approx(f(W, X, xp=module), rel=1e-12)
        return gradient
    if mode == "jvp":
        return np.array([at.jvp(lambda w: f(w, X, **keywords), (W,), (e,))[1]
                         for e in np.eye(3)])
    if mode == "function(grad)":
        return at.function(at.grad(f))(W, X, **keywords)
    if mode == "vmap(grad)":
        return at.vmap(lambda w: at.grad(f)(w, X, **keywords))(np.stack([W, W]))[1]
    return at.hessian(lambda w: f(w, X, **keywords))(W)


@pytest.mark.parametrize("mode", ["grad", "value_and_grad", "jvp", "hessian",
                                  "function(grad)", "vmap(grad)"])
@pytest.mark.parametrize("f", [mse_xp, mse_keyword_xp, mse_none_xp])
def test_a_module_default_is_read_as_its_module_and_another_module_gets_its_own(mode, f):
    if mode == "hessian":
        expected = {module: np.array([(_mse_gradient(W + 1e-6 * e, module) - _mse_gradient(
            W - 1e-6 * e, module)) / 2e-6 for e in np.eye(3)]) for module in (np, SINE_NUMPY)}
        tolerance = 1e-6
    else:
        expected = {module: _mse_gradient(W, module) for module in (np, SINE_NUMPY)}
        tolerance = 1e-12
    for module, passed in ((np, False), (np, True), (SINE_NUMPY, True), (np, False)):
        np.testing.assert_allclose(_gradient_in_mode(mode, f, module, passed),
                                   expected[module], rtol=tolerance, atol=tolerance)
    # NumPy's functions are the derivative's own, not resolved when it runs
    source = at.source(at.grad(f))
    assert ("np.tanh(" if f is mse_none_xp else "_default_xp.tanh(") in source
    assert "vjp_start" not in source and "unspecialized(" in source
    # the default changed: the derivative made for NumPy is not run for it
    saved = f.__defaults__, f.__kwdefaults__
    try:
        if f.__defaults__:
            f.__defaults__ = (SINE_NUMPY,)
        else:
            f.__kwdefaults__ = {"xp": SINE_NUMPY}
        np.testing.assert_allclose(_gradient_in_mode(mode, f, SINE_NUMPY, False),
                                   expected[SINE_NUMPY], rtol=tolerance, atol=tolerance)
    finally:
        f.__defaults__, f.__kwdefaults__ = saved


def test_closures_with_a_module_default_are_rebound_only_to_the_same_module(generated):
    def make(module, a):
        def loss(w, x, xp=module):
            return xp.mean(xp.tanh(x @ (a * w)) ** 2)
        return loss

    counts = []
    for module, a in ((np, 1.0), (np, 2.0), (SINE_NUMPY, 1.0), (SINE_NUMPY, 2.0)):
        before = len(generated)
        f = make(module, a)
        np.testing.assert_allclose(at.grad(f)(W / a, X), _mse_gradient(W, module) * a,
                                   rtol=1e-12)
        counts.append(len(generated) - before)
    # rebound to another closure for the same module, made anew for another module
    assert counts[0] > 0 and counts[2] > 0 and counts[1] == counts[3] == 0


def dot_xp(w, x, xp=np):
    return xp.mean(xp.dot(x, w) ** 2)


def test_a_module_with_numpy_names_given_for_a_module_default():
    # a module is no array, though it has `shape` and `dtype` (np.shape, np.dtype): xp.dot(x, w)
    # of one given for xp is a call of its function, which writes into no argument
    numpy_copy = types.ModuleType("numpy_copy")
    numpy_copy.__dict__.update({key: getattr(np, key) for key in ("dot", "mean", "shape",
                                                                  "dtype")})
    expected = X.T @ (X @ W)
    for given in ({}, {"xp": np}, {"xp": numpy_copy}):
        np.testing.assert_allclose(at.grad(dot_xp)(W, X, **given), expected, rtol=1e-12)
