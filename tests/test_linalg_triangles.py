"""np.linalg.cholesky, eigh and eigvalsh read one triangle of their argument (the lower, or the
upper with UPLO="U" and cholesky's upper=True): their derivatives are those of what NumPy runs.

A kernel matrix filled on the read triangle alone is valid NumPy code, and the same kernel
filled on both triangles has the same derivative. tests/rule_table.py checks the rules along
any direction, to second order; here whole functions go through every mode (UPLO="U" of
eigh and eigvalsh here alone: the array API's eigh reads the lower triangle of the transpose,
and its gradient differs from NumPy's by rounding, beyond tests/test_array_api.py's 1e-12).
"""
import numpy as np
import pytest

import autotrace
from tests.numeric import check_every_mode

POINTS = np.array([0.0, 0.4, 1.1, 1.5])


def kernel_filled(x, lower=True):
    """A squared-exponential kernel of the points x, filled on one triangle (the other zero)."""
    n = len(x)
    k = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            value = np.exp(-0.5 * (x[i] - x[j]) ** 2) + (0.1 if i == j else 0.0)
            if lower:
                k[i, j] = value
            else:
                k[j, i] = value
    return k


def kernel_full(x):
    return np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + 0.1 * np.eye(len(x))


def logdet_lower_filled(x):
    return 2.0 * np.sum(np.log(np.diag(np.linalg.cholesky(kernel_filled(x)))))


def logdet_full(x):
    return 2.0 * np.sum(np.log(np.diag(np.linalg.cholesky(kernel_full(x)))))


def logdet_upper_factor(x):
    factor = np.linalg.cholesky(kernel_filled(x, lower=False), upper=True)
    return 2.0 * np.sum(np.log(np.diag(factor))) + np.sum(factor * np.arange(16.0).reshape(4, 4))


def solve_with_factor(x):
    factor = np.linalg.cholesky(kernel_filled(x))
    return np.sum(np.linalg.solve(factor, np.sin(x)) ** 2)


def eigenvalues_lower_filled(x):
    return np.sum(np.linalg.eigvalsh(kernel_filled(x)) * np.arange(1.0, 5.0))


def eigenvalues_upper_filled(x):
    return np.sum(np.linalg.eigvalsh(kernel_filled(x, lower=False), UPLO="U") ** 2)


def eigh_upper_filled(x):
    w, v = np.linalg.eigh(kernel_filled(x, lower=False), UPLO="U")
    return np.sum(w * np.arange(1.0, 5.0)) + np.sum(v[0] ** 2 * w)


def eigh_lower_filled(x):
    w, v = np.linalg.eigh(kernel_filled(x))
    return np.sum(w ** 2) + np.sum((v * v) @ np.arange(4.0))


def eigh_full(x):
    w, v = np.linalg.eigh(kernel_full(x))
    return np.sum(w ** 2) + np.sum((v * v) @ np.arange(4.0))


@pytest.mark.parametrize("f", [logdet_lower_filled, logdet_full, logdet_upper_factor,
                               solve_with_factor, eigenvalues_lower_filled,
                               eigenvalues_upper_filled, eigh_upper_filled, eigh_lower_filled,
                               eigh_full], ids=lambda f: f.__name__)
def test_functions_of_the_triangle_read_in_every_mode(f):
    check_every_mode(f, POINTS.copy())


def test_one_triangle_and_both_give_the_same_derivative():
    np.testing.assert_allclose(autotrace.grad(logdet_lower_filled)(POINTS),
                               autotrace.grad(logdet_full)(POINTS), rtol=1e-10)
    np.testing.assert_allclose(autotrace.grad(eigh_lower_filled)(POINTS),
                               autotrace.grad(eigh_full)(POINTS), rtol=1e-10)


def test_the_gradient_lives_on_the_triangle_read():
    a = kernel_full(POINTS)
    weights = np.arange(16.0).reshape(4, 4)
    lower = autotrace.grad(lambda m: np.sum(np.linalg.cholesky(m) * weights))(a)
    upper = autotrace.grad(lambda m: np.sum(np.linalg.cholesky(m, upper=True) * weights))(a)
    assert np.all(np.triu(lower, 1) == 0.0) and np.any(np.tril(lower, -1) != 0.0)
    assert np.all(np.tril(upper, -1) == 0.0) and np.any(np.triu(upper, 1) != 0.0)
    values = autotrace.grad(lambda m: np.sum(np.linalg.eigvalsh(m, UPLO="u") ** 3))(a)
    assert np.all(np.tril(values, -1) == 0.0)


@pytest.mark.parametrize("function", [
    lambda a: np.sum(np.linalg.eigvalsh(a) ** 2 * np.arange(1.0, 4.0)),
    lambda a: np.sum(np.abs(np.linalg.eigh(a)[1]) ** 2 * np.linalg.eigh(a)[0]),
    lambda a: np.sum(np.linalg.cholesky(a))])
def test_a_complex_hermitian_matrix_is_refused(function):
    # (the rules take no conjugates: d/dRe a[1,1] gave 42.95-21.0j for 58.0, silently)
    rng = np.random.default_rng(0)
    b = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    hermitian = b @ b.conj().T + 3 * np.eye(3)
    for derivative in (lambda: autotrace.grad(function)(hermitian),
                       lambda: autotrace.forward(function)(hermitian, tangent=np.eye(3) + 0j)):
        with pytest.raises(TypeError, match=r"^the derivatives of np\.linalg\.cholesky, "
                                                      r"eigh and eigvalsh are those of a real "
                                                      r"symmetric matrix"):
            derivative()
