"""The copy of an argument that a derivative writes into in place (transforms/front/inplace.py
follow_writes): the caller's arrays and lists never change, and the copy's arrays share memory
as the argument's do.

`rows = [A, A[1:]]` passed in and `rows[0] *= 2.0` changes both items in NumPy; copied item by
item, they would share nothing, and the run-time check that refuses such a write
(transforms/front/shared_items.py) would pass it. So NumPy arrays of the argument that view one
array are copied as views of one copy of that array: the array they view is copied once,
keeping its strides, and each is the same view of the copy (at the same offset, with the same
shape and strides). Where the copy cannot keep the strides (an array with gaps between its
elements), each is copied on its own. Traced values are copied by the same rule
(runtime/tracing/views.py snapshot_copy), and keep the sharing of arguments the caller passed
sharing memory.
"""
from __future__ import annotations

import numbers
import types

import numpy as np

from ..array_api import numpy_dtype
from ..errors import TracingError
from ..containers import rebuild
from ..state import StateCell


def snapshot(value):
    """A copy of `value` that later in-place changes to its arrays and lists do not reach, its
    NumPy arrays sharing memory as those of `value` do (see the module's docstring)."""
    return _copy(value, _shared_roots(value), {})


def argument_snapshot(value):
    """`snapshot` of an argument the derivative writes into: its arrays that are read-only
    (np.broadcast_to's, a memory-mapped file's) are read-only in the copy too, so that the
    write raises where NumPy's does, rather than give a derivative of what NumPy refuses."""
    return _copy(value, _shared_roots(value), {}, argument=True)


def _shared_roots(value) -> set:
    """The ids of the arrays that more than one array of `value` views (or is)."""
    roots: dict = {}
    _count_roots(value, roots)
    return {key for key, count in roots.items() if count > 1}


def is_mutable_array(value) -> bool:
    """An array of NumPy's or of an array library (not a NumPy number), or a traced value
    that stands for one (a 0-d traced value may stand for a NumPy number, type_checks.py)."""
    return isinstance(value, np.ndarray) or (
            hasattr(value, "shape") and hasattr(value, "dtype")
            and not isinstance(value, (np.generic, types.ModuleType))  # (np: np.shape)
            and (np.ndim(value) > 0 or type(value).__module__.startswith("cupy")
                 or getattr(value, "_is_zero_d_array", lambda: False)()))


class InPlaceOperatorError(TypeError, TracingError):
    """operator.iadd and its kin given a first argument that they would change in place."""


# What operator.iadd and its kin change in place is none of these: they compute a new value.
_IMMUTABLE = (numbers.Number, tuple, str, bytes, frozenset, type(None))


def refuse_in_place_operator(value, name: str, filename: str, line: int) -> None:
    """In `operator.iadd(a, b)` and its kin, which run `a += b` (transforms/front/
    python_versions.py): a new value where `a` is immutable (a number, a tuple), which the
    derivative reads them as; refused where `a` is an array, a list or another object that
    `+=` changes in place, which the derivative would not see changed."""
    if isinstance(value, _IMMUTABLE) or hasattr(value, "dtype") and not is_mutable_array(value):
        return  # (a traced value standing for a number included)
    symbol = IN_PLACE_SYMBOLS[name]
    raise InPlaceOperatorError(
        f"File \"{filename}\", line {line}: operator.{name} changes its first argument in "
        f"place where that is an array or a list (it runs a {symbol} b), and autotrace does "
        f"not follow that write through "
        f"operator.{name}, called or handed to another function (functools.reduce); write the "
        f"augmented assignment instead: a {symbol} x for operator.{name}(a, x), a loop of them "
        f"for functools.reduce")


# The operator module's in-place functions, by name, and the augmented assignment each runs.
IN_PLACE_SYMBOLS = {"iadd": "+=", "isub": "-=", "imul": "*=", "itruediv": "/=",
                    "ifloordiv": "//=", "imod": "%=", "ipow": "**=", "imatmul": "@=",
                    "iand": "&=", "ior": "|=", "ixor": "^=", "ilshift": "<<=", "irshift": ">>=",
                    "iconcat": "+="}


def refuse_read_only(value, filename: str, line: int) -> None:
    """Before `x op= v`, which a derivative reads as `x = x + v` (transforms/front/
    inplace.py): NumPy's `op=` writes into an array x, and raises where that is read-only (an
    argument's, or a name for one); so does this. A traced value notes the write, for a call
    passing its argument read-only (runtime/tracing/arguments.py)."""
    if hasattr(value, "_refuse_read_only"):
        value._refuse_read_only()
    elif isinstance(value, np.ndarray) and not value.flags.writeable:
        raise ValueError(f"output array is read-only (File \"{filename}\", line {line}: the "
                         f"array changed in place there is read-only)")


def refuse_cast_in_place(value, operand, ufunc: str, filename: str, line: int) -> None:
    """Before `x op= v`, which a derivative reads as `x = x op v` (transforms/front/
    inplace.py): NumPy writes the result of the ufunc into an array x, and raises where its
    dtype does not cast to x's by the rule "same_kind" (no float into an integer array, no
    integer into a boolean one); so does this, rather than give x the new dtype. An
    autotrace.Variable x refuses `x op= v` itself (it would become a plain array): so it does
    here too, where the derivative would read it as `x = x op v` and not ask it."""
    refused = getattr(type(value), f"__i{_DUNDERS.get(ufunc, ufunc)}__", None) \
        if isinstance(value, StateCell) else None
    if refused is not None:
        refused(value, operand)
    if not is_mutable_array(value):
        return
    dtype = numpy_dtype(value.dtype)
    if hasattr(operand, "dtype") and not isinstance(operand, np.generic):
        operand = np.empty((), numpy_dtype(operand.dtype))
    elif isinstance(operand, (list, tuple)):
        operand = np.empty((), _list_dtype(operand))
    result = np.result_type(np.empty((), dtype), operand)
    if ufunc == "divide" and result.kind in "biu":
        result = np.dtype(np.float64)  # (true division of integers gives floats)
    if not np.can_cast(result, dtype, casting="same_kind"):
        raise TypeError(f"Cannot cast ufunc {ufunc!r} output from {result!r} to {dtype!r} "
                        f"with casting rule 'same_kind' (File \"{filename}\", line {line}: "
                        f"the array changed in place there keeps its dtype, {dtype})")


# The name of the in-place operator method that runs each ufunc (`x += v`: __iadd__).
_DUNDERS = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "truediv",
            "floor_divide": "floordiv", "remainder": "mod", "power": "pow"}


def _list_dtype(items) -> np.dtype:
    """The dtype np.asarray gives a list or tuple, read from the dtypes of its items (a traced
    item's value is not known while tracing, so the list cannot be converted)."""
    dtypes = [_list_dtype(item) if isinstance(item, (list, tuple)) else
              numpy_dtype(item.dtype) if hasattr(item, "dtype") else np.asarray(item).dtype
              for item in items]
    return np.result_type(*dtypes) if dtypes else np.dtype(np.float64)


def in_place_result(result, target):
    """The value `x op= v` leaves in x, from `result`, `x op v` (transforms/front/anf.py): in
    x's dtype where x is an array, which NumPy writes the result into (cast by "same_kind",
    which `refuse_cast_in_place` checked: a float32 x stays float32 after `x += x64`);
    `result` itself where x is a number, a NumPy scalar, a list or a tuple, which `op=`
    rebinds."""
    if not is_mutable_array(target) or not hasattr(result, "dtype") or \
            result.dtype == target.dtype:
        return result
    return result.astype(target.dtype)


def note_memory_read(value) -> None:
    """Note, where `value` is a traced value, that its trace asks which of its arrays share
    memory (a derivative's copy of an argument, or a check that refuses a write into shared
    memory, transforms/front/shared_items.py): autotrace.function then keys the traces of the
    function by the memory its array arguments share (runtime/tracing/signature.py)."""
    builder = getattr(value, "_builder", None)
    while builder is not None:
        builder.reads_argument_memory = True
        builder = getattr(builder, "parent", None)


def array_root(array: np.ndarray) -> np.ndarray:
    """The array a NumPy array views: the last array in its chain of bases, through objects
    that are no arrays too (as_strided's), itself where there is none."""
    root, base = array, array.base
    while base is not None:
        if isinstance(base, np.ndarray):
            root = base
        base = base.obj if isinstance(base, memoryview) else getattr(base, "base", None)
    return root


def _count_roots(value, roots: dict) -> None:
    if isinstance(value, (tuple, list)):
        for item in value:
            _count_roots(item, roots)
    elif isinstance(value, dict):
        for item in value.values():
            _count_roots(item, roots)
    elif isinstance(value, np.ndarray) or hasattr(value, "_snapshot_copy"):
        note_memory_read(value)
        key = id(_root(value))
        roots[key] = roots.get(key, 0) + 1


def _root(value):
    """The array `value` views: a NumPy array's, or a traced value's (its view links)."""
    if isinstance(value, np.ndarray):
        return array_root(value)
    while value._link is not None:
        value = value._link.base
    return value


def _copy(value, shared: set, copies: dict, argument: bool = False):
    """`value` copied, its arrays whose roots' ids are in `shared` as views of one copy of
    that root (`copies`: id of a root -> its copy); with `argument`, the read-only ones stay
    read-only (argument_snapshot)."""
    if isinstance(value, (tuple, list)):
        return rebuild(value, [_copy(item, shared, copies, argument) for item in value])
    if isinstance(value, dict):
        return rebuild(value, ((key, _copy(item, shared, copies, argument))
                               for key, item in value.items()))
    if hasattr(value, "_snapshot_copy"):  # a traced value (runtime/tracing/views.py)
        copy = value._snapshot_copy(copies, shared)
        return value._argument_copy(copy) if argument else copy
    if not (hasattr(value, "copy") and hasattr(value, "shape")):
        return value
    copy = _array_copy(value, shared, copies)
    if argument and isinstance(value, np.ndarray) and not value.flags.writeable:
        copy.flags.writeable = False
    return copy


def _array_copy(value, shared: set, copies: dict):
    if isinstance(value, np.ndarray) and id(array_root(value)) in shared:
        root = array_root(value)
        if id(root) not in copies:
            copy = root.copy(order="K")
            copies[id(root)] = copy if copy.strides == root.strides else None
        copy = copies[id(root)]
        if copy is not None:
            offset = value.__array_interface__["data"][0] - root.__array_interface__["data"][0]
            return np.ndarray(value.shape, value.dtype, buffer=copy, offset=offset,
                              strides=value.strides)
    return value.copy()
