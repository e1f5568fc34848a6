"""NumPy calls given a (nested) list of traced values where NumPy reads an array, for converted
code: `np.linalg.norm([a, b])`, `np.exp([a, 2.0])`, and operators between such a list and an
array (`np.split(x, 3) * W`, which runs `np.multiply`).

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
from ..python_operators import AUGMENTED_OPERATORS
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


def binary(symbol: str, a, b):
    """`a <symbol> b` for converted code (`binary("*", a, b)`): where NumPy reads a list of
    traced values beside an array as an array, which it cannot convert, the list stacked into
    one traced array first; lists joined or repeated (`items + [t]`, `items * 2`) stay
    Python's."""
    operate = AUGMENTED_OPERATORS[symbol][1]
    try:
        return operate(a, b)
    except TracerConversionError:
        if not (_traced_list(a) or _traced_list(b)):
            raise
    return operate(*(as_array(value, None) if _traced_list(value) else value
                     for value in (a, b)))


def _traced_list(value) -> bool:
    return isinstance(value, (list, tuple)) and holds_traced(value)
