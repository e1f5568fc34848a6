"""What a call's result may share with what it was given, as far as the call's source says.

NumPy's functions make new arrays, but for the views (`np.reshape(A, ...)`, `A.T`); builtins
make new numbers and containers; a Python function autotrace can read is read
(transforms/analysis/aliases.py); anything else may return what it was given.
"""
from __future__ import annotations

import inspect

import gast
import numpy as np

from ..front.parsing import MISSING, resolve
from ...runtime.ops import NO_FACTS, array_methods, function_facts, names_with

# The names of NumPy's functions, and of the array methods that are such functions, whose result
# may be a view of their first argument (or the argument itself), by their facts (FunctionFacts,
# declared in each function's row of runtime/primitives/); and `x.view()`, an ndarray method that
# is no NumPy function.
VIEW_FUNCTIONS = names_with("view") | {"view"}
# NumPy functions whose result is a list of views of their first argument.
VIEWS_IN_A_LIST = names_with("views_in_list")
# NumPy functions whose result is surely a new array (not a number).
ARRAY_MAKERS = names_with("makes_array")
# Array methods whose result is new (`copy` of a list or dict holds the same items): those that
# are NumPy functions giving no view (runtime's array_methods), and those no family enters there
# (the tracer's own astype, flatten, tolist and item; a list's count and index).
NEW_VALUE_METHODS = {name for name, function in array_methods.items()
                     if not function_facts.get(function, NO_FACTS).view} | {
    "astype", "flatten", "tolist", "item", "count", "index"}
# Builtins whose result is a new value holding none of their arguments.
NEW_VALUE_BUILTINS = {len, range, float, int, bool, complex, abs, round, str, repr, isinstance,
                       hash, id, print, any, all, divmod, pow, sum, type, format}
# Builtins that make a new container of their arguments' items.
CONTAINER_BUILTINS = {list, tuple, dict, set, frozenset, sorted, reversed, zip, enumerate,
                       iter, map, filter}


def python_callee(func, local_names: set, namespace: dict):
    """(the Python function that calling `func` runs, how many arguments come before the given
    ones: 1 for a method's object), or (None, 0) where the source does not say."""
    if isinstance(func, gast.Name) and func.id in local_names:
        return None, 0
    value = resolve(func, namespace)
    if value is MISSING and isinstance(func, gast.Attribute) and isinstance(
            func.value, gast.Name) and func.value.id not in local_names:
        owner = resolve(func.value, namespace)  # a method of a global object
        value = MISSING if owner is MISSING else inspect.getattr_static(
            owner, func.attr, MISSING)
        if inspect.isfunction(value):
            return value, 1
    if inspect.ismethod(value) and inspect.isfunction(value.__func__):
        return value.__func__, 1
    return (value, 0) if inspect.isfunction(value) else (None, 0)


def is_one_of(value, group) -> bool:
    try:
        return value in group
    except TypeError:  # unhashable
        return False


def numpy_name(func, namespace) -> str | None:
    """The name of the NumPy function or ufunc `func` names, else None."""
    value = resolve(func, namespace)
    if value is MISSING:
        return None
    module = getattr(value, "__module__", None) or ""
    if isinstance(value, np.ufunc) or module.startswith("numpy"):
        return getattr(value, "__name__", None)
    return None
