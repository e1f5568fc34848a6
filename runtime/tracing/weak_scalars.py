"""Weak scalars: traced values that stand for Python numbers, and meet arrays as those do.

A traced loop or `if` carries a Python number that its body leaves a Python number (`lr *=
0.9`) as a 0-d value of Python's dtype (int64, float64, complex128), marked weak (`make_weak`):
as the number itself would, it takes the dtype of the arrays it meets in a ufunc (`lr * g` is
float32 for a float32 g, as eager NumPy 2 computes it), and Python's arithmetic on it with other
Python numbers (`lr * 0.9`, `-lr`) leaves it weak. A NumPy function of it alone (np.sqrt(lr))
gives a NumPy scalar, which is not weak, as NumPy's is not. runtime/tracing/control_weak.py
says where loops and branches make them; the Tracer's operators (runtime/tracing/tracer.py)
compute through `weak_ufunc` and `weak_power`.

A traced `if` that leaves a variable a Python number on one path and a NumPy scalar on another
(`m = 0.1`, `if x[0] > 0: m = x[0]`) makes it an either-value (`either_value`): `Either` says
which kind it is on which path, and holds each path's value exactly (in a dtype both fit in,
float64 here), and the number where it is one known while tracing. A ufunc or operator on
it is computed as on each path, the number's result and the NumPy scalar's (`m * y` is
`0.1 * y` on one, `x[0] * y` on the other), and the traced condition chooses. Where the two
results are of different dtypes (`m * h16`: float16 one way, float32 the other), or the
number is an int cast to an integer dtype that may not hold it (NumPy's OverflowError), there
is no one value to give, and that is refused. A NumPy function given it is computed so too,
and a result gives back the kind of the path taken (runtime/tracing/tracer_eithers.py: the
one rule for what it is where it meets no operator). Elsewhere (a method, a derivative's seed)
it is the NumPy scalar's float dtype, as the old join gave it (`either_value`), or the exact
value for ints.
"""
from __future__ import annotations

from typing import NamedTuple

import operator

import numpy as np

from ..primitives.elementwise import apply_ufunc, astype, power
from ..primitives.registry import UntraceableError, is_traced
from ..primitives.weak_inputs import (  # (WEAK_DTYPES, make_weak: from here too)
    WEAK_DTYPES, cast_weak_inputs, is_weak_value, make_weak)
from ..python_operators import BINARY_OPERATORS, UNARY_OPERATORS
from ..state import read_cells
from .weak_ints import checked_int, int_power

WEAK_NUMBERS = (int, float, complex)  # not bool: flags of generated code stay Python bools
# The ufuncs of Python's arithmetic operators: on Python numbers alone they give a Python
# number (weak); comparisons give a bool, which is never weak.
_PYTHON_ARITHMETIC = frozenset(ufunc for _, ufunc in BINARY_OPERATORS + UNARY_OPERATORS
                               if ufunc is not np.matmul)


# Python's own operators, by the ufunc each is on arrays (divmod is a builtin)
_PYTHON_OPERATORS = {ufunc: getattr(operator, f"__{name}__", divmod)
                     for name, ufunc in BINARY_OPERATORS + UNARY_OPERATORS
                     if ufunc in _PYTHON_ARITHMETIC}


class Either(NamedTuple):
    """What an either-value stands for: a value of kind `first` where the traced bool `flag`
    is true, of kind `second` where it is false. A kind is a NumPy dtype (a NumPy scalar or
    array of it) or int, float or complex (a Python number). `where`: the traced `if` or loop
    that made it so, for errors. `exact`: the value in a dtype that holds both kinds exactly,
    where the either-value itself is in another (None where it is that value). `number`: the
    Python number it is on its path of a Python number's kind, where that is known while
    tracing (`3` in `x[0] if c else 3`), else None."""

    first: object
    second: object
    flag: object
    where: str
    exact: object = None
    number: object = None


PYTHON_DTYPES = {kind: dtype for dtype, kind in WEAK_DTYPES.items()}


def make_either(value, either: Either):
    """Mark the traced `value` an either-value (see the module's docstring); returns it."""
    value._weak, value._either = False, either
    if value.ndim == 0:  # (a number on every path)
        value._builder.zero_d_kinds[value.graph_var] = "a NumPy scalar"
    return value


def either_of(value) -> Either | None:
    """The `Either` of an either-value, else None."""
    return getattr(value, "_either", None) if hasattr(type(value), "_either") else None


# (the kinds of a value of one kind or another by a traced condition: its Either)
kinds_of = either_of


def holding_dtype(first, second) -> np.dtype | None:
    """The dtype that holds values of both kinds exactly (float64 for np.float32 and a Python
    float, int64 for np.uint8 and a Python int); None where NumPy has none."""
    first, second = (PYTHON_DTYPES.get(kind, kind) for kind in (first, second))
    holding = np.result_type(first, second)
    return holding if all(np.can_cast(kind, holding, "safe") for kind in (first, second)) \
        else None


def either_value(exact, first, second, flag, where: str, number=None):
    """The either-value of kinds `first` and `second` (by `flag`) whose value in a dtype that
    holds both exactly is `exact`. What it is elsewhere than in a ufunc, operator, NumPy
    function or result (tracer_eithers.py: a method, a derivative's seed) is in the NumPy
    scalar's dtype where that is a floating one and the other kind a Python number: a float32
    program's values stay float32, as JAX's and tf.function's do (the number, where its path
    is taken, rounded to it, as NumPy rounds it where it meets the program's values); else
    the exact value (an int out of a uint8's range is not wrapped)."""
    kinds = (first, second)
    shown = next((kind for kind in kinds if not isinstance(kind, type)), None)
    if shown is None or shown.kind not in "fc" or all(not isinstance(kind, type)
                                                      for kind in kinds):
        shown = exact.dtype
    value = exact if shown == exact.dtype else astype(exact, shown)
    return make_either(value, Either(first, second, flag, where,
                                     None if value is exact else exact, number))


def exact_of(value):
    """An either-value's value in the dtype that holds both its kinds; any other as it is."""
    either = either_of(value)
    return value if either is None or either.exact is None else either.exact


def kind_of(value):
    """The kind (see Either) of a value that is no either-value."""
    if type(value) in WEAK_NUMBERS:
        return type(value)
    if is_weak(value):
        return WEAK_DTYPES[value.dtype]
    return np.dtype(value.dtype) if hasattr(value, "dtype") else np.result_type(value)


def inherit_weak(inner, outer, weak: bool, either: bool = True) -> None:
    """Give `inner`, a subgraph's input for `outer`, what `outer` stands for: a Python number
    where it stands for one (or `weak`), an either-value where it is one and `either` (a
    branch's input, not a loop body's, whose later iterations carry other values)."""
    if weak or is_traced(outer) and is_weak(outer):
        make_weak(inner)
    if either and kinds_of(outer) is not None:
        make_either(inner, kinds_of(outer))


def is_weak(value) -> bool:
    """A Python number (not a bool) or a traced value that stands for one."""
    return type(value) in WEAK_NUMBERS or is_weak_value(value)



def on_each_path(compute, args: tuple, kwargs: dict, what: str, zero_d_array=None):
    """`compute(*args, **kwargs)` where a leaf of `args` or `kwargs` (in lists, tuples and
    dicts) is an either-value: computed as on each of its paths, once with the NumPy scalar it
    is on one and once with the Python number it is on the other (the number itself where it
    is known while tracing, as NumPy's functions take it, and Python's operators on it give a
    Python number again, `_python_arithmetic`; else a weak value that stands for it), and one
    of the two results chosen by its condition (`choose`, which refuses results NumPy gives of
    two dtypes, and reads `zero_d_array`).
    `compute` is called once per path, so meets the other either-values of its arguments
    itself. What writes into an array (`out=`, np.copyto) would write twice: refused."""
    leaf = _first_either((args, kwargs))
    either, value = either_of(leaf), exact_of(leaf)
    if kwargs.get("out") is not None:
        raise _refused_write(either, what)
    results = []
    for kind in (either.first, either.second):  # (exact: it is one on that path)
        path_value = either.number if isinstance(kind, type) and \
            either.number is not None else _as_kind(value, kind)
        path_args, path_kwargs = _replaced((args, kwargs), leaf, path_value)
        try:
            try:
                results.append(compute(*path_args, **path_kwargs))
            except _NotPythonNumber:  # (Python's `1 / 0`: the path's number as a weak value)
                path_args, path_kwargs = _replaced((args, kwargs), leaf, _as_kind(value, kind))
                results.append(compute(*path_args, **path_kwargs))
        except OverflowError as error:  # (NumPy's, for the int on its path alone)
            raise _refused_overflow(either, what, error) from None
        if results[-1] is None:  # (np.copyto, np.fill_diagonal: written into an argument)
            raise _refused_write(either, what)
        if kind is int:
            _refuse_int_out_of_range(either, results[-1], what)
    return choose(either, *results, what=what, zero_d_array=zero_d_array)


def holds_either(tree) -> bool:
    """Whether `tree` is an either-value or a list, tuple or dict holding one."""
    return _first_either(tree) is not None


def _first_either(tree):
    if isinstance(tree, (list, tuple)) or type(tree) is dict:
        return next((leaf for item in (tree.values() if type(tree) is dict else tree)
                     if (leaf := _first_either(item)) is not None), None)
    return tree if either_of(tree) is not None else None


def _replaced(tree, leaf, new):
    """`tree` with `leaf` (each time it is there) replaced by `new`."""
    if tree is leaf:
        return new
    if type(tree) in (list, tuple):
        return type(tree)(_replaced(item, leaf, new) for item in tree)
    if type(tree) is dict:
        return {key: _replaced(item, leaf, new) for key, item in tree.items()}
    return tree


def _refused_overflow(either: Either, what: str, error: OverflowError) -> UntraceableError:
    return UntraceableError(
        f"{on_two_paths(either.where, either.first, either.second)}{what} of it raises NumPy's "
        f"OverflowError on one path ({error}), which one graph cannot raise on that path "
        f"alone: {one_type_advice(either.first, either.second)}")


def _refused_write(either: Either, what: str) -> UntraceableError:
    return UntraceableError(
        f"{on_two_paths(either.where, either.first, either.second)}{what} writes it into an "
        f"array, which would be written as on each path: "
        f"{one_type_advice(either.first, either.second)}")


def _refuse_int_out_of_range(either: Either, result, what: str) -> None:
    """Refuse where `result`, of the path where the either-value is a Python int, has an
    integer dtype narrower than int64 that the int was cast to (`3 * a` of an int8 a), and the
    int is not known while tracing to fit it: NumPy raises OverflowError for an int out of its
    range (300 * a), which the graph would wrap around instead."""
    for leaf in result if isinstance(result, tuple) else (result,):
        dtype = np.dtype(getattr(leaf, "dtype", np.result_type(leaf)))
        if dtype.kind not in "iu" or dtype == np.int64 or isinstance(either.number, int) and (
                np.iinfo(dtype).min <= either.number <= np.iinfo(dtype).max):
            continue
        scalar = scalar_dtype_name(either.first, either.second)
        raise UntraceableError(
            f"{either.where}\n  leaves this variable a Python int on one path and a NumPy "
            f"{scalar} value on the other, and {what} of it casts " + (
                f"a traced int to {dtype}, which a graph cannot check it fits"
                if either.number is None else
                f"the int {either.number!r} to {dtype}, which does not hold it") +
            f" (NumPy raises OverflowError for an int out of its range): "
            f"{one_type_advice(either.first, either.second)}")


def _as_kind(value, kind):
    if isinstance(kind, type):
        return make_weak(astype(value, PYTHON_DTYPES[kind]))
    return astype(value, kind)


def choose(either: Either, first, second, what: str, zero_d_array=None):
    """`first` where `either.flag`, else `second`: one value of one kind, an either-value
    where they are of two kinds. Refused where NumPy would give them more kinds, or kinds no
    dtype holds both of, or two NumPy kinds (a float32 and a float16 scalar), or two shapes:
    what is not computed as on each path, a NumPy function or a result, would have one of
    them only. `zero_d_array(value)`: whether a 0-d value stands for a 0-d array, not a NumPy
    scalar (refused where one path's is and the other's not); None: each a NumPy scalar."""
    if type(first) in (tuple, list) and type(second) is type(first) \
            and len(first) == len(second):
        return type(first)(choose(either, *pair, what=what, zero_d_array=zero_d_array)
                           for pair in zip(first, second))
    if _same_constant(first, second):  # (np.shape of it: () on both paths)
        return first
    paths = [_paths(first), _paths(second)]
    kinds = []
    for kind in (kind for path in paths for kind in path[:2]):
        if not any(same_kind(kind, known) for known in kinds):
            kinds.append(kind)
    holding = holding_dtype(*kinds) if len(kinds) == 2 else None
    arrays = [zero_d_array is not None and np.ndim(value) == 0 and zero_d_array(value)
              for value in (first, second)]
    if len(kinds) > 2 or len(kinds) == 2 and (holding is None or np.ndim(first) != 0 or not any(
            isinstance(kind, type) for kind in kinds)):
        raise _refused(either, what, " or ".join(kind_name(kind) for kind in kinds))
    if _shape(first) != _shape(second) or arrays[0] != arrays[1]:
        shown = ["a 0-d array" if array else f"an array of shape {_shape(value)}"
                 if np.ndim(value) else "a NumPy scalar"
                 for value, array in zip((first, second), arrays)]
        raise _refused(either, what, " or ".join(shown))
    if len(kinds) == 1:
        chosen = np.where(either.flag, first, second)
        if arrays[0] or np.ndim(chosen) != 0:
            return chosen
        chosen = _scalar(chosen)
        return make_weak(chosen) if isinstance(kinds[0], type) else chosen
    flags = [is_kind(path, kinds[0]) for path in paths]  # (where each is of the first kind)
    flag = either.flag if flags[0] is True and flags[1] is False \
        else np.where(either.flag, *flags)
    chosen = np.where(either.flag, _in_dtype(exact_of(first), holding),
                      _in_dtype(exact_of(second), holding))
    number = next((value for value in (first, second) if type(value) in WEAK_NUMBERS), None)
    return either_value(_scalar(chosen), *kinds, flag, either.where, number)


def _refused(either: Either, what: str, gives: str) -> UntraceableError:
    return UntraceableError(
        f"{on_two_paths(either.where, either.first, either.second)}{what} of it gives {gives}, "
        f"depending on the path: one traced value has one dtype; "
        f"{one_type_advice(either.first, either.second)}")


def _shape(value) -> tuple:
    return value.shape if is_traced(value) else np.shape(value)


def _same_constant(first, second) -> bool:
    """Whether `first` and `second` are one value known while tracing, of one type."""
    if is_traced(first) or is_traced(second) or type(first) is not type(second):
        return False
    if isinstance(first, (np.ndarray, np.generic)):
        return first.dtype == second.dtype and first.shape == second.shape and bool(
            np.array_equal(first, second, equal_nan=first.dtype.kind in "fc"))
    try:
        return bool(first == second)
    except (TypeError, ValueError):
        return False


def _in_dtype(value, dtype):
    """The scalar `value` (traced, or known while tracing) as `dtype`."""
    return astype(value, dtype) if is_traced(value) else np.asarray(value).astype(dtype)[()]


def _paths(value) -> tuple:
    """(the kind it is where its flag is true, where false, its flag) of a value."""
    either = either_of(value)
    if either is not None:
        return either
    return kind_of(value), kind_of(value), True


def same_kind(first, second) -> bool:
    # (np.dtype(np.float64) == float: a NumPy float64 is not a Python float here)
    return isinstance(first, type) == isinstance(second, type) and first == second


def is_kind(path: tuple, kind):
    """Where the value of `path` (_paths) is of `kind`: a Python bool or a traced one."""
    if same_kind(path[0], path[1]):
        return same_kind(path[0], kind)
    return path[2] if same_kind(path[0], kind) else np.logical_not(path[2])


def on_two_paths(where: str, first, second) -> str:
    """The opening of a refusal of an either-value made at `where` of kinds `first` and
    `second`: what it leaves the variable on each path, up to what is done with it."""
    return (f"{where}\n  leaves this variable {kind_name(first)} on one path and "
            f"{kind_name(second)} on the other, and ")


def kind_name(kind) -> str:
    return f"a Python {kind.__name__}" if isinstance(kind, type) else f"a NumPy {kind} value"


def scalar_dtype_name(*kinds) -> str:
    return next((str(kind) for kind in kinds if not isinstance(kind, type)), "float64")


def one_type_advice(first, second) -> str:
    """What a refusal of an either-value of kinds `first` and `second` says to do."""
    return (f"give the variable one type on every path (write "
            f"np.{scalar_dtype_name(first, second)}(...) of the Python number set on one of "
            f"them)")


def _scalar(value):
    """A 0-d `value` as a NumPy scalar (np.where's is a 0-d array, in NumPy and the graph)."""
    if value.ndim == 0:
        value = value[()]
        value._builder.zero_d_kinds[value.graph_var] = "a NumPy scalar"
    return value


def weak_ufunc(ufunc, *inputs, operator: bool = True):
    """`ufunc(*inputs)` where an input may be a weak traced value, with the result NumPy 2's
    for the Python number it stands for: a weak value that meets other arrays is cast first to
    the dtype NumPy would convert the number to (float32 beside a float32 array, int8 beside
    an int8 array, which wraps around as NumPy's arithmetic does; a number out of the integer
    dtype's range, which NumPy refuses with OverflowError when it converts it, is refused so
    when the graph runs; a comparison compares the number as it is). The result of Python's
    operators (`operator`, not NumPy's function) on weak values and Python numbers alone is
    weak again. An either-value gives each path's result, chosen between by its condition."""
    if any(either_of(value) is not None for value in inputs):
        return on_each_path(lambda *values: weak_ufunc(ufunc, *values, operator=operator),
                            inputs, {}, f"np.{ufunc.__name__}")
    if operator and ufunc in _PYTHON_OPERATORS and all(type(value) in WEAK_NUMBERS
                                                       for value in inputs):
        return _python_arithmetic(_PYTHON_OPERATORS[ufunc], inputs)
    if not any(is_weak_value(value) for value in inputs):
        return apply_ufunc(ufunc, "__call__", *inputs)
    if all(is_weak(value) for value in inputs):
        result = apply_ufunc(ufunc, "__call__", *inputs)
        if not (operator and ufunc in _PYTHON_ARITHMETIC):
            return result
        return make_weak(checked_int(ufunc, inputs, result))  # (an int within int64)
    return apply_ufunc(ufunc, "__call__", *cast_weak_inputs(ufunc, inputs))


def weak_power(base, exponent):
    """`base ** exponent` (primitives/elementwise.py `power`) where either may be weak."""
    if either_of(base) is not None or either_of(exponent) is not None:
        return on_each_path(weak_power, (base, exponent), {}, "**")
    if type(base) in WEAK_NUMBERS and type(exponent) in WEAK_NUMBERS:
        return _python_arithmetic(pow, (base, exponent))
    if not (is_weak_value(base) or is_weak_value(exponent)):
        return power(base, exponent)
    if is_weak(base) and is_weak(exponent):  # (Python's types of two ints' power: weak_ints)
        result = int_power(base, exponent)
        return make_weak(power(base, exponent) if result is None else result)
    return power(*cast_weak_inputs(np.power, (base, exponent)))


def _python_arithmetic(python_operator, numbers: tuple):
    """Python's operator on the Python numbers an either-value is on its path (on_each_path):
    the Python number Python gives (`-0.1`, `1 - 0.1`), which stays known while tracing, so a
    NumPy function given the result takes it as a Python number. Where Python raises (`1 / 0`,
    an int past int64) or gives what no graph value holds: _NotPythonNumber, and on_each_path
    computes that path with a weak value, as where the number is not known (the path may be
    the one not taken, as Python raises only on it)."""
    try:
        result = python_operator(*numbers)
    except (ArithmeticError, ValueError, TypeError):
        result = None
    results = result if type(result) is tuple else (result,)
    if not all(type(value) in (float, complex) or type(value) is int and
               np.iinfo(np.int64).min <= value <= np.iinfo(np.int64).max for value in results):
        raise _NotPythonNumber
    return result


class _NotPythonNumber(Exception):
    """Python's operator on a path's number gives no Python number a graph holds."""


def operator_method(ufunc, reflected=False):
    """The Tracer's `self <op> other` (`other <op> self` where `reflected`): the ufunc on both,
    a Python number as NumPy takes one (`weak_ufunc`)."""
    if ufunc is np.multiply:
        def multiply(self, other):
            _refuse_traced_repeat(self, other)
            return weak_ufunc(ufunc, *((read_cells(other), self) if reflected else
                                       (self, read_cells(other))))
        return multiply
    if reflected:
        return lambda self, other: weak_ufunc(ufunc, read_cells(other), self)
    return lambda self, other: weak_ufunc(ufunc, self, read_cells(other))


def _refuse_traced_repeat(count, other) -> None:
    """`items * n` of a list or tuple and a traced int (or bool) n: Python repeats the items n
    times (NumPy's ints are indices), a length the trace cannot know; multiplying element by
    element, as NumPy's arrays do, would give another value. An array of ints of one or more
    dimensions is no count: NumPy multiplies it by the list element by element."""
    if isinstance(other, (list, tuple)) and np.dtype(count.dtype).kind in "biu" and \
            np.ndim(count) == 0:
        raise UntraceableError(
            f"a {type(other).__name__} repeated a traced int's number of times (items * n, n "
            f"an int the traced code computes from its arguments or carries through a loop): "
            f"the length of the result would depend on the values; repeat an array instead "
            f"(np.tile(np.stack(items), n) where n is known when tracing, or np.repeat), or "
            f"make n a Python int before the traced code")
