"""The mark of an error that autotrace raises where NumPy would not.

Tracing refuses what it cannot do right: a traced value asked for its Python value, control
flow on one, an attribute of an ndarray that a traced value lacks, a NumPy function with no op.
Each of those errors keeps the base a user would expect (TracerConversionError is a TypeError,
a missing layout attribute an AttributeError), and derives from `TracingError` too. Converted
code re-raises such an error at the start of each handler of a `try` statement, and a `with`
statement's context manager does not suppress it (transforms/control_flow/handled_errors.py),
where the user's handler would otherwise run where NumPy's would not, and give another value:

    try:
        y = float(x[0])          # NumPy: a float; tracing: TracerConversionError
    except TypeError:
        y = 0.0                  # not run on a traced x: the refusal propagates
"""
from __future__ import annotations


class TracingError(Exception):
    """An error raised by tracing where NumPy would not (a refusal): a handler in the traced
    function does not catch it."""


class TracerConversionError(TypeError, TracingError):
    """A traced value was asked for a Python value (bool, float, int, index, NumPy array)."""


def raised_by_tracing(error: BaseException | None) -> bool:
    """Whether `error`, or an error it was raised from (its `__cause__`, and that one's), is
    tracing's: NumPy raises errors of its own from ours (`h[i] = t`, with h a NumPy array,
    raises ValueError from the conversion of t)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, TracingError):
            return True
        seen.add(id(error))
        error = error.__cause__
    return False
