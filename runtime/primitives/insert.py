"""np.insert, np.delete and np.append: functions that make an array longer or shorter.

Each traces as ops that already exist. Where the elements go is static (the places and the
shapes are known while tracing), so insert and delete are one gather by an index array found
by calling NumPy itself on numbered stand-ins: NumPy's rules for `obj` (an int, a slice, a list,
a mask) and for broadcasting `values` are then followed exactly, not written again. The
derivative rules read the same places (runtime/derivatives/structural_adjoints.py).
"""
from __future__ import annotations

import numpy as np

from ..abstract import unknown_dimension_error
from ..graph import StaticSlice
from .elementwise import astype
from .index import getitem, holds_traced, stacked
from .shape import concatenate, reshape
from .registry import is_traced, size_of, static, traces


def _known_shape(value, function: str) -> tuple:
    shape = np.shape(value)
    if None in shape:
        raise unknown_dimension_error(function, value.aval)
    return shape


def _numbered(shape: tuple, start: int = 0) -> np.ndarray:
    return np.arange(start, start + size_of(shape)).reshape(shape)


def _index(obj):
    """`obj` as NumPy takes it (a static slice back to a slice)."""
    return obj.to_slice() if isinstance(obj, StaticSlice) else obj


def insert_sources(arr, obj, values, axis=None) -> np.ndarray:
    """Where each element of `np.insert(arr, obj, values, axis)` comes from: an int array of
    the result's shape holding the flat index into `concatenate(ravel(arr), ravel(values))`.
    `arr` and `values` may be traced: only their shapes are read."""
    arr_shape = _known_shape(arr, "numpy.insert")
    values_shape = _known_shape(values, "numpy.insert")
    return np.insert(_numbered(arr_shape), _index(obj),
                     _numbered(values_shape, size_of(arr_shape)), axis)


def delete_sources(arr, obj, axis=None) -> np.ndarray:
    """Where each element of `np.delete(arr, obj, axis)` comes from: an int array of the
    result's shape holding the flat index into `ravel(arr)`."""
    return np.delete(_numbered(_known_shape(arr, "numpy.delete")), _index(obj), axis)


def _array(value, dtype=None):
    """A traced value as it is (cast to `dtype` if given); anything else as a NumPy array."""
    if isinstance(value, (list, tuple)) and holds_traced(value):
        value = stacked(value)
    if not is_traced(value):
        return np.asarray(value, dtype)
    return value if dtype is None or value.dtype == dtype else astype(value, dtype)


@traces(np.insert)
def bind_insert(arr, obj, values, axis=None):
    # values are cast to arr's dtype, as NumPy casts them
    arr = _array(arr)
    values = _array(values, arr.dtype)
    sources = insert_sources(arr, static(obj, "the obj of numpy.insert"), values,
                             static(axis, "the axis of numpy.insert"))
    return getitem(concatenate([reshape(arr, (-1,)), reshape(values, (-1,))]), (sources,))


@traces(np.delete)
def bind_delete(arr, obj, axis=None):
    arr = _array(arr)
    sources = delete_sources(arr, static(obj, "the obj of numpy.delete"),
                             static(axis, "the axis of numpy.delete"))
    return getitem(reshape(arr, (-1,)), (sources,))


@traces(np.append)
def bind_append(arr, values, axis=None):
    arr, values = _array(arr), _array(values)
    if axis is None:
        return concatenate([reshape(arr, (-1,)), reshape(values, (-1,))])
    return concatenate([arr, values], static(axis, "the axis of numpy.append"))
