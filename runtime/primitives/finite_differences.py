"""np.gradient written as the ops it computes: central differences inside, one-sided ones of
first or second order at the two ends, along each axis asked for.

As runtime/primitives/piecewise.py's functions, `gradient` is both the binding that traces
np.gradient and the Python version the source transforms differentiate in its place
(transforms/front/python_versions.py): it is linear in f, and its derivatives in the spacings
(a number, or the coordinates along an axis) are those of the ops it calls. Coordinates are
always taken as unevenly spaced: NumPy takes evenly spaced ones as the spacing of their first
step, whose derivative in the other coordinates would be wrong; the values differ from NumPy's
by rounding there only.
"""
from __future__ import annotations

import numpy as np

from .registry import traces
from .trapezoid import along


def gradient_axes(ndim: int, axis) -> tuple:
    """The axes np.gradient differentiates along: every axis for None."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    for a in axes:
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
    normalized = tuple(int(a) % ndim for a in axes)
    if len(set(normalized)) != len(normalized):
        raise ValueError("repeated axis")
    return normalized


def spacing_kinds(f_shape: tuple, varargs: tuple, axes: tuple) -> tuple:
    """For each axis, whether its spacing is coordinates (True) or a number (False), with
    NumPy's errors for spacings it does not take."""
    if len(varargs) == 0:
        return (False,) * len(axes)
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return (False,) * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    kinds = []
    for axis, distances in zip(axes, varargs):
        if np.ndim(distances) == 0:
            kinds.append(False)
            continue
        if np.ndim(distances) != 1:
            raise ValueError("distances must be either scalars or 1d")
        if np.shape(distances)[0] != f_shape[axis]:
            raise ValueError("when 1d, distances must match the length of the corresponding "
                             "dimension")
        kinds.append(True)
    return tuple(kinds)


def check_edges(f_shape: tuple, axes: tuple, edge_order) -> None:
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    for axis in axes:
        if f_shape[axis] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")


def result_dtype(dtype):
    """np.gradient's dtype for f of `dtype`: its own if inexact, else float64."""
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def coefficient_shape(ndim: int, axis: int) -> tuple:
    """The shape that sets a 1-d array of coefficients along `axis` of `ndim` dimensions."""
    shape = [1] * ndim
    shape[axis] = -1
    return tuple(shape)


@traces(np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1):
    """np.gradient: the derivative of samples f along each axis, by finite differences."""
    f = f if hasattr(f, "dtype") else np.asarray(f)
    axes = gradient_axes(np.ndim(f), axis)
    kinds = spacing_kinds(np.shape(f), varargs, axes)
    check_edges(np.shape(f), axes, edge_order)
    f = np.astype(f, result_dtype(f.dtype), copy=False)
    results = []
    for index in range(len(axes)):
        if len(varargs) == 0:
            spacing = 1.0
        elif len(varargs) == 1 and not kinds[index]:
            spacing = varargs[0]
        else:
            spacing = varargs[index]
        if kinds[index]:
            coordinates = spacing if hasattr(spacing, "dtype") else np.asarray(spacing)
            steps = np.diff(np.astype(coordinates, result_dtype(coordinates.dtype),
                                      copy=False))
            result = uneven_differences(f, steps, axes[index], edge_order)
        else:
            result = even_differences(f, spacing, axes[index], edge_order)
        results.append(np.astype(result, f.dtype, copy=False))
    if len(axes) == 1:
        return results[0]
    return tuple(results)


def even_differences(f, step, axis, edge_order):
    """np.gradient of f along `axis` for samples `step` apart, by NumPy's arithmetic."""
    ndim = np.ndim(f)
    inside = (f[along(ndim, axis, 2, None)] - f[along(ndim, axis, None, -2)]) / (2.0 * step)
    if edge_order == 1:
        first = (f[along(ndim, axis, 1, 2)] - f[along(ndim, axis, 0, 1)]) / step
        last = (f[along(ndim, axis, -1, None)] - f[along(ndim, axis, -2, -1)]) / step
    else:
        first = (-1.5 / step * f[along(ndim, axis, 0, 1)] + 2.0 / step * f[along(ndim, axis, 1, 2)]
                 + -0.5 / step * f[along(ndim, axis, 2, 3)])
        last = (0.5 / step * f[along(ndim, axis, -3, -2)] + -2.0 / step * f[along(
            ndim, axis, -2, -1)] + 1.5 / step * f[along(ndim, axis, -1, None)])
    return np.concatenate((first, inside, last), axis=axis)


def uneven_differences(f, steps, axis, edge_order):
    """np.gradient of f along `axis` for samples `steps` (np.diff of the coordinates) apart,
    by NumPy's arithmetic."""
    ndim = np.ndim(f)
    shape = coefficient_shape(ndim, axis)
    dx1 = steps[:-1]
    dx2 = steps[1:]
    a = np.reshape(-dx2 / (dx1 * (dx1 + dx2)), shape)
    b = np.reshape((dx2 - dx1) / (dx1 * dx2), shape)
    c = np.reshape(dx1 / (dx2 * (dx1 + dx2)), shape)
    inside = (a * f[along(ndim, axis, None, -2)] + b * f[along(ndim, axis, 1, -1)]
              + c * f[along(ndim, axis, 2, None)])
    if edge_order == 1:
        first = (f[along(ndim, axis, 1, 2)] - f[along(ndim, axis, 0, 1)]) / steps[0]
        last = (f[along(ndim, axis, -1, None)] - f[along(ndim, axis, -2, -1)]) / steps[-1]
    else:
        dx1 = steps[0]
        dx2 = steps[1]
        first = (-(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2)) * f[along(ndim, axis, 0, 1)]
                 + (dx1 + dx2) / (dx1 * dx2) * f[along(ndim, axis, 1, 2)]
                 - dx1 / (dx2 * (dx1 + dx2)) * f[along(ndim, axis, 2, 3)])
        dx1 = steps[-2]
        dx2 = steps[-1]
        last = (dx2 / (dx1 * (dx1 + dx2)) * f[along(ndim, axis, -3, -2)]
                - (dx2 + dx1) / (dx1 * dx2) * f[along(ndim, axis, -2, -1)]
                + (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2)) * f[along(ndim, axis, -1, None)])
    return np.concatenate((first, inside, last), axis=axis)
