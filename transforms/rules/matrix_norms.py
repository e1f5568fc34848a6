"""Derivative rules of np.linalg's norms and condition number, both modes side by side.

norm covers every ord: of a vector or over any axes a p-norm (Frobenius and the default are
p = 2), a max or min of sums of |x| (ord=inf of a vector, ord=1, -1, inf, -inf of a matrix),
a count (ord=0); 2, -2 and 'nuc' of a matrix through its singular values, as svdvals's rule
(runtime/derivatives/decompositions.py). matrix_norm is norm over the last two axes,
vector_norm norm of every ord over any axes. cond of p=None, 2 and -2 is a ratio of two
singular values; another p is refused. All refuse complex values (runtime/derivatives/
real_only.py): |x| is not holomorphic.
"""
import numpy as np

from ...runtime.derivatives.adjoint_ops import (norm_direction, norm_exponent, norm_power,
                                                norm_ties, unreduce, vector_norm_power)
from ...runtime.derivatives.decompositions import (cond_ends, singular_value_axes,
                                                   singular_value_weights)
from ...runtime.derivatives.real_only import refuse_complex
from .core import adjoint, constant, d, tangent

constant(cond_ends, singular_value_axes, singular_value_weights)


@adjoint(np.linalg.norm)
def norm_rule(y, x, ord=None, axis=None, keepdims=False):
    refuse_complex(x, "numpy.linalg.norm")  # |x| is not holomorphic
    # A p-norm: d[x] = g |x|^(p-1) sign(x) / y^(p-1); Frobenius and the default are p = 2. A
    # max or min of sums of |x| (ord=inf of a vector, ord=1 of a matrix): g sign(x) where it
    # is attained; a count (ord=0): zero. A matrix's ord=2, -2, 'nuc', of its singular values
    # s (a = U diag(s) V^T, the matrices' axes moved last): d[a] = U diag(g ds/dy) V^T.
    p = norm_power(x, ord, axis)
    ties = norm_ties(x, y, p, ord, axis, keepdims)
    factors = None if singular_value_axes(x, ord, axis) is None else np.linalg.svd(
        np.moveaxis(x, singular_value_axes(x, ord, axis), (-2, -1)), full_matrices=False)
    d[x] = unreduce(d[y] / y ** norm_exponent(p), x, axis, keepdims) * norm_direction(
        x, p, ties) if singular_value_axes(x, ord, axis) is None else np.moveaxis(np.matmul(
            factors[0] * np.expand_dims(singular_value_weights(factors[1], ord) * np.reshape(
                d[y], np.shape(factors[1])[:-1] + (1,)), -2), factors[2]), (-2, -1),
        singular_value_axes(x, ord, axis))


@tangent(np.linalg.norm)
def norm_tangent(y, x, ord=None, axis=None, keepdims=False):
    refuse_complex(x, "numpy.linalg.norm")  # |x| is not holomorphic
    # A p-norm: dy = sum(|x|^(p-1) sign(x) dx) / y^(p-1); Frobenius and the default are p = 2.
    # Of singular values: dy = sum over k of ds_k dy/ds_k, ds_k = u_k^T dx v_k.
    p = norm_power(x, ord, axis)
    ties = norm_ties(x, y, p, ord, axis, keepdims)
    factors = None if singular_value_axes(x, ord, axis) is None else np.linalg.svd(
        np.moveaxis(x, singular_value_axes(x, ord, axis), (-2, -1)), full_matrices=False)
    d[y] = np.sum(norm_direction(x, p, ties) * d[x], axis=axis, keepdims=keepdims) / y ** \
        norm_exponent(p) if singular_value_axes(x, ord, axis) is None else np.reshape(np.sum(
            singular_value_weights(factors[1], ord) * np.sum(factors[0] * np.matmul(
                np.moveaxis(d[x], singular_value_axes(x, ord, axis), (-2, -1)),
                np.swapaxes(factors[2], -1, -2)), axis=-2), axis=-1), np.shape(y))


@adjoint(np.linalg.matrix_norm)
def matrix_norm_rule(y, x, *, keepdims=False, ord="fro"):
    refuse_complex(x, "numpy.linalg.matrix_norm")  # |x| is not holomorphic
    # np.linalg.norm(x, ord, (-2, -1), keepdims)'s rule.
    p = norm_power(x, ord, (-2, -1))
    ties = norm_ties(x, y, p, ord, (-2, -1), keepdims)
    axes = singular_value_axes(x, ord, (-2, -1))
    factors = None if axes is None else np.linalg.svd(x, full_matrices=False)
    d[x] = unreduce(d[y] / y ** norm_exponent(p), x, (-2, -1), keepdims) * norm_direction(
        x, p, ties) if axes is None else np.matmul(factors[0] * np.expand_dims(
            singular_value_weights(factors[1], ord) * np.reshape(
                d[y], np.shape(factors[1])[:-1] + (1,)), -2), factors[2])


@tangent(np.linalg.matrix_norm)
def matrix_norm_tangent(y, x, *, keepdims=False, ord="fro"):
    refuse_complex(x, "numpy.linalg.matrix_norm")  # |x| is not holomorphic
    # np.linalg.norm(x, ord, (-2, -1), keepdims)'s rule.
    p = norm_power(x, ord, (-2, -1))
    ties = norm_ties(x, y, p, ord, (-2, -1), keepdims)
    axes = singular_value_axes(x, ord, (-2, -1))
    factors = None if axes is None else np.linalg.svd(x, full_matrices=False)
    d[y] = np.sum(norm_direction(x, p, ties) * d[x], axis=(-2, -1), keepdims=keepdims) / y ** \
        norm_exponent(p) if axes is None else np.reshape(np.sum(
            singular_value_weights(factors[1], ord) * np.sum(factors[0] * np.matmul(
                d[x], np.swapaxes(factors[2], -1, -2)), axis=-2), axis=-1), np.shape(y))


@adjoint(np.linalg.vector_norm)
def vector_norm_rule(y, x, axis=None, keepdims=False, ord=2):
    refuse_complex(x, "numpy.linalg.vector_norm")  # |x| is not holomorphic
    p = vector_norm_power(ord)
    ties = norm_ties(x, y, p, ord, axis, keepdims, matrix=False)
    d[x] = unreduce(d[y] / y ** norm_exponent(p), x, axis, keepdims) * norm_direction(x, p, ties)


@tangent(np.linalg.vector_norm)
def vector_norm_tangent(y, x, axis=None, keepdims=False, ord=2):
    refuse_complex(x, "numpy.linalg.vector_norm")  # |x| is not holomorphic
    p = vector_norm_power(ord)
    ties = norm_ties(x, y, p, ord, axis, keepdims, matrix=False)
    d[y] = np.sum(norm_direction(x, p, ties) * d[x], axis=axis,
                  keepdims=keepdims) / y ** norm_exponent(p)


@adjoint(np.linalg.cond)
def cond_rule(y, x, p=None):
    refuse_complex(x, "numpy.linalg.cond")  # of singular values, as svdvals
    # y = s_a / s_b, two singular values of x = U diag(s) V^T (the largest and the smallest):
    # dy/ds = (e_a - y e_b) / s_b, d[x] = U diag(g dy/ds) V^T.
    factors = np.linalg.svd(x, full_matrices=False)
    ends = cond_ends(factors[1], p)
    slopes = (ends[0] - np.expand_dims(y, -1) * ends[1]) / np.sum(
        ends[1] * factors[1], axis=-1, keepdims=True)
    d[x] = np.matmul(factors[0] * np.expand_dims(slopes * np.expand_dims(d[y], -1), -2),
                     factors[2])


@tangent(np.linalg.cond)
def cond_tangent(y, x, p=None):
    refuse_complex(x, "numpy.linalg.cond")  # of singular values, as svdvals
    # dy = (ds_a - y ds_b) / s_b, ds_k = u_k^T dx v_k.
    factors = np.linalg.svd(x, full_matrices=False)
    ends = cond_ends(factors[1], p)
    slopes = (ends[0] - np.expand_dims(y, -1) * ends[1]) / np.sum(
        ends[1] * factors[1], axis=-1, keepdims=True)
    d[y] = np.sum(slopes * np.sum(factors[0] * np.matmul(
        d[x], np.swapaxes(factors[2], -1, -2)), axis=-2), axis=-1)
