"""Which variables carry gradient: those that depend on a differentiated argument and that the
returned value depends on. Integer bookkeeping, shapes and comparisons never do.

The analysis is per name and flow-insensitive: a name is active if any of its assignments is.
"""
from __future__ import annotations

import gast

from ..codegen.nodes import nodes_of

# Attributes of arrays that describe them rather than hold their values.
DESCRIPTIVE_ATTRIBUTES = {"shape", "ndim", "dtype", "size", "itemsize", "nbytes"}


def _reads(node) -> set:
    # In A-normal form most operands are a name or a constant, which need no walk.
    if isinstance(node, gast.Name) and node.annotation is None:
        return {node.id} if isinstance(node.ctx, gast.Load) else set()
    if isinstance(node, gast.Constant):
        return set()
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


def active_names(body, wrt: set, is_constant_call, reads_state=None, changes=None) -> set:
    """Names that depend on `wrt` and that the returned value depends on. With `reads_state`
    (implicit mode), also those that depend on a call it says may read Variables; put STATE
    in `wrt` then. changes: see `flows`."""
    edges, returned = flows(body, is_constant_call, reads_state, changes)
    return _depending(edges, wrt) & _closure(returned, edges)


def varied_names(body, wrt: set, is_constant_call, reads_state=None, changes=None) -> set:
    """Names that depend on `wrt`, whether or not the returned value depends on them."""
    return _depending(flows(body, is_constant_call, reads_state, changes)[0], wrt)


def active_and_varied(body, wrt: set, is_constant_call, changes=None) -> tuple[set, set]:
    """(active_names, varied_names) of `body` where no call reads state unseen (no
    `reads_state`): the two read the same flows, found once."""
    edges, returned = flows(body, is_constant_call, None, changes)
    varied = _depending(edges, wrt)
    return varied & _closure(returned, edges), varied


def _depending(edges: dict, wrt: set) -> set:
    forward_edges: dict[str, set] = {}
    for target, sources in edges.items():
        for source in sources:
            forward_edges.setdefault(source, set()).add(target)
    return _closure(set(wrt), forward_edges)


def popped_stack(value) -> str | None:
    """S, where `value` is `S.pop()` (else None)."""
    if (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and value.func.attr == "pop" and not value.args and not value.keywords
            and isinstance(value.func.value, gast.Name)):
        return value.func.value.id
    return None
