"""The derivatives of np.linalg.eig's eigenvectors, of a general (not symmetric) matrix.

a = V diag(w) V^-1. With M = V^-1 dA V and F_jk = 1 / (w_k - w_j) (0 on the diagonal), the
eigenvalues move by dw = diag(M) and the eigenvectors, before they are normalized, by
dV0 = V (F * M). NumPy (LAPACK's geev) scales each eigenvector to unit 2-norm with its
largest component real, so each column k also moves along itself, dV = dV0 + V diag(c):
Re(c_k) = -Re(v_k^H dV0_k) keeps the norm, Im(c_k) = -Im(dV0_jk) / V_jk, at the row j of the
largest component, keeps that component real. The adjoint is the transpose of that map for the
pairing Re(sum(g * t)) that complex gradients follow here (as JAX's do): the gradient gA =
V^-T (diag(gw) + F * (V^T gV0)) V^T, where gV0 is gV plus what the normalization sends back.
"""
from __future__ import annotations

import numpy as np

from ..devices import array_module


def _gaps(values):
    """F: 1 / (w_k - w_j) off the diagonal, 0 on it."""
    xp = array_module(values)
    differences = xp.expand_dims(values, -2) - xp.expand_dims(values, -1)
    n = np.shape(values)[-1]
    off = ~xp.eye(n, dtype=bool)
    return xp.where(off, 1.0 / xp.where(off, differences, 1.0), 0.0)


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
    middle = _gaps(values) * xp.matmul(vectors_t, back)
    middle = middle + xp.expand_dims(g_values, -1) * xp.eye(np.shape(values)[-1],
                                                           dtype=middle.dtype)
    return xp.linalg.solve(vectors_t, xp.matmul(middle, vectors_t))


# Their own derivatives (np.linalg.eig's eigenvectors to the second order) have no rule.
_SECOND_ORDER = ("the second derivatives of np.linalg.eig's eigenvectors have no rule: "
                 "differentiate the eigenvalues (np.linalg.eigvals) twice, or the eigenvectors "
                 "once")
eig_vectors_tangent.__autotrace_no_rule_hint__ = _SECOND_ORDER
eig_adjoint.__autotrace_no_rule_hint__ = _SECOND_ORDER
