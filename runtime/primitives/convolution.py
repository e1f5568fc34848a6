"""2-d convolution, and the two linear maps its derivatives are made of.

`conv2d(x, kernel)` is the cross-correlation of deep-learning libraries (Keras' Conv2D, without
bias): im2col (runtime/primitives/windows.py) and one matrix product. Its gradient is two helpers:

- `conv2d_backprop_input(g, x, kernel, ...)`: the gradient in x for an output gradient g;
- `conv2d_backprop_kernel(g, x, kernel, ...)`: the gradient in kernel.

conv2d is bilinear in (x, kernel) and so are the helpers, in (g, kernel) and (g, x); x gives the
first, kernel the second only its shape. With <., .> the sum of elementwise products,

    <conv2d(x, k), g> == <x, conv2d_backprop_input(g, x, k)> == <k, conv2d_backprop_kernel(g, x, k)>

so the derivatives of each of the three are again the three (transforms/rules/nn_functions.py):
derivatives of any order stay closed. Each is one op in a traced graph, with its options as
attributes.
"""
from __future__ import annotations

import numpy as np

from ..abstract import AbstractArray, carried_origins
from ..devices import array_module
from .batching import merged_batch_batching, unrolled_batching
from .registry import bind, define_runtime_function
from .windows import (DATA_FORMATS, check_choice, check_image_batch, check_window_options,
                      extract_patches, fold_patches, from_channels_last, output_length,
                      padding_share, shape_from_channels_last, shape_to_channels_last,
                      taps_inside, to_channels_last, window_geometry)

# The gradients compute one product per tap, of the pixels inside the image only, where this
# share of the im2col matrix or more is padding and both channel counts are at least
# MIN_TAP_CHANNELS, so that each tap's product is worth its own BLAS call. A 5x5 "same" window
# on 4x4 images, 32 channels to 64 (the MNIST ConvNet's second convolution, batch 50), is half
# padding: tap by tap, its kernel gradient takes 1.8-2.1 ms against 3.8-4.8 and its input
# gradient 2.7 against 3.0-4.2 in float64 (one core of a Zen 3). With one input channel the
# taps' products are too thin: 0.5 ms becomes 1.0-1.2.
MIN_PADDING_SHARE = 0.25
MIN_TAP_CHANNELS = 16


def conv2d(x, kernel, strides=(1, 1), padding="valid", data_format="channels_last"):
    """The 2-d convolution (cross-correlation) of a batch of images with a kernel.

    Arguments:
        x: the images, (batch, height, width, in_channels) for data_format="channels_last",
            (batch, in_channels, height, width) for "channels_first".
        kernel: (kernel_height, kernel_width, in_channels, out_channels) in both formats.
        strides: the step between windows, an int or a (vertical, horizontal) pair.
        padding: "valid" (only windows inside the image) or "same" (TensorFlow's SAME:
            ceil(size / stride) outputs, zero padding split evenly, any extra at the bottom
            and right).
        data_format: "channels_last" (NHWC) or "channels_first" (NCHW).

    Returns:
        (batch, out_height, out_width, out_channels), or NCHW for "channels_first":
        y[n, i, j, o] = sum over a, b, c of x_padded[n, i*sh + a, j*sw + b, c] kernel[a, b, c, o].

    Examples:
        >>> x = np.ones((1, 4, 4, 1)); kernel = np.ones((3, 3, 1, 2))
        >>> conv2d(x, kernel).shape, conv2d(x, kernel, padding="same")[0, 0, 0]
        ((1, 2, 2, 2), array([4., 4.]))
    """
    options = _options(np.shape(x), np.shape(kernel), strides, padding, data_format, "conv2d")
    return bind("conv2d", x, kernel, **options)


def conv2d_backprop_input(g, x, kernel, strides=(1, 1), padding="valid",
                          data_format="channels_last"):
    """The gradient of <conv2d(x, kernel, ...), g> in x (x gives only its shape): g
    correlated with the flipped kernel, which is linear in g and in kernel."""
    options = _options(np.shape(x), np.shape(kernel), strides, padding, data_format,
                       "conv2d_backprop_input")
    spatial = shape_to_channels_last(np.shape(x), options["data_format"])[1:3]
    return bind("conv2d_backprop_input", g, kernel, input_size=spatial, **options)


def conv2d_backprop_kernel(g, x, kernel, strides=(1, 1), padding="valid",
                           data_format="channels_last"):
    """The gradient of <conv2d(x, kernel, ...), g> in kernel (kernel gives only its shape):
    the correlation of x with g, which is linear in g and in x."""
    options = _options(np.shape(x), np.shape(kernel), strides, padding, data_format,
                       "conv2d_backprop_kernel")
    return bind("conv2d_backprop_kernel", g, x, window=tuple(np.shape(kernel)[:2]), **options)


def conv2d_backprop_input_of(g, kernel, input_size, strides, padding, data_format):
    """conv2d_backprop_input as graphs call its op: x's (height, width) in place of x."""
    return bind("conv2d_backprop_input", g, kernel, input_size=input_size, strides=strides,
                padding=padding, data_format=data_format)


def conv2d_backprop_kernel_of(g, x, window, strides, padding, data_format):
    """conv2d_backprop_kernel as graphs call its op: the kernel's (height, width) in place of
    the kernel."""
    return bind("conv2d_backprop_kernel", g, x, window=window, strides=strides, padding=padding,
                data_format=data_format)


def _options(x_shape, kernel_shape, strides, padding, data_format, function) -> dict:
    """The checked, normalized options of a call: the attributes of its op."""
    if len(kernel_shape) != 4:
        raise ValueError(f"{function}: kernel must be 4-d, (kernel_height, kernel_width, "
                         f"in_channels, out_channels), got shape {tuple(kernel_shape)}")
    data_format = check_choice(data_format, DATA_FORMATS, "data_format", function)
    check_image_batch(x_shape, "x", function, data_format)
    channels = shape_to_channels_last(x_shape, data_format)[3]
    if None not in (channels, kernel_shape[2]) and channels != kernel_shape[2]:
        raise ValueError(f"{function}: x has {channels} channels but the kernel expects "
                         f"{kernel_shape[2]} (kernel shape {tuple(kernel_shape)}, "
                         f"data_format={data_format!r})")
    return check_window_options(x_shape, kernel_shape[:2], strides, padding, data_format,
                                function)


# --- the NumPy (or CuPy) implementations of the ops -----------------------------------------------

def _conv2d(x, kernel, *, strides, padding, data_format):
    x = to_channels_last(x, data_format)
    geometry = window_geometry(x.shape[1:3], kernel.shape[:2], strides, padding, "conv2d")
    patches = extract_patches(x, geometry)
    batch, out_h, out_w = patches.shape[:3]
    xp = array_module(x)
    y = xp.reshape(patches, (batch * out_h * out_w, -1)) @ xp.reshape(
        kernel, (-1, kernel.shape[3]))
    return from_channels_last(xp.reshape(y, (batch, out_h, out_w, kernel.shape[3])), data_format)


def _by_taps(geometry, in_channels: int, out_channels: int) -> bool:
    """Whether a gradient computes one product per tap (see MIN_PADDING_SHARE)."""
    return (min(in_channels, out_channels) >= MIN_TAP_CHANNELS
            and padding_share(geometry) >= MIN_PADDING_SHARE)


def _conv2d_backprop_input(g, kernel, *, input_size, strides, padding, data_format):
    g = to_channels_last(g, data_format)
    geometry = window_geometry(input_size, kernel.shape[:2], strides, padding, "conv2d")
    batch, out_h, out_w, out_channels = g.shape
    window_h, window_w, in_channels = kernel.shape[:3]
    xp = array_module(g)
    if _by_taps(geometry, in_channels, out_channels):
        # each tap's share of g times its slice of the kernel, added where it came from, in
        # tap order, as fold_patches adds the taps of the whole product
        image = xp.zeros((batch, *input_size, in_channels),
                         dtype=np.result_type(g.dtype, kernel.dtype))
        for tap, (pixels, outputs) in enumerate(taps_inside(geometry)):
            if pixels is not None:
                part = xp.ascontiguousarray(g[outputs])
                product = xp.reshape(part, (-1, out_channels)) @ kernel[divmod(tap, window_w)].T
                image[pixels] += xp.reshape(product, (*part.shape[:3], in_channels))
        return from_channels_last(image, data_format)
    patches = xp.reshape(g, (-1, out_channels)) @ xp.reshape(kernel, (-1, out_channels)).T
    patches = xp.reshape(patches, (batch, out_h, out_w, window_h * window_w, in_channels))
    return from_channels_last(fold_patches(patches, geometry), data_format)


def _conv2d_backprop_kernel(g, x, *, window, strides, padding, data_format):
    g, x = to_channels_last(g, data_format), to_channels_last(x, data_format)
    geometry = window_geometry(x.shape[1:3], window, strides, padding, "conv2d")
    if _by_taps(geometry, x.shape[3], g.shape[3]):
        # each tap's slice of the kernel: the pixels under it times g where they are inside
        xp = array_module(x)
        kernel = xp.zeros((*window, x.shape[3], g.shape[3]),
                          dtype=np.result_type(g.dtype, x.dtype))
        for tap, (pixels, outputs) in enumerate(taps_inside(geometry)):
            if pixels is not None:
                kernel[divmod(tap, window[1])] = (xp.reshape(x[pixels], (-1, x.shape[3])).T
                                                  @ xp.reshape(g[outputs], (-1, g.shape[3])))
        return kernel
    patches = extract_patches(x, geometry)
    rows = patches.shape[0] * patches.shape[1] * patches.shape[2]
    xp = array_module(x)
    kernel = xp.reshape(patches, (rows, -1)).T @ xp.reshape(g, (rows, g.shape[3]))
    return xp.reshape(kernel, (*window, x.shape[3], g.shape[3]))


# --- shapes and dtypes for tracing ----------------------------------------------------------------

def _conv2d_shape(x, kernel, *, strides, padding, data_format):
    batch, height, width, _ = shape_to_channels_last(x.shape, data_format)
    window_h, window_w, _, out_channels = kernel.shape
    shape = (batch, output_length(height, window_h, strides[0], padding),
             output_length(width, window_w, strides[1], padding), out_channels)
    return AbstractArray(shape_from_channels_last(shape, data_format),
                         np.result_type(x.dtype, kernel.dtype), x.device,
                         carried_origins(x, [0, None, None, None]))  # the batch carried through


def _conv2d_backprop_input_shape(g, kernel, *, input_size, strides, padding, data_format):
    shape = (shape_to_channels_last(g.shape, data_format)[0], *input_size, kernel.shape[2])
    return AbstractArray(shape_from_channels_last(shape, data_format),
                         np.result_type(g.dtype, kernel.dtype), g.device)


def _conv2d_backprop_kernel_shape(g, x, *, window, strides, padding, data_format):
    in_channels = shape_to_channels_last(x.shape, data_format)[3]
    out_channels = shape_to_channels_last(g.shape, data_format)[3]
    return AbstractArray((*window, in_channels, out_channels),
                         np.result_type(g.dtype, x.dtype), x.device)


# Batched, the examples' images are one longer batch of images (their axis N); the kernel is
# the same for every example. Graphs call each op by a function with rules.
define_runtime_function("conv2d", _conv2d, _conv2d_shape, dispatcher=conv2d,
                        batching=merged_batch_batching(0))
define_runtime_function("conv2d_backprop_input", _conv2d_backprop_input,
                        _conv2d_backprop_input_shape, dispatcher=conv2d_backprop_input_of,
                        batching=merged_batch_batching(0))
define_runtime_function("conv2d_backprop_kernel", _conv2d_backprop_kernel,
                        _conv2d_backprop_kernel_shape, dispatcher=conv2d_backprop_kernel_of,
                        batching=unrolled_batching)  # each example's sums over its images
