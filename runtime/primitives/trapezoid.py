"""np.trapezoid, traced as NumPy computes it: the widths (dx, or np.diff(x), a 1-d x's set
along the axis) times the sums of neighbouring samples, halved, summed along the axis. The
graph makes the same ops in the same order, so its result is NumPy's to the bit."""
from __future__ import annotations

import numpy as np

from .registry import traces


def along(ndim: int, axis: int, start, stop) -> tuple:
    """The index of the slice start:stop along `axis` of an array of `ndim` dimensions."""
    index = [slice(None)] * ndim
    index[axis] = slice(start, stop)
    return tuple(index)


def width_shape(ndim: int, x, axis: int) -> tuple:
    """The shape of np.trapezoid's widths np.diff(x), for samples y of `ndim` dimensions: a
    1-d x's are set along `axis` of y."""
    shape = list(np.shape(x))
    if len(shape) == 1:
        shape = [1] * ndim
        shape[axis] = np.shape(x)[0] - 1
    else:
        shape[axis] -= 1
    return tuple(shape)


def trapezoid_widths(ndim: int, x, dx, axis: int):
    """The widths np.trapezoid multiplies by: dx where x is None, else np.diff(x)."""
    if x is None:
        return dx
    if np.ndim(x) == 1:
        return np.reshape(np.diff(x), width_shape(ndim, x, axis))
    return np.diff(x, axis=axis)


@traces(np.trapezoid)
def bind_trapezoid(y, x=None, dx=1.0, axis=-1):
    y = y if hasattr(y, "dtype") else np.asarray(y)
    x = x if x is None or hasattr(x, "dtype") else np.asarray(x)
    widths = trapezoid_widths(np.ndim(y), x, dx, axis)
    ndim = np.ndim(y)
    pairs = y[along(ndim, axis, 1, None)] + y[along(ndim, axis, None, -1)]
    return np.sum(widths * pairs / 2.0, axis=axis)
