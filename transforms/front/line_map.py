"""Which line of the user's file each statement of generated code came from, so that an error
about an `if` or loop while tracing a derivative, or a warning about what a statement does then
(a NumPy random draw), names the user's line, not the generated one.

Reverse mode marks each if and loop it writes, in both sweeps, with the line of the statement
it came from (`mark`), and each other statement of the primal sweep (`mark_unmarked`; forward
mode each statement); loading the generated function reads the marks back against the printed
source (`user_lines`). A derivative of generated code (grad of grad) marks lines of that code,
which its own map translates on to the user's:

    derivative_record(ddf).lines == {18: ("model.py", 7), 22: ("model.py", 6), ...}
"""
from __future__ import annotations

import ast
import functools
import linecache
import re
import weakref

import gast

from ..derivative_record import derivative_record
from ...runtime.generated_source import register_site_finder
from ..reverse.sweep_parts import COMMENT

_USER_LINE = "autotrace_user_line"
_BLOCKS = ("body", "orelse", "finalbody")
# The comment reverse mode writes before the adjoint code of each statement (reverse.py).
_GRAD_OF_LINE = re.compile(r"\s*# Grad of line (\d+)\b")
# The file name of each derivative's printed source -> the derivative, while it lives.
_DERIVATIVES = weakref.WeakValueDictionary()


def remember(derivative) -> None:
    """Let `user_place` find the user's lines of `derivative`'s code, and the runtime too
    (the line an error raised when a traced graph runs names)."""
    filename = derivative.__code__.co_filename
    _DERIVATIVES[filename] = derivative
    register_site_finder(filename, functools.partial(user_place, filename))


def user_place(filename: str, line: int):
    """(file, line) of the user's code that line `line` of a derivative's printed source
    `filename` was made from: a marked statement (`user_lines`), or a line of an adjoint
    sweep, under its `# Grad of line N` comment. None where that is not known (code that is
    no derivative)."""
    record = derivative_record(_DERIVATIVES.get(filename))
    if record is None:
        return None
    marked = (record.lines or {}).get(line)
    if marked is not None:
        return marked
    primal = getattr(record.primal, "__func__", record.primal)
    code = getattr(primal, "__code__", None)
    if code is None:
        return None
    for number in range(line, 0, -1):
        found = _GRAD_OF_LINE.match(linecache.getline(filename, number))
        if found is not None:
            own = int(found.group(1))
            # of a derivative of a derivative: a line of that derivative, on to the user's
            return user_place(code.co_filename, own) or (code.co_filename, own)
    return None


def mark(statement, location, node):
    """`statement` (an if or loop made from `node`), marked with `node`'s line."""
    line = location.line_of(node)
    if line is not None:
        setattr(statement, _USER_LINE, line)
    return statement


def mark_unmarked(statements: list, location, node) -> list:
    """`statements` (made from the user's statement `node`), each not marked yet marked with
    `node`'s line: what runs there while tracing (a NumPy random draw's warning) names it."""
    for statement in statements:
        if not hasattr(statement, _USER_LINE):
            mark(statement, location, node)
    return statements


def user_function_name(filename: str) -> str | None:
    """The name of the user's function whose derivative's printed source is `filename` (on
    through a derivative of a derivative), or None where that is no derivative."""
    function = _DERIVATIVES.get(filename)
    if function is None:
        return None
    record = derivative_record(function)
    while record is not None and record.primal is not None and record.source is not None:
        function = record.primal  # the user's function the code derives
        record = derivative_record(function)
    return getattr(function, "__name__", "?")


def user_lines(definition: gast.FunctionDef, printed: ast.FunctionDef, filename: str,
               primal) -> dict:
    """The printed line of each marked statement of `definition` (printed, and read back by
    ast.parse as `printed`) -> (file, line) in the user's code. `filename` is the file the
    marks' lines are in; when that is generated code (`primal`'s), its own map carries them
    on. Empty when the printed statements do not line up with the tree's."""
    # read back with ast, not gast: only the kinds and lines of statements are compared, and
    # converting the whole tree to gast would cost more than the parse
    printed = _statements(printed.body)
    own = [s for s in _statements(definition.body) if not _is_comment(s)]
    if len(printed) != len(own):
        return {}
    generated = derivative_record(primal)
    outer = None if generated is None else generated.lines
    if outer is None and generated is not None and generated.source is not None:
        return {}  # code autotrace wrote whose lines map to no user's line (a printed trace)
    lines = {}
    for mine, statement in zip(own, printed):
        line = getattr(mine, _USER_LINE, None)
        if line is None or type(mine).__name__ != type(statement).__name__:
            continue
        # (a line of the primal's adjoint sweep is found under its `# Grad of line N`)
        place = (filename, line) if outer is None else \
            outer.get(line) or user_place(filename, line)
        if place is not None:
            lines[statement.lineno] = place
    return lines


def _statements(block: list) -> list:
    """The statements of `block` and of the blocks inside them, in the order they print."""
    out = []
    for statement in block:
        out.append(statement)
        for field in _BLOCKS:
            out += _statements(getattr(statement, field, None) or [])
        for handler in getattr(statement, "handlers", None) or []:
            out += _statements(handler.body)
    return out


def _is_comment(statement) -> bool:
    value = getattr(statement, "value", None)
    return (isinstance(statement, gast.Expr) and isinstance(value, gast.Call)
            and isinstance(value.func, gast.Name) and value.func.id == COMMENT)
