"""Convolution and pooling layers: Conv2D, Conv1D, Conv2DTranspose, MaxPool2D, AveragePool2D
and GlobalAveragePooling2D."""
from __future__ import annotations

from typing import Callable

import numpy as np

from autotrace.layers.base import (
    _DATA_FORMATS, _IMAGES, _PADDINGS, Layer, _choice, _pair, _positive_int,
)
from autotrace.nn import avg_pool2d, conv2d, get_activation, max_pool2d
from autotrace.runtime.primitives.convolution import conv2d_backprop_input


class Conv2D(Layer):
    """A 2-d convolution layer: `activation(conv2d(inputs, kernel) + bias)`.

    Arguments:
        filters: the number of output channels (a positive integer).
        kernel_size: the window's (height, width), or one int for both.
        strides: the step between windows, an int or a pair.
        padding: "valid" or "same" (as in `autotrace.nn.conv2d`).
        data_format: "channels_last" (batch, height, width, channels) or "channels_first".
        dilation_rate: the step between the pixels a window reads, an int or a pair (default
            1): a kernel of size k spans (k - 1) * rate + 1 pixels. Strides and a rate above
            1 cannot be combined (as in Keras).
        activation, use_bias, kernel_initializer, bias_initializer, name, dtype: as for
            Dense.
    Returns (when called on a batch of images): the convolved batch, in `data_format`. Its
    Variables are `<name>/kernel` (kernel height, kernel width, in channels, filters) and
    `<name>/bias` (filters,).

    Examples:
        >>> Conv2D(4, 3, padding="same")(np.ones((2, 8, 8, 3))).shape
        (2, 8, 8, 4)
    """

    default_name = "conv2d"
    input_rank = _IMAGES
    takes_one_array = True
    casts_weights = True

    def __init__(self, filters: int, kernel_size, strides=(1, 1), padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate=(1, 1),
                 activation: str | Callable | None = None, use_bias: bool = True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 name: str | None = None, dtype=None):
        super().__init__(name, dtype)
        self.filters = _positive_int("Conv2D", "filters", filters)
        self.kernel_size = _pair("Conv2D", "kernel_size", kernel_size)
        self.strides = _pair("Conv2D", "strides", strides)
        self.dilation_rate = _pair("Conv2D", "dilation_rate", dilation_rate)
        _check_strides_or_dilation("Conv2D", self.strides, self.dilation_rate)
        self.padding = _choice("Conv2D", "padding", padding, _PADDINGS)
        self.data_format = _choice("Conv2D", "data_format", data_format, _DATA_FORMATS)
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def build(self, input_shape) -> None:
        channels = input_shape[-1] if self.data_format == "channels_last" else input_shape[1]
        self.add_weight("kernel", self.kernel_size + (channels, self.filters),
                        self.kernel_initializer, dtype=self.weight_dtype)
        if self.use_bias:
            self.add_weight("bias", (self.filters,), self.bias_initializer,
                            dtype=self.weight_dtype)

    def _input_spec(self):
        channel_axis = -1 if self.data_format == "channels_last" else 1
        return None, {channel_axis: self.kernel.shape[2]}

    def call(self, inputs):
        kernel = dilated(self.compute(self.kernel), self.dilation_rate)
        outputs = conv2d(inputs, kernel, strides=self.strides, padding=self.padding,
                         data_format=self.data_format)
        if self.use_bias:
            bias = self.compute(self.bias)
            if self.data_format == "channels_last":
                outputs = outputs + bias
            else:
                outputs = outputs + np.reshape(bias, (-1, 1, 1))
        return self.activation(outputs)


class _Pool2D(Layer):
    input_rank = _IMAGES
    takes_one_array = True
    pool = None  # the autotrace.nn function

    def __init__(self, pool_size=(2, 2), strides=None, padding: str = "valid",
                 data_format: str = "channels_last", name: str | None = None, dtype=None):
        super().__init__(name, dtype)
        layer = type(self).__name__
        self.pool_size = _pair(layer, "pool_size", pool_size)
        self.strides = self.pool_size if strides is None else _pair(layer, "strides", strides)
        self.padding = _choice(layer, "padding", padding, _PADDINGS)
        self.data_format = _choice(layer, "data_format", data_format, _DATA_FORMATS)

    def call(self, inputs):
        return type(self).pool(inputs, pool_size=self.pool_size, strides=self.strides,
                               padding=self.padding, data_format=self.data_format)


class MaxPool2D(_Pool2D):
    """2-d max pooling (`autotrace.nn.max_pool2d`) as a layer; alias MaxPooling2D.

    Arguments:
        pool_size: the window's (height, width), or one int for both.
        strides: the step between windows (default: pool_size).
        padding: "valid" or "same"; data_format: "channels_last" or "channels_first".
    Returns (when called on a batch of images): the pooled batch.

    Examples:
        >>> MaxPool2D()(np.arange(16.0).reshape(1, 4, 4, 1))[0, :, :, 0]
        array([[ 5.,  7.],
               [13., 15.]])
    """

    default_name = "max_pooling2d"
    pool = staticmethod(max_pool2d)


class AveragePool2D(_Pool2D):
    """2-d average pooling (`autotrace.nn.avg_pool2d`) as a layer; alias AveragePooling2D.

    Arguments and returns as for MaxPool2D.

    Examples:
        >>> AveragePool2D()(np.arange(16.0).reshape(1, 4, 4, 1))[0, :, :, 0]
        array([[ 2.5,  4.5],
               [10.5, 12.5]])
    """

    default_name = "average_pooling2d"
    pool = staticmethod(avg_pool2d)


MaxPooling2D = MaxPool2D
AveragePooling2D = AveragePool2D


class GlobalAveragePooling2D(Layer):
    """The mean of each channel over the height and width of each image.

    Arguments:
        data_format: "channels_last" (batch, height, width, channels) or "channels_first".
        keepdims: whether to keep the height and width axes, of length 1.
    Returns: (batch, channels), or (batch, 1, 1, channels) (channels_first: (batch, channels,
    1, 1)) with keepdims.

    Examples:
        >>> GlobalAveragePooling2D()(np.arange(8.0).reshape(1, 2, 2, 2))
        array([[3., 4.]])
    """

    default_name = "global_average_pooling2d"
    input_rank = _IMAGES
    takes_one_array = True

    def __init__(self, data_format: str = "channels_last", keepdims: bool = False,
                 name: str | None = None, dtype=None):
        super().__init__(name, dtype)
        self.data_format = _choice("GlobalAveragePooling2D", "data_format", data_format,
                                   _DATA_FORMATS)
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        axes = (1, 2) if self.data_format == "channels_last" else (2, 3)
        return np.mean(inputs, axis=axes, keepdims=self.keepdims)


class Conv1D(Layer):
    """A 1-d convolution layer over sequences: `activation(conv1d(inputs, kernel) + bias)`,
    computed by `autotrace.nn.conv2d` on images of height 1.

    Arguments:
        filters: the number of output channels (a positive integer).
        kernel_size: the window's length (an int, or a tuple of one int).
        strides: the step between windows (an int, or a tuple of one int).
        padding: "valid", "same", or "causal": output t sees inputs t and before only (the
            inputs are padded with (kernel_size - 1) * dilation_rate zeros at the start, then
            convolved "valid"), as for WaveNet; channels_last only, as in Keras.
        data_format: "channels_last" (batch, steps, channels) or "channels_first" (batch,
            channels, steps).
        dilation_rate: the step between the inputs a window reads (default 1): a kernel of
            size k spans (k - 1) * rate + 1 steps. Strides and a rate above 1 cannot be
            combined (as in Keras).
        activation, use_bias, kernel_initializer, bias_initializer, name, dtype: as for
            Dense.
    Returns (when called on a batch of sequences): the convolved batch, in `data_format`. Its
    Variables are `<name>/kernel` (kernel_size, in channels, filters) and `<name>/bias`
    (filters,), of the inputs' floating dtype.

    Examples:
        >>> Conv1D(4, 3, padding="same")(np.ones((2, 8, 3))).shape
        (2, 8, 4)
    """

    default_name = "conv1d"
    input_rank = ("3 (batch, steps, channels) or (batch, channels, steps)",
                  lambda rank: rank == 3)
    takes_one_array = True
    casts_weights = True

    def __init__(self, filters: int, kernel_size, strides=1, padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate=1,
                 activation: str | Callable | None = None, use_bias: bool = True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 name: str | None = None, dtype=None):
        super().__init__(name, dtype)
        self.filters = _positive_int("Conv1D", "filters", filters)
        self.kernel_size = _single("Conv1D", "kernel_size", kernel_size)
        self.strides = _single("Conv1D", "strides", strides)
        self.dilation_rate = _single("Conv1D", "dilation_rate", dilation_rate)
        _check_strides_or_dilation("Conv1D", (self.strides,), (self.dilation_rate,))
        self.padding = _choice("Conv1D", "padding", padding, _PADDINGS + ("causal",))
        self.data_format = _choice("Conv1D", "data_format", data_format, _DATA_FORMATS)
        if self.padding == "causal" and self.data_format != "channels_last":
            raise ValueError("Conv1D: padding 'causal' needs data_format 'channels_last' (as "
                             "in Keras); got data_format 'channels_first'")
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def build(self, input_shape) -> None:
        channels = input_shape[-1] if self.data_format == "channels_last" else input_shape[1]
        self.add_weight("kernel", (self.kernel_size, channels, self.filters),
                        self.kernel_initializer, dtype=self.weight_dtype)
        if self.use_bias:
            self.add_weight("bias", (self.filters,), self.bias_initializer,
                            dtype=self.weight_dtype)

    def _input_spec(self):
        channel_axis = -1 if self.data_format == "channels_last" else 1
        return None, {channel_axis: self.kernel.shape[1]}

    def call(self, inputs):
        # A sequence is an image of height 1: (batch, 1, steps, channels), or (batch,
        # channels, 1, steps) channels first.
        padding = self.padding
        if padding == "causal":
            span = (self.kernel_size - 1) * self.dilation_rate
            # zeros (batch, span, channels), made from the inputs: the batch may be unknown
            zeros = np.zeros_like(inputs[:, :1, :]) * np.zeros((1, span, 1), inputs.dtype)
            inputs = np.concatenate([zeros, inputs], axis=1)
            padding = "valid"
        height_axis = 1 if self.data_format == "channels_last" else 2
        images = np.expand_dims(inputs, height_axis)
        kernel = dilated(np.expand_dims(self.compute(self.kernel), 0),
                         (1, self.dilation_rate))
        outputs = conv2d(images, kernel, strides=(1, self.strides), padding=padding,
                         data_format=self.data_format)
        outputs = np.squeeze(outputs, axis=height_axis)
        if self.use_bias:
            bias = self.compute(self.bias)
            if self.data_format == "channels_last":
                outputs = outputs + bias
            else:
                outputs = outputs + np.reshape(bias, (-1, 1))
        return self.activation(outputs)


class Conv2DTranspose(Layer):
    """A transposed 2-d convolution (sometimes called deconvolution): the gradient of a
    `conv2d` in its input, which maps each input pixel to a window of the output, so that
    strides > 1 make the images larger.

    Arguments:
        filters: the number of output channels (a positive integer).
        kernel_size, strides: as for Conv2D.
        padding: "valid" or "same" (those of the convolution it transposes).
        output_padding: None, or an int or pair of ints, each less than its stride: the
            rows and columns added at the bottom and right of the output.
        data_format: "channels_last" or "channels_first".
        dilation_rate: that of the convolution it transposes (an int or a pair, default 1;
            not with strides above 1); in the lengths below, a kernel of size k dilated by
            rate counts as one of size (k - 1) * rate + 1.
        activation, use_bias, kernel_initializer, bias_initializer, name, dtype: as for
            Dense.
    Returns (when called on a batch of images of height h): images of height h * stride +
    max(kernel - stride, 0) for "valid", h * stride for "same", as Keras' (with
    output_padding: (h - 1) * stride + kernel - 2 * pad + output_padding, pad kernel // 2 for
    "same" and 0 for "valid"); the same for the width. Its Variables are `<name>/kernel`
    (kernel height, kernel width, filters, in channels), Keras' layout, and `<name>/bias`
    (filters,), of the inputs' floating dtype.

    Examples:
        >>> Conv2DTranspose(4, 3, strides=2, padding="same")(np.ones((2, 5, 5, 3))).shape
        (2, 10, 10, 4)
    """

    default_name = "conv2d_transpose"
    input_rank = _IMAGES
    takes_one_array = True
    casts_weights = True

    def __init__(self, filters: int, kernel_size, strides=(1, 1), padding: str = "valid",
                 output_padding=None, data_format: str = "channels_last",
                 dilation_rate=(1, 1), activation: str | Callable | None = None,
                 use_bias: bool = True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", name: str | None = None, dtype=None):
        super().__init__(name, dtype)
        layer = "Conv2DTranspose"
        self.filters = _positive_int(layer, "filters", filters)
        self.kernel_size = _pair(layer, "kernel_size", kernel_size)
        self.strides = _pair(layer, "strides", strides)
        self.padding = _choice(layer, "padding", padding, _PADDINGS)
        self.output_padding = (None if output_padding is None else
                               _output_padding(output_padding, self.strides))
        self.dilation_rate = _pair(layer, "dilation_rate", dilation_rate)
        _check_strides_or_dilation(layer, self.strides, self.dilation_rate)
        self.data_format = _choice(layer, "data_format", data_format, _DATA_FORMATS)
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def build(self, input_shape) -> None:
        channels = input_shape[-1] if self.data_format == "channels_last" else input_shape[1]
        self.add_weight("kernel", self.kernel_size + (self.filters, channels),
                        self.kernel_initializer, dtype=self.weight_dtype)
        if self.use_bias:
            self.add_weight("bias", (self.filters,), self.bias_initializer,
                            dtype=self.weight_dtype)

    def _input_spec(self):
        channel_axis = -1 if self.data_format == "channels_last" else 1
        return None, {channel_axis: self.kernel.shape[3]}

    def call(self, inputs):
        height, width = (inputs.shape[1:3] if self.data_format == "channels_last" else
                         inputs.shape[2:4])
        size = (self._output_length(height, 0), self._output_length(width, 1))
        # The convolution transposed maps images of the output's size to the inputs': one
        # such image, a view of a single zero, gives conv2d_backprop_input that size.
        image = (1,) + size + (self.filters,) if self.data_format == "channels_last" else (
            1, self.filters) + size
        kernel = dilated(self.compute(self.kernel), self.dilation_rate)
        output_like = np.broadcast_to(np.zeros((), kernel.dtype), image)
        outputs = conv2d_backprop_input(inputs, output_like, kernel, strides=self.strides,
                                        padding=self.padding, data_format=self.data_format)
        if self.use_bias:
            bias = self.compute(self.bias)
            if self.data_format == "channels_last":
                outputs = outputs + bias
            else:
                outputs = outputs + np.reshape(bias, (-1, 1, 1))
        return self.activation(outputs)

    def _output_length(self, length: int, axis: int) -> int:
        kernel, stride = self.kernel_size[axis], self.strides[axis]
        kernel = (kernel - 1) * self.dilation_rate[axis] + 1  # the span of the dilated kernel
        if self.output_padding is None:
            if self.padding == "valid":
                return length * stride + max(kernel - stride, 0)
            return length * stride
        pad = kernel // 2 if self.padding == "same" else 0
        output = (length - 1) * stride + kernel - 2 * pad + self.output_padding[axis]
        # the convolution transposed must map that length back to `length`
        back = (-(-output // stride) if self.padding == "same" else
                (output - kernel) // stride + 1)
        if back != length:
            raise ValueError(f"Conv2DTranspose {self.name!r}: output_padding "
                             f"{self.output_padding} gives outputs of length {output}, which "
                             f"the convolution with kernel {kernel}, stride {stride} and "
                             f"padding {self.padding!r} maps to length {back}, not {length}; "
                             f"choose another output_padding, or None")
        return output


def dilated(kernel, rates: tuple):
    """`kernel` (height, width, in, out) with rate - 1 zeros between its taps along each
    spatial axis: a convolution with it is the dilated convolution with `kernel`."""
    for axis, rate in enumerate(rates):
        if rate == 1:
            continue
        taps = kernel.shape[axis]
        # each tap, then rate - 1 zeros, along a new axis after `axis`; merged, less the
        # zeros after the last tap
        spaced = np.stack([kernel] + [np.zeros_like(kernel)] * (rate - 1), axis=axis + 1)
        merged = np.reshape(spaced, kernel.shape[:axis] + (taps * rate,) +
                            kernel.shape[axis + 1:])
        kernel = merged[(slice(None),) * axis + (slice(0, (taps - 1) * rate + 1),)]
    return kernel


def _check_strides_or_dilation(layer: str, strides: tuple, rates: tuple) -> None:
    if any(stride > 1 for stride in strides) and any(rate > 1 for rate in rates):
        raise ValueError(f"{layer}: strides {strides} and dilation_rate {rates} cannot both "
                         f"be above 1 (as in Keras); use one or the other")


def _output_padding(value, strides: tuple) -> tuple:
    pair = (value, value) if isinstance(value, (int, np.integer)) else value
    if (not isinstance(pair, (tuple, list)) or len(pair) != 2 or
            not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and
                    0 <= v < stride for v, stride in zip(pair, strides))):
        raise ValueError(f"Conv2DTranspose: argument `output_padding` must be None or a "
                         f"non-negative integer or pair of them, each less than its stride "
                         f"{strides}, got {value!r}")
    return tuple(int(v) for v in pair)


def _single(layer: str, argument: str, value) -> int:
    """A positive int, or a tuple or list of one."""
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{layer}: argument `{argument}` must be a positive integer or a "
                         f"tuple of one, got {value!r}")
    return int(value)
