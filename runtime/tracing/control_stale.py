"""Reads inside a traced branch or loop of memory the subgraph changed under another name.

A branch or loop body takes the arrays it assigns as operands (its own inputs) and reads every
other array of the enclosing trace as it was before the op (a captured value). In NumPy a write
through an operand reaches every array sharing its memory: after `v = u.T`, `if c: v[0] = 1.0;
w = u * 2.0` reads the new `u`. Inside the subgraph the captured `u` is the old value; the
write reaches it only after the op (control_writes.write_back).

So a branch takes the arrays its operands view as operands too (`bases_inside`): the names
for them read the branch's inputs, the operands are views of those, and what the branch writes
is written back into them after it. An array of the enclosing trace that views an operand (or
one of those) is read in the branch as that view of the operand's input (`view_of_operand`).
What is still read stale (an array of a trace further out), and in a loop any array sharing
memory with a loop value the body writes (its condition or body runs again after the write),
is refused where it is read.
"""
from __future__ import annotations

from contextlib import contextmanager

from .control_scope import ControlFlowError
from .views import take_view


class StaleReadError(ControlFlowError):
    """An array read in a traced branch or loop after a write there into memory it shares,
    which the graph would read as it was before."""


STALE_READ_MESSAGE = (
    "this array is read inside a traced branch or loop after the branch or loop wrote into "
    "another array that shares its memory (a view of it, or the array it views), which "
    "autotrace does not follow there. Write and read through one name inside the branch or "
    "loop (`u[0] = ...` rather than `v = u.T` then `v[0] = ...`), or give the view an array "
    "of its own (`v = u.T.copy()`)")


def chain_of(tracer) -> frozenset:
    """The ids of `tracer` and of every array it views, through its view links."""
    found, current = set(), tracer
    while current is not None:
        found.add(id(current))
        link = getattr(current, "_link", None)
        current = link.base if link is not None else None
    return frozenset(found)


class StaleReads:
    """Kept by a subgraph's builder: its operands, and what it captured that shares memory
    with one of them."""

    def __init__(self, in_loop: bool):
        self.in_loop = in_loop
        self.operands = []  # (chain of the outer operand, inner leaf, its Var on entry)
        self.captured = []  # in a loop: (the chain of a captured array, that array)

    def enter(self, outer_leaves: list, inner_leaves: list) -> None:
        """The subgraph's operands, outside and inside, before it runs."""
        self.operands = [(chain_of(outer), inner, inner.graph_var)
                         for outer, inner in zip(outer_leaves, inner_leaves)
                         if getattr(outer, "_builder", None) is not None
                         and getattr(inner, "_builder", None) is not None]

    def read(self, tracer) -> None:
        """`tracer`, an array of an enclosing trace, is read in the subgraph: in a branch,
        refuse it where an operand sharing its memory was written already; in a loop, note it
        (check_loop refuses it once the body is traced)."""
        chain = chain_of(tracer)
        if self.in_loop:
            self.captured.append((chain, tracer))
            return
        if any(outer_chain & chain and inner is not tracer and inner.graph_var is not entry
               for outer_chain, inner, entry in self.operands):
            raise StaleReadError(STALE_READ_MESSAGE)


def check_loop(condition: StaleReads, body: StaleReads) -> None:
    """Refuse a loop whose condition or body read an array of the enclosing trace that shares
    memory with a loop value the body writes into: the next iteration reads the old one."""
    for chain, tracer in condition.captured + body.captured:
        if any(outer_chain & chain and inner is not tracer and inner.graph_var is not entry
               for outer_chain, inner, entry in body.operands):
            raise StaleReadError(STALE_READ_MESSAGE)


def outside_bases(parent, leaves: list) -> list:
    """The arrays of `parent`'s trace that the operand `leaves` view (through their view
    links) and that are no operand themselves, in order."""
    seen, found = {id(leaf) for leaf in leaves}, []
    for leaf in leaves:
        link = getattr(leaf, "_link", None)
        while link is not None:
            base = link.base
            if id(base) not in seen and base._builder is parent:
                seen.add(id(base))
                found.append(base)
            link = base._link
    return found


_STATE = ("_builder", "_var", "_link", "_memory", "_seen")


@contextmanager
def bases_inside(builder, bases: list, inputs: list):
    """While a branch is traced by `builder`, each array of `bases` (the Tracer objects its
    code reads by name) stands for the branch input in `inputs` (new Tracers of `builder`):
    reads and writes through it are the branch's. Each gets its own state back after."""
    saved = [tuple(getattr(base, name) for name in _STATE) for base in bases]
    for base, inner in zip(bases, inputs):
        for name in _STATE:
            setattr(base, name, getattr(inner, name))
    try:
        yield
    finally:
        for base, state in zip(bases, saved):
            for name, value in zip(_STATE, state):
                setattr(base, name, value)


def view_of_operand(builder, tracer):
    """In a branch traced by `builder`, the Tracer standing for `tracer` (an array of the
    enclosing trace) where it is an operand or views one through its view links: that view of
    the operand's input, made once (later writes into the input reach it as they reach any
    view). None where it is neither, or `builder` is a loop's (its operands are not shared)."""
    inner_of = builder.inner_of
    if not inner_of:
        return None
    made = builder.operand_views
    if id(tracer) in made:
        return made[id(tracer)][1]
    links, current = [], tracer
    while id(current) not in inner_of:
        link = getattr(current, "_link", None)
        if link is None:
            return None
        links.append(link)
        current = link.base
    view = inner_of[id(current)]
    for link in reversed(links):
        view = take_view(link.read(view), view, link.read, link.write, link.how,
                         certain=link not in link.ambiguous)
    made[id(tracer)] = (tracer, view)  # (the tracer kept: its id stays its own)
    return view
