"""The adjoints of structural functions that derivative rules call: sort and unsort, split and
join, stack, reshape, array, tile, repeat, pad, diagonal, take and take_along_axis (each the
other's adjoint, with its own rule in transforms/rules/derivative_helpers.py), where np.insert
and np.delete put what they were given, and the few checks on
gradient values that the broadcasting helpers (runtime/derivatives/adjoint_ops.py, which
re-exports these) share.

Like those helpers, each works on the array module of its input (NumPy, CuPy, or NumPy's names
over an array-API library's namespace) and returns a new value: gradients are never written in
place.
"""
from __future__ import annotations

import numpy as np

from ..array_api import numpy_dtype
from .dtypes import gradient_dtype, real_dtype
from .real_only import real_part
from .structure import _is_traced
from ..devices import add_at as add_at_in_place, array_module, set_at
from ..primitives.grids import check_indexing, grid_axis
from ..primitives.index import add_at, as_array, get_item, holds_traced, set_item
from ..primitives.insert import delete_sources, insert_sources  # noqa: F401 (delete_sources: for rules)
from ..primitives.pad import pad_sides
from ..primitives.stride_tricks import WRITEABLE_WINDOWS, window_axes
from ..user_frames import user_code_site

_FLOAT_KINDS = "fc"


def _holds_floats(x) -> bool:
    """Whether array `x` holds floats or complex numbers (values that carry gradients): asked
    through NumPy's dtype, as an array-API library's dtype (array_api_strict.float64) has no
    `.kind`. The hot paths ask a NumPy array's `x.dtype.kind` themselves."""
    return numpy_dtype(x.dtype).kind in _FLOAT_KINDS


def _float_zeros(x, g=None):
    """The zero gradient of an integer or boolean `x`: zeros of its shape, in the dtype of the
    gradient `g` that reached it (float64 where none did). An array of Python objects, which
    a gradient reached, is refused: its numbers carry gradient that zeros would drop."""
    if getattr(x, "dtype", None) == object:
        raise TypeError(
            f"a gradient reached an array of Python objects (dtype object, shape "
            f"{np.shape(x)}), as NumPy makes of an array and a Fraction, a Decimal or an "
            f"object of a class of yours: autotrace differentiates arrays of floating-point "
            f"numbers; convert it (np.asarray(v, dtype=float)) or the number (float(h))")
    return array_module(x).zeros(np.shape(x), dtype=gradient_dtype(g))


def _as_float(g):
    """`g` (0-d) as the Python float a float argument's gradient is, its real part where it is
    complex (real_only.real_part); inside autotrace.function, where float arguments are
    constants, a traced `g` stays traced."""
    return real_part(g) if _is_traced(g) else float(real_part(g))


def _sort_order(a, axis):
    a = as_array(a)  # np.sort([a, b]) sorts the array NumPy makes of the list
    xp = array_module(a)
    if axis is None:
        return xp.argsort(xp.ravel(a), kind="stable")
    return xp.argsort(a, axis=axis, kind="stable")


def sort_like(v, a, axis=-1):
    """`v` put in the order that sorts `a` along `axis` (None: flattened)."""
    v = as_array(v)  # (the tangents of a list np.sort reads as an array)
    xp = array_module(v)
    if axis is None:
        return xp.ravel(v)[_sort_order(a, None)]
    return xp.take_along_axis(v, _sort_order(a, axis), axis=axis)


def unsort(g, a, axis=-1):
    """The adjoint of `sort_like`: `g` (in sorted order) sent back to the positions in `a`."""
    xp = array_module(g)
    order = _sort_order(a, axis)
    inverse = xp.argsort(order, axis=-1 if axis is None else axis)
    if axis is None:  # (a traced `inverse` reads a concrete `g` too: get_item)
        return xp.reshape(get_item(g, inverse), np.shape(a))
    return xp.take_along_axis(g, inverse, axis=axis)


def _promoted_shape(shape, ndmin):
    if ndmin == 1 and len(shape) == 0:
        return (1,)
    if ndmin == 2 and len(shape) < 2:
        return (1,) * (2 - len(shape)) + tuple(shape)
    if ndmin == 3 and len(shape) < 3:  # np.atleast_3d: (n,) is (1, n, 1), (m, n) (m, n, 1)
        return {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}[len(shape)]
    if ndmin == -2 and len(shape) < 2:  # np.column_stack: (n,) is a column (n, 1)
        return (int(np.prod(shape, dtype=np.int64)), 1)
    return tuple(shape)


def split_like(g, arrays, axis=0, ndmin=0):
    """`g` cut into pieces shaped like `arrays`, which were joined along `axis` after being
    promoted to `ndmin` dimensions (0: concatenate, 1: hstack, 2: vstack, 3: dstack; -2:
    column_stack, which makes a column of a 1-d array)."""
    xp = array_module(g)
    shapes = [np.shape(x) for x in arrays]
    if axis is None:
        sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
        pieces = xp.split(xp.ravel(g), np.cumsum(sizes)[:-1].tolist())
    else:
        sizes = [_promoted_shape(s, ndmin)[axis] for s in shapes]
        pieces = xp.split(g, np.cumsum(sizes)[:-1].tolist(), axis=axis)
    return [xp.reshape(piece, shape) for piece, shape in zip(pieces, shapes)]


def join(pieces, axis=0, ndmin=0):
    """The adjoint of `split_like`: the pieces promoted to `ndmin` dimensions and joined."""
    xp = array_module(pieces[0])
    promoted = [xp.reshape(p if hasattr(p, "shape") else xp.asarray(p),  # floats too
                           _promoted_shape(np.shape(p), ndmin)) for p in pieces]
    return xp.concatenate(promoted, axis=axis)


def unstack(g, axis=0):
    """The adjoint of np.stack: `g` cut along `axis` into a list."""
    xp = array_module(g)
    moved = xp.moveaxis(g, axis, 0)
    if xp is np:  # NumPy arrays and traced values
        return list(moved)
    # The array API iterates over no array, and indexes every axis (`...`: all the others).
    return [moved[i, ...] for i in range(moved.shape[0])]


def reshape_each(g, arys):
    """The adjoint of np.atleast_Nd(*arys): one gradient per argument (its result is one array
    for one argument, a list for several). Each gradient is reshaped by its own array module:
    an argument may be a Python float."""
    if len(arys) == 1:
        return [array_module(g).reshape(g, np.shape(arys[0]))]
    return [array_module(gi).reshape(gi, np.shape(x)) for gi, x in zip(g, arys)]


def reshape_each_back(v, g):
    """The adjoint of `reshape_each(g, arys)` in g."""
    if isinstance(g, (list, tuple)):
        return [array_module(vi).reshape(vi, np.shape(gi)) for vi, gi in zip(v, g)]
    return array_module(v[0]).reshape(v[0], np.shape(g))


def unarray(g, obj):
    """The adjoint of np.array(obj) / np.asarray(obj): `g` in the structure of `obj`."""
    if type(obj) is float:
        return _as_float(g)
    if hasattr(obj, "shape"):
        if not _holds_floats(obj):
            return _float_zeros(obj, g)
        return g if getattr(g, "shape", ()) == obj.shape else array_module(g).reshape(g, obj.shape)
    if isinstance(obj, (list, tuple)):
        return [unarray(g[i], item) for i, item in enumerate(obj)]
    return 0.0 if isinstance(obj, (bool, int)) else g


def array_like(v, like):
    """`v` (an array, or a nested list of numbers and arrays: the gradient of `unarray`'s
    result) as one array of `like`'s shape, on `like`'s device (the adjoint of unarray), in
    `like`'s dtype where `v` holds Python floats alone (which NumPy would make float64)."""
    if holds_traced(v):  # a traced value, or a list holding some (second order, traced)
        return np.reshape(as_array(v), np.shape(like))
    xp = array_module(like)
    dtype = gradient_dtype(like) if _python_numbers_alone(v) else None
    return xp.reshape(xp.asarray(v, dtype=dtype), np.shape(like))


def _python_numbers_alone(v) -> bool:
    if isinstance(v, (list, tuple)):
        return all(_python_numbers_alone(item) for item in v)
    return isinstance(v, (float, int, complex)) and not isinstance(v, np.generic)


def untile(g, A, reps):
    """The adjoint of np.tile(A, reps): the tiles of `g` summed."""
    xp = array_module(g)
    shape = np.shape(A)
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    ndim = max(len(shape), len(reps))
    full = (1,) * (ndim - len(shape)) + tuple(shape)
    reps = (1,) * (ndim - len(reps)) + reps
    interleaved = [n for pair in zip(reps, full) for n in pair]
    summed = xp.sum(xp.reshape(g, interleaved), axis=tuple(range(0, 2 * ndim, 2)))
    return _as_float(summed) if type(A) is float else xp.reshape(summed, shape)


def writeable_windows(writeable) -> bool:
    """sliding_window_view's `writeable`, False: True is refused (its windows overlap, and
    writes through one change others)."""
    if writeable:
        raise NotImplementedError(f"autotrace does not differentiate {WRITEABLE_WINDOWS}")
    return False


def unwindow(g, x, window_shape, axis=None, writeable=False):
    """The adjoint of sliding_window_view(x, window_shape, axis): the gradient of each window
    added back to the items it read. One window axis at a time, from the last: its gradient
    at offset k (g[..., k]) goes to the items k further along the axis it slides on."""
    writeable_windows(writeable)
    xp = array_module(g)
    window, axes = window_axes(np.ndim(x), window_shape, axis)
    for size, along in reversed(list(zip(window, axes))):
        widths = [(0, 0)] * (np.ndim(g) - 1)
        total = None
        for offset in range(size):
            widths[along] = (offset, size - 1 - offset)
            part = xp.pad(g[..., offset], widths)
            total = part if total is None else total + part
        g = total
    return g


def unrepeat(g, a, repeats, axis=None):
    """The adjoint of np.repeat(a, repeats, axis): each run of repeated copies summed."""
    xp = array_module(g)
    shape = np.shape(a)
    if axis is None:
        g, axis, length = xp.ravel(g), 0, int(np.prod(shape, dtype=np.int64))
    else:
        axis = axis % len(shape)
        length = shape[axis]
    counts = np.broadcast_to(np.asarray(repeats), (length,))
    if np.all(counts == counts[0]) and length:
        split = g.shape[:axis] + (length, int(counts[0])) + g.shape[axis + 1:]
        summed = xp.sum(xp.reshape(g, split), axis=axis + 1)
    else:
        ends = np.cumsum(counts)
        padded = xp.concatenate([xp.zeros_like(xp.take(g, [0], axis=axis)),
                                 xp.cumsum(g, axis=axis)], axis=axis)
        summed = (xp.take(padded, xp.asarray(ends), axis=axis)
                  - xp.take(padded, xp.asarray(ends - counts), axis=axis))
    return _as_float(summed) if type(a) is float else xp.reshape(summed, shape)


# The modes of np.pad whose padding copies items of the array: the adjoint adds the gradient
# of each copy to the item it copies.
_COPYING_PADS = ("edge", "reflect", "symmetric", "wrap")


def _no_pad_rule(mode) -> str:
    site = user_code_site()  # (of a derivative's code: the user's line it was made from)
    return (("" if site is None else f'File "{site[0]}", line {site[1]}: ')
            + f"np.pad with mode={mode!r} has no derivative rule; the modes NumPy names have "
            f"one (to pad by a function, concatenate what it writes: "
            f"np.concatenate([2.0 * x[:1], x]))")


def pad_tangent_mode(mode):
    """`mode`, where the tangent of np.pad(array, pad_width, mode) is np.pad of the array's
    tangent in that mode: the modes that copy the array's items (weighted_pads.py has the
    others NumPy names). Raises for a mode that is a function."""
    if mode in _COPYING_PADS:
        return mode
    raise NotImplementedError(_no_pad_rule(mode))


def unpad(g, pad_width, mode="constant"):
    """The adjoint of np.pad(array, pad_width, mode): the middle of `g` in constant mode; in a
    mode that pads with copies of the array's items, the middle plus the gradient of every
    copy, added to the item it copies."""
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (np.ndim(g), 2))
    middle = tuple(slice(int(before), n - int(after))
                   for (before, after), n in zip(widths, np.shape(g)))
    if mode == "constant":
        return g[middle]
    if mode == "linear_ramp":
        return _linear_ramp_adjoint(g, widths)[0]
    if mode not in _COPYING_PADS:
        raise NotImplementedError(_no_pad_rule(mode))
    shape = tuple(n - int(before) - int(after) for (before, after), n in zip(widths, np.shape(g)))
    size = int(np.prod(shape, dtype=np.int64))
    sources = np.pad(np.arange(size).reshape(shape), widths, mode)  # the item each one copies
    xp = array_module(g)
    flat = xp.reshape(g, (-1,))
    out = _scatter_add(xp.zeros(size, dtype=flat.dtype), sources.reshape(-1), flat)
    return xp.reshape(out, shape)


def unpad_values(g, pad_width, constant_values=0, mode="constant"):
    """The adjoint of np.pad(array, pad_width, constant_values=...) with respect to the fill
    values, in their shape: each (before, after) value of each axis gets the gradient of the
    elements it fills (at a corner, those of the later axis, whose value NumPy writes last).
    With mode="linear_ramp", of np.pad(array, pad_width, mode, end_values=...) with respect to
    the end values (`constant_values` then holds them)."""
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (np.ndim(g), 2))
    ndim = len(widths)
    xp = array_module(g)
    if mode == "linear_ramp":
        per_value = _linear_ramp_adjoint(g, widths)[1]
    else:
        inner = tuple(n - int(before) - int(after)
                      for (before, after), n in zip(widths, np.shape(g)))
        fills = pad_sides(inner, widths)  # 0 the array's own, 1 + 2 * axis + (0 before, 1 after)
        sums = _scatter_add(xp.zeros(2 * ndim + 1, dtype=xp.result_type(g, 1.0)),
                            fills.reshape(-1), xp.reshape(g, (-1,)))
        per_value = xp.reshape(sums[1:], (ndim, 2))
    shape = _nested_shape(constant_values)
    if int(np.prod(shape, dtype=np.int64)) == 1:  # one value fills every side
        return xp.reshape(xp.sum(per_value), shape)
    if len(shape) == 1:  # (before, after), the same for every axis
        return xp.sum(per_value, axis=0)
    return xp.sum(per_value, axis=tuple(i for i in range(2) if shape[i] == 1), keepdims=True)


def _linear_ramp_adjoint(g, widths):
    """The adjoint of np.pad(array, widths, "linear_ramp", end_values=e): (the gradient of the
    array, that of the end values as an (ndim, 2) array). NumPy pads one axis after another,
    each from the edges of the array padded so far: before the array, at i = 0..b-1, it
    writes e + (edge - e) i / b, after it the same ramp reversed. So, from the last axis back,
    each side's gradient goes to its edge with weight i / b and to its end value with the
    rest."""
    xp = array_module(g)
    dtype = real_dtype(g)
    sums = [None] * len(widths)
    for axis in reversed(range(len(widths))):
        before, after = int(widths[axis][0]), int(widths[axis][1])
        size = np.shape(g)[axis]
        inner = size - before - after
        shape = [1] * np.ndim(g)
        shape[axis] = -1

        def part(start, stop):
            return g[(slice(None),) * axis + (slice(start, stop), Ellipsis)]

        def ramp(width, reverse):  # the edge's weight at each padded position
            steps = xp.arange(width - 1, -1, -1, dtype=dtype) if reverse else xp.arange(
                width, dtype=dtype)
            return xp.reshape(steps / width, shape)
        middle = part(before, size - after)
        sides = []
        for width, start, reverse, edge in ((before, 0, False, (0, inner - 1)),
                                            (after, size - after, True, (inner - 1, 0))):
            if not width:
                sides.append(xp.zeros((), dtype=dtype))
                continue
            padded, weights = part(start, start + width), ramp(width, reverse)
            to_edge = xp.sum(padded * weights, axis=axis, keepdims=True)
            pad_width = [(0, 0)] * np.ndim(g)
            pad_width[axis] = edge
            middle = middle + xp.pad(to_edge, pad_width)
            sides.append(xp.sum(padded * (1.0 - weights)))
        sums[axis] = xp.stack(sides)
        g = middle
    return g, xp.stack(sums)


def _nested_shape(value) -> tuple:
    """The shape of np.asarray(value), read without making it (its items may be traced)."""
    if hasattr(value, "shape"):
        return tuple(value.shape)
    if isinstance(value, (list, tuple)):
        return (len(value),) + (_nested_shape(value[0]) if len(value) else ())
    return ()


def diagonal_adjoint(g, a, offset=0, axis1=0, axis2=1):
    """The adjoint of np.diagonal(a, offset, axis1, axis2): zeros shaped like `a` with `g`
    (broadcast to the diagonal's shape) on that diagonal."""
    xp = array_module(g)
    shape = np.shape(a)
    ndim = len(shape)
    axis1, axis2 = axis1 % ndim, axis2 % ndim
    n, m = shape[axis1], shape[axis2]
    rest = tuple(s for i, s in enumerate(shape) if i not in (axis1, axis2))
    length = max(0, min(n + min(offset, 0), m - max(offset, 0)))
    rows = np.arange(length) + max(-offset, 0)
    cols = np.arange(length) + max(offset, 0)
    out = xp.zeros(rest + (n, m), dtype=xp.result_type(g, 1.0))
    on_diagonal = xp.broadcast_to(g, rest + (length,))
    if _is_traced(g):  # inside autotrace.function: the result is a new traced value
        out = set_item(out, (Ellipsis, rows, cols), on_diagonal)
    elif type(out) is np.ndarray:
        out[..., rows, cols] = on_diagonal
    else:  # on the array's device, and a new array where its library writes none in place
        out = set_at(out, (Ellipsis, rows, cols), on_diagonal)
    return xp.moveaxis(out, (-2, -1), (axis1, axis2))


def diag_adjoint(g, v, k=0):
    """The adjoint of np.diag(v, k): extract a diagonal (v 1-d) or embed one (v 2-d)."""
    if np.ndim(v) == 1:
        return array_module(g).diag(g, k)
    return diagonal_adjoint(g, v, k, 0, 1)


def _scatter_add(out, index, values):
    """`out` with `values` added at `index` (repeated indices add up): `out` itself, or a new
    traced value inside autotrace.function (where `values`, or any piece of `index`, is
    traced: a constant gradient can be sent back through a traced sort order)."""
    pieces = index if isinstance(index, tuple) else (index,)
    if _is_traced(values) or any(_is_traced(piece) for piece in pieces):
        return add_at(out, index, values)
    add_at_in_place(out, index, values)
    return out


def take_at(a, indices, axis=None, mode="raise"):
    """`np.take(a, indices, axis, mode=mode)` on `a`'s device (the adjoint of untake): CuPy's
    take has no `mode`, so on a GPU the indices are clipped or wrapped here first (an index out
    of range under "raise" wraps there: a GPU kernel cannot raise)."""
    xp = array_module(a)
    if xp is np or _is_traced(a) or _is_traced(indices):
        return np.take(a, indices, axis, mode=mode)
    length = a.size if axis is None else a.shape[axis]
    index = xp.asarray(indices)
    index = xp.clip(index, 0, length - 1) if mode == "clip" else index % length
    return xp.take(a, index, axis)


def untake(g, a, indices, axis=None, mode="raise"):
    """The adjoint of np.take(a, indices, axis, mode): `g` added back at the taken places."""
    xp = array_module(g)
    shape = np.shape(as_array(a))  # (a list holding traced values: of their stack)
    taken_from = (int(np.prod(shape, dtype=np.int64)),) if axis is None else shape
    axis = 0 if axis is None else axis % len(shape)
    length = taken_from[axis]
    index = xp.ravel(indices if _is_traced(indices) else xp.asarray(indices))
    if numpy_dtype(index.dtype).kind == "b":  # (np.take reads booleans as 0 and 1, not as
        index = index.astype(np.intp) if hasattr(index, "astype") else \
            xp.astype(index, xp.int64)  # a mask; an array-API array has no astype method)
    if mode == "clip":
        index = xp.clip(index, 0, length - 1)
    elif mode == "wrap":
        index = index % length
    # Under "raise" the indices go to the scatter as they are: it raises NumPy's IndexError
    # for one out of range, as np.take did. A traced gradient may never compute the take
    # itself (its value unused), so wrapping here would send the gradient to a wrong row.
    values = xp.reshape(g, taken_from[:axis] + (index.size,) + taken_from[axis + 1:])
    out = xp.zeros(taken_from, dtype=xp.result_type(g, 1.0))
    # (added along `axis` where it is, so that an index out of range names that axis)
    out = _scatter_add(out, (slice(None),) * axis + (index,), values)
    return _as_float(xp.reshape(out, ())) if type(a) is float else xp.reshape(out, shape)


def untake_along(g, a, indices, axis=-1):
    """The adjoint of np.take_along_axis(a, indices, axis): `g` added back where each of its
    elements was taken from (repeated indices add up; a dimension of `a` that broadcast
    against `indices` sums its gradient)."""
    if axis is None:  # a flattened: the same as np.take of the flat array
        return untake(g, a, indices, None)
    xp = array_module(g)
    shape, taken = np.shape(a), np.shape(g)
    axis %= len(shape)
    index = []
    for dimension, (size, taken_size) in enumerate(zip(shape, taken)):
        if dimension == axis:
            index.append(xp.broadcast_to(indices, taken))
            continue
        # Each element of g sits at its own place along the other axes, or at 0 where `a`
        # had length 1 there and broadcast.
        along = xp.arange(taken_size) if size == taken_size else xp.zeros(taken_size, int)
        index.append(xp.reshape(along, [-1 if d == dimension else 1 for d in range(len(shape))]))
    out = xp.zeros(shape, dtype=xp.result_type(g, 1.0))
    return _scatter_add(out, tuple(index), g)


def diff_part(a, axis, prepend, append, part: int):
    """The positions along `axis`, in what np.diff(a, axis=axis, prepend=..., append=...) takes
    the differences of, of its part `part`: 0 prepend's, 1 a's, 2 append's (None: not given;
    a number is joined on as a slab one element thick)."""
    sizes = [0 if edge is None else 1 if np.ndim(edge) == 0 else np.shape(edge)[axis]
             for edge in (prepend, append)]
    sizes.insert(1, np.shape(a)[axis])
    start = sum(sizes[:part])
    return array_module(a).arange(start, start + sizes[part])  # (on a's device: a GPU's take)


def insert_places(arr, obj, values, axis=None):
    """Where `np.insert(arr, obj, values, axis)` put its inputs, as flat positions in its result:
    (the place of each element of `arr`, an int array of arr's shape; the places that hold
    elements of `values`; the flat index in `values` of what each of those holds). A constant
    to the gradient: it reads shapes only."""
    sources = np.ravel(insert_sources(arr, obj, values, axis))
    arr_size = int(np.prod(np.shape(arr), dtype=np.int64))
    from_arr = sources < arr_size
    kept = np.empty(arr_size, np.intp)
    kept[sources[from_arr]] = np.flatnonzero(from_arr)
    placed = np.flatnonzero(~from_arr)
    return np.reshape(kept, np.shape(arr)), placed, sources[placed] - arr_size


def memory_order(a, order: str) -> str:
    """The order ("C" or "F") in which np.reshape or np.ravel with `order` read a's items:
    "A" is "F" for an array laid out in Fortran order alone, "K" the order of a contiguous
    array's memory; either for one of at most one dimension, where every order is one."""
    if order not in ("A", "K") or np.ndim(a) <= 1:
        return order
    flags = getattr(a, "flags", None)
    if flags is None:  # a traced value: its memory layout is not known
        raise NotImplementedError(
            f"autotrace differentiates np.reshape and np.ravel with order={order!r} of arrays "
            f"whose memory layout is known only: give order='C' or order='F'")
    if flags.f_contiguous and not flags.c_contiguous:
        return "F"
    if order == "K" and not flags.c_contiguous:
        raise NotImplementedError(
            "autotrace differentiates np.ravel with order='K' of a contiguous array only: give "
            "order='C' or order='F'")
    return "C"


def _fold_memory_order(arguments):
    """`memory_order(a, "C")` is "C" (and "F" is "F"): the order, where it is a constant that
    names one (transforms/rules/core.py folds such calls in the code it makes)."""
    order = arguments[1] if len(arguments) == 2 else None
    # (only a constant node's `value` is a string)
    return order if getattr(order, "value", None) in ("C", "F") else None


memory_order.__autotrace_fold__ = _fold_memory_order


def meshgrid_adjoint(gs, xs, indexing="xy", copy=True):
    """The gradients of `xs` from those, `gs`, of np.meshgrid(*xs, indexing=indexing)'s grids,
    dense or sparse: each grid's summed over every axis but the one its argument runs along,
    in its argument's shape. Refuses copy=False, as meshgrid_tangent does."""
    if not copy:
        raise NotImplementedError(_MESHGRID_VIEWS)
    count = len(xs)
    gradients = []
    for k, (g, x) in enumerate(zip(gs, xs)):
        axis = grid_axis(k, count, check_indexing(indexing))
        xp = array_module(g)
        summed = xp.sum(g, axis=tuple(i for i in range(count) if i != axis))
        gradients.append(xp.reshape(summed, np.shape(x)))
    return gradients


def meshgrid_tangent(ts, sparse=False, indexing="xy", copy=True):
    """The tangent of np.meshgrid's grids from its arguments' tangents `ts`: their grids, as
    a tuple (NumPy 2's kind). The grids of copy=False are views of the arguments, which the
    transforms do not follow: refused, as in the adjoint."""
    if not copy:
        raise NotImplementedError(_MESHGRID_VIEWS)
    xp = array_module(ts[0])
    if xp is np:
        return tuple(np.meshgrid(*ts, sparse=sparse, indexing=indexing))
    # (the array API's meshgrid takes no `sparse`: the grids as NumPy makes them, as views)
    count = len(ts)
    grids = [xp.reshape(t, tuple(-1 if axis == grid_axis(k, count, check_indexing(indexing))
                                 else 1 for axis in range(count))) for k, t in enumerate(ts)]
    return tuple(grids if sparse else xp.broadcast_arrays(*grids))


_MESHGRID_VIEWS = ("autotrace does not differentiate np.meshgrid(..., copy=False): its grids "
                   "are views of its arguments; drop copy=False")

