"""Names surely bound to different objects, where transforms/analysis/aliases.py's model of
memory takes each for any of several.

The model joins paths name by name: after a loop that exchanges two buffers

    u, un = u0.copy(), np.zeros(n)
    for _ in range(steps):
        un[1:-1] = u[1:-1] + ...
        u, un = un, u

`u` may be either array, and so may `un`, and a write into one looks like a write into the
other. On each path, though, the two are never one array: on entry each holds its own, and the
swap exchanges them. So each environment also carries `apart`, the pairs of names that, on every
path reaching it, are bound to different objects although their memories may be one. A pair is
apart on a path where its names' memories are disjoint there, or where the path says so; where
paths meet, a pair stays apart only if it is apart on each. `a = b` gives `a` what `b` is apart
from, `a, b = b, a` exchanges theirs, and any other binding of a name forgets its pairs.

Apart says nothing about what the objects hold: a write into one name is free of another apart
from it only where the other's own memory is all that the write may change of it (aliases.py
`write`). A function with `global` or `nonlocal` anywhere, which may rebind names where the model
does not look, keeps no pairs.
"""
from __future__ import annotations

from typing import NamedTuple

import gast

from ..codegen.nodes import nodes_of


class Env(dict):
    """name -> {memory: the statement that bound the name to it}; `apart`: see the module
    docstring."""
    __slots__ = ("apart",)

    def __init__(self, *arguments, apart=frozenset()):
        super().__init__(*arguments)
        self.apart = apart


def apart_in(env, first: str, second: str) -> bool:
    """Whether `first` and `second` are surely bound to different objects in `env`: a pair it
    notes, or names whose memories are disjoint (not where one is not a name the model binds
    there: a global, or one bound where it does not look)."""
    if first == second or first not in env or second not in env:
        return False
    return frozenset((first, second)) in env.apart or not env[first].keys() & env[second].keys()


def copy_env(env):
    return None if env is None else Env({k: dict(v) for k, v in env.items()}, apart=env.apart)


def join_envs(*envs):
    """Where paths meet: each name may hold what it holds on any of them, and two names are
    apart where they are apart on each."""
    reached = [env for env in envs if env is not None]
    if not reached:
        return None
    joined = copy_env(reached[0])
    for env in reached[1:]:
        for identifier, memories in env.items():
            slot = joined.setdefault(identifier, {})
            for memory, bound in memories.items():
                slot.setdefault(memory, bound)
    if len(reached) > 1:
        joined.apart = frozenset(pair for pair in _overlapping(joined, reached)
                                 if all(apart_in(env, *pair) for env in reached))
    return joined


def env_names(env):
    """What a loop's reading compares from one run to the next: each name's memories, and the
    pairs apart."""
    return None if env is None else ({k: set(v) for k, v in env.items()}, env.apart)


def _overlapping(env, reached) -> set:
    """The pairs of names whose memories in `env` (the join of `reached`) are not disjoint,
    but for those surely not apart on each path: names that share a memory on a path are
    apart there only as a pair it notes. (A generated derivative binds hundreds of names to
    one memory on every path: their pairs are never listed.)"""
    first = reached[0]
    if all(path.keys() == first.keys() and all(path[name].keys() == memories.keys()
                                               for name, memories in first.items())
           for path in reached[1:]):  # (each path binds each name to the same memories)
        return {pair for pair in first.apart
                if all(name in first for name in pair)
                and set.intersection(*(set(first[name]) for name in pair))}
    by_memory = {}
    for identifier, memories in env.items():
        for memory in memories:
            by_memory.setdefault(memory, set()).add(identifier)
    pairs = set()
    for memory, names in by_memory.items():
        if len(names) < 2:
            continue
        holding_all = next((path for path in reached if all(
            memory in path.get(name, ()) for name in names)), None)
        if holding_all is not None:
            pairs.update(pair for pair in holding_all.apart if pair <= names)
        else:
            pairs.update(frozenset((first, second)) for first in names for second in names
                         if first < second)
    return pairs


class DistinctNames:
    """Mixed into aliases.Sharing: the pairs of names apart (see the module docstring)."""

    def keeps_pairs(self, function) -> bool:
        return not any(isinstance(n, (gast.Global, gast.Nonlocal)) for n in nodes_of(function))

    def forget_pairs(self, identifier: str) -> None:
        """`identifier` is bound to something new: what it was apart from no longer holds."""
        if self.env is not None and self.env.apart:
            self.env.apart = frozenset(pair for pair in self.env.apart if identifier not in pair)

    def same_objects(self, node) -> list:
        """[(a name `node` binds, the name whose object it binds it to, before it runs)] for
        `a = b` and `a, b = b, a` (names only), taken before the binding; each other name it
        binds, with None."""
        if not (isinstance(node, gast.Assign) and len(node.targets) == 1 and self.pairs_kept):
            return []
        target, value = node.targets[0], node.value
        if isinstance(target, gast.Name):
            return [(target.id, value.id if isinstance(value, gast.Name) else None)]
        if not (isinstance(target, (gast.Tuple, gast.List)) and isinstance(
                value, (gast.Tuple, gast.List)) and len(target.elts) == len(value.elts)):
            return []
        return [(element.id, item.id if isinstance(item, gast.Name) else None)
                for element, item in zip(target.elts, value.elts)
                if isinstance(element, gast.Name)]

    def pairs_before(self, bindings) -> set:
        """The pairs apart, before `bindings` (same_objects) run, of their sources and every
        name."""
        if not bindings or self.env is None:
            return set()
        sources = {source for _, source in bindings if source is not None}
        return {frozenset((source, other)) for source in sources for other in self.env
                if apart_in(self.env, source, other)}

    def note_pairs(self, bindings, before: set) -> None:
        """After `bindings` ran: each name bound to another's object is apart from what that
        one was apart from (a name bound with it, by what its own source was)."""
        if not bindings or self.env is None:
            return
        source_of = dict(bindings)
        noted = set(self.env.apart)
        for target, source in bindings:
            if source is None:
                continue
            for other in self.env:
                was = source_of.get(other, other) if other != target else None
                if was is not None and frozenset((source, was)) in before:
                    noted.add(frozenset((target, other)))
        self.env.apart = frozenset(noted)

    def written_apart(self, name, other, written) -> bool:
        """Whether a write through `name` into `written` changes `name`'s own memory only,
        and `other` is apart from `name`: it changes `other` only where `other` holds the
        array written (as a list's item, say), not where `other` is it or views it."""
        return (name is not None and self.env is not None and name in self.env
                and written <= set(self.env[name])
                and frozenset((name, other)) in self.env.apart)

    def unshared(self, name, other, memory, shared, written) -> bool:
        """Whether a write through `name` into `written`, which `other`'s `memory` shares
        (`shared`), surely leaves `other` as it was: the two are apart (written_apart), and
        what `other` shares with the write is its own memory, not something it holds."""
        return shared == {memory} and self.written_apart(name, other, written)


class HoldsNoArrays(NamedTuple):
    """The run-time check (transforms/front/inplace.py's refuse_holding) of `name`, apart
    from the name a write changes, whose memory the model takes to hold what is written (it
    may be a list holding the array): refused unless it is an array of numbers, a traced value
    or a number, which holds no other array."""
    name: str

