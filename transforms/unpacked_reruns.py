"""Calls run again by the derivative of a call with unpacked arguments, and the user's line a
call's derivative was made from.

The derivative of `f(*args)` (transforms/reverse/unpacked_calls.py) runs f again after the
call ran it, so f may not write into an object's state: on the path it takes, the run again
notes the write (runtime/derivatives/state_log.py `writes_refused`); on any path, the build
of f's derivative (or of a callee's, resolved when it runs) shows it. A draw in f draws the
numbers it drew: the run again sets the random states it can draw from back to those before
the call (runtime/derivatives/random_states.py); where those may not be all, the run again is
checked, its value against the call's (`refuse_other_draws`).
"""
from __future__ import annotations

import inspect
import linecache
import os
import sys

import numpy as np

from ..runtime.derivatives.objects import StateWriteError
from ..runtime.derivatives.random_states import (draws_alike, same_draws, same_value,
                                                 traced_in)
from ..runtime.derivatives.state_log import running_again
from ..runtime.derivatives.state_writes import call_method, write_state
from .analysis.calls import describe
from .derivative_record import derivative_record
from .errors import TransformError
from .front.line_map import user_place

# Where autotrace's own sources are: a line there is no user's (calling_line).
_TRANSFORMS = os.path.dirname(os.path.abspath(__file__)) + os.sep

# Why a call with unpacked arguments may not write into an object's state (unpacked_calls.py).
RUNS_AGAIN_UNPACKED = (
    "the derivative of a call with unpacked arguments (f(*args) or f(**kwargs)) runs the "
    "function again after the call ran it, so the write would be made twice and the derivative "
    "taken from the state the first run left; write the arguments out in the call (f(a, b)), "
    "or keep this state out of the differentiated call")


def refuse_writer_run_again(derivative, func):
    """`derivative`, but where a call is run again (state_log `writes_refused`) and `func`, or
    a function its derivative's build transformed, writes into an object's state on some
    path: StateWriteError, for the first run may have written what this one reads."""
    record = derivative_record(derivative)
    if not running_again() or record is None or not any(
            value is write_state or value is call_method
            for namespace in record.namespaces for value in namespace.values()):
        return derivative
    code = getattr(inspect.unwrap(func), "__code__", None)
    place = "" if code is None else f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}: "
    raise StateWriteError(
        f"{place}autotrace cannot differentiate {describe(func)}, which writes into an "
        f"object's state, here: {RUNS_AGAIN_UNPACKED}{calling_line()}")


def refuse_other_draws(function, arguments, keywords, states, value, again=None) -> None:
    """Where the random states noted before a call of `function` may not be all it draws from
    (`states.sure`), the call is run again from them (or `again` is the value a derivative's
    run again gave): a value other than the call's, `value`, is refused, for the derivative
    would belong to other random numbers than the value. A traced value cannot be compared:
    the call is run twice from the states on concrete arrays (random_states.py
    `draws_alike`)."""
    if states is None or states.sure or value is None:
        return
    concrete = (np.ndarray, np.generic, int, float, complex, tuple, list, dict)
    if traced_in(value):  # (traced: two runs on arrays of its own tell the draws apart)
        alike = draws_alike(states, (function, arguments, keywords))
    else:
        if isinstance(value, concrete) and again is None:
            with same_draws(states):
                again = function(*arguments, **keywords)
        alike = None if not isinstance(value, concrete) or not isinstance(again, concrete) \
            else same_value(value, again)
    if alike:
        return
    if alike is None:
        reason = ("autotrace cannot tell whether it draws the same random numbers there: it "
                  "may draw from a source autotrace cannot set back (a generator made in the "
                  "call, or held where autotrace cannot see it), and the values are traced")
    else:
        reason = ("it gave another value there: it draws random numbers from a source "
                  "autotrace cannot set back (a generator made in the call, or held where "
                  "autotrace cannot see it), and the gradient would belong to other numbers "
                  "than the value")
    raise TransformError(
        f"autotrace cannot differentiate this call of {describe(function)} with unpacked "
        "arguments (f(*args) or f(**kwargs)): its derivative runs the function again after the "
        f"call ran it, and {reason}; draw the numbers outside the call and pass them in, or "
        f"write the arguments out in the call (f(a, b)){calling_line()}")


def calling_line() -> str:
    """The user's line whose derivative made the call being differentiated, as an error's
    last lines: the first frame of generated code, mapped to the line it was made from."""
    frame, place = sys._getframe(1), None
    while frame is not None and place is None:
        if frame.f_code.co_filename.startswith("<autotrace "):
            place = user_place(frame.f_code.co_filename, frame.f_lineno)
            if place is not None and place[0].startswith(_TRANSFORMS):
                place = None  # a Python version's (functools.reduce's): its caller's line
        frame = frame.f_back
    if place is None:
        return ""
    text = linecache.getline(*place).strip()
    return f'\n  File "{place[0]}", line {place[1]}' + (f"\n    {text}" if text else "")
