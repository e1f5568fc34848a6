"""A loop's `else:` clause written out as statements after the loop, which every mode follows.

Without a `break` of the loop, the else body runs whenever the loop ends, so it is simply the
statements after it:

    for v in x:                    for v in x:
        t = t + v * v                  t = t + v * v
    else:                          t = t * 2
        t = t * 2

With a `break`, a flag says whether the loop ended by one (the modes already follow `break`,
transforms/front/exits.py):

    for v in x:                    _broke1 = False
        if v > 2:                  for v in x:
            break                      if v > 2:
        t = t + v                          _broke1 = True
    else:                                  break
        t = -t                         t = t + v
                                   if not _broke1:
                                       t = -t
"""
from __future__ import annotations

import gast

from ..codegen.naming import Namer, names_in
from ..codegen.nodes import STATEMENT_BLOCKS, rewrite_statements
from ..codegen.templates import replace


def write_out_loop_else(function: gast.FunctionDef) -> None:
    """Rewrite each `for`/`while` with an `else:` in `function` (nested functions too) in
    place, innermost loops first."""
    namer = []  # (made for the first loop with an else clause: most functions have none)

    def written_out(statement):
        if not _has_else(statement):
            return None
        namer[:] = namer or [Namer(names_in(function))]
        return _written_out(statement, namer[0])
    rewrite_statements(function, written_out, innermost_first=True)


def _has_else(statement) -> bool:
    return isinstance(statement, (gast.For, gast.While)) and bool(statement.orelse)


def _written_out(loop, namer: Namer) -> list:
    orelse, loop.orelse = loop.orelse, []
    breaks = list(_own_breaks(loop.body))
    if not breaks:
        return [loop] + orelse
    flag = namer.temporary("broke")
    for block, index in reversed(breaks):
        (mark,) = replace("flag = True", flag=flag)
        block.insert(index, gast.copy_location(mark, block[index]))
    (start,) = replace("flag = False", flag=flag)
    (after,) = replace("if not flag:\n    body", flag=flag, body=orelse)
    return [gast.copy_location(start, loop), loop, gast.copy_location(after, orelse[0])]


def _own_breaks(block: list):
    """(block, index) of each `break` of the loop whose body is `block`: not those of loops
    nested in it (their else clauses are written out already), nor of functions defined in
    it."""
    for index, statement in enumerate(block):
        if isinstance(statement, gast.Break):
            yield block, index
        elif not isinstance(statement, (gast.For, gast.While, gast.FunctionDef,
                                        gast.AsyncFunctionDef, gast.ClassDef)):
            for field in STATEMENT_BLOCKS:
                inner = getattr(statement, field, None)
                if isinstance(inner, list):
                    yield from _own_breaks(inner)
            for handler in getattr(statement, "handlers", None) or ():
                yield from _own_breaks(handler.body)
