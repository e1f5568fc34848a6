"""np.convolve, np.correlate, np.trapezoid, np.polyval and np.vander in user functions, in every
mode.

tests/rule_table_signal.py checks their rules by themselves, to second order; here whole
functions go through grad, value_and_grad, vjp, the traced gradient, forward mode and the
gradient of a directional derivative (check_every_mode), and through vmap(grad), the Hessian
too for the polynomials. Traced, np.convolve and np.correlate are one op that calls NumPy's
function, the others NumPy's own steps: their results are NumPy's to the bit.
"""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference, check_every_mode

RNG = np.random.default_rng(11)
LONG = RNG.standard_normal(7)
SHORT = RNG.standard_normal(4)
ODD = RNG.standard_normal(3)
MODES = ["full", "same", "valid"]


# --- np.convolve and np.correlate -------------------------------------------------------------

@pytest.mark.parametrize("function", [np.convolve, np.correlate])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("other", [SHORT, ODD, LONG, RNG.standard_normal(9)],
                         ids=["shorter-even", "shorter-odd", "equal", "longer"])
def test_convolve_and_correlate_every_mode(function, mode, other):
    def in_first(a):
        return np.sum(np.sin(function(a, other, mode)) * np.arange(1.0, 10.0)[:1] + function(
            a, other, mode) ** 2)

    def in_second(v):
        return np.sum(np.cos(function(LONG, v, mode=mode)))
    check_every_mode(in_first, LONG)
    check_every_mode(in_second, other)


@pytest.mark.parametrize("function", [np.convolve, np.correlate])
def test_convolve_and_correlate_of_one_argument_twice(function):
    def f(a):
        return np.sum(function(a, a[::-1] * 2.0, "same") ** 2)
    check_every_mode(f, SHORT)


def test_convolve_of_a_number_and_a_list():
    def f(x):
        return np.sum(np.convolve(x[0], [1.0, 2.0, 3.0]) ** 2 + np.convolve([1.0, 3.0], x))
    check_every_mode(f, np.array([0.7, -1.3]))


def list_of_items_convolved(x):
    return np.sum(np.convolve([x[0], x[1]], x) ** 2) + np.sum(
        np.correlate(x, [x[2], 2.0, x[0]], "same") ** 3)


def test_convolve_and_correlate_of_a_list_of_items_every_mode():
    # The rules read np.shape of the list, which converted code reads of the array NumPy makes
    # of it (the traced gradient stacks the items).
    x = np.array([0.3, -0.7, 1.1])
    check_every_mode(list_of_items_convolved, x)
    batch = RNG.standard_normal((4, 3))
    gradients = autotrace.vmap(autotrace.grad(list_of_items_convolved))(batch)
    for k, row in enumerate(batch):
        np.testing.assert_allclose(gradients[k], central_difference(list_of_items_convolved, row),
                                   rtol=1e-6, atol=1e-8)
    expected = np.stack([central_difference(
        lambda y: autotrace.grad(list_of_items_convolved)(y)[i], x) for i in range(3)])
    np.testing.assert_allclose(autotrace.hessian(list_of_items_convolved)(x), expected,
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(autotrace.function(autotrace.hessian(list_of_items_convolved))(x),
                               expected, rtol=1e-6, atol=1e-6)


def test_traced_shape_of_a_list_of_traced_items():
    def f(x):
        return np.zeros(np.shape([[x[0], 1.0], [x[1], x[2]]])) + x[0]
    np.testing.assert_array_equal(autotrace.function(f)(np.array([2.0, 3.0, 4.0])),
                                  np.full((2, 2), 2.0))


@pytest.mark.parametrize("function", [np.convolve, np.correlate])
@pytest.mark.parametrize("mode", MODES)
def test_convolve_and_correlate_vmap_of_grad(function, mode):
    def f(a, v):
        return np.sum(np.tanh(function(a, v, mode)))
    batch = RNG.standard_normal((3, 5))
    gradient = autotrace.vmap(autotrace.grad(f, wrt=(0, 1)), in_axes=(0, None))(batch, SHORT)
    for k, a in enumerate(batch):
        np.testing.assert_allclose(gradient[0][k], central_difference(lambda x: f(x, SHORT), a),
                                   rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gradient[1][k], central_difference(lambda x: f(a, x), SHORT),
                                   rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("function", [np.convolve, np.correlate])
@pytest.mark.parametrize("mode", MODES + [0, 1, 2])
@pytest.mark.parametrize("sizes", [(7, 4), (4, 7), (3, 6), (5, 5), (1, 3)])
def test_traced_convolve_and_correlate_are_numpys_to_the_bit(function, mode, sizes):
    a, v = RNG.standard_normal(sizes[0]), RNG.standard_normal(sizes[1])
    traced = autotrace.function(lambda a, v: function(a, v, mode))
    np.testing.assert_array_equal(traced(a, v), function(a, v, mode))
    c = a * (1.0 + 0.5j)
    np.testing.assert_array_equal(traced(c, v * 1j), function(c, v * 1j, mode))


def test_convolve_of_complex_values_is_holomorphic():
    a, v = LONG * (1.0 + 0.3j), SHORT * (0.5 - 1.0j)
    g = RNG.standard_normal(7 + 4 - 1) * (1.0 - 0.2j)
    _, vjp_fn = autotrace.vjp(lambda a, v: np.convolve(a, v), a, v)
    gradient_a, gradient_v = vjp_fn(g)
    # <g, convolve(a + t da, v)> moves by t <g, convolve(da, v)>, no conjugates.
    da, dv = RNG.standard_normal(7) * 1j, RNG.standard_normal(4)
    assert np.sum(gradient_a * da) == pytest.approx(np.sum(g * np.convolve(da, v)))
    assert np.sum(gradient_v * dv) == pytest.approx(np.sum(g * np.convolve(a, dv)))


def test_correlate_of_complex_v_is_refused_in_reverse_mode():
    def f(v):
        return np.sum(np.correlate(LONG, v, "same"))
    with pytest.raises(NotImplementedError, match="numpy.correlate of complex values: it "
                       "correlates with the conjugate of v"):
        autotrace.grad(f)(SHORT * (1.0 + 1.0j))


def test_correlate_of_complex_v_in_forward_mode():
    v, dv = SHORT * (1.0 + 1.0j), RNG.standard_normal(4) * (0.3 - 1.0j)
    _, tangent = autotrace.jvp(lambda v: np.correlate(LONG, v, "full"), (v,), (dv,))
    np.testing.assert_allclose(tangent, np.correlate(LONG, dv, "full"))


def test_convolve_mode_must_be_known():
    with pytest.raises(ValueError, match="mode must be one of 'valid', 'same', or 'full'"):
        autotrace.grad(lambda a: np.sum(np.convolve(a, SHORT, "wide")))(LONG)


# --- np.trapezoid -----------------------------------------------------------------------------

SAMPLES = RNG.standard_normal((3, 5))
POINTS = np.sort(RNG.standard_normal(5))


def test_trapezoid_every_mode_in_the_samples():
    check_every_mode(lambda y: np.sum(np.sin(np.trapezoid(y, POINTS))), SAMPLES)
    check_every_mode(lambda y: np.sum(np.trapezoid(y ** 2, axis=0)), SAMPLES)


def test_trapezoid_every_mode_in_the_points():
    check_every_mode(lambda x: np.sum(np.cos(np.trapezoid(SAMPLES * x, x))), POINTS)
    check_every_mode(lambda x: np.sum(np.trapezoid(SAMPLES, x, axis=0) ** 2), SAMPLES + 2.0)


def test_trapezoid_every_mode_in_the_spacing():
    check_every_mode(lambda dx: np.sum(np.trapezoid(SAMPLES, dx=dx) ** 2), np.full((3, 1), 0.4))
    check_every_mode(lambda dx: np.trapezoid(SAMPLES[0] ** 2, dx=dx[0]) ** 2, np.array([0.4]))


def test_trapezoid_vmap_of_grad():
    def f(y, x):
        return np.tanh(np.trapezoid(y, x))
    batch = RNG.standard_normal((4, 5))
    gradient = autotrace.vmap(autotrace.grad(f, wrt=(0, 1)), in_axes=(0, None))(batch, POINTS)
    for k, y in enumerate(batch):
        np.testing.assert_allclose(gradient[0][k], central_difference(lambda v: f(v, POINTS), y),
                                   rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gradient[1][k], central_difference(lambda v: f(y, v), POINTS),
                                   rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("args, kwargs", [
    ((SAMPLES,), {}), ((SAMPLES, POINTS), {}), ((SAMPLES,), dict(dx=0.3)),
    ((SAMPLES, SAMPLES + 1.0), dict(axis=0)), ((SAMPLES.T, POINTS), dict(axis=0)),
    ((SAMPLES[0], RNG.standard_normal((2, 5))), {})])
def test_traced_trapezoid_is_numpys_to_the_bit(args, kwargs):
    traced = autotrace.function(lambda *args: np.trapezoid(*args, **kwargs))
    np.testing.assert_array_equal(traced(*args), np.trapezoid(*args, **kwargs))


# --- np.polyval and np.vander -----------------------------------------------------------------

COEFFICIENTS = RNG.standard_normal(4)
AT = np.array([0.0, 0.8, -1.3, 2.1])  # 0 among them: p's gradient there is exact


def second_derivatives(f, x):
    """f's Hessian by central differences of its gradient."""
    return np.stack([central_difference(lambda y: autotrace.grad(f)(y).flat[i], x)
                     for i in range(x.size)]).reshape(x.shape + x.shape)


def check_hessian(f, x):
    expected = second_derivatives(f, x)
    np.testing.assert_allclose(autotrace.hessian(f)(x), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(autotrace.function(autotrace.hessian(f))(x), expected,
                               rtol=1e-5, atol=1e-6)


def polynomial_in_the_coefficients(p):
    return np.sum(np.sin(np.polyval(p, AT)))


def polynomial_in_the_points(x):
    return np.sum(np.cos(np.polyval(COEFFICIENTS, x)))


def polynomial_of_a_list(x):
    return np.sum(np.polyval([x[0], 2.0, x[1]], x) ** 2) + np.sum(
        np.polyval(x[1:], [x[2], x[3], 0.5]) ** 2)


def polynomial_of_rows(p):
    return np.sum(np.tanh(np.polyval(p, AT[:, None])))


@pytest.mark.parametrize("f, x", [
    (polynomial_in_the_coefficients, COEFFICIENTS), (polynomial_in_the_points, AT),
    (polynomial_of_a_list, AT), (polynomial_of_rows, RNG.standard_normal((3, 2))),
    (lambda x: np.polyval(x, x[1]) ** 2, COEFFICIENTS)],
    ids=["coefficients", "points", "list", "rows", "number"])
def test_polyval_every_mode(f, x):
    check_every_mode(f, x)
    check_hessian(f, x)


def test_polyval_vmap_of_grad():
    def f(p, x):
        return np.sum(np.sin(np.polyval(p, x)))
    batch = RNG.standard_normal((3, 4))
    gradient = autotrace.vmap(autotrace.grad(f, wrt=(0, 1)), in_axes=(0, None))(batch, AT)
    for k, p in enumerate(batch):
        np.testing.assert_allclose(gradient[0][k], central_difference(lambda v: f(v, AT), p),
                                   rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gradient[1][k], central_difference(lambda v: f(p, v), AT),
                                   rtol=1e-6, atol=1e-8)


def test_polyval_gradient_by_hand():
    # d/dp of p0 x^2 + p1 x + p2 is (x^2, x, 1); d/dx is 2 p0 x + p1.
    p, x = np.array([1.5, -2.0, 0.5]), 0.0
    np.testing.assert_array_equal(autotrace.grad(np.polyval, wrt=(0, 1))(p, x)[0],
                                  [0.0, 0.0, 1.0])
    assert autotrace.grad(np.polyval, wrt=1)(p, 3.0) == 2 * 1.5 * 3.0 - 2.0


@pytest.mark.parametrize("args", [
    (COEFFICIENTS, AT), (COEFFICIENTS, 1.5), (RNG.standard_normal((3, 2)), AT[:, None]),
    (COEFFICIENTS.astype(np.float32), AT), (np.array([1, 2, 3]), np.array([1.5, np.inf])),
    (np.zeros(0), AT), ([1.0, 2.0], AT.astype(np.float32))])
def test_traced_polyval_is_numpys_to_the_bit(args):
    with np.errstate(invalid="ignore"):
        traced, expected = autotrace.function(np.polyval)(*args), np.polyval(*args)
    assert np.asarray(traced).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(traced, expected)


@pytest.mark.parametrize("kwargs", [{}, dict(N=6), dict(N=2, increasing=True), dict(N=1)])
def test_vander_every_mode(kwargs):
    def f(x):
        return np.sum(np.cos(np.vander(x, **kwargs)))
    check_every_mode(f, AT)
    check_hessian(f, AT)


def test_vander_of_a_list_every_mode():
    def f(x):
        return np.sum(np.vander([x[0], x[1] * 2.0, 0.5], 4) ** 2)
    check_every_mode(f, AT)


def test_vander_vmap_of_grad():
    def f(x):
        return np.sum(np.sin(np.vander(x, 5, increasing=True)))
    batch = RNG.standard_normal((3, 4))
    gradient = autotrace.vmap(autotrace.grad(f))(batch)
    for k, x in enumerate(batch):
        np.testing.assert_allclose(gradient[k], central_difference(f, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("x", [AT, AT.astype(np.float32), AT.astype(np.float16), np.arange(4),
                               np.array([True, False]), AT + 0.5j])
@pytest.mark.parametrize("kwargs", [{}, dict(N=6), dict(N=0), dict(N=3, increasing=True)])
def test_traced_vander_is_numpys_to_the_bit(x, kwargs):
    traced = autotrace.function(lambda x: np.vander(x, **kwargs))(x)
    expected = np.vander(x, **kwargs)
    assert traced.dtype == expected.dtype
    np.testing.assert_array_equal(traced, expected)


def test_traced_vander_of_a_matrix_is_numpys_error():
    with pytest.raises(ValueError, match="x must be a one-dimensional array or sequence"):
        autotrace.function(np.vander)(np.ones((2, 2)))
