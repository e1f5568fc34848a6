"""Rule-table entries (see tests/rule_table.py) for the reductions that skip NaNs (with NaNs
among the values, a slice of NaNs alone where the result allows one), np.ptp, np.average (in a
and in its weights, returned=True too), the order statistics (q's gradient checked with a's,
each method, axes merged, keepdims) and the running extrema; the helpers their rules call.
Values are distinct (no ties) and q stays away from the kinks where (n - 1) q is an integer."""
from __future__ import annotations

import numpy as np

from autotrace.runtime.derivatives.order_statistics import as_column
from autotrace.runtime.primitives.order_statistics import merged, unmerged
from autotrace.runtime.primitives.statistics import nonzero_weights


def _distinct(rng, shape):
    size = int(np.prod(shape))
    return (rng.permutation(size) * 0.3 + rng.uniform(0.0, 0.1, size) - 0.15 * size).reshape(
        shape)


def _with_nans(rng, shape):
    a = _distinct(rng, shape)
    a.flat[[1, a.size - 2]] = np.nan
    return a


def _one(make):
    return lambda rng: (make(rng),)


def statistics_table(Entry) -> list:
    """The entries, made with the table's Entry class."""
    nans = _one(lambda rng: _with_nans(rng, (3, 4)))
    values = _one(lambda rng: _distinct(rng, (3, 4)))
    table = [
        Entry("nansum", np.nansum, nans),
        Entry("nansum/axis0-keepdims", np.nansum, nans, dict(axis=0, keepdims=True)),
        Entry("nanmean/axis1", np.nanmean, nans, dict(axis=1)),
        Entry("nanmean/all", np.nanmean, nans),
        Entry("nanprod/axis1", np.nanprod, _one(lambda rng: np.where(
            np.isnan(a := _with_nans(rng, (3, 4))), a, rng.uniform(0.5, 1.5, (3, 4)))),
            dict(axis=1)),
        Entry("nanmax/axis1", np.nanmax, nans, dict(axis=1)),
        Entry("nanmin/all", np.nanmin, nans),
        Entry("nanvar/axis0-ddof1", np.nanvar, _one(lambda rng: _with_nans(rng, (4, 3))),
              dict(axis=0, ddof=1)),
        Entry("nanstd/axis1-keepdims", np.nanstd, nans, dict(axis=1, keepdims=True)),
        Entry("ptp/axis1", np.ptp, values, dict(axis=1)),
        Entry("ptp/all", np.ptp, values),
        Entry("average", np.average, values, dict(axis=0)),
        Entry("average/weights-along-axis", np.average, values, dict(axis=1),
              make_kwargs=lambda rng: dict(weights=rng.uniform(0.5, 1.5, 4))),
        Entry("average/weights-returned", np.average, values, dict(axis=0, returned=True),
              make_kwargs=lambda rng: dict(weights=rng.uniform(0.5, 1.5, (3, 4)))),
        Entry("median/axis1", np.median, values, dict(axis=1)),
        Entry("median/odd-all", np.median, _one(lambda rng: _distinct(rng, (5,)))),
        Entry("quantile", np.quantile, lambda rng: (_distinct(rng, (3, 4)), 0.37),
              dict(axis=1)),
        Entry("quantile/q-list", np.quantile, lambda rng: (_distinct(rng, (3, 4)), [0.37, 0.61]),
              dict(axis=1)),
        Entry("quantile/keepdims", np.quantile, lambda rng: (_distinct(rng, (3, 4)), 0.61),
              dict(axis=0, keepdims=True)),
        Entry("quantile/axes-midpoint", np.quantile, lambda rng: (_distinct(rng, (2, 3, 2)), 0.4),
              dict(axis=(0, 2), method="midpoint")),
        Entry("quantile/nearest", np.quantile, lambda rng: (_distinct(rng, (6,)), 0.33),
              dict(method="nearest")),
        Entry("percentile", np.percentile, lambda rng: (_distinct(rng, (3, 4)), 37.0)),
        Entry("nancumsum/axis1", np.nancumsum, nans, dict(axis=1)),
        Entry("nancumprod", np.nancumprod, _one(lambda rng: np.where(
            np.isnan(a := _with_nans(rng, (3, 4))), a, rng.uniform(0.5, 1.5, (3, 4))))),
        Entry("nanmedian/axis1", np.nanmedian, nans, dict(axis=1)),
        Entry("nanmedian/all-keepdims", np.nanmedian, nans, dict(keepdims=True)),
        Entry("nanquantile", np.nanquantile, lambda rng: (_with_nans(rng, (3, 4)), 0.37),
              dict(axis=1)),
        Entry("nanquantile/axes-midpoint", np.nanquantile,
              lambda rng: (_with_nans(rng, (2, 3, 2)), 0.4), dict(axis=(0, 2), method="midpoint")),
        Entry("nanquantile/higher", np.nanquantile, lambda rng: (_with_nans(rng, (3, 4)), 0.61),
              dict(axis=0, method="higher")),
        Entry("nanpercentile/keepdims", np.nanpercentile,
              lambda rng: (_with_nans(rng, (3, 4)), 37.0), dict(axis=0, keepdims=True)),
        Entry("partition/axis0", np.partition, values, dict(kth=(0, 2), axis=0)),
        Entry("partition/flat", np.partition, values, dict(kth=-3, axis=None)),
        Entry("maximum.accumulate", np.maximum.accumulate, values, dict(axis=1)),
        Entry("minimum.accumulate", np.minimum.accumulate, values),
        Entry("helper:merged", merged, lambda rng: (rng.standard_normal((2, 3, 4)), (0, 2))),
        Entry("helper:unmerged", unmerged, lambda rng: (
            rng.standard_normal((8, 3)), np.zeros((2, 3, 4)), (0, 2)), wrt=(0,)),
        Entry("helper:nonzero_weights", nonzero_weights,
              _one(lambda rng: rng.uniform(0.5, 1.5, 3))),
        Entry("helper:as_column", as_column, lambda rng: (rng.standard_normal(3), (3, 1))),
    ]
    return table
