"""Helpers of the rules of the NaN-skipping reductions, np.average, the order statistics
(np.quantile, np.percentile, np.median) and the running extrema (np.maximum.accumulate): the
positions and weights a rule reads, constants to the gradient, each computed as the bindings in
runtime/primitives/statistics.py and order_statistics.py compute them."""
from __future__ import annotations

import numpy as np

from ..devices import array_module
from ..primitives.nan_order_statistics import nan_kept_ndim, nan_points
from ..primitives.order_statistics import quantile_picks, reduced_axes, running
from ..primitives.registry import is_traced
from ..primitives.statistics import along_axis_shape
from .dtypes import as_weights, real_dtype


def _beside(a, constant):
    """A NumPy constant of a rule (positions, weights) where `a` lies: on CuPy's device for a
    CuPy array, in another array-API library's namespace; as it is beside NumPy's and traced
    arrays (a traced graph holds it as a constant, placed when the graph is compiled)."""
    if is_traced(a):
        return constant
    xp = array_module(a)
    return constant if xp is np else xp.asarray(constant)


def not_nan_count(a, axis=None, keepdims=False):
    """How many elements of `a` over `axis` are not NaN, in the real dtype of `a` (a count a
    gradient of that dtype is divided by)."""
    xp = array_module(a)
    return xp.sum(as_weights(xp.logical_not(xp.isnan(a)), a, always=True), axis=axis,
                  keepdims=keepdims)


def average_weight_shape(a, weights, axis=None) -> tuple:
    """The shape np.average gives its `weights` beside `a` (set along `axis` where their shape
    is not its)."""
    return along_axis_shape(np.shape(a), weights, axis)


def picked_shape(a, q, axis=None, name="quantile") -> tuple:
    """The shape of an order statistic before keepdims: q's, then `a`'s without the axes."""
    axes = reduced_axes(np.ndim(a), axis)
    rest = tuple(size for i, size in enumerate(np.shape(a)) if i not in axes)
    return (() if name == "median" else np.shape(q)) + rest


def order_position(a, q, axis=None, method="linear", name="quantile", upper=False):
    """Where the lower (upper: the upper) of the one or two sorted elements an order statistic
    interpolates lies, along the merged axis (runtime/primitives/order_statistics.py)."""
    points = quantile_picks(a, q, axis, method, name)
    return _beside(a, points.following if upper else points.previous)


def _column(a, values, axis):
    """`values` (of q's shape) shaped to broadcast over the axes an order statistic keeps."""
    kept = np.ndim(a) - len(reduced_axes(np.ndim(a), axis))
    return np.reshape(values, np.shape(values) + (1,) * kept)


def order_weight(a, q, axis=None, method="linear", name="quantile"):
    """The weight of the upper of the two elements an order statistic interpolates (gamma;
    the lower's is 1 - gamma), at q, shaped to broadcast over the kept axes, in the real
    dtype of `a`."""
    points = quantile_picks(a, q, axis, method, name)
    if name != "median" and method not in ("linear", "midpoint"):  # (one element, taken)
        return _beside(a, _column(a, np.zeros(points.shape, real_dtype(a)), axis))
    return _beside(a, _column(a, points.gamma(real_dtype(a)), axis))


def quantile_slope(a, q, axis=None, method="linear", name="quantile"):
    """d gamma / d q: how fast the weight of the upper element grows with q ((n - 1) for
    'linear', divided by 100 for a percentile, where the two elements differ; 0 for the other
    methods, whose weights are piecewise constant in q), shaped as `order_weight`."""
    points = quantile_picks(a, q, axis, method, name)
    count = int(np.prod([np.shape(a)[i] for i in reduced_axes(np.ndim(a), axis)],
                        dtype=np.int64))
    rate = (count - 1) / (100 if name == "percentile" else 1) if method == "linear" else 0
    slopes = np.where(points.previous == points.following, 0, rate).astype(real_dtype(a))
    return _beside(a, _column(a, slopes, axis))


def held(q):
    """q's value, a constant to the gradient: `q - held(q)` is zero, with q's derivatives
    (a list of q's values as an array, which a list takes from)."""
    return np.asarray(q) if isinstance(q, (list, tuple)) else q


def as_column(v, shape):
    """`v` (an array of q's shape) reshaped to `shape`; a Python number stays one (weak)."""
    if isinstance(v, (int, float)):
        return v
    return array_module(v).reshape(v, shape)


def kept_axes(a, q, axis=None):
    """The axes of an order statistic (before keepdims) after q's: those kept from `a`."""
    start = np.ndim(q)
    return tuple(range(start, start + np.ndim(a) - len(reduced_axes(np.ndim(a), axis))))


def running_argument(a, y, axis=0):
    """Where each element of y = np.maximum.accumulate(a, axis) (or np.minimum's) was taken
    from: the position along `axis` of the running extremum, the first of tied ones (a later
    element equal to it does not take its place); a NaN, once met, is carried on from there."""
    xp = array_module(a)
    axis = 0 if axis is None else axis % np.ndim(a)
    length = np.shape(a)[axis]
    index = [slice(None)] * np.ndim(a)
    index[axis] = slice(0, length - 1)
    before = y[tuple(index)]
    index[axis] = slice(1, None)
    after = y[tuple(index)]
    same = xp.logical_or(xp.equal(after, before),
                         xp.logical_and(xp.isnan(after), xp.isnan(before)))
    first = [(0, 0)] * np.ndim(a)
    first[axis] = (1, 0)
    changed = xp.pad(xp.logical_not(same), first, constant_values=True)
    shape = [1] * np.ndim(a)
    shape[axis] = length
    positions = xp.reshape(xp.arange(length), shape)
    return running(np.maximum, xp.where(changed, positions, 0), axis)



def partition_order(a, y, axis=-1):
    """Where each element of y = np.partition(a, kth, axis) was taken from in `a` (flattened
    for axis=None), along the axis: the element of `a` of the same rank, ties in `a`'s order
    (the stable sort's, as np.sort's gradient goes). Read from y, whichever order NumPy's
    selection left the elements in beside the kth positions."""
    xp = array_module(a)
    along = 0 if axis is None else axis
    line = xp.reshape(a, np.shape(y))
    ranks = xp.argsort(xp.argsort(y, axis=along, kind="stable"), axis=along, kind="stable")
    return xp.take_along_axis(xp.argsort(line, axis=along, kind="stable"), ranks, axis=along)


# The NaN-skipping order statistics (runtime/primitives/nan_order_statistics.py): positions and
# weights per quantile (first axis) and per slice (the others), from each slice's count.

def nan_order_position(a, q, axis=None, method="linear", name="nanquantile", upper=False):
    """Where the lower (upper: the upper) of the one or two sorted elements a NaN-skipping
    order statistic interpolates lies along the merged axis, per quantile and slice."""
    points = nan_points(a, q, axis, method, name)
    return points.following if upper else points.previous


def nan_order_weight(a, q, axis=None, method="linear", name="nanquantile"):
    """The weight of the upper of the two elements (0 where there is one), in the real dtype
    of `a`, shaped as nan_order_position."""
    points = nan_points(a, q, axis, method, name)
    weight = points.weights(real_dtype(a))
    return array_module(weight).where(points.previous == points.following, 0, weight)


def nan_quantile_slope(a, q, axis=None, method="linear", name="nanquantile"):
    """d gamma / d q per quantile and slice: (n - 1) for 'linear' (n the slice's count of
    numbers; divided by 100 for a percentile) where the two elements differ, 0 elsewhere and
    for the other methods, in the real dtype of `a`."""
    points = nan_points(a, q, axis, method, name)
    scale = 100 if name == "nanpercentile" else 1
    rate = (points.count - 1).astype(real_dtype(a)) / scale if method == "linear" else 0
    return array_module(points.count).where(points.previous == points.following, 0,
                                            rate).astype(real_dtype(a))


def nan_live(a, axis=None):
    """1 for a slice that has a number, 0 for one of NaNs alone (whose result is NaN and sends
    no gradient), over the kept axes, in the real dtype of `a`."""
    count = nan_points(a, None, axis, name="nanmedian").count
    return (count > 0).astype(real_dtype(a))


def nan_column_shape(a, q, axis=None) -> tuple:
    """The shape that puts q's values (flat) along the first axis of nan_order_position's."""
    return (int(np.size(q)),) + (1,) * nan_kept_ndim(a, axis)


def nan_kept_axes(a, axis=None) -> tuple:
    """The axes of nan_order_position's shape after the quantiles'."""
    return tuple(range(1, 1 + nan_kept_ndim(a, axis)))
