"""Fresh names that never clash with the names a function already uses."""
from __future__ import annotations

import collections

import gast

from .nodes import walk


def names_in(tree) -> set:
    """Every identifier that appears in `tree` (names, arguments, function names)."""
    found = set()
    for node in walk(tree):
        if isinstance(node, gast.Name):
            found.add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.ClassDef)):
            found.add(node.name)
    return found


# Nodes whose names are their own: a walk of one scope does not enter them.
SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef,
          gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def walk_scope(node):
    """`node` and what it contains, depth first, in source order, not descending into nested
    scopes (functions, lambdas, classes, comprehensions), whose names are their own."""
    # A stack, not recursion: a recursive generator passes every node up through each level
    # above it, and generated bodies nest deep.
    todo = [node]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, SCOPES):
            continue  # its name (a def) belongs here; its body does not
        children = []
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, gast.AST):
                children.append(value)
            elif isinstance(value, list):
                children.extend(item for item in value if isinstance(item, gast.AST))
        todo.extend(reversed(children))


def name_counts(nodes, context=gast.Load) -> collections.Counter:
    """How often each name is used in `context` (gast.Load or gast.Store) within `nodes`,
    nested scopes included."""
    return collections.Counter(node.id for root in nodes for node in walk(root)
                               if isinstance(node, gast.Name) and isinstance(node.ctx, context))


class Namer:
    """Hands out names unused so far; gradient names follow the primal ones (`bx` for `x`)."""

    def __init__(self, taken=()):
        self.taken = set(taken)
        self.counters = {}
        self.handed_out = set()  # the names fresh() and temporary() gave: generated locals

    def fresh(self, hint: str) -> str:
        """`hint` itself if free, else `hint_1`, `hint_2`, ..."""
        base = hint
        candidate = base
        index = 0
        while candidate in self.taken:
            index += 1
            candidate = f"{base}_{index}"
        self.taken.add(candidate)
        self.handed_out.add(candidate)
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
        self.handed_out.add(candidate)
        return candidate

    def gradient(self, primal: str) -> str:
        """The gradient variable of `primal`: `bx` for `x`, `b_t1` for `_t1`."""
        return self.fresh("b" + primal)


def seed_keyword(func, keyword: str = "dy") -> str:
    """The keyword a derivative of `func` takes its seed by: `dy` (or `tangent`), unless func
    already uses that name (a derivative of a derivative takes `dy_`)."""
    code = getattr(func, "__func__", func).__code__
    taken = set(code.co_varnames) | set(code.co_freevars) | set(code.co_names)
    while keyword in taken:
        keyword += "_"
    return keyword
