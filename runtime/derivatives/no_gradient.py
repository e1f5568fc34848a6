"""Outputs and arguments that carry no gradient where the user asks for one: refused, not zeros.

A gradient is taken of a floating-point output. A function that returns None (a forgotten
`return`), text, booleans (`x > 0.5`) or NumPy integers (`np.argmax(x)`) has nothing to
differentiate, and a gradient of zeros would hide the mistake: as in JAX, `grad`,
`value_and_grad` and `implicit_grad` raise a TypeError naming the function and what it returned,
where no seed (`dy`) was given. A Python int is a number literal the function returned on a path
that added nothing to it (`total = 0`, then `total = total + ...` where a test holds): its
gradient is zeros, as a traced function's is (where the other path's float joins it). So is
that of an integer output of a derivative given an integer argument, which `match` refuses by
name (the cause). A container the function returns (a tuple, list or dict) is differentiated
as the sum of its parts, an integer part giving nothing; only a whole output of these kinds is
refused.

The error names the user's function: each generated reverse derivative is noted here by the file
name its code is compiled under (`name_generated`), which its code converted for tracing keeps,
and `output_function` finds the innermost such frame that called the check.

A str argument with respect to which a gradient is asked is refused as an integer one is
(runtime/derivatives/structure.py `_refuse_integral`), by `refuse_text_argument`.
"""
from __future__ import annotations

import sys
import weakref

import numpy as np

from ..array_subclasses import arguments_of

# The file name of each generated reverse derivative -> the name of the function it derives.
# Filled as derivatives are made (transforms/codegen/loading.py); an entry goes with its code.
_derived_functions: dict = {}

_NEEDS = ("a gradient is taken of a floating-point output (a float or a float array, or a "
          "tuple, list or dict of them)")


def name_generated(generated, function_name: str) -> None:
    """Note that the generated function `generated` derives the user's `function_name`."""
    filename = generated.__code__.co_filename
    _derived_functions[filename] = function_name
    weakref.finalize(generated, _derived_functions.pop, filename, None)


def output_function(default: str = "the differentiated function") -> str:
    """The name of the user's function whose generated derivative is running the check (the
    innermost one on the stack), else `default`."""
    frame = _derivative_frame(sys._getframe(1))
    return default if frame is None else _derived_functions[frame.f_code.co_filename]


def _derivative_frame(frame):
    """The innermost frame of a generated reverse derivative from `frame` outward, or None."""
    while frame is not None and frame.f_code.co_filename not in _derived_functions:
        frame = frame.f_back
    return frame


def check_output(value, dy, function_name: str | None = None) -> None:
    """Raise TypeError where `value`, a function's whole output, carries no gradient (None,
    text, booleans, integers) and no seed `dy` was given, which would start the gradient from
    ones where there is nothing to differentiate. function_name: the function's (default: the
    one whose generated derivative calls this)."""
    if dy is not None:
        return
    problem = _no_gradient(value)
    if problem is None or problem[1] is _INTEGERS and _given_integers(sys._getframe(1)):
        return
    what, advice = problem
    name = function_name or output_function()
    if value is None:
        advice = f"did {name} forget its `return`?"
    raise TypeError(f"{name} returned {what}: {_NEEDS}; {advice}")


def _no_gradient(value):
    """(what `value` is, what to do) where it carries no gradient as a whole output, else
    None."""
    if value is None:
        return "None", ""
    if isinstance(value, (str, bytes)):
        return f"the {type(value).__name__} {_shown(value)}", "text carries no gradient"
    if isinstance(value, bool):
        return f"the bool {value}", _BOOLEANS
    if isinstance(value, int) and not hasattr(value, "dtype"):
        return None  # a number literal: zeros (the module's docstring)
    if not isinstance(getattr(value, "shape", None), tuple):
        return None
    kind = _kind(value)
    if kind == "b":
        return "a value of dtype bool", _BOOLEANS
    if kind in ("i", "u"):
        return f"a value of dtype {np.dtype(value.dtype)}", _INTEGERS
    return None


_BOOLEANS = ("booleans (a comparison's result) carry no gradient: return the floating-point "
             "values compared")
_INTEGERS = ("integers carry no gradient: return a floating-point value (float(n), "
             "n.astype(float))")


def _given_integers(frame) -> bool:
    """Whether the innermost generated reverse derivative from `frame` out was given an integer
    argument (an int, or an array or NumPy number of integers)."""
    frame = _derivative_frame(frame)
    if frame is None:
        return False
    return any(isinstance(value, int) and not isinstance(value, bool) or _kind(value) in ("i", "u")
               for value in arguments_of(frame).values())


def _kind(value) -> str | None:
    """The kind of `value`'s NumPy dtype (an array's of any library, a traced value's), None
    where it has none NumPy knows."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return None
    try:
        return np.dtype(dtype).kind
    except TypeError:
        return None


def _shown(text) -> str:
    """A str or bytes as an error shows it: its repr, cut after 37 characters."""
    return repr(text) if len(text) <= 40 else repr(text[:37]) + "..."


def refuse_text_argument(value, parameter: str) -> None:
    """Raise TypeError for a str (or bytes) argument `parameter` that a gradient is taken with
    respect to: text has no gradient (the rule, and the form of the message, of an integer
    argument)."""
    if isinstance(value, (str, bytes)):
        raise TypeError(
            f"argument {parameter!r} is the {type(value).__name__} {_shown(value)}: gradients are "
            f"taken with respect to floating-point values; pass a float or an array of "
            f"floats instead, or leave {parameter!r} out of `wrt`")
