"""Rules of the helpers in runtime/derivatives/adjoint_ops.py, adjoint_products.py,
matrix_chains.py and scans.py that rule bodies call, both modes.

Derivatives of derivatives differentiate generated code, which holds the inlined rule bodies, so
every helper those bodies call needs rules of its own. Most helpers are linear in their first
argument, their own tangents (declarations.py), and come in adjoint pairs (unbroadcast and
broadcast_like, split_like and join, sort_like and unsort, ...): each one's adjoint calls the
other; the other arguments only supply shapes, axes or orders. The adjoints of products are
bilinear. Helpers that compute masks, sizes or axes are constants.

Not closed: `einsum_adjoint_cross` and `einsum_jvp_cross` (only third derivatives of einsum reach
them) have no rules, nor have the `*_cross` helpers of matrix chains and `cofactors_jvp_cross`
(det's third derivative: a fourth has no rule).
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...runtime.derivatives.adjoint_ops import (array_like, broadcast_each_like, broadcast_like,
                                                clip_weights, delete_sources, diag_adjoint,
                                                diagonal_adjoint, diff_pad_width, diff_part,
                                                eigh_gap_inverse, extremum_weights, eye_like,
                                                first_given, flat_axis, hstack_axis,
                                                initial_weight,
                                                insert_places, inverse_permutation, join,
                                                negate_shift,
                                                real_singular_values,
                                                norm_direction, norm_exponent, norm_power,
                                                norm_slope, norm_ties, real_sign, reduced_last,
                                                reduced_last_back,
                                                reduced_size, reshape_each, reshape_each_back,
                                                sinc_slope, solve_as_matrix, sort_like,
                                                split_like, svd_gap_inverse, take_at,
                                                tie_weights, tril_half_diagonal, unarray,
                                                unbroadcast, unbroadcast_each, unpad,
                                                unpad_values, unreduce, unrepeat, unsort,
                                                unstack, untake, untake_along,
                                                untile, unwindow, vector_norm_power)
from ...runtime.derivatives.adjoint_products import (cross_adjoint_a, cross_adjoint_b,
                                                     dot_adjoint_a, dot_adjoint_b, einsum_adjoint,
                                                     einsum_adjoint_cross, einsum_jvp,
                                                     inner_adjoint_a, inner_adjoint_b,
                                                     kron_adjoint_a, kron_adjoint_b,
                                                     matmul_adjoint_a, matmul_adjoint_b,
                                                     tensordot_adjoint_a, tensordot_adjoint_b)
from ...runtime.derivatives.complex_parts import (abs_slope, imag_gradient, imag_of, real_gradient,
                                                  real_if_real)
from ...runtime.derivatives.degenerate_matrices import gap_weighted
from ...runtime.derivatives.dtypes import as_weights
from ...runtime.derivatives.exponent_logs import has_log, log_of_base, slope_base
from ...runtime.derivatives.scans import (forward_scan, products_after, products_before,
                                          reverse_scan, shift)
from ...runtime.derivatives.structural_adjoints import meshgrid_adjoint, meshgrid_tangent
from ...runtime.derivatives.structure import add
from ...runtime.derivatives.tangent_ops import einsum_jvp_cross
from ...runtime.primitives.adjugates import cofactors_jvp, cofactors_jvp_cross
from ...runtime.derivatives.triangles import (cholesky_lower, symmetric_read,
                                              symmetric_read_adjoint)
from ...runtime.derivatives.matrix_chains import (matrix_power_adjoint,
                                                   matrix_power_adjoint_cross, matrix_power_jvp,
                                                   matrix_power_jvp_cross, multi_dot_adjoint,
                                                   multi_dot_adjoint_cross, multi_dot_jvp,
                                                   multi_dot_jvp_cross)
from ...runtime.derivatives.real_only import refuse_complex
from .core import adjoint, constant, d, tangent
from .declarations import bilinear, linear, partials
from .refused import refused_functions

constant(reduced_size, flat_axis, first_given, tie_weights, extremum_weights, initial_weight,
         clip_weights, diff_pad_width, diff_part, inverse_permutation, negate_shift, hstack_axis,
         eye_like, norm_power, insert_places, delete_sources, vector_norm_power, as_weights,
         norm_exponent, norm_ties, refuse_complex, has_log)

# Broadcasting and reductions. unbroadcast(g, x) is zero for an integer x, so its adjoint passes
# the incoming gradient through unbroadcast again before broadcasting it back.


@linear(unbroadcast)
def unbroadcast_rule(z, g, x):
    d[g] = broadcast_like(unbroadcast(d[z], x), g)


@linear(broadcast_like)
def broadcast_like_rule(z, v, g):
    d[v] = unbroadcast(d[z], v)


@linear(unbroadcast_each)
def unbroadcast_each_rule(z, gs, xs):
    d[gs] = broadcast_each_like(unbroadcast_each(d[z], xs), gs)


@linear(broadcast_each_like)
def broadcast_each_like_rule(z, vs, gs):
    d[vs] = unbroadcast_each(d[z], vs)


# meshgrid's pair: a grid's gradient is summed down to its argument's, which is broadcast back
# along the grid (its own sparse grid, broadcast to the grid's shape).
@linear(meshgrid_adjoint)
def meshgrid_adjoint_rule(z, gs, xs, indexing="xy", copy=True):
    d[gs] = broadcast_each_like(meshgrid_tangent(d[z], True, indexing, copy), gs)


@linear(meshgrid_tangent)
def meshgrid_tangent_rule(z, ts, sparse=False, indexing="xy", copy=True):
    d[ts] = meshgrid_adjoint(d[z], ts, indexing, copy)


@linear(unreduce)
def unreduce_rule(z, g, x, axis=None, keepdims=False):
    d[g] = np.sum(unbroadcast(d[z], x), axis=axis, keepdims=keepdims)


@linear(reduced_last)
def reduced_last_rule(z, a, axis=None):
    d[a] = reduced_last_back(d[z], a, axis)


@linear(reduced_last_back)
def reduced_last_back_rule(z, rows, a, axis=None):
    d[rows] = reduced_last(d[z], axis)


# The products before and after each element (prod's rules) are cumulative products: their
# rules are the recurrences of the product scan's, with no division (exact at zeros).


@adjoint(products_before)
def products_before_rule(z, rows):
    d[rows] = z * reverse_scan(shift(d[z], -1, -1), rows, -1)


@tangent(products_before)
def products_before_tangent(z, rows):
    d[z] = shift(forward_scan(z * d[rows], rows, -1), -1, 1)


@adjoint(products_after)
def products_after_rule(z, rows):
    d[rows] = z * shift(forward_scan(d[z], rows, -1), -1, 1)


@tangent(products_after)
def products_after_tangent(z, rows):
    d[z] = reverse_scan(shift(d[rows] * z, -1, -1), rows, -1)


# Elementwise pieces of the power, norm, cholesky and eigh rules.

partials(log_of_base, x="d[y] / np.where(has_log(x, power), x, np.inf)", power=None)
# (at the base it moves, 0 ** 0 becomes 1, a step, where the slope it is read in is 0 * 1 ** -1:
# any finite gradient there is multiplied by 0)
partials(slope_base, x="d[y]", p=None)
constant(real_sign)  # (a step: zero almost everywhere)


# The parts of complex values (runtime/derivatives/complex_parts.py): imag_gradient and imag_of
# are each other's transposes, real_if_real and real_gradient their own (Re(h Re(g)) =
# Re(Re(h) g); real_gradient's transpose in g's dtype, as g's gradient is).
@linear(real_gradient)
def real_gradient_rule(y, g, z):
    d[g] = real_gradient(d[y], g)


@linear(imag_gradient)
def imag_gradient_rule(y, g, z):
    d[g] = imag_of(d[y], z)


@linear(imag_of)
def imag_of_rule(y, h, z):
    d[h] = imag_gradient(d[y], z)


@linear(real_if_real)
def real_if_real_rule(y, g, value):
    d[g] = real_if_real(d[y], value)


# The slope s = conj(z) / |z| of |z| changes by (conj(t) - s Re(s t)) / |z| (0 at 0, inf in
# its place); of a real x, s = sign(x), it does not (s s = 1: exactly 0).
@adjoint(abs_slope)
def abs_slope_rule(y, x):
    d[x] = (np.conjugate(d[y]) - np.real(d[y] * y) * y) / np.where(x == 0, np.inf, np.abs(x))


@tangent(abs_slope)
def abs_slope_tangent(y, x):
    d[y] = (np.conjugate(d[x]) - y * np.real(y * d[x])) / np.where(x == 0, np.inf, np.abs(x))


partials(norm_direction, x="d[y] * norm_slope(x, p)", p=None, ties=None)  # (ties: constant)
partials(norm_slope, x="d[y] * norm_exponent(p) * norm_slope(x, p - 1.0) * np.sign(x)", p=None)


@adjoint(sinc_slope)
def sinc_slope_rule(z, x):
    # x sinc(x) solves f'' = -pi^2 f, so sinc'' = -pi^2 sinc - 2 sinc' / x; at 0 it is -pi^2 / 3.
    nonzero = np.where(np.equal(x, 0.0), 1.0, x)
    curvature = -np.pi ** 2 * np.sinc(x) - 2.0 * z / nonzero
    d[x] = d[z] * np.where(np.equal(x, 0.0), np.pi ** 2 / -3.0, curvature)


@tangent(sinc_slope)
def sinc_slope_tangent(z, x):
    # x sinc(x) solves f'' = -pi^2 f, so sinc'' = -pi^2 sinc - 2 sinc' / x; at 0 it is -pi^2 / 3.
    nonzero = np.where(np.equal(x, 0.0), 1.0, x)
    curvature = -np.pi ** 2 * np.sinc(x) - 2.0 * z / nonzero
    d[z] = d[x] * np.where(np.equal(x, 0.0), np.pi ** 2 / -3.0, curvature)


@linear(tril_half_diagonal)
def tril_half_diagonal_rule(z, x):
    d[x] = tril_half_diagonal(d[z])


@linear(symmetric_read)
def symmetric_read_rule(z, x, triangle="L"):
    d[x] = symmetric_read_adjoint(d[z], triangle)


@linear(symmetric_read_adjoint)
def symmetric_read_adjoint_rule(z, g, triangle="L"):
    d[g] = symmetric_read(d[z], triangle)


@linear(cholesky_lower)
def cholesky_lower_rule(z, y, upper=False):
    d[y] = cholesky_lower(d[z], upper)


@adjoint(eigh_gap_inverse)
def eigh_gap_inverse_rule(z, w):
    # z_ij = 1 / (w_j - w_i), so dz_ij/dw_k = -z_ij^2 (delta_jk - delta_ik).
    weighted = -d[z] * z * z
    d[w] = np.sum(weighted, axis=-2) - np.sum(weighted, axis=-1)


@tangent(eigh_gap_inverse)
def eigh_gap_inverse_tangent(z, w):
    # z_ij = 1 / (w_j - w_i), so dz_ij = -z_ij^2 (dw_j - dw_i).
    d[z] = -z * z * (np.expand_dims(d[w], -2) - np.expand_dims(d[w], -1))


# det's Hessian (cofactors_jvp): linear in t, and its own transpose; its derivative along a is
# det's third derivative, cofactors_jvp_cross (a stack of t or of a sums over the other's).
@adjoint(cofactors_jvp)
def cofactors_jvp_rule(z, a, t):
    d[t] = unbroadcast(cofactors_jvp(a, d[z]), t)
    d[a] = unbroadcast(cofactors_jvp_cross(t, d[z], a), a)


@tangent(cofactors_jvp)
def cofactors_jvp_tangent(z, a, t):
    d[z] = cofactors_jvp(a, d[t]) + cofactors_jvp_cross(t, d[a], a)


refused_functions[cofactors_jvp_cross] = (
    "it is the third derivative of np.linalg.det, which autotrace differentiates three times, "
    "not four")


# (the tied eigenvalues' infinite gaps get no gradient where the coupling is 0)
partials(gap_weighted, gaps="d[y] * coupling", coupling="gap_weighted(gaps, d[y])")


@linear(real_singular_values)
def real_singular_values_rule(z, g, a):
    d[g] = real_singular_values(d[z], a)


@adjoint(svd_gap_inverse)
def svd_gap_inverse_rule(z, s, a, full_matrices=True, compute_uv=True):
    # z_ij = 1 / (s_j^2 - s_i^2), so dz_ij/ds_k = -2 s_k z_ij^2 (delta_jk - delta_ik).
    weighted = -d[z] * z * z
    d[s] = 2.0 * s * (np.sum(weighted, axis=-2) - np.sum(weighted, axis=-1))


@tangent(svd_gap_inverse)
def svd_gap_inverse_tangent(z, s, a, full_matrices=True, compute_uv=True):
    # z_ij = 1 / (s_j^2 - s_i^2), so dz_ij = -z_ij^2 (2 s_j ds_j - 2 s_i ds_i).
    moved = 2.0 * s * d[s]
    d[z] = -z * z * (np.expand_dims(moved, -2) - np.expand_dims(moved, -1))


@linear(solve_as_matrix)
def solve_as_matrix_rule(z, v, a, b):
    d[v] = np.reshape(d[z], np.shape(v))


# Structural adjoints: each is linear in its first argument.


@linear(sort_like)
def sort_like_rule(z, v, a, axis=-1):
    d[v] = unsort(d[z], a, axis)


@linear(unsort)
def unsort_rule(z, g, a, axis=-1):
    d[g] = sort_like(d[z], a, axis)


@linear(split_like)
def split_like_rule(z, g, arrays, axis=0, ndmin=0):
    d[g] = join(d[z], axis, ndmin)


@linear(join)
def join_rule(z, pieces, axis=0, ndmin=0):
    d[pieces] = split_like(d[z], pieces, axis, ndmin)


@linear(unstack)
def unstack_rule(z, g, axis=0):
    d[g] = np.stack(d[z], axis)


@linear(reshape_each)
def reshape_each_rule(z, g, arys):
    d[g] = reshape_each_back(d[z], g)


@linear(reshape_each_back)
def reshape_each_back_rule(z, v, g):
    d[v] = reshape_each(d[z], v)


@linear(unarray)
def unarray_rule(z, g, obj):
    d[g] = array_like(d[z], g)


@linear(array_like)
def array_like_rule(z, v, like):
    d[v] = unarray(d[z], v)


@linear(untile)
def untile_rule(z, g, A, reps):
    d[g] = np.tile(d[z], reps)


@linear(unrepeat)
def unrepeat_rule(z, g, a, repeats, axis=None):
    d[g] = np.repeat(d[z], repeats, axis)


@linear(unwindow, call="g, x, window_shape, axis")
def unwindow_rule(z, g, x, window_shape, axis=None, writeable=False):
    d[g] = sliding_window_view(d[z], window_shape, axis)


@linear(unpad)
def unpad_rule(z, g, pad_width, mode="constant"):
    d[g] = np.pad(d[z], pad_width, mode)


@linear(unpad_values)
def unpad_values_rule(z, g, pad_width, constant_values=0, mode="constant"):
    d[g] = np.pad(np.zeros_like(unpad(g, pad_width)), pad_width, mode, end_values=d[z]) if (
        mode == "linear_ramp") else np.pad(np.zeros_like(unpad(g, pad_width)), pad_width,
                                           constant_values=d[z])


@linear(diagonal_adjoint)
def diagonal_adjoint_rule(z, g, a, offset=0, axis1=0, axis2=1):
    d[g] = unbroadcast(np.diagonal(d[z], offset, axis1, axis2), g)


@linear(diag_adjoint)
def diag_adjoint_rule(z, g, v, k=0):
    d[g] = np.diag(d[z], k)


@linear(untake)
def untake_rule(z, g, a, indices, axis=None, mode="raise"):
    d[g] = take_at(d[z], indices, axis, mode)


@linear(take_at)
def take_at_rule(z, a, indices, axis=None, mode="raise"):
    d[a] = untake(d[z], a, indices, axis, mode)


@linear(untake_along)
def untake_along_rule(z, g, a, indices, axis=-1):
    d[g] = np.take_along_axis(d[z], indices, axis)


# Bilinear adjoints. For A(g, a, b) = d<g, B(a, b)>/da:  <dz, A(g, a, b)> = <g, B(dz, b)>, so
# its gradient in g is B(dz, b) and in b is the b-adjoint of B at (g, dz); likewise for b.


@bilinear(matmul_adjoint_a)
def matmul_adjoint_a_rule(z, g, a, b):
    d[g] = np.matmul(d[z], b)
    d[b] = matmul_adjoint_b(g, d[z], b)


@bilinear(matmul_adjoint_b)
def matmul_adjoint_b_rule(z, g, a, b):
    d[g] = np.matmul(a, d[z])
    d[a] = matmul_adjoint_a(g, a, d[z])


@bilinear(dot_adjoint_a)
def dot_adjoint_a_rule(z, g, a, b):
    d[g] = np.dot(d[z], b)
    d[b] = dot_adjoint_b(g, d[z], b)


@bilinear(dot_adjoint_b)
def dot_adjoint_b_rule(z, g, a, b):
    d[g] = np.dot(a, d[z])
    d[a] = dot_adjoint_a(g, a, d[z])


@bilinear(inner_adjoint_a)
def inner_adjoint_a_rule(z, g, a, b):
    d[g] = np.inner(d[z], b)
    d[b] = inner_adjoint_b(g, d[z], b)


@bilinear(inner_adjoint_b)
def inner_adjoint_b_rule(z, g, a, b):
    d[g] = np.inner(a, d[z])
    d[a] = inner_adjoint_a(g, a, d[z])


@bilinear(tensordot_adjoint_a)
def tensordot_adjoint_a_rule(z, g, a, b, axes=2):
    d[g] = np.tensordot(d[z], b, axes)
    d[b] = tensordot_adjoint_b(g, d[z], b, axes)


@bilinear(tensordot_adjoint_b)
def tensordot_adjoint_b_rule(z, g, a, b, axes=2):
    d[g] = np.tensordot(a, d[z], axes)
    d[a] = tensordot_adjoint_a(g, a, d[z], axes)


@bilinear(cross_adjoint_a)
def cross_adjoint_a_rule(z, g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    d[g] = np.cross(d[z], b, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)
    d[b] = cross_adjoint_b(g, d[z], b, axisa, axisb, axisc, axis)


@bilinear(cross_adjoint_b)
def cross_adjoint_b_rule(z, g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    d[g] = np.cross(a, d[z], axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)
    d[a] = cross_adjoint_a(g, a, d[z], axisa, axisb, axisc, axis)


@bilinear(kron_adjoint_a)
def kron_adjoint_a_rule(z, g, a, b):
    d[g] = np.kron(d[z], b)
    d[b] = kron_adjoint_b(g, d[z], b)


@bilinear(kron_adjoint_b)
def kron_adjoint_b_rule(z, g, a, b):
    d[g] = np.kron(a, d[z])
    d[a] = kron_adjoint_a(g, a, d[z])


# einsum is multilinear: the adjoint's gradient in g is the derivative of the einsum in the
# direction d[z]; in the operands, the adjoint taken with one operand replaced by its tangent.


@adjoint(einsum_adjoint)
def einsum_adjoint_rule(z, g, subscripts, operands):
    d[g] = einsum_jvp(subscripts, d[z], operands)
    d[operands] = einsum_adjoint_cross(g, d[z], subscripts, operands)


@tangent(einsum_adjoint)
def einsum_adjoint_tangent(z, g, subscripts, operands):
    d[z] = add(einsum_adjoint(d[g], subscripts, operands),
               einsum_adjoint_cross(g, d[operands], subscripts, operands))


@adjoint(einsum_jvp)
def einsum_jvp_rule(z, subscripts, tangents, operands):
    d[tangents] = einsum_adjoint(d[z], subscripts, operands)
    d[operands] = einsum_adjoint_cross(d[z], tangents, subscripts, operands)


@tangent(einsum_jvp)
def einsum_jvp_tangent(z, subscripts, tangents, operands):
    d[z] = (einsum_jvp(subscripts, d[tangents], operands)
            + einsum_jvp_cross(subscripts, tangents, d[operands], operands))


# Matrix chains (runtime/derivatives/matrix_chains.py) are multilinear, as einsum: the same
# pattern, with matrix_power's chain of n copies of one matrix.


@adjoint(multi_dot_adjoint)
def multi_dot_adjoint_rule(z, g, arrays):
    d[g] = multi_dot_jvp(d[z], arrays)
    d[arrays] = multi_dot_adjoint_cross(g, d[z], arrays)


@tangent(multi_dot_adjoint)
def multi_dot_adjoint_tangent(z, g, arrays):
    d[z] = add(multi_dot_adjoint(d[g], arrays), multi_dot_adjoint_cross(g, d[arrays], arrays))


@adjoint(multi_dot_jvp)
def multi_dot_jvp_rule(z, tangents, arrays):
    d[tangents] = multi_dot_adjoint(d[z], arrays)
    d[arrays] = multi_dot_adjoint_cross(d[z], tangents, arrays)


@tangent(multi_dot_jvp)
def multi_dot_jvp_tangent(z, tangents, arrays):
    d[z] = multi_dot_jvp(d[tangents], arrays) + multi_dot_jvp_cross(tangents, d[arrays], arrays)


@adjoint(matrix_power_adjoint)
def matrix_power_adjoint_rule(z, g, a, n):
    d[g] = matrix_power_jvp(d[z], a, n)
    d[a] = matrix_power_adjoint_cross(g, d[z], a, n)


@tangent(matrix_power_adjoint)
def matrix_power_adjoint_tangent(z, g, a, n):
    d[z] = matrix_power_adjoint(d[g], a, n) + matrix_power_adjoint_cross(g, d[a], a, n)


@adjoint(matrix_power_jvp)
def matrix_power_jvp_rule(z, t, a, n):
    d[t] = matrix_power_adjoint(d[z], a, n)
    d[a] = matrix_power_adjoint_cross(d[z], t, a, n)


@tangent(matrix_power_jvp)
def matrix_power_jvp_tangent(z, t, a, n):
    d[z] = matrix_power_jvp(d[t], a, n) + matrix_power_jvp_cross(t, d[a], a, n)


# The recurrences of the product scan's rules (runtime/derivatives/scans.py). forward_scan and reverse_scan
# are each other's transpose in their first argument; t = forward_scan(b, a) reads a[k] times
# t[k - 1], s = reverse_scan(c, a) reads a[k + 1] times s[k + 1].


@linear(shift, call="x, axis, step")
def shift_rule(z, x, axis, step, fill=0.0):
    d[x] = shift(d[z], axis, -step)


@adjoint(forward_scan)
def forward_scan_rule(t, b, a, axis):
    carried = reverse_scan(d[t], a, axis)
    d[b] = carried
    d[a] = carried * shift(t, axis, 1)


@tangent(forward_scan)
def forward_scan_tangent(t, b, a, axis):
    d[t] = forward_scan(d[b] + d[a] * shift(t, axis, 1), a, axis)


@adjoint(reverse_scan)
def reverse_scan_rule(s, c, a, axis):
    carried = forward_scan(d[s], a, axis)
    d[c] = carried
    d[a] = shift(carried, axis, 1) * s


@tangent(reverse_scan)
def reverse_scan_tangent(s, c, a, axis):
    d[s] = reverse_scan(d[c] + shift(d[a] * s, axis, -1), a, axis)
