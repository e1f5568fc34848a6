"""Adjoint helpers for products: matmul, dot, inner, tensordot, kron and einsum.

Each `*_adjoint_a(g, a, b)` is the gradient of <g, B(a, b)> with respect to a (and `_b` with
respect to b), written once here so rules stay one line.
"""
from __future__ import annotations

import functools
import numbers
import string

import numpy as np

from .adjoint_ops import _as_float, _sum_to_shape, unbroadcast
from .dtypes import real_dtype
from .objects import defines_its_own, operator_on_object
from ..devices import array_module
from ..primitives.index import as_array
from ..primitives.outer_matmul import matmul_of_one_term
from ..primitives.memory import is_users_object


def _reading_lists(adjoint):
    """`adjoint(g, a, b, ...)` with a list or tuple `a` or `b` read as the array NumPy makes
    of it, as the product does (`np.dot(xs, xs)` of a list of lists)."""
    @functools.wraps(adjoint)
    def reading(g, a, b, *options, **keywords):
        if type(a) is np.ndarray and type(b) is np.ndarray:  # the common case, as it is
            return adjoint(g, a, b, *options, **keywords)
        for operand in (a, b):
            if type(operand) is not np.ndarray and is_users_object(operand) and \
                    not hasattr(operand, "__array__") and not _is_number(operand):
                # (`v @ w`, an operator of v's class)
                raise operator_on_object(f"an operand of the product is a "
                                         f"{type(operand).__name__}")
        return adjoint(g, as_array(a), as_array(b), *options, **keywords)
    return reading


def _is_number(value) -> bool:
    """Whether `value`, of a class of the user's, is a number that the products read as NumPy
    does (a subclass of float, an IntEnum's member): one whose class defines no product
    operator of its own, which `v @ w` would call."""
    return isinstance(value, (numbers.Number, np.generic)) and \
        not defines_its_own(type(value), ("__matmul__", "__rmatmul__"))


# Bilinear products. For y = B(a, b), `*_adjoint_a(g, a, b)` is the gradient of <g, B(a, b)> in
# a, and `*_adjoint_b` in b; `a` (or `b`) there only supplies a shape.

@_reading_lists
def matmul_adjoint_a(g, a, b):
    """The gradient of <g, a @ b> with respect to a."""
    if type(g) is np.ndarray and type(a) is type(b) is np.ndarray and b.ndim == 2 \
            and a.ndim <= 2:
        # the common cases, without looking further (a column times a row where b has one
        # column: a layer of one output)
        return matmul_of_one_term(g, b.T) if g.ndim == 2 else g @ b.T
    xp = array_module(g)
    ndim_a, ndim_b = np.ndim(a), np.ndim(b)
    if ndim_b == 2 and ndim_a <= 2:  # the common cases: matrix or vector times matrix
        return xp.matmul(g, b.T)
    if ndim_b == 1:
        if ndim_a == 2:
            return xp.multiply.outer(g, b)
        return g * b if ndim_a == 1 else _sum_to_shape(xp.expand_dims(g, -1) * b, np.shape(a))
    if ndim_a == 1:
        return _sum_to_shape(xp.matmul(b, xp.expand_dims(g, -1))[..., 0], np.shape(a))
    return _sum_to_shape(xp.matmul(g, xp.swapaxes(b, -1, -2)), np.shape(a))


@_reading_lists
def matmul_adjoint_b(g, a, b):
    """The gradient of <g, a @ b> with respect to b."""
    if type(g) is np.ndarray and type(a) is type(b) is np.ndarray and a.ndim == 2 \
            and b.ndim <= 2:
        # the common cases, without looking further (a column times a row where a has one
        # row: a layer's weights at batch 1)
        return matmul_of_one_term(a.T, g) if g.ndim == 2 else a.T @ g
    xp = array_module(g)
    ndim_a, ndim_b = np.ndim(a), np.ndim(b)
    if ndim_a == 2 and ndim_b <= 2:  # the common cases: matrix times matrix or vector
        return xp.matmul(a.T, g)
    if ndim_a == 1:
        if ndim_b == 1:
            return g * a
        return _sum_to_shape(xp.expand_dims(a, -1) * xp.expand_dims(g, -2), np.shape(b))
    if ndim_b == 1:
        return _sum_to_shape(xp.matmul(xp.swapaxes(a, -1, -2), xp.expand_dims(g, -1))[..., 0],
                             np.shape(b))
    if ndim_b == 2 and np.shape(g)[:-1] == np.shape(a)[:-1]:
        # a stack of matrices times one matrix (a layer applied to (batch, tokens, features)):
        # the sum over the stack of a_i.T @ g_i is one product of the rows stacked, one BLAS
        # call and no (stack, k, m) temporary
        return xp.matmul(xp.reshape(a, (-1, np.shape(a)[-1])).T,
                         xp.reshape(g, (-1, np.shape(g)[-1])))
    return _sum_to_shape(xp.matmul(xp.swapaxes(a, -1, -2), g), np.shape(b))


def _tensordot(xp, a, b, axes):
    """`xp.tensordot(a, b, axes)` with the axes as tuples: CuPy takes ((), ()) for a 0-d
    operand, not ([], [])."""
    return xp.tensordot(a, b, axes=(tuple(axes[0]), tuple(axes[1])))


def _matrix_product(xp, a, b):
    """`a @ b` of two matrices of the array library `xp` (NumPy's: a column times a row by
    einsum, which is NumPy's matmul bit for bit, and sooner)."""
    if type(a) is np.ndarray and type(b) is np.ndarray:
        return matmul_of_one_term(a, b)
    return xp.matmul(a, b)


@_reading_lists
def dot_adjoint_a(g, a, b):
    """The gradient of <g, np.dot(a, b)> with respect to a."""
    xp = array_module(g)
    ndim_a, ndim_b = np.ndim(a), np.ndim(b)
    if ndim_a == 0 or ndim_b == 0:
        return unbroadcast(g * b, a)
    if ndim_a == 2 and ndim_b == 2:
        return _matrix_product(xp, g, b.T)
    if ndim_b == 1:
        return xp.expand_dims(g, -1) * b
    free_b = [i for i in range(ndim_b) if i != ndim_b - 2]
    return _tensordot(xp, g, b, (list(range(ndim_a - 1, g.ndim)), free_b))


@_reading_lists
def dot_adjoint_b(g, a, b):
    """The gradient of <g, np.dot(a, b)> with respect to b."""
    xp = array_module(g)
    ndim_a, ndim_b = np.ndim(a), np.ndim(b)
    if ndim_a == 0 or ndim_b == 0:
        return unbroadcast(g * a, b)
    if ndim_a == 2 and ndim_b == 2:
        return _matrix_product(xp, a.T, g)
    out = _tensordot(xp, a, g, (list(range(ndim_a - 1)), list(range(ndim_a - 1))))
    return xp.moveaxis(out, 0, ndim_b - 2) if ndim_b >= 2 else out


@_reading_lists
def inner_adjoint_a(g, a, b):
    """The gradient of <g, np.inner(a, b)> with respect to a."""
    xp = array_module(g)
    ndim_a, ndim_b = np.ndim(a), np.ndim(b)
    if ndim_a == 0 or ndim_b == 0:
        return unbroadcast(g * b, a)
    return _tensordot(xp, g, b, (list(range(ndim_a - 1, ndim_a + ndim_b - 2)),
                                    list(range(ndim_b - 1))))


@_reading_lists
def inner_adjoint_b(g, a, b):
    """The gradient of <g, np.inner(a, b)> with respect to b."""
    xp = array_module(g)
    ndim_a, ndim_b = np.ndim(a), np.ndim(b)
    if ndim_a == 0 or ndim_b == 0:
        return unbroadcast(g * a, b)
    return _tensordot(xp, g, a, (list(range(ndim_a - 1)), list(range(ndim_a - 1))))


def _tensordot_axes(ndim_a, ndim_b, axes):
    if np.ndim(axes) == 0:
        return list(range(ndim_a - axes, ndim_a)), list(range(axes))
    axes_a, axes_b = axes
    axes_a = [axes_a] if np.ndim(axes_a) == 0 else list(axes_a)
    axes_b = [axes_b] if np.ndim(axes_b) == 0 else list(axes_b)
    return [i % ndim_a for i in axes_a], [i % ndim_b for i in axes_b]


@_reading_lists
def tensordot_adjoint_a(g, a, b, axes=2):
    """The gradient of <g, np.tensordot(a, b, axes)> with respect to a."""
    xp = array_module(g)
    ndim_a, ndim_b = np.ndim(a), np.ndim(b)
    summed_a, summed_b = _tensordot_axes(ndim_a, ndim_b, axes)
    free_a = [i for i in range(ndim_a) if i not in summed_a]
    free_b = [i for i in range(ndim_b) if i not in summed_b]
    out = _tensordot(xp, g, b, (list(range(len(free_a), xp.ndim(g))), free_b))
    # out's axes: a's free axes, then the partners of b's summed axes in b's order.
    order = free_a + [summed_a[summed_b.index(j)] for j in sorted(summed_b)]
    return xp.transpose(out, [order.index(i) for i in range(ndim_a)])


@_reading_lists
def tensordot_adjoint_b(g, a, b, axes=2):
    """The gradient of <g, np.tensordot(a, b, axes)> with respect to b."""
    xp = array_module(g)
    ndim_a, ndim_b = np.ndim(a), np.ndim(b)
    summed_a, summed_b = _tensordot_axes(ndim_a, ndim_b, axes)
    free_a = [i for i in range(ndim_a) if i not in summed_a]
    free_b = [i for i in range(ndim_b) if i not in summed_b]
    out = _tensordot(xp, a, g, (free_a, list(range(len(free_a)))))
    # out's axes: the partners of a's summed axes in a's order, then b's free axes.
    order = [summed_b[summed_a.index(i)] for i in sorted(summed_a)] + free_b
    return xp.transpose(out, [order.index(i) for i in range(ndim_b)])


def _kron_adjoint(g, a, b, of_a):
    xp = array_module(g)
    shape_a, shape_b = np.shape(a), np.shape(b)
    ndim = max(len(shape_a), len(shape_b))
    full_a = (1,) * (ndim - len(shape_a)) + tuple(shape_a)
    full_b = (1,) * (ndim - len(shape_b)) + tuple(shape_b)
    blocks = xp.reshape(g, [n for pair in zip(full_a, full_b) for n in pair])
    other = xp.reshape(b if of_a else a, full_b if of_a else full_a)
    summed = list(range(1, 2 * ndim, 2)) if of_a else list(range(0, 2 * ndim, 2))
    out = _tensordot(xp, blocks, other, (summed, list(range(ndim))))
    target = a if of_a else b
    return _as_float(out) if type(target) is float else xp.reshape(out, np.shape(target))


@_reading_lists
def kron_adjoint_a(g, a, b):
    """The gradient of <g, np.kron(a, b)> with respect to a."""
    return _kron_adjoint(g, a, b, True)


@_reading_lists
def kron_adjoint_b(g, a, b):
    """The gradient of <g, np.kron(a, b)> with respect to b."""
    return _kron_adjoint(g, a, b, False)


def _cross_adjoint(g, a, b, axisa, axisb, axisc, axis, of_a):
    """The gradient of <g, np.cross(a, b, ...)> in a (of_a) or in b: <g, a x b> = <a, b x g> =
    <b, g x a>, with a 2-vector taken as a 3-vector whose third item is 0 (as NumPy does:
    two 2-vectors make the third item of the product alone, one number)."""
    xp = array_module(g)
    if axis is not None:
        axisa = axisb = axisc = axis
    a_last, b_last = xp.moveaxis(a, axisa, -1), xp.moveaxis(b, axisb, -1)
    if a_last.shape[-1] == 2 and b_last.shape[-1] == 2:
        g3 = xp.stack([xp.zeros_like(g), xp.zeros_like(g), g], axis=-1)
    else:
        g3 = xp.moveaxis(g, axisc, -1)
    if of_a:
        gradient = xp.cross(_three_vectors(xp, b_last), g3)[..., :a_last.shape[-1]]
        return unbroadcast(xp.moveaxis(gradient, -1, axisa), a)
    gradient = xp.cross(g3, _three_vectors(xp, a_last))[..., :b_last.shape[-1]]
    return unbroadcast(xp.moveaxis(gradient, -1, axisb), b)


@_reading_lists
def cross_adjoint_a(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The gradient of <g, np.cross(a, b, ...)> with respect to a."""
    return _cross_adjoint(g, a, b, axisa, axisb, axisc, axis, True)


@_reading_lists
def cross_adjoint_b(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The gradient of <g, np.cross(a, b, ...)> with respect to b."""
    return _cross_adjoint(g, a, b, axisa, axisb, axisc, axis, False)


def _three_vectors(xp, vectors):
    """Vectors along the last axis, a 2-vector given a third item 0."""
    if vectors.shape[-1] == 3:
        return vectors
    return xp.concatenate([vectors, xp.zeros_like(vectors[..., :1])], axis=-1)


# einsum: the gradient for one operand is another einsum, of the output gradient and the other
# operands, written with explicit subscripts.

def einsum_sublists_refused(subscripts) -> None:
    """Raises for np.einsum's sublist form whose sublists the source does not write as lists
    of ints (transforms/front/method_receivers.py writes those as the subscripts string):
    its first argument is an operand, and the rules take the subscripts string alone (which
    gets no gradient: None)."""
    if not isinstance(subscripts, str):
        raise NotImplementedError(
            "np.einsum's sublist form has derivative rules where each sublist is a list of "
            "ints written in the call, as in np.einsum(a, [0, 1], b, [1], [0]), and here one "
            "is not: write the sublists so, or the subscripts string (np.einsum('ij,j->i', a, "
            "b))")


def _einsum_subscripts(subscripts, operands):
    """Input subscripts and output subscript, with '...' written out as letters."""
    einsum_sublists_refused(subscripts)
    subscripts = subscripts.replace(" ", "")
    inputs, arrow, output = subscripts.partition("->")
    specs = inputs.split(",")
    unused = [c for c in string.ascii_letters if c not in subscripts]
    ellipsis_ndim = max((np.ndim(x) - len(s) + 3 for s, x in zip(specs, operands)
                         if "..." in s), default=0)
    broadcast = "".join(unused[:ellipsis_ndim])
    explicit = [s.replace("...", broadcast[len(broadcast) - (np.ndim(x) - len(s) + 3):])
                for s, x in zip(specs, operands)]
    if not arrow:
        letters = "".join(explicit)
        output = ("..." if "..." in inputs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1 and c not in broadcast))
    return explicit, output.replace("...", broadcast), unused[ellipsis_ndim:]


def _einsum_operand_gradient(g, specs, output, spare, operands, k):
    xp = array_module(g)
    target = specs[k]
    terms = [(s, x) for i, (s, x) in enumerate(zip(specs, operands)) if i != k]
    terms.append((output, g))
    sizes = {}
    for s, x in zip(specs, operands):
        for c, n in zip(s, np.shape(x)):
            sizes[c] = max(sizes.get(c, 1), n)
    seen = "".join(s for s, _ in terms)
    # Ones of the gradient's precision (of the operand's, for a Python float gradient):
    # float64 ones would make a float32 gradient float64.
    ones = real_dtype(g if hasattr(g, "dtype") else operands[k])
    for c in dict.fromkeys(target):
        if c not in seen:  # summed over in this operand alone: it comes back by broadcasting
            terms.append((c, xp.ones(sizes[c], dtype=ones)))
    written, spare = "", list(spare)
    for c in target:
        if c in written:  # a repeated letter is a diagonal: put the gradient on it
            fresh = spare.pop(0)
            terms.append((c + fresh, xp.eye(sizes[c], dtype=ones)))
            c = fresh
        written += c
    out = xp.einsum(",".join(s for s, _ in terms) + "->" + written, *[x for _, x in terms])
    return unbroadcast(out, operands[k])


def einsum_adjoint(g, subscripts, operands):
    """The gradients of <g, np.einsum(subscripts, *operands)> in each operand: a list."""
    specs, output, spare = _einsum_subscripts(subscripts, operands)
    return [_einsum_operand_gradient(g, specs, output, spare, operands, k)
            for k in range(len(operands))]


def _replaced(operands, k, value):
    return tuple(value if i == k else x for i, x in enumerate(operands))


def einsum_jvp(subscripts, tangents, operands):
    """The derivative of np.einsum(subscripts, *operands) in the direction `tangents`."""
    xp = array_module(operands[0])
    einsum_sublists_refused(subscripts)
    return sum(xp.einsum(subscripts, *_replaced(operands, k, t)) for k, t in enumerate(tangents))


def einsum_adjoint_cross(g, tangents, subscripts, operands):
    """The gradients in the operands of <g, einsum_jvp(subscripts, tangents, operands)>."""
    total = [0.0] * len(operands)
    for j, t in enumerate(tangents):
        grads = einsum_adjoint(g, subscripts, _replaced(operands, j, t))
        total = [acc if k == j else acc + grad for k, (acc, grad) in enumerate(zip(total, grads))]
    return [unbroadcast(t, x) for t, x in zip(total, operands)]
