"""Derivative rules of reductions and cumulative functions, both modes side by side.

cumsum is linear, its own tangent (declarations.py); so are sum, mean and diff, whose tangents
are written beside their adjoints for the arguments that fold away (where=, prepend=). Parameters that follow
`out` in NumPy's signature are keyword-only here, so a call that passes `out` (which no rule
supports) fails to bind instead of binding `out` to `keepdims`. A `dtype` argument is not applied
to tangents. Inputs may be lists of floats, so tangents divide with np.divide (a list has no `/`).

Ties: max/min/amax/amin split the gradient (and the tangent) evenly among the elements that
attain the extremum (the same convention as maximum/minimum). sort sends each sorted gradient back
to the element that landed there, and carries each tangent along with its element (a stable
order among ties).
Zeros: prod and cumprod are exact at zeros, to any order: they multiply the other elements,
never divide (the products before and after each element, runtime/derivatives/adjoint_ops.py).
"""
import numpy as np

from ...runtime.derivatives.adjoint_ops import (broadcast_like, diff_pad_width, diff_part,
                                                extremum_weights, flat_axis, initial_weight,
                                                reduced_last, reduced_last_back, reduced_size,
                                                sort_like,
                                                unbroadcast, unreduce, unsort)
from ...runtime.derivatives.real_only import refuse_complex
from ...runtime.derivatives.scans import (forward_scan, products_after, products_before,
                                          reverse_scan, shift)
from .core import adjoint, d, tangent
from .declarations import linear


# initial=c: the reduction starts from c, which each result element holds once (sum), as a
# factor (prod), or as one more candidate (max, min). Without it the templates fold to those
# of the reduction alone (`initial is None`).

# where=w (sum, mean): the elements w leaves out are not in the result, and get no gradient;
# a mean divides by the count of those it keeps. Without it (True) the templates fold to those
# of the whole array.

@adjoint(np.sum)
def sum_rule(y, a, axis=None, dtype=None, *, keepdims=False, initial=None, where=True):
    d[a] = unreduce(d[y], a, axis, keepdims) if where is True else np.where(
        where, unreduce(d[y], a, axis, keepdims), 0.0)
    d[initial] = np.sum(d[y])


@tangent(np.sum)
def sum_tangent(y, a, axis=None, dtype=None, *, keepdims=False, initial=None, where=True):
    d[y] = (np.sum(d[a], axis=axis, keepdims=keepdims) if initial is None else np.sum(
        d[a], axis=axis, keepdims=keepdims) + d[initial]) if where is True else (
        np.sum(d[a], axis=axis, keepdims=keepdims, where=where) if initial is None else np.sum(
            d[a], axis=axis, keepdims=keepdims, where=where) + d[initial])


@adjoint(np.mean)
def mean_rule(y, a, axis=None, dtype=None, *, keepdims=False, where=True):
    d[a] = unreduce(d[y] / reduced_size(a, axis), a, axis, keepdims) if where is True else (
        np.where(where, unreduce(d[y] / reduced_size(a, axis, where, keepdims), a, axis,
                                 keepdims), 0.0))


@tangent(np.mean)
def mean_tangent(y, a, axis=None, dtype=None, *, keepdims=False, where=True):
    d[y] = np.mean(d[a], axis=axis, keepdims=keepdims) if where is True else np.mean(
        d[a], axis=axis, keepdims=keepdims, where=where)


@adjoint(np.prod)
def prod_rule(y, a, axis=None, dtype=None, *, keepdims=False, initial=None):
    # Each element's factor is the product of the others: those before it times those after.
    rows = reduced_last(a, axis)
    others = reduced_last_back(products_before(rows) * products_after(rows), a, axis)
    d[a] = unreduce(d[y] if initial is None else d[y] * initial, a, axis, keepdims) * others
    d[initial] = np.sum(d[y] * np.prod(a, axis=axis, keepdims=keepdims))


@tangent(np.prod)
def prod_tangent(y, a, axis=None, dtype=None, *, keepdims=False, initial=None):
    rows = reduced_last(a, axis)
    others = reduced_last_back(products_before(rows) * products_after(rows), a, axis)
    d[y] = np.sum(d[a] * others, axis=axis, keepdims=keepdims) if initial is None else (
        np.sum(d[a] * others, axis=axis, keepdims=keepdims) * initial
        + d[initial] * np.prod(a, axis=axis, keepdims=keepdims))


@adjoint(np.max, np.amax, np.min, np.amin)
def max_rule(y, a, axis=None, *, keepdims=False, initial=None):
    weights = extremum_weights(a, y, axis, keepdims) if initial is None else extremum_weights(
        a, y, axis, keepdims, initial)
    d[a] = unreduce(d[y], a, axis, keepdims) * weights
    d[initial] = np.sum(d[y] * initial_weight(a, y, axis, keepdims, initial))


@tangent(np.max, np.amax, np.min, np.amin)
def max_tangent(y, a, axis=None, *, keepdims=False, initial=None):
    weights = extremum_weights(a, y, axis, keepdims) if initial is None else extremum_weights(
        a, y, axis, keepdims, initial)
    d[y] = np.sum(d[a] * weights, axis=axis, keepdims=keepdims) if initial is None else (
        np.sum(d[a] * weights, axis=axis, keepdims=keepdims)
        + d[initial] * initial_weight(a, y, axis, keepdims, initial))


@adjoint(np.var)
def var_rule(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    refuse_complex(a, "numpy.var")  # |a - mean|^2 is not holomorphic
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[a] = unreduce(d[y] * (2.0 / (reduced_size(a, axis) - ddof)), a, axis, keepdims) * centered


@tangent(np.var)
def var_tangent(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    refuse_complex(a, "numpy.var")  # |a - mean|^2 is not holomorphic
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[y] = (np.sum(centered * d[a], axis=axis, keepdims=keepdims)
            * (2.0 / (reduced_size(a, axis) - ddof)))


@adjoint(np.std)
def std_rule(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    refuse_complex(a, "numpy.std")  # |a - mean|^2 is not holomorphic
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[a] = unreduce(d[y] / (y * (reduced_size(a, axis) - ddof)), a, axis, keepdims) * centered


@tangent(np.std)
def std_tangent(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    refuse_complex(a, "numpy.std")  # |a - mean|^2 is not holomorphic
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[y] = (np.sum(centered * d[a], axis=axis, keepdims=keepdims)
            / (y * (reduced_size(a, axis) - ddof)))


# np.logaddexp.reduce: y = log(sum(exp(a))), so each term's gradient is its share of the sum,
# exp(a - y), an initial's too (np.logaddexp2's: log2 and exp2). The elements where= leaves out
# get none.

@adjoint(np.logaddexp.reduce)
def logaddexp_reduce_rule(y, array, axis=0, dtype=None, *, keepdims=False, initial=None,
                          where=True):
    shares = np.exp(array - unreduce(y, array, axis, keepdims))
    d[array] = unreduce(d[y], array, axis, keepdims) * (shares if where is True else np.where(
        where, shares, 0.0))
    d[initial] = 0.0 if initial is None else np.sum(d[y] * np.exp(initial - y))


@tangent(np.logaddexp.reduce)
def logaddexp_reduce_tangent(y, array, axis=0, dtype=None, *, keepdims=False, initial=None,
                             where=True):
    shares = np.exp(array - unreduce(y, array, axis, keepdims))
    d[y] = (np.sum(d[array] * shares, axis=axis, keepdims=keepdims) if where is True else np.sum(
        d[array] * shares, axis=axis, keepdims=keepdims, where=where)) + (
        0.0 if initial is None else d[initial] * np.exp(initial - y))


@adjoint(np.logaddexp2.reduce)
def logaddexp2_reduce_rule(y, array, axis=0, dtype=None, *, keepdims=False, initial=None,
                           where=True):
    shares = np.exp2(array - unreduce(y, array, axis, keepdims))
    d[array] = unreduce(d[y], array, axis, keepdims) * (shares if where is True else np.where(
        where, shares, 0.0))
    d[initial] = 0.0 if initial is None else np.sum(d[y] * np.exp2(initial - y))


@tangent(np.logaddexp2.reduce)
def logaddexp2_reduce_tangent(y, array, axis=0, dtype=None, *, keepdims=False, initial=None,
                              where=True):
    shares = np.exp2(array - unreduce(y, array, axis, keepdims))
    d[y] = (np.sum(d[array] * shares, axis=axis, keepdims=keepdims) if where is True else np.sum(
        d[array] * shares, axis=axis, keepdims=keepdims, where=where)) + (
        0.0 if initial is None else d[initial] * np.exp2(initial - y))


@linear(np.cumsum, call="a, axis")
def cumsum_rule(y, a, axis=None, dtype=None):
    # A cumulative sum read backwards; with axis=None the input was flattened.
    along = flat_axis(axis)
    d[a] = np.reshape(np.flip(np.cumsum(np.flip(d[y], along), along), along), np.shape(a))


@adjoint(np.cumprod)
def cumprod_rule(y, a, axis=None, dtype=None):
    # d y_i / d a_k = (a_0 ... a_{k-1}) (a_{k+1} ... a_i) for k <= i: the exclusive product
    # times a recurrence over the later gradients, with no division (exact at zeros).
    along = flat_axis(axis)
    line = np.reshape(a, np.shape(y))  # flattened when axis is None
    d[a] = np.reshape(shift(y, along, 1, 1.0) * reverse_scan(d[y], line, along), np.shape(a))


@tangent(np.cumprod)
def cumprod_tangent(y, a, axis=None, dtype=None):
    # dy_i = a_i dy_{i-1} + y_{i-1} da_i, run as a recurrence: no division (exact at zeros).
    along = flat_axis(axis)
    line = np.reshape(a, np.shape(y))  # flattened when axis is None
    d[y] = forward_scan(shift(y, along, 1, 1.0) * np.reshape(d[a], np.shape(y)), line, along)


# prepend=p, append=q: NumPy takes the differences of `a` with p and q joined on along the
# axis (a number as a slab of it, one element thick). Without them (None) the templates fold to
# those of `a` alone.

@adjoint(np.diff)
def diff_rule(y, a, n=1, axis=-1, prepend=None, append=None):
    # The adjoint of one difference is minus a difference of the zero-padded gradient: the
    # gradient of what was joined, whose parts are those of p, a and q.
    joined = np.diff(np.pad(d[y], diff_pad_width(y, n, axis)), n, axis) * (-1.0) ** n
    d[a] = joined if prepend is None and append is None else np.take(
        joined, diff_part(a, axis, prepend, append, 1), axis)
    d[prepend] = unbroadcast(np.take(joined, diff_part(a, axis, prepend, append, 0), axis),
                             prepend)
    d[append] = unbroadcast(np.take(joined, diff_part(a, axis, prepend, append, 2), axis),
                            append)


@tangent(np.diff)
def diff_tangent(y, a, n=1, axis=-1, prepend=None, append=None):
    # (the tangent of a constant p or q may be a zero number: it is joined on in p's shape)
    d[y] = np.diff(d[a], n, axis) if prepend is None and append is None else (
        np.diff(d[a], n, axis, append=broadcast_like(d[append], append)) if prepend is None
        else np.diff(d[a], n, axis, prepend=broadcast_like(d[prepend], prepend)) if append is None
        else np.diff(d[a], n, axis, prepend=broadcast_like(d[prepend], prepend),
                     append=broadcast_like(d[append], append)))


@adjoint(np.sort)
def sort_rule(y, a, axis=-1, kind=None, order=None, *, stable=None):
    d[a] = unsort(d[y], a, axis)


@tangent(np.sort)
def sort_tangent(y, a, axis=-1, kind=None, order=None, *, stable=None):
    d[y] = sort_like(d[a], a, axis)


@linear(np.bincount)
def bincount_rule(y, x, weights=None, minlength=0):
    # y[k] sums the weights of the places where x is k: each weight's gradient is its bin's.
    d[weights] = np.take(d[y], x)
