"""Sliding windows over the two spatial axes of an image batch: the geometry that convolution
and pooling share (runtime/primitives/convolution.py, runtime/primitives/pooling.py), and the argument checks of
their public functions.

The array code works on NHWC (channels_last) arrays; NCHW (channels_first) ones are transposed
in and out at the edges. A window position is a *tap* (i, j), 0 <= i < window height,
0 <= j < window width. For each tap, one strided slice of the padded input holds the input
pixel under that tap for every output pixel, so the loops here run over taps (9 for a 3x3
window), never over pixels:

- `extract_patches` stacks those slices into (N, out_h, out_w, taps, C), the im2col matrix;
- `fold_patches`, its transpose, adds each tap's slice of a patch array back into an image
  (col2im), so that <extract_patches(x), p> == <x, fold_patches(p)>; `fold_taps` does the
  same for taps given one by one.

Padding follows TensorFlow: "valid" uses only windows that fit; "same" gives ceil(size /
stride) outputs, padding max((out - 1) * stride + window - size, 0) in all, the extra one
(when odd) at the bottom or right.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..devices import array_module

PADDINGS = ("valid", "same")
DATA_FORMATS = ("channels_last", "channels_first")


# --- argument checks ----------------------------------------------------------------------------

def check_choice(value, allowed: tuple, argument: str, function: str) -> str:
    """`value` lowercased if it is one of `allowed`, else a ValueError naming the argument."""
    if isinstance(value, str) and value.lower() in allowed:
        return value.lower()
    expected = " or ".join(repr(choice) for choice in allowed)
    raise ValueError(f"{function}: {argument} must be {expected}, got {value!r}")


def check_pair(value, argument: str, function: str) -> tuple[int, int]:
    """An int or a pair of positive ints as a pair: `2` -> (2, 2), `[1, 2]` -> (1, 2)."""
    pair = (value, value) if isinstance(value, (int, np.integer)) else value
    if (isinstance(pair, (tuple, list)) and len(pair) == 2
            and all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n > 0
                    for n in pair)):
        return (int(pair[0]), int(pair[1]))
    raise ValueError(f"{function}: {argument} must be a positive int or a pair of positive "
                     f"ints, got {value!r}")


def check_image_batch(shape: tuple, argument: str, function: str, data_format: str) -> None:
    """A ValueError unless `shape` is that of a 4-d batch of images."""
    if len(shape) != 4:
        layout = "(batch, height, width, channels)" if data_format == "channels_last" \
            else "(batch, channels, height, width)"
        raise ValueError(f"{function}: {argument} must be 4-d, {layout} for "
                         f"data_format={data_format!r}, got shape {tuple(shape)}")


def check_window_options(x_shape: tuple, window: tuple, strides, padding, data_format,
                         function: str) -> dict:
    """The options of a call sliding `window` over the images `x`, checked and normalized: the
    attributes of its op. Raises ValueError naming the argument that is wrong."""
    data_format = check_choice(data_format, DATA_FORMATS, "data_format", function)
    padding = check_choice(padding, PADDINGS, "padding", function)
    strides = check_pair(strides, "strides", function)
    check_image_batch(x_shape, "x", function, data_format)
    spatial = shape_to_channels_last(x_shape, data_format)[1:3]
    if None not in spatial:
        window_geometry(spatial, window, strides, padding, function)  # does the window fit?
    return dict(strides=strides, padding=padding, data_format=data_format)


# --- layouts ------------------------------------------------------------------------------------

def to_channels_last(x, data_format: str):
    return x if data_format == "channels_last" else array_module(x).transpose(x, (0, 2, 3, 1))


def from_channels_last(x, data_format: str):
    return x if data_format == "channels_last" else array_module(x).transpose(x, (0, 3, 1, 2))


def shape_to_channels_last(shape: tuple, data_format: str) -> tuple:
    if data_format == "channels_last":
        return tuple(shape)
    return (shape[0], shape[2], shape[3], shape[1])


def shape_from_channels_last(shape: tuple, data_format: str) -> tuple:
    if data_format == "channels_last":
        return tuple(shape)
    return (shape[0], shape[3], shape[1], shape[2])


# --- geometry -----------------------------------------------------------------------------------

def output_length(size: int | None, window: int, stride: int, padding: str) -> int | None:
    """How many windows fit along an axis of `size` (None, an unknown size, gives None)."""
    if size is None:
        return None
    if padding == "same":
        return -(-size // stride)
    return (size - window) // stride + 1


@dataclass(frozen=True)
class WindowGeometry:
    """Where the windows of one call lie: sizes as (height, width) pairs, pads as
    ((top, bottom), (left, right))."""

    window: tuple
    strides: tuple
    input_size: tuple
    output_size: tuple
    pads: tuple

    @property
    def padded_size(self) -> tuple:
        return tuple(n + before + after for n, (before, after) in zip(self.input_size, self.pads))

    @property
    def taps(self) -> list:
        """For each tap in row-major order, the index of its slice of a padded NHWC array."""
        (window_h, window_w), (stride_h, stride_w) = self.window, self.strides
        span_h = (self.output_size[0] - 1) * stride_h + 1
        span_w = (self.output_size[1] - 1) * stride_w + 1
        return [(slice(None), slice(i, i + span_h, stride_h), slice(j, j + span_w, stride_w),
                 slice(None)) for i in range(window_h) for j in range(window_w)]


def window_geometry(input_size: tuple, window: tuple, strides: tuple, padding: str,
                    function: str) -> WindowGeometry:
    """The geometry of `window` sliding over `input_size` (height, width) of an NHWC array."""
    output_size, pads = [], []
    for size, length, stride in zip(input_size, window, strides):
        count = output_length(size, length, stride, padding)
        if count < 1:
            raise ValueError(
                f"{function}: the {window[0]}x{window[1]} window does not fit in the "
                f"{input_size[0]}x{input_size[1]} input with padding='valid'; use "
                f"padding='same' or a smaller window")
        total = max((count - 1) * stride + length - size, 0) if padding == "same" else 0
        output_size.append(count)
        pads.append((total // 2, total - total // 2))
    return WindowGeometry(tuple(window), tuple(strides), tuple(input_size), tuple(output_size),
                          tuple(pads))


def pad_spatial(x, geometry: WindowGeometry, value=0):
    """The NHWC `x` padded on its spatial axes as `geometry` says, with `value`."""
    if not any(before or after for before, after in geometry.pads):
        return x
    pad_width = ((0, 0), *geometry.pads, (0, 0))
    return array_module(x).pad(x, pad_width, constant_values=value)


def extract_patches(x, geometry: WindowGeometry, pad_value=0):
    """The windows of the NHWC `x` as an (N, out_h, out_w, taps, C) array (im2col).

    Examples:
        >>> geometry = window_geometry((3, 3), (2, 2), (1, 1), "valid", "example")
        >>> extract_patches(np.arange(9.0).reshape(1, 3, 3, 1), geometry)[0, 0, 0, :, 0]
        array([0., 1., 3., 4.])
    """
    padded = pad_spatial(x, geometry, pad_value)
    return array_module(x).stack([padded[tap] for tap in geometry.taps], axis=3)


def fold_patches(patches, geometry: WindowGeometry):
    """The transpose of `extract_patches`: each tap's values added back where they were taken
    from, padding cropped off. `patches` is (N, out_h, out_w, taps, C); returns NHWC."""
    return fold_taps([patches[:, :, :, index, :] for index in range(patches.shape[3])],
                     geometry)


def fold_taps(taps: list, geometry: WindowGeometry):
    """`fold_patches` of the taps' (N, out_h, out_w, C) arrays, given one by one.

    Each tap's values are added, in tap order, to a zero image of the input's size, those that
    fall in the padding left out: every pixel gets the sum that a padded image would hold, in
    the same order (0 + first tap + second tap ...), and no work goes to the padding (half of
    a 5x5 "same" convolution's taps on a 4x4 image).
    """
    first = taps[0]
    xp = array_module(first)
    image = xp.zeros((first.shape[0], *geometry.input_size, first.shape[-1]), dtype=first.dtype)
    for values, (inside, within) in zip(taps, taps_inside(geometry)):
        if inside is not None:
            image[inside] += values[within]
    return image


def taps_inside(geometry: WindowGeometry) -> list:
    """For each tap in row-major order, where it lands inside the image: (the index of those
    pixels in an unpadded NHWC image, the index of the outputs they come from in an
    (N, out_h, out_w, C) array), or (None, None) where it lands in the padding only."""
    axes = []
    for window, stride, size, count, (before, _) in zip(
            geometry.window, geometry.strides, geometry.input_size, geometry.output_size,
            geometry.pads):
        along = []
        for offset in range(window):  # output o reads pixel o * stride + offset - before
            first = max(0, -(-(before - offset) // stride))
            last = min(count - 1, (size - 1 + before - offset) // stride)
            along.append(None if first > last else (
                slice(first * stride + offset - before, last * stride + offset - before + 1,
                      stride), slice(first, last + 1)))
        axes.append(along)
    found = []
    for rows in axes[0]:
        for columns in axes[1]:
            if rows is None or columns is None:
                found.append((None, None))
            else:
                found.append(((slice(None), rows[0], columns[0], slice(None)),
                              (slice(None), rows[1], columns[1], slice(None))))
    return found


def padding_share(geometry: WindowGeometry) -> float:
    """The share of the im2col matrix (`extract_patches`) that is padding: half for a 5x5
    "same" window on a 4x4 image, none with padding="valid"."""
    inside = 0
    for pixels, outputs in taps_inside(geometry):
        if pixels is not None:
            inside += ((outputs[1].stop - outputs[1].start)
                       * (outputs[2].stop - outputs[2].start))
    (window_h, window_w), (out_h, out_w) = geometry.window, geometry.output_size
    return 1.0 - inside / (window_h * window_w * out_h * out_w)
