"""Pieces of the rules of det and eigh that stay finite where the textbook forms divide by zero.

det's gradient is its cofactor matrix, det(a) inv(a)^T where a is invertible; the cofactors are
polynomials in a's entries, defined for every matrix, and at a singular one they are computed
from the singular value decomposition a = U diag(s) V^H: adj(a) = det(V^H) det(U) V adj(S) U^H,
where adj(S) is diagonal with entries prod_{j != i} s_j (no division; adj(XY) = adj(Y) adj(X),
and adj(U) = det(U) U^H of a unitary U).

eigh's eigenvector part multiplies V^T gV (or V^T dA V) by the inverse gaps 1 / (w_j - w_i),
infinite where two eigenvalues are equal: where the coupling it multiplies is exactly 0 (no
gradient reaches the eigenvectors, or a tangent that does not mix the tied ones) the product is
0, not 0 * inf = NaN.
"""
from __future__ import annotations

import numpy as np

from ..array_api import NumpyNames
from ..devices import array_module
from .real_only import is_complex


def cofactors(a):
    """The cofactor matrix of each matrix of `a` (..., n, n), adj(a)^T: det(a) inv(a)^T where
    every matrix is invertible, from the singular value decomposition otherwise (and always of
    traced values and other libraries' arrays, where which case holds is not known)."""
    if type(a) is np.ndarray:
        determinant = np.linalg.det(a)
        if np.all(determinant != 0):
            try:
                inverse = np.linalg.inv(a)
            except np.linalg.LinAlgError:
                inverse = None
            if inverse is not None and np.all(np.isfinite(inverse)):
                return determinant[..., None, None] * np.swapaxes(inverse, -1, -2)
    return _cofactors_from_svd(a)


def _cofactors_from_svd(a):
    xp = array_module(a)
    u, s, vh = xp.linalg.svd(a)
    signs = xp.linalg.det(u) * xp.linalg.det(vh)
    # adj(a)^T = det(U) det(V^H) (V adj(S) U^H)^T, and (V adj(S) U^H)^T = conj(U) adj(S) V^T
    # with V^T = conj(V^H) (real a and complex a alike)
    adjugate_t = (_conj(xp, u) * _products_but_one(s)[..., None, :]) @ _conj(xp, vh)
    return signs[..., None, None] * adjugate_t


def cofactors_jvp(a, t):
    """The tangent of cofactors(a) along t, det's second derivative, exact at a singular a too:
    with a = U S V^H and M = U^H t V, d adj(S) is diag(P m) - P * M, m = diag(M) and
    P_ij = prod_{k != i, j} s_k off the diagonal, 0 on it. It is its own transpose (det's
    Hessian is symmetric), so the adjoint of cofactors calls it too."""
    xp = array_module(a)
    u, s, vh = xp.linalg.svd(a)
    pairs = _products_but_two(s)
    middle = _conj(xp, xp.swapaxes(u, -1, -2)) @ t @ _conj(xp, xp.swapaxes(vh, -1, -2))
    eye = xp.eye(s.shape[-1], dtype=bool)
    diagonal = (pairs @ xp.sum(xp.where(eye, middle, 0), axis=-1)[..., None])[..., 0]
    adjugate_tangent_t = xp.where(eye, diagonal[..., None, :], 0) - pairs * xp.swapaxes(
        middle, -1, -2)
    signs = xp.linalg.det(u) * xp.linalg.det(vh)
    return signs[..., None, None] * (_conj(xp, u) @ adjugate_tangent_t @ _conj(xp, vh))


def cofactors_jvp_cross(t, s, a):
    """cofactors_jvp(a, t)'s derivative along s, a tangent of a (det's third derivative), of
    an invertible a: with B = a^-1 and X = tr(Bt) tr(Bs) - tr(BtBs), the matrix G with
    <G, L> = D^3 det(a)[t, s, L] = det(a) (X tr(BL) - tr(Bs) tr(BtBL) - tr(Bt) tr(BsBL)
    + tr(BtBsBL) + tr(BsBtBL)). Zeros where s is (a tangent of t alone). No rule of its own."""
    if type(s) is np.ndarray and not np.any(s):
        return np.zeros(np.broadcast_shapes(np.shape(a), np.shape(t)),
                        np.result_type(a, t, s))
    if type(a) is np.ndarray and np.any(np.linalg.det(a) == 0):
        raise NotImplementedError(
            "autotrace differentiates np.linalg.det of a singular matrix twice, not three "
            "times: its third derivative there has no rule")
    xp = array_module(a)
    inverse = xp.linalg.inv(a)
    bt, bs = inverse @ t, inverse @ s
    eye = xp.eye(a.shape[-1], dtype=bool)

    def trace(m):
        return xp.sum(xp.where(eye, m, 0), axis=(-2, -1))[..., None, None]

    both = trace(bt) * trace(bs) - trace(bt @ bs)
    mixed = (both * inverse - trace(bs) * (bt @ inverse) - trace(bt) * (bs @ inverse)
             + bt @ bs @ inverse + bs @ bt @ inverse)
    return xp.linalg.det(a)[..., None, None] * xp.swapaxes(mixed, -1, -2)


def _conj(xp, m):
    return xp.conj(m) if is_complex(m) else m  # (the array API's conj takes complex values)


def _products_but_one(s):
    """prod_{k != i} s_k for each i of the last axis (no division: exact where some s_k are
    0): the products before i times those after."""
    xp = array_module(s)
    if isinstance(xp, NumpyNames):  # another library's arrays: no cumprod; n^2 products
        return xp.prod(xp.where(xp.eye(s.shape[-1], dtype=bool), 1, s[..., None, :]), axis=-1)
    before, after = _products_around(xp, s)
    return before * after


def _products_around(xp, s):
    ones = xp.ones_like(s[..., :1])
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumprod(xp.flip(xp.concatenate([s[..., 1:], ones], axis=-1), axis=-1),
                               axis=-1), axis=-1)
    return before, after


def _products_but_two(s):
    """P_ij = prod_{k != i, j} s_k for i != j, 0 for i == j, in O(n^2) products: for i < j,
    the products before i, strictly between i and j, and after j."""
    xp = array_module(s)
    n = s.shape[-1]
    eye = xp.eye(n, dtype=bool)
    if isinstance(xp, NumpyNames):  # no cumprod: n^3 products
        left_out = eye[:, None, :] | eye[None, :, :]  # k == i or k == j
        pairs = xp.prod(xp.where(left_out, 1, s[..., None, None, :]), axis=-1)
        return xp.where(eye, 0, pairs)
    before, after = _products_around(xp, s)
    later = xp.triu(xp.ones((n, n), dtype=bool), k=1)  # k > i, in row i
    # between[i, j] = prod_{i < k < j} s_k: the running product of row i's later entries,
    # shifted one place on
    running = xp.cumprod(xp.where(later, s[..., None, :], 1), axis=-1)
    between = xp.concatenate([xp.ones_like(running[..., :1]), running[..., :-1]], axis=-1)
    upper = xp.where(later, before[..., :, None] * between * after[..., None, :], 0)
    return upper + xp.swapaxes(upper, -1, -2)


def gap_weighted(gaps, coupling):
    """gaps * coupling, 0 where the coupling is 0 (an infinite inverse gap of tied eigenvalues
    times no coupling contributes nothing)."""
    xp = array_module(coupling) if hasattr(coupling, "dtype") else array_module(gaps)
    uncoupled = coupling == 0
    # (1 in place of the zeros: inf * 0 would warn of an invalid value, then be dropped)
    return xp.where(uncoupled, 0, gaps * xp.where(uncoupled, 1, coupling))
