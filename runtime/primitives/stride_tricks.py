"""numpy.lib.stride_tricks: sliding_window_view as an op, and what autotrace asks of its calls.

`sliding_window_view(x, window_shape, axis)` is a read-only view of x whose last axes run over
each window: of x of shape (6,) and a window of 3, the (4, 3) array whose row i is x[i:i + 3].
Its windows overlap, so a write through one would change others: NumPy makes the view
read-only, and autotrace refuses writeable=True, with which it is not. `as_strided` makes a
view of any strides, in bytes, that no shape and axes describe; autotrace refuses it
(runtime/tracing/refused_functions.py while tracing, transforms/rules/refused.py in
derivatives) and says what to write instead.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .registry import (UntraceableError, bind, define_function, normalize_axis,
                       read_only_view, static, traces)

WRITEABLE_WINDOWS = (
    "numpy.lib.stride_tricks.sliding_window_view with writeable=True: its windows overlap, so "
    "a write through one changes the others, which autotrace does not follow; leave the view "
    "read-only (the default) and write into the array it views, or into a copy of the view "
    "(sliding_window_view(x, n).copy())")

AS_STRIDED = (
    "numpy.lib.stride_tricks.as_strided: it makes a view of strides in bytes, which may overlap "
    "or reach past the array, and autotrace follows no values through it. For sliding windows "
    "use numpy.lib.stride_tricks.sliding_window_view(x, window_shape, axis), which is traced "
    "and differentiated; for repeats np.broadcast_to; else indexing")


def window_axes(ndim: int, window_shape, axis) -> tuple[tuple, tuple]:
    """(the window's sizes, the axes each slides along, non-negative), as NumPy reads
    sliding_window_view's window_shape and axis (None: every axis, one size each)."""
    window = tuple(window_shape) if np.iterable(window_shape) else (window_shape,)
    if axis is None:
        if len(window) != ndim:
            raise ValueError(f"Since axis is `None`, must provide window_shape for all "
                             f"dimensions of `x`; got {len(window)} window_shape elements "
                             f"and `x.ndim` is {ndim}.")
        return window, tuple(range(ndim))
    axes = tuple(axis) if np.iterable(axis) else (axis,)
    if len(window) != len(axes):
        raise ValueError(f"Must provide matching length window_shape and axis; got "
                         f"{len(window)} window_shape elements and {len(axes)} axes "
                         f"elements.")
    return window, tuple(normalize_axis(a, ndim, "sliding_window_view") for a in axes)


def _windows_batching(call):
    """One example's windows along its axes: the batch's along those axes shifted past the
    batch axis (the window axes come last in both)."""
    window, axes = window_axes(call.example_ndim(0), call.attrs["window_shape"],
                               call.attrs.get("axis"))
    return call.bind(call.args[0], window_shape=window, axis=tuple(a + 1 for a in axes))


def _array_api_windows(np, x, window_shape, axis):
    """The windows over an array-API namespace (NumPy's names `np`), which makes no views: a
    copy, stacking for each window axis its shifted slices along a new last axis."""
    for size, along in zip(window_shape, axis):
        count = x.shape[along] - size + 1
        x = np.stack([x[(slice(None),) * along + (slice(offset, offset + count), ...)]
                      for offset in range(size)], axis=-1)
    return x


def _windows_source(args, attrs) -> str:
    keywords = "".join(f", {key}={attrs[key]!r}" for key in ("axis",) if key in attrs)
    return (f"np.lib.stride_tricks.sliding_window_view({args[0]}, "
            f"{attrs['window_shape']!r}{keywords})")


# Not fresh: a read-only view of its input.
define_function("sliding_window_view", sliding_window_view, source=_windows_source,
                array_api_source=lambda args, attrs: _windows_source(args, attrs).replace(
                    "np.lib.stride_tricks.", "np."),
                array_api_function=_array_api_windows, batching=_windows_batching)


@traces(sliding_window_view, view=read_only_view)
def bind_sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    if static(writeable, "sliding_window_view's writeable"):
        raise UntraceableError(f"autotrace cannot trace {WRITEABLE_WINDOWS}")
    window, axes = window_axes(np.ndim(x), static(window_shape, "the window_shape of "
                                                  "sliding_window_view"),
                               static(axis, "the axis of sliding_window_view"))
    return bind("sliding_window_view", x, window_shape=window, axis=axes)
