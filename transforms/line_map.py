"""Which line of the user's file each statement of generated code came from, so that an error
about an `if` or loop while tracing a derivative, or a warning about what a statement does then
(a NumPy random draw), names the user's line, not the generated one.

Reverse mode marks each if and loop it writes, in both sweeps, with the line of the statement
it came from (`mark`), and each other statement of the primal sweep (`mark_unmarked`; forward
mode each statement); loading the generated function reads the marks back against the printed
source (`user_lines`). A derivative of generated code (grad of grad) marks lines of that code,
which its own map translates on to the user's:

    ddf.__autotrace_lines__ = {18: ("model.py", 7), 22: ("model.py", 6), ...}
"""
from __future__ import annotations

import weakref

import gast

from autotrace.transforms.sweeps import COMMENT

_USER_LINE = "autotrace_user_line"
_BLOCKS = ("body", "orelse", "finalbody")


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


# The generated functions by the file name their code has (`<autotrace df #0>`), as long as
# they live: what runs in their code names the user's line through their map.
_GENERATED: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()


def note_generated(function) -> None:
    """Remember `function`, generated code with a map `__autotrace_lines__`, by its file name."""
    _GENERATED[function.__code__.co_filename] = function


def user_place(filename: str, line: int) -> tuple | None:
    """(file, line, function name) in the user's code for `line` of the generated code in
    `filename`, or None where that is no generated code or the line is not known."""
    function = _GENERATED.get(filename)
    place = None if function is None else function.__autotrace_lines__.get(line)
    if place is None:
        return None
    while getattr(function, "__autotrace_primal__", None) is not None and hasattr(
            function, "__autotrace_source__"):
        function = function.__autotrace_primal__  # the user's function the code derives
    return place + (getattr(function, "__name__", "?"),)


def user_lines(definition: gast.FunctionDef, source: str, filename: str, primal) -> dict:
    """The printed line of each marked statement of `definition` (printed as `source`) ->
    (file, line) in the user's code. `filename` is the file the marks' lines are in; when that
    is generated code (`primal`'s), its own map carries them on. Empty when the printed
    statements do not line up with the tree's."""
    printed = _statements(gast.parse(source).body[0].body)
    own = [s for s in _statements(definition.body) if not _is_comment(s)]
    if len(printed) != len(own):
        return {}
    outer = getattr(primal, "__autotrace_lines__", None)
    if outer is None and hasattr(primal, "__autotrace_source__"):
        return {}
    lines = {}
    for mine, statement in zip(own, printed):
        line = getattr(mine, _USER_LINE, None)
        if line is None or type(mine) is not type(statement):
            continue
        place = (filename, line) if outer is None else outer.get(line)
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
