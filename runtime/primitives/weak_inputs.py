"""Traced values that stand for Python numbers (a weak value, runtime/tracing/weak_scalars.py:
its `_weak`) given to an elementwise NumPy function, a ufunc (`lr * g`, np.maximum) or not
(np.where, np.clip, np.isclose), or converted to a dtype (np.full(3, k, np.int8)).

NumPy 2 converts a Python number given to one to the dtype the arrays beside it give
(`np.where(x > 0, x, lr)` and `lr * x` are float32 for a float32 x and a Python float lr,
`np.where(c, a_int8, k)` is int8 for a Python int k); a graph value of the number's dtype
(int64, float64) would promote the result instead. One rule, `cast_weak_inputs`, casts it so
for every such function: the dtype is the loop a ufunc resolves, or what the function gives on
0-d stand-ins. An int converted to an integer dtype it does not fit raises OverflowError in
NumPy (`a_int8 + 300`, `np.full(3, 300, np.int8)`), checked when the graph runs; np.where
wraps it around instead, as a cast does, which `cast_weak_inputs` asks of the function itself.
"""
from __future__ import annotations

import numpy as np

from .int_checks import fitting_int
from .registry import bind

# Python's numbers' dtypes, and their types: the type of the Python number a weak value of
# each dtype stands for
WEAK_DTYPES = {np.dtype(np.int64): int, np.dtype(np.float64): float,
               np.dtype(np.complex128): complex}


def is_weak_value(value) -> bool:
    """Whether `value` is a traced value that stands for a Python number (`make_weak`)."""
    # (asked of its type: a placeholder for an unassigned variable raises on any attribute)
    return hasattr(type(value), "_weak") and value._weak


def make_weak(value):
    """Mark the 0-d traced `value` of a Python number's dtype weak; returns it."""
    if hasattr(type(value), "_weak") and value.shape == () and value.dtype in WEAK_DTYPES:
        value._weak = True
    return value


# Comparisons of an integer array with a Python int: NumPy 2 compares the number as it is,
# also one out of the array's range (`a_uint8 > -1`), so a weak int is not cast for them.
_COMPARISONS = frozenset({np.equal, np.not_equal, np.less, np.less_equal, np.greater,
                          np.greater_equal})


def cast_weak_inputs(function, inputs: tuple) -> tuple:
    """`inputs` of the elementwise `function` (a ufunc or not), each weak value cast to the
    dtype NumPy converts the Python number it stands for to among the others (`converted`).
    An int that does not fit an integer dtype raises OverflowError when the graph runs, where
    NumPy's function raises it (np.add's, np.maximum's), and wraps around where NumPy's does
    (np.where's); a comparison compares the number as it is."""
    weak = [is_weak_value(value) for value in inputs]
    if not any(weak):
        return inputs
    examples = [WEAK_DTYPES[value.dtype](0) if is_weak else _example(value)
                for value, is_weak in zip(inputs, weak)]
    dtypes = converted(function, examples)
    if dtypes is None:  # (no loop for them: the function's own error, as NumPy's)
        return inputs
    kinds = "fc" if function in _COMPARISONS else "fciu"
    return tuple(_cast(value, dtype, function, examples, weak)
                 if is_weak and dtype.kind in kinds and value.dtype != dtype else value
                 for value, is_weak, dtype in zip(inputs, weak, dtypes))


def converted(function, examples: list) -> tuple | None:
    """The dtype NumPy converts each of `examples` (0-d stand-ins of the inputs, a Python
    number for each that stands for one) to in `function`: the loop a ufunc resolves them to
    (ufunc.resolve_dtypes), else the dtype `function` gives, by calling it on them (np.where,
    np.clip; a function of the dtypes where NumPy's computes in another, np.isclose's).
    None where NumPy has no loop for them."""
    try:
        if isinstance(function, np.ufunc):
            described = [type(example) if type(example) in WEAK_DTYPES.values()
                         else np.result_type(example) for example in examples]
            return function.resolve_dtypes((*described, *(None,) * function.nout))
        with np.errstate(all="ignore"):
            return (np.result_type(function(*examples)),) * len(examples)
    except (TypeError, ValueError):
        return None


def _cast(value, dtype: np.dtype, function, examples: list, weak: list):
    """The weak `value` cast to `dtype`, an int checked to fit an integer dtype where NumPy's
    `function` raises for one that does not."""
    if value.dtype.kind == "i" and dtype.kind in "iu" and \
            _refuses_outside(function, examples, weak, dtype):
        value = fitting_int(value, dtype)
    return bind("astype", value, dtype=dtype)


def python_number_as(value, dtype):
    """`value` ready to be cast to `dtype`: where it stands for a Python int and `dtype` is an
    integer one it may not fit, checked to fit when the graph runs, as NumPy converts a Python
    int (np.full(3, k, np.int8), np.asarray(k, np.uint8): OverflowError for 300)."""
    dtype = np.dtype(dtype)
    if is_weak_value(value) and value.dtype.kind == "i" and dtype.kind in "iu" \
            and dtype != value.dtype:
        return fitting_int(value, dtype)
    return value


def clip_bounds(a, lower, upper) -> tuple:
    """The bounds np.clip of `a` takes in place of `lower` and `upper`: NumPy leaves out a
    bound that is a Python int beyond the range of an integer `a` on its side (np.clip(a_int8,
    -300, 2) is np.minimum(a_int8, 2)), so such a weak bound is moved to the end of the range,
    where it changes nothing either (one beyond the other end raises as NumPy's does)."""
    dtype = np.dtype(a.dtype if hasattr(a, "dtype") else np.result_type(a))
    if dtype.kind not in "iu":
        return lower, upper
    info, int64 = np.iinfo(dtype), np.iinfo(np.int64)
    if is_weak_value(lower) and info.min > int64.min:
        lower = make_weak(bind("maximum", lower, np.int64(info.min)))
    if is_weak_value(upper) and info.max < int64.max:
        upper = make_weak(bind("minimum", upper, np.int64(info.max)))
    return lower, upper


def weak_result(value, result):
    """`result` of a function of `value` alone that gives a Python number for a Python number
    (np.imag(0.5) is Python's (0.5).imag): standing for one where `value` does."""
    return make_weak(result) if is_weak_value(value) and result.dtype in WEAK_DTYPES else result


def _refuses_outside(function, examples: list, weak: list, dtype: np.dtype) -> bool:
    """Whether NumPy's `function` raises OverflowError for a Python int out of the integer
    `dtype` among these inputs (np.maximum's does, np.where's wraps it around)."""
    outside = -1 if dtype.kind == "u" else int(np.iinfo(dtype).max) + 1
    try:
        with np.errstate(all="ignore"):
            function(*[outside if is_weak and type(example) is int else example
                       for example, is_weak in zip(examples, weak)])
    except OverflowError:
        return True
    return False


def _example(value):
    """A 0-d stand-in of a non-weak input's dtype (a literal as it is)."""
    if value is None or isinstance(value, (bool, int, float, complex)):
        return value
    return np.zeros((), np.asarray(value).dtype if not hasattr(value, "dtype")
                    else value.dtype)
