"""NumPy's scalar types called on traced values, `np.float32(x[0])`: converted code calls these
in their place (control_statements.py NUMPY_REPLACEMENTS), as NumPy's types cannot see a
traced value.

    y = np.float32(x[0])   # x: f64[3] -> astype[dtype=float32] (getitem x 0): a NumPy scalar
    z = np.float32(x)      # -> astype[dtype=float32] x: a new array, as NumPy gives

NumPy's `np.float32(v)` of a 0-d value (a NumPy scalar, a 0-d array, a Python number) is a
NumPy scalar of that type, and of an array a new array of that dtype: the traced value's astype,
which is both. Called on anything else (no traced value, or more arguments) it is NumPy's own.
"""
from __future__ import annotations

import numpy as np

from ..primitives.elementwise import astype
from ..primitives.registry import is_traced


def _constructor(scalar_type):
    def call(*args, **kwargs):
        if len(args) != 1 or kwargs or not is_traced(args[0]):
            return scalar_type(*args, **kwargs)
        value = astype(args[0], np.dtype(scalar_type))
        if value.ndim == 0:  # (a NumPy scalar, whatever the 0-d value it was made of)
            value._builder.zero_d_kinds[value.graph_var] = "a NumPy scalar"
        return value
    call.__name__ = call.__qualname__ = scalar_type.__name__
    return call


# np.float32, np.int64, np.complex128, np.bool_ and the rest of NumPy's number types
SCALAR_TYPES = {scalar_type: _constructor(scalar_type) for scalar_type in set(
    np.sctypeDict.values()) if issubclass(scalar_type, (np.number, np.bool_))}
