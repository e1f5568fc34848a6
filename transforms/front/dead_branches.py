"""Refusals inside a branch of an `if`, raised when the branch runs.

Library code holds branches that a call may never take: lazy initialisation under
`if not self.is_initialized:`, a cache filled under `if retain_derived:`, a fallback for a
case the arguments never reach. Where autotrace cannot transform a statement in such a branch,
refusing the whole function would refuse code that runs fine, so the branch becomes

    if not self.is_initialized:
        raise_refusal('autotrace cannot ...', 'layers.py', 41)

and the derivative is made again: the refusal is raised, naming the user's line, if and when
the branch runs. A refusal outside any branch is raised at once, as before.

`deferring_refusals` wraps a function that builds a derivative; `raise_when_run` is what the
front end calls on each parsed function to replace the branches refused so far.
"""
from __future__ import annotations

import functools

import gast

from ..errors import SourceUnavailableError, TransformError
from ..rules.core import constant
from ..analysis.given_state_writes import bind_global

def deferring_refusals(build):
    """`build(func, wrt, *, session, ...)`, made again with the branch replaced whenever it
    refuses a statement inside a branch of an `if` of `func` (or of a function it calls that
    is built in the same session)."""

    @functools.wraps(build)
    def build_deferring(func, wrt, *, session, **options):
        while True:
            saved = session.snapshot()
            try:
                return build(func, wrt, session=session, **options)
            except TransformError as error:
                if not _deferrable(error, session.refused_when_run):
                    raise
                session.restore(saved)
                session.refused_when_run.append(error)

    return build_deferring


def _deferrable(error: TransformError, refused: list) -> bool:
    """Whether making the derivative again may raise `error` only when it runs: it names a
    line of a file, and has not been met before (a second time, the line was not in a
    branch of the function that failed)."""
    if isinstance(error, SourceUnavailableError) or not error.filename or not error.lineno:
        return False
    return not any(_same(error, other) for other in refused)


def _same(a: TransformError, b: TransformError) -> bool:
    return (a.filename, a.lineno, a.message) == (b.filename, b.lineno, b.message)


def raise_when_run(function: gast.FunctionDef, location, namespace: dict, refused: list) -> None:
    """Replace each branch of an `if` in `function` that holds the line of a refusal in
    `refused` by a statement raising that refusal (the innermost branch holding it)."""
    for error in refused:
        if error.filename != location.filename:
            continue
        branch = _innermost_branch(function, location, error.lineno)
        if branch is None:
            continue
        owner, field = branch
        statement = _raising(error, owner, namespace)
        setattr(owner, field, [statement])


def _innermost_branch(function, location, line: int):
    """(the If node, 'body' or 'orelse') of the innermost branch with a statement spanning
    the user's `line`, or None."""
    found, depth_found = None, -1
    for node, depth in _ifs(function.body, 0):
        for field in ("body", "orelse"):
            if any(_spans(statement, location, line) for statement in getattr(node, field)):
                if depth > depth_found:
                    found, depth_found = (node, field), depth
    return found


def _ifs(statements: list, depth: int):
    """Every If among `statements` and the statements they hold (not inside nested functions
    or classes, whose lines are theirs), with how deeply it is nested."""
    for statement in statements:
        if isinstance(statement, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        if isinstance(statement, gast.If):
            yield statement, depth
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(statement, field, None) or []
            for item in inner:
                if isinstance(item, gast.ExceptHandler):
                    yield from _ifs(item.body, depth + 1)
            yield from _ifs([s for s in inner if isinstance(s, gast.stmt)], depth + 1)


def _spans(statement, location, line: int) -> bool:
    first = location.line_of(statement)
    end = getattr(statement, "end_lineno", None)
    last = first if end is None else end + location.first_line - 1
    return first is not None and first <= line <= last


def raise_refusal(message: str, filename: str, line: int) -> None:
    """Raise the refusal of a branch that runs (a call, not a `raise` statement: to the
    passes that follow, and to the conversion of control flow for tracing, the branch is one
    that goes on, and no exit from the function)."""
    raise TransformError(message, filename, line)


constant(raise_refusal)


def _raising(error: TransformError, at, namespace: dict) -> gast.Expr:
    """`raise_refusal(message, filename, line)`, placed at `at`'s line."""
    name = bind_global(namespace, "raise_refusal", raise_refusal)
    arguments = [gast.Constant(value=value, kind=None)
                 for value in (error.message, error.filename, error.lineno)]
    call = gast.Call(func=gast.Name(id=name, ctx=gast.Load(), annotation=None,
                                    type_comment=None),
                     args=arguments, keywords=[])
    statement = gast.Expr(value=call)
    for node in (statement, call, *arguments, call.func):
        gast.copy_location(node, at.body[0] if at.body else at)
    return statement
