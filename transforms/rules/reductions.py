"""Derivative rules of reductions and cumulative functions, both modes side by side.

sum, mean and cumsum are linear, their own tangents (declarations.py). Parameters that follow
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

from ...runtime.derivatives.adjoint_ops import (diff_pad_width, extremum_weights, flat_axis,
                                                initial_weight, reduced_last,
                                                reduced_last_back, reduced_size, sort_like,
                                                unreduce, unsort)
from ...runtime.derivatives.scans import (forward_scan, products_after, products_before,
                                          reverse_scan, shift)
from .core import adjoint, d, tangent
from .declarations import linear


# initial=c: the reduction starts from c, which each result element holds once (sum), as a
# factor (prod), or as one more candidate (max, min). Without it the templates fold to those
# of the reduction alone (`initial is None`).

@adjoint(np.sum)
def sum_rule(y, a, axis=None, dtype=None, *, keepdims=False, initial=None):
    d[a] = unreduce(d[y], a, axis, keepdims)
    d[initial] = np.sum(d[y])


@tangent(np.sum)
def sum_tangent(y, a, axis=None, dtype=None, *, keepdims=False, initial=None):
    d[y] = np.sum(d[a], axis=axis, keepdims=keepdims) if initial is None else np.sum(
        d[a], axis=axis, keepdims=keepdims) + d[initial]


@linear(np.mean, call="a, axis=axis, keepdims=keepdims")
def mean_rule(y, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = unreduce(d[y] / reduced_size(a, axis), a, axis, keepdims)


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
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[a] = unreduce(d[y] * (2.0 / (reduced_size(a, axis) - ddof)), a, axis, keepdims) * centered


@tangent(np.var)
def var_tangent(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[y] = (np.sum(centered * d[a], axis=axis, keepdims=keepdims)
            * (2.0 / (reduced_size(a, axis) - ddof)))


@adjoint(np.std)
def std_rule(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[a] = unreduce(d[y] / (y * (reduced_size(a, axis) - ddof)), a, axis, keepdims) * centered


@tangent(np.std)
def std_tangent(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[y] = (np.sum(centered * d[a], axis=axis, keepdims=keepdims)
            / (y * (reduced_size(a, axis) - ddof)))


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


@linear(np.diff)
def diff_rule(y, a, n=1, axis=-1):
    # The adjoint of one difference is minus a difference of the zero-padded gradient.
    d[a] = np.diff(np.pad(d[y], diff_pad_width(a, n, axis)), n, axis) * (-1.0) ** n


@adjoint(np.sort)
def sort_rule(y, a, axis=-1, kind=None, order=None, *, stable=None):
    d[a] = unsort(d[y], a, axis)


@tangent(np.sort)
def sort_tangent(y, a, axis=-1, kind=None, order=None, *, stable=None):
    d[y] = sort_like(d[a], a, axis)
