"""Names surely bound to the very same object (not a view, not a copy): what an exact restore
of the items a write overwrote needs (transforms/reverse/reverse_body.py gives it to the reverse sweep).
transforms/analysis/aliases.py's model says which names *may* share memory; this one which surely are
one object.
"""
from __future__ import annotations

import itertools

import gast

from .alias_calls import _walk
from ..codegen.nodes import walk


def names_bound_alike(body, items_written) -> dict:
    """(id(write), a name it writes into) -> (write, the other names surely bound, where it
    runs, to the very object (not a view, not a copy) that name is bound to, the views of it:
    (name, `x[index]` the name was bound to) for each name surely bound to that indexing of
    that object). `x = _t2` in A-normal form makes x and _t2 one array; `v = x[1:3]` makes v a view
    of it, where NumPy's indexing is one (runtime/tracing/views.py indexes_a_view says). Known within
    the write's block and the blocks around it (from an if's or with's entry; in a loop, for
    names the loop never binds), never across a binding of a name it depends on other than `a
    = b`; empty where a nested function may rebind names.

    items_written(statement): the names a statement writes items into (`x[i] = v`, a call of a
    function that writes into its argument).
    memory_sharing.MemorySharing.names_sharing says which names *may* share memory; this model,
    which names surely are one object or its view, is what an exact restore of the items
    needs: writing the old items back through each of them (or indexing the view again) is
    writing them into that object (once more, eagerly; into each name's own value, in a
    traced graph, where stacks and branches give new values).
    """
    if any(isinstance(n, (gast.Nonlocal, gast.Global)) for s in body for n in walk(s)):
        return {}
    if not any(items_written(statement) for statement in _scanned(body)):
        return {}  # (most functions write no items: nothing to find, no need to scan)
    found = {}
    fresh = itertools.count()

    def scan(block, objects: dict, views: dict) -> None:
        """objects: name -> the object it is bound to; views: name -> (the object it views,
        the indexing, the names that indexing reads)."""
        for statement in block:
            for written in items_written(statement):
                if written not in objects:
                    continue
                held = objects[written]
                found[id(statement), written] = (
                    statement, sorted(other for other, of in objects.items()
                                      if of == held and other != written),
                    sorted(((view, indexing) for view, (of, indexing, _) in views.items()
                            if of == held), key=lambda pair: pair[0]))
            # A loop's body runs again after its own bindings; any block, after its head's.
            head = [getattr(statement, field, None) for field in ("test", "iter", "target")]
            head += getattr(statement, "items", None) or []
            loop = isinstance(statement, (gast.For, gast.While))
            rebound = _bound_names([statement] if loop
                                   else [part for part in head if part is not None])
            inner = {key: of for key, of in objects.items() if key not in rebound}
            inner_views = _unchanged(views, rebound)
            for field in ("body", "orelse"):
                scan(getattr(statement, field, None) or [], dict(inner), dict(inner_views))
            bound = rebound if loop else _bound_names([statement])  # (scan changes nothing)
            kept = _unchanged(views, bound)
            views.clear()
            views.update(kept)
            target = (statement.targets[0].id if isinstance(statement, gast.Assign)
                      and len(statement.targets) == 1
                      and isinstance(statement.targets[0], gast.Name) else None)
            value = statement.value if target is not None else None
            if isinstance(value, gast.Name):  # `a = b`: one object
                if value.id not in objects:
                    objects[value.id] = next(fresh)
                objects[target] = objects[value.id]
                if value.id in views:
                    views[target] = views[value.id]
                continue
            for name in bound:
                objects[name] = next(fresh)
            if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) \
                    and value.value.id != target:
                base = value.value.id
                if base not in objects:
                    objects[base] = next(fresh)
                views[target] = (objects[base], value, {
                    n.id for n in walk(value.slice) if isinstance(n, gast.Name)})

    scan(body, {}, {})
    return found


def _scanned(block):
    """The statements `scan` reads: those of `block` and, within each, of its body and else
    block, depth first."""
    for statement in block:
        yield statement
        for field in ("body", "orelse"):
            yield from _scanned(getattr(statement, field, None) or [])


def _unchanged(views: dict, bound: set) -> dict:
    """The entries of `views` whose name and indexing's names none of `bound` rebinds."""
    return {view: entry for view, entry in views.items()
            if view not in bound and not entry[2] & bound}


def _bound_names(statements) -> set:
    """The names `statements` bind or delete, nested blocks included."""
    names, definitions = [], []  # one walk
    for node in _walk(statements):
        if isinstance(node, gast.Name):
            if isinstance(node.ctx, (gast.Store, gast.Del)):
                names.append(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.ClassDef)):
            definitions.append(node.name)
    return set(names) | set(definitions)
