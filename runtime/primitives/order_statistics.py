"""Order statistics: np.quantile, np.percentile and np.median, and the running extrema
np.maximum.accumulate and np.minimum.accumulate, traced with the ops they are made of.

A quantile is one or two elements of the sorted array interpolated: with the axes it reduces
moved first and merged into one (`merged`), sorted along it, the elements at `previous` and
`next` (`quantile_points`, from q known while tracing) are combined as NumPy's _lerp combines
them, a + (b - a) t (or b - (b - a) (1 - t) where t >= 1/2), so the result is NumPy's in value
and dtype. The methods are JAX's: 'linear' (the default), 'lower', 'higher', 'nearest' and
'midpoint'; NumPy's others are refused, by name.
np.median is the mean of the one or two middle elements, as NumPy computes it. A slice holding
NaN sorts it last, and its result is NaN.

A running extremum is a scan of np.maximum (np.minimum) over doubling distances: log2(n) steps,
each exact, so the result is NumPy's to the bit, NaN carried on as np.maximum carries it.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..devices import array_module

from ..user_frames import user_code_site
from .registry import (UntraceableError, normalize_axis, reject_arguments, static, traces,
                       ufunc_methods)

QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _as_array(a):
    return a if hasattr(a, "dtype") else np.asarray(a)


def reduced_axes(ndim: int, axis) -> tuple:
    """The axes (non-negative, in order) a reduction over `axis` (None: all) takes."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(normalize_axis(int(each), ndim, "an order statistic") for each in axes))


def merged(a, axis):
    """`a` with the axes a reduction over `axis` takes moved first and merged into one."""
    a = _as_array(a)
    axes = reduced_axes(np.ndim(a), axis)
    kept = tuple(i for i in range(np.ndim(a)) if i not in axes)
    xp = array_module(a)  # (NumPy's functions, or the namespace's of an array-API array)
    moved = xp.transpose(a, axes + kept) if axes + kept != tuple(range(np.ndim(a))) else a
    return xp.reshape(moved, (-1,) + tuple(np.shape(a)[i] for i in kept))


def unmerged(g, a, axis):
    """The adjoint of `merged`: `g`, shaped as merged(a, axis), in a's shape and order."""
    shape = np.shape(a)
    axes = reduced_axes(len(shape), axis)
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    xp = array_module(g)
    moved = xp.reshape(g, tuple(shape[i] for i in axes + kept))
    order = axes + kept
    if order == tuple(range(len(shape))):
        return moved
    return xp.transpose(moved, tuple(int(i) for i in np.argsort(order)))


class Points(NamedTuple):
    """The elements an order statistic interpolates, one per quantile (`shape`: q's): their
    positions along the sorted axis (int arrays) and the weight of the upper one (`gammas`,
    Python floats, flat), computed one by one in Python floats as NumPy computes them in
    float64, so that no float64 array reaches the derivative of a float32 array."""
    previous: np.ndarray
    following: np.ndarray
    gammas: tuple
    shape: tuple
    dtype: np.dtype = np.dtype(np.float64)  # NumPy's, of the weights: q's (float64 for lists)

    def gamma(self, dtype=None):
        """The weights of the upper elements, an array of q's shape in `dtype` (NumPy's)."""
        return np.reshape(np.array(self.gammas, dtype=dtype or self.dtype), self.shape)


def _point(n: int, v: float, method: str) -> tuple:
    """(previous, next, gamma) of the quantile v of n sorted elements (NumPy's _quantile)."""
    virtual = (n - 1) * v
    if method in ("lower", "higher", "nearest"):
        index = {"lower": math.floor, "higher": math.ceil, "nearest": round}[method](virtual)
        return index, index, 0.0
    if method == "midpoint":
        virtual = 0.5 * (math.floor(virtual) + math.ceil(virtual))
    previous = -1 if virtual >= n - 1 else math.floor(virtual)
    following = -1 if virtual >= n - 1 else previous + 1
    gamma = virtual - previous
    if method == "midpoint":
        gamma = 0.0 if virtual % 1 == 0 else 0.5
    return previous % n, following % n, gamma


def q_dtype(q) -> np.dtype:
    """The dtype NumPy computes an order statistic's weights in: an array q's (a float one),
    float64 for numbers and lists."""
    dtype = np.dtype(getattr(q, "dtype", np.float64))
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def q_values(q, name: str, dtype=np.float64) -> list:
    """The quantiles q (known while tracing; a percentile's divided by 100), flat, as NumPy
    computes with them in `dtype` (q_dtype of the q given): float64 as Python floats, float32
    as NumPy's scalars of it. A ValueError, as NumPy's, for one outside [0, 1]."""
    scale = 100 if name.endswith("percentile") else 1  # (np.percentile's q / 100)
    values = [v / scale for v in (np.ravel(np.asarray(q, dtype=dtype)).tolist()
                                  if dtype == np.float64 else np.ravel(np.asarray(q, dtype=dtype)))]
    if not all(0 <= v <= 1 for v in values):
        raise ValueError("Percentiles must be in the range [0, 100]" if name.endswith(
            "percentile") else "Quantiles must be in the range [0, 1]")
    return values


def check_method(method: str, name: str) -> None:
    """Refuse, naming the user's line, a method autotrace does not trace."""
    if method not in QUANTILE_METHODS:
        site = user_code_site()  # (the user's line, where a derivative's code calls this)
        raise UntraceableError(
            ("" if site is None else f'File "{site[0]}", line {site[1]}: ')
            + f"autotrace cannot trace or differentiate numpy.{name} with method={method!r}: "
            f"it supports method= {', '.join(repr(m) for m in QUANTILE_METHODS)}")


def quantile_points(n: int, q, method: str, name: str, dtype=np.float64) -> Points:
    """The Points of the quantiles q (known while tracing) of n sorted elements by `method`,
    computed in `dtype` (q_dtype of the q given)."""
    check_method(method, name)
    if n == 0:
        raise UntraceableError(f"autotrace cannot trace numpy.{name} of an empty slice")
    points = [_point(n, v, method) for v in q_values(q, name, dtype)]
    shape = np.shape(q)
    return Points(np.reshape(np.array([p[0] for p in points], dtype=np.intp), shape),
                  np.reshape(np.array([p[1] for p in points], dtype=np.intp), shape),
                  tuple(p[2] for p in points), shape, np.dtype(dtype))


def median_points(n: int) -> Points:
    """The Points of np.median of n elements: the middle one, or the middle two."""
    if n == 0:
        raise UntraceableError("autotrace cannot trace numpy.median of an empty slice")
    middle = (n - 1) // 2
    following = middle if n % 2 else middle + 1
    return Points(np.asarray(middle, dtype=np.intp), np.asarray(following, dtype=np.intp),
                  (0.0 if n % 2 else 0.5,), ())


def _with_nan(result, ranked):
    """`result` NaN where its slice holds NaN (sorted last), as in NumPy."""
    if np.dtype(ranked.dtype).kind not in "fc":
        return result
    last = ranked[-1]
    return np.where(np.isnan(last), last, result)


def _kept_shape(a, axis, points_shape, keepdims) -> tuple:
    """The shape of the result: q's, then `a`'s without the reduced axes (1s with keepdims)."""
    axes = reduced_axes(np.ndim(a), axis)
    rest = tuple(1 if i in axes else size for i, size in enumerate(np.shape(a)) if keepdims
                 or i not in axes)
    return tuple(points_shape) + rest


def _order_statistic(a, axis, keepdims, points, how: str, weak: bool):
    """The order statistic of `a` over `axis` at `points` = (previous, next, gamma): the
    element at `previous` (how "take"), the mean of the two ("median"), or the two combined as
    NumPy's _lerp ("lerp"); gamma a Python float where `weak`."""
    a = _as_array(a)
    keepdims = bool(static(keepdims, "keepdims"))
    previous, following = points.previous, points.following
    ranked = np.sort(merged(a, axis), axis=0)
    low = np.take(ranked, previous, axis=0)
    if how == "take" or (how == "median" and previous.item() == following.item()):
        result = low
    elif how == "median":
        result = np.mean(np.take(ranked, np.stack([previous, following]), axis=0), axis=0)
    else:
        high = np.take(ranked, following, axis=0)
        step = high - low
        if weak:
            t = points.gammas[0]
            result = high - step * (1 - t) if t >= 0.5 else low + step * t
        else:  # (float64 weights, as NumPy's: the result is float64)
            t = np.reshape(points.gamma(), points.shape + (1,) * (np.ndim(ranked) - 1))
            result = np.where(t >= 0.5, high - step * (1 - t), low + step * t)
    shape = _kept_shape(a, axis, points.shape, keepdims)
    return np.reshape(_with_nan(result, ranked), shape)


def _merged_size(a, axis) -> int:
    shape = np.shape(a)
    return int(np.prod([shape[i] for i in reduced_axes(len(shape), axis)], dtype=np.int64))


def _quantile_binding(name: str):
    def binding(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
        reject_arguments(f"numpy.{name}", out=out, weights=weights, interpolation=interpolation)
        a = _as_array(a)
        if np.dtype(a.dtype).kind == "c":
            raise TypeError("a must be an array of real numbers")
        weak, dtype = type(q) in (int, float), q_dtype(q)
        q = static(q, f"q of numpy.{name}")
        method = static(method, f"method of numpy.{name}")
        axis = static(axis, f"axis of numpy.{name}")
        points = quantile_points(_merged_size(a, axis), q, method, name, dtype)
        how = "lerp" if method in ("linear", "midpoint") else "take"
        return _order_statistic(a, axis, keepdims, points, how, weak)
    return binding


traces(np.quantile)(_quantile_binding("quantile"))
traces(np.percentile)(_quantile_binding("percentile"))


@traces(np.median)
def bind_median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    reject_arguments("numpy.median", out=out)
    a = _as_array(a)
    if np.dtype(a.dtype).kind in "iub":
        a = a.astype(np.float64)
    axis = static(axis, "axis of numpy.median")
    return _order_statistic(a, axis, keepdims, median_points(_merged_size(a, axis)), "median",
                            True)


def quantile_picks(a, q, axis=None, method="linear", name="quantile") -> Points:
    """The Points of the order statistic `name` ('quantile', 'percentile' or
    'median') of `a` over `axis`, as its binding computes them."""
    size = _merged_size(_as_array(a), axis)
    if name == "median":
        return median_points(size)
    dtype = q_dtype(q)
    return quantile_points(size, static(q, f"q of numpy.{name}"), method, name, dtype)


# --- running extrema ---------------------------------------------------------------------------

def _shifted(a, axis: int, distance: int, fill):
    """`a` moved `distance` places on along `axis`, the places left filled with `fill`."""
    length = np.shape(a)[axis]
    index = [slice(None)] * np.ndim(a)
    index[axis] = slice(0, length - distance)
    pad = [(0, 0)] * np.ndim(a)
    pad[axis] = (distance, 0)
    return np.pad(a[tuple(index)], pad, constant_values=fill)


def running(extremum, a, axis: int):
    """np.maximum.accumulate(a, axis) (extremum np.maximum) or np.minimum's, by doubling."""
    kind = np.dtype(a.dtype).kind
    lowest = extremum is np.maximum
    if kind == "b":
        fill = not lowest
    elif kind in "iu":
        fill = np.iinfo(a.dtype).min if lowest else np.iinfo(a.dtype).max
    else:
        fill = -np.inf if lowest else np.inf
    distance, result = 1, a
    while distance < np.shape(a)[axis]:
        result = extremum(result, _shifted(result, axis, distance, fill))
        distance *= 2
    return result


def _accumulate(extremum):
    name = f"numpy.{extremum.__name__}.accumulate"

    def accumulate(array, axis=0, dtype=None, out=None):
        reject_arguments(name, out=out)
        array = _as_array(array)
        if dtype is not None:
            array = array.astype(dtype)
        if np.ndim(array) == 0:
            raise TypeError("cannot accumulate on a scalar")
        axis = static(axis, f"the axis of {name}")
        if axis is None and np.ndim(array) != 1:
            raise ValueError("accumulate does not allow multiple axes")
        axis = normalize_axis(0 if axis is None else axis, np.ndim(array), name)
        return running(extremum, array, axis)
    accumulate.scan = accumulate  # (not a NumPy function: the call stays as it is written)
    return accumulate


ufunc_methods[("maximum", "accumulate")] = _accumulate(np.maximum)
ufunc_methods[("minimum", "accumulate")] = _accumulate(np.minimum)
