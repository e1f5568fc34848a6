"""Names surely bound to the very same object (not a view, not a copy): what an exact restore
of the items a write overwrote needs (transforms/pipeline.py gives it to the reverse sweep).
transforms/aliases.py's model says which names *may* share memory; this one which surely are
one object.
"""
from __future__ import annotations

import itertools

import gast

from .alias_calls import _walk
from .nodes import walk


def names_bound_alike(body, is_item_write) -> dict:
    """id(write) -> (write, the other names surely bound, where it runs, to the very object
    (not a view, not a copy) that the name it writes into is bound to); `x = _t2` in A-normal
    form makes x and _t2 one array. Known within the write's block and the blocks around it
    (from an if's or with's entry; in a loop, for names the loop never binds), never across a
    name's binding other than `a = b`; empty where a nested function may rebind names.

    is_item_write(statement): the name a statement writes items into (`x[i] = v`), or None.
    aliases.MemorySharing.names_sharing says which names *may* share memory; this model,
    which names surely are one object, is what an exact restore of the items needs: writing
    the old items back through each of them is writing them into that object (once more,
    eagerly; into each name's own value, in a traced graph, where stacks and branches give new
    values).
    """
    if any(isinstance(n, (gast.Nonlocal, gast.Global)) for s in body for n in walk(s)):
        return {}
    found = {}
    fresh = itertools.count()

    def scan(block, objects: dict) -> None:
        for statement in block:
            written = is_item_write(statement)
            if written is not None and written in objects:
                found[id(statement)] = (statement, sorted(
                    other for other, held in objects.items()
                    if held == objects[written] and other != written))
            inner = dict(objects)
            # A loop's body runs again after its own bindings; any block, after its head's.
            head = [getattr(statement, field, None) for field in ("test", "iter", "target")]
            head += getattr(statement, "items", None) or []
            rebound = _bound_names([statement] if isinstance(statement, (gast.For, gast.While))
                                   else [part for part in head if part is not None])
            for bound in rebound:
                inner.pop(bound, None)
            for field in ("body", "orelse"):
                scan(getattr(statement, field, None) or [], dict(inner))
            if (isinstance(statement, gast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], gast.Name)
                    and isinstance(statement.value, gast.Name)):
                source, target = statement.value.id, statement.targets[0].id
                if source not in objects:
                    objects[source] = next(fresh)
                objects[target] = objects[source]
                continue
            for bound in _bound_names([statement]):
                objects[bound] = next(fresh)

    scan(body, {})
    return found


def _bound_names(statements) -> set:
    """The names `statements` bind or delete, nested blocks included."""
    return {n.id for n in _walk(statements) if isinstance(n, gast.Name)
            and isinstance(n.ctx, (gast.Store, gast.Del))} | {
        n.name for n in _walk(statements)
        if isinstance(n, (gast.FunctionDef, gast.ClassDef))}
