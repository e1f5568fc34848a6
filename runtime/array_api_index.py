"""NumPy's indexing over an array-API namespace (runtime/array_api.NumpyNames), from standard
functions: the standard indexes with slices and integers over every axis, or with integer
arrays alone, and assigns through slices and integers only.

- `getitem(names, x, index)`: any NumPy index of integers, slices, None, `...`, integer arrays
  (lists) and one boolean mask. Integer arrays (with the integers beside them) select through
  one `take` over the axes they index, flattened; the result's axes are placed as NumPy places
  them (where the first indexed axis was if the indexed axes are adjacent, else first).
- `setitem(names, x, index, value)`: a copy of `x` with `copy[index] = value`.
- `scatter_add(names, x, index, value)`: a copy of `x` with `np.add.at(copy, index, value)`:
  positions that repeat add up, in index order, as NumPy adds them.
- `take`, `split`, `diag` and `pad` (mode "constant") as NumPy's.
The primitive of each (np.split's facts, as no primitive is named after it) names it
(`array_api_function`, runtime/primitives/index.py and shape.py).
Assignment through integer arrays works on element positions: the index applied to the array
of positions `arange(x.size)` says which element each value goes to; values are written
round by round, each round writing at most once per position (the k-th occurrence of each
position in round k), with `where` and `searchsorted` in place of a scatter.
"""
from __future__ import annotations

import math

import numpy as np


def _expanded(names, x, index) -> tuple:
    """`index` as a tuple with one entry per axis of `x` (None entries besides), lists and
    NumPy arrays made arrays of the namespace, a NumPy bool scalar a Python bool."""
    if not isinstance(index, tuple):
        index = (index,)
    items = []
    for item in index:
        if isinstance(item, (list, np.ndarray)):
            item = names.asarray(item)
        elif isinstance(item, np.integer):
            item = int(item)
        items.append(item)
    used = sum(_axes_used(names, item) for item in items if item is not Ellipsis)
    if Ellipsis in [item for item in items if not names.is_array(item)]:
        at = next(i for i, item in enumerate(items)
                  if not names.is_array(item) and item is Ellipsis)
        items[at:at + 1] = [slice(None)] * (x.ndim - used)
    else:
        items += [slice(None)] * (x.ndim - used)
    return tuple(items)


def _is_mask(names, item) -> bool:
    return names.is_array(item) and names.kind(item) == "b"


def _axes_used(names, item) -> int:
    if item is None:
        return 0
    return item.ndim if _is_mask(names, item) else 1


def _is_advanced(names, item) -> bool:
    return names.is_array(item) or isinstance(item, int) and not isinstance(item, bool)


def getitem(names, x, index):
    x = names.asarray(x)
    items = _expanded(names, x, index)
    arrays = [item for item in items if names.is_array(item)]
    if not arrays or any(_is_mask(names, item) for item in arrays):
        return x[items]  # slices and integers, or a boolean mask: the standard's own
    if any(item is None for item in items):
        raise names.unsupported(
            "autotrace cannot index an array-API array with integer arrays and None together; "
            "index first, then add the axis with np.expand_dims")
    # basic part first: slices stay, advanced items (arrays, integers) keep their axis
    basic = tuple(slice(None) if _is_advanced(names, item) else item for item in items)
    sliced = x[basic]
    advanced_axes = [axis for axis, item in enumerate(items) if _is_advanced(names, item)]
    positions = [names.asarray(items[axis]) for axis in advanced_axes]
    sizes = [sliced.shape[axis] for axis in advanced_axes]
    positions = [names.xp.where(p < 0, p + size, p) for p, size in zip(positions, sizes)]
    positions = names.xp.broadcast_arrays(*positions)
    linear = positions[0]
    for position, size in zip(positions[1:], sizes[1:]):
        linear = linear * size + position
    rest = [axis for axis in range(sliced.ndim) if axis not in advanced_axes]
    moved = names.xp.permute_dims(sliced, (*advanced_axes, *rest))
    flat = names.xp.reshape(moved, (math.prod(sizes), *[sliced.shape[a] for a in rest]))
    taken = names.take(flat, linear, axis=0)
    adjacent = advanced_axes == list(range(advanced_axes[0], advanced_axes[-1] + 1))
    if not adjacent or advanced_axes[0] == 0:
        return taken
    # NumPy puts the indexed axes where the first of them was, when they are adjacent
    count, first = linear.ndim, advanced_axes[0]
    order = (*range(count, count + first), *range(count), *range(count + first, taken.ndim))
    return names.xp.permute_dims(taken, order)


def _target_positions(names, x, index):
    """For each element `x[index]` selects, its position in `x` flattened (an int64 array of
    the shape of `x[index]`); None when `index` is a standard one (slices and integers)."""
    items = _expanded(names, x, index)
    if not any(names.is_array(item) for item in items):
        return None
    flat_positions = names.xp.arange(math.prod(x.shape), device=names.device)
    return getitem(names, names.xp.reshape(flat_positions, x.shape), items)


def _write(names, x, index, value, combine):
    """A copy of `x` with `combine(old, value)` written at `index`, repeated positions in
    order."""
    x = names.asarray(x, copy=True)
    positions = _target_positions(names, x, index)
    if positions is None:
        items = _expanded(names, x, index)
        selected = x[items]
        value = names.broadcast_to(value, selected.shape)
        # None adds an axis of length 1 to what is selected, not to the array assigned into
        items = tuple(item for item in items if item is not None)
        x[items] = combine(x[items], names.reshape(value, x[items].shape))
        return x
    xp = names.xp
    (value,) = names._promoted([value])
    value = xp.reshape(xp.broadcast_to(xp.astype(value, x.dtype), positions.shape), (-1,))
    positions = xp.reshape(positions, (-1,))
    order = xp.argsort(positions, stable=True)
    positions, value = xp.take(positions, order), xp.take(value, order)
    occurrence = xp.arange(positions.shape[0], device=names.device) - xp.searchsorted(
        positions, positions, side="left")
    flat = xp.reshape(x, (-1,))
    everywhere = xp.arange(flat.shape[0], device=names.device)
    rounds = int(xp.max(occurrence)) + 1 if positions.shape[0] else 0
    for round_number in range(rounds):
        chosen = occurrence == round_number
        at, values = positions[chosen], value[chosen]  # sorted, each position once
        slot = xp.clip(xp.searchsorted(at, everywhere), 0, at.shape[0] - 1)
        hit = xp.take(at, slot) == everywhere
        flat = xp.where(hit, combine(flat, xp.take(values, slot)), flat)
    return xp.reshape(flat, x.shape)


def setitem(names, x, index, value):
    return _write(names, x, index, value, lambda old, new: new)


def scatter_add(names, x, index, value):
    return _write(names, x, index, value, lambda old, new: old + new)



# --- taking, splitting, padding -------------------------------------------------------------

def split(names, x, indices_or_sections, axis=0):
    size = x.shape[axis]
    if isinstance(indices_or_sections, int):
        if size % indices_or_sections:
            raise ValueError("array split does not result in an equal division")
        step = size // indices_or_sections
        indices_or_sections = list(range(step, size, step))
    bounds = [0, *indices_or_sections, size]
    index = [slice(None)] * x.ndim
    pieces = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        index[axis] = slice(start, stop)
        pieces.append(x[tuple(index)])
    return pieces


def diag(names, v, k=0):
    if v.ndim == 2:
        return names.linalg.diagonal(v, offset=k)
    size = v.shape[0] + abs(k)
    rows = names.xp.arange(size, device=names.device)[:, None]
    columns = names.xp.arange(size, device=names.device)[None, :]
    along = names.xp.clip(rows - max(-k, 0), 0, v.shape[0] - 1)
    return names.xp.where(columns - rows == k, names.xp.take(v, along[:, 0])[:, None],
                          names.xp.zeros((), dtype=v.dtype, device=names.device))


_STATISTICS = ("maximum", "minimum", "mean", "median")


def pad(names, x, pad_width, mode="constant", constant_values=0, end_values=0,
        stat_length=None, reflect_type="even"):
    if mode not in ("constant", "linear_ramp", "empty", *_STATISTICS):
        raise names.unsupported(f"numpy.pad with mode={mode!r} cannot run on "
                                f"{names.xp.__name__} arrays; only mode='constant', "
                                f"'linear_ramp', 'empty' and the statistics "
                                f"('maximum', 'minimum', 'mean', 'median') can")
    widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (x.ndim, 2))
    if mode in _STATISTICS:
        return _pad_with_statistics(names, x, widths, mode, stat_length)
    if mode == "empty":  # NumPy leaves the padding uninitialised: any value is one of its
        mode = "constant"
    # One value, a (before, after) pair, or a pair per axis; a later axis's sides span the
    # earlier ones', as NumPy's corners hold the later axis's value (and a later axis's ramps
    # start from the edges the earlier ones padded).
    values = np.broadcast_to(np.asarray(constant_values if mode == "constant" else end_values),
                             (x.ndim, 2))
    for axis, ((before, after), pair) in enumerate(zip(widths.tolist(), values.tolist())):
        if before or after:
            def side(width, value, at_end):
                shape = (*x.shape[:axis], width, *x.shape[axis + 1:])
                if mode == "constant":
                    return names.xp.full(shape, value, dtype=x.dtype, device=names.device)
                # NumPy's linspace from the end value to the edge, without the edge
                edge_at = x.shape[axis] - 1 if at_end else 0
                edge = x[(slice(None),) * axis + (slice(edge_at, edge_at + 1), Ellipsis)]
                steps = names.xp.arange(width, dtype=x.dtype, device=names.device) / width
                if at_end:  # after the array: the ramp reversed (an axis of one item too)
                    steps = names.xp.flip(steps)
                steps = names.xp.reshape(steps, (width,) + (1,) * (x.ndim - axis - 1))
                return names.xp.broadcast_to(value + (edge - value) * steps, shape)
            x = names.xp.concat([side(before, pair[0], False), x,
                                 side(after, pair[1], True)], axis=axis)
    return x


def _pad_with_statistics(names, x, widths, mode, stat_length):
    """np.pad's 'maximum', 'minimum', 'mean' and 'median': axis after axis, each side the
    statistic of the `stat_length` items nearest it (all of the axis for None), taken over
    the earlier axes' padding too, as NumPy pads; integer arrays take the rounded mean or
    median, as NumPy rounds them."""
    lengths = np.broadcast_to(np.asarray(stat_length if stat_length is not None else -1,
                                         dtype=int), (x.ndim, 2))
    for axis, ((before, after), (first, last)) in enumerate(zip(widths.tolist(),
                                                                lengths.tolist())):
        if not (before or after):
            continue
        size = x.shape[axis]
        if size == 0 or first == 0 or last == 0:
            raise ValueError("stat_length of 0 yields no value for padding")

        def side(width, start, stop):
            chunk = x[(slice(None),) * axis + (slice(start, stop), Ellipsis)]
            value = _statistic(names, chunk, mode, axis)
            return names.xp.broadcast_to(value, (*x.shape[:axis], width, *x.shape[axis + 1:]))
        first = size if first < 0 else min(first, size)
        last = size if last < 0 else min(last, size)
        x = names.xp.concat([side(before, 0, first), x, side(after, size - last, size)],
                            axis=axis)
    return x


def _statistic(names, chunk, mode, axis):
    xp = names.xp
    if mode in ("maximum", "minimum"):
        return (xp.max if mode == "maximum" else xp.min)(chunk, axis=axis, keepdims=True)
    rounded = names.kind(chunk) in "iub"
    values = xp.astype(chunk, xp.float64) if rounded else chunk
    if mode == "mean":
        value = xp.mean(values, axis=axis, keepdims=True)
    else:
        ordered, count = xp.sort(values, axis=axis), chunk.shape[axis]
        def middle(i):
            return ordered[(slice(None),) * axis + (slice(i, i + 1), Ellipsis)]
        value = middle(count // 2) if count % 2 else (middle(count // 2 - 1)
                                                       + middle(count // 2)) / 2
    return xp.astype(xp.round(value), chunk.dtype) if rounded else value


def take(names, x, indices, axis=None):
    if axis is None:
        x, axis = names.ravel(x), 0
    indices = names.asarray(indices)
    taken = names.xp.take(x, names.ravel(indices), axis=axis)
    axis = axis % x.ndim
    return names.xp.reshape(taken, (*x.shape[:axis], *indices.shape, *x.shape[axis + 1:]))
