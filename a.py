"""<lambda>, traced by autotrace and exported as NumPy code.

    lambda_(x)

Inputs (? is any size):
    x: f64[2]

Needs NumPy alone. Constants are in a.npz, beside this file.
"""
from __future__ import annotations

import math
import os

import numpy as np


_FOLDER = os.path.dirname(os.path.abspath(__file__))
with np.load(os.path.join(_FOLDER, 'a.npz'), allow_pickle=False) as _saved:
    _constants = {key: _saved[key] for key in _saved.files}
# The Variables the function reads and assigns, by name: its state between calls.
variables = {}


def _check(name, value, shape, dtype):
    """`value` as an array of `shape` (None: any size) and `dtype`, or a TypeError."""
    array = np.asarray(value)
    if array.dtype != np.dtype(dtype) or array.ndim != len(shape) or any(
            want is not None and want != have for want, have in zip(shape, array.shape)):
        raise TypeError(f"{name}: expected an array of shape {shape} and dtype "
                        f"{np.dtype(dtype)}, got one of shape {array.shape} and dtype "
                        f"{array.dtype}")
    return array


def _fixed(name, value, exported):
    """A ValueError unless `value` is what the argument `name` was when the module was made."""
    if type(value) is not type(exported) or value != exported:
        raise ValueError(f"{name}: this module was exported with {name}={exported!r}, which "
                         f"its code has built in; export it again for {name}={value!r}")


def _lambda__graph(a):
    print(a, sep=' ', end='\n')
    return ()


def lambda_(x):
    """<lambda>, traced and exported by autotrace; see the module docstring."""
    x = _check('x', x, (2,), '<f8')
    _outputs = _lambda__graph(x)
    return None
