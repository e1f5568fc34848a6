"""Errors that name the user's file and line."""
from __future__ import annotations


class TransformError(Exception):
    """Raised when a function cannot be transformed: names the file, line and construct.

    Examples:
        >>> def f(x):
        ...     try:
        ...         return x * x
        ...     except ValueError:
        ...         return x
        >>> try:
        ...     grad(f)
        ... except TransformError as error:
        ...     print(error)   # doctest: +ELLIPSIS
        File "...", line 2: autotrace cannot differentiate a try statement; move the error
        handling outside the differentiated function
    """

    def __init__(self, message: str, filename: str | None = None, lineno: int | None = None,
                 construct: str | None = None):
        self.filename = filename
        self.lineno = lineno
        self.construct = construct
        self.message = message
        where = f'File "{filename}", line {lineno}: ' if filename and lineno else ""
        super().__init__(where + message)


class SourceUnavailableError(TransformError):
    """The source of a function to differentiate cannot be read (it was defined in an
    interactive session or with exec, or is not Python). autotrace.grad and the other operators
    then differentiate a trace of it, where it can be traced (autotrace/from_trace.py)."""


class Location:
    """Where a parsed function came from: maps its tree's line numbers to the user's file."""

    def __init__(self, filename: str, first_line: int, name: str):
        self.filename = filename
        self.first_line = first_line
        self.name = name

    def line_of(self, node) -> int | None:
        lineno = getattr(node, "lineno", None)
        return None if lineno is None else lineno + self.first_line - 1

    def error(self, node, message: str, construct: str | None = None,
              kind: type = TransformError) -> TransformError:
        """A TransformError (or one of its `kind`) pointing at `node` in the user's source."""
        return kind(message, self.filename, self.line_of(node), construct)
