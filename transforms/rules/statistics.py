"""Derivative rules of the reductions that skip NaNs, np.ptp, np.average, the order statistics
(np.quantile, np.percentile, np.median) and the running extrema (np.maximum.accumulate,
np.minimum.accumulate), both modes side by side, written in differentiable operations (closed
to any order).

NaNs: a NaN element gets no gradient (and its tangent reaches nothing), as in JAX: a nan
reduction is the plain one of the array with its NaNs replaced by the identity. nanmax and
nanmin split ties evenly as max and min do; a slice of NaNs alone has NaN for its result and no
gradient.
Order statistics: the gradient goes to the one or two sorted elements the statistic
interpolates, weighted 1 - gamma and gamma (np.median: 1/2 each of the middle two), and through
the order np.sort's gradient goes by (ties: as np.sort orders them, stably). q's gradient is the
slope of the interpolation ((n - 1) times the gap of the two elements for 'linear'; 0 for the
other methods, piecewise constant in q).
Running extrema: each result element's gradient goes to the element it was taken from, the
first of tied ones (np.maximum.accumulate([1., 2., 2.]) takes both 2s from position 1). JAX's
cummax differentiates the max of its associative scan, which splits a tie evenly between the
two elements each combining step compares, so its shares depend on the scan's tree; here the
whole gradient goes to the first occurrence, as np.argmax picks it.
"""
import numpy as np

from ...runtime.derivatives.adjoint_ops import (broadcast_like, extremum_weights, reduced_last,
                                                reduced_last_back, reduced_size, unbroadcast,
                                                unreduce)
from ...runtime.derivatives.order_statistics import (as_column, average_weight_shape, held,
                                                     kept_axes, not_nan_count, order_position,
                                                     order_weight, picked_shape, quantile_slope,
                                                     running_argument)
from ...runtime.derivatives.real_only import refuse_complex
from ...runtime.derivatives.scans import products_after, products_before
from ...runtime.derivatives.structural_adjoints import sort_like, unsort, untake, untake_along
from ...runtime.primitives.order_statistics import merged, unmerged
from ...runtime.primitives.statistics import nonzero_weights
from .core import adjoint, constant, d, tangent
from .declarations import identity, linear

constant(not_nan_count, average_weight_shape, picked_shape, order_position, order_weight,
         quantile_slope, kept_axes, running_argument, held)


@adjoint(np.nansum)
def nansum_rule(y, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = np.where(np.isnan(a), 0.0, unreduce(d[y], a, axis, keepdims))


@tangent(np.nansum)
def nansum_tangent(y, a, axis=None, dtype=None, *, keepdims=False):
    d[y] = np.sum(np.where(np.isnan(a), 0.0, d[a]), axis=axis, keepdims=keepdims)


@adjoint(np.nanmean)
def nanmean_rule(y, a, axis=None, dtype=None, *, keepdims=False):
    d[a] = np.where(np.isnan(a), 0.0, unreduce(np.divide(d[y], not_nan_count(
        a, axis, keepdims)), a, axis, keepdims))


@tangent(np.nanmean)
def nanmean_tangent(y, a, axis=None, dtype=None, *, keepdims=False):
    d[y] = np.divide(np.sum(np.where(np.isnan(a), 0.0, d[a]), axis=axis, keepdims=keepdims),
                     not_nan_count(a, axis, keepdims))


@adjoint(np.nanprod)
def nanprod_rule(y, a, axis=None, dtype=None, *, keepdims=False):
    # prod's rule, of `a` with its NaNs as 1s: each factor's slope is the product of the others.
    rows = reduced_last(np.where(np.isnan(a), 1.0, a), axis)
    others = reduced_last_back(products_before(rows) * products_after(rows), a, axis)
    d[a] = np.where(np.isnan(a), 0.0, unreduce(d[y], a, axis, keepdims) * others)


@tangent(np.nanprod)
def nanprod_tangent(y, a, axis=None, dtype=None, *, keepdims=False):
    rows = reduced_last(np.where(np.isnan(a), 1.0, a), axis)
    others = reduced_last_back(products_before(rows) * products_after(rows), a, axis)
    d[y] = np.sum(np.where(np.isnan(a), 0.0, d[a] * others), axis=axis, keepdims=keepdims)


@adjoint(np.nanmax, np.nanmin)
def nanmax_rule(y, a, axis=None, *, keepdims=False):
    weights = np.where(np.isnan(a), 0.0, extremum_weights(a, y, axis, keepdims))
    d[a] = unreduce(d[y], a, axis, keepdims) * weights


@tangent(np.nanmax, np.nanmin)
def nanmax_tangent(y, a, axis=None, *, keepdims=False):
    weights = np.where(np.isnan(a), 0.0, extremum_weights(a, y, axis, keepdims))
    d[y] = np.sum(np.where(np.isnan(a), 0.0, d[a]) * weights, axis=axis, keepdims=keepdims)


@adjoint(np.nanvar)
def nanvar_rule(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    refuse_complex(a, "numpy.nanvar")  # |a - mean|^2 is not holomorphic
    centered = np.where(np.isnan(a), 0.0, a - np.nanmean(a, axis=axis, keepdims=True))
    d[a] = unreduce(d[y] * (2.0 / (not_nan_count(a, axis, keepdims) - ddof)), a, axis,
                    keepdims) * centered


@tangent(np.nanvar)
def nanvar_tangent(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    refuse_complex(a, "numpy.nanvar")  # |a - mean|^2 is not holomorphic
    centered = np.where(np.isnan(a), 0.0, a - np.nanmean(a, axis=axis, keepdims=True))
    d[y] = (np.sum(centered * np.where(np.isnan(a), 0.0, d[a]), axis=axis, keepdims=keepdims)
            * (2.0 / (not_nan_count(a, axis, keepdims) - ddof)))


@adjoint(np.nanstd)
def nanstd_rule(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    refuse_complex(a, "numpy.nanstd")  # |a - mean|^2 is not holomorphic
    centered = np.where(np.isnan(a), 0.0, a - np.nanmean(a, axis=axis, keepdims=True))
    d[a] = unreduce(d[y] / (y * (not_nan_count(a, axis, keepdims) - ddof)), a, axis,
                    keepdims) * centered


@tangent(np.nanstd)
def nanstd_tangent(y, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
    refuse_complex(a, "numpy.nanstd")  # |a - mean|^2 is not holomorphic
    centered = np.where(np.isnan(a), 0.0, a - np.nanmean(a, axis=axis, keepdims=True))
    d[y] = (np.sum(centered * np.where(np.isnan(a), 0.0, d[a]), axis=axis, keepdims=keepdims)
            / (y * (not_nan_count(a, axis, keepdims) - ddof)))


@adjoint(np.ptp)
def ptp_rule(y, a, axis=None, *, keepdims=False):
    # max - min: the rules of both (ties split evenly; a constant slice gets none).
    weights = (extremum_weights(a, np.max(a, axis=axis, keepdims=keepdims), axis, keepdims)
               - extremum_weights(a, np.min(a, axis=axis, keepdims=keepdims), axis, keepdims))
    d[a] = unreduce(d[y], a, axis, keepdims) * weights


@tangent(np.ptp)
def ptp_tangent(y, a, axis=None, *, keepdims=False):
    weights = (extremum_weights(a, np.max(a, axis=axis, keepdims=keepdims), axis, keepdims)
               - extremum_weights(a, np.min(a, axis=axis, keepdims=keepdims), axis, keepdims))
    d[y] = np.sum(d[a] * weights, axis=axis, keepdims=keepdims)


# np.average(a, axis, weights, returned): sum(a w) / sum(w), w the weights set along the axis
# (mean without them); with returned=True the result is (average, sum(w)), whose second part
# has its own gradient, to the weights alone.

# (the sums of the weights, checked not to be zero, as NumPy's np.average checks them)
@identity(nonzero_weights)
def nonzero_weights_rule(y, total):
    d[total] = d[y]


@adjoint(np.average)
def average_rule(y, a, axis=None, weights=None, returned=False, *, keepdims=False):
    g = d[y][0] if returned else d[y]
    placed = 1.0 if weights is None else np.reshape(weights, average_weight_shape(
        a, weights, axis))
    scale = reduced_size(a, axis) if weights is None else nonzero_weights(np.sum(
        placed, axis=axis, keepdims=keepdims))
    shares = unreduce(np.divide(g, scale), a, axis, keepdims)
    d[a] = shares if weights is None else shares * placed
    g_placed = 0.0 if weights is None else unbroadcast(
        shares * (a - unreduce(y[0] if returned else y, a, axis, keepdims)), placed) + (
        unbroadcast(unreduce(d[y][1], a, axis, keepdims), placed) if returned else 0.0)
    d[weights] = 0.0 if weights is None else np.reshape(g_placed, np.shape(weights))


@tangent(np.average)
def average_tangent(y, a, axis=None, weights=None, returned=False, *, keepdims=False):
    placed = 1.0 if weights is None else np.reshape(weights, average_weight_shape(
        a, weights, axis))
    t_placed = 0.0 if weights is None else np.reshape(broadcast_like(d[weights], weights),
                                                      average_weight_shape(a, weights, axis))
    scale = reduced_size(a, axis) if weights is None else nonzero_weights(np.sum(
        placed, axis=axis, keepdims=keepdims))
    t_average = np.mean(d[a], axis=axis, keepdims=keepdims) if weights is None else np.divide(
        np.sum(d[a] * placed + (a - unreduce(y[0] if returned else y, a, axis, keepdims))
               * t_placed, axis=axis, keepdims=keepdims), scale)
    t_scale = 0.0 * scale if weights is None else np.sum(
        np.broadcast_to(t_placed, np.shape(placed)), axis=axis, keepdims=keepdims)
    d[y] = (t_average, np.broadcast_to(t_scale, np.shape(y[1])) + 0.0 * y[1]) if returned \
        else t_average


# Order statistics: the sorted elements at `low` and `high` along the merged axes, weighted
# 1 - upper and upper; upper is gamma at q, and grows with q at `slope` (q - held(q) is zero,
# with q's derivatives: the second derivatives in a and q meet there).

@linear(merged)
def merged_rule(z, a, axis):
    d[a] = unmerged(d[z], a, axis)


@linear(unmerged)
def unmerged_rule(z, g, a, axis):
    d[g] = merged(d[z], axis)


@linear(as_column)
def as_column_rule(z, v, shape):
    d[v] = np.reshape(d[z], np.shape(v))


@adjoint(np.quantile)
def quantile_rule(y, a, q, axis=None, *, overwrite_input=False, method="linear",
              keepdims=False):
    ranked = merged(a, axis)
    low = order_position(a, q, axis, method, "quantile", False)
    high = order_position(a, q, axis, method, "quantile", True)
    slope = quantile_slope(a, q, axis, method, "quantile")
    upper = order_weight(a, q, axis, method, "quantile") + slope * as_column(
        q - held(q), np.shape(slope))
    g = np.reshape(d[y], picked_shape(a, q, axis))
    d[a] = unmerged(unsort(untake(g * (1.0 - upper), ranked, low, 0)
                           + untake(g * upper, ranked, high, 0), ranked, 0), a, axis)
    ordered = np.sort(ranked, axis=0)
    d[q] = np.sum(g * slope * (np.take(ordered, high, axis=0) - np.take(ordered, low, axis=0)),
                  axis=kept_axes(a, q, axis))


@tangent(np.quantile)
def quantile_tangent(y, a, q, axis=None, *, overwrite_input=False, method="linear",
                 keepdims=False):
    ranked = merged(a, axis)
    low = order_position(a, q, axis, method, "quantile", False)
    high = order_position(a, q, axis, method, "quantile", True)
    slope = quantile_slope(a, q, axis, method, "quantile")
    upper = order_weight(a, q, axis, method, "quantile") + slope * as_column(
        q - held(q), np.shape(slope))
    moved = sort_like(merged(broadcast_like(d[a], a), axis), ranked, 0)
    ordered = np.sort(ranked, axis=0)
    d[y] = np.reshape(np.take(moved, low, axis=0) * (1.0 - upper)
                      + np.take(moved, high, axis=0) * upper
                      + as_column(d[q], np.shape(slope)) * slope
                      * (np.take(ordered, high, axis=0) - np.take(ordered, low, axis=0)),
                      np.shape(y))


@adjoint(np.percentile)
def percentile_rule(y, a, q, axis=None, *, overwrite_input=False, method="linear",
              keepdims=False):
    ranked = merged(a, axis)
    low = order_position(a, q, axis, method, "percentile", False)
    high = order_position(a, q, axis, method, "percentile", True)
    slope = quantile_slope(a, q, axis, method, "percentile")
    upper = order_weight(a, q, axis, method, "percentile") + slope * as_column(
        q - held(q), np.shape(slope))
    g = np.reshape(d[y], picked_shape(a, q, axis))
    d[a] = unmerged(unsort(untake(g * (1.0 - upper), ranked, low, 0)
                           + untake(g * upper, ranked, high, 0), ranked, 0), a, axis)
    ordered = np.sort(ranked, axis=0)
    d[q] = np.sum(g * slope * (np.take(ordered, high, axis=0) - np.take(ordered, low, axis=0)),
                  axis=kept_axes(a, q, axis))


@tangent(np.percentile)
def percentile_tangent(y, a, q, axis=None, *, overwrite_input=False, method="linear",
                 keepdims=False):
    ranked = merged(a, axis)
    low = order_position(a, q, axis, method, "percentile", False)
    high = order_position(a, q, axis, method, "percentile", True)
    slope = quantile_slope(a, q, axis, method, "percentile")
    upper = order_weight(a, q, axis, method, "percentile") + slope * as_column(
        q - held(q), np.shape(slope))
    moved = sort_like(merged(broadcast_like(d[a], a), axis), ranked, 0)
    ordered = np.sort(ranked, axis=0)
    d[y] = np.reshape(np.take(moved, low, axis=0) * (1.0 - upper)
                      + np.take(moved, high, axis=0) * upper
                      + as_column(d[q], np.shape(slope)) * slope
                      * (np.take(ordered, high, axis=0) - np.take(ordered, low, axis=0)),
                      np.shape(y))


@adjoint(np.median)
def median_rule(y, a, axis=None, *, overwrite_input=False, keepdims=False):
    ranked = merged(a, axis)
    upper = order_weight(a, None, axis, "linear", "median")
    g = np.reshape(d[y], picked_shape(a, None, axis, "median"))
    d[a] = unmerged(unsort(
        untake(g * (1.0 - upper), ranked, order_position(a, None, axis, "linear", "median"), 0)
        + untake(g * upper, ranked, order_position(a, None, axis, "linear", "median", True), 0),
        ranked, 0), a, axis)


@tangent(np.median)
def median_tangent(y, a, axis=None, *, overwrite_input=False, keepdims=False):
    upper = order_weight(a, None, axis, "linear", "median")
    moved = sort_like(merged(d[a], axis), merged(a, axis), 0)
    d[y] = np.reshape(
        np.take(moved, order_position(a, None, axis, "linear", "median"), axis=0) * (1.0 - upper)
        + np.take(moved, order_position(a, None, axis, "linear", "median", True), axis=0)
        * upper, np.shape(y))


@adjoint(np.maximum.accumulate, np.minimum.accumulate)
def running_extremum_rule(y, array, axis=0, dtype=None):
    d[array] = untake_along(d[y], array, running_argument(array, y, axis), axis)


@tangent(np.maximum.accumulate, np.minimum.accumulate)
def running_extremum_tangent(y, array, axis=0, dtype=None):
    d[y] = np.take_along_axis(d[array], running_argument(array, y, axis), axis)
