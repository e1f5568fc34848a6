"""Adjoint rules of products and linear algebra.

Products are bilinear: their rules call `*_adjoint_a` / `*_adjoint_b` helpers (runtime/
adjoint_products.py) that handle NumPy's 1-d and batched cases, and whose own rules are again those
products, so derivatives of any order stay closed.

Matrix functions assume what their derivatives need: inv, det, slogdet, solve and cholesky a
nonsingular matrix; eigh distinct eigenvalues; pinv a matrix of constant rank. cholesky, eigh and
eigvalsh read one triangle of a symmetric matrix; their gradients are symmetrized (what a
symmetric perturbation sees). norm covers ord=None, 'fro' and finite nonzero p for vectors,
vector_norm finite nonzero ord. vdot and vecdot are for real arrays (no conjugate). numpy.linalg's
array-API names (matmul, outer, tensordot, cross, vecdot) share the rules of NumPy's functions.
"""
import numpy as np

from autotrace.runtime.derivatives.adjoint_ops import (diagonal_adjoint, eigh_gap_inverse, eye_like,
                                                       norm_direction, norm_power, solve_as_matrix,
                                                       tril_half_diagonal, unbroadcast, unreduce,
                                                       vector_norm_power)
from autotrace.runtime.derivatives.adjoint_products import (dot_adjoint_a, dot_adjoint_b,
                                                            einsum_adjoint, inner_adjoint_a,
                                                            inner_adjoint_b, kron_adjoint_a,
                                                            kron_adjoint_b, matmul_adjoint_a,
                                                            matmul_adjoint_b, tensordot_adjoint_a,
                                                            tensordot_adjoint_b)
from autotrace.transforms.rules.core import adjoint, d

# Products.


@adjoint(np.matmul, np.linalg.matmul)
def matmul_rule(y, x1, x2):
    d[x1] = matmul_adjoint_a(d[y], x1, x2)
    d[x2] = matmul_adjoint_b(d[y], x1, x2)


@adjoint(np.dot)
def dot_rule(y, a, b):
    d[a] = dot_adjoint_a(d[y], a, b)
    d[b] = dot_adjoint_b(d[y], a, b)


@adjoint(np.inner)
def inner_rule(y, a, b):
    d[a] = inner_adjoint_a(d[y], a, b)
    d[b] = inner_adjoint_b(d[y], a, b)


@adjoint(np.outer, np.linalg.outer)
def outer_rule(y, a, b):
    d[a] = np.reshape(np.dot(d[y], np.ravel(b)), np.shape(a))
    d[b] = np.reshape(np.dot(np.ravel(a), d[y]), np.shape(b))


@adjoint(np.tensordot, np.linalg.tensordot)
def tensordot_rule(y, a, b, axes=2):
    d[a] = tensordot_adjoint_a(d[y], a, b, axes)
    d[b] = tensordot_adjoint_b(d[y], a, b, axes)


@adjoint(np.vecdot, np.linalg.vecdot)
def vecdot_rule(y, x1, x2, axis=-1):
    d[x1] = unbroadcast(np.expand_dims(d[y], axis) * x2, x1)
    d[x2] = unbroadcast(np.expand_dims(d[y], axis) * x1, x2)


@adjoint(np.vdot)
def vdot_rule(y, a, b):
    # Real arrays: the sum of the flattened arrays' products.
    d[a] = unbroadcast(np.reshape(d[y] * np.ravel(b), np.shape(a)), a)
    d[b] = unbroadcast(np.reshape(d[y] * np.ravel(a), np.shape(b)), b)


@adjoint(np.einsum)
def einsum_rule(y, subscripts, *operands, optimize=False):
    d[operands] = einsum_adjoint(d[y], subscripts, operands)


@adjoint(np.kron)
def kron_rule(y, a, b):
    d[a] = kron_adjoint_a(d[y], a, b)
    d[b] = kron_adjoint_b(d[y], a, b)


@adjoint(np.cross, np.linalg.cross)
def cross_rule(y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    # <g, a x b> = <a, b x g> = <b, g x a>; 3-vectors only.
    d[a] = unbroadcast(np.cross(b, d[y], axisa=axisb, axisb=axisc, axisc=axisa, axis=axis), a)
    d[b] = unbroadcast(np.cross(d[y], a, axisa=axisc, axisb=axisa, axisc=axisb, axis=axis), b)


@adjoint(np.trace)
def trace_rule(y, a, offset=0, axis1=0, axis2=1, dtype=None):
    d[a] = diagonal_adjoint(np.expand_dims(d[y], -1), a, offset, axis1, axis2)


@adjoint(np.diagonal)
def diagonal_rule(y, a, offset=0, axis1=0, axis2=1):
    d[a] = diagonal_adjoint(d[y], a, offset, axis1, axis2)


# The array API's names in numpy.linalg: over the last two axes.


@adjoint(np.linalg.trace)
def linalg_trace_rule(y, x, offset=0, dtype=None):
    d[x] = diagonal_adjoint(np.expand_dims(d[y], -1), x, offset, -2, -1)


@adjoint(np.linalg.diagonal)
def linalg_diagonal_rule(y, x, offset=0):
    d[x] = diagonal_adjoint(d[y], x, offset, -2, -1)


# numpy.linalg.


@adjoint(np.linalg.inv)
def inv_rule(y, a):
    y_t = np.swapaxes(y, -1, -2)
    d[a] = -np.matmul(y_t, np.matmul(d[y], y_t))


@adjoint(np.linalg.det)
def det_rule(y, a):
    d[a] = np.expand_dims(d[y] * y, (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


@adjoint(np.linalg.slogdet)
def slogdet_rule(y, a):
    # y = (sign, logabsdet); the sign is piecewise constant.
    d[a] = np.expand_dims(d[y][1], (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


@adjoint(np.linalg.solve)
def solve_rule(y, a, b):
    # With x = solve(a, b): d[b] = solve(a^T, g) and d[a] = -d[b] x^T, done on matrices (a
    # vector b gets a trailing axis) and summed over broadcast batch dimensions.
    grad_b = np.linalg.solve(np.swapaxes(a, -1, -2), solve_as_matrix(d[y], a, b))
    d[b] = unbroadcast(np.reshape(grad_b, np.shape(y)), b)
    d[a] = unbroadcast(-np.matmul(grad_b, np.swapaxes(solve_as_matrix(y, a, b), -1, -2)), a)


@adjoint(np.linalg.cholesky)
def cholesky_rule(y, a):
    # Murray (2016), arXiv:1602.07527: S = L^-T Phi(L^T G) L^-1, symmetrized.
    y_inv = np.linalg.inv(y)
    phi = tril_half_diagonal(np.matmul(np.swapaxes(y, -1, -2), d[y]))
    s = np.matmul(np.swapaxes(y_inv, -1, -2), np.matmul(phi, y_inv))
    d[a] = 0.5 * (s + np.swapaxes(s, -1, -2))


@adjoint(np.linalg.eigh)
def eigh_rule(y, a, UPLO="L"):
    # a = V diag(w) V^T: d[a] = V (diag(gw) + F * (V^T gV)) V^T, F_ij = 1 / (w_j - w_i).
    v_t = np.swapaxes(y[1], -1, -2)
    middle = (np.expand_dims(d[y][0], -1) * eye_like(y[0])
              + eigh_gap_inverse(y[0]) * np.matmul(v_t, d[y][1]))
    grad = np.matmul(y[1], np.matmul(middle, v_t))
    d[a] = 0.5 * (grad + np.swapaxes(grad, -1, -2))


@adjoint(np.linalg.eigvalsh)
def eigvalsh_rule(y, a, UPLO="L"):
    # a = V diag(w) V^T: d[a] = V diag(gw) V^T, symmetric as eigh's gradient is.
    vectors = np.linalg.eigh(a, UPLO)[1]
    d[a] = np.matmul(vectors * np.expand_dims(d[y], -2), np.swapaxes(vectors, -1, -2))


@adjoint(np.linalg.pinv)
def pinv_rule(y, a, rcond=None, hermitian=False, *, rtol=None):
    # Golub & Pereyra (1973) for a matrix of constant rank, y = a^+:
    # d[a] = -y^T g y^T + (1 - a y) g^T y y^T + y^T y g^T (1 - y a).
    y_t = np.swapaxes(y, -1, -2)
    g_t = np.swapaxes(d[y], -1, -2)
    left = np.matmul(g_t, np.matmul(y, y_t))
    right = np.matmul(np.matmul(y_t, y), g_t)
    d[a] = (-np.matmul(y_t, np.matmul(d[y], y_t))
            + left - np.matmul(a, np.matmul(y, left))
            + right - np.matmul(np.matmul(right, y), a))


@adjoint(np.linalg.norm)
def norm_rule(y, x, ord=None, axis=None, keepdims=False):
    # A p-norm: d[x] = g |x|^(p-1) sign(x) / y^(p-1); Frobenius and the default are p = 2.
    p = norm_power(x, ord, axis)
    d[x] = unreduce(d[y] / y ** (p - 1.0), x, axis, keepdims) * norm_direction(x, p)


@adjoint(np.linalg.vector_norm)
def vector_norm_rule(y, x, axis=None, keepdims=False, ord=2):
    p = vector_norm_power(ord)
    d[x] = unreduce(d[y] / y ** (p - 1.0), x, axis, keepdims) * norm_direction(x, p)
