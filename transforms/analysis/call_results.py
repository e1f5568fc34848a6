"""What a call's result may share with what it was given, as far as the call's source says.

NumPy's functions make new arrays, but for the views (`np.reshape(A, ...)`, `A.T`); builtins
make new numbers and containers; a Python function autotrace can read is read
(transforms/analysis/aliases.py); anything else may return what it was given.
"""
from __future__ import annotations

import inspect

import gast
import numpy as np

from ..codegen.nodes import nodes_of
from ..front.parsing import MISSING, resolve
from ...runtime.derivatives.copies import copied, deep_copied
from ...runtime.derivatives.items import shallow_copy
from ...runtime.ops import NO_FACTS, array_methods, function_facts, names_with
from ...runtime.primitives.primitive import NOT_CONSTANT

# The names of NumPy's functions, and of the array methods that are such functions, whose result
# may be a view of their first argument (or the argument itself), by their facts (FunctionFacts,
# declared in each function's row of runtime/primitives/); and `x.view()`, an ndarray method that
# is no NumPy function.
VIEW_FUNCTIONS = names_with("view") | {"view"}
# Those whose facts say, from a call's constant arguments, which arguments it may view
# (FunctionFacts.source_view): np.einsum's operand, np.diff's argument only where n may be 0.
_SOURCE_VIEWS = {function.__name__: facts.source_view for function, facts in function_facts.items()
                 if facts.source_view is not None}
# NumPy functions whose result is a list of views of their first argument.
VIEWS_IN_A_LIST = names_with("views_in_list")
# NumPy functions whose result is a tuple of new arrays, one for each positional argument
# (np.meshgrid, unless copy= is given other than True).
NEW_PER_ARGUMENT = names_with("new_per_argument")
# NumPy functions whose result is surely a new array (not a number).
ARRAY_MAKERS = names_with("makes_array")
# Array methods whose result is new (`copy` of a list or dict holds the same items): those that
# are NumPy functions giving no view (runtime's array_methods), and those no family enters there
# (the tracer's own astype, flatten, tolist and item; a list's count and index).
NEW_VALUE_METHODS = {name for name, function in array_methods.items()
                     if not function_facts.get(function, NO_FACTS).view} | {
    "astype", "flatten", "tolist", "item", "count", "index"}
# Of those, the NumPy functions (np.sum, np.mean, np.argmax, ...) and the array methods whose
# result, for an array or a number, is an array or a number again: never a container holding
# what it was given (but x.nonzero()'s tuple and x.tolist()'s list), so that `A * x.sum()`
# repeats no list.
_NEW_NUMBER_OR_ARRAY = {name: function for name, function in array_methods.items()
                        if not function_facts.get(function, NO_FACTS).view
                        and function is not np.nonzero}
NUMBER_OR_ARRAY_FUNCTIONS = set(_NEW_NUMBER_OR_ARRAY.values())
NUMBER_OR_ARRAY_METHODS = set(_NEW_NUMBER_OR_ARRAY) | {"astype", "flatten", "item", "copy"}
# An array's attributes that are numbers, tuples of them or a dtype, which share no memory with
# it (`n, m = Z.shape` then `Z[0] -= 1` leaves m as it was); any other attribute may be a view
# (`Z.T`, `Z.real`) or what an object holds.
NUMBERS_OF_AN_ARRAY = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes",
                                 "strides"})
# Builtins whose result is a new value holding none of their arguments.
NEW_VALUE_BUILTINS = {len, range, float, int, bool, complex, abs, round, str, repr, isinstance,
                       hash, id, print, any, all, divmod, pow, sum, type, format, deep_copied}
# Builtins that make a new container of their arguments' items; and the copy of a list that
# generated code makes (a loop's segments, front/segments.py: its items shared).
CONTAINER_BUILTINS = {list, tuple, dict, set, frozenset, sorted, reversed, zip, enumerate,
                       iter, map, filter, shallow_copy, copied}


def viewed_arguments(numpy: str, node: gast.Call) -> tuple:
    """The positions of the arguments of `node`, a call of the NumPy function named `numpy`,
    that its result may be or view (its facts: FunctionFacts.view and source_view), as far as
    the call's constant arguments say; every position where they cannot say (`f(*args)`)."""
    if numpy not in VIEW_FUNCTIONS:
        return ()
    source_view = _SOURCE_VIEWS.get(numpy)
    if source_view is None:
        return (0,)
    every = tuple(range(len(node.args) + len(node.keywords)))
    if any(isinstance(a, gast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords):
        return every
    try:
        return tuple(source_view(*map(_constant, node.args),
                                 **{k.arg: _constant(k.value) for k in node.keywords}))
    except TypeError:  # arguments the function does not take: NumPy raises
        return every


def _constant(node):
    """The value a constant node writes (a signed number too: `-1`), else NOT_CONSTANT."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and isinstance(
            node.operand, gast.Constant) and isinstance(node.operand.value, (int, float)):
        return -node.operand.value
    return node.value if isinstance(node, gast.Constant) else NOT_CONSTANT


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


def own_function(function) -> bool:
    """Whether the Python function `function` is one of autotrace's own (its API's, its
    transforms', the runtime's helpers generated code calls)."""
    return (function.__module__ or "").split(".")[0] == "autotrace"


def runtime_helper(function) -> bool:
    """Whether the Python function `function` is one of the runtime's (the helpers generated
    code calls: match, seed, tree_flatten, ...), which call what they are given by name."""
    return (function.__module__ or "").startswith("autotrace.runtime.")


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


# Builtins whose result is never None.
_VALUE_BUILTINS = (NEW_VALUE_BUILTINS - {print}) | CONTAINER_BUILTINS | {callable, hasattr}
# Attributes of an array, never None.
_ARRAY_ATTRIBUTES = {"T", "mT", "real", "imag", "shape", "dtype", "ndim", "size", "strides",
                     "itemsize", "nbytes", "flat"}


def names_that_may_hold_none(function: gast.FunctionDef, namespace: dict) -> tuple:
    """(the names `function`'s own statements bind to None, `n = None`; those they may bind to
    None: those, and `n = e` where `e` may be None as far as its source says: a call of a
    Python function, an item of a container, an attribute of an object, another such name;
    not a value NumPy or a builtin makes)."""
    assignments = [node for node in nodes_of(function) if isinstance(node, gast.Assign)]
    literal = frozenset(target for node in assignments for target, value in _pairs(node)
                        if isinstance(value, gast.Constant) and value.value is None)
    arrays = _array_names(function, assignments, namespace)
    nones = set(literal)
    while True:  # until no more names join (`a = b` after `b = g()`)
        found = {target for node in assignments for target, value in _pairs(node)
                 if _may_be_none(value, namespace, nones, arrays)}
        if found <= nones:
            return literal, frozenset(nones)
        nones |= found


def _pairs(node: gast.Assign):
    """(name bound, the expression it is bound to) for an assignment; a name unpacked from
    anything but a tuple display is paired with the whole value."""
    def bound(target, value):
        if isinstance(target, gast.Name):
            yield target.id, value
        elif isinstance(target, (gast.Tuple, gast.List)):
            parts = value.elts if isinstance(value, (gast.Tuple, gast.List)) and len(
                value.elts) == len(target.elts) else [value] * len(target.elts)
            for element, part in zip(target.elts, parts):
                if isinstance(element, gast.Starred):
                    element = element.value
                yield from bound(element, part)
    for target in node.targets:
        yield from ((target_name, value) for target_name, value in bound(target, node.value))


def _array_names(function: gast.FunctionDef, assignments: list, namespace: dict) -> set:
    """The names `function` binds only by assignments of values that are surely arrays or
    numbers (_surely_an_array, through such names too): never a parameter, a loop target or
    a name bound any other way."""
    values, stores = {}, {}
    for node in assignments:
        for target, value in _pairs(node):
            values.setdefault(target, []).append(value)
    for node in nodes_of(function):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            stores[node.id] = stores.get(node.id, 0) + 1
    arrays = {name for name, bound in values.items() if stores.get(name) == len(bound)}
    while True:  # the largest set whose every assignment is surely an array
        kept = {name for name in arrays
                if all(_surely_an_array(value, namespace, arrays) for value in values[name])}
        if kept == arrays:
            return arrays
        arrays = kept


def _may_be_none(value, namespace: dict, nones: set, arrays: set) -> bool:
    if isinstance(value, gast.Constant):
        return value.value is None
    if isinstance(value, gast.Name):
        return value.id in nones
    if isinstance(value, gast.IfExp):
        return any(_may_be_none(part, namespace, nones, arrays)
                   for part in (value.body, value.orelse))
    if isinstance(value, gast.BoolOp):
        return any(_may_be_none(part, namespace, nones, arrays) for part in value.values)
    if isinstance(value, gast.NamedExpr):
        return _may_be_none(value.value, namespace, nones, arrays)
    if isinstance(value, gast.Subscript):  # an item of a list or dict may be None
        return not _surely_an_array(value.value, namespace, arrays)
    if isinstance(value, gast.Attribute):
        return value.attr not in _ARRAY_ATTRIBUTES
    if isinstance(value, gast.Call):
        return not _makes_a_value(value.func, namespace)
    return False  # arithmetic, comparisons, displays, lambdas: never None


def _surely_an_array(value, namespace: dict, arrays: set) -> bool:
    """Whether the expression `value` surely gives an array or a number, whose items are
    never None: arithmetic other than `+` and `*` (which join and repeat lists), a negation,
    what a NumPy function gives, a name in `arrays`, and a part of one of those."""
    if isinstance(value, gast.BinOp):
        return not isinstance(value.op, (gast.Add, gast.Mult))
    if isinstance(value, gast.UnaryOp):
        return isinstance(value.op, (gast.USub, gast.UAdd, gast.Invert))
    if isinstance(value, gast.Call):
        return numpy_name(value.func, namespace) is not None
    if isinstance(value, gast.Subscript):
        return _surely_an_array(value.value, namespace, arrays)
    return isinstance(value, gast.Name) and value.id in arrays


def _makes_a_value(func, namespace: dict) -> bool:
    """Whether calling `func` surely gives a value, not None: a NumPy function, a builtin that
    makes one, an array's method (the NumPy function it is)."""
    if numpy_name(func, namespace) is not None:
        return True
    value = resolve(func, namespace)
    if value is MISSING:
        return isinstance(func, gast.Attribute) and (
            func.attr in NEW_VALUE_METHODS or func.attr in array_methods)
    return is_one_of(value, _VALUE_BUILTINS)


def inexact_ufunc(ufunc: np.ufunc) -> bool:
    """Whether every result of `ufunc` is a float or complex number or array, whatever its
    inputs (np.exp, np.tanh; not np.add, which adds ints to an int)."""
    loops = [loop.split("->")[1] for loop in ufunc.types if "O" not in loop]
    return bool(loops) and all(kind in "efdgFDG" for loop in loops for kind in loop)
