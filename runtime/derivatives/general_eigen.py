"""The derivatives of np.linalg.eig's eigenvectors, of a general (not symmetric) matrix.

a = V diag(w) V^-1. With M = V^-1 dA V and F_jk = 1 / (w_k - w_j) (0 on the diagonal), the
eigenvalues move by dw = diag(M) and the eigenvectors, before they are normalized, by
dV0 = V (F * M). NumPy (LAPACK's geev) scales each eigenvector to unit 2-norm with its
largest component real, so each column k also moves along itself, dV = dV0 + V diag(c):
Re(c_k) = -Re(v_k^H dV0_k) keeps the norm, Im(c_k) = -Im(dV0_jk) / V_jk, at the row j of the
largest component, keeps that component real. The adjoint is the transpose of that map for the
pairing Re(sum(g * t)) that complex gradients follow here (as JAX's do): the gradient gA =
V^-T (diag(gw) + F * (V^T gV0)) V^T, where gV0 is gV plus what the normalization sends back.

Every rule of eig and eigvals reads V^-1, which exists where a is diagonalizable. Where it is
not (a Jordan block [[1, 1], [0, 1]], or [[1, 2], [-0.5, 3]]), the eigenvalues have no
derivative (they move as the square root of a step), and LAPACK's V is singular or nearly so:
its columns for the tied eigenvalue equal up to rounding, or up to sqrt(eps) where rounding
split the eigenvalue into two about sqrt(eps) apart. V^-1 then gives finite wrong derivatives,
for a symmetric function of the eigenvalues too (sum(w ** 2) = trace(a @ a), whose gradient
2 a^T exists, got 2 I at the Jordan block), or ones of size 1 / sqrt(eps). The rules read V
through `diagonalizing`, which makes it NaN where its reciprocal condition number is at most
sqrt(eps) (there a change of a of the size of rounding moves the eigenvalues by as much as
they are apart), so the derivatives are NaN there, as PyTorch documents them at such matrices,
never a wrong number. A diagonalizable matrix with a repeated eigenvalue (the identity) keeps
its V: a symmetric function of the eigenvalues has its right gradient there (through eig too,
where no gradient reaches the eigenvectors); the eigenvectors have none.
"""
from __future__ import annotations

import numpy as np

from ..devices import array_module


def diagonalizing(vectors):
    """`vectors`, the eigenvectors np.linalg.eig found for a matrix, where they make a basis,
    and NaN where they are singular or ill-conditioned (their smallest singular value at most
    sqrt(eps) times their largest: the matrix is not diagonalizable, or is as far as its
    rounding tells), each matrix of a batch on its own."""
    xp = array_module(vectors)
    singular_values = xp.linalg.svd(vectors, compute_uv=False)
    tolerance = np.sqrt(np.finfo(vectors.dtype).eps)
    defective = singular_values[..., -1:] <= singular_values[..., :1] * tolerance
    return xp.where(xp.expand_dims(defective, -1), np.nan, vectors)


def _gaps(values):
    """F: 1 / (w_k - w_j) off the diagonal (inf where they are tied), 0 on it."""
    xp = array_module(values)
    differences = xp.expand_dims(values, -2) - xp.expand_dims(values, -1)
    tied = differences == 0  # (inf there, without the warning of a division by 0)
    off = ~xp.eye(np.shape(values)[-1], dtype=bool)
    return xp.where(off, xp.where(tied, np.inf, 1.0 / xp.where(tied, 1.0, differences)), 0.0)


def _largest_rows(vectors):
    """The row of each eigenvector's largest component (as NumPy left it real), keepdims."""
    xp = array_module(vectors)
    return xp.expand_dims(xp.argmax(xp.abs(vectors), axis=-2), -2)


def eig_vectors_tangent(t, values, vectors):
    """The tangent of np.linalg.eig(a)[1] where `a` has the tangent `t`."""
    xp = array_module(vectors)
    middle = xp.linalg.solve(vectors, xp.matmul(t, vectors))
    moved = xp.matmul(vectors, _gaps(values) * middle)
    along = xp.sum(xp.conj(vectors) * moved, axis=-2, keepdims=True)
    rows = _largest_rows(vectors)
    largest = xp.take_along_axis(vectors, rows, axis=-2)
    turn = xp.imag(xp.take_along_axis(moved, rows, axis=-2)) / xp.real(largest)
    if not np.iscomplexobj(vectors):  # real eigenvectors: unit norm alone
        return moved - vectors * along
    return moved - vectors * (xp.real(along) + 1j * turn)


def eig_adjoint(g_values, g_vectors, values, vectors):
    """The gradient of the matrix whose np.linalg.eig is (values, vectors), from the gradients
    of both (complex where they are: the rule takes the real part for a real matrix)."""
    xp = array_module(vectors)
    own = xp.sum(g_vectors * vectors, axis=-2, keepdims=True)  # (g_vectors^T V)_kk
    back = g_vectors - xp.real(own) * xp.conj(vectors)
    if np.iscomplexobj(vectors):
        rows = _largest_rows(vectors)
        largest = xp.real(xp.take_along_axis(vectors, rows, axis=-2))
        at_rows = xp.arange(np.shape(vectors)[-2]).reshape(-1, 1) == rows
        back = back - 1j * xp.where(at_rows, xp.imag(own) / largest, 0.0)
    vectors_t = xp.swapaxes(vectors, -1, -2)
    coupling = xp.matmul(vectors_t, back)
    # (0 where no gradient couples two eigenvectors, whose eigenvalues may be tied: the
    # eigenvalues' gradient alone is finite at a repeated one)
    middle = xp.where(coupling == 0, 0.0, _gaps(values)) * coupling
    middle = middle + xp.expand_dims(g_values, -1) * xp.eye(np.shape(values)[-1],
                                                           dtype=middle.dtype)
    return xp.linalg.solve(vectors_t, xp.matmul(middle, vectors_t))


# Their own derivatives (np.linalg.eig's eigenvectors to the second order) have no rule.
_SECOND_ORDER = ("the second derivatives of np.linalg.eig's eigenvectors have no rule: "
                 "differentiate the eigenvalues (np.linalg.eigvals) twice, or the eigenvectors "
                 "once")
eig_vectors_tangent.__autotrace_no_rule_hint__ = _SECOND_ORDER
eig_adjoint.__autotrace_no_rule_hint__ = _SECOND_ORDER
