"""Derivative rules of products and linear algebra, both modes side by side.

Products are bilinear (declarations.py): a tangent is the product with one factor replaced by
its tangent, summed over the factors. Their adjoints call `*_adjoint_a` / `*_adjoint_b` helpers
(runtime/derivatives/adjoint_products.py) that handle NumPy's 1-d and batched cases, and whose
own rules are again those products, so derivatives of any order stay closed. einsum's tangent,
over any number of operands, is `einsum_jvp`.
Matrix functions assume what their derivatives need: inv, slogdet, solve and cholesky a
nonsingular matrix (det's derivatives, its cofactors and theirs, are exact at every matrix,
to the third order: runtime/primitives/adjugates.py); eigh distinct eigenvalues where its
eigenvectors are differentiated (the eigenvalues alone have their gradient at tied ones too);
pinv a matrix of constant rank. cholesky, eigh and eigvalsh read one triangle of their
argument as a symmetric matrix (the lower; the upper with UPLO="U" or cholesky's upper=True)
and ignore the other, and their rules differentiate that:
a tangent is read as NumPy reads the argument (its read triangle mirrored), and a gradient lives
on the read triangle alone, zero on the other (runtime/derivatives/triangles.py), which keeps
each mode the exact transpose of the other. A symmetric matrix built from both triangles gets
the same derivative either way. qr covers an a of full rank with m >= n, in modes 'reduced',
'r', and 'complete' of a square a (runtime/derivatives/decompositions.py); tensorinv and
tensorsolve are inv and solve of a read as a square matrix. vdot and vecdot conjugate their
first argument: their tangents do too, their gradients refuse a complex one; qr, slogdet and
pinv refuse complex values (runtime/derivatives/real_only.py). The norms and cond are in
matrix_norms.py. numpy.linalg's array-API names (matmul, outer, tensordot, cross, vecdot)
share the rules of NumPy's functions.
"""
import numpy as np

from ...runtime.derivatives.adjoint_ops import (diagonal_adjoint, eigh_gap_inverse, eye_like,
                                                inverse_permutation, real_singular_values,
                                                solve_as_matrix, svd_gap_inverse,
                                                tril_half_diagonal, unbroadcast)
from ...runtime.derivatives.adjoint_products import (cross_adjoint_a, cross_adjoint_b,
                                                     dot_adjoint_a, dot_adjoint_b,
                                                     einsum_adjoint, einsum_jvp,
                                                     einsum_sublists_refused, inner_adjoint_a,
                                                     inner_adjoint_b, kron_adjoint_a,
                                                     kron_adjoint_b, matmul_adjoint_a,
                                                     matmul_adjoint_b, tensordot_adjoint_a,
                                                     tensordot_adjoint_b)
from ...runtime.derivatives.complex_parts import real_if_real
from ...runtime.derivatives.decompositions import qr_checked, tensor_rows, tensorsolve_order
from ...runtime.derivatives.general_eigen import eig_adjoint, eig_vectors_tangent
from ...runtime.derivatives.degenerate_matrices import gap_weighted
from ...runtime.derivatives.matrix_chains import (matrix_power_adjoint, matrix_power_jvp,
                                                   multi_dot_adjoint, multi_dot_jvp)
from ...runtime.derivatives.real_only import refuse_complex
from ...runtime.derivatives.structure import zeros_like
from ...runtime.derivatives.triangles import (cholesky_lower, symmetric_read,
                                              symmetric_read_adjoint)
from ...runtime.primitives.adjugates import cofactors, cofactors_jvp
from ...runtime.primitives.linalg import check_full_rank, lstsq_of_full_rank
from .core import adjoint, constant, d, tangent
from .declarations import bilinear, linear

# Products.


@bilinear(np.matmul, np.linalg.matmul)
def matmul_rule(y, x1, x2):
    d[x1] = matmul_adjoint_a(d[y], x1, x2)
    d[x2] = matmul_adjoint_b(d[y], x1, x2)


@bilinear(np.dot)
def dot_rule(y, a, b):
    d[a] = dot_adjoint_a(d[y], a, b)
    d[b] = dot_adjoint_b(d[y], a, b)


@bilinear(np.inner)
def inner_rule(y, a, b):
    d[a] = inner_adjoint_a(d[y], a, b)
    d[b] = inner_adjoint_b(d[y], a, b)


@bilinear(np.outer, np.linalg.outer)
def outer_rule(y, a, b):
    d[a] = np.reshape(np.dot(d[y], np.ravel(b)), np.shape(a))
    d[b] = np.reshape(np.dot(np.ravel(a), d[y]), np.shape(b))


@bilinear(np.tensordot, np.linalg.tensordot)
def tensordot_rule(y, a, b, axes=2):
    d[a] = tensordot_adjoint_a(d[y], a, b, axes)
    d[b] = tensordot_adjoint_b(d[y], a, b, axes)


@adjoint(np.vecdot, np.linalg.vecdot)
def vecdot_rule(y, x1, x2, axis=-1):
    refuse_complex(x1, "numpy.vecdot", "its gradients need the conjugate of its first argument")
    d[x1] = unbroadcast(np.expand_dims(d[y], axis) * x2, x1)
    d[x2] = unbroadcast(np.expand_dims(d[y], axis) * x1, x2)


@tangent(np.vecdot, np.linalg.vecdot)
def vecdot_tangent(y, x1, x2, axis=-1):
    # numpy.linalg's, not the ufunc: a traced ufunc call takes no axis=.
    d[y] = np.linalg.vecdot(d[x1], x2, axis=axis) + np.linalg.vecdot(x1, d[x2], axis=axis)


@bilinear(np.vdot)
def vdot_rule(y, a, b):
    refuse_complex(a, "numpy.vdot", "its gradients need the conjugate of its first argument")
    # Real arrays: the sum of the flattened arrays' products.
    d[a] = unbroadcast(np.reshape(d[y] * np.ravel(b), np.shape(a)), a)
    d[b] = unbroadcast(np.reshape(d[y] * np.ravel(a), np.shape(b)), b)


constant(einsum_sublists_refused)


@adjoint(np.einsum)
def einsum_rule(y, subscripts, *operands, optimize=False, casting="safe"):
    d[operands] = einsum_adjoint(d[y], subscripts, operands)
    d[subscripts] = einsum_sublists_refused(subscripts)  # (an operand, in the sublist form)


@tangent(np.einsum)
def einsum_tangent(y, subscripts, *operands, optimize=False, casting="safe"):
    d[y] = einsum_jvp(subscripts, d[operands], operands)


@bilinear(np.kron)
def kron_rule(y, a, b):
    d[a] = kron_adjoint_a(d[y], a, b)
    d[b] = kron_adjoint_b(d[y], a, b)


@bilinear(np.cross, np.linalg.cross,
          call="a, b, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis")
def cross_rule(y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    d[a] = cross_adjoint_a(d[y], a, b, axisa, axisb, axisc, axis)
    d[b] = cross_adjoint_b(d[y], a, b, axisa, axisb, axisc, axis)


@linear(np.trace, call="a, offset, axis1, axis2")
def trace_rule(y, a, offset=0, axis1=0, axis2=1, dtype=None):
    d[a] = diagonal_adjoint(np.expand_dims(d[y], -1), a, offset, axis1, axis2)


@linear(np.diagonal)
def diagonal_rule(y, a, offset=0, axis1=0, axis2=1):
    d[a] = diagonal_adjoint(d[y], a, offset, axis1, axis2)


# The array API's names in numpy.linalg: over the last two axes.


@linear(np.linalg.trace, call="x, offset=offset")
def linalg_trace_rule(y, x, offset=0, dtype=None):
    d[x] = diagonal_adjoint(np.expand_dims(d[y], -1), x, offset, -2, -1)


@linear(np.linalg.diagonal, call="x, offset=offset")
def linalg_diagonal_rule(y, x, offset=0):
    d[x] = diagonal_adjoint(d[y], x, offset, -2, -1)


# numpy.linalg.


@adjoint(np.linalg.multi_dot)
def multi_dot_rule(y, arrays, *, out=None):
    d[arrays] = multi_dot_adjoint(d[y], arrays)


@tangent(np.linalg.multi_dot)
def multi_dot_tangent(y, arrays, *, out=None):
    d[y] = multi_dot_jvp(d[arrays], arrays)


@adjoint(np.linalg.matrix_power)
def matrix_power_rule(y, a, n):
    d[a] = matrix_power_adjoint(d[y], a, n)


@tangent(np.linalg.matrix_power)
def matrix_power_tangent(y, a, n):
    d[y] = matrix_power_jvp(d[a], a, n)


@adjoint(np.linalg.tensorinv)
def tensorinv_rule(y, a, ind=2):
    # inv's, of a as an n x n matrix A (its first ind axes the rows) and y as Y = A^-1.
    rows = tensor_rows(a, ind)
    inverse_t = np.transpose(np.reshape(y, (rows, rows)))
    d[a] = np.reshape(-np.matmul(inverse_t, np.matmul(np.reshape(d[y], (rows, rows)),
                                                      inverse_t)), np.shape(a))


@tangent(np.linalg.tensorinv)
def tensorinv_tangent(y, a, ind=2):
    rows = tensor_rows(a, ind)
    inverse = np.reshape(y, (rows, rows))
    d[y] = np.reshape(-np.matmul(inverse, np.matmul(np.reshape(d[a], (rows, rows)), inverse)),
                      np.shape(y))


@adjoint(np.linalg.tensorsolve)
def tensorsolve_rule(y, a, b, axes=None):
    # solve's, of a as a square matrix A (its axes moved last), b and x = A^-1 b flattened:
    # d[b] = A^-T gx, d[a] = -d[b] x^T.
    order = tensorsolve_order(a, axes)
    moved = np.transpose(a, order)
    grad_b = np.linalg.solve(np.transpose(np.reshape(moved, (np.size(b), np.size(b)))),
                             np.ravel(d[y]))
    d[b] = np.reshape(grad_b, np.shape(b))
    d[a] = np.transpose(np.reshape(-np.outer(grad_b, np.ravel(y)), np.shape(moved)),
                        inverse_permutation(order, a))


@tangent(np.linalg.tensorsolve)
def tensorsolve_tangent(y, a, b, axes=None):
    # dx = A^-1 (db - dA x), flattened.
    order = tensorsolve_order(a, axes)
    size = np.size(b)
    moved = np.reshape(np.transpose(a, order), (size, size))
    d[y] = np.reshape(np.linalg.solve(moved, np.ravel(d[b]) - np.matmul(
        np.reshape(np.transpose(d[a], order), (size, size)), np.ravel(y))), np.shape(y))


@adjoint(np.linalg.inv)
def inv_rule(y, a):
    y_t = np.swapaxes(y, -1, -2)
    d[a] = -np.matmul(y_t, np.matmul(d[y], y_t))


@tangent(np.linalg.inv)
def inv_tangent(y, a):
    d[y] = -np.matmul(y, np.matmul(d[a], y))


# d det(a) = tr(adj(a) da), adj(a)^T = det(a) a^-T the cofactors, which a singular matrix has
# too (runtime/primitives/adjugates.py).
@adjoint(np.linalg.det)
def det_rule(y, a):
    d[a] = np.expand_dims(d[y], (-2, -1)) * cofactors(a)


@tangent(np.linalg.det)
def det_tangent(y, a):
    d[y] = np.sum(cofactors(a) * d[a], axis=(-2, -1))


# det's second derivative: cofactors_jvp is det's Hessian, symmetric, so its own transpose.
@adjoint(cofactors)
def cofactors_rule(z, a):
    d[a] = cofactors_jvp(a, d[z])


@tangent(cofactors)
def cofactors_tangent(z, a):
    d[z] = cofactors_jvp(a, d[a])


@adjoint(np.linalg.slogdet)
def slogdet_rule(y, a):
    refuse_complex(a, "numpy.linalg.slogdet")  # log|det a| is not holomorphic
    # y = (sign, logabsdet); the sign is piecewise constant.
    d[a] = np.expand_dims(d[y][1], (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


@tangent(np.linalg.slogdet)
def slogdet_tangent(y, a):
    refuse_complex(a, "numpy.linalg.slogdet")  # log|det a| is not holomorphic
    # y = (sign, logabsdet); the sign is piecewise constant.
    logdet_tangent = np.sum(np.swapaxes(np.linalg.inv(a), -1, -2) * d[a], axis=(-2, -1))
    d[y] = (zeros_like(y[0]), logdet_tangent)


@adjoint(np.linalg.solve)
def solve_rule(y, a, b):
    # With x = solve(a, b): d[b] = solve(a^T, g) and d[a] = -d[b] x^T, done on matrices (a
    # vector b gets a trailing axis) and summed over broadcast batch dimensions.
    grad_b = np.linalg.solve(np.swapaxes(a, -1, -2), solve_as_matrix(d[y], a, b))
    d[b] = unbroadcast(np.reshape(grad_b, np.shape(y)), b)
    d[a] = unbroadcast(-np.matmul(grad_b, np.swapaxes(solve_as_matrix(y, a, b), -1, -2)), a)


@tangent(np.linalg.solve)
def solve_tangent(y, a, b):
    # With x = solve(a, b): dx = solve(a, db - da x), done on matrices (a vector b gets a
    # trailing axis); broadcasting makes dx as wide as x.
    rhs = solve_as_matrix(d[b], a, b) - np.matmul(d[a], solve_as_matrix(y, a, b))
    d[y] = np.reshape(np.linalg.solve(a, rhs), np.shape(y))


@adjoint(np.linalg.cholesky)
def cholesky_rule(y, a, *, upper=False):
    # Murray (2016), arXiv:1602.07527, with L the lower factor: S = L^-T Phi(L^T G) L^-1,
    # taken back to the triangle of a that NumPy reads.
    lower = cholesky_lower(y, upper)
    lower_inv = np.linalg.inv(lower)
    phi = tril_half_diagonal(np.matmul(np.swapaxes(lower, -1, -2), cholesky_lower(d[y], upper)))
    s = np.matmul(np.swapaxes(lower_inv, -1, -2), np.matmul(phi, lower_inv))
    d[a] = symmetric_read_adjoint(s, upper)


@tangent(np.linalg.cholesky)
def cholesky_tangent(y, a, *, upper=False):
    # Murray (2016), arXiv:1602.07527: dL = L Phi(L^-1 dA L^-T), dA the symmetric matrix that
    # NumPy reads from the tangent.
    lower = cholesky_lower(y, upper)
    lower_inv = np.linalg.inv(lower)
    read = symmetric_read(d[a], upper)
    middle = np.matmul(lower_inv, np.matmul(read, np.swapaxes(lower_inv, -1, -2)))
    d[y] = cholesky_lower(np.matmul(lower, tril_half_diagonal(middle)), upper)


@adjoint(np.linalg.eigh)
def eigh_rule(y, a, UPLO="L"):
    # a = V diag(w) V^T: G = V (diag(gw) + F * (V^T gV)) V^T, F_ij = 1 / (w_j - w_i), taken
    # back to the triangle of a that NumPy reads.
    v_t = np.swapaxes(y[1], -1, -2)
    middle = (np.expand_dims(d[y][0], -1) * eye_like(y[0])
              + gap_weighted(eigh_gap_inverse(y[0]), np.matmul(v_t, d[y][1])))
    d[a] = symmetric_read_adjoint(np.matmul(y[1], np.matmul(middle, v_t)), UPLO)


@tangent(np.linalg.eigh)
def eigh_tangent(y, a, UPLO="L"):
    # a = V diag(w) V^T, M = V^T dA V with dA the symmetric matrix NumPy reads from the
    # tangent: dw = diag(M), dV = V (F * M), F_ij = 1/(w_j - w_i).
    vectors = y[1]
    read = symmetric_read(d[a], UPLO)
    middle = np.matmul(np.swapaxes(vectors, -1, -2), np.matmul(read, vectors))
    d[y] = (np.diagonal(middle, 0, -2, -1),
            np.matmul(vectors, gap_weighted(eigh_gap_inverse(y[0]), middle)))


@adjoint(np.linalg.eigvalsh)
def eigvalsh_rule(y, a, UPLO="L"):
    # a = V diag(w) V^T: G = V diag(gw) V^T, taken back to the triangle NumPy reads.
    vectors = np.linalg.eigh(a, UPLO)[1]
    grad = np.matmul(vectors * np.expand_dims(d[y], -2), np.swapaxes(vectors, -1, -2))
    d[a] = symmetric_read_adjoint(grad, UPLO)


@tangent(np.linalg.eigvalsh)
def eigvalsh_tangent(y, a, UPLO="L"):
    # dw_k = v_k^T dA v_k, the diagonal of eigh's tangent.
    vectors = np.linalg.eigh(a, UPLO)[1]
    read = symmetric_read(d[a], UPLO)
    d[y] = np.sum(vectors * np.matmul(read, vectors), axis=-2)


# A general matrix: a = V diag(w) V^-1, dw = diag(V^-1 dA V) (general_eigen.py has the
# eigenvectors'). Complex where NumPy's eigenvalues are; a real matrix's gradient is the real part.
@adjoint(np.linalg.eigvals)
def eigvals_rule(y, a):
    # the transpose of dA -> diag(V^-1 dA V): gA = V^-T diag(gw) V^T
    vectors_t = np.swapaxes(np.linalg.eig(a)[1], -1, -2)
    d[a] = real_if_real(np.linalg.solve(vectors_t, np.expand_dims(d[y], -1) * vectors_t), a)


@tangent(np.linalg.eigvals)
def eigvals_tangent(y, a):
    vectors = np.linalg.eig(a)[1]
    d[y] = np.diagonal(np.linalg.solve(vectors, np.matmul(d[a], vectors)), 0, -2, -1)


@adjoint(np.linalg.eig)
def eig_rule(y, a):
    d[a] = real_if_real(eig_adjoint(d[y][0], d[y][1], y[0], y[1]), a)


@tangent(np.linalg.eig)
def eig_tangent(y, a):
    d[y] = (np.diagonal(np.linalg.solve(y[1], np.matmul(d[a], y[1])), 0, -2, -1),
            eig_vectors_tangent(d[a], y[0], y[1]))


@adjoint(np.linalg.svd)
def svd_rule(y, a, full_matrices=True, compute_uv=True, hermitian=False):
    # a = U diag(s) V^T with gradients gU, gs, gV, F_ij = 1 / (s_j^2 - s_i^2) (Townsend 2016):
    # d[a] = U (F * (U^T gU - gU^T U) diag(s) + diag(gs) + diag(s) F * (V^T gV - gV^T V)) V^T
    #        + (1 - U U^T) gU diag(1/s) V^T + U diag(1/s) gV^T (1 - V V^T)
    gaps = svd_gap_inverse(y[1], a, full_matrices, compute_uv)
    left = np.matmul(np.swapaxes(y[0], -1, -2), d[y][0])
    right = np.matmul(y[2], np.swapaxes(d[y][2], -1, -2))
    columns = np.expand_dims(y[1], -2)
    rows = np.expand_dims(y[1], -1)
    middle = (gaps * (left - np.swapaxes(left, -1, -2)) * columns
              + np.expand_dims(d[y][1], -1) * eye_like(y[1])
              + rows * (gaps * (right - np.swapaxes(right, -1, -2))))
    d[a] = (np.matmul(y[0], np.matmul(middle, y[2]))
            + np.matmul((d[y][0] - np.matmul(y[0], left)) / columns, y[2])
            + np.matmul(y[0], (d[y][2] - np.matmul(np.swapaxes(right, -1, -2), y[2])) / rows))


@tangent(np.linalg.svd)
def svd_tangent(y, a, full_matrices=True, compute_uv=True, hermitian=False):
    # a = U diag(s) V^T, P = U^T da V: ds = diag(P),
    # dU = U (F * (P diag(s) + diag(s) P^T)) + (1 - U U^T) da V diag(1/s),
    # dV = V (F * (diag(s) P + P^T diag(s))) + (1 - V V^T) da^T U diag(1/s), F as above.
    gaps = svd_gap_inverse(y[1], a, full_matrices, compute_uv)
    v = np.swapaxes(y[2], -1, -2)
    da_v = np.matmul(d[a], v)
    da_t_u = np.matmul(np.swapaxes(d[a], -1, -2), y[0])
    middle = np.matmul(np.swapaxes(y[0], -1, -2), da_v)
    middle_t = np.swapaxes(middle, -1, -2)
    columns = np.expand_dims(y[1], -2)
    rows = np.expand_dims(y[1], -1)
    d_u = (np.matmul(y[0], gaps * (middle * columns + rows * middle_t))
           + (da_v - np.matmul(y[0], middle)) / columns)
    d_v = (np.matmul(v, gaps * (rows * middle + middle_t * columns))
           + (da_t_u - np.matmul(v, middle_t)) / columns)
    d[y] = (d_u, np.diagonal(middle, 0, -2, -1), np.swapaxes(d_v, -1, -2))


@adjoint(np.linalg.svdvals)
def svdvals_rule(y, x):
    # x = U diag(s) V^T: d[x] = U diag(gs) V^T.
    factors = np.linalg.svd(x, full_matrices=False)
    d[x] = np.matmul(factors[0] * np.expand_dims(real_singular_values(d[y], x), -2),
                     factors[2])


@tangent(np.linalg.svdvals)
def svdvals_tangent(y, x):
    # ds_k = u_k^T dx v_k, the diagonal of svd's tangent.
    factors = np.linalg.svd(x, full_matrices=False)
    d[y] = real_singular_values(np.sum(
        factors[0] * np.matmul(d[x], np.swapaxes(factors[2], -1, -2)), axis=-2), x)


constant(qr_checked, tensor_rows, tensorsolve_order)


@adjoint(np.linalg.qr)
def qr_rule(y, a, mode="reduced"):
    refuse_complex(a, "numpy.linalg.qr")  # Q^H, not Q^T, would be orthonormal
    qr_checked(a, mode)
    # a = QR, m >= n, R nonsingular (mode 'r': y is R, Q computed again), B = gR R^T - Q^T gQ:
    # d[a] = (gQ + Q (triu(B) + triu(B, 1)^T)) R^-T (Walter & Lehmann 2018, Seeger et al. 2017).
    factors = np.linalg.qr(a) if mode == "r" else y
    g_q = zeros_like(factors[0]) if mode == "r" else d[y][0]
    g_r = d[y] if mode == "r" else d[y][1]
    b = (np.matmul(g_r, np.swapaxes(factors[1], -1, -2))
         - np.matmul(np.swapaxes(factors[0], -1, -2), g_q))
    middle = np.triu(b) + np.swapaxes(np.triu(b, 1), -1, -2)
    d[a] = np.swapaxes(np.linalg.solve(factors[1], np.swapaxes(
        g_q + np.matmul(factors[0], middle), -1, -2)), -1, -2)


@tangent(np.linalg.qr)
def qr_tangent(y, a, mode="reduced"):
    refuse_complex(a, "numpy.linalg.qr")  # Q^H, not Q^T, would be orthonormal
    qr_checked(a, mode)
    # a = QR, X = Q^T da R^-1, S = tril(X, -1) - tril(X, -1)^T (skew: Q^T dQ):
    # dQ = Q (S - X) + da R^-1, dR = (X - S) R, upper triangular.
    factors = np.linalg.qr(a) if mode == "r" else y
    moved = np.swapaxes(np.linalg.solve(np.swapaxes(factors[1], -1, -2),
                                        np.swapaxes(d[a], -1, -2)), -1, -2)
    x = np.matmul(np.swapaxes(factors[0], -1, -2), moved)
    skew = np.tril(x, -1) - np.swapaxes(np.tril(x, -1), -1, -2)
    d[y] = np.matmul(x - skew, factors[1]) if mode == "r" else (
        np.matmul(factors[0], skew - x) + moved, np.matmul(x - skew, factors[1]))


@adjoint(np.linalg.pinv)
def pinv_rule(y, a, rcond=None, hermitian=False, *, rtol=None):
    refuse_complex(a, "numpy.linalg.pinv")  # a complex a^+ reads conj(a)
    # Golub & Pereyra (1973) for a matrix of constant rank, y = a^+:
    # d[a] = -y^T g y^T + (1 - a y) g^T y y^T + y^T y g^T (1 - y a).
    y_t = np.swapaxes(y, -1, -2)
    g_t = np.swapaxes(d[y], -1, -2)
    left = np.matmul(g_t, np.matmul(y, y_t))
    right = np.matmul(np.matmul(y_t, y), g_t)
    d[a] = (-np.matmul(y_t, np.matmul(d[y], y_t))
            + left - np.matmul(a, np.matmul(y, left))
            + right - np.matmul(np.matmul(right, y), a))


@tangent(np.linalg.pinv)
def pinv_tangent(y, a, rcond=None, hermitian=False, *, rtol=None):
    refuse_complex(a, "numpy.linalg.pinv")  # a complex a^+ reads conj(a)
    # Golub & Pereyra (1973) for a matrix of constant rank, y = a^+:
    # dy = -y da y + y y^T da^T (1 - a y) + (1 - y a) da^T y^T y.
    da_t = np.swapaxes(d[a], -1, -2)
    left = np.matmul(np.matmul(y, np.swapaxes(y, -1, -2)), da_t)
    right = np.matmul(da_t, np.matmul(np.swapaxes(y, -1, -2), y))
    d[y] = (-np.matmul(y, np.matmul(d[a], y))
            + left - np.matmul(left, np.matmul(a, y))
            + right - np.matmul(y, np.matmul(a, right)))


constant(check_full_rank)


@adjoint(np.linalg.lstsq, lstsq_of_full_rank)  # (how graphs call it)
def lstsq_rule(y, a, b, rcond=None):
    refuse_complex((a, b), "numpy.linalg.lstsq")  # its solution reads conj(a)
    check_full_rank(y[2], np.shape(a), "differentiates")
    # y = (x, residuals, rank, s), a of full rank, P = a^+ and r = b - a x, on matrices (a
    # vector b gets a trailing axis). x = P b, with P's rule (Golub & Pereyra 1973), z = P^T gx:
    # d[b] = z, d[a] = -z x^T + r (P z)^T + (P^T x)(gx - a^T z)^T. The residuals |r_j|^2
    # (where a has more rows than columns) move as if x stood still, x being optimal:
    # d[b] = 2 r g_res, d[a] = -2 r g_res x^T. s: as svdvals's rule.
    pinv = np.linalg.pinv(a)
    x = solve_as_matrix(y[0], a, b)
    g_x = solve_as_matrix(d[y][0], a, b)
    residual = solve_as_matrix(b, a, b) - np.matmul(a, x)
    g_b = np.matmul(np.swapaxes(pinv, -1, -2), g_x)
    g_r = g_b + 2.0 * residual * np.pad(d[y][1], (0, np.shape(x)[1] - np.size(d[y][1])))
    factors = np.linalg.svd(a, full_matrices=False)
    d[b] = np.reshape(g_r, np.shape(b))
    d[a] = (np.matmul(residual, np.swapaxes(np.matmul(pinv, g_b), -1, -2))
            - np.matmul(g_r, np.swapaxes(x, -1, -2))
            + np.matmul(np.matmul(np.swapaxes(pinv, -1, -2), x),
                        np.swapaxes(g_x - np.matmul(np.swapaxes(a, -1, -2), g_b), -1, -2))
            + np.matmul(factors[0] * d[y][3], factors[2]))


@tangent(np.linalg.lstsq, lstsq_of_full_rank)
def lstsq_tangent(y, a, b, rcond=None):
    refuse_complex((a, b), "numpy.linalg.lstsq")  # its solution reads conj(a)
    check_full_rank(y[2], np.shape(a), "differentiates")
    # The transpose of the rule above: dx = P (db - da x) + P P^T da^T r + (1 - P a) da^T P^T x,
    # d res_j = 2 r_j . (db - da x)_j, ds = diag(U^T da V).
    pinv = np.linalg.pinv(a)
    x = solve_as_matrix(y[0], a, b)
    residual = solve_as_matrix(b, a, b) - np.matmul(a, x)
    moved = solve_as_matrix(d[b], a, b) - np.matmul(d[a], x)
    da_t = np.swapaxes(d[a], -1, -2)
    back = np.matmul(da_t, np.matmul(np.swapaxes(pinv, -1, -2), x))
    d_x = (np.matmul(pinv, moved + np.matmul(np.swapaxes(pinv, -1, -2), np.matmul(da_t, residual)))
           + back - np.matmul(pinv, np.matmul(a, back)))
    factors = np.linalg.svd(a, full_matrices=False)
    d[y] = (np.reshape(d_x, np.shape(y[0])),
            (2.0 * np.sum(residual * moved, axis=0))[:np.size(y[1])],
            0.0,  # the rank's: a weak zero, of no precision of its own, as an integer's
            np.sum(factors[0] * np.matmul(d[a], np.swapaxes(factors[2], -1, -2)), axis=-2))
