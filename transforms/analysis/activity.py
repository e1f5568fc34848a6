"""Which variables carry gradient: those that depend on a differentiated argument and that the
returned value depends on. Integer bookkeeping, shapes and comparisons never do.

The analysis is per name and flow-insensitive: a name is active if any of its assignments is.
"""
from __future__ import annotations

import re

import gast

from ..codegen.nodes import nodes_of

# Attributes of arrays that describe them rather than hold their values.
DESCRIPTIVE_ATTRIBUTES = {"shape", "ndim", "dtype", "size", "itemsize", "nbytes"}


def _reads(node) -> set:
    return {n.id for n in nodes_of(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}


# A name no identifier can be: the source of every value that may read state (implicit mode).
STATE = "<state>"


def value_sources(value, is_constant_call, reads_state=None) -> set:
    """The names whose values flow into the expression `value` (one ANF operation); STATE for
    a call that `reads_state` says may read Variables it was not passed."""
    if isinstance(value, (gast.Compare, gast.JoinedStr)):
        return set()
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, (gast.Not, gast.Invert)):
        return set()
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.FloorDiv):
        return set()  # piecewise constant, as np.floor_divide is
    if isinstance(value, gast.Attribute) and value.attr in DESCRIPTIVE_ATTRIBUTES:
        return set()
    if isinstance(value, gast.Call):
        if is_constant_call(value):
            return set()
        sources = {STATE} if reads_state is not None and reads_state(value) else set()
        for argument in value.args + [k.value for k in value.keywords]:
            sources |= _reads(argument)
        if not isinstance(value.func, gast.Attribute):
            sources |= _reads(value.func)
        else:
            sources |= _reads(value.func.value)
        return sources
    if isinstance(value, gast.Subscript):
        return _reads(value.value)
    return _reads(value)


def flows(body, is_constant_call, reads_state=None, changes=None) -> tuple[dict, set]:
    """(target -> names flowing into it, names returned) for an ANF body. changes(call): the
    names of objects whose state the call may write its arguments into (their values then
    flow into those objects)."""
    edges: dict[str, set] = {}
    returned: set = set()

    def add(target, sources):
        edges.setdefault(target, set()).update(sources)

    def visit(statements):
        for node in statements:
            call = node.value if isinstance(node, (gast.Assign, gast.Expr)) else None
            if changes is not None and isinstance(call, gast.Call):
                for changed in changes(call):
                    add(changed, value_sources(call, is_constant_call, reads_state)
                        | {changed})
            if isinstance(node, gast.Assign):
                target = node.targets[0]
                if isinstance(target, gast.Name):
                    add(target.id, value_sources(node.value, is_constant_call, reads_state))
                elif isinstance(target, gast.Subscript):
                    add(target.value.id, _reads(node.value) | {target.value.id})
            elif isinstance(node, gast.Expr) and isinstance(node.value, gast.Call):
                func = node.value.func
                if (isinstance(func, gast.Attribute) and func.attr == "append"
                        and isinstance(func.value, gast.Name)):
                    add(func.value.id, value_sources(node.value, is_constant_call, reads_state))
                elif (isinstance(func, gast.Name) and func.id.endswith("write_state")
                        and len(node.value.args) >= 4 and isinstance(node.value.args[0],
                                                                      gast.Name)):
                    # a write into an object's state (transforms/analysis/given_state_writes.py): its root
                    # holds the value written from there on
                    root = node.value.args[0].id
                    add(root, _reads(node.value.args[3]) | {root})
                elif (isinstance(func, gast.Name) and func.id.startswith("restore_item")
                        and len(node.value.args) == 3 and isinstance(node.value.args[0],
                                                                      gast.Name)):
                    container = node.value.args[0].id
                    add(container, _reads(node.value.args[2]) | {container})
            elif isinstance(node, gast.Return):
                returned.update(_reads(node.value))
            elif isinstance(node, (gast.If, gast.For, gast.While, gast.With)):
                visit(node.body)
                visit(getattr(node, "orelse", []))  # (a With, a name scope, has none)
    visit(body)
    return edges, returned


def _closure(start: set, edges: dict) -> set:
    reached = set(start)
    frontier = list(start)
    while frontier:
        current = frontier.pop()
        for nxt in edges.get(current, ()):
            if nxt not in reached:
                reached.add(nxt)
                frontier.append(nxt)
    return reached


def active_names(body, wrt: set, is_constant_call, reads_state=None, changes=None,
                 restoring=frozenset()) -> set:
    """Names that depend on `wrt` and that the returned value depends on. With `reads_state`
    (implicit mode), also those that depend on a call it says may read Variables; put STATE
    in `wrt` then. changes: see `flows`. restoring: see `restoring_stacks`."""
    edges, returned = flows(body, is_constant_call, reads_state, changes)
    return _depending(_unrestored(edges, body, restoring), wrt) & _closure(returned, edges)


def varied_names(body, wrt: set, is_constant_call, reads_state=None, changes=None,
                 restoring=frozenset()) -> set:
    """Names that depend on `wrt`, whether or not the returned value depends on them."""
    edges = flows(body, is_constant_call, reads_state, changes)[0]
    return _depending(_unrestored(edges, body, restoring), wrt)


def _depending(edges: dict, wrt: set) -> set:
    forward_edges: dict[str, set] = {}
    for target, sources in edges.items():
        for source in sources:
            forward_edges.setdefault(source, set()).add(target)
    return _closure(set(wrt), forward_edges)


def restoring_stacks(body) -> frozenset:
    """The stacks that reverse mode made in code autotrace generated (`_stack1`), used only as
    `S = []`, `S.append(v)` and `v = S.pop()`. Such a stack saves a value before it is
    overwritten, and its pop gives the same name back the value it held (ANF may have renamed
    what was pushed): the pop makes the name depend on no differentiated value its own
    assignments do not, so a loop index saved beside the values a loop overwrites stays an
    integer. (The stack is needed where what is popped is: it keeps those edges.)"""
    uses, stack_uses = {}, {}

    def count(table, key):
        table[key] = table.get(key, 0) + 1
    for node in (node for statement in body for node in nodes_of(statement)):
        if isinstance(node, gast.Name):
            count(uses, node.id)
        if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                and isinstance(node.func.value, gast.Name) and node.func.attr == "append"
                and len(node.args) == 1 and not node.keywords):
            count(stack_uses, node.func.value.id)
        if (isinstance(node, gast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], gast.Name)):
            if isinstance(node.value, gast.List) and not node.value.elts:
                count(stack_uses, node.targets[0].id)
            elif popped_stack(node.value) is not None:
                count(stack_uses, popped_stack(node.value))
    return frozenset(stack for stack, count in stack_uses.items()
                     if _SAVED_VALUES.fullmatch(stack) and count == uses[stack])


def _unrestored(edges: dict, body, restoring: frozenset) -> dict:
    """`edges` without those from a restoring stack into the names its pops restore, where the
    name is bound otherwise too (assigned, or a loop's variable): a pop gives it back a value
    one of those gave it. A name only a pop binds (a value saved apart) keeps the stack's."""
    if not restoring:
        return edges
    popped, bound = [], set()
    for node in (node for statement in body for node in nodes_of(statement)):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            if popped_stack(node.value) in restoring:
                popped.append((node.targets[0].id, popped_stack(node.value)))
            else:
                bound.add(node.targets[0].id)
        elif isinstance(node, gast.For) and isinstance(node.target, gast.Name):
            bound.add(node.target.id)
    edges = {target: set(sources) for target, sources in edges.items()}
    for target, stack in popped:
        if target in bound:
            edges[target].discard(stack)
    return edges


def popped_stack(value) -> str | None:
    """S, where `value` is `S.pop()` (else None)."""
    if (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and value.func.attr == "pop" and not value.args and not value.keywords
            and isinstance(value.func.value, gast.Name)):
        return value.func.value.id
    return None


# The name of the stack of saved values reverse mode makes (transforms/reverse/reverse.py).
_SAVED_VALUES = re.compile(r"_stack[0-9]+")
