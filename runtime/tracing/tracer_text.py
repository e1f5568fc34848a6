"""A traced value as text: what the user's code may print while tracing, and what it may not
make into a string.

    print("Tracing with", x)          # while tracing: Tracer<f64[3]>, as tf.function's print
    label = f"total={x.sum():.2f}"    # refused: the string would hold a placeholder

A traced value stands for values known only when the graph runs, and a graph returns arrays,
not strings: a string made of one (`str(x)`, `repr(x)`, `"%s" % x`, an f-string, `format`)
would hold its placeholder on every call, so it is refused at the user's line with what to do
(autotrace.print prints the values on every call; or return the value and format it outside).
Python's `print` of it, a side effect while tracing as in tf.function (the guide's "Tracing
with ..." line), shows the placeholder, also in a string made in print's arguments
(`print(f"x = {x}")`) and in a message Python's logging formats; so does autotrace's and
NumPy's own code (messages).
"""
from __future__ import annotations

import linecache
import logging
import os
import sys
import tokenize

from ..primitives.registry import UntraceableError
from ..user_frames import library_frame

# Python's logging formats a record's message where it is emitted: a traced value logged while
# tracing (`logging.info("x is %s", x)`) is printed as by print
_LOGGING = os.path.dirname(logging.__file__) + os.sep


def tracer_text(tracer) -> str:
    """`repr(tracer)` (and `str`): its placeholder where printed or asked by autotrace or
    NumPy, else refused."""
    frame = sys._getframe(1)
    if _shown(frame):
        return f"Tracer<{tracer.graph_var.aval}>"
    raise _refusal("str(x), repr(x) or '%s' % x")


def tracer_format(tracer, spec: str) -> str:
    """`format(tracer, spec)` (f-strings, str.format): refused in the user's code."""
    frame = sys._getframe(1)
    if _shown(frame):
        return f"Tracer<{tracer.graph_var.aval}>"
    raise _refusal(f"f\"{{x:{spec}}}\" or format(x)" if spec else "f\"{x}\" or format(x)")


def _shown(frame) -> bool:
    """Whether the code running in `frame` shows the placeholder, printed or in a message."""
    return (library_frame(frame) or frame.f_code.co_filename.startswith(_LOGGING)
            or _printing(frame))


def _printing(frame) -> bool:
    """Whether `frame` is running the arguments of a call of Python's print (`print(x)`,
    `print(f"x = {x}")`): what it makes is printed while tracing, a side effect as Python's
    print of the value is."""
    try:
        line, _, column, _ = next(position for index, position in
                                  enumerate(frame.f_code.co_positions())
                                  if index == frame.f_lasti // 2)
    except (StopIteration, AttributeError):
        return False
    if line is None or column is None:
        return False
    filename, first = frame.f_code.co_filename, frame.f_code.co_firstlineno
    lines = [linecache.getline(filename, number) for number in range(min(first, line), line + 1)]
    # (converted code is compiled from the function's source dedented: its columns may be
    # short of the file's by up to the line's indentation)
    indentation = len(lines[-1]) - len(lines[-1].lstrip())
    return any(start <= (len(lines), column + shift) <= stop for start, stop in _print_calls(lines)
               for shift in range(indentation + 1))


def _print_calls(lines: list) -> list:
    """[(start, stop)]: the (row, column) from 1 of each `print(...)` call in `lines`, from its
    name to its closing parenthesis (the text's end where it is not closed in it)."""
    calls, opened, depth, previous = [], [], 0, None
    try:
        for token in tokenize.generate_tokens(iter(lines).__next__):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
                if token.string == "(" and previous is not None and \
                        previous.type == tokenize.NAME and previous.string == "print":
                    opened.append((previous.start, depth))
            elif token.type == tokenize.OP and token.string in ")]}":
                if opened and opened[-1][1] == depth:
                    calls.append((opened.pop()[0], token.end))
                depth -= 1
            previous = token
    except (tokenize.TokenError, SyntaxError, StopIteration):
        pass
    return calls + [(start, (len(lines) + 1, 0)) for start, _ in opened]


def _refusal(how: str) -> UntraceableError:
    return UntraceableError(
        f"a traced value is made into a string here ({how}): while tracing it stands for "
        "values known only when the graph runs, and the string would hold a placeholder on "
        "every call (a traced graph returns arrays, not strings). To print the values on "
        "every call, use autotrace.print(\"total\", x); to format them, return the value "
        "and format it outside the traced function")
