"""det's derivatives, as ops of their own: `cofactors` (its gradient), `cofactors_jvp` (its
second derivative) and `cofactors_jvp_cross` (its third), exact at singular matrices too. Their
rules are in transforms/rules/linalg.py and derivative_helpers.py.

det is a polynomial in a matrix's entries, so each of its derivatives is defined at every
matrix. The textbook forms go through the inverse (adj(a)^T = det(a) inv(a)^T) and lose every
digit near a singular matrix, so these are computed from the singular value decomposition
a = U diag(s) V^H: det(U S V^H + E) = det(U) det(V^H) det(S + U^H E V), and the derivatives of
det at the diagonal S are sums of products of all the s_k but one, two or three (no division).

A traced graph holds each as one op, not the NumPy calls that compute it: a derivative built
from the trace (of a vmap: jacfwd(jacrev(det))) then differentiates it by its rules, where
differentiating the singular value decomposition would divide by the gaps between singular
values (zero at the identity).
"""
from __future__ import annotations

import numpy as np

from ..abstract import AbstractArray, broadcast_shapes
from ..devices import array_module
from .registry import bind, define_runtime_function, device_of_inputs, is_traced, shape_of


def cofactors(a):
    """The cofactor matrix of each matrix of `a` (..., n, n), adj(a)^T: det(a) inv(a)^T where
    every matrix is invertible, from the singular value decomposition otherwise (and always of
    other libraries' arrays, where which case holds is not known)."""
    return bind("cofactors", a) if is_traced(a) else _computed_cofactors(a)


def cofactors_jvp(a, t):
    """The tangent of cofactors(a) along t, det's second derivative. It is its own transpose
    (det's Hessian is symmetric), so the adjoint of cofactors calls it too."""
    if is_traced(a) or is_traced(t):
        return bind("cofactors_jvp", a, t)
    return _computed_cofactors_jvp(a, t)


def cofactors_jvp_cross(t, s, a):
    """cofactors_jvp(a, t)'s derivative along s, a tangent of a: det's third derivative, the
    matrix G with <G, L> = D^3 det(a)[t, s, L] (symmetric in t, s and L)."""
    if is_traced(t) or is_traced(s) or is_traced(a):
        return bind("cofactors_jvp_cross", t, s, a)
    return _computed_cofactors_jvp_cross(t, s, a)


# What the ops compute: NumPy code alone, which autotrace.export writes into a module.

def _computed_cofactors(a):
    """cofactors(a), computed."""
    if type(a) is np.ndarray:
        determinant = np.linalg.det(a)
        if np.all(determinant != 0):
            try:
                inverse = np.linalg.inv(a)
            except np.linalg.LinAlgError:
                inverse = None
            if inverse is not None and np.all(np.isfinite(inverse)):
                return determinant[..., None, None] * np.swapaxes(inverse, -1, -2)
    xp = array_module(a)
    u, s, vh = xp.linalg.svd(a)
    # adj(a)^T = det(U) det(V^H) (V adj(S) U^H)^T, and (V adj(S) U^H)^T = conj(U) adj(S) V^T
    # with V^T = conj(V^H) (real a and complex a alike); adj(S) = diag(prod_{k != i} s_k)
    return _from_diagonal(xp, u, vh, _conj(xp, u) * _products_but_one(s)[..., None, :])


def _computed_cofactors_jvp(a, t):
    """cofactors_jvp(a, t), computed: with a = U S V^H and M = U^H t V, d adj(S)^T is
    diag(P m) - P * M^T, m = diag(M) and P_ij = prod_{k != i, j} s_k off the diagonal, 0 on
    it."""
    xp = array_module(a)
    u, s, vh = xp.linalg.svd(a)
    pairs = _products_but_two(s)
    middle = _rotated(xp, u, vh, t)
    diagonal = (pairs @ _diagonal(xp, middle)[..., None])[..., 0]
    eye = xp.eye(s.shape[-1], dtype=bool)
    tangent_t = xp.where(eye, diagonal[..., None, :], 0) - pairs * xp.swapaxes(middle, -1, -2)
    return _from_diagonal(xp, u, vh, _conj(xp, u) @ tangent_t)


def _computed_cofactors_jvp_cross(t, s, a):
    """cofactors_jvp_cross(t, s, a), computed: with a = U S V^H, X = U^H t V, Y = U^H s V and
    P_pqr = prod_{k != p, q, r} s_k (0 where two of p, q, r are equal), the derivative H of det
    at S has
        H_pq = sum_r P_pqr (X_qr Y_rp + Y_qr X_rp - X_qp Y_rr - Y_qp X_rr)     (p != q)
        H_pp = sum_ij P_pij (X_ii Y_jj - X_ij Y_ji).
    Zeros where s is (a tangent of t alone)."""
    if type(s) is np.ndarray and not np.any(s):
        return np.zeros(np.broadcast_shapes(np.shape(t), np.shape(s), np.shape(a)),
                        np.result_type(t, s, a))
    xp = array_module(a)
    u, values, vh = xp.linalg.svd(a)
    triples = _products_but_three(values)
    x, y = _rotated(xp, u, vh, t), _rotated(xp, u, vh, s)
    x_t, y_t = xp.swapaxes(x, -1, -2), xp.swapaxes(y, -1, -2)
    x_diagonal, y_diagonal = _diagonal(xp, x), _diagonal(xp, y)

    def over_r(m):  # sum_r P_pqr m_r
        return xp.sum(triples * m[..., None, None, :], axis=-1)
    crossed = xp.sum(triples * (x[..., None, :, :] * y_t[..., :, None, :]
                                + y[..., None, :, :] * x_t[..., :, None, :]), axis=-1)
    off_diagonal = crossed - x_t * over_r(y_diagonal) - y_t * over_r(x_diagonal)
    products = (x_diagonal[..., None, :, None] * y_diagonal[..., None, None, :]
                - x[..., None, :, :] * y_t[..., None, :, :])
    diagonal = xp.sum(triples * products, axis=(-2, -1))
    eye = xp.eye(values.shape[-1], dtype=bool)
    derivative = off_diagonal + xp.where(eye, diagonal[..., None, :], 0)
    return _from_diagonal(xp, u, vh, _conj(xp, u) @ derivative)


def _rotated(xp, u, vh, t):
    """U^H t V."""
    return _conj(xp, xp.swapaxes(u, -1, -2)) @ t @ _conj(xp, xp.swapaxes(vh, -1, -2))


def _from_diagonal(xp, u, vh, left):
    """det(U) det(V^H) left conj(V^H): a derivative of det at S = U^H a V taken back to a,
    `left` the derivative at S with conj(U) applied."""
    signs = xp.linalg.det(u) * xp.linalg.det(vh)
    return signs[..., None, None] * (left @ _conj(xp, vh))


def _diagonal(xp, m):
    eye = xp.eye(m.shape[-1], dtype=bool)
    return xp.sum(xp.where(eye, m, 0), axis=-1)


def _conj(xp, m):
    # (the array API's conj takes complex values alone)
    return xp.conj(m) if "complex" in str(m.dtype) else m


def _has_cumprod(xp) -> bool:
    """Whether xp is NumPy or CuPy, not NumPy's names over another array library (which have
    no cumprod)."""
    return xp.__name__ in ("numpy", "cupy")


def _products_but_one(s):
    """prod_{k != i} s_k for each i of the last axis (no division: exact where some s_k are
    0): the products before i times those after."""
    xp = array_module(s)
    if not _has_cumprod(xp):  # n^2 products
        return xp.prod(xp.where(xp.eye(s.shape[-1], dtype=bool), 1, s[..., None, :]), axis=-1)
    before, after = _products_around(xp, s)
    return before * after


def _products_around(xp, s):
    ones = xp.ones_like(s[..., :1])
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumprod(xp.flip(xp.concatenate([s[..., 1:], ones], axis=-1), axis=-1),
                               axis=-1), axis=-1)
    return before, after


def _products_between(xp, s):
    """between[i, j] = prod_{i < k < j} s_k for i < j: the running product of row i's later
    entries, shifted one place on."""
    n = s.shape[-1]
    later = xp.triu(xp.ones((n, n), dtype=bool), k=1)  # k > i, in row i
    running = xp.cumprod(xp.where(later, s[..., None, :], 1), axis=-1)
    return later, xp.concatenate([xp.ones_like(running[..., :1]), running[..., :-1]], axis=-1)


def _products_but_two(s):
    """P_ij = prod_{k != i, j} s_k for i != j, 0 for i == j, in O(n^2) products: for i < j,
    the products before i, strictly between i and j, and after j."""
    xp = array_module(s)
    eye = xp.eye(s.shape[-1], dtype=bool)
    if not _has_cumprod(xp):  # n^3 products
        left_out = eye[:, None, :] | eye[None, :, :]  # k == i or k == j
        pairs = xp.prod(xp.where(left_out, 1, s[..., None, None, :]), axis=-1)
        return xp.where(eye, 0, pairs)
    before, after = _products_around(xp, s)
    later, between = _products_between(xp, s)
    upper = xp.where(later, before[..., :, None] * between * after[..., None, :], 0)
    return upper + xp.swapaxes(upper, -1, -2)


def _products_but_three(s):
    """P_pqr = prod_{k != p, q, r} s_k where p, q, r differ, 0 where two are equal, in O(n^3)
    products: for p < q < r, the products before p, between p and q, between q and r, and
    after r, then the same for each order of p, q, r."""
    xp = array_module(s)
    n = s.shape[-1]
    eye = xp.eye(n, dtype=bool)
    if not _has_cumprod(xp):  # n^4 products
        left_out = eye[:, None, None, :] | eye[None, :, None, :] | eye[None, None, :, :]
        triples = xp.prod(xp.where(left_out, 1, s[..., None, None, None, :]), axis=-1)
        distinct = ~(eye[:, :, None] | eye[:, None, :] | eye[None, :, :])
        return xp.where(distinct, triples, 0)
    before, after = _products_around(xp, s)
    later, between = _products_between(xp, s)
    ordered = later[:, :, None] & later[None, :, :]  # p < q < r
    upper = xp.where(ordered, before[..., :, None, None] * between[..., :, :, None]
                     * between[..., None, :, :] * after[..., None, None, :], 0)
    # each order of (p, q, r): those keeping p first, then p swapped with q, and with r
    kept_first = upper + xp.swapaxes(upper, -1, -2)
    return kept_first + xp.swapaxes(kept_first, -3, -2) + xp.swapaxes(kept_first, -3, -1)


# --- the ops --------------------------------------------------------------------------------


def _result(*avals) -> AbstractArray:
    """The inputs broadcast against each other, in det's dtype (float64 for integers)."""
    dtype = np.result_type(*[getattr(aval, "dtype", aval) for aval in avals])
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    return AbstractArray(broadcast_shapes(*[shape_of(aval) for aval in avals]), dtype,
                         device_of_inputs(avals))


def _stacks_batching(call):
    """Each input a stack of matrices, broadcast against the others: a batched one gets unit
    axes after its batch axis, so that unbatched ones align with it from the right."""
    ndim = max(call.example_ndim(position) for position in range(len(call.args)))
    return call.bind(*[call.aligned(position, ndim) for position in range(len(call.args))])


# Graphs call each op by the function that rule bodies call, which records it where its
# arguments are traced (registry.define_runtime_function's dispatcher).
for _name, _dispatcher, _computed in (
        ("cofactors", cofactors, _computed_cofactors),
        ("cofactors_jvp", cofactors_jvp, _computed_cofactors_jvp),
        ("cofactors_jvp_cross", cofactors_jvp_cross, _computed_cofactors_jvp_cross)):
    define_runtime_function(_name, _computed, _result, fresh=True, batching=_stacks_batching,
                            dispatcher=_dispatcher)
