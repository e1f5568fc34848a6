"""np.linalg.eigvals and eig derivatives where the matrix is not diagonalizable: NaN, never a
finite wrong number. Their rules read V^-1; at a Jordan block LAPACK's V is singular to
working precision, and at [[1, 2], [-0.5, 3]] (the eigenvalue 2 twice, one eigenvector) nearly
so, and they gave 2 I for the gradient of sum(w ** 2) = trace(a @ a) at the Jordan block, where
2 a^T is right, and tangents of size 1 / sqrt(eps) at the other. A diagonalizable matrix keeps
its derivatives: the identity (a repeated eigenvalue) and a matrix near the Jordan block whose
eigenvalues are 2e-3 apart, against 2 a^T, through eigvals and eig."""
import warnings

import numpy as np
import pytest

import autotrace

JORDAN = np.array([[1.0, 1.0], [0.0, 1.0]])
DEFECTIVE = {
    "jordan": JORDAN,
    "nilpotent": np.array([[0.0, 1.0], [0.0, 0.0]]),
    "rounded": np.array([[1.0, 2.0], [-0.5, 3.0]]),
    "jordan-float32": JORDAN.astype(np.float32),
}
TANGENT = np.array([[0.3, -0.2], [0.7, 0.1]])


def squares_of_eigenvalues(a):
    return np.real(np.sum(np.linalg.eigvals(a) ** 2))


def squares_of_eig_values(a):
    w, v = np.linalg.eig(a + 0j)
    return np.real(np.sum(w ** 2) + 0.0 * np.sum(v))


def derivatives(a):
    """Each derivative of the eigenvalues at `a`, named by its mode."""
    batch = np.stack([a, a])
    yield "grad(eigvals)", autotrace.grad(squares_of_eigenvalues)(a)
    yield "grad(eig)", autotrace.grad(squares_of_eig_values)(a)
    yield "function(grad(eig))", autotrace.function(autotrace.grad(squares_of_eig_values))(a)
    yield "vmap(grad(eig))", autotrace.vmap(autotrace.grad(squares_of_eig_values))(batch)[1]
    yield "jvp(eigvals)", autotrace.jvp(np.linalg.eigvals, (a,), (TANGENT.astype(a.dtype),))[1]
    yield "jvp(eig)", autotrace.jvp(lambda m: np.linalg.eig(m)[0], (a,),
                                    (TANGENT.astype(a.dtype),))[1]


@pytest.mark.parametrize("a", DEFECTIVE.values(), ids=DEFECTIVE.keys())
def test_eigenvalue_derivatives_at_a_matrix_that_is_not_diagonalizable_are_nan(a):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (the NaN's own, and 1 / 0 gaps)
        for mode, derivative in derivatives(a):
            assert np.all(np.isnan(derivative)), (mode, derivative)
            if mode.startswith(("grad", "function", "vmap")):
                assert derivative.dtype == a.dtype, mode


@pytest.mark.parametrize("a", [np.eye(2), JORDAN + [[0.0, 0.0], [1e-6, 0.0]]],
                         ids=["identity", "near-jordan"])
def test_a_diagonalizable_matrix_keeps_its_eigenvalue_gradient(a):
    """Through eig too, whose eigenvectors get no gradient: its inverse gaps, infinite at the
    identity, multiply no coupling (they gave NaN there)."""
    np.testing.assert_allclose(autotrace.grad(squares_of_eigenvalues)(a), 2 * a.T, atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for gradient in (autotrace.grad(squares_of_eig_values),
                         autotrace.function(autotrace.grad(squares_of_eig_values))):
            np.testing.assert_allclose(gradient(a), 2 * a.T, atol=1e-8)
