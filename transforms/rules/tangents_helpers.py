"""Tangent rules of the helpers in runtime/derivatives/adjoint_ops.py and
runtime/derivatives/adjoint_products.py.

Forward mode over reverse mode (a Hessian) differentiates generated adjoint code, which calls these
helpers, so each needs a tangent rule. Most are linear in their first argument and are their own
tangent; the other arguments only supply shapes, axes or orders. The bilinear adjoints are
differentiated factor by factor. Not closed: `einsum_adjoint_cross` and `einsum_jvp_cross` (only
third derivatives of einsum reach them) have no rules.
"""
import numpy as np

from autotrace.runtime.derivatives.adjoint_ops import (array_like, broadcast_each_like,
                                                       broadcast_like, diag_adjoint,
                                                       diagonal_adjoint, eigh_gap_inverse, join,
                                                       norm_direction, norm_slope, products_after,
                                                       products_before, reduced_last,
                                                       reduced_last_back, reshape_each,
                                                       reshape_each_back, sinc_slope,
                                                       solve_as_matrix, sort_like, split_like,
                                                       take_at, tril_half_diagonal, unarray,
                                                       unbroadcast, unbroadcast_each, unpad,
                                                       unreduce, unrepeat, unsort, unstack, untake,
                                                       untake_along, untile)
from autotrace.runtime.derivatives.adjoint_products import (dot_adjoint_a, dot_adjoint_b,
                                                            einsum_adjoint, einsum_adjoint_cross,
                                                            einsum_jvp, inner_adjoint_a,
                                                            inner_adjoint_b, kron_adjoint_a,
                                                            kron_adjoint_b, matmul_adjoint_a,
                                                            matmul_adjoint_b, tensordot_adjoint_a,
                                                            tensordot_adjoint_b)
from autotrace.runtime.derivatives.scans import forward_scan, reverse_scan, shift
from autotrace.runtime.derivatives.structure import add
from autotrace.runtime.derivatives.tangent_ops import einsum_jvp_cross
from autotrace.transforms.rules.core import d, tangent

# Broadcasting and reductions.


@tangent(unbroadcast)
def unbroadcast_tangent(z, g, x):
    d[z] = unbroadcast(d[g], x)


@tangent(broadcast_like)
def broadcast_like_tangent(z, v, g):
    d[z] = broadcast_like(d[v], g)


@tangent(unbroadcast_each)
def unbroadcast_each_tangent(z, gs, xs):
    d[z] = unbroadcast_each(d[gs], xs)


@tangent(broadcast_each_like)
def broadcast_each_like_tangent(z, vs, gs):
    d[z] = broadcast_each_like(d[vs], gs)


@tangent(unreduce)
def unreduce_tangent(z, g, x, axis=None, keepdims=False):
    d[z] = unreduce(d[g], x, axis, keepdims)


@tangent(reduced_last)
def reduced_last_tangent(z, a, axis=None):
    d[z] = reduced_last(d[a], axis)


@tangent(reduced_last_back)
def reduced_last_back_tangent(z, rows, a, axis=None):
    d[z] = reduced_last_back(d[rows], a, axis)


# z_i = a_0 ... a_{i-1} (products_before) gives dz_i = a_{i-1} dz_{i-1} + z_{i-1} da_{i-1}, and
# products_after the same from the other end: recurrences, with no division (exact at zeros).


@tangent(products_before)
def products_before_tangent(z, rows):
    d[z] = shift(forward_scan(z * d[rows], rows, -1), -1, 1)


@tangent(products_after)
def products_after_tangent(z, rows):
    d[z] = reverse_scan(shift(d[rows] * z, -1, -1), rows, -1)


# Elementwise pieces of the norm, sinc, cholesky and eigh rules.


@tangent(norm_direction)
def norm_direction_tangent(z, x, p):
    d[z] = d[x] * norm_slope(x, p)


@tangent(norm_slope)
def norm_slope_tangent(z, x, p):
    d[z] = d[x] * (p - 1.0) * norm_slope(x, p - 1.0) * np.sign(x)


@tangent(sinc_slope)
def sinc_slope_tangent(z, x):
    # x sinc(x) solves f'' = -pi^2 f, so sinc'' = -pi^2 sinc - 2 sinc' / x; at 0 it is -pi^2 / 3.
    nonzero = np.where(np.equal(x, 0.0), 1.0, x)
    curvature = -np.pi ** 2 * np.sinc(x) - 2.0 * z / nonzero
    d[z] = d[x] * np.where(np.equal(x, 0.0), np.pi ** 2 / -3.0, curvature)


@tangent(tril_half_diagonal)
def tril_half_diagonal_tangent(z, x):
    d[z] = tril_half_diagonal(d[x])


@tangent(eigh_gap_inverse)
def eigh_gap_inverse_tangent(z, w):
    # z_ij = 1 / (w_j - w_i), so dz_ij = -z_ij^2 (dw_j - dw_i).
    d[z] = -z * z * (np.expand_dims(d[w], -2) - np.expand_dims(d[w], -1))


@tangent(solve_as_matrix)
def solve_as_matrix_tangent(z, v, a, b):
    d[z] = solve_as_matrix(d[v], a, b)


# Structural helpers: each is linear in its first argument.


@tangent(sort_like)
def sort_like_tangent(z, v, a, axis=-1):
    d[z] = sort_like(d[v], a, axis)


@tangent(unsort)
def unsort_tangent(z, g, a, axis=-1):
    d[z] = unsort(d[g], a, axis)


@tangent(split_like)
def split_like_tangent(z, g, arrays, axis=0, ndmin=0):
    d[z] = split_like(d[g], arrays, axis, ndmin)


@tangent(join)
def join_tangent(z, pieces, axis=0, ndmin=0):
    d[z] = join(d[pieces], axis, ndmin)


@tangent(unstack)
def unstack_tangent(z, g, axis=0):
    d[z] = unstack(d[g], axis)


@tangent(reshape_each)
def reshape_each_tangent(z, g, arys):
    d[z] = reshape_each(d[g], arys)


@tangent(reshape_each_back)
def reshape_each_back_tangent(z, v, g):
    d[z] = reshape_each_back(d[v], g)


@tangent(unarray)
def unarray_tangent(z, g, obj):
    d[z] = unarray(d[g], obj)


@tangent(array_like)
def array_like_tangent(z, v, like):
    d[z] = array_like(d[v], like)


@tangent(untile)
def untile_tangent(z, g, A, reps):
    d[z] = untile(d[g], A, reps)


@tangent(unrepeat)
def unrepeat_tangent(z, g, a, repeats, axis=None):
    d[z] = unrepeat(d[g], a, repeats, axis)


@tangent(unpad)
def unpad_tangent(z, g, pad_width, mode="constant"):
    d[z] = unpad(d[g], pad_width, mode)


@tangent(diagonal_adjoint)
def diagonal_adjoint_tangent(z, g, a, offset=0, axis1=0, axis2=1):
    d[z] = diagonal_adjoint(d[g], a, offset, axis1, axis2)


@tangent(diag_adjoint)
def diag_adjoint_tangent(z, g, v, k=0):
    d[z] = diag_adjoint(d[g], v, k)


@tangent(untake)
def untake_tangent(z, g, a, indices, axis=None, mode="raise"):
    d[z] = untake(d[g], a, indices, axis, mode)


@tangent(untake_along)
def untake_along_tangent(z, g, a, indices, axis=-1):
    d[z] = untake_along(d[g], a, indices, axis)


@tangent(take_at)
def take_at_tangent(z, a, indices, axis=None, mode="raise"):
    d[z] = take_at(d[a], indices, axis, mode)


# Bilinear adjoints: `*_adjoint_a(g, a, b)` is linear in g and in b (a supplies a shape only),
# `*_adjoint_b(g, a, b)` in g and in a.


@tangent(matmul_adjoint_a)
def matmul_adjoint_a_tangent(z, g, a, b):
    d[z] = matmul_adjoint_a(d[g], a, b) + matmul_adjoint_a(g, a, d[b])


@tangent(matmul_adjoint_b)
def matmul_adjoint_b_tangent(z, g, a, b):
    d[z] = matmul_adjoint_b(d[g], a, b) + matmul_adjoint_b(g, d[a], b)


@tangent(dot_adjoint_a)
def dot_adjoint_a_tangent(z, g, a, b):
    d[z] = dot_adjoint_a(d[g], a, b) + dot_adjoint_a(g, a, d[b])


@tangent(dot_adjoint_b)
def dot_adjoint_b_tangent(z, g, a, b):
    d[z] = dot_adjoint_b(d[g], a, b) + dot_adjoint_b(g, d[a], b)


@tangent(inner_adjoint_a)
def inner_adjoint_a_tangent(z, g, a, b):
    d[z] = inner_adjoint_a(d[g], a, b) + inner_adjoint_a(g, a, d[b])


@tangent(inner_adjoint_b)
def inner_adjoint_b_tangent(z, g, a, b):
    d[z] = inner_adjoint_b(d[g], a, b) + inner_adjoint_b(g, d[a], b)


@tangent(tensordot_adjoint_a)
def tensordot_adjoint_a_tangent(z, g, a, b, axes=2):
    d[z] = tensordot_adjoint_a(d[g], a, b, axes) + tensordot_adjoint_a(g, a, d[b], axes)


@tangent(tensordot_adjoint_b)
def tensordot_adjoint_b_tangent(z, g, a, b, axes=2):
    d[z] = tensordot_adjoint_b(d[g], a, b, axes) + tensordot_adjoint_b(g, d[a], b, axes)


@tangent(kron_adjoint_a)
def kron_adjoint_a_tangent(z, g, a, b):
    d[z] = kron_adjoint_a(d[g], a, b) + kron_adjoint_a(g, a, d[b])


@tangent(kron_adjoint_b)
def kron_adjoint_b_tangent(z, g, a, b):
    d[z] = kron_adjoint_b(d[g], a, b) + kron_adjoint_b(g, d[a], b)


# einsum is multilinear: each helper's tangent is itself in the direction of its linear argument,
# plus the cross term with the operands' tangents. Both are lists or sums of arrays.


@tangent(einsum_adjoint)
def einsum_adjoint_tangent(z, g, subscripts, operands):
    d[z] = add(einsum_adjoint(d[g], subscripts, operands),
               einsum_adjoint_cross(g, d[operands], subscripts, operands))


@tangent(einsum_jvp)
def einsum_jvp_tangent(z, subscripts, tangents, operands):
    d[z] = (einsum_jvp(subscripts, d[tangents], operands)
            + einsum_jvp_cross(subscripts, tangents, d[operands], operands))


# The recurrences of cumprod's rules (runtime/derivatives/scans.py): each is linear in its first
# argument, and its tangent in `a` is the same recurrence run on the terms that a's tangent adds.


@tangent(shift)
def shift_tangent(z, x, axis, step, fill=0.0):
    d[z] = shift(d[x], axis, step)


@tangent(forward_scan)
def forward_scan_tangent(t, b, a, axis):
    d[t] = forward_scan(d[b] + d[a] * shift(t, axis, 1), a, axis)


@tangent(reverse_scan)
def reverse_scan_tangent(s, c, a, axis):
    d[s] = reverse_scan(d[c] + shift(d[a] * s, axis, -1), a, axis)
