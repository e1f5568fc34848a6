"""The seed keywords `dy` and `tangent` are the documented ones unless the function takes a
parameter of that name (or reads a global of it): a local of that name is renamed instead."""
import warnings

import numpy as np
import pytest

import autotrace
from autotrace.transforms.derivative_record import derivative_record

X = np.array([0.5, 1.0, -2.0])


def local_tangent(x):
    tangent = np.cos(x)
    return np.sum(tangent * x)


def local_tangent_gradient(x):
    return np.cos(x) - x * np.sin(x)


def local_dy(x):
    dy = x * 2.0
    return np.sum(dy * x)


def local_dy_read_by_a_nested_function(x):
    dy = np.sin(x)

    def scaled(v):
        return v * dy
    return np.sum(scaled(x))


def calls_a_function_with_a_local_dy(x):
    return local_dy(np.tanh(x)) + local_tangent(x)


class Holder:
    tangent = 3.0
    dy = 2.0


def reads_attributes_called_like_the_seeds(x):
    return np.sum(x * Holder.tangent * Holder.dy)


dy = 5.0  # a global the function below reads: its derivative's parameter would hide it


def reads_a_global_dy(x):
    return np.sum(x * dy)


def test_grad_and_value_and_grad_take_dy_beside_a_local_dy():
    np.testing.assert_allclose(autotrace.grad(local_dy)(X, dy=2.0), 2.0 * 4.0 * X)
    value, gradient = autotrace.value_and_grad(local_dy)(X, dy=0.5)
    assert value == pytest.approx(local_dy(X))
    np.testing.assert_allclose(gradient, 0.5 * 4.0 * X)
    assert derivative_record(autotrace.grad(local_dy)).seed == "dy"
    traced = autotrace.function(autotrace.grad(local_dy))
    np.testing.assert_allclose(traced(X, dy=3.0), 3.0 * 4.0 * X)


def test_forward_takes_tangent_beside_a_local_tangent():
    direction = np.array([1.0, -1.0, 0.5])
    expected = np.sum(local_tangent_gradient(X) * direction)
    value, tangent = autotrace.forward(local_tangent)(X, tangent=direction)
    assert (value, tangent) == pytest.approx((local_tangent(X), expected))
    assert derivative_record(autotrace.forward(local_tangent)).seed == "tangent"
    traced = autotrace.function(autotrace.forward(local_tangent))
    assert traced(X, tangent=direction)[1] == pytest.approx(expected)
    assert autotrace.jvp(local_tangent, (X,), (direction,))[1] == pytest.approx(expected)


def test_vjp_jvp_and_hessian_of_functions_with_locals_named_like_seeds():
    value, vjp_fn = autotrace.vjp(local_dy, X)
    np.testing.assert_allclose(vjp_fn(2.0)[0], 2.0 * 4.0 * X)
    assert autotrace.jvp(local_dy, (X,), (np.ones(3),))[1] == pytest.approx(np.sum(4.0 * X))
    np.testing.assert_allclose(autotrace.hessian(local_dy)(X), 4.0 * np.eye(3))
    np.testing.assert_allclose(autotrace.hessian(local_tangent)(X), np.diag(
        -2.0 * np.sin(X) - X * np.cos(X)), rtol=1e-12)
    batch = np.stack([X, 2.0 * X])
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(local_dy))(batch), 4.0 * batch)


def test_a_local_read_by_a_nested_function_and_a_callee_with_such_locals():
    np.testing.assert_allclose(
        autotrace.grad(local_dy_read_by_a_nested_function)(X, dy=2.0),
        2.0 * (np.sin(X) + X * np.cos(X)))
    t = np.tanh(X)
    expected = 4.0 * t * (1.0 - t ** 2) + local_tangent_gradient(X)
    np.testing.assert_allclose(autotrace.grad(calls_a_function_with_a_local_dy)(X, dy=1.0),
                               expected)
    direction = np.array([0.25, 1.0, -1.0])
    _, tangent = autotrace.forward(calls_a_function_with_a_local_dy)(X, tangent=direction)
    assert tangent == pytest.approx(np.sum(expected * direction))


def test_attributes_called_like_the_seeds_leave_the_keywords_alone():
    np.testing.assert_allclose(
        autotrace.grad(reads_attributes_called_like_the_seeds)(X, dy=2.0), np.full(3, 12.0))
    _, tangent = autotrace.forward(reads_attributes_called_like_the_seeds)(
        X, tangent=np.ones(3))
    assert tangent == pytest.approx(18.0)


def test_a_global_called_dy_renames_the_keyword_and_keeps_its_value():
    derivative = autotrace.grad(reads_a_global_dy)
    assert derivative_record(derivative).seed == "dy_"
    np.testing.assert_allclose(derivative(X, dy_=2.0), np.full(3, 10.0))
    _, vjp_fn = autotrace.vjp(reads_a_global_dy, X)
    np.testing.assert_allclose(vjp_fn(2.0)[0], np.full(3, 10.0))


def function_without_source(text: str, name: str):
    namespace = {"np": np}
    exec(compile(text, "<string>", "exec"), namespace)
    return namespace[name]


def test_functions_without_source_and_their_callers_take_the_documented_keywords():
    # (derived from traces: their seed keyword follows the same rule as the callers')
    g = function_without_source("def g(x):\n    dy = x * 2.0\n    return np.sum(dy * x)\n", "g")
    h = function_without_source(
        "def h(x):\n    tangent = np.cos(x)\n    return np.sum(tangent * x)\n", "h")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(autotrace.grad(g)(X, dy=2.0), 8.0 * X)
        _, tangent = autotrace.forward(h)(X, tangent=np.ones(3))
        assert tangent == pytest.approx(np.sum(local_tangent_gradient(X)))

        def calls_them(x):
            return g(np.sin(x)) * 2.0 + h(x)
        expected = 8.0 * np.sin(X) * np.cos(X) + local_tangent_gradient(X)
        np.testing.assert_allclose(autotrace.grad(calls_them)(X, dy=1.0), expected)
        _, tangent = autotrace.forward(calls_them)(X, tangent=np.ones(3))
        assert tangent == pytest.approx(np.sum(expected))
