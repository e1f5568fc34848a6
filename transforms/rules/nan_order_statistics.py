"""Derivative rules of the cumulative functions that skip NaNs (np.nancumsum, np.nancumprod),
the order statistics that skip NaNs (np.nanquantile, np.nanpercentile, np.nanmedian) and
np.partition (the gradient of each element to the element placed there, as np.sort's), both
modes side by side, written in differentiable operations (closed to any
order).

A NaN gets no gradient, and its tangent reaches nothing, as in statistics.py: a nancumsum is
the cumsum of the array with its NaNs replaced by 0 (nancumprod: by 1), whose rules these are.
A NaN-skipping order statistic is np.quantile's of each slice's numbers: its gradient goes to
the one or two sorted elements interpolated, at positions and weights that depend on how many
numbers the slice has (runtime/derivatives/order_statistics.py); a slice of NaNs alone, whose
result is NaN, sends none. q's gradient is the interpolation's slope, as np.quantile's.
"""
import numpy as np

from ...runtime.derivatives.adjoint_ops import broadcast_like, flat_axis
from ...runtime.derivatives.order_statistics import (as_column, held, nan_column_shape,
                                                     nan_kept_axes, nan_live, nan_order_position,
                                                     nan_order_weight, nan_quantile_slope,
                                                     partition_order)
from ...runtime.derivatives.scans import forward_scan, reverse_scan, shift
from ...runtime.derivatives.structural_adjoints import sort_like, unsort, untake_along
from ...runtime.primitives.order_statistics import merged, unmerged
from .core import adjoint, constant, d, tangent

constant(partition_order, nan_order_position, nan_order_weight, nan_quantile_slope, nan_live,
         nan_column_shape, nan_kept_axes)


@adjoint(np.nancumsum)
def nancumsum_rule(y, a, axis=None, dtype=None):
    # cumsum's: a cumulative sum read backwards; with axis=None the input was flattened.
    along = flat_axis(axis)
    d[a] = np.where(np.isnan(a), 0.0, np.reshape(
        np.flip(np.cumsum(np.flip(d[y], along), along), along), np.shape(a)))


@tangent(np.nancumsum)
def nancumsum_tangent(y, a, axis=None, dtype=None):
    d[y] = np.cumsum(np.where(np.isnan(a), 0.0, d[a]), axis)


@adjoint(np.nancumprod)
def nancumprod_rule(y, a, axis=None, dtype=None):
    # cumprod's, of `a` with its NaNs as 1s (exact at zeros: no division).
    along = flat_axis(axis)
    line = np.reshape(np.where(np.isnan(a), 1.0, a), np.shape(y))
    d[a] = np.where(np.isnan(a), 0.0, np.reshape(
        shift(y, along, 1, 1.0) * reverse_scan(d[y], line, along), np.shape(a)))


@tangent(np.nancumprod)
def nancumprod_tangent(y, a, axis=None, dtype=None):
    along = flat_axis(axis)
    line = np.reshape(np.where(np.isnan(a), 1.0, a), np.shape(y))
    d[y] = forward_scan(shift(y, along, 1, 1.0) * np.reshape(
        np.where(np.isnan(a), 0.0, d[a]), np.shape(y)), line, along)


# np.partition: a permutation of `a` along the axis, as np.sort's result is: the gradient of
# each element goes back to the element placed there (partition_order reads where from).

@adjoint(np.partition)
def partition_rule(y, a, kth, axis=-1, kind="introselect", order=None):
    along = flat_axis(axis)
    d[a] = np.reshape(untake_along(d[y], np.reshape(a, np.shape(y)), partition_order(
        a, y, axis), along), np.shape(a))


@tangent(np.partition)
def partition_tangent(y, a, kth, axis=-1, kind="introselect", order=None):
    d[y] = np.take_along_axis(np.reshape(d[a], np.shape(y)), partition_order(a, y, axis),
                              flat_axis(axis))


# NaN-skipping order statistics: as np.quantile's rules (statistics.py), with the positions,
# weights and slopes of each slice (first axis: q's values, flat), and nothing from a slice of
# NaNs alone (`live`).

@adjoint(np.nanquantile)
def nanquantile_rule(y, a, q, axis=None, *, overwrite_input=False, method="linear",
                     keepdims=False):
    ranked = merged(a, axis)
    low = nan_order_position(a, q, axis, method, "nanquantile", False)
    high = nan_order_position(a, q, axis, method, "nanquantile", True)
    slope = nan_quantile_slope(a, q, axis, method, "nanquantile")
    upper = nan_order_weight(a, q, axis, method, "nanquantile") + slope * as_column(
        q - held(q), nan_column_shape(a, q, axis))
    g = np.reshape(d[y], np.shape(slope)) * nan_live(a, axis)
    d[a] = unmerged(unsort(untake_along(g * (1.0 - upper), ranked, low, 0)
                           + untake_along(g * upper, ranked, high, 0), ranked, 0), a, axis)
    ordered = np.sort(ranked, axis=0)
    d[q] = np.reshape(np.sum(g * slope * (np.take_along_axis(ordered, high, 0)
                                          - np.take_along_axis(ordered, low, 0)),
                             axis=nan_kept_axes(a, axis)), np.shape(q))


@tangent(np.nanquantile)
def nanquantile_tangent(y, a, q, axis=None, *, overwrite_input=False, method="linear",
                        keepdims=False):
    ranked = merged(a, axis)
    low = nan_order_position(a, q, axis, method, "nanquantile", False)
    high = nan_order_position(a, q, axis, method, "nanquantile", True)
    slope = nan_quantile_slope(a, q, axis, method, "nanquantile")
    upper = nan_order_weight(a, q, axis, method, "nanquantile") + slope * as_column(
        q - held(q), nan_column_shape(a, q, axis))
    moved = sort_like(merged(broadcast_like(d[a], a), axis), ranked, 0)
    ordered = np.sort(ranked, axis=0)
    d[y] = np.reshape((np.take_along_axis(moved, low, 0) * (1.0 - upper)
                       + np.take_along_axis(moved, high, 0) * upper
                       + as_column(d[q], nan_column_shape(a, q, axis)) * slope
                       * (np.take_along_axis(ordered, high, 0)
                          - np.take_along_axis(ordered, low, 0))) * nan_live(a, axis),
                      np.shape(y))


@adjoint(np.nanpercentile)
def nanpercentile_rule(y, a, q, axis=None, *, overwrite_input=False, method="linear",
                       keepdims=False):
    ranked = merged(a, axis)
    low = nan_order_position(a, q, axis, method, "nanpercentile", False)
    high = nan_order_position(a, q, axis, method, "nanpercentile", True)
    slope = nan_quantile_slope(a, q, axis, method, "nanpercentile")
    upper = nan_order_weight(a, q, axis, method, "nanpercentile") + slope * as_column(
        q - held(q), nan_column_shape(a, q, axis))
    g = np.reshape(d[y], np.shape(slope)) * nan_live(a, axis)
    d[a] = unmerged(unsort(untake_along(g * (1.0 - upper), ranked, low, 0)
                           + untake_along(g * upper, ranked, high, 0), ranked, 0), a, axis)
    ordered = np.sort(ranked, axis=0)
    d[q] = np.reshape(np.sum(g * slope * (np.take_along_axis(ordered, high, 0)
                                          - np.take_along_axis(ordered, low, 0)),
                             axis=nan_kept_axes(a, axis)), np.shape(q))


@tangent(np.nanpercentile)
def nanpercentile_tangent(y, a, q, axis=None, *, overwrite_input=False, method="linear",
                          keepdims=False):
    ranked = merged(a, axis)
    low = nan_order_position(a, q, axis, method, "nanpercentile", False)
    high = nan_order_position(a, q, axis, method, "nanpercentile", True)
    slope = nan_quantile_slope(a, q, axis, method, "nanpercentile")
    upper = nan_order_weight(a, q, axis, method, "nanpercentile") + slope * as_column(
        q - held(q), nan_column_shape(a, q, axis))
    moved = sort_like(merged(broadcast_like(d[a], a), axis), ranked, 0)
    ordered = np.sort(ranked, axis=0)
    d[y] = np.reshape((np.take_along_axis(moved, low, 0) * (1.0 - upper)
                       + np.take_along_axis(moved, high, 0) * upper
                       + as_column(d[q], nan_column_shape(a, q, axis)) * slope
                       * (np.take_along_axis(ordered, high, 0)
                          - np.take_along_axis(ordered, low, 0))) * nan_live(a, axis),
                      np.shape(y))


@adjoint(np.nanmedian)
def nanmedian_rule(y, a, axis=None, *, overwrite_input=False, keepdims=False):
    ranked = merged(a, axis)
    upper = nan_order_weight(a, None, axis, "linear", "nanmedian")
    g = np.reshape(d[y], np.shape(upper)) * nan_live(a, axis)
    d[a] = unmerged(unsort(
        untake_along(g * (1.0 - upper), ranked,
                     nan_order_position(a, None, axis, "linear", "nanmedian", False), 0)
        + untake_along(g * upper, ranked,
                       nan_order_position(a, None, axis, "linear", "nanmedian", True), 0),
        ranked, 0), a, axis)


@tangent(np.nanmedian)
def nanmedian_tangent(y, a, axis=None, *, overwrite_input=False, keepdims=False):
    upper = nan_order_weight(a, None, axis, "linear", "nanmedian")
    moved = sort_like(merged(d[a], axis), merged(a, axis), 0)
    d[y] = np.reshape((np.take_along_axis(
        moved, nan_order_position(a, None, axis, "linear", "nanmedian", False), 0)
        * (1.0 - upper) + np.take_along_axis(
        moved, nan_order_position(a, None, axis, "linear", "nanmedian", True), 0) * upper)
        * nan_live(a, axis), np.shape(y))
