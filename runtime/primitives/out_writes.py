"""A NumPy call's `out` argument: where it is among the positional arguments, and the checks
of a result before generated code writes it into `out` (transforms/front/out_arguments.py).
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from .index import get_item, indexes_a_view, is_integer_index


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


def checked_out(value, out, function_name: str, casting: str = "same_kind"):
    """`value`, the result of NumPy's `function_name` called with an `out` argument, checked
    before generated code writes it into `out` (`out[...] = checked_out(value, out, ...)`,
    transforms/front/out_arguments.py): NumPy's error where its dtype does not cast to out's by the
    rule out= follows (the call's `casting`, "same_kind" by default: no float into an integer
    array)."""
    value_dtype = value.dtype if hasattr(value, "dtype") else np.result_type(value)
    if not np.can_cast(value_dtype, out.dtype, casting=casting):
        raise TypeError(f"Cannot cast ufunc {function_name!r} output from {value_dtype!r} to "
                        f"{out.dtype!r} with casting rule {casting!r}")
    return value


def checked_out_item(value, base, index, function_name: str, filename: str = "<unknown>",
                     line: int | None = None, casting: str = "same_kind"):
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
    return checked_out(value, get_item(base, index), function_name, casting)
