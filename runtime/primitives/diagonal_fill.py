"""np.fill_diagonal(a, val, wrap) as the write it is. NumPy writes `a.flat[:end:step] = val`: the
places of a's diagonal (of a tall matrix, past its first square too where `wrap`), the values
of val flattened and repeated, or cut, to their number. transforms/front/out_arguments.py
rewrites the statement into that write,

    np.fill_diagonal(a, val, wrap)   ->   a[diagonal_index(a, wrap)] = diagonal_values(val, a, wrap)

which the transforms and converted code then follow as any write into an item: into a copy of
an argument, through views and other names for a's memory, and traced. `diagonal_index` gives
only integers; `diagonal_values` is np.take of val in "wrap" mode, linear in val (its rules
are np.take's, transforms/rules/shape_functions.py).
"""
from __future__ import annotations

import math

import numpy as np

from ..array_api import numpy_dtype
from ..devices import array_module
from .index import as_array

_PYTHON_NUMBERS = (bool, int, float, complex)


def _places(shape: tuple, wrap: bool) -> np.ndarray:
    """The flat places np.fill_diagonal writes in an array of `shape`, with NumPy's errors."""
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    end = None
    if len(shape) == 2:
        step = shape[1] + 1
        if not wrap:  # a tall matrix's diagonal stops at the bottom of its first square
            end = shape[1] * shape[1]
    else:
        if any(size != shape[0] for size in shape):
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.sum(np.cumprod(shape[:-1])))
    return np.arange(math.prod(shape))[:end:step]


def diagonal_index(a, wrap=False) -> tuple:
    """The index of the items np.fill_diagonal(a, val, wrap) writes, one integer array per
    dimension of a."""
    return np.unravel_index(_places(np.shape(a), wrap), np.shape(a))


def diagonal_order(a, wrap=False) -> np.ndarray:
    """0, 1, ...: the places of val, flattened, that diagonal_values takes in "wrap" mode."""
    return np.arange(len(_places(np.shape(a), wrap)))


def diagonal_values(val, a, wrap=False):
    """The values np.fill_diagonal(a, val, wrap) writes at diagonal_index(a, wrap): val
    flattened, repeated or cut to their number (np.take(val, diagonal_order(a, wrap),
    mode="wrap"), on val's array module)."""
    val = as_array(val)
    if type(val) in _PYTHON_NUMBERS:
        # NumPy converts a Python number to a's dtype as Python does (float(1j) raises).
        module = array_module(a)
        val = np.asarray(val, dtype=numpy_dtype(a.dtype))
        val = val if module is np else module.asarray(val)
    size = math.prod(np.shape(val))
    if size == 0:
        raise ValueError("autotrace follows np.fill_diagonal(a, val) where val holds values; "
                         "with none it writes nothing: leave the call out")
    xp = array_module(val)
    places = diagonal_order(a, wrap) % size
    return xp.reshape(val, (-1,))[places if xp is np else xp.asarray(places)]
