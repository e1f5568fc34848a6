"""Derivative rules at the points where their textbook forms divide by zero: the power rule
n * x ** (n - 1) where n == 0 and x == 0, det's gradient (its cofactors) at a singular matrix,
and eigh's eigenvector part where two eigenvalues are equal and the eigenvectors get no
gradient. Values by hand and against finite differences, in every mode."""
import numpy as np
import pytest

import autotrace
from autotrace.testing import check_grads


def every_mode(f, x):
    """The gradient of the scalar function f at x by grad, vjp, jvp (one tangent per
    coordinate), function(grad) and vmap(grad) (of two copies of x)."""
    x = np.asarray(x, dtype=float)
    by_jvp = np.array([autotrace.jvp(f, (x,), (np.eye(x.size)[i].reshape(x.shape),))[1]
                       for i in range(x.size)]).reshape(x.shape)
    return {
        "grad": autotrace.grad(f)(x),
        "vjp": autotrace.vjp(f, x)[1](1.0)[0],
        "jvp": by_jvp,
        "function(grad)": autotrace.function(autotrace.grad(f))(x),
        "vmap(grad)": autotrace.vmap(autotrace.grad(f))(np.stack([x, x]))[1],
    }


# The power rule where the exponent is 0.

def zeroth_power(x):
    return np.sum(x ** 0)


def zeroth_float_power(x):
    return np.sum(x ** 0.0 * x)


def zeroth_np_power(x):
    return np.sum(np.power(x, 0) * 5 + x)


def polynomial(x):
    c = np.array([1.0, 2.0, 3.0])
    return np.sum(sum(c[i] * x ** i for i in range(3)))


@pytest.mark.parametrize("f, expected", [
    (zeroth_power, [0.0, 0.0, 0.0]),
    (zeroth_float_power, [1.0, 1.0, 1.0]),
    (zeroth_np_power, [1.0, 1.0, 1.0]),
    (polynomial, [2.0, 8.0, -10.0]),
], ids=lambda value: getattr(value, "__name__", ""))
def test_a_zeroth_power_has_a_zero_slope_at_zero_in_every_mode(f, expected):
    for mode, gradient in every_mode(f, [0.0, 1.0, -2.0]).items():
        np.testing.assert_allclose(gradient, expected, err_msg=mode)


def test_second_derivatives_of_powers_at_zero():
    np.testing.assert_allclose(autotrace.hessian(polynomial)(np.array([0.0, 1.0])),
                               6.0 * np.eye(2))
    np.testing.assert_allclose(autotrace.hessian(zeroth_power)(np.array([0.0, 1.0])),
                               np.zeros((2, 2)))

    def square(x):
        return x ** 2

    def first(x):
        return x ** 1

    def cube(x):
        return x ** 3

    assert autotrace.hessian(square)(0.0) == 2.0
    assert autotrace.grad(autotrace.grad(square))(0.0) == 2.0
    assert autotrace.grad(first)(0.0) == 1.0
    assert autotrace.grad(autotrace.grad(first))(0.0) == 0.0
    assert autotrace.grad(autotrace.grad(autotrace.grad(cube)))(0.0) == 6.0


def test_a_zeroth_power_of_a_python_zero():
    # (the slope read 0 * 0.0 ** -1, ZeroDivisionError of Python floats)
    assert autotrace.grad(lambda x: x ** 0)(0.0) == 0.0
    assert autotrace.grad(lambda x: np.power(x, 0) * 5 + x)(0.0) == 1.0
    assert autotrace.function(autotrace.grad(lambda x: x ** 0 + x))(0.0) == 1.0


def power(x, n):
    return np.sum(x ** n)


def test_a_traced_zero_exponent():
    x = np.array([0.0, 1.0, 3.0, 0.0])
    n = np.array([0.0, 0.0, 2.0, 2.0])
    # d/dx = n x^(n-1), 0 where n == 0; d/dn = x^n log x, 0 where x == 0 (JAX's convention)
    expected = ([0.0, 0.0, 6.0, 0.0], [0.0, 0.0, 9.0 * np.log(3.0), 0.0])
    for gradients in (autotrace.grad(power, argnums=(0, 1))(x, n),
                      autotrace.function(autotrace.grad(power, argnums=(0, 1)))(x, n)):
        np.testing.assert_allclose(gradients[0], expected[0])
        np.testing.assert_allclose(gradients[1], expected[1])
    _, tangent = autotrace.jvp(power, (x, n), (np.ones(4), np.zeros(4)))
    assert tangent == 6.0
    assert autotrace.grad(power)(0.0, 0) == 0.0
    check_grads(power, (np.array([0.5, 1.5, 3.0]), np.array([0.0, 1.0, 2.5])), wrt=(0, 1),
                order=2, modes=("reverse", "forward"))


def test_the_mixed_second_derivative_of_a_power_away_from_zero():
    # d/dn (n x^(n-1)) = x^(n-1) (1 + n log x): 1/2 at x = 2, n = 0
    hessian = autotrace.hessian(lambda xn: xn[0] ** xn[1])(np.array([2.0, 0.0]))
    np.testing.assert_allclose(hessian, [[0.0, 0.5], [0.5, np.log(2.0) ** 2]])


def test_a_zero_exponent_keeps_the_dtype():
    x = np.array([0.0, 2.0], dtype=np.float32)
    gradient = autotrace.grad(power)(x, np.zeros(2, dtype=np.float32))
    assert gradient.dtype == np.float32
    np.testing.assert_array_equal(gradient, [0.0, 0.0])


def cube_and_zeroth(x):
    return np.sum(x ** 3 + x ** 0 + x ** -2)


def test_the_power_rule_reads_as_calculus_for_a_written_exponent():
    source = autotrace.source(autotrace.grad(cube_and_zeroth))
    assert "3 * x ** 2" in source
    assert "-2 * x ** (-3)" in source
    assert "* 0 * 1.0)" in source
    assert "slope_base" not in source
    source = autotrace.source(autotrace.grad(power))
    assert "n * slope_base(x, n) ** (n - 1)" in source


# det at a singular matrix: its gradient is the cofactor matrix.

def det_of_diagonal(x):
    return np.linalg.det(np.diag(x))


def test_det_of_a_singular_matrix_in_every_mode():
    for mode, gradient in every_mode(det_of_diagonal, [0.0, 2.0, 3.0]).items():
        np.testing.assert_allclose(gradient, [6.0, 0.0, 0.0], atol=1e-12, err_msg=mode)
    value, tangent = autotrace.jvp(det_of_diagonal, (np.array([0.0, 2.0, 3.0]),),
                                   (np.ones(3),))
    assert (value, tangent) == pytest.approx((0.0, 6.0))
    batched = autotrace.vmap(autotrace.grad(det_of_diagonal))(
        np.array([[0.0, 2.0, 3.0], [1.0, 3.0, 4.0]]))
    np.testing.assert_allclose(batched, [[6.0, 0.0, 0.0], [12.0, 4.0, 3.0]], atol=1e-12)


def test_det_of_singular_matrices_against_finite_differences():
    rng = np.random.default_rng(0)
    singular = rng.standard_normal((4, 3)) @ rng.standard_normal((3, 4))
    batch = np.stack([singular, np.zeros((4, 4)), singular + np.eye(4)])
    check_grads(np.linalg.det, (singular,), order=2, modes=("reverse", "forward"))
    check_grads(lambda a: np.linalg.det(a) * 2.0, (batch,), order=2,
                modes=("reverse", "forward"))
    # a rank-one 3x3 matrix: cofactors 0
    np.testing.assert_allclose(autotrace.grad(np.linalg.det)(np.ones((3, 3))), np.zeros((3, 3)),
                               atol=1e-12)


def test_det_hessian_at_a_singular_matrix():
    # det(diag(x)) = x0 x1 x2: d2/dxi dxj = the third coordinate
    hessian = autotrace.hessian(det_of_diagonal)(np.array([0.0, 2.0, 3.0]))
    np.testing.assert_allclose(hessian, [[0.0, 3.0, 2.0], [3.0, 0.0, 0.0], [2.0, 0.0, 0.0]],
                               atol=1e-12)
    # third derivatives, of an invertible matrix's det and of a singular one's
    # (tests/test_linalg_degenerate.py has more)
    check_grads(det_of_diagonal, (np.array([1.0, 2.0, 3.0]),), order=3)
    check_grads(det_of_diagonal, (np.array([0.0, 2.0, 3.0]),), order=3)


def test_slogdet_is_unchanged():
    a = np.array([[2.0, 1.0], [0.5, 3.0]])
    np.testing.assert_allclose(autotrace.grad(lambda a: np.linalg.slogdet(a)[1])(a),
                               np.linalg.inv(a).T)
    np.testing.assert_array_equal(
        autotrace.grad(lambda x: np.linalg.slogdet(np.diag(x) + 1.0)[0])(
            np.array([0.0, -1.0, 3.0])), [0.0, 0.0, 0.0])


# eigh where two eigenvalues are equal and the eigenvectors get no gradient.

def eigenvalue_sum(x):
    w, v = np.linalg.eigh(np.diag(x))
    return np.sum(w)


def test_eigh_eigenvalues_alone_at_tied_eigenvalues_in_every_mode():
    for mode, gradient in every_mode(eigenvalue_sum, [1.0, 1.0, 2.0]).items():
        np.testing.assert_allclose(gradient, [1.0, 1.0, 1.0], err_msg=mode)


def test_eigh_eigenvectors_that_a_tangent_does_not_mix():
    # a diagonal tangent of a diagonal matrix keeps its eigenvectors, tied eigenvalues or not
    x = np.array([1.0, 1.0, 2.0])
    _, (dw, dv) = autotrace.jvp(lambda x: np.linalg.eigh(np.diag(x)), (x,),
                                (np.array([0.5, 0.25, 1.0]),))
    v = np.linalg.eigh(np.diag(x))[1]
    np.testing.assert_allclose(dw, np.diag(v.T @ np.diag([0.5, 0.25, 1.0]) @ v))
    np.testing.assert_array_equal(dv, np.zeros((3, 3)))


def test_eigh_where_the_eigenvectors_are_used_is_unchanged():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 4))
    a = a + a.T

    def top_vector(a):
        w, v = np.linalg.eigh(a)
        return np.sum(w) + np.sum(v[:, -1] * np.sign(v[0, -1])) * 2.0

    check_grads(top_vector, (a,), order=1, modes=("reverse", "forward"))
