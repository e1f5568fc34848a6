"""An array method called through NumPy's array class is the method called on the array.

`np.ndarray.sort(a)` runs what `a.sort()` runs, and `np.ndarray.fill(a, v)` what `a.fill(v)`
does; written through the class, Python hands the array to ndarray's own method, which takes a
NumPy array only and cannot take a traced one. Each such call is rewritten into the method
call, before any other pass reads the function, so that it is traced, differentiated or
refused as the method call is:

    np.ndarray.sort(a, axis=0)    ->  a.sort(axis=0)
    np.ndarray.fill(a, 0.0)       ->  a.fill(0.0)

The in-place operator methods (`np.ndarray.__iadd__(a, x)`) are in_place_dunders.py's.
"""
from __future__ import annotations

import gast
import numpy as np

from .parsing import resolve
from ..codegen.nodes import walk


def rewrite_class_method_calls(function: gast.FunctionDef, namespace: dict) -> None:
    """Rewrite, in place, each call `np.ndarray.<method>(a, ...)` in `function` (nested
    functions too) whose first argument is given by position into `a.<method>(...)`."""
    for node in walk(function):
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                and node.args and not isinstance(node.args[0], gast.Starred)):
            continue
        name = node.func.attr
        if name.startswith("__") or getattr(np.ndarray, name, None) is None:
            continue
        try:
            if resolve(node.func, namespace) is not getattr(np.ndarray, name):
                continue
        except TypeError:  # a value that cannot be compared
            continue
        node.func = gast.copy_location(
            gast.Attribute(value=node.args[0], attr=name, ctx=gast.Load()), node.func)
        node.args = node.args[1:]
