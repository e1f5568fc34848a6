"""Derivative helpers of np.convolve and np.correlate: where a mode's result lies in the full one.

Both are bilinear. np.convolve(a, v, mode) is a slice of the full convolution, y[k] = sum_j
a[j] v[k - j]; np.correlate(a, v, mode) is a slice of np.convolve(a, conj(v[::-1]), "full").
The gradient of <g, y> in a is then the full cotangent (g with the zeros the mode cut off, on
both sides) convolved "valid" with v reversed, and in v with a reversed: convolutions again,
whose rules are these rules. `full_padding` says how many zeros go on each side.

The slices: "full" is all of it, "valid" starts at min(n, m) - 1 and "same", max(n, m) long,
at (min(n, m) - 1) // 2. NumPy's np.correlate swaps its arguments where v is the longer and
reverses the result, which moves "same" by one where min(n, m) is even: it starts at
min(n, m) // 2 there.
"""
from __future__ import annotations

import numpy as np

_MODES = {"valid": "valid", "same": "same", "full": "full", 0: "valid", 1: "same", 2: "full"}


def full_padding(function: str, n: int, m: int, mode) -> tuple:
    """(before, after): the zeros around the result of `function` ("convolve" or "correlate")
    of arrays of sizes n and m in `mode` that make it the full result."""
    mode = _MODES.get(mode)
    if mode is None:
        raise ValueError("Use one of 'valid', 'same', or 'full' for convolve/correlate mode")
    full, shorter, longer = n + m - 1, min(n, m), max(n, m)
    if mode == "full":
        return (0, 0)
    if mode == "valid":
        return (shorter - 1, full - (shorter - 1) - (longer - shorter + 1))
    swapped = function == "correlate" and m > n
    before = shorter // 2 if swapped else (shorter - 1) // 2
    return (before, full - before - longer)


# np.trapezoid(y, x, dx, axis) = sum(widths * (y[1:] + y[:-1]) / 2) along the axis, widths dx or
# np.diff(x): linear in y, and in (x, dx) together.

def side_padding(ndim: int, axis: int, before: int, after: int) -> tuple:
    """np.pad's pad_width for `before` and `after` zeros along `axis` of `ndim` dimensions."""
    widths = [(0, 0)] * ndim
    widths[axis] = (before, after)
    return tuple(widths)


def product_shape(widths, pairs) -> tuple:
    """The shape of np.trapezoid's products of `widths` and `pairs`, before its sum."""
    return np.broadcast_shapes(np.shape(widths), np.shape(pairs))


def width_axis(x, axis: int) -> int:
    """The axis of x along which np.trapezoid takes its differences: a 1-d x's only one."""
    return 0 if len(np.shape(x)) == 1 else axis


def difference_shape(x, axis: int) -> tuple:
    """The shape of np.diff(x) along the axis np.trapezoid takes it (width_axis)."""
    shape = list(np.shape(x))
    shape[width_axis(x, axis)] -= 1
    return tuple(shape)
