"""Adjoint rules of reductions and cumulative functions.

Parameters that follow `out` in NumPy's signature are keyword-only here, so a call that passes
`out` (which no rule supports) fails to bind instead of binding `out` to `keepdims`.

Ties: max/min/amax/amin split the gradient evenly among the elements that attain the extremum
(the same convention as maximum/minimum). sort sends each sorted gradient back to the element
that landed there (a stable order among ties).
Zeros: prod and cumprod are exact at zeros, to any order: they multiply the other elements,
never divide (the products before and after each element, runtime/derivatives/adjoint_ops.py).
"""
import numpy as np

from autotrace.runtime.derivatives.adjoint_ops import (diff_pad_width, extremum_weights, flat_axis,
                                                       products_after, products_before,
                                                       reduced_last, reduced_last_back,
                                                       reduced_size, unreduce, unsort)
from autotrace.runtime.derivatives.scans import reverse_scan, shift
from autotrace.transforms.rules.core import adjoint, d


@adjoint(np.sum)
def sum_rule(y, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = unreduce(d[y], a, axis, keepdims)


@adjoint(np.mean)
def mean_rule(y, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = unreduce(d[y] / reduced_size(a, axis), a, axis, keepdims)


@adjoint(np.prod)
def prod_rule(y, a, axis=None, dtype=None, *, keepdims=False):
    # Each element's factor is the product of the others: those before it times those after.
    rows = reduced_last(a, axis)
    others = reduced_last_back(products_before(rows) * products_after(rows), a, axis)
    d[a] = unreduce(d[y], a, axis, keepdims) * others


@adjoint(np.max, np.amax, np.min, np.amin)
def max_rule(y, a, axis=None, *, keepdims=False):
    d[a] = unreduce(d[y], a, axis, keepdims) * extremum_weights(a, y, axis, keepdims)


@adjoint(np.var)
def var_rule(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[a] = unreduce(d[y] * (2.0 / (reduced_size(a, axis) - ddof)), a, axis, keepdims) * centered


@adjoint(np.std)
def std_rule(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[a] = unreduce(d[y] / (y * (reduced_size(a, axis) - ddof)), a, axis, keepdims) * centered


@adjoint(np.cumsum)
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


@adjoint(np.diff)
def diff_rule(y, a, n=1, axis=-1):
    # The adjoint of one difference is minus a difference of the zero-padded gradient.
    d[a] = np.diff(np.pad(d[y], diff_pad_width(a, n, axis)), n, axis) * (-1.0) ** n


@adjoint(np.sort)
def sort_rule(y, a, axis=-1, kind=None, order=None, *, stable=None):
    d[a] = unsort(d[y], a, axis)
