"""Python versions of functions written in C, which autotrace differentiates from their source.

functools.reduce has no Python source to read, yet what it computes is a loop of calls of the
function it is given, which autotrace follows: a call of it is differentiated as a call of
`reduce` below (transforms/analysis/calls.py classify_value, dynamic_calls.py for a call
resolved when it runs). So `functools.reduce(lambda h, W: np.tanh(h @ W), Ws, x)` has the
gradient of the loop it runs, in every mode, with respect to the items and the initial value.
The operator module's arithmetic (operator.add is `a + b`) is differentiated as its operator.
Its in-place functions (operator.imul(a, b) runs `a *= b`) are its operators where their first
argument is immutable (a Python int, a tuple: `functools.reduce(operator.imul, x.shape, 1)`),
and refused where it is an array or a list, which they would change in place without the
derivative seeing it: where the function names them, a version that knows that line takes
their place (`check_in_place_operators`); elsewhere they are refused, and so are NumPy's and
Python's in-place methods handed in (`np.ndarray.__imul__`; named in the source they are read
as their augmented assignments, in_place_dunders.py). An array's operator methods called by
name (`a.__mul__(b)`, `a.__rsub__(1.0)`, `a.__neg__()`: a call resolved when it runs) are
their operators (`a * b`, `1.0 - a`, `-a`), whose rules apply (`operator_method_version`), and
its `__copy__` and `__deepcopy__` are copy.copy's and copy.deepcopy's, as those are
autotrace's versions with rules. np.select, np.interp and np.gradient are differentiated as the ops they
compute (runtime/primitives/piecewise.py and finite_differences.py, whose functions also trace them).
"""
from __future__ import annotations

import copy as copy_module
import functools
import inspect
import operator
import types

import gast

import numpy as np

from ..codegen.visitors import NodeTransformer
from .parsing import resolve
from ..codegen.codegen import load_function
from ..codegen.nodes import nodes_of, walk
from ...runtime.derivatives.copies import copied, deep_copied
from ...runtime.derivatives.snapshots import refuse_in_place_operator
from ...runtime.primitives import finite_differences, piecewise
from ...runtime.primitives.registry import is_traced
from ...runtime.ops import OPERATOR_SYMBOLS

_NO_INITIAL = object()  # reduce's initial when none is given


def reduce(function, iterable, initial=_NO_INITIAL):
    """functools.reduce: `function(...function(function(initial, a), b)..., z)` for the items
    a, b, ..., z of `iterable` (without `initial`, starting from a)."""
    value = initial
    first = initial is _NO_INITIAL
    for item in iterable:
        if first:
            value = item
            first = False
        else:
            value = function(value, item)
    if first:
        raise TypeError("reduce() of empty iterable with no initial value")
    return value


# The operator module's arithmetic, which functools.reduce is often given: each is its
# operator, whose rules apply.

def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def truediv(a, b):
    return a / b


def matmul(a, b):
    return a @ b


def power(a, b):
    return a ** b


def neg(a):
    return -a


def builtin_power(base, exp, mod=None):  # builtins.pow
    if mod is None:
        return base ** exp
    return pow(base, exp, mod)  # (integers: no gradient)


# copy.copy and copy.deepcopy, whose source finds how to copy through methods a traced value
# does not have and writes into a memo: autotrace's, with rules (runtime/derivatives/copies.py)

def copy(value):
    return copied(value)


def deepcopy(value, memo=None):
    return deep_copied(value, memo)


def replace_copy_calls(function: gast.FunctionDef, namespace: dict) -> None:
    """Give each call of copy.copy or copy.deepcopy in `function` autotrace's version
    (runtime/derivatives/copies.py), bound in `namespace` to a name of its own, in place: the
    analyses of memory read it as the copy it makes (of an array a new one, of a list its
    items shared), and its rule gives its derivative (copy.copy's own source finds the method
    that copies, and copy.deepcopy's writes into a memo)."""
    used = set(namespace) | {node.id for node in nodes_of(function)
                             if isinstance(node, gast.Name)}
    for node in walk(function):
        if not isinstance(node, gast.Call):
            continue
        try:
            version = _COPY_VERSIONS.get(resolve(node.func, namespace))
        except TypeError:  # unhashable values
            continue
        if version is None:
            continue
        label = version.__name__
        while label in used and namespace.get(label) is not version:
            label += "_"
        namespace[label] = version
        used.add(label)
        node.func = gast.copy_location(gast.Name(id=label, ctx=gast.Load(), annotation=None,
                                                 type_comment=None), node.func)


_COPY_VERSIONS = {copy_module.copy: copied, copy_module.deepcopy: deep_copied}


# Each C function (or Python function read as one), by the Python version differentiated in
# its place.
PYTHON_VERSIONS = {functools.reduce: reduce, operator.add: add, operator.sub: sub,
                   operator.mul: mul, operator.truediv: truediv, operator.matmul: matmul,
                   operator.pow: power, pow: builtin_power, operator.neg: neg,
                   copy_module.copy: copy,
                   copy_module.deepcopy: deepcopy, np.select: piecewise.select,
                   np.interp: piecewise.interp,
                   np.piecewise: piecewise.piecewise,
                   np.gradient: finite_differences.gradient}


def python_version(func):
    """The Python version of `func` where it has one, else `func` itself."""
    try:
        return PYTHON_VERSIONS.get(func, func)
    except TypeError:  # unhashable callables
        return func


# An operator method of an array called by name (`a.__mul__(b)`, found only when the call
# runs) is its operator: by the method's name, what its Python version returns.
_OPERATOR_METHODS = {
    **{f"__{name}__": f"self {symbol} other" for name, symbol in OPERATOR_SYMBOLS.items()},
    **{f"__r{name}__": f"other {symbol} self" for name, symbol in OPERATOR_SYMBOLS.items()},
    "__lt__": "self < other", "__le__": "self <= other", "__gt__": "self > other",
    "__ge__": "self >= other", "__eq__": "self == other", "__ne__": "self != other",
    "__neg__": "-self", "__pos__": "+self", "__abs__": "abs(self)", "__invert__": "~self",
    "__copy__": "copied(self)", "__deepcopy__": "deep_copied(self, memo)"}


def _operator_version(method: str, returned: str):
    """`def array_mul(self, other): return self * other`, with source to differentiate."""
    label = "array_" + method.strip("_")
    parameters = "self, other" if "other" in returned else "self, memo=None" \
        if "memo" in returned else "self"
    return load_function(f"def {label}({parameters}):\n    return {returned}\n", label,
                         {"copied": copied, "deep_copied": deep_copied}, hint=label)


OPERATOR_METHOD_VERSIONS = {method: _operator_version(method, returned)
                            for method, returned in _OPERATOR_METHODS.items()}
# The types of a method's other operand with which an array's operator method is its operator
# (with an object of another class, `a * b` may run b's method, which a.__mul__(b) would not).
_PLAIN_OPERANDS = (np.ndarray, list, tuple, bool, int, float, complex)


def operator_method_version(func, args):
    """`func` called with `args` as the Python version of its operator, bound to its object,
    where it is an operator method of an array (`a.__mul__`: `a * b` then), and surely computes
    what the operator does: the object NumPy's array, a NumPy scalar or a traced value, the other
    operand an array, a list, a tuple or a number (or a number's method, with a number of its
    own type); anything else, `func` itself."""
    owner = getattr(func, "__self__", None)
    method = getattr(func, "__name__", None)
    if is_traced(owner) and inspect.ismethod(func):  # (a traced value's are lambdas)
        method = next((name for name in OPERATOR_METHOD_VERSIONS
                       if getattr(type(owner), name, None) is func.__func__), None)
    version = OPERATOR_METHOD_VERSIONS.get(method) if isinstance(method, str) else None
    if version is None or func != getattr(owner, method, None):
        return func
    parameters = version.__code__.co_varnames[:version.__code__.co_argcount]
    if "other" in parameters:
        if len(args) != 1 or not _operator_pair(owner, args[0]):
            return func
    elif len(args) >= len(parameters) or not _operator_pair(owner, owner):
        return func  # (`a.__deepcopy__(memo)`: one argument)
    return types.MethodType(version, owner)


def _operator_pair(owner, other) -> bool:
    """Whether `owner`'s operator method computes its operator with `other`."""
    if type(owner) in (bool, int, float, complex):
        return type(other) is type(owner)
    if not (type(owner) is np.ndarray or isinstance(owner, np.generic) or is_traced(owner)):
        return False
    return type(other) in _PLAIN_OPERANDS or isinstance(other, np.generic) or \
        is_traced(other)


# The operator module's in-place functions, by the augmented assignment each runs.
IN_PLACE_OPERATORS = {
    operator.iadd: "+=", operator.isub: "-=", operator.imul: "*=", operator.itruediv: "/=",
    operator.ifloordiv: "//=", operator.imod: "%=", operator.ipow: "**=",
    operator.imatmul: "@=", operator.iand: "&=", operator.ior: "|=", operator.ixor: "^=",
    operator.ilshift: "<<=", operator.irshift: ">>=", operator.iconcat: "+="}


# The in-place functions where the function names them (`operator.imul(n, k)`,
# `functools.reduce(operator.imul, x.shape, 1)`), each given the line that names it: a new
# value, as its operator computes it, where the first argument is immutable (a number, a
# tuple); refused when it runs where that is an array or a list, which it changes in place.

def iadd(filename, line, a, b):
    refuse_in_place_operator(a, "iadd", filename, line)
    return a + b


def isub(filename, line, a, b):
    refuse_in_place_operator(a, "isub", filename, line)
    return a - b


def imul(filename, line, a, b):
    refuse_in_place_operator(a, "imul", filename, line)
    return a * b


def itruediv(filename, line, a, b):
    refuse_in_place_operator(a, "itruediv", filename, line)
    return a / b


def ifloordiv(filename, line, a, b):
    refuse_in_place_operator(a, "ifloordiv", filename, line)
    return a // b


def imod(filename, line, a, b):
    refuse_in_place_operator(a, "imod", filename, line)
    return a % b


def ipow(filename, line, a, b):
    refuse_in_place_operator(a, "ipow", filename, line)
    return a ** b


def imatmul(filename, line, a, b):
    refuse_in_place_operator(a, "imatmul", filename, line)
    return a @ b


def iand(filename, line, a, b):
    refuse_in_place_operator(a, "iand", filename, line)
    return a & b


def ior(filename, line, a, b):
    refuse_in_place_operator(a, "ior", filename, line)
    return a | b


def ixor(filename, line, a, b):
    refuse_in_place_operator(a, "ixor", filename, line)
    return a ^ b


def ilshift(filename, line, a, b):
    refuse_in_place_operator(a, "ilshift", filename, line)
    return a << b


def irshift(filename, line, a, b):
    refuse_in_place_operator(a, "irshift", filename, line)
    return a >> b


def iconcat(filename, line, a, b):
    refuse_in_place_operator(a, "iconcat", filename, line)
    return a + b


IN_PLACE_VERSIONS = {function: globals()[function.__name__] for function in IN_PLACE_OPERATORS}


def check_in_place_operators(body, location, namespace: dict, fresh) -> None:
    """Give each name of one of the operator module's in-place functions in `body`
    (`operator.imul(n, k)`, `functools.reduce(operator.imul, x.shape, 1)`) its version that
    knows the line naming it (above), in place, bound in `namespace` to a new name
    (`fresh(hint)`): a call of it is no helper's, which cleanup would drop where its result is
    unread, but a function's that may refuse."""
    class Replace(NodeTransformer):
        def visit_Name(self, node):
            return self.replaced(node)

        def visit_Attribute(self, node):
            return self.replaced(node) if isinstance(node.ctx, gast.Load) else \
                self.generic_visit(node)

        def replaced(self, node):
            function = resolve(node, namespace) if isinstance(node.ctx, gast.Load) else None
            if in_place_refusal(function) is None:
                return self.generic_visit(node)
            line = location.line_of(node)
            version = functools.partial(IN_PLACE_VERSIONS[function], location.filename, line)
            identifier = fresh(f"{function.__name__}_on_line_{line}")
            namespace[identifier] = version
            return gast.copy_location(gast.Name(id=identifier, ctx=gast.Load(),
                                                annotation=None, type_comment=None), node)
    refused_names = {}  # a name read -> whether it is one of those functions

    def refused_read(node) -> bool:
        if not isinstance(node, (gast.Name, gast.Attribute)) or not isinstance(
                node.ctx, gast.Load):
            return False
        if isinstance(node, gast.Attribute):
            return in_place_refusal(resolve(node, namespace)) is not None
        # A name is read many times, most of them a local's, which resolving looks up in the
        # namespace and the builtins in vain: once for each name. (A name given a version
        # below is fresh: no statement read it before.)
        if node.id not in refused_names:
            refused_names[node.id] = in_place_refusal(resolve(node, namespace)) is not None
        return refused_names[node.id]
    for statement in body:
        # The transformer changes a statement only where a name it reads is one of those
        # functions: a statement that reads none is left as it is, unwalked.
        if any(refused_read(node) for node in nodes_of(statement)):
            Replace().visit(statement)


# The in-place operator methods (`__iadd__`), by the augmented assignment each runs.
IN_PLACE_METHODS = {f"__{function.__name__}__": symbol
                    for function, symbol in IN_PLACE_OPERATORS.items()}


def in_place_refusal(value) -> str | None:
    """Why `value` is refused where it is one of the operator module's in-place functions or
    an in-place operator method of NumPy's or Python's (`np.ndarray.__iadd__`, `a.__imul__`),
    handed to a function or called where a call resolves it only when it runs (analysis/
    object_state.py, dynamic_calls.py); else None. (Called by name in the user's source,
    the method is its augmented assignment: in_place_dunders.py.)"""
    method = getattr(value, "__name__", None)
    if method in IN_PLACE_METHODS and not inspect.isfunction(getattr(value, "__func__", value)):
        symbol = IN_PLACE_METHODS[method]
        name = getattr(value, "__qualname__", method)
        return (f"{name} changes its object in place (it runs a {symbol} b), and autotrace "
                f"does not follow that write through the method handed on or found only "
                f"when it runs (functools.reduce); write the augmented assignment instead: "
                f"a {symbol} x for a.{method}(x), a loop of them for functools.reduce")
    try:
        symbol = IN_PLACE_OPERATORS.get(value)
    except TypeError:  # unhashable values
        return None
    if symbol is None:
        return None
    name = f"operator.{value.__name__}"
    return (f"{name} changes its first argument in place where that is an array (it runs a "
            f"{symbol} b), and autotrace does not follow that write through {name}, called "
            f"or handed to another function (functools.reduce); write the augmented "
            f"assignment instead: a {symbol} x for {name}(a, x), a loop of them for "
            f"functools.reduce")
