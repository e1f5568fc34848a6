"""A gradient has its argument's dtype, and a tangent its output's, as in JAX: a float32 (or
float16, or complex64) argument of a function that computes in float64 gets a float32 gradient
of the right value, eagerly and traced; Jacobians keep the dtype they are made of."""
import numpy as np
import pytest

import autotrace as at


def promoting(x):
    return np.sum(x * np.float64(2.0) * x)  # computes in float64 whatever x is


def narrowing(x):
    return np.sum(x.astype(np.float32) * 3.0)  # computes in float32 whatever x is


def expected_gradient(f, x):
    return 4.0 * x.astype(np.float64) if f is promoting else np.full(x.shape, 3.0)


GRADIENTS = {
    "grad": lambda f: at.grad(f),
    "value_and_grad": lambda f: lambda x: at.value_and_grad(f)(x)[1],
    "vjp": lambda f: lambda x: at.vjp(f, x)[1](np.float64(1.0))[0],
    "traced grad": lambda f: at.function(at.grad(f)),
    "traced value_and_grad": lambda f: lambda x: at.function(at.value_and_grad(f))(x)[1],
    "grad of traced": lambda f: at.grad(at.function(f)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("f", [promoting, narrowing], ids=["promoting", "narrowing"])
@pytest.mark.parametrize("gradient", GRADIENTS.values(), ids=GRADIENTS.keys())
def test_the_gradient_has_the_dtype_of_its_argument(gradient, f, dtype):
    x = np.array([0.5, 1.5, -2.0], dtype)
    result = gradient(f)(x)
    assert isinstance(result, np.ndarray) and result.dtype == dtype and result.shape == x.shape
    tolerance = {np.float16: 1e-2, np.float32: 1e-6, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(result, expected_gradient(f, x), rtol=tolerance)


def test_a_numpy_scalar_argument_gets_a_scalar_of_its_dtype():
    gradient = at.grad(lambda x: (x * np.float64(2.0)) ** 2)(np.float32(1.5))
    assert np.shape(gradient) == () and gradient.dtype == np.float32 and gradient == 12.0


def test_containers_get_each_item_in_its_own_dtype():
    def f(params):
        return np.sum(params["w"] * np.float64(2.0)) + np.sum(params["b"][0] ** 2)
    params = {"w": np.ones(2, np.float32), "b": (np.ones(3, np.float16),)}
    for gradient in (at.grad(f)(params), at.function(at.grad(f))(params)):
        assert gradient["w"].dtype == np.float32 and gradient["b"][0].dtype == np.float16
        np.testing.assert_array_equal(gradient["w"], [2.0, 2.0])
        np.testing.assert_array_equal(gradient["b"][0], [2.0, 2.0, 2.0])


def test_two_arguments_of_two_dtypes():
    dx, dy = at.grad(lambda x, y: np.sum(x * y), wrt=(0, 1))(
        np.full(2, 3.0, np.float32), np.full(2, 5.0))
    assert (dx.dtype, dy.dtype) == (np.float32, np.float64)
    np.testing.assert_array_equal(dx, [5.0, 5.0])
    np.testing.assert_array_equal(dy, [3.0, 3.0])


def test_a_complex64_argument_gets_a_complex64_gradient():
    x = np.array([1.0 + 2.0j, 3.0], np.complex64)
    gradient = at.grad(lambda x: np.sum(x * x * np.complex128(1.0)))(x)
    assert gradient.dtype == np.complex64
    np.testing.assert_allclose(gradient, 2.0 * x, rtol=1e-6)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_the_output_tangent_has_the_dtype_of_the_output(traced):
    x32 = np.array([1.0, 2.0], np.float32)
    forward = (lambda f: at.function(at.forward(f))) if traced else at.forward
    value, tangent = forward(lambda x: x * np.float64(2.0))(x32)          # float64 out
    assert value.dtype == tangent.dtype == np.float64
    np.testing.assert_array_equal(tangent, [2.0, 2.0])
    value, tangent = forward(lambda x: x.astype(np.float32) * 3.0)(x32.astype(np.float64))
    assert value.dtype == tangent.dtype == np.float32
    # A tangent given in another dtype than its argument's is taken in the argument's.
    value, tangent = forward(lambda x: x * 2.0)(x32, tangent=np.array([1.0, -1.0]))
    assert value.dtype == tangent.dtype == np.float32
    np.testing.assert_array_equal(tangent, [2.0, -2.0])
    value, tangent = at.jvp(lambda x: x * 2.0, (x32,), (np.array([1.0, 0.5]),))
    assert tangent.dtype == np.float32 and tangent.tolist() == [2.0, 1.0]


def test_jacobians_keep_the_dtype_of_their_gradients_or_tangents():
    """jacrev: the argument's dtype; jacfwd: the output's (as jax.jacrev and jax.jacfwd)."""
    x32 = np.array([1.0, 2.0], np.float32)
    reverse = at.jacobian(lambda x: x * np.float64(2.0))(x32)
    forward = at.jacobian(lambda x: x * np.float64(2.0), mode="forward")(x32)
    assert (reverse.dtype, forward.dtype) == (np.float32, np.float64)
    np.testing.assert_array_equal(reverse, 2.0 * np.eye(2))
    np.testing.assert_array_equal(forward, 2.0 * np.eye(2))
    assert at.jacobian(lambda x: x ** 2)(3.0) == 6.0  # a Python float: float64


# --- float32 programs compute their derivatives in float32 ---------------------------------
# tests/test_rule_table_dtypes.py checks every rule's dtypes; these check the values of the
# rules that weigh gradients by masks or scale them by constants, in float32, against the
# float64 derivative (which tests/test_rules.py checks against finite differences).

TIES = np.array([[1.0, 3.0, 3.0], [2.0, -1.0, 2.0], [0.5, 0.5, 0.5]], np.float32)
BOUNDS = np.array([-2.0, -0.5, 0.0, 0.5, 1.5, 0.25], np.float32)  # outside, on, inside
POINTS = np.array([0.3, 1.0, 1.7, 2.5], np.float32)

FLOAT32_CASES = {  # name: (function, argument, the gradient exactly, or None)
    "max ties": (lambda x: np.sum(np.max(x, axis=1) * np.array([1.0, 2.0, 3.0], np.float32)),
                 TIES, [[0, 0.5, 0.5], [1, 0, 1], [1, 1, 1]]),
    "amin ties": (lambda x: np.amin(x), TIES[2], [1 / 3, 1 / 3, 1 / 3]),
    "maximum ties": (lambda x: np.sum(np.maximum(x, 0.5)), BOUNDS, [0, 0, 0, 0.5, 1, 0]),
    "fmin": (lambda x: np.sum(np.fmin(x, x[::-1])), POINTS, [2, 2, 0, 0]),
    "clip": (lambda x: np.sum(np.clip(x, -0.5, 0.5) * 3.0), BOUNDS, [0, 3, 3, 3, 0, 3]),
    "exp2": (lambda x: np.sum(np.exp2(x)), POINTS, None),
    "log2": (lambda x: np.sum(np.log2(x)), POINTS, None),
    "log10": (lambda x: np.sum(np.log10(x)), POINTS, None),
    "power of a float": (lambda x: np.sum(np.power(2.0, x)), POINTS, None),
    "einsum trace": (lambda a: np.einsum("ii->", a), TIES, np.eye(3)),
    "einsum diagonal": (lambda a: np.sum(np.einsum("ii->i", a) * POINTS[:3]), TIES,
                        np.diag(POINTS[:3])),
}


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("name", FLOAT32_CASES)
def test_float32_gradients_of_masks_and_constants(name, traced):
    f, x, exact = FLOAT32_CASES[name]
    gradient = at.function(at.grad(f)) if traced else at.grad(f)
    result, reference = gradient(x), at.grad(f)(x.astype(np.float64))
    assert result.dtype == np.float32
    if exact is not None:
        np.testing.assert_array_equal(result, np.asarray(exact, np.float32))
    np.testing.assert_allclose(result, reference, rtol=1e-6)
    if traced:
        graph = str(gradient.graph(x, optimized=False))
        assert "f64" not in graph, graph
    tangent = np.linspace(-1.0, 1.0, x.size).reshape(x.shape).astype(np.float32)
    forward = at.forward(f)
    _, result = (at.function(forward) if traced else forward)(x, tangent=tangent)
    _, reference = forward(x.astype(np.float64), tangent=tangent.astype(np.float64))
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, reference, rtol=1e-6, atol=1e-7)


def mean_of_rows(x):
    return np.sum(np.mean(x, axis=0) ** 2)


def variance(x):
    return np.sum(np.var(x, axis=0, ddof=1))


def deviation(x):
    return np.sum(np.std(x, axis=0))


@pytest.mark.parametrize("f", [np.mean, mean_of_rows, variance, deviation])
def test_sizes_known_when_the_graph_runs_divide_in_float32(f):
    """A size known only at run time (None in a Spec) is a traced number: in the gradient's
    dtype, as NumPy's Python int is weak, not a traced int64 that makes the division float64."""
    traced = at.function(at.grad(f), input_signature=[at.Spec((None, 4), np.float32)])
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4) ** 1.5
    graph = str(traced.graph(x, optimized=False))
    assert "f64" not in graph, graph
    result = traced(x)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, at.grad(f)(x.astype(np.float64)), rtol=2e-6)


def through_an_integer_cast(x):
    return np.sum(np.sin(x.astype(int)) * x + x.astype(np.int32) ** 2)


@pytest.mark.parametrize("gradient", [at.grad, lambda f: at.function(at.grad(f)),
                                      lambda f: at.grad(at.function(f))],
                         ids=["grad", "traced_grad", "grad_of_traced"])
def test_an_integer_cast_passes_no_gradient(gradient):
    # sin's rule gave the integer array a gradient; astype's passed it on to x
    x = np.array([0.3, 1.7, 2.2])
    np.testing.assert_allclose(gradient(through_an_integer_cast)(x),
                               np.sin(x.astype(int)), rtol=1e-12)
