"""The derivatives of np.pad in the modes whose padded items are weighted sums of the array's
items along one axis: a statistic of the items at the edge ('mean', 'maximum', 'minimum',
'median', over `stat_length` of them), an odd reflection ('reflect' and 'symmetric' with
reflect_type='odd': twice the edge less the mirrored item), and 'empty' (weights 0: what it
pads with is no function of the array).

NumPy pads one axis after another, each from the array padded along the axes before it, so a
pad is one linear map per axis, applied from the first axis on; the adjoint applies their
transposes from the last axis back. A mean weighs each item of its window 1/L; an extremum
weighs 1/(number of ties) where its window attains it, as np.max's rule splits a gradient; a
median weighs 1 its middle item, or 1/2 each of its middle two, ties split alike. The weights
of an extremum or a median change only where items tie, so the tangent is the same weighted
sum of the array's tangent, and both the tangent and the adjoint are linear in what they carry
(derivative_helpers.py gives each the other as its transpose).
"""
from __future__ import annotations

import numpy as np

from ..devices import array_module
from .dtypes import as_weights, real_dtype

_STATISTICS = ("mean", "maximum", "minimum", "median")


def weighted_pad_mode(mode, reflect_type="even") -> bool:
    """Whether np.pad(array, pad_width, mode, reflect_type=...) has its derivative here."""
    return (isinstance(mode, str) and mode in _STATISTICS + ("empty",)) or (
        mode in ("reflect", "symmetric") and reflect_type == "odd")


def weighted_pad(t, array, pad_width, mode, stat_length=None, reflect_type="even"):
    """The tangent of np.pad(array, pad_width, mode, stat_length=..., reflect_type=...) in a
    weighted mode (`weighted_pad_mode`), where `array` has the tangent `t`."""
    xp = array_module(t)
    if mode == "empty":
        return xp.pad(t, pad_width)
    widths, lengths = _pairs(np.ndim(array), pad_width), _pairs(np.ndim(array), stat_length)
    if mode not in _STATISTICS:  # an odd reflection: linear in the array, axis after axis
        for axis, width in enumerate(widths):
            if width != (0, 0):
                matrix = _reflection_matrix(np.shape(t)[axis], width, mode, reflect_type,
                                            real_dtype(t))
                t = xp.moveaxis(xp.tensordot(t, xp.asarray(matrix), axes=([axis], [1])), -1,
                                axis)
        return t
    for axis in range(np.ndim(array)):
        stage = _padded_before(array, widths, axis, mode, stat_length)
        before, after = _side_weights(stage, axis, widths[axis], lengths[axis], mode, t)
        t = _pad_axis(t, axis, widths[axis], before, after)
    return t


def weighted_unpad(g, array, pad_width, mode, stat_length=None, reflect_type="even"):
    """The adjoint of np.pad(array, pad_width, mode, ...) in a weighted mode: the gradient of
    the array from the gradient `g` of the padded one."""
    xp = array_module(g)
    ndim = np.ndim(array)
    widths, lengths = _pairs(ndim, pad_width), _pairs(ndim, stat_length)
    for axis in reversed(range(ndim)):
        before, after = int(widths[axis][0]), int(widths[axis][1])
        size = np.shape(g)[axis]
        middle = g[(slice(None),) * axis + (slice(before, size - after), Ellipsis)]
        if mode == "empty" or (before, after) == (0, 0):
            g = middle
        elif mode in _STATISTICS:
            stage = _padded_before(array, widths, axis, mode, stat_length)
            first, last = _side_weights(stage, axis, widths[axis], lengths[axis], mode, g)
            inner = size - before - after
            for span, weights in (((0, before), first), ((size - after, size), last)):
                if weights is not None:
                    middle = middle + _spread(g, axis, span, weights, inner)
            g = middle
        else:
            matrix = _reflection_matrix(size - before - after, widths[axis], mode,
                                        reflect_type, real_dtype(g))
            g = xp.moveaxis(xp.tensordot(g, xp.asarray(matrix), axes=([axis], [0])), -1, axis)
    return g


def _pairs(ndim, values):
    """pad_width or stat_length as NumPy reads it: a (before, after) pair per axis (None,
    None where no stat_length is given)."""
    if values is None:
        return ((None, None),) * ndim
    pairs = np.broadcast_to(np.round(np.asarray(values)).astype(np.int64), (ndim, 2))
    return tuple((int(first), int(second)) for first, second in pairs)


def _padded_before(array, widths, axis, mode, stat_length):
    """The array padded along the axes before `axis`: what NumPy pads `axis` of."""
    if all(width == (0, 0) for width in widths[:axis]):
        return array
    partial = tuple(widths[:axis]) + ((0, 0),) * (len(widths) - axis)
    return array_module(array).pad(array, partial, mode, stat_length=stat_length)


def _side_weights(stage, axis, width, length, mode, like):
    """The weights of the items of `stage` along `axis` in the value padded before it and in
    the one padded after it: (None where that side pads nothing, else (the window's slice,
    weights over the window)), in the real dtype of `like`."""
    size = np.shape(stage)[axis]
    sides = []
    for side, (padded, count) in enumerate(zip(width, length)):
        count = size if count is None or count > size else count
        window = slice(0, count) if side == 0 else slice(size - count, size)
        if padded == 0:
            sides.append(None)
            continue
        items = stage[(slice(None),) * axis + (window, Ellipsis)]
        sides.append((window, _statistic_weights(items, axis, mode, like)))
    return sides


def _statistic_weights(items, axis, mode, like):
    """d statistic(items along axis) / d items, ties split evenly."""
    xp = array_module(items)
    count = np.shape(items)[axis]
    if mode == "mean":
        return xp.ones(np.shape(items), dtype=real_dtype(like)) / count
    if mode != "median":
        picked = xp.max(items, axis=axis, keepdims=True) if mode == "maximum" else xp.min(
            items, axis=axis, keepdims=True)
        return _ties(items, picked, axis, like)
    ordered = xp.sort(items, axis=axis)

    def ranked(rank):
        return ordered[(slice(None),) * axis + (slice(rank, rank + 1), Ellipsis)]
    if count % 2:
        return _ties(items, ranked(count // 2), axis, like)
    return 0.5 * _ties(items, ranked(count // 2 - 1), axis, like) + 0.5 * _ties(
        items, ranked(count // 2), axis, like)


def _ties(items, value, axis, like):
    """1/(number of ties) where `items` equal `value` along `axis`, 0 elsewhere."""
    xp = array_module(items)
    attained = as_weights(xp.equal(items, value), like, always=True)
    return attained / xp.sum(attained, axis=axis, keepdims=True)


def _pad_axis(t, axis, width, before, after):
    """`t` padded along `axis`, each side with the weighted sum its weights give."""
    xp = array_module(t)
    parts = [t]
    for side, weights, count in ((0, before, width[0]), (1, after, width[1])):
        if weights is None:
            continue
        window, weight = weights
        value = xp.sum(t[(slice(None),) * axis + (window, Ellipsis)] * weight, axis=axis,
                       keepdims=True)
        shape = list(np.shape(value))
        shape[axis] = count
        filled = xp.broadcast_to(value, tuple(shape))
        parts.insert(0 if side == 0 else len(parts), filled)
    return xp.concatenate(parts, axis=axis) if len(parts) > 1 else t


def _spread(g, axis, span, weights, size):
    """The gradient of the items padded in `span` of `axis`, spread over the window they were
    computed from by its weights, in an array as long as the unpadded axis."""
    xp = array_module(g)
    total = xp.sum(g[(slice(None),) * axis + (slice(*span), Ellipsis)], axis=axis,
                   keepdims=True)
    window, weight = weights
    spread = total * weight
    widths = [(0, 0)] * np.ndim(g)
    widths[axis] = (window.start, size - window.stop)
    return xp.pad(spread, widths)


def _reflection_matrix(size, width, mode, reflect_type, dtype):
    """np.pad along one axis of `size` items, by an odd reflection, as a matrix: column j is
    the pad of the j-th unit vector (padded items are sums of the array's, with weights)."""
    return np.pad(np.eye(size, dtype=dtype), (width, (0, 0)), mode, reflect_type=reflect_type)
