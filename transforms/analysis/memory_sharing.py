"""The model of transforms/analysis/aliases.py run over generated code: which names may share
memory with an array written item by item (reverse mode's primal sweep, for the item saves
of transforms/codegen/cleanup.py)."""
from __future__ import annotations

import collections

import gast

from .alias_messages import place_of
from .aliases import Sharing
from ..errors import Location


def memory_sharing(statements, parameters, namespace, skipped) -> "MemorySharing":
    """The model above run over generated code (reverse mode's primal sweep), refusing
    nothing: which names may share memory with which, anywhere in `statements`.

    parameters: the names bound on entry (each its own memory). skipped(statement): whether to
    leave a statement out (the sweeps' own saves, which put values on a stack, not in the
    program's memory)."""
    function = gast.FunctionDef(
        name="<generated>", args=gast.arguments(
            args=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None)
                  for p in parameters], posonlyargs=[], vararg=None, kwonlyargs=[],
            kw_defaults=[], kwarg=None, defaults=[]),
        body=statements, decorator_list=[], returns=None, type_comment=None, type_params=[])
    sharing = MemorySharing(function, Location("<autotrace generated>", 1, "<generated>"),
                            namespace)
    sharing.skipped = skipped
    sharing.block(statements)
    return sharing


class MemorySharing(Sharing):
    """The model of Sharing, each name's memories gathered over every place that binds it
    (so on some path: more than on each path, which is the safe side for its callers)."""

    def __init__(self, *arguments):
        super().__init__(*arguments)
        self.ever = collections.defaultdict(set)  # name -> every memory it was bound to
        for identifier, memories in self.env.items():
            self.ever[identifier] |= set(memories)
        self.skipped = lambda statement: False
        self.found = {}

    def run(self, node) -> None:
        if not self.skipped(node):
            super().run(node)

    def bind(self, target, memories, statement) -> None:
        if isinstance(target, gast.Name):
            self.ever[target.id] |= set(memories)
        super().bind(target, memories, statement)

    def write(self, target, written, node, what, in_place: bool, item=False) -> None:
        """Generated code's writes are followed by its sweeps, not refused."""

    def refuse_call_writing(self, node, written, given, change, callee, surely=True,
                            argument=None, items=0) -> None:
        """As write."""

    def refuse_stale_items(self, statement, target, stale) -> None:
        """As write."""

    def names_sharing(self, identifier) -> set:
        """The names that may share memory with `identifier` (itself included): bound to a
        memory that is, views, holds or is held by one of its own."""
        if identifier not in self.found:
            # A memory made in a loop ages ("new" -> "old") when the loop makes the next: both
            # are one place of the code here, every run of it.
            edges = collections.defaultdict(set)
            for memory, held in self.holds.items():
                edges[place_of(memory)] |= {place_of(m) for m in held}

            def reach(memories) -> set:
                found, todo = {place_of(m) for m in memories}, [place_of(m) for m in memories]
                while todo:
                    for held in edges.get(todo.pop(), ()):
                        if held not in found:
                            found.add(held)
                            todo.append(held)
                return found
            own = reach(self.ever.get(identifier, ()))
            self.found[identifier] = {identifier} | {
                other for other, memories in self.ever.items() if reach(memories) & own}
        return self.found[identifier]
