"""Fresh names that never clash with the names a function already uses."""
from __future__ import annotations

import gast


def names_in(tree) -> set:
    """Every identifier that appears in `tree` (names, arguments, function names)."""
    found = set()
    for node in gast.walk(tree):
        if isinstance(node, gast.Name):
            found.add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.ClassDef)):
            found.add(node.name)
    return found


class Namer:
    """Hands out names unused so far; gradient names follow the primal ones (`bx` for `x`)."""

    def __init__(self, taken=()):
        self.taken = set(taken)
        self.counters = {}

    def fresh(self, hint: str) -> str:
        """`hint` itself if free, else `hint_1`, `hint_2`, ..."""
        base = hint
        candidate = base
        index = 0
        while candidate in self.taken:
            index += 1
            candidate = f"{base}_{index}"
        self.taken.add(candidate)
        return candidate

    def temporary(self, hint: str = "t") -> str:
        """A name for a value the transform introduces: `_t1`, `_t2`, `_cond1`, ..."""
        base = "_" + hint.lstrip("_")
        index = self.counters.get(base, 0)
        while True:
            index += 1
            candidate = f"{base}{index}"
            if candidate not in self.taken:
                break
        self.counters[base] = index
        self.taken.add(candidate)
        return candidate

    def gradient(self, primal: str) -> str:
        """The gradient variable of `primal`: `bx` for `x`, `b_t1` for `_t1`."""
        return self.fresh("b" + primal)
