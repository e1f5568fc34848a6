"""argnums= (JAX's name for wrt) and has_aux=True on grad, value_and_grad, vjp and jacobian:
gradients against central differences, aux handed back as f returned it and not
differentiated, and the errors for both spellings given and for an f that returns no pair."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference


def loss_with_aux(w, x):
    r = np.tanh(x @ w)
    return np.sum(r ** 2), {"r": r, "tag": "hidden", "count": 3}


W = np.array([0.5, -0.2])
X = np.array([[1.0, 2.0], [3.0, 0.5], [-1.0, 0.25]])


def value_of(w, x):
    return loss_with_aux(w, x)[0]


def test_argnums_is_wrt():
    def f(x, y):
        return x ** 2 - 2 * x * y + 3 * y
    assert autotrace.grad(f, argnums=1)(2.0, 1.0) == -1.0
    assert autotrace.grad(f, argnums=(0, "y"))(2.0, 1.0) == (2.0, -1.0)
    assert autotrace.value_and_grad(f, argnums=(1, 0))(2.0, 1.0) == (3.0, (-1.0, 2.0))
    np.testing.assert_allclose(
        autotrace.jacobian(lambda a, b: a * b, argnums=1)(np.ones(2), np.array([2.0, 3.0])),
        np.eye(2))


def test_wrt_and_argnums_together_are_refused():
    with pytest.raises(TypeError, match=r"^wrt=0 and argnums=1 were both given; argnums is "
                                        r"another name for wrt: give one of them$"):
        autotrace.grad(lambda x, y: x * y, wrt=0, argnums=1)
    with pytest.raises(TypeError, match="wrt=0 and argnums=0 were both given"):
        autotrace.value_and_grad(lambda x: x, 0, argnums=0)
    with pytest.raises(TypeError, match=r"wrt=\(0,\) and argnums=0 were both given"):
        autotrace.jacobian(lambda x: x, (0,), argnums=0)


def test_grad_has_aux_returns_gradient_and_aux():
    gradient, aux = autotrace.grad(loss_with_aux, has_aux=True)(W, X)
    np.testing.assert_allclose(gradient, central_difference(lambda w: value_of(w, X), W),
                               rtol=1e-6)
    np.testing.assert_allclose(aux["r"], np.tanh(X @ W))
    assert (aux["tag"], aux["count"]) == ("hidden", 3)


def test_aux_is_not_differentiated():
    # Were aux seeded as an output, the gradient would include d(sum(aux))/dx = 3.
    def f(x):
        return x * x, 3.0 * x
    assert autotrace.grad(f, has_aux=True)(2.0) == (4.0, 6.0)
    # Without has_aux, a returned tuple is differentiated whole: the gradient of its sum.
    assert autotrace.grad(f)(2.0) == 7.0


def test_value_and_grad_has_aux_structure_and_argnums():
    (value, aux), (dw, dx) = autotrace.value_and_grad(
        loss_with_aux, argnums=(0, 1), has_aux=True)(W, X)
    assert value == pytest.approx(value_of(W, X))
    assert aux["tag"] == "hidden"
    np.testing.assert_allclose(dw, central_difference(lambda w: value_of(w, X), W), rtol=1e-6)
    np.testing.assert_allclose(dx, central_difference(lambda x: value_of(W, x), X), rtol=1e-6)


def test_has_aux_seed_is_for_the_value_only():
    def f(x):
        return x * np.array([1.0, 2.0]), "aux"
    gradient, aux = autotrace.grad(f, has_aux=True)(3.0, dy=np.array([10.0, 1.0]))
    assert (gradient, aux) == (12.0, "aux")


def test_vjp_has_aux():
    value, vjp_fn, aux = autotrace.vjp(loss_with_aux, W, X, has_aux=True)
    assert value == pytest.approx(value_of(W, X))
    np.testing.assert_allclose(aux["r"], np.tanh(X @ W))
    for _ in range(2):  # the second call runs the whole derivative again
        dw, dx = vjp_fn(2.0)
        np.testing.assert_allclose(dw, 2 * central_difference(lambda w: value_of(w, X), W),
                                   rtol=1e-6)
        np.testing.assert_allclose(dx, 2 * central_difference(lambda x: value_of(W, x), X),
                                   rtol=1e-6)


def test_has_aux_traced():
    step = autotrace.function(autotrace.grad(loss_with_aux, has_aux=True))
    for scale in (1.0, 2.0):  # traced once, then from the cache
        gradient, aux = step(W * scale, X)
        expected, expected_aux = autotrace.grad(loss_with_aux, has_aux=True)(W * scale, X)
        np.testing.assert_allclose(gradient, expected)
        np.testing.assert_allclose(aux["r"], expected_aux["r"])
    assert step.trace_count == 1


def test_has_aux_source_is_the_generated_code():
    text = autotrace.source(autotrace.grad(loss_with_aux, has_aux=True))
    assert text.startswith("def dloss_with_aux(w, x, *, dy=None):")
    assert "r = np.tanh(x @ w)" in text and "matmul_adjoint_b" in text


def returns_a_float(x):
    return x * 2.0


def returns_three(x):
    return x, x, x


def returns_a_list(x):
    return [x]


@pytest.mark.parametrize("f, description", [
    (returns_a_float, "a float"),
    (returns_three, "a tuple of 3 items"),
    (returns_a_list, "a list of 1 items"),
])
def test_has_aux_needs_a_pair(f, description):
    message = (f"{f.__name__} is differentiated with has_aux=True, so it must return a pair "
               f"(value, aux), but it returned {description}; return `value, aux`, or leave "
               "out has_aux")
    with pytest.raises(TypeError) as error:
        autotrace.grad(f, has_aux=True)(1.0)
    assert str(error.value) == message
    with pytest.raises(TypeError) as error:
        autotrace.vjp(f, 1.0, has_aux=True)
    assert str(error.value) == message


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_has_aux(mode):
    def f(x):
        y = np.sin(x) * x[0]
        return y, {"y": y, "note": "aux"}
    x = np.array([0.5, -1.0, 2.0])
    jacobian, aux = autotrace.jacobian(f, mode=mode, has_aux=True)(x)
    expected = np.stack([central_difference(lambda v: f(v)[0][i], x) for i in range(3)])
    np.testing.assert_allclose(jacobian, expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(aux["y"], np.sin(x) * x[0])
    assert aux["note"] == "aux"
    with pytest.raises(TypeError, match="returns_a_float is differentiated with has_aux=True"):
        autotrace.jacobian(returns_a_float, mode=mode, has_aux=True)(1.0)


def test_gradient_with_aux_is_not_differentiated_again():
    def cube(x):
        return x ** 3, "aux"
    dcube = autotrace.grad(cube, has_aux=True)

    def first(x):
        return dcube(x)[0]
    with pytest.raises(autotrace.TransformError) as error:
        autotrace.grad(first)(2.0)
    assert error.value.message == (
        "no derivative rule for dcube: a gradient taken with has_aux=True cannot be "
        "differentiated again; for higher derivatives nest autotrace.grad over a function "
        "that returns the value alone")


def test_jvp_has_aux():
    value, tangent, aux = autotrace.jvp(loss_with_aux, (W, X), (np.array([1.0, 0.0]),
                                                                 np.zeros_like(X)), has_aux=True)
    assert value == pytest.approx(value_of(W, X))
    assert tangent == pytest.approx(central_difference(lambda w: value_of(w, X), W)[0],
                                    rel=1e-6)
    np.testing.assert_allclose(aux["r"], np.tanh(X @ W))
    with pytest.raises(TypeError, match="returns_three is differentiated with has_aux=True"):
        autotrace.jvp(returns_three, (1.0,), (1.0,), has_aux=True)
