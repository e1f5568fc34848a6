"""A NumPy call's `out` argument: where it is among the positional arguments, the checks of a
result before generated code writes it into `out` (transforms/front/out_arguments.py), and a
ufunc's `where=` beside it.

`ufunc(x, y, out=o, where=m)` leaves o as it was where m is False. The transforms and the tracer
compute it as `o[...] = np.where(m, ufunc(masked_operand(x, m, s), ...), o)`: each operand takes
a safe value s of the ufunc's (SAFE_OPERANDS) at the elements left out, so that neither the value
nor the gradient there holds an inf or a NaN (np.divide(a, b, out=o, where=b != 0) divides by 1,
not by 0, there); the gradient flows to o's old contents where m is False.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..array_api import numpy_dtype
from ..devices import array_module
from .index import add_at, as_array, get_item, holds_traced, indexes_a_view, is_integer_index
from .registry import UntraceableError, is_traced
from ..user_frames import code_site


# Where a ufunc's methods take out among their positional arguments (outer and at take none).
_UFUNC_METHOD_OUT = {"reduce": 3, "accumulate": 3, "reduceat": 4}


def take_out(func, args: tuple, kwargs: dict):
    """(out, args, kwargs) for a call of NumPy's `func`, with its `out` argument, given by
    keyword or by position, taken out of args and kwargs (None where there is none)."""
    if kwargs.get("out") is not None:
        kwargs = dict(kwargs)
        return kwargs.pop("out"), args, kwargs
    position = out_position(func)
    if position is None or len(args) <= position or args[position] is None:
        return None, args, kwargs
    return args[position], args[:position] + args[position + 1:], kwargs


@functools.lru_cache(maxsize=None)
def out_position(function) -> int | None:
    """Where NumPy's `function` (a ufunc, or a function with a signature) takes `out` among its
    positional arguments (`np.multiply(a, b, out)`, `np.clip(a, lo, hi, out)`), else None."""
    if isinstance(function, np.ufunc):  # ufunc(x1, ..., xn, out): one output only
        return function.nin if function.nout == 1 else None
    if isinstance(getattr(function, "__self__", None), np.ufunc):  # np.add.reduce(a, 0, None, out)
        return _UFUNC_METHOD_OUT.get(function.__name__)
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature
        return None
    for position, parameter in enumerate(parameters):
        if parameter.kind not in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            return None
        if parameter.name == "out":
            return position
    return None


# NumPy functions whose out= follows a rule of its own, not a ufunc's same_kind cast of the
# result: take and compress cast out to the array's dtype and back, which must be safe; dot
# writes into an out of the result's dtype alone; einsum computes in the common dtype of its
# operands and out, which must cast safely to out's. Reductions (and cumulative sums and
# products, ufunc.reduce, .accumulate, .reduceat) cast their result into out unsafely: a float
# sum into an integer out is truncated, as astype truncates; std, ptp, percentile, quantile
# and round are not among them (NumPy's same_kind error of sqrt, subtract, add, rint).
_OUT_CAST_BACK = frozenset({"take", "compress"})
_OUT_EXACT = frozenset({"dot"})
_OUT_COMMON_SAFE = frozenset({"einsum"})
_OUT_UNSAFE = frozenset({
    "sum", "prod", "mean", "var", "max", "min", "amax", "amin", "median", "all", "any",
    "trace", "cumsum", "cumprod", "cumulative_sum", "cumulative_prod", "nansum", "nanprod",
    "nanmax", "nanmin", "nanmedian", "nanpercentile", "nanquantile", "nancumsum",
    "nancumprod", "reduce", "accumulate", "reduceat"})


def checked_out(value, out, function_name: str, filename: str | None = "<unknown>",
                line: int | None = None, casting: str | None = None):
    """`value`, the result of NumPy's `function_name` called with an `out` argument on the
    user's `line` of `filename`, checked before generated code writes it into `out`
    (`out[...] = checked_out(value, out, ...)`, transforms/front/out_arguments.py): NumPy's
    error, naming that line, where out's dtype is not one NumPy's out= takes for it (the call's
    `casting`, None where the call gives none: "same_kind", no float into an integer array;
    for take and compress, an out whose dtype casts safely to the result's; for dot, the
    result's dtype alone; for einsum, one the result casts to by `casting`, "safe" by default;
    for reductions, any).
    A `filename` of None: the line of the code outside autotrace and NumPy that called it."""
    if filename is None:
        filename, line = code_site() or ("<unknown>", None)
    value_dtype = value.dtype if hasattr(value, "dtype") else np.result_type(value)
    out_dtype = np.dtype(out.dtype)
    where = "" if line is None else f'\n  File "{filename}", line {line}'
    if function_name in _OUT_CAST_BACK:
        if not np.can_cast(out_dtype, value_dtype, casting="safe"):
            raise TypeError(f"Cannot cast array data from {out_dtype!r} to {value_dtype!r} "
                            f"according to the rule 'safe' (numpy.{function_name} with out=: "
                            f"give out the dtype {value_dtype}){where}")
    elif function_name in _OUT_COMMON_SAFE:
        common, rule = np.result_type(value_dtype, out_dtype), casting or "safe"
        if not np.can_cast(value_dtype, common, casting=rule):
            raise TypeError(f"Iterator operand 0 dtype could not be cast from {value_dtype!r} "
                            f"to {common!r} according to the rule {rule!r} "
                            f"(numpy.{function_name} with out=){where}")
        if not np.can_cast(common, out_dtype, casting=rule):
            raise TypeError(f"Iterator requested dtype could not be cast from {common!r} to "
                            f"{out_dtype!r}, the out operand's dtype, according to the rule "
                            f"{rule!r} (numpy.{function_name} with out=: give out the dtype "
                            f"{common}, or casting='unsafe'){where}")
    elif function_name in _OUT_UNSAFE and casting in (None, "same_kind"):
        pass  # (NumPy's reductions cast into out unsafely)
    elif function_name in _OUT_EXACT:
        if out_dtype != value_dtype:
            raise ValueError(f"output array is not acceptable (must have the right datatype, "
                             f"number of dimensions, and be a C-Array): numpy.{function_name} "
                             f"with out= needs an out of dtype {value_dtype}{where}")
    elif not np.can_cast(value_dtype, out_dtype, casting=casting or "same_kind"):
        raise TypeError(f"Cannot cast ufunc {function_name!r} output from {value_dtype!r} to "
                        f"{out_dtype!r} with casting rule {casting or 'same_kind'!r}{where}")
    return value


def checked_out_item(value, base, index, function_name: str, filename: str = "<unknown>",
                     line: int | None = None, casting: str | None = None):
    """`value`, the result of NumPy's `function_name` called with `out=base[index]` on the
    user's `line` of `filename`, checked before generated code writes it into `base[index]`
    (transforms/front/out_arguments.py): as by `checked_out`, and refused at that line where
    `base[index]` is no view of the array `base` (a copy, which NumPy's out= fills and drops,
    or an array held in a list), NumPy's error where it is a single element."""
    if not indexes_a_view(base, index):
        pieces = index if isinstance(index, tuple) else (index,)
        if hasattr(base, "ndim") and all(piece is None or isinstance(piece, slice) or
                                         is_integer_index(piece) for piece in pieces):
            raise TypeError("return arrays must be of ArrayType")  # (one element)
        where = f'File "{filename}", line {line}: '
        if not hasattr(base, "ndim") or isinstance(base, (list, tuple, dict)):
            raise NotImplementedError(
                f"{where}numpy.{function_name}(..., out=y[index]) with y a "
                f"{type(base).__name__}: autotrace follows out= into an array or a view of one "
                f"only; write y[index] = numpy.{function_name}(...)")
        raise NotImplementedError(
            f"{where}numpy.{function_name}(..., out=y[index]) with an index array or mask: "
            f"y[index] is a copy, which out= fills and NumPy drops, leaving y as it was; "
            f"autotrace refuses it: leave out= out, or write y[index] = "
            f"numpy.{function_name}(...) to change y")
    return checked_out(value, get_item(base, index), function_name, filename, line, casting)


# --- where= beside out= --------------------------------------------------------------------------

# The value an operand takes where a ufunc's where= leaves the element out: one at which the
# ufunc and its partial derivatives are finite. 1 for all but these, whose derivative is
# infinite at 1 (arcsin, arccos, arctanh) or which are not defined there (arccosh's is).
SAFE_OPERANDS = {"arcsin": 0, "arccos": 0, "arctanh": 0, "arccosh": 2}


def safe_operand(ufunc: np.ufunc):
    """The operand value of `ufunc` at the elements its where= leaves out (SAFE_OPERANDS)."""
    return SAFE_OPERANDS.get(ufunc.__name__, 1)


def _passed_through(x) -> bool:
    """Whether `masked_operand` gives `x` as it is: a Python number (or a traced value standing
    for one), which NumPy reads as a weak scalar and which is one value at every element."""
    return isinstance(x, (bool, int, float, complex)) or bool(
        hasattr(type(x), "_weak") and x._weak)


def where_mask(where):
    """`where=` as NumPy reads it: an array (or NumPy scalar) of bools as it is, NumPy's
    TypeError for one of another dtype; a Python value (a list, a number, None) as bools."""
    dtype = getattr(where, "dtype", None)
    if dtype is None:
        return np.asarray(where, dtype=bool)
    if numpy_dtype(dtype) != np.dtype(bool):
        raise TypeError(f"Cannot cast array data from {numpy_dtype(dtype)!r} to dtype('bool') "
                        f"according to the rule 'safe'")
    return where


def masked_operand(x, mask, safe):
    """The operand `x` of a ufunc called with where=`mask`: x where mask is True, `safe` (in
    x's dtype) where it is False, broadcast together; a Python number as it is (one value at
    every element, which NumPy reads as a weak scalar)."""
    mask = where_mask(mask)
    if _passed_through(x):
        return x
    dtype = numpy_dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype
    # (the safe value a NumPy scalar, which every array module reads as one of its own)
    return array_module(x).where(mask, x, dtype.type(safe))


def kept_where(value, x, mask):
    """`value` (a gradient or tangent of masked_operand's y or x) where `mask` is True, 0
    where it is False; `value` as it is where masked_operand passed `x` through."""
    if _passed_through(x):
        return value
    return array_module(value).where(where_mask(mask), value, 0)


def masked_call(ufunc: np.ufunc, inputs: tuple, out, where, **kwargs):
    """What `ufunc(*inputs, out=out, where=where, **kwargs)` writes into out (a tuple of one
    array, as a tracer's __array_ufunc__ gets it): np.where(where, ufunc(masked operands),
    out). Refused without out (NumPy leaves the elements where= leaves out uninitialised)."""
    if out is None or all(target is None for target in out):
        raise UntraceableError(unmasked_out_message(ufunc.__name__))
    if ufunc.nout != 1 or ufunc.signature is not None:
        raise UntraceableError(f"autotrace cannot trace numpy.{ufunc.__name__} with where=: "
                               f"compute it without where= and select with "
                               f"np.where(m, value, out)")
    operands = [masked_operand(x, where, safe_operand(ufunc)) for x in inputs]
    return np.where(where_mask(where), ufunc(*operands, **kwargs), out[0])


def unmasked_out_message(name: str, call: str | None = None, verb: str = "trace") -> str:
    """The refusal of `name` (the user's `call`) with where= and no out=."""
    call = call or f"np.{name}(x, out=np.zeros_like(x), where=m)"
    return (f"autotrace cannot {verb} numpy.{name} with where= and no out=: NumPy leaves the "
            f"elements that where= leaves out uninitialised (whatever the memory held); give "
            f"out= the values they should keep, as in {call}")


def masked_outer_message(name: str, verb: str = "trace") -> str:
    """The refusal of `numpy.{name}.outer` called with where=, out= or none."""
    return (f"autotrace cannot {verb} numpy.{name}.outer with where=: compute it without "
            f"where= and select, as in o[...] = np.where(m, np.{name}.outer(a, b), o)")


def added_at(target, index, values):
    """What `np.add.at(target, index, values)` leaves in `target`, for converted code, which
    writes it back (`target[...] = added_at(target, index, values)`,
    transforms/front/out_arguments.py): with traced values or indices, a new traced value
    (repeated indices add up), which that write makes a NumPy array made in the function take
    as any traced write; else NumPy's own np.add.at, in place, and `target` itself."""
    if is_traced(target) or not isinstance(target, np.ndarray) or not (
            holds_traced(index) or holds_traced(values)):
        np.add.at(target, index, values)  # (a traced target: tracer.py's, in place)
        return target
    given = as_array(values)
    dtype = given.dtype if hasattr(given, "dtype") else np.asarray(given).dtype  # (1.0 too)
    # NumPy's error where the sum does not cast to target's dtype
    np.add.at(np.zeros(0, target.dtype), np.zeros(0, np.intp), np.zeros(0, dtype))
    return add_at(target, index, given)
