"""What handles errors in converted code, kept from handling what tracing raises: a `try`
statement's handlers re-raise tracing's errors, and the context managers of a `with` statement
do not suppress them.

    try:                                    try:
        y = float(x[0])                         y = float(x[0])
    except TypeError:                       except TypeError:
        y = 0.0                                 if _autotrace_tracing_error_caught():
                                                    raise
                                                y = 0.0
    with suppress(TypeError):               with _autotrace_unsuppressing(suppress(TypeError)):
        y = float(x[0])                         y = float(x[0])

A handler re-raises tracing's own errors first (runtime/errors.py TracingError: a
traced value asked for a Python value, an ndarray attribute a traced value lacks, any refusal):
NumPy would not raise them, so the user's handler would run where NumPy's does not.
"""
from __future__ import annotations

import gast

from ..codegen.nodes import walk
from ..codegen.templates import name, replace
from .control_flow_calls import helper


def reraise_tracing_errors(node: gast.Try) -> None:
    """Start each handler of `node` with `if tracing_error_caught(): raise`, at the handler's
    line: the error it caught propagates where tracing raised it, not NumPy."""
    for handler in node.handlers:
        check = replace("if caught():\n    raise", caught=helper("tracing_error_caught"))
        for child in walk(check[0]):
            if "lineno" in getattr(child, "_attributes", ()):
                gast.copy_location(child, handler)
        handler.body = check + handler.body


def unsuppressing_items(node: gast.With) -> None:
    """`with unsuppressing(manager):` for each context manager of the with statement `node`:
    its `__exit__` does not suppress tracing's errors (contextlib.suppress(TypeError) of a
    conversion)."""
    for item in node.items:
        item.context_expr = gast.copy_location(gast.Call(
            func=name(helper("unsuppressing")), args=[item.context_expr], keywords=[]), item.context_expr)
