"""Tangent rules of reductions and cumulative functions.

Signatures are the adjoint rules' (reductions.py), conventions too: tied extrema share the tangent
evenly, sort carries each tangent along with its element (a stable order among ties), prod and
cumprod are exact at zeros. A `dtype` argument is not applied to tangents.
Inputs may be lists of floats, so divisions are written as np.divide (a list has no `/`).
"""
import numpy as np

from autotrace.runtime.derivatives.adjoint_ops import (extremum_weights, flat_axis, products_after,
                                                       products_before, reduced_last,
                                                       reduced_last_back, reduced_size, sort_like)
from autotrace.runtime.derivatives.scans import forward_scan, shift
from autotrace.transforms.rules.core import d, tangent


@tangent(np.sum)
def sum_tangent(y, a, axis=None, dtype=None, *, keepdims=False):
    d[y] = np.sum(d[a], axis=axis, keepdims=keepdims)


@tangent(np.mean)
def mean_tangent(y, a, axis=None, dtype=None, *, keepdims=False):
    d[y] = np.mean(d[a], axis=axis, keepdims=keepdims)


@tangent(np.prod)
def prod_tangent(y, a, axis=None, dtype=None, *, keepdims=False):
    rows = reduced_last(a, axis)
    others = reduced_last_back(products_before(rows) * products_after(rows), a, axis)
    d[y] = np.sum(d[a] * others, axis=axis, keepdims=keepdims)


@tangent(np.max, np.amax, np.min, np.amin)
def max_tangent(y, a, axis=None, *, keepdims=False):
    weights = extremum_weights(a, y, axis, keepdims)
    d[y] = np.sum(d[a] * weights, axis=axis, keepdims=keepdims)


@tangent(np.var)
def var_tangent(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[y] = (np.sum(centered * d[a], axis=axis, keepdims=keepdims)
            * (2.0 / (reduced_size(a, axis) - ddof)))


@tangent(np.std)
def std_tangent(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    centered = a - np.mean(a, axis=axis, keepdims=True)
    d[y] = (np.sum(centered * d[a], axis=axis, keepdims=keepdims)
            / (y * (reduced_size(a, axis) - ddof)))


@tangent(np.cumsum)
def cumsum_tangent(y, a, axis=None, dtype=None):
    d[y] = np.cumsum(d[a], axis)


@tangent(np.cumprod)
def cumprod_tangent(y, a, axis=None, dtype=None):
    # dy_i = a_i dy_{i-1} + y_{i-1} da_i, run as a recurrence: no division (exact at zeros).
    along = flat_axis(axis)
    line = np.reshape(a, np.shape(y))  # flattened when axis is None
    d[y] = forward_scan(shift(y, along, 1, 1.0) * np.reshape(d[a], np.shape(y)), line, along)


@tangent(np.diff)
def diff_tangent(y, a, n=1, axis=-1):
    d[y] = np.diff(d[a], n, axis)


@tangent(np.sort)
def sort_tangent(y, a, axis=-1, kind=None, order=None, *, stable=None):
    d[y] = sort_like(d[a], a, axis)
