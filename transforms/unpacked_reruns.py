"""Calls run again by the derivative of a call with unpacked arguments, and the user's line a
call's derivative was made from.

The derivative of `f(*args)` (transforms/reverse/unpacked_calls.py) runs f again after the
call ran it, so f may not write into an object's state: on the path it takes, the run again
notes the write (runtime/derivatives/state_log.py `writes_refused`); on any path, the build
of f's derivative (or of a callee's, resolved when it runs) shows it.
"""
from __future__ import annotations

import inspect
import linecache
import os
import sys

from ..runtime.derivatives.objects import StateWriteError
from ..runtime.derivatives.state_log import running_again
from ..runtime.derivatives.state_writes import call_method, write_state
from .analysis.calls import describe
from .derivative_record import derivative_record
from .front.line_map import user_place

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


def calling_line() -> str:
    """The user's line whose derivative made the call being differentiated, as an error's
    last lines: the first frame of generated code, mapped to the line it was made from."""
    frame = sys._getframe(1)
    while frame is not None and not frame.f_code.co_filename.startswith("<autotrace "):
        frame = frame.f_back
    place = None if frame is None else user_place(frame.f_code.co_filename, frame.f_lineno)
    if place is None:
        return ""
    text = linecache.getline(*place).strip()
    return f'\n  File "{place[0]}", line {place[1]}' + (f"\n    {text}" if text else "")
