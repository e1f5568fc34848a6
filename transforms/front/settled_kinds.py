"""The kinds of a function's names, found as a fixed point: each name's kind from the values
bound to it, which may read other names' kinds (and, in a loop, its own).

ReceiverKinds (method_receivers.py) and ObjectClasses (object_operators.py) find their kinds
so, round after round until none changes; `settle` finds again only the kinds that may have
changed, which gives the same kinds for less.
"""
from __future__ import annotations

import gast

from ..codegen.nodes import nodes_of


def settle(kinds: dict, targets, reads: dict, kind_of) -> None:
    """Find the kind of each of `targets` (`kind_of(target)`) into `kinds`, round after round
    in the order of `targets`, until a round changes none: from "no assignment seen" (None)
    up, as loops read their own results. kind_of reads the kinds of the names `reads[target]`
    alone, so a kind is found again only where one of those changed since it was last found:
    the kinds are those of finding each again every round."""
    found_at, changed_at, step, changed = {}, {}, 0, True
    while changed:
        changed = False
        for target in targets:
            last = found_at.get(target)
            if last is not None and all(changed_at.get(read, 0) < last
                                        for read in reads[target]):
                continue
            found_at[target] = step = step + 1
            kind = kind_of(target)
            if kind != kinds.get(target):
                kinds[target] = kind
                changed = True
                changed_at[target] = step = step + 1


def names_in(values) -> set:
    """The names read or bound in the expressions among `values`."""
    return {node.id for value in values if isinstance(value, gast.AST)
            for node in nodes_of(value) if isinstance(node, gast.Name)}
