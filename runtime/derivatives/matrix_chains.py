"""Derivative helpers of matrix chains: np.linalg.multi_dot and np.linalg.matrix_power.

A chain M_0 M_1 ... M_{n-1} is linear in each matrix: its tangent is the sum over i of the
chain with M_i replaced by its tangent (`*_jvp`), and the gradient of <g, chain> in M_i is
(M_0 ... M_{i-1})^T g (M_{i+1} ... M_{n-1})^T (`*_adjoint`). Both take O(n) products: the
tangent carries the product and its derivative along the chain, the gradient carries g in
from one end and multiplies by the products of the matrices after each one. They start from
the narrower end of the chain (its rows or its columns), where the carried matrices are small:
a chain ending in a vector carries vectors, as NumPy's own order would.

matrix_power(a, n) is the chain of n copies of a (n >= 0), and (a^-1)^-n for n < 0, through
inv's derivative d(a^-1) = -a^-1 da a^-1.

Like einsum's, these helpers are multilinear, and their rules (transforms/rules/
derivative_helpers.py) are these helpers again and the `*_cross` ones: the gradient in the
matrices of the tangent (`*_adjoint_cross`), and the second-order term of the chain
(`*_jvp_cross`). Only third derivatives reach those, which have no rules: they are written with
NumPy's functions and the helpers above, whose rules autotrace finds as it follows them.
"""
from __future__ import annotations

import numpy as np

from .adjoint_products import dot_adjoint_a, dot_adjoint_b
from .structure import zeros_like
from ..devices import array_module


def _t(matrix):
    return array_module(matrix).swapaxes(matrix, -1, -2)


def _replaced(items, k, value) -> list:
    return [value if i == k else item for i, item in enumerate(items)]


def _chain_adjoint(g, matrices) -> list:
    """The gradients of <g, M_0 @ ... @ M_{n-1}> in each (stacks of) matrix M_i."""
    xp = array_module(g)
    if np.shape(g)[-1] > np.shape(g)[-2]:  # fewer rows than columns: carry from the right
        return [_t(grad) for grad in reversed(_chain_adjoint(_t(g), [_t(m) for m in
                                                                      reversed(matrices)]))]
    suffixes = [None] * (len(matrices) + 1)  # suffixes[i] = M_i @ ... @ M_{n-1}
    for i in range(len(matrices) - 1, 0, -1):
        after = suffixes[i + 1]
        suffixes[i] = matrices[i] if after is None else xp.matmul(matrices[i], after)
    gradients, carried = [], g  # carried = (M_0 ... M_{i-1})^T g
    for i, matrix in enumerate(matrices):
        after = suffixes[i + 1]
        gradients.append(carried if after is None else xp.matmul(carried, _t(after)))
        if after is not None:
            carried = xp.matmul(_t(matrix), carried)
    return gradients


def _chain_jvp(tangents, matrices):
    """The derivative of M_0 @ ... @ M_{n-1} along `tangents` (None: a matrix held fixed)."""
    xp = array_module(matrices[0])
    rows, columns = np.shape(matrices[0])[-2], np.shape(matrices[-1])[-1]
    if rows < columns:  # carry from the left: the chain of the transposes, reversed
        return _t(_chain_jvp([None if t is None else _t(t) for t in reversed(tangents)],
                             [_t(m) for m in reversed(matrices)]))
    product, derivative = matrices[-1], tangents[-1]
    for matrix, tangent in zip(reversed(matrices[:-1]), reversed(tangents[:-1])):
        moved = None if derivative is None else xp.matmul(matrix, derivative)
        if tangent is not None:
            moved = xp.matmul(tangent, product) if moved is None else \
                moved + xp.matmul(tangent, product)
        derivative = moved
        product = xp.matmul(matrix, product)
    return zeros_like(product) if derivative is None else derivative


# multi_dot: a chain of 2-d arrays, whose first may be a vector (a row) and last a vector (a
# column); of two arrays, np.dot of any.

def _chain_matrices(arrays) -> list:
    """multi_dot's arrays as matrices, the first a row where it is a vector, the last a column."""
    xp = array_module(arrays[0])
    first, *middle, last = arrays
    first = xp.reshape(first, (1, -1)) if np.ndim(first) == 1 else first
    last = xp.reshape(last, (-1, 1)) if np.ndim(last) == 1 else last
    return [first, *middle, last]


def multi_dot_adjoint(g, arrays) -> list:
    """The gradients of <g, np.linalg.multi_dot(arrays)> in each array: a list."""
    if len(arrays) == 2:
        return [dot_adjoint_a(g, *arrays), dot_adjoint_b(g, *arrays)]
    matrices = _chain_matrices(arrays)
    g = array_module(matrices[0]).reshape(
        g, (np.shape(matrices[0])[0], np.shape(matrices[-1])[1]))
    gradients = _chain_adjoint(g, matrices)
    return [array_module(grad).reshape(grad, np.shape(array)) if np.ndim(array) == 1 else grad
            for grad, array in zip(gradients, arrays)]


def multi_dot_jvp(tangents, arrays):
    """The derivative of np.linalg.multi_dot(arrays) in the direction `tangents`."""
    if len(arrays) == 2:
        xp = array_module(arrays[0])
        return xp.dot(tangents[0], arrays[1]) + xp.dot(arrays[0], tangents[1])
    product = _chain_jvp(_chain_matrices(tangents), _chain_matrices(arrays))
    shape = np.shape(arrays[0])[:-1] + np.shape(arrays[-1])[1:]  # as multi_dot's result
    return array_module(product).reshape(product, shape)


def multi_dot_adjoint_cross(g, tangents, arrays) -> list:
    """The gradients in the arrays of <g, multi_dot_jvp(tangents, arrays)>."""
    total = [0.0] * len(arrays)
    for j, tangent in enumerate(tangents):
        gradients = multi_dot_adjoint(g, _replaced(arrays, j, tangent))
        total = [sum_ if k == j else sum_ + grad
                 for k, (sum_, grad) in enumerate(zip(total, gradients))]
    return total


def multi_dot_jvp_cross(first, second, arrays):
    """The second-order term of multi_dot: the sum over pairs j != k of the chain with array j
    replaced by first[j] and k by second[k]."""
    total = None
    for j, tangent in enumerate(first):
        others = _replaced(second, j, zeros_like(second[j]))
        term = multi_dot_jvp(others, _replaced(arrays, j, tangent))
        total = term if total is None else total + term
    return total


# matrix_power.

def _inverse(a):
    return array_module(a).linalg.inv(a)


def matrix_power_adjoint(g, a, n: int):
    """The gradient of <g, np.linalg.matrix_power(a, n)> in a."""
    if n < 0:  # (a^-1)^m with m = -n: through inv's rule
        inverse = _inverse(a)
        inner = matrix_power_adjoint(g, inverse, -n)
        return -array_module(a).matmul(_t(inverse), array_module(a).matmul(inner, _t(inverse)))
    if n == 0:
        return zeros_like(a)
    gradients = _chain_adjoint(g, [a] * n)
    total = gradients[0]
    for gradient in gradients[1:]:
        total = total + gradient
    return total


def matrix_power_jvp(tangent, a, n: int):
    """The derivative of np.linalg.matrix_power(a, n) in the direction `tangent`."""
    xp = array_module(a)
    if n < 0:
        inverse = _inverse(a)
        return matrix_power_jvp(-xp.matmul(inverse, xp.matmul(tangent, inverse)), inverse, -n)
    if n == 0:
        return zeros_like(a)
    return _chain_jvp([tangent] * n, [a] * n)


def matrix_power_adjoint_cross(g, tangent, a, n: int):
    """The gradient in a of <g, matrix_power_jvp(tangent, a, n)>."""
    if n >= 0:
        return _power_adjoint_cross(g, tangent, a, n)
    # With b = a^-1 and k = -b t b: <g, D(b^m)[k]> moves with b at fixed k (the cross term of
    # b^m) and through k; then from b to a as inv's gradient does.
    inverse = np.linalg.inv(a)
    moved = -np.matmul(inverse, np.matmul(tangent, inverse))
    through_k = matrix_power_adjoint(g, inverse, -n)
    in_inverse = (_power_adjoint_cross(g, moved, inverse, -n)
                  - np.matmul(through_k, np.swapaxes(np.matmul(tangent, inverse), -1, -2))
                  - np.matmul(np.swapaxes(np.matmul(inverse, tangent), -1, -2), through_k))
    inverse_t = np.swapaxes(inverse, -1, -2)
    return -np.matmul(inverse_t, np.matmul(in_inverse, inverse_t))


def _power_adjoint_cross(g, tangent, a, n: int):
    """matrix_power_adjoint_cross for n >= 0: the sum over j of the gradients in a of
    <g, a^j t a^(n-1-j)>, through a^j and through a^(n-1-j)."""
    total = zeros_like(a)
    for j in range(n):
        before = np.linalg.matrix_power(a, j)
        after = np.linalg.matrix_power(a, n - 1 - j)
        in_before = np.matmul(g, np.swapaxes(np.matmul(tangent, after), -1, -2))
        in_after = np.matmul(np.swapaxes(np.matmul(before, tangent), -1, -2), g)
        total = (total + matrix_power_adjoint(in_before, a, j)
                 + matrix_power_adjoint(in_after, a, n - 1 - j))
    return total


def matrix_power_jvp_cross(first, second, a, n: int):
    """The second derivative of np.linalg.matrix_power(a, n) along `first` and `second`."""
    if n >= 0:
        return _power_jvp_cross(first, second, a, n)
    # b = a^-1: D^2 b[t, s] = b t b s b + b s b t b, with Db[t] = -b t b.
    inverse = np.linalg.inv(a)
    moved_first = -np.matmul(inverse, np.matmul(first, inverse))
    moved_second = -np.matmul(inverse, np.matmul(second, inverse))
    both = (np.matmul(moved_first, np.matmul(a, moved_second))
            + np.matmul(moved_second, np.matmul(a, moved_first)))
    return (_power_jvp_cross(moved_first, moved_second, inverse, -n)
            + matrix_power_jvp(both, inverse, -n))


def _power_jvp_cross(first, second, a, n: int):
    """matrix_power_jvp_cross for n >= 0: the derivative along `second` of the sum over j of
    a^j first a^(n-1-j)."""
    total = zeros_like(a)
    for j in range(n):
        before = np.linalg.matrix_power(a, j)
        after = np.linalg.matrix_power(a, n - 1 - j)
        total = (total + np.matmul(matrix_power_jvp(second, a, j), np.matmul(first, after))
                 + np.matmul(before, np.matmul(first, matrix_power_jvp(second, a, n - 1 - j))))
    return total
