"""The batching rules of the shape ops (runtime/primitives/shape.py declares each in its op's
row; runtime/primitives/batching.py says what a rule is)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..graph import StaticSlice
from .batching import axis_batching, shifted, taken_indices, unrolled_batching
from .index import IndexInput, batched_gather

AXIS = axis_batching("axis", defaults={"axis": -1}, flat_when_none="axis")
TWO_AXES = axis_batching("axis1", "axis2", defaults={"axis1": 0, "axis2": 1})


def roll_batching(call):
    x = call.args[0]
    if call.attrs.get("axis") is None:  # a roll of the flattened array, reshaped back
        flat = call.bind(np.reshape(x, (call.size, -1)), axis=1)
        return np.reshape(flat, np.shape(x))
    return call.bind(x, axis=shifted(call.attrs["axis"]))


def last_two_axes_batching(call):
    """np.tril and np.triu: of the last two axes, which a batch axis in front leaves alone."""
    if call.example_ndim(0) < 2:
        return unrolled_batching(call)  # a matrix of each vector
    return call.bind(call.args[0])


def tile_batching(call):
    reps = call.attrs["reps"]
    reps = reps if isinstance(reps, tuple) else (reps,)
    ndim = max(len(reps), call.example_ndim(0))
    reps = (1,) * (ndim - len(reps)) + reps
    return call.bind(call.aligned(0, ndim), reps=(1, *reps))


def diag_batching(call):
    if call.example_ndim(0) != 2:
        return unrolled_batching(call)  # a matrix of each vector
    return np.diagonal(call.args[0], call.attrs.get("k", 0), 1, 2)


def diff_batching(call):
    for edge in ("prepend", "append"):
        if np.ndim(call.attrs.get(edge)) > 0:
            return unrolled_batching(call)  # an array to put before or after each
    return axis_batching("axis", defaults={"axis": -1})(call)


def take_batching(call):
    """np.take(a, indices, axis): as indexing a[..., indices] along the axis. Boolean indices
    are 0 and 1 to np.take, not a mask as they are to indexing: they are made integers first."""
    indices = call.args[1]
    dtype = getattr(indices, "dtype", None)
    if np.dtype(np.result_type(indices) if dtype is None else dtype) == np.bool_:
        indices = np.astype(indices if dtype is not None else np.asarray(indices), np.intp)
        call = replace(call, args=(call.args[0], indices))
    call = taken_indices(call, (1,))
    a, indices = call.args
    if call.attrs.get("mode", "raise") != "raise":
        return unrolled_batching(call)
    axis = call.attrs.get("axis")
    if axis is None:
        a = np.reshape(call.with_batch(0), (call.size, -1))
        batched = (True, call.batched[1])
        axis = 0
    else:
        batched = call.batched
        axis = axis % call.example_ndim(0)
    template = (StaticSlice(None, None, None),) * axis + (IndexInput(0),)
    return batched_gather(a, batched[0], template, [indices], [batched[1]], call.size)


def take_along_axis_batching(call):
    call = taken_indices(call, (1,))
    arr, indices = call.with_batch(0), call.with_batch(1)
    axis = call.attrs["axis"]
    if axis is None:
        return call.bind(np.reshape(arr, (call.size, -1)), indices, axis=1)
    return call.bind(arr, indices, axis=shifted(axis))


def pad_batching(call):
    extra = set(call.attrs) - {"pad_width", "mode", "constant_values"}
    if extra or np.ndim(call.attrs.get("constant_values", 0)) > 0:
        return unrolled_batching(call)  # options of each axis
    widths = np.broadcast_to(np.array(call.attrs["pad_width"]), (call.example_ndim(0), 2))
    return call.bind(call.args[0], pad_width=((0, 0), *map(tuple, widths.tolist())))


def broadcast_to_batching(call):
    shape = call.attrs["shape"]
    return call.bind(call.aligned(0, len(shape)), shape=(call.size, *shape))


def broadcast_like_batching(call):
    a = call.aligned(0, call.example_ndim(1))
    if call.batched[1]:
        return call.bind(a, call.args[1])
    if any(size is None for size in np.shape(call.args[1])):  # known when the graph runs:
        return a * np.ones_like(call.args[1], dtype=a.dtype)  # broadcast by a product with 1
    return np.broadcast_to(a, (call.size, *np.shape(call.args[1])))


def join_batching(call):
    """concatenate and stack: every input gets the batch axis; the axis moves by one."""
    return call.bind(*[call.with_batch(p) for p in range(len(call.args))],
                     axis=call.attrs["axis"] + 1)
