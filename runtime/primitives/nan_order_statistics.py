"""The order statistics that skip NaNs: np.nanquantile, np.nanpercentile and np.nanmedian, traced
with the ops they are made of.

NumPy computes each slice's statistic from its elements that are not NaN, so the positions of
the one or two sorted elements it interpolates depend on how many there are: a count known only
when the graph runs. The slices are merged and sorted as for np.quantile (NaN sorts last), the
count of each is taken, and the positions and weights are read for it from tables made while
tracing, one entry per possible count, by the arithmetic np.quantile's tracing does for a known
count (runtime/primitives/order_statistics.py: NumPy's _quantile, in q's dtype), then the
elements are taken along the sorted axis and combined as NumPy's _lerp combines them
(np.nanmedian: their sum halved, as np.ma.median computes it). A slice of NaNs alone gives NaN.
An array of integers holds no NaN: its statistic is the plain one, as in NumPy.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .order_statistics import (_kept_shape, _merged_size, _point, check_method, merged,
                               q_dtype, q_values, reduced_axes)
from ..devices import array_module
from .registry import UntraceableError, in_trace_of, reject_arguments, static, traces


def _as_array(a):
    return a if hasattr(a, "dtype") else np.asarray(a)


class NanPoints(NamedTuple):
    """The elements a NaN-skipping order statistic interpolates, for each quantile (first axis,
    q flattened; one for a median) and each slice (the other axes): their positions along the
    sorted merged axis (int arrays), each slice's count of elements that are not NaN, q's
    shape, and `gammas`, the weight of the upper element for each quantile and each count (a
    table, row j for q's value j, column n for n numbers: Python floats, or NumPy's scalars of
    q's float32), which `weights` reads for each slice."""
    previous: object
    following: object
    count: object
    shape: tuple
    gammas: tuple

    def weights(self, dtype, where=lambda gamma: gamma):
        """`where(gamma)` of each quantile and slice, made an array of `dtype` from the table
        (so that no wider array is made for a narrower one)."""
        table = np.array([[where(gamma) for gamma in row] for row in self.gammas], dtype=dtype)
        return _looked_up(table, self.count)


def _looked_up(table, count):
    """table[:, count]: each row's entry for each slice's count (a traced count reads a copy of
    the table in its graph)."""
    table = in_trace_of(table, count)
    if isinstance(table, np.ndarray) and not isinstance(count, (np.ndarray, np.generic)):
        table = array_module(count).asarray(table)  # (a CuPy count: the table on its device)
    return np.take(table, count, axis=1)


def _counted(a, axis, name: str):
    """How many elements of each slice of `a` over `axis` are not NaN (the slices merged, as
    runtime/primitives/order_statistics.py merges them)."""
    if _merged_size(a, axis) == 0:
        raise UntraceableError(f"autotrace cannot trace numpy.{name} of an empty slice")
    return np.sum(np.logical_not(np.isnan(merged(a, axis))), axis=0)


def _table(size: int, values: tuple, method: str) -> tuple:
    """(previous, next, gamma) of each quantile value for each count 0 ... size, as NumPy's
    _quantile computes them for that many sorted numbers (none: zeros)."""
    return tuple(tuple((0, 0, 0.0) if n == 0 else _point(n, v, method) for n in range(size + 1))
                 for v in values)


def nan_points(a, q, axis=None, method="linear", name="nanquantile") -> NanPoints:
    """The NanPoints of np.nanquantile or np.nanpercentile (`name`) of `a` over `axis` at q
    (known while tracing) by `method`, or of np.nanmedian ('nanmedian'; q ignored), as
    NumPy's _quantile computes them for each slice's count."""
    a = _as_array(a)
    count = _counted(a, axis, name)
    if name == "nanmedian":
        last = np.maximum(count - 1, 0)
        previous, following = last // 2, np.minimum(count // 2, last)
        # (the two middle elements, weighted 1/2 each, for an even count)
        gammas = (tuple(0.5 if n and n % 2 == 0 else 0.0
                        for n in range(_merged_size(a, axis) + 1)),)
        return NanPoints(previous[None], following[None], count, (), gammas)
    check_method(method, name)
    values = q_values(static(q, f"q of numpy.{name}"), name, q_dtype(q))
    rows = _table(_merged_size(a, axis), tuple(values), method)
    positions = [np.array([[point[k] for point in row] for row in rows], dtype=np.intp)
                 for k in (0, 1)]
    return NanPoints(_looked_up(positions[0], count), _looked_up(positions[1], count), count,
                     np.shape(q), tuple(tuple(point[2] for point in row) for row in rows))


def _take(ranked, index):
    return np.take_along_axis(ranked, index, axis=0)


def _statistic(a, q, axis, method, keepdims, name: str, weak: bool):
    a = _as_array(a)
    keepdims = bool(static(keepdims, "keepdims"))
    axis = static(axis, f"axis of numpy.{name}")
    points = nan_points(a, q, axis, method, name)
    ranked = np.sort(merged(a, axis), axis=0)
    low, high = _take(ranked, points.previous), _take(ranked, points.following)
    if name == "nanmedian":
        result = (low + high) / 2
    elif method in ("lower", "higher", "nearest"):
        result = low
    else:
        # NumPy's _lerp: with t a Python float (weak), 1 - t in float64 and both cast to a's
        # dtype; with an array q, in q's dtype.
        dtype = a.dtype if weak else q_dtype(q)
        upper = points.weights(dtype)
        lower = points.weights(dtype, lambda gamma: 1 - gamma)
        step = high - low
        result = np.where(points.weights(bool, lambda gamma: gamma >= 0.5),
                          high - step * lower, low + step * upper)
    result = np.where(points.count == 0, np.nan, result)
    return np.reshape(result, _kept_shape(a, axis, points.shape, keepdims))


def _nan_quantile_binding(name: str, plain):
    def binding(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=np._NoValue, *, weights=None, interpolation=None):
        reject_arguments(f"numpy.{name}", out=out, weights=weights, interpolation=interpolation)
        a = _as_array(a)
        if np.dtype(a.dtype).kind == "c":
            raise TypeError("a must be an array of real numbers")
        keepdims = False if keepdims is np._NoValue else keepdims
        if np.dtype(a.dtype).kind not in "fc":  # (no NaN to skip)
            return plain(a, q, axis=axis, method=method, keepdims=keepdims)
        weak = type(q) in (int, float)
        method = static(method, f"method of numpy.{name}")
        return _statistic(a, q, axis, method, keepdims, name, weak)
    return binding


traces(np.nanquantile)(_nan_quantile_binding("nanquantile", np.quantile))
traces(np.nanpercentile)(_nan_quantile_binding("nanpercentile", np.percentile))


@traces(np.nanmedian)
def bind_nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=np._NoValue):
    reject_arguments("numpy.nanmedian", out=out)
    a = _as_array(a)
    keepdims = False if keepdims is np._NoValue else keepdims
    if np.dtype(a.dtype).kind not in "fc":
        return np.median(a, axis=axis, keepdims=keepdims)
    return _statistic(a, None, axis, "linear", keepdims, "nanmedian", True)


def nan_kept_ndim(a, axis) -> int:
    """How many axes of `a` a reduction over `axis` keeps."""
    return np.ndim(a) - len(reduced_axes(np.ndim(a), axis))
