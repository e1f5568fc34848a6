"""The helpers that converted `if`, `while` and `for` statements call (transforms/control_flow/control_flow.py).

Each runs the plain Python statement when its condition is a Python value, so control flow on
Python values unrolls into the trace as before. When the condition is traced it records one
graph-level `cond` or `while` op (runtime/tracing/control.py) over the statement's variables:

    (y,) = if_stmt(x.sum() > 0, if_true, if_false, (y,), names=("y",), live=("y",),
                   where="model.py:12: if x.sum() > 0:")

`names` are the statement's variables (the values tuple, in order), `live` those read after
it, `where` the user's file, line and statement, for errors. A variable that has not been
assigned yet arrives as `Undefined(name)`.

The traced `if` is in runtime/tracing/control_branches.py, traced loops in runtime/tracing/control_loops.py,
what both share about a statement's variables in runtime/tracing/control_variables.py. This module
holds the table of what converted code calls (HELPERS), and the writes and NumPy functions it
calls in place of those that cannot see traced values (`x[i] = v`, np.array of a list, the
builtins max and min; np.full, np.linspace and their kin are in filled_arrays.py; a NumPy
array written with or indexed by a traced value, and np.take, in control_concrete_arrays.py;
the math module's functions in math_functions.py), and the test of a statement left as Python
code.
"""
from __future__ import annotations

import sys

import numpy as np

from .control_branches import and_, if_exp, if_stmt, not_, or_
from .control_loops import TracedRange, for_stmt, range_, while_stmt
from .control_concrete_arrays import (indexable, refuse_traced_writes,
                                      refuse_unfollowed_write, take, writes_traced)
from .control_variables import Undefined, _error
from ..devices import is_gpu_array
from ..errors import raised_by_tracing
from ..primitives.diagonal_fill import diagonal_index, diagonal_values
from .filled_arrays import REPLACEMENTS as FILLED_ARRAYS
from .math_functions import REPLACEMENTS as MATH_FUNCTIONS
from ..primitives.index import as_array, holds_traced, stacked
from ..primitives.out_writes import (added_at, checked_out, checked_out_item,
                                     masked_operand)
from ..primitives.registry import in_trace_of
from ..primitives.memory import ONLY_THE_CONTAINERS
from ..primitives.weak_inputs import python_number_as
from .stacks import SavedValues
from ..python_operators import AUGMENTED_OPERATORS
from .tracer import (Tracer, TracerConversionError,
                                      set_item as _set_array_item)
from .refused_functions import REFUSED_FUNCTIONS
from .tracer_eithers import assigned
from .tracer_list_arguments import binary
from .weak_scalars import holds_either
from .scalar_types import SCALAR_TYPES
from .type_checks import getattr_, hasattr_, isinstance_, isscalar_, scalar_as_array, type_
from ..unknown_sizes import with_unknown_sizes


def set_item(target, index, value, *, op: str | None = None, where: str | None = None,
             unfollowed: str | None = None, holders: tuple = ()):
    """`target[index] = value` for converted code, returning the target's new value: an
    array written with traced values (or at traced indices, a traced boolean mask too) becomes
    traced. Containers are written as they are. Where converted user code gives `where` (its
    line), a NumPy array that other names may share is refused instead
    (control_concrete_arrays.py: `unfollowed`, the reason its source gives,
    transforms/analysis/write_sharing.py; `holders`, functions giving the values of the names
    it names, where they surely are not the array itself nor a view of it, which refuse it only
    where one may hold an array). With `op` (`"+"`), `target[index] op= value`: the item
    `updated_item` gives is stored, the index evaluated once, as Python does."""
    if op is not None:
        value = updated_item(target, index, op, value)
    if not isinstance(target, (np.ndarray, Tracer)):
        target[index] = value
        return target
    if where is not None and isinstance(target, np.ndarray) and writes_traced(index, value):
        refuse_unfollowed_write(target, where, unfollowed, holders)
    if isinstance(target, np.ndarray) and holds_either(value):  # (a traced one's: its own)
        return assigned(target, index, value)  # (cast as on each path: tracer_eithers.py)
    return _set_array_item(target, index, value)


def in_place_target(target, value, *, where: str | None = None,
                    unfollowed: str | None = None, holders: tuple = ()):
    """The target of the user's `a op= value` for converted code, which runs the `op=` on what
    this returns (bound to `a`): a NumPy array given a traced value becomes a traced copy of
    itself, bound to `a` alone, which `op=` then changes in place (a NumPy array cannot take a
    traced value); where other names may share its memory, refused as set_item refuses
    (control_concrete_arrays.py). Anything else as it is."""
    if not isinstance(target, np.ndarray) or not holds_traced(value):
        return target
    if where is not None:
        refuse_unfollowed_write(target, where, unfollowed, holders)
    return in_trace_of(target, as_array(value))


def updated_item(target, index, symbol: str, value):
    """The new item of `target[index] op= value` (op: `symbol`) for converted code, which
    set_item then stores. Where target is a list or dict, Python runs the item's own in-place
    operator: an array item (and every name bound to it) is changed in place, a number gets a
    new value. An array's item is the new value `target[index] op value`, written by set_item."""
    in_place, plain = AUGMENTED_OPERATORS[symbol]
    if isinstance(target, (np.ndarray, Tracer)):  # (a NumPy array at a traced index too)
        return plain(indexable(target)[index], value)
    item = target[index]
    # A NumPy array cannot take a traced value in place. Where nothing but the container holds
    # it (by its references), a new traced value in its place is the same to every reader;
    # else NumPy's in-place operator says what to do.
    if isinstance(item, np.ndarray) and holds_traced(value) and \
            sys.getrefcount(item) <= ONLY_THE_CONTAINERS:
        return plain(item, value)
    return in_place(item, value)


def array(value, dtype=None, *, copy=True, **options):
    """`np.array(value, dtype)` for converted code: a (nested) list of traced values becomes
    `np.stack`s of them, a traced value a copy (cast to `dtype`); with copy=None or False, the
    traced array itself where NumPy needs no copy (its dtype, no ndmin above its own)."""
    if not holds_traced(value):
        return np.array(value, dtype=dtype, copy=copy, **options)
    if isinstance(value, Tracer) and not copy:
        same = (dtype is None or np.dtype(dtype) == value.dtype) and options.get(
            "ndmin", 0) <= value.ndim
        if same and set(options) <= {"ndmin", "order", "subok"}:
            return asarray(value)
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
    if dtype is not None:  # (a Python int among them: checked to fit, as NumPy converts it)
        value = _numbers_as(value, np.dtype(dtype))
    result = np.copy(value) if isinstance(value, Tracer) else stacked(value)  # (0-d: an array)
    return result if dtype is None else result.astype(dtype)


def _numbers_as(value, dtype: np.dtype):
    """`value`, a traced value or a (nested) list of values, each traced value that stands for
    a Python number ready to be converted to `dtype` (primitives/weak_inputs.py)."""
    if isinstance(value, (list, tuple)):
        return type(value)(_numbers_as(item, dtype) for item in value)
    return python_number_as(value, dtype) if isinstance(value, Tracer) else value


def asarray(value, dtype=None, **options):
    """`np.asarray(value, dtype)` for converted code (see `array`): a traced value as is, a
    traced number a new 0-d array."""
    if isinstance(value, Tracer):  # the same array, as NumPy's: it shares the memory
        value = value if dtype is None or np.dtype(dtype) == value.dtype else value.astype(dtype)
        return scalar_as_array(value)  # a NumPy scalar's is a new 0-d array
    if holds_traced(value):
        return array(value, dtype)
    return np.asarray(value, dtype=dtype, **options)


def asanyarray(value, dtype=None, **options):
    """`np.asanyarray` for converted code: a traced value is an ndarray's, so `asarray`'s."""
    if isinstance(value, Tracer) or holds_traced(value):
        return asarray(value, dtype)
    return np.asanyarray(value, dtype=dtype, **options)


def refuse_outside_write(container, message: str, where: str) -> None:
    """Raise `message` at `where` if `container`, which converted code is about to write into,
    is a concrete array: a global or closure variable of the user's function, which a traced
    graph cannot change on every call. (A list or dict there is a Python side effect, run while
    tracing only; an autotrace.Variable refuses item assignment itself.)"""
    if isinstance(container, np.ndarray) or is_gpu_array(container):
        raise _error(where, message)


def shape(a) -> tuple:
    """np.shape(a) for converted code: of a traced value, its sizes, those known only when the
    graph runs read as UnknownSize (runtime/unknown_sizes.py); of a list of traced values, the
    shape of the array NumPy reads it as (np.shape([x[0], x[1]]) is (2,)), where NumPy's own
    would convert each traced value to an array."""
    if isinstance(a, (list, tuple)) and holds_traced(a):
        a = as_array(a)
    return with_unknown_sizes(a.aval, a) if isinstance(a, Tracer) else np.shape(a)


def _compare_builtin(builtin, elementwise: str, reduction: str):
    """The builtin max or min for converted code: it compares Python values, which traced ones
    have none of; say which NumPy function does it instead."""
    def compare(*args, **kwargs):
        try:
            return builtin(*args, **kwargs)
        except TracerConversionError:
            raise TracerConversionError(
                f"built-in {builtin.__name__}() compares values as Python values, and a traced "
                f"value has none while tracing: use np.{elementwise}(a, b) for two values, or "
                f"np.{reduction}(x) over an array's elements") from None
    compare.__name__ = builtin.__name__
    return compare


def python_test(value, *, where: str, reason: str, iterable: bool = False):
    """The condition (or, for a for loop, the `iterable`) of a statement left as Python code
    (see transforms/control_flow/control_flow.py): as it is, unless it is traced, which `reason` says cannot
    be. A traced array is iterable in Python: its length is known while tracing."""
    if isinstance(value, TracedRange) or isinstance(value, Tracer) and not iterable:
        raise _error(where, reason)
    return value


def tracing_error_caught() -> bool:
    """Whether the error a handler of converted code is handling is tracing's own
    (runtime/errors.py: a traced value asked for its Python value, an ndarray attribute it
    lacks, a refusal), raised in the try's body or in a function it calls: NumPy would not
    raise it, so the handler re-raises it (transforms/control_flow/handled_errors.py)."""
    return raised_by_tracing(sys.exc_info()[1])


def unsuppressing(manager):
    """The context manager of a converted `with` statement: `manager`, whose `__exit__` does
    not suppress tracing's own errors (contextlib.suppress(TypeError) around float(x[0]))."""
    kind = type(manager)
    if not (hasattr(kind, "__enter__") and hasattr(kind, "__exit__")):
        return manager  # (the with statement raises Python's error)
    return _Unsuppressing(manager)


class _Unsuppressing:
    def __init__(self, manager):
        self.manager = manager
        self.exit = type(manager).__exit__

    def __enter__(self):
        return type(self.manager).__enter__(self.manager)

    def __exit__(self, kind, error, traceback):
        suppressed = self.exit(self.manager, kind, error, traceback)
        return bool(suppressed) and not raised_by_tracing(error)


# What converted code calls, by the names transforms/control_flow/control_flow.py gives them.
HELPERS = {"if_stmt": if_stmt, "while_stmt": while_stmt, "for_stmt": for_stmt, "if_exp": if_exp,
           "and_": and_, "or_": or_, "not_": not_, "range_": range_, "Undefined": Undefined,
           "set_item": set_item, "in_place_target": in_place_target,
           "python_test": python_test,
           "tracing_error_caught": tracing_error_caught, "unsuppressing": unsuppressing,
           "SavedValues": SavedValues,
           "checked_out": checked_out, "checked_out_item": checked_out_item,
           "added_at": added_at,
           "refuse_outside_write": refuse_outside_write,
           "indexable": indexable, "refuse_traced_writes": refuse_traced_writes,
           "diagonal_index": diagonal_index, "diagonal_values": diagonal_values,
           "binary": binary, "masked_operand": masked_operand, "where": np.where}

# NumPy functions that cannot see traced values in a list or as a fill value or endpoint
# (filled_arrays.py), np.take, which NumPy does not hand traced indices
# (control_concrete_arrays.py), the math module's functions, which take Python numbers
# (math_functions.py), NumPy's scalar types (scalar_types.py), functions that need a traced
# value's memory or items (refused_functions.py), builtins that compare Python
# values, isinstance, type, np.isscalar, hasattr and getattr, which answer for a traced value
# as for the NumPy value it stands for (type_checks.py), and np.shape (`shape`): converted code
# calls these instead.
NUMPY_REPLACEMENTS = {np.array: array, np.asarray: asarray, np.asanyarray: asanyarray,
                      np.take: take, **FILLED_ARRAYS, np.shape: shape,
                      **MATH_FUNCTIONS, **SCALAR_TYPES, **REFUSED_FUNCTIONS,
                      max: _compare_builtin(max, "maximum", "max"),
                      min: _compare_builtin(min, "minimum", "min"),
                      isinstance: isinstance_, type: type_, np.isscalar: isscalar_,
                      hasattr: hasattr_, getattr: getattr_}
