"""np.polyval and np.vander, traced as NumPy computes them, so a traced result is NumPy's to the
bit and autotrace.vmap batches each of their ops.

np.polyval(p, x) is Horner's rule over the coefficients (the first axis of p), from y = 0 of x's
shape and dtype:

    y = y * x + p[k]    for k = 0, ..., len(p) - 1

np.vander(x, N, increasing) is a column of ones and the running products of x along the rows
(np.cumprod, which is NumPy's multiply.accumulate), in the dtype x promotes to with int, its
columns reversed unless `increasing`.
"""
from __future__ import annotations

import operator

import numpy as np

from .index import as_array
from .registry import UntraceableError, traces


@traces(np.polyval)
def bind_polyval(p, x):
    if isinstance(x, np.poly1d):
        raise UntraceableError("autotrace cannot trace np.polyval of a np.poly1d x: give x "
                               "as an array or a number")
    p = as_array(p)
    x = x if hasattr(x, "dtype") else np.asarray(x)
    y = np.zeros_like(x)
    for k in range(len(p)):
        y = y * x + p[k]
    return y


@traces(np.vander)
def bind_vander(x, N=None, increasing=False):
    x = as_array(x)
    x = x if hasattr(x, "dtype") else np.asarray(x)
    if np.ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")  # NumPy's words
    rows = len(x)
    columns = rows if N is None else operator.index(N)
    if columns < 0:
        raise ValueError("negative dimensions are not allowed")
    dtype = np.promote_types(x.dtype, int)
    if columns == 0:
        return np.zeros((rows, 0), dtype)
    if x.dtype != dtype:
        x = x.astype(dtype)
    powers = np.cumprod(np.broadcast_to(x[:, None], (rows, columns - 1)), axis=1)
    ascending = np.concatenate([np.ones((rows, 1), dtype), powers], axis=1)
    return ascending if increasing else ascending[:, ::-1]
