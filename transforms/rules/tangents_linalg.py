"""Tangent rules of products and linear algebra.

Products are bilinear: a tangent is the product with one factor replaced by its tangent, summed
over the factors (einsum's, over any number of operands, is `einsum_jvp`).

Matrix functions carry the adjoint rules' assumptions (linalg.py). cholesky and eigh read one
triangle of a symmetric matrix; their rules use the symmetric part of the tangent, which makes
them the exact transposes of the adjoint rules' symmetrized gradients.
"""
import numpy as np

from autotrace.runtime.derivatives.adjoint_ops import (eigh_gap_inverse, norm_direction, norm_power,
                                                       solve_as_matrix, tril_half_diagonal,
                                                       vector_norm_power)
from autotrace.runtime.derivatives.adjoint_products import einsum_jvp
from autotrace.runtime.derivatives.structure import zeros_like
from autotrace.transforms.rules.core import d, tangent

# Products.


@tangent(np.matmul, np.linalg.matmul)
def matmul_tangent(y, x1, x2):
    d[y] = np.matmul(d[x1], x2) + np.matmul(x1, d[x2])


@tangent(np.dot)
def dot_tangent(y, a, b):
    d[y] = np.dot(d[a], b) + np.dot(a, d[b])


@tangent(np.inner)
def inner_tangent(y, a, b):
    d[y] = np.inner(d[a], b) + np.inner(a, d[b])


@tangent(np.outer, np.linalg.outer)
def outer_tangent(y, a, b):
    d[y] = np.outer(d[a], b) + np.outer(a, d[b])


@tangent(np.tensordot, np.linalg.tensordot)
def tensordot_tangent(y, a, b, axes=2):
    d[y] = np.tensordot(d[a], b, axes) + np.tensordot(a, d[b], axes)


@tangent(np.einsum)
def einsum_tangent(y, subscripts, *operands, optimize=False):
    d[y] = einsum_jvp(subscripts, d[operands], operands)


@tangent(np.kron)
def kron_tangent(y, a, b):
    d[y] = np.kron(d[a], b) + np.kron(a, d[b])


@tangent(np.cross, np.linalg.cross)
def cross_tangent(y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    d[y] = (np.cross(d[a], b, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)
            + np.cross(a, d[b], axisa=axisa, axisb=axisb, axisc=axisc, axis=axis))


@tangent(np.vecdot, np.linalg.vecdot)
def vecdot_tangent(y, x1, x2, axis=-1):
    # numpy.linalg's, not the ufunc: a traced ufunc call takes no axis=.
    d[y] = np.linalg.vecdot(d[x1], x2, axis=axis) + np.linalg.vecdot(x1, d[x2], axis=axis)


@tangent(np.vdot)
def vdot_tangent(y, a, b):
    d[y] = np.vdot(d[a], b) + np.vdot(a, d[b])


@tangent(np.trace)
def trace_tangent(y, a, offset=0, axis1=0, axis2=1, dtype=None):
    d[y] = np.trace(d[a], offset, axis1, axis2)


@tangent(np.diagonal)
def diagonal_tangent(y, a, offset=0, axis1=0, axis2=1):
    d[y] = np.diagonal(d[a], offset, axis1, axis2)


@tangent(np.linalg.trace)
def linalg_trace_tangent(y, x, offset=0, dtype=None):
    d[y] = np.linalg.trace(d[x], offset=offset)


@tangent(np.linalg.diagonal)
def linalg_diagonal_tangent(y, x, offset=0):
    d[y] = np.linalg.diagonal(d[x], offset=offset)


# numpy.linalg.


@tangent(np.linalg.inv)
def inv_tangent(y, a):
    d[y] = -np.matmul(y, np.matmul(d[a], y))


@tangent(np.linalg.det)
def det_tangent(y, a):
    # d det(a) = det(a) tr(a^-1 da).
    d[y] = y * np.sum(np.swapaxes(np.linalg.inv(a), -1, -2) * d[a], axis=(-2, -1))


@tangent(np.linalg.slogdet)
def slogdet_tangent(y, a):
    # y = (sign, logabsdet); the sign is piecewise constant.
    logdet_tangent = np.sum(np.swapaxes(np.linalg.inv(a), -1, -2) * d[a], axis=(-2, -1))
    d[y] = (zeros_like(y[0]), logdet_tangent)


@tangent(np.linalg.solve)
def solve_tangent(y, a, b):
    # With x = solve(a, b): dx = solve(a, db - da x), done on matrices (a vector b gets a
    # trailing axis); broadcasting makes dx as wide as x.
    rhs = solve_as_matrix(d[b], a, b) - np.matmul(d[a], solve_as_matrix(y, a, b))
    d[y] = np.reshape(np.linalg.solve(a, rhs), np.shape(y))


@tangent(np.linalg.cholesky)
def cholesky_tangent(y, a):
    # Murray (2016), arXiv:1602.07527: dL = L Phi(L^-1 dA L^-T), dA symmetrized.
    y_inv = np.linalg.inv(y)
    symmetric = 0.5 * (d[a] + np.swapaxes(d[a], -1, -2))
    middle = np.matmul(y_inv, np.matmul(symmetric, np.swapaxes(y_inv, -1, -2)))
    d[y] = np.matmul(y, tril_half_diagonal(middle))


@tangent(np.linalg.eigh)
def eigh_tangent(y, a, UPLO="L"):
    # a = V diag(w) V^T, M = V^T sym(da) V: dw = diag(M), dV = V (F * M), F_ij = 1/(w_j - w_i).
    vectors = y[1]
    symmetric = 0.5 * (d[a] + np.swapaxes(d[a], -1, -2))
    middle = np.matmul(np.swapaxes(vectors, -1, -2), np.matmul(symmetric, vectors))
    d[y] = (np.diagonal(middle, 0, -2, -1),
            np.matmul(vectors, eigh_gap_inverse(y[0]) * middle))


@tangent(np.linalg.eigvalsh)
def eigvalsh_tangent(y, a, UPLO="L"):
    # dw_k = v_k^T sym(da) v_k, the diagonal of eigh's tangent.
    vectors = np.linalg.eigh(a, UPLO)[1]
    symmetric = 0.5 * (d[a] + np.swapaxes(d[a], -1, -2))
    d[y] = np.sum(vectors * np.matmul(symmetric, vectors), axis=-2)


@tangent(np.linalg.pinv)
def pinv_tangent(y, a, rcond=None, hermitian=False, *, rtol=None):
    # Golub & Pereyra (1973) for a matrix of constant rank, y = a^+:
    # dy = -y da y + y y^T da^T (1 - a y) + (1 - y a) da^T y^T y.
    da_t = np.swapaxes(d[a], -1, -2)
    left = np.matmul(np.matmul(y, np.swapaxes(y, -1, -2)), da_t)
    right = np.matmul(da_t, np.matmul(np.swapaxes(y, -1, -2), y))
    d[y] = (-np.matmul(y, np.matmul(d[a], y))
            + left - np.matmul(left, np.matmul(a, y))
            + right - np.matmul(y, np.matmul(a, right)))


@tangent(np.linalg.norm)
def norm_tangent(y, x, ord=None, axis=None, keepdims=False):
    # A p-norm: dy = sum(|x|^(p-1) sign(x) dx) / y^(p-1); Frobenius and the default are p = 2.
    p = norm_power(x, ord, axis)
    d[y] = np.sum(norm_direction(x, p) * d[x], axis=axis, keepdims=keepdims) / y ** (p - 1.0)


@tangent(np.linalg.vector_norm)
def vector_norm_tangent(y, x, axis=None, keepdims=False, ord=2):
    p = vector_norm_power(ord)
    d[y] = np.sum(norm_direction(x, p) * d[x], axis=axis, keepdims=keepdims) / y ** (p - 1.0)
