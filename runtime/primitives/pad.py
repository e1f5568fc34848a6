"""np.pad: the op `pad[pad_width, mode, ...]`, its options attributes known while tracing; and
np.diff, whose `prepend` and `append` are joined on before and after as pad's fill values are.

Fill values that are traced (computed in the traced function: `constant_values=(x[0], 0.0)`)
cannot be attributes: the array is padded with zeros, and each padded element then takes the
value of its side by ops of their own. Traced end values of a linear ramp likewise: the ramps
to ends of 0, plus each end value times the (constant) ramps it leads. NumPy fills one
value, a (before, after) pair for every axis, or a pair per axis, axis after axis: a corner
holds the later axis's value (`pad_sides`, which the derivative of the fill values reads
too).
"""
from __future__ import annotations

import numpy as np

from .. import array_api_index
from ..abstract import unknown_dimension_error
from .index import getitem, holds_traced, stacked
from .primitive import NOT_CONSTANT
from .registry import (bind, define_function, define_traced_function, is_traced,
                       numpy_functions, static, traces)
from .shape_batching import diff_batching, pad_batching

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
    if mode == "linear_ramp" and holds_traced(kwargs.get("end_values")):
        return _ramp_to_traced_ends(array, pad_width, **kwargs)
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


def _ramp_to_traced_ends(array, pad_width, end_values):
    """np.pad(array, pad_width, "linear_ramp", end_values) with traced end values: the ramps
    to ends of 0, plus each end value times the ramps it leads (linear in the end values:
    constants of the graph, one per side of each axis)."""
    if None in array.shape:
        raise unknown_dimension_error("numpy.pad with traced end_values", array.aval)
    if array.dtype.kind not in "fc":
        raise TypeError(
            f"numpy.pad with mode='linear_ramp' and traced end_values needs a floating array "
            f"(NumPy rounds the ramps of a {array.dtype} array): cast it first")
    values = stacked(end_values) if isinstance(end_values, (list, tuple)) else end_values
    ndim = array.ndim
    ends = np.reshape(np.broadcast_to(values, (ndim, 2)), (-1,))
    zeros = np.zeros(tuple(array.shape), array.dtype)
    ramps = np.stack([np.pad(zeros, pad_width, "linear_ramp",
                             end_values=np.eye(2 * ndim)[side].reshape(ndim, 2))
                      for side in range(2 * ndim)])
    padded = bind("pad", array, pad_width=pad_width, mode="linear_ramp", end_values=0)
    return padded + np.tensordot(ends.astype(array.dtype), ramps, axes=1)


# --- np.diff ------------------------------------------------------------------------------------

# n=0 gives the argument itself, which the binding returns: no view to keep; any other n a new
# array. A prepend or append known while tracing is an attribute.
define_traced_function(np.diff, batching=diff_batching, view=lambda result, a, *args, **kw: None,
                       source_view=lambda a, n=1, *args, **kw: (0,) if n in (0, NOT_CONSTANT)
                       else ())
_diff_of_order = numpy_functions[np.diff]


@traces(np.diff)
def bind_diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """NumPy's np.diff: with n=0 `a` itself (a write through the result reaches it); a traced
    prepend or append joined on along the axis as NumPy joins it (a number as a slab of it one
    element thick)."""
    if static(n, "n of numpy.diff") == 0:
        return a
    edges = {"prepend": prepend, "append": append}
    if is_traced(prepend) or is_traced(append):
        shape = list(np.shape(a))
        shape[axis] = 1

        def slab(edge):
            return np.broadcast_to(edge, shape) if np.ndim(edge) == 0 else edge
        a = np.concatenate([slab(prepend)] * (prepend is not np._NoValue) + [a] + [
            slab(append)] * (append is not np._NoValue), axis)
        edges = {}
    return _diff_of_order(a, n, axis, **{key: edge for key, edge in edges.items()
                                         if edge is not np._NoValue})
