"""Which names a function may read after each of its statements, before binding them again.

    live = live_after(function.body)   # id(statement) -> set of names
    read_before_bound(loop.body)       # the names an iteration may read from the one before

A backward pass over the statements, loops followed until their sets stop growing; `break`
goes on after the loop, `continue` at its head, `return` reads its value alone. Given
`closures` (closure_reads: a nested function's name -> the names of this function it reads),
a read of a nested function's name reads those names too: a closure reads them when called,
which may be long after it was defined (`row = A[0]; def e(): return row @ row; A[0] = v;
e()` reads row after the write).
"""
from __future__ import annotations

import collections

import gast

from ..codegen.naming import walk_scope
from ..codegen.nodes import nodes_of
from ..front.parsing import resolve


def live_after(body, closures: dict | None = None) -> dict:
    """id(statement) -> the names that may be read after it before being bound again."""
    return _liveness(body, closures)[0]


def read_before_bound(body, closures: dict | None = None) -> set:
    """The names `body` may read before it binds them: those whose values come from before
    it. (A `break` or `continue` directly in `body` counts as going on with the statements
    after it: more names, never fewer.)"""
    return _liveness(body, closures)[1]


def _liveness(body, closures: dict | None) -> tuple[dict, set]:
    """(live_after's map, the names live before `body`)."""
    found = collections.defaultdict(set)
    closures = closures or {}

    def _reads(node) -> set:
        read = _names_read(node)
        return read.union(*(closures[n] for n in read & closures.keys()))

    def block(statements, live, loop):
        for statement in reversed(statements):
            found[id(statement)] |= live
            live = before(statement, live, loop)
        return live

    def before(node, live, loop):
        if isinstance(node, gast.If):
            return _reads(node.test) | block(node.body, live, loop) | block(node.orelse, live,
                                                                             loop)
        if isinstance(node, (gast.For, gast.While)):
            head = set(live)
            while True:
                inside = block(node.body, head, (head, live))
                if isinstance(node, gast.For):
                    inside = inside - _stored(node.target)
                new_head = live | inside | (_reads(node.test) if isinstance(node, gast.While)
                                            else set())
                if new_head <= head:
                    break
                head |= new_head
            return head | (_reads(node.iter) if isinstance(node, gast.For) else set())
        if isinstance(node, gast.With):  # a name scope: its name, then its block
            return _reads(node.items[0]) | block(node.body, live, loop)
        if isinstance(node, gast.Break):
            return set(loop[1]) if loop else set(live)
        if isinstance(node, gast.Continue):
            return set(loop[0]) if loop else set(live)
        if isinstance(node, gast.Return):
            return _reads(node.value)
        if isinstance(node, gast.Assign):
            stored = set().union(*(_stored(t) for t in node.targets))
            return (live - stored) | _reads(node)
        if isinstance(node, gast.AugAssign):
            return live | _reads(node) | _stored(node.target)  # `k += 1` reads k first
        return live | _reads(node)

    return found, block(body, set(), None)


def _names_read(node) -> set:
    return {n.id for n in nodes_of(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)} if node is not None else set()


def _stored(target) -> set:
    """The names an assignment to `target` binds (`x[i] = v` binds none)."""
    if isinstance(target, gast.Name):
        return {target.id}
    if isinstance(target, (gast.Tuple, gast.List)):
        return set().union(*(_stored(e) for e in target.elts))
    return set()


def closure_reads(body) -> dict:
    """A nested function's name (a def's, or a name bound to a lambda) -> the names of the
    enclosing function it reads: its free names, and those of the nested functions it reads.
    (A name bound in a function nested deeper counts as read: more, never fewer.)"""
    reads = collections.defaultdict(set)
    for node in (n for statement in body for n in nodes_of(statement)):
        if isinstance(node, gast.Assign) and isinstance(node.value, gast.Lambda):
            definition, names = node.value, [t.id for t in node.targets
                                             if isinstance(t, gast.Name)]
        elif isinstance(node, gast.FunctionDef):
            definition, names = node, [node.name]
        else:
            continue
        inside = [definition.body] if isinstance(definition, gast.Lambda) else definition.body
        own = {a.id for a in walk_scope(definition.args) if isinstance(a, gast.Name)} | {
            n.id for part in inside for n in walk_scope(part)
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
        free = {n.id for part in inside for n in nodes_of(part)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)} - own
        for name in names:
            reads[name] |= free
    changed = True
    while changed:  # `def b(): return a()` reads what a reads
        changed = False
        for name, read in reads.items():
            more = set().union(*(reads[n] for n in read & reads.keys())) - read
            if more:
                read |= more
                changed = True
    return dict(reads)


def surely_runs(loop, namespace: dict) -> bool:
    """Whether `loop` runs its body at least once whatever the values: a `for` over a
    `range` of constants that is not empty (`for i in range(2):`)."""
    call = loop.iter if isinstance(loop, gast.For) else None
    if not (isinstance(call, gast.Call) and resolve(call.func, namespace) is range) or \
            call.keywords or not call.args:
        return False
    bounds = [argument.value if isinstance(argument, gast.Constant) else None
              for argument in call.args]
    return all(type(bound) is int for bound in bounds) and len(range(*bounds)) > 0
