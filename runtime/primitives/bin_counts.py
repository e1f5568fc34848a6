"""np.bincount traced: the weights (or ones) added into their bins by `scatter_add`.

Its result's length is max(minlength, max(x) + 1), which depends on the values of x. Where x
is a NumPy array that length is known while tracing; where x is traced it is minlength, which
must then be given, and x is checked to lie in [0, minlength) when the graph runs
(`index_range`), so that a traced result is never shorter than NumPy's. NumPy adds the weights
in float64 and counts in its integer (intp): so does the graph.
"""
from __future__ import annotations

import numpy as np

from .index import add_at
from .registry import UntraceableError, bind, is_traced, traces

_TRACED_BINS = ("np.bincount of a traced x: the length of its result, max(x) + 1, is not known "
                "while tracing; give minlength=n, the number of bins, and x is checked to lie "
                "in [0, n) when the graph runs")
_TRACED_BOOL_BINS = ("np.bincount of a traced boolean x: the length of its result, max(x) + 1, "
                     "is 1 or 2 by the values of x, not known while tracing; give minlength=2 "
                     "(bins for False and True)")


def out_of_bins(minlength: int) -> str:
    """The message of a traced x outside [0, minlength), a template given its least and
    greatest value (the error names the user's line)."""
    return (f"np.bincount of a traced x with minlength={minlength}: x holds values from {{}} "
            f"to {{}}, and a traced np.bincount counts values in [0, {minlength}) only (its "
            f"result's length is minlength); give a minlength above every value of x")


@traces(np.bincount)
def bind_bincount(x, weights=None, minlength=0):
    if not is_traced(x):
        counts = np.bincount(x, minlength=minlength)  # NumPy's checks, and the length
        if weights is None or not is_traced(weights):
            return np.bincount(x, weights, minlength)
        bins = np.asarray(x)
        length = counts.shape[0]
    else:
        if not np.can_cast(x.dtype, np.intp, "safe"):
            raise TypeError(f"Cannot cast array data from dtype('{np.dtype(x.dtype)}') to "
                            f"dtype('{np.dtype(np.intp)}') according to the rule 'safe'")
        boolean = x.dtype == np.bool_
        if boolean:
            x = np.astype(x, np.intp)  # (its bins, 0 and 1: an index, not a mask)
        if x.ndim != 1:
            raise ValueError("object too deep for desired array")
        if not minlength:
            raise UntraceableError(_TRACED_BOOL_BINS if boolean else _TRACED_BINS)
        bins = bind("index_range", x, high=minlength, message=out_of_bins(minlength))
        length = minlength
    if weights is None:
        return add_at(np.zeros(length, np.intp), bins, np.ones_like(bins, dtype=np.intp))
    weights = np.astype(weights, np.float64)
    if np.shape(weights) != np.shape(bins):
        raise ValueError("The weights and list don't have the same length.")
    return add_at(np.zeros(length, np.float64), bins, weights)
