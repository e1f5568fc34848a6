"""NumPy's reductions that skip NaNs (np.nansum, nanmean, nanmax, nanmin, nanprod, nanvar, nanstd)
and its cumulative functions that do (np.nancumsum, nancumprod), np.ptp and np.average, traced
as NumPy computes them, with the ops of the plain reductions: NaNs replaced by the reduction's
identity (0 for sums, 1 for products, -inf or inf for max or min), counts of the elements that
are not NaN, and the same arithmetic in the same order, so the result is NumPy's in value and
dtype. An array of integers holds no NaN: its nan reduction is the plain one, as in NumPy."""
from __future__ import annotations

import numpy as np

from ..user_frames import user_code_site
from .registry import bind, define_runtime_function, reject_arguments, static, traces


def _as_array(a):
    return a if hasattr(a, "dtype") else np.asarray(a)


def _holds_nan(a) -> bool:
    """Whether `a`'s dtype can hold NaN (floating or complex)."""
    return np.dtype(a.dtype).kind in "fc"


def _kept(keepdims) -> bool:
    return False if keepdims is np._NoValue else bool(static(keepdims, "keepdims"))


def _counted(mask, axis, keepdims, dtype):
    """How many elements `mask` leaves in (its False ones) over `axis`, in `dtype`."""
    return np.sum(np.logical_not(mask), axis=axis, keepdims=keepdims).astype(dtype)


@traces(np.nansum)
def bind_nansum(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, *,
                initial=np._NoValue, where=np._NoValue):
    reject_arguments("numpy.nansum", out=out, initial=initial, where=where)
    a = _as_array(a)
    filled = np.where(np.isnan(a), 0, a) if _holds_nan(a) else a
    return np.sum(filled, axis=axis, dtype=dtype, keepdims=_kept(keepdims))


@traces(np.nanprod)
def bind_nanprod(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, *,
                 initial=np._NoValue, where=np._NoValue):
    reject_arguments("numpy.nanprod", out=out, initial=initial, where=where)
    a = _as_array(a)
    filled = np.where(np.isnan(a), 1, a) if _holds_nan(a) else a
    return np.prod(filled, axis=axis, dtype=dtype, keepdims=_kept(keepdims))


def _nan_extremum(reduction, fill):
    def binding(a, axis=None, out=None, keepdims=np._NoValue, *, initial=np._NoValue,
                where=np._NoValue):
        reject_arguments(f"numpy.nan{reduction.__name__}", out=out, initial=initial,
                         where=where)
        a = _as_array(a)
        keepdims = _kept(keepdims)
        if not _holds_nan(a):
            return reduction(a, axis=axis, keepdims=keepdims)
        # NumPy's fmax.reduce: the extremum of the numbers, NaN where a slice is all NaN.
        mask = np.isnan(a)
        extremum = reduction(np.where(mask, fill, a), axis=axis, keepdims=keepdims)
        return np.where(np.all(mask, axis=axis, keepdims=keepdims), np.nan, extremum)
    return binding


traces(np.nanmax)(_nan_extremum(np.max, -np.inf))
traces(np.nanmin)(_nan_extremum(np.min, np.inf))


def _nan_cumulative(cumulative, fill):
    """np.nancumsum (np.cumsum, 0) or np.nancumprod (np.cumprod, 1): the running sums or
    products with each NaN taken as `fill`, which changes nothing."""
    name = f"numpy.nan{cumulative.__name__}"

    def binding(a, axis=None, dtype=None, out=None):
        reject_arguments(name, out=out)
        a = _as_array(a)
        filled = np.where(np.isnan(a), fill, a) if _holds_nan(a) else a
        return cumulative(filled, axis=axis, dtype=dtype)
    return binding


traces(np.nancumsum)(_nan_cumulative(np.cumsum, 0))
traces(np.nancumprod)(_nan_cumulative(np.cumprod, 1))


@traces(np.nanmean)
def bind_nanmean(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, *,
                 where=np._NoValue):
    reject_arguments("numpy.nanmean", out=out, where=where)
    a = _as_array(a)
    keepdims = _kept(keepdims)
    if not _holds_nan(a):
        return np.mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    mask = np.isnan(a)
    total = np.sum(np.where(mask, 0, a), axis=axis, dtype=dtype, keepdims=keepdims)
    return total / _counted(mask, axis, keepdims, total.dtype)


@traces(np.nanvar)
def bind_nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, *,
                where=np._NoValue, mean=np._NoValue, correction=np._NoValue):
    reject_arguments("numpy.nanvar", out=out, where=where, mean=mean, correction=correction)
    a = _as_array(a)
    keepdims = _kept(keepdims)
    if not _holds_nan(a):
        return np.var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    mask = np.isnan(a)
    filled = np.where(mask, 0, a)
    total = np.sum(filled, axis=axis, dtype=dtype, keepdims=True)
    centered = np.where(mask, 0, filled - total / _counted(mask, axis, True, total.dtype))
    squares = np.sum(centered * centered, axis=axis, dtype=dtype, keepdims=keepdims)
    freedom = _counted(mask, axis, keepdims, squares.dtype) - ddof
    # (no degrees of freedom left: NaN, as NumPy writes it)
    return np.where(freedom <= 0, np.nan, squares / freedom)


@traces(np.nanstd)
def bind_nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, *,
                where=np._NoValue, mean=np._NoValue, correction=np._NoValue):
    reject_arguments("numpy.nanstd", out=out, where=where, mean=mean, correction=correction)
    return np.sqrt(bind_nanvar(a, axis, dtype, None, ddof, keepdims))


@traces(np.ptp)
def bind_ptp(a, axis=None, out=None, keepdims=np._NoValue):
    reject_arguments("numpy.ptp", out=out)
    keepdims = _kept(keepdims)
    return np.max(a, axis=axis, keepdims=keepdims) - np.min(a, axis=axis, keepdims=keepdims)


def along_axis_shape(shape: tuple, weights, axis) -> tuple:
    """The shape np.average gives `weights` beside an array of `shape`: theirs where they have
    its shape, else the array's sizes along `axis` (an int or a tuple of ints, which the
    weights' shape must be) and 1 along the other axes, with NumPy's errors."""
    if tuple(np.shape(weights)) == tuple(shape):
        return tuple(shape)
    if axis is None:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    ndim = len(shape)
    axes = tuple(int(ax) % max(ndim, 1) for ax in (axis if isinstance(axis, tuple) else (axis,)))
    if tuple(np.shape(weights)) != tuple(shape[ax] for ax in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along specified "
                         "axis.")
    if list(axes) != sorted(axes) and np.ndim(weights) > 1:
        # (NumPy transposes such weights to the order of the axes; a reshape cannot)
        raise NotImplementedError(
            f"numpy.average with axis={axis} and weights of {np.ndim(weights)} dimensions: "
            f"list the axes in increasing order, with the weights' axes in that order")
    return tuple(size if index in axes else 1 for index, size in enumerate(shape))


# `nonzero_weights`: the sums of np.average's weights, checked not to be zero when the graph
# runs (NumPy raises ZeroDivisionError there, where the division would give inf or NaN). An op
# with a result, which the division reads, as `index_range` is.
def _nonzero_weights(total, message):
    namespace = getattr(total, "__array_namespace__", None)  # (an array-API array's has
    xp = namespace() if namespace is not None else None       # no .any() nor .copy())
    if bool((total == 0).any() if xp is None else xp.any(total == 0)):
        raise ZeroDivisionError(message)
    if total.ndim == 0:
        return total[()]
    return total.copy() if xp is None else xp.asarray(total, copy=True)


def nonzero_weights(total, message=None):
    """`total`, the sums of np.average's weights, where none is zero; ZeroDivisionError, as
    NumPy's, naming the user's line (`message`, where not given), where one is (traced: when
    the graph runs)."""
    if message is None:
        site = user_code_site()
        where = "" if site is None else f' (numpy.average at File "{site[0]}", line {site[1]})'
        message = f"Weights sum to zero, can't be normalized{where}"
    return bind("nonzero_weights", total, message=message)


define_runtime_function("nonzero_weights", _nonzero_weights,
                        lambda total, message: total, fresh=True, dispatcher=nonzero_weights,
                        batching=lambda call: call.bind(call.with_batch(0)))


@traces(np.average)
def bind_average(a, axis=None, weights=None, returned=False, *, keepdims=np._NoValue):
    a = _as_array(a)
    keepdims = _kept(keepdims)
    returned = bool(static(returned, "returned of numpy.average"))
    if weights is None:
        average = np.mean(a, axis=axis, keepdims=keepdims)
        count = np.size(a) / max(np.size(average), 1)
        scale = np.full(np.shape(average), count, dtype=average.dtype)
    else:
        weights = _as_array(weights)
        if np.shape(weights) != np.shape(a):
            axis = static(axis, "axis of numpy.average")
            weights = np.reshape(weights, along_axis_shape(np.shape(a), weights, axis))
        kinds = (a.dtype, weights.dtype) + (("f8",) if np.dtype(a.dtype).kind in "iub" else ())
        result_dtype = np.result_type(*kinds)
        weights = weights.astype(result_dtype)
        scale = nonzero_weights(np.sum(weights, axis=axis, keepdims=keepdims))
        average = np.sum(a.astype(result_dtype) * weights, axis=axis, keepdims=keepdims) / scale
        scale = np.broadcast_to(scale, np.shape(average)) + np.zeros_like(average)
    return (average, scale) if returned else average
