"""Restores from names: a value pushed before it is overwritten, which a name assigned once
holds too, is given back from that name in the adjoint sweep, not from the stack."""
from __future__ import annotations

import gast

from .cleanup import map_blocks
from .naming import name_counts
from .nodes import nodes_of
from .templates import name, replace
from ..reverse.sweep_parts import PAIR, SAVE, UNDOES, marked


def restore_from_names(primal: list, adjoint: list, parameters=(), temporary=None) -> None:
    """Restore from a name, not from the stack, a value that a name assigned once holds.

    `_t4 = np.copy(v); v = _t4; ...; stack.append(v); v = v + x` pushes the array _t4 holds;
    its pop in the adjoint sweep becomes `v = _t4`, the same object, and the push goes. The
    adjoint of an `if` says it too: at the start of a branch's adjoint where v held _t4 at the
    end of that branch, and after the adjoint `if` (whose branches give back what each
    changed) where v held it before the primal `if`. A traced derivative then sees one array
    on every path, where the stack would hand back a new value on the path that pushed it, or
    the value after the primal `if` would be either path's (and the graph could not tell
    that both are one memory).

    The source name is assigned once in the whole function, outside any loop (so it holds the
    same value in the adjoint sweep as when pushed), and is not a parameter; the pushed name
    holds its value on every path to the push. Where it holds the value of an assignment run
    at most once (outside loops) of something else than a name, `x = np.sqrt(x + 2.0)`, and
    that value is pushed, the assignment is split in two, `_t5 = np.sqrt(x + 2.0); x = _t5`,
    with a name from `temporary()` (where given). The restores are marked as pops: where the
    adjoint sweep never reads the name, remove_unneeded_saves drops them. Both lists are
    edited in place.
    """
    stores = name_counts(primal + adjoint, (gast.Store, gast.Del))
    in_loops = set()
    for statement in _outermost_loops(primal):  # (a nested loop's names are its loop's)
        in_loops |= set(name_counts([statement], gast.Store))
    once = {n for n, count in stores.items() if count == 1} - in_loops - set(parameters)
    restored = {}  # the pair of a push and its pop -> the name holding the pushed value
    # id of a primal if -> for each name it changes that holds what a name assigned once
    # holds, that name: before the if, after its true branch, after its false branch
    ifs = {}

    def forget(known: dict, statements) -> None:
        for stored in name_counts(statements, (gast.Store, gast.Del)):
            known.pop(stored, None)

    def lift(inner: int, statement, known: dict) -> None:
        """Rebind after `statement` (an if or a loop) the sources of the writes in it from
        `inner` on whose written name still holds the source after it: inside, the rebinding
        would make the source a value of the branch or loop of its own."""
        for write in writes[inner:]:
            if known.get(write[2]) is write[1]:
                write[0] = statement

    def follow(block, known: dict, in_loop: bool = False) -> dict:
        for statement in block:
            saved, kind, _ = getattr(statement, SAVE, (None, None, None))
            if kind == "push" and hasattr(statement, PAIR) and saved in known:
                source = known[saved]
                if isinstance(source, _Split) and source.name is None:
                    source.name = temporary()
                    splits[id(source.statement)] = source
                restored[getattr(statement, PAIR)] = source
            elif isinstance(statement, gast.If):
                forget(known, [statement.test])
                changed = name_counts(statement.body + statement.orelse, gast.Store)
                inner = len(writes)
                true = follow(statement.body, dict(known), in_loop)
                false = follow(statement.orelse, dict(known), in_loop)
                ifs[id(statement)] = [{n: branch[n] for n in changed if n in branch}
                                      for branch in (known, true, false)]
                known = {n: source for n, source in true.items() if false.get(n) is source}
                lift(inner, statement, known)
            elif isinstance(statement, (gast.For, gast.While)):
                forget(known, [statement])
                inner = len(writes)
                follow(statement.body, dict(known), True)
                follow(statement.orelse, dict(known), True)
                lift(inner, statement, known)
            else:
                # (not where the statement binds the written name too, a `with` block writing
                # `h[1] = ...` then `h = h * x`: after it the name holds another array)
                rebound, deleted, items_written = _bindings(statement)
                writes.extend([statement, known[written], written]
                              for written in items_written
                              if written in known and written not in rebound)
                for unbound in rebound | deleted:
                    known.pop(unbound, None)
                target = (statement.targets[0].id if isinstance(statement, gast.Assign)
                          and len(statement.targets) == 1
                          and isinstance(statement.targets[0], gast.Name) else None)
                if target is not None and isinstance(statement.value, gast.Name):
                    source = statement.value.id
                    source = source if source in once else known.get(source)
                    if source is not None:
                        known[target] = source
                elif (target is not None and temporary is not None and not in_loop
                        and target not in once and not hasattr(statement, SAVE)
                        and not isinstance(statement.value, _NO_MEMORY)):
                    known[target] = _Split(statement)
        return known

    splits = {}  # id of an assignment to split -> its _Split
    # (a write of items, the source its name holds, that name): see `rebinds` below
    writes = []
    follow(primal, {})
    # `_t4 = np.zeros(3); t = _t4; t[:] = x; ...; t = _t4` (the restore): eagerly both names
    # are one array, written in place. Where the derivative is traced or differentiated again,
    # each name is a value of its own: the write makes t a new traced value (or gives it a
    # tangent of its own), which _t4 would miss. The source is bound again to the written name
    # after each such write: the same object eagerly, the written value everywhere else.
    used = {id(source) for source in restored.values()} | {
        id(source) for entry in ifs.values() for known in entry for source in known.values()}
    rebinds = {}  # id of a write (or an if or loop around it) -> the rebindings after it
    for statement, source, written in writes:
        rebind = (_name(source), written)
        if id(source) in used and rebind[0] is not None and \
                rebind not in rebinds.get(id(statement), ()):
            rebinds.setdefault(id(statement), []).append(rebind)

    def restore(target, source, where):
        assignment = replace("target = source", target=target, source=_name(source))
        return marked([gast.copy_location(assignment[0], where)], target, "pop")[0]

    def restores(known: dict, branch=None) -> list:
        return [(target, source) for target, source in sorted(known.items(), key=_first)
                if _name(source) is not None
                and (branch is None or _read_before_assigned(branch, target))]

    def rewrite(block):
        out = []
        for statement in block:
            pair = getattr(statement, PAIR, None)
            if id(statement) in splits:
                out += _split(statement, splits[id(statement)].name)
            elif pair not in restored:
                out.append(statement)
            elif getattr(statement, SAVE)[1] == "pop":
                out.append(restore(getattr(statement, SAVE)[0], restored[pair], statement))
            for source, written in rebinds.get(id(statement), ()):
                rebind = replace("source = written", source=source, written=written)[0]
                out.append(gast.copy_location(rebind, statement))
            undone = getattr(statement, UNDOES, None)
            undone = undone.value if undone is not None else None
            if id(undone) not in ifs:
                continue
            before, after_true, after_false = ifs[id(undone)]
            for field, after in (("body", after_true), ("orelse", after_false)):
                branch = getattr(statement, field)
                setattr(statement, field, [restore(target, source, statement)
                                           for target, source in restores(after, branch)]
                        + branch)
            out += [restore(target, source, statement) for target, source in restores(before)]
        return out
    primal[:] = map_blocks(primal, rewrite)
    adjoint[:] = map_blocks(adjoint, rewrite)


def _outermost_loops(body: list):
    """The loops in `body`, nested blocks included, but not those inside a loop."""
    for statement in body:
        if isinstance(statement, (gast.For, gast.While)):
            yield statement
            continue
        for field in ("body", "orelse"):
            yield from _outermost_loops(getattr(statement, field, []) or [])


def _bindings(statement) -> tuple:
    """(the names `statement` assigns, those it deletes, the names whose items it writes,
    `t[i] = v`, `t[i] += v`, in the blocks of a `with` or `try` too): one walk for what follow
    asks of each statement."""
    assigned, deleted, items = set(), set(), []
    for node in nodes_of(statement):
        if isinstance(node, gast.Name):
            if isinstance(node.ctx, gast.Store):
                assigned.add(node.id)
            elif isinstance(node.ctx, gast.Del):
                deleted.add(node.id)
        elif isinstance(node, gast.Assign):
            items += [target.value.id for target in node.targets if _writes_items(target)]
        elif isinstance(node, gast.AugAssign) and _writes_items(node.target):
            items.append(node.target.value.id)
    return assigned, deleted, items


def _writes_items(target) -> bool:
    return isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)


def _read_before_assigned(block: list, identifier: str) -> bool:
    """Whether `block` may read `identifier` before a statement of its own assigns it."""
    for statement in block:
        if identifier in name_counts([statement], gast.Load):
            return True
        if not hasattr(statement, "body") and identifier in name_counts([statement], gast.Store):
            return False
    return False


# Values that hold no memory a write could change: no name of their own is needed (and
# `n = None` stays as the user wrote it, which the control-flow conversion reads).
_NO_MEMORY = (gast.Constant, gast.JoinedStr, gast.Lambda)


class _Split:
    """The value of `statement` (`x = <not a name>`), held by a name of its own once a push
    needs it (`name`, None until then)."""

    def __init__(self, statement):
        self.statement, self.name = statement, None


def _name(source) -> str | None:
    """The name holding a source's value: a name assigned once, or a split's temporary."""
    return source.name if isinstance(source, _Split) else source


def _first(item):
    return item[0]


def _split(statement, temporary: str) -> list:
    """`x = value` as `temporary = value; x = temporary` (the second, `statement` itself)."""
    first = replace("temporary = value", temporary=temporary, value=statement.value)[0]
    statement.value = name(temporary)
    return [gast.copy_location(first, statement), statement]
