"""np.pad: the op `pad[pad_width, mode, ...]`, its options attributes known while tracing.

Fill values that are traced (computed in the traced function: `constant_values=(x[0], 0.0)`)
cannot be attributes: the array is padded with zeros, and each padded element then takes the
value of its side by ops of their own. NumPy fills one value, a (before, after) pair for every
axis, or a pair per axis, axis after axis: a corner holds the later axis's value
(`pad_sides`, which the derivative of the fill values reads too).
"""
from __future__ import annotations

import numpy as np

from .. import array_api_index
from ..abstract import unknown_dimension_error
from .index import getitem, holds_traced, stacked
from .registry import bind, define_function, static, traces
from .shape_batching import pad_batching

define_function("pad", np.pad, fresh=True, array_api_function=array_api_index.pad,
                batching=pad_batching)


def pad_sides(shape: tuple, pad_width) -> np.ndarray:
    """Which fill value each element of np.pad(an array of `shape`, pad_width) holds: 0 the
    array's own, 1 + 2 * axis + (0 before, 1 after) the value of that side of that axis."""
    ndim = len(shape)
    return np.pad(np.zeros(shape, np.intp), pad_width,
                  constant_values=np.arange(1, 2 * ndim + 1).reshape(ndim, 2))


@traces(np.pad)
def bind_pad(array, pad_width, mode="constant", **kwargs):
    pad_width = static(pad_width, "pad_width")
    if mode == "constant" and holds_traced(kwargs.get("constant_values")):
        return _pad_with_traced_values(array, pad_width, **kwargs)
    attrs = {key: static(value, f"the argument {key} of numpy.pad")
             for key, value in kwargs.items()}
    return bind("pad", array, pad_width=pad_width, mode=mode, **attrs)


def _pad_with_traced_values(array, pad_width, constant_values):
    """The array padded with zeros, each padded element then the value of its side, cast to
    the array's dtype as NumPy casts it."""
    if None in array.shape:
        raise unknown_dimension_error("numpy.pad with traced constant_values", array.aval)
    values = stacked(constant_values) if isinstance(constant_values, (list, tuple)) \
        else constant_values
    if np.size(values) == 1:
        values = np.reshape(values, ())
    ndim = array.ndim
    # Indexed by pad_sides: 0 for the array's own elements (which np.where keeps), then each
    # side's value.
    sides = np.concatenate([np.zeros(1, array.dtype),
                            np.reshape(np.broadcast_to(values, (ndim, 2)), (-1,))])
    fills = pad_sides(tuple(array.shape), pad_width)
    padded = bind("pad", array, pad_width=pad_width, mode="constant")
    return np.where(fills == 0, padded, getitem(sides, fills).astype(array.dtype))
