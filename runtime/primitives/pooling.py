"""2-d max and average pooling, and the linear maps their derivatives are made of.

Average pooling is linear; `avg_pool2d_backprop(g, x, ...)` is its transpose (x gives only its
shape). Max pooling picks, in each window, the first largest element (in row-major order within
the window); which element that is does not change under small moves of x, so its derivatives
are two maps that are linear in their first argument, with x fixing the choice:

- `max_pool2d_scatter(g, x, ...)`: each output gradient added to the chosen input element;
- `max_pool2d_gather(v, x, ...)`: the elements of v at the chosen positions (its transpose),
  so that max_pool2d(x) == max_pool2d_gather(x, x).

Every function takes max_pool2d's options, and each is one op in a traced graph.
"""
from __future__ import annotations

import numpy as np

from ..abstract import AbstractArray, carried_origins
from ..array_api import numpy_dtype
from ..devices import array_module
from .batching import merged_batch_batching
from .registry import bind, define_runtime_function
from .windows import (check_pair, check_window_options, extract_patches, fold_patches,
                      fold_taps, from_channels_last, output_length, pad_spatial,
                      shape_from_channels_last, shape_to_channels_last, to_channels_last,
                      window_geometry)


def max_pool2d(x, pool_size=(2, 2), strides=None, padding="valid", data_format="channels_last"):
    """The largest element of each window, for each channel.

    Arguments:
        x: the images, (batch, height, width, channels) for data_format="channels_last",
            (batch, channels, height, width) for "channels_first".
        pool_size: the window, an int or a (height, width) pair.
        strides: the step between windows, an int or a pair; None (the default) is pool_size.
        padding: "valid" (only windows inside the image) or "same" (TensorFlow's SAME:
            ceil(size / stride) outputs; the padding, split evenly with any extra at the
            bottom and right, is -inf and so never the maximum).
        data_format: "channels_last" (NHWC) or "channels_first" (NCHW).

    Returns:
        (batch, out_height, out_width, channels), or NCHW for "channels_first". Its gradient
        goes to the first largest element of each window (row-major order within the window)
        when several tie.

    Examples:
        >>> x = np.arange(16.0).reshape(1, 4, 4, 1)
        >>> max_pool2d(x)[0, :, :, 0]
        array([[ 5.,  7.],
               [13., 15.]])
    """
    options = _options(np.shape(x), pool_size, strides, padding, data_format, "max_pool2d")
    return bind("max_pool2d", x, **options)


def avg_pool2d(x, pool_size=(2, 2), strides=None, padding="valid", data_format="channels_last"):
    """The mean of each window, for each channel.

    Arguments are those of `max_pool2d`. With padding="same", a window that overlaps the
    padding is the mean of its elements inside the image only, as in TensorFlow.

    Returns:
        (batch, out_height, out_width, channels), or NCHW for "channels_first"; floating
        point (float64 for integer x).

    Examples:
        >>> x = np.arange(9.0).reshape(1, 3, 3, 1)
        >>> avg_pool2d(x, padding="same")[0, :, :, 0]
        array([[2. , 3.5],
               [6.5, 8. ]])
    """
    options = _options(np.shape(x), pool_size, strides, padding, data_format, "avg_pool2d")
    return bind("avg_pool2d", x, **options)


def max_pool2d_scatter(g, x, pool_size=(2, 2), strides=None, padding="valid",
                       data_format="channels_last"):
    """An array shaped like x, zero but where max_pool2d(x) took its values from, which get the
    matching elements of g (summed where windows overlap): the gradient of max_pool2d."""
    options = _options(np.shape(x), pool_size, strides, padding, data_format,
                       "max_pool2d_scatter")
    return bind("max_pool2d_scatter", g, x, **options)


def max_pool2d_gather(v, x, pool_size=(2, 2), strides=None, padding="valid",
                      data_format="channels_last"):
    """The elements of v (shaped like x) where max_pool2d(x) took its values from."""
    options = _options(np.shape(x), pool_size, strides, padding, data_format,
                       "max_pool2d_gather")
    return bind("max_pool2d_gather", v, x, **options)


def avg_pool2d_backprop(g, x, pool_size=(2, 2), strides=None, padding="valid",
                        data_format="channels_last"):
    """The gradient of <avg_pool2d(x, ...), g> in x (x gives only its shape): each element of g,
    divided by its window's count, spread over its window."""
    options = _options(np.shape(x), pool_size, strides, padding, data_format,
                       "avg_pool2d_backprop")
    spatial = shape_to_channels_last(np.shape(x), options["data_format"])[1:3]
    return bind("avg_pool2d_backprop", g, input_size=spatial, **options)


def avg_pool2d_backprop_of(g, input_size, pool_size, strides, padding, data_format):
    """avg_pool2d_backprop as graphs call its op: x's (height, width) in place of x."""
    return bind("avg_pool2d_backprop", g, input_size=input_size, pool_size=pool_size,
                strides=strides, padding=padding, data_format=data_format)


def _options(x_shape, pool_size, strides, padding, data_format, function) -> dict:
    """The checked, normalized options of a call: the attributes of its op."""
    pool_size = check_pair(pool_size, "pool_size", function)
    strides = pool_size if strides is None else strides
    return dict(pool_size=pool_size, **check_window_options(x_shape, pool_size, strides,
                                                            padding, data_format, function))


# --- the NumPy (or CuPy) implementations of the ops -----------------------------------------------

def _lowest(dtype):
    """The padding that never wins a maximum."""
    dtype = numpy_dtype(dtype)
    if dtype.kind == "f":
        return -np.inf
    return np.iinfo(dtype).min if dtype.kind in "iu" else False


def _geometry(x, pool_size, strides, padding):
    return window_geometry(x.shape[1:3], pool_size, strides, padding, "pooling")


def _winning_taps(x, geometry) -> list:
    """For each tap, whether it holds its window's first largest element (row-major order
    within the window), as argmax over the window picks it: a NaN is the largest, and 0.0 and
    -0.0 are equal. One bool (N, oh, ow, C) array per tap, of the NHWC x.

    Computed tap by tap on views of the padded x, as the pooling computes its maximum: argmax
    over the taps axis of extract_patches(x) costs 4x as much (a 2x2 pool of 50x8x8x32
    float32: 150 us against 610)."""
    xp = array_module(x)
    padded = pad_spatial(x, geometry, _lowest(x.dtype))
    stacked = xp.stack([padded[tap] for tap in geometry.taps])  # each tap contiguous
    values = [stacked[index, ...] for index in range(len(geometry.taps))]
    largest = values[0]
    for value in values[1:]:
        largest = xp.maximum(largest, value)  # NaN if the window holds one
    nan = numpy_dtype(x.dtype).kind in "fc" and bool(xp.any(xp.isnan(largest)))
    winners, found = [], None
    for index, value in enumerate(values):
        winner = value == largest
        if nan:
            winner |= xp.isnan(value)  # the first NaN, where the largest is NaN
        if found is not None:
            winner = winner & ~found  # and no earlier tap won
        if index < len(values) - 1:
            found = winner if found is None else found | winner
        winners.append(winner)
    return winners


def _max_pool2d(x, *, pool_size, strides, padding, data_format):
    x = to_channels_last(x, data_format)
    geometry = _geometry(x, pool_size, strides, padding)
    pooled = array_module(x).max(extract_patches(x, geometry, _lowest(x.dtype)), axis=3)
    return from_channels_last(pooled, data_format)


def _max_pool2d_scatter(g, x, *, pool_size, strides, padding, data_format):
    g, x = to_channels_last(g, data_format), to_channels_last(x, data_format)
    geometry = _geometry(x, pool_size, strides, padding)
    xp = array_module(g)
    taps = [xp.where(winner, g, 0) for winner in _winning_taps(x, geometry)]
    return from_channels_last(fold_taps(taps, geometry), data_format)


def _max_pool2d_gather(v, x, *, pool_size, strides, padding, data_format):
    v, x = to_channels_last(v, data_format), to_channels_last(x, data_format)
    geometry = _geometry(x, pool_size, strides, padding)
    xp = array_module(v)
    padded = pad_spatial(v, geometry)
    taps = list(zip(geometry.taps, _winning_taps(x, geometry)))
    picked = padded[taps[0][0]]
    for tap, winner in taps[1:]:
        picked = xp.where(winner, padded[tap], picked)
    if len(taps) == 1:  # a new array, as take_along_axis's, in any array library
        picked = xp.where(taps[0][1], picked, picked)
    return from_channels_last(picked, data_format)


def _float_dtype(dtype) -> np.dtype:
    dtype = numpy_dtype(dtype)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def _window_counts(geometry, xp, dtype):
    """How many elements inside the image each window holds: a number, or (1, oh, ow, 1)."""
    if not any(before or after for before, after in geometry.pads):
        return geometry.window[0] * geometry.window[1]
    ones = xp.ones((1, *geometry.input_size, 1), dtype=dtype)
    return xp.sum(extract_patches(ones, geometry), axis=3)


def _avg_pool2d(x, *, pool_size, strides, padding, data_format):
    x = to_channels_last(x, data_format)
    geometry = _geometry(x, pool_size, strides, padding)
    dtype = _float_dtype(x.dtype)
    sums = array_module(x).sum(extract_patches(x, geometry), axis=3, dtype=dtype)
    pooled = sums / _window_counts(geometry, array_module(x), dtype)
    return from_channels_last(pooled, data_format)


def _avg_pool2d_backprop(g, *, input_size, pool_size, strides, padding, data_format):
    g = to_channels_last(g, data_format)
    geometry = window_geometry(input_size, pool_size, strides, padding, "pooling")
    xp = array_module(g)
    shares = g / _window_counts(geometry, xp, _float_dtype(g.dtype))
    batch, out_h, out_w, channels = shares.shape
    taps = pool_size[0] * pool_size[1]
    patches = xp.broadcast_to(shares[:, :, :, None, :], (batch, out_h, out_w, taps, channels))
    return from_channels_last(fold_patches(patches, geometry), data_format)


# --- shapes and dtypes for tracing ----------------------------------------------------------------

def _pooled_shape(x_shape, pool_size, strides, padding, data_format) -> tuple:
    batch, height, width, channels = shape_to_channels_last(x_shape, data_format)
    shape = (batch, output_length(height, pool_size[0], strides[0], padding),
             output_length(width, pool_size[1], strides[1], padding), channels)
    return shape_from_channels_last(shape, data_format)


def _max_pool2d_shape(x, *, pool_size, strides, padding, data_format):
    return AbstractArray(_pooled_shape(x.shape, pool_size, strides, padding, data_format),
                         x.dtype, x.device, carried_origins(x, [0, None, None, None]))


def _avg_pool2d_shape(x, *, pool_size, strides, padding, data_format):
    return AbstractArray(_pooled_shape(x.shape, pool_size, strides, padding, data_format),
                         _float_dtype(x.dtype), x.device, carried_origins(x, [0, None, None, None]))


def _max_pool2d_scatter_shape(g, x, **options):
    return AbstractArray(x.shape, g.dtype, g.device)


def _max_pool2d_gather_shape(v, x, *, pool_size, strides, padding, data_format):
    return AbstractArray(_pooled_shape(v.shape, pool_size, strides, padding, data_format),
                         v.dtype, v.device)


def _avg_pool2d_backprop_shape(g, *, input_size, pool_size, strides, padding, data_format):
    batch, _, _, channels = shape_to_channels_last(g.shape, data_format)
    return AbstractArray(shape_from_channels_last((batch, *input_size, channels), data_format),
                         _float_dtype(g.dtype), g.device)


# Batched, the examples' images are one longer batch of images (their axis N). Graphs call
# each op by a function with rules.
define_runtime_function("max_pool2d", _max_pool2d, _max_pool2d_shape, dispatcher=max_pool2d,
                        batching=merged_batch_batching(0))
define_runtime_function("avg_pool2d", _avg_pool2d, _avg_pool2d_shape, dispatcher=avg_pool2d,
                        batching=merged_batch_batching(0))
define_runtime_function("max_pool2d_scatter", _max_pool2d_scatter, _max_pool2d_scatter_shape,
                        dispatcher=max_pool2d_scatter, batching=merged_batch_batching(0, 1))
define_runtime_function("max_pool2d_gather", _max_pool2d_gather, _max_pool2d_gather_shape,
                        dispatcher=max_pool2d_gather, batching=merged_batch_batching(0, 1))
define_runtime_function("avg_pool2d_backprop", _avg_pool2d_backprop, _avg_pool2d_backprop_shape,
                        dispatcher=avg_pool2d_backprop_of, batching=merged_batch_batching(0))
