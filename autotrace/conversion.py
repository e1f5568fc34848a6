"""Control-flow conversion for tracing: where transforms/ (the rewrite) meets runtime/ (the
helpers converted code calls).

`for_tracing(f)` is what `autotrace.function` traces: f with its `if`, `while` and `for`
statements on traced values turned into graph `cond` and `while` ops. Functions that converted
code calls are converted when called (`converted(g)`), so control flow in a helper function
converts too. Conversions are cached per function.
"""
from __future__ import annotations

import contextvars
import functools
import inspect
import os
import sys
import sysconfig
import types
import warnings
import weakref

import numpy as np

from autotrace import runtime
from autotrace import transforms
from autotrace.runtime.tracing.control_statements import HELPERS as STATEMENT_HELPERS, NUMPY_REPLACEMENTS
from autotrace.runtime.tracing.tracer_eithers import function_name as numpy_name, on_each_path_call
from autotrace.runtime.tracing.tracer_list_arguments import reads_arrays, with_lists_as_arrays
from autotrace.runtime.state import traced_reverse_derivative_code
from autotrace.transforms.control_flow.control_flow_build import convert
from autotrace.transforms.analysis.calls import note_own_rule
from autotrace.transforms.dynamic_calls import (derivative_conversion, jvp_call, vjp_call,
                                                vjp_call_tangent, vjp_call_transpose,
                                                vjp_start)
from autotrace.transforms.derivative_record import derivative_record
from autotrace.transforms.front.function_caches import made_from
from autotrace.transforms.front.line_map import user_function_name, user_place
from autotrace.transforms.analysis.live_names import transform_lock
from autotrace.transforms.analysis.random_draws import NOT_DRAWS, NUMPY_GENERATORS

# Code that is never converted: libraries (their control flow is on Python values) and ours.
_LIBRARY_MODULES = {"numpy", "scipy", "cupy", "autotrace"}
_LIBRARY_PATHS = tuple({sysconfig.get_paths()[key] for key in
                        ("stdlib", "platstdlib", "purelib", "platlib")}) + tuple(
    os.path.dirname(os.path.abspath(path)) + os.sep
    for path in (runtime.__file__, transforms.__file__, __file__)
)  # by file too: wrappers take users' names


def _is_user_function(function) -> bool:
    module = (getattr(function, "__module__", None) or "").split(".")[0]
    if module in _LIBRARY_MODULES:
        return False
    return not function.__code__.co_filename.startswith(_LIBRARY_PATHS)


# Set while autotrace.function traces a derivative again because a call's derivative in halves
# sat in an `if` or loop on a traced value (autotrace/traced_function.py): derivatives are converted
# in the form that runs the calls inside `if`s and loops whole.
whole_calls = contextvars.ContextVar("whole_calls", default=False)


def refuse_untraceable(function) -> None:
    """Raise TypeError for what autotrace.function cannot trace: no function, or a generator
    function, whose body runs only as its generator is iterated, after the trace has ended."""
    if not callable(function):
        raise TypeError(f"autotrace.function expects a function, got {type(function).__name__}")
    inner = getattr(function, "__func__", function)
    if inspect.isgeneratorfunction(inner) or inspect.isasyncgenfunction(inner):
        code = inner.__code__
        raise TypeError(
            f"{code.co_filename}:{code.co_firstlineno}: autotrace.function cannot trace the "
            f"generator function {inner.__name__!r}: its body (the `yield`) runs only as the "
            f"generator is iterated, after the trace has ended. Return the values instead (a "
            f"list, or np.stack of them), or trace the function that consumes the generator")


def for_tracing(function):
    """`function` with its control flow converted (itself when there is nothing to convert or
    its source cannot be read)."""
    if inspect.ismethod(function):
        return types.MethodType(for_tracing(function.__func__), function.__self__)
    if not inspect.isfunction(function):
        return function
    record = derivative_record(function)
    if record is not None and record.top_calls is not None and whole_calls.get():
        function = record.top_calls()
    with transform_lock:  # converting parses source, which runs one thread at a time
        made = made_from(function, "__autotrace_converted__")
        known = made.get("for_tracing")
        if known is None:
            known = made["for_tracing"] = convert(function, HELPERS)
            if record is not None and record.mode == "reverse" and inspect.isfunction(known):
                traced_reverse_derivative_code.add(known.__code__)  # (runtime/state.py)
        return known


# The methods of a NumPy array that NumPy's functions of their names are, the array first
# (F.dot(u) is np.dot(F, u)): converted code calls those, which see traced arguments.
_ARRAY_METHODS_AS_FUNCTIONS = frozenset({"dot", "take", "searchsorted"})


def converted(callee):
    """What converted code calls for `callee(...)`: the converted version of a user function
    (an autotrace.function's Python function, a method's function), else `callee` itself.
    A NumPy random draw is let through with a warning (see _warn_of_a_frozen_draw)."""
    if isinstance(getattr(callee, "__self__", None), NUMPY_GENERATORS):
        _warn_of_a_frozen_draw(callee, sys._getframe(1))
    note_own_rule(callee)
    if type(getattr(callee, "__self__", None)) is np.ndarray and getattr(
            callee, "__name__", None) in _ARRAY_METHODS_AS_FUNCTIONS:
        # a NumPy array's method reads a traced argument as an array, which it cannot be
        return functools.partial(converted(getattr(np, callee.__name__)), callee.__self__)
    try:
        replacement = NUMPY_REPLACEMENTS.get(callee) or _CONVERTING_CALLERS.get(callee)
        numpy_callee = reads_arrays(callee)
    except TypeError:  # unhashable
        replacement, numpy_callee = None, False
    if replacement is not None:
        return on_each_path_call(replacement, numpy_name(callee)) \
            if _is_numeric_function(callee) else replacement
    if numpy_callee:  # a list of traced values read as an array: np.linalg.norm([a, b])
        return on_each_path_call(with_lists_as_arrays(callee), numpy_name(callee))
    inner = getattr(callee, "__autotrace_python_function__", None)
    if inner is not None and not inspect.isfunction(callee):
        return for_tracing(inner)
    if inspect.ismethod(callee) and inspect.isfunction(callee.__func__) and \
            _is_user_function(callee.__func__):
        return for_tracing(callee)
    if inspect.isfunction(callee) and _is_user_function(callee):
        return for_tracing(callee)
    return callee


def _is_numeric_function(callee) -> bool:
    """Whether `callee` is NumPy's or the math module's: one that an either-value given it
    meets on each of its paths (runtime/tracing/tracer_eithers.py); not a random draw, which
    would draw twice, nor a builtin of Python's types (isinstance, max)."""
    module = getattr(callee, "__module__", None) or ""
    return module == "math" or module.split(".")[0] == "numpy" and "random" not in module


class FrozenRandomWarning(UserWarning):
    """NumPy drew random numbers while a function was traced: they are fixed in its graph.

    Examples:
        >>> import warnings
        >>> def noisy(x):
        ...     return x + np.random.rand(3)
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     _ = autotrace.function(noisy)(np.ones(3))
        >>> print(caught[0].message)   # doctest: +ELLIPSIS
        np.random.rand in noisy draws its numbers once, while it is traced: ...
    """


# The code that was warned about, once each (a function traced again is not warned again).
_WARNED_CODE: "weakref.WeakSet" = weakref.WeakSet()


def _warn_of_a_frozen_draw(method, frame) -> None:
    """Warn, once per function, that a NumPy random draw in converted code (which runs only
    while tracing) is made once and fixed in the graph, as tf.function's guide says of Python
    side effects; `frame` is the converted code's, which keeps the user's file and lines."""
    if method.__name__ in NOT_DRAWS or frame.f_code in _WARNED_CODE:
        return
    _WARNED_CODE.add(frame.f_code)
    drawn_by = (f"np.random.{method.__name__}"
                if getattr(np.random, method.__name__, None) == method
                else f"{type(method.__self__).__name__}.{method.__name__}")
    # In a derivative's generated code: the user's line it came from, and the user's function.
    generated = frame.f_code.co_filename
    place = user_place(generated, frame.f_lineno)
    filename, line, function_name = generated, frame.f_lineno, frame.f_code.co_name
    if place is not None:
        (filename, line), function_name = place, user_function_name(generated)
    warnings.warn_explicit(
        f"{drawn_by} in {function_name} draws its numbers once, while it is traced: "
        f"they are fixed in the traced graph, and every call gives the same ones; use "
        f"autotrace.random.Generator(seed) to draw new numbers on each call",
        FrozenRandomWarning, filename, line, module=frame.f_globals.get("__name__"))


def _converting_derivatives(caller):
    """`caller` (vjp_call and its kin: they derive a function held in a variable when they run,
    and call the derivative) calling that derivative converted as well."""
    @functools.wraps(caller)
    def call(*args, **kwargs):
        token = derivative_conversion.set(for_tracing)
        try:
            return caller(*args, **kwargs)
        finally:
            derivative_conversion.reset(token)
    return call


_CONVERTING_CALLERS = {caller: _converting_derivatives(caller) for caller in (
    vjp_call, jvp_call, vjp_call_tangent, vjp_call_transpose, vjp_start)}
HELPERS = {**STATEMENT_HELPERS, "converted": converted}
