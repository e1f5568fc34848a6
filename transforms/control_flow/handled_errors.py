"""What handles errors in converted code, kept from handling what tracing raises: a `try`
statement with handlers is checked before it runs, its handlers re-raise tracing's errors, and
the context managers of a `with` statement do not suppress them.

    try:                                    _autotrace_refuse_traced_try('f.py:2: try:', ('x',),
        y = float(x[0])                         locals(), lambda: (TypeError,))
    except TypeError:                       try:
        y = 0.0                                 y = float(x[0])
                                            except TypeError:
                                                if _autotrace_tracing_error_caught():
                                                    raise
                                                y = 0.0
    with suppress(TypeError):               with _autotrace_unsuppressing(suppress(TypeError)):
        y = float(x[0])                         y = float(x[0])

`refuse_traced_try` refuses the statement where its body computes with traced values and a
handler catches what the graph may raise when it runs (runtime/tracing/control_statements.py).
A handler that is kept re-raises tracing's own errors first (runtime/errors.py TracingError: a
traced value asked for a Python value, an ndarray attribute a traced value lacks, any refusal):
NumPy would not raise them, so the user's handler would run where NumPy's does not.
"""
from __future__ import annotations

import copy

import gast

from ..codegen.nodes import walk
from ..codegen.templates import name, replace, replace_expression
from .control_flow_calls import helper


def try_check(node: gast.Try, where: str) -> gast.Expr:
    """`refuse_traced_try(where, names, locals(), lambda: caught)` before the try statement
    `node` (which has handlers): the names its body reads and what its handlers catch (None
    for all), refused when it runs where one is traced and a handler catches what a graph
    raises."""
    read = sorted({item.id for statement in node.body for item in walk(statement)
                   if isinstance(item, gast.Name) and isinstance(item.ctx, gast.Load)})
    caught = [copy.deepcopy(handler.type) for handler in node.handlers]
    call = replace_expression(
        f"{helper('refuse_traced_try')}(where, names, locals(), lambda: caught)",
        where=gast.Constant(value=where, kind=None),
        names=gast.Tuple(elts=[gast.Constant(value=each, kind=None) for each in read],
                         ctx=gast.Load()),
        caught=gast.Constant(value=None, kind=None) if None in caught
        else gast.Tuple(elts=caught, ctx=gast.Load()))
    return gast.Expr(value=call)


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
