"""NumPy calls given a (nested) list of traced values where NumPy reads an array, for converted
code: `np.linalg.norm([a, b])`, `np.exp([a, 2.0])`.

NumPy's dispatch (`__array_function__`, `__array_ufunc__`) does not look inside such a list, so
NumPy converts each traced value in it to an array, which raises TracerConversionError. Where it
does, the list was read as an array, so the call is made again with each list of traced values
stacked into one traced array (the array NumPy would have made), which dispatches to the tracer.
A list that NumPy reads as a sequence of arrays (`np.concatenate([a, b])`) dispatches the first
time: it is never stacked.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..primitives.index import as_array, holds_traced
from ..primitives.registry import numpy_functions
from .tracer import TracerConversionError


def reads_arrays(callee) -> bool:
    """Whether `callee` is a NumPy function or ufunc that autotrace traces."""
    return isinstance(callee, np.ufunc) or callee in numpy_functions


def with_lists_as_arrays(function: Callable) -> Callable:
    """`function`, called again with its lists of traced values stacked where NumPy could not
    read them as arrays."""
    def call(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except TracerConversionError:
            if not any(_traced_list(value) for value in (*args, *kwargs.values())):
                raise
        return function(*(as_array(value, None) for value in args),
                        **{key: as_array(value, None) for key, value in kwargs.items()})
    return call


def _traced_list(value) -> bool:
    return isinstance(value, (list, tuple)) and holds_traced(value)
