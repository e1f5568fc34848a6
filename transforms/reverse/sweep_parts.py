"""What a piece of generated reverse-mode code is made of: its primal statements, a function
making its adjoint statements, and the markers the cleanup passes read."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import gast

from ..codegen.templates import name

SAVE = "_autotrace_save"  # attribute on generated save/restore statements: the saved name
COMMENT = "__autotrace_comment__"
PAIR = "_autotrace_pair"  # on a push and the pop restoring its value: one Shared on both
UNDOES = "_autotrace_undoes"  # on an adjoint sweep's if: a Shared of the primal if it undoes


class Shared:
    """A mark that generated statements carry (PAIR, UNDOES) and that copies of them keep as
    it is: a loop's adjoint body is a copy of the statements made for it (templates.replace),
    and a push inside the loop must still find its pop there."""

    __slots__ = ("value",)

    def __init__(self, value=None):
        self.value = value

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def comment(text: str) -> gast.stmt:
    """A statement that prints as `# text`."""
    return gast.Expr(value=gast.Call(func=name(COMMENT),
                                     args=[gast.Constant(value=text, kind=None)], keywords=[]))


def marked(statements: list, saved: str, kind: str, undefined: bool = False) -> list:
    """`statements` tagged as the save (kind "push") or restore ("pop", "restore") of `saved`;
    `undefined` says the name may not exist yet when the push runs."""
    for statement in statements:
        setattr(statement, SAVE, (saved, kind, undefined))
    return statements


@dataclass
class Sweep:
    """The primal statements of a piece of code, and how to make its adjoint."""

    primal: list
    adjoint: Callable[[set], list] = field(default=lambda state: [])
