"""Passes that make generated code short enough to read, in the order `optimize` runs them:

1. unneeded saves: a value pushed before it is overwritten, and popped back in the adjoint
   sweep, is kept only if the adjoint sweep reads it; the items an in-place write changes
   (`x[i] = v`), only if it reads a name that may share x's memory (transforms/analysis/aliases.py);
   a value that a name assigned once holds too is restored from that name, not the stack
   (transforms/codegen/restores.py, which runs first);
2. constant folding: `2 * 3.0` becomes `6.0` (transforms/codegen/constant_folding.py);
3. dead code: assignments of pure expressions to names nobody reads;
4. single-use temporaries: a temporary read once, by the next statement, is written into it;
5. empty control flow: an if or loop left with nothing to do.
"""
from __future__ import annotations

import collections

import gast

from ..analysis.memory_sharing import memory_sharing
from ..analysis.calls import classify
from .constant_folding import folded_factors
from .naming import name_counts
from ..reverse.sweep_parts import COMMENT, SAVE
from .nodes import nodes_of, walk

def _loads(nodes) -> collections.Counter:
    return name_counts(nodes, gast.Load)


def _stores(nodes) -> collections.Counter:
    return name_counts(nodes, gast.Store)


def statements_in(body):
    """Every statement in `body`, nested ones included, outermost first."""
    for statement in body:
        yield statement
        for field in ("body", "orelse"):
            yield from statements_in(getattr(statement, field, []) or [])


def map_blocks(body, function):
    """Apply `function` to every statement list, innermost first; returns the new body."""
    for statement in body:
        for field in ("body", "orelse"):
            block = getattr(statement, field, None)
            if isinstance(block, list) and block:
                setattr(statement, field, map_blocks(block, function))
    return function(body)


def is_comment(statement) -> bool:
    return (isinstance(statement, gast.Expr) and isinstance(statement.value, gast.Call)
            and isinstance(statement.value.func, gast.Name)
            and statement.value.func.id == COMMENT)


def remove_unneeded_saves(primal: list, adjoint: list, shape_only: dict,
                          shape_only_helper: str | None = None, namespace=None,
                          parameters=()) -> set:
    """Drop save/restore statements of names the adjoint sweep never reads (both lists are
    edited in place), and control flow left empty in the adjoint sweep.

    shape_only: helper name -> positions of its arguments it reads only the shape of. An array
    changed in place (`x[i] = v`) keeps its shape, so its items are restored only where the
    adjoint sweep reads its values.
    shape_only_helper: the name of runtime.derivatives.items.shape_only, if given: a name the
    adjoint sweep reads only the shape of is pushed as `shape_only(x)`, which keeps no array alive.
    namespace, parameters: the function's, for the model of which names share memory.
    Returns the names whose kept pushes may run before the name is first assigned.
    """
    # An in-place write into x changes what every name sharing x's memory sees: `x = _t2` (a
    # rule reading its result, `1 - y * y` for tanh), `w = x`, a view, a list holding x.
    sharing = _MemoryOfSaves(primal, parameters, namespace or {})
    reads = _Reads(shape_only)
    # The statements are listed once a round: each round's count is the one the last left, and
    # the primal sweep's changes only by the saves dropped from it.
    primal_count = sum(1 for _ in statements_in(primal))
    in_adjoint = list(statements_in(adjoint))
    while True:
        needed = _needed(in_adjoint, sharing, reads, values=False)
        values_needed = _needed(in_adjoint, sharing, reads, values=True)

        def wanted(statement) -> bool:
            saved, kind, _ = getattr(statement, SAVE)
            if kind.startswith("item"):
                return bool(sharing.of(saved) & values_needed)
            return saved in needed

        def keep(block):
            return [s for s in block if not hasattr(s, SAVE) or wanted(s)]

        def keep_counting(block):
            nonlocal primal_count
            kept = []
            for statement in block:
                if not hasattr(statement, SAVE) or wanted(statement):
                    kept.append(statement)
                else:
                    primal_count -= sum(1 for _ in statements_in([statement]))
            return kept
        before = primal_count + len(in_adjoint)
        primal[:] = map_blocks(primal, keep_counting)
        adjoint[:] = map_blocks(adjoint, keep)
        remove_empty_control_flow(adjoint)
        in_adjoint = list(statements_in(adjoint))
        if primal_count + len(in_adjoint) == before:
            break
    if shape_only_helper is not None:
        _push_shapes_only(primal, needed - values_needed, shape_only_helper)
    return {getattr(s, SAVE)[0] for s in statements_in(primal)
            if hasattr(s, SAVE) and getattr(s, SAVE)[2]}


class _MemoryOfSaves:
    """Which names may share memory with an array written item by item: the model of
    transforms/analysis/aliases.py over the primal sweep, made once, and only where an item is saved."""

    def __init__(self, primal: list, parameters, namespace: dict):
        self.primal, self.parameters, self.namespace = primal, parameters, namespace
        self.model = None

    def of(self, identifier) -> set:
        if self.model is None:
            self.model = memory_sharing(self.primal, self.parameters, self.namespace,
                                        lambda statement: hasattr(statement, SAVE))
        return self.model.names_sharing(identifier)


def _push_shapes_only(primal: list, names: set, helper: str) -> None:
    """`stack.append(x)` becomes `stack.append(shape_only(x))` for each x in `names`."""
    for statement in statements_in(primal):
        saved, kind, _ = getattr(statement, SAVE, (None, None, None))
        if kind == "push" and saved in names:
            call = statement.value
            call.args = [gast.Call(func=gast.Name(id=helper, ctx=gast.Load(), annotation=None,
                                                  type_comment=None),
                                   args=call.args, keywords=[])]


class _Reads:
    """The names each statement of the adjoint sweep reads, found once: remove_unneeded_saves
    asks again after each round of removals, in which the other statements stay as they were.
    Statements are kept by identity, and held, so that an id is never another's."""

    def __init__(self, shape_only: dict):
        self.shape_only = shape_only
        self.found = {}  # id(statement) -> (statement, its reads, its value reads)

    def of(self, statement, values: bool) -> set:
        """The names `statement` reads in its own expressions (not those of the statements
        in its blocks); with `values`, leaving out arguments that shape_only helpers read
        the shape of. A save or restore: every name it reads."""
        kept = self.found.get(id(statement))
        if kept is None:
            if hasattr(statement, SAVE):
                loads = set(_loads([statement]))
                kept = (statement, loads, loads)
            else:
                reads, value_reads = set(), set()
                for field in ("test", "iter", "value", "targets", "items"):  # (items: a with's)
                    part = getattr(statement, field, None)
                    for node in (part if isinstance(part, list) else [part]):
                        if node is not None:
                            every, values_only = _value_reads(node, self.shape_only)
                            reads |= every
                            value_reads |= values_only
                kept = (statement, reads, value_reads)
            self.found[id(statement)] = kept
        return kept[2] if values else kept[1]


def _needed(in_adjoint: list, sharing, reads: _Reads, values: bool) -> set:
    """Primal names the adjoint sweep reads (restores count only for names that are read, item
    restores for names that `sharing` says may share the array's memory); with `values`,
    reads of an argument's shape alone do not count. in_adjoint: the adjoint sweep's
    statements, nested ones included (statements_in)."""
    needed = set()
    for statement in in_adjoint:
        if not hasattr(statement, SAVE):
            needed |= reads.of(statement, values)
    # each save and restore: (the name saved, whether it restores items, the names it reads)
    marked = [(getattr(s, SAVE)[0], getattr(s, SAVE)[1].startswith("item"), reads.of(s, values))
              for s in in_adjoint if hasattr(s, SAVE)]
    changed = True
    # A kept restore reads its index, which must be restored too; a kept item restore writes
    # into its array, whose name must be bound to the array written then (in a loop, each run's).
    while changed:
        changed = False
        for saved, items, loads in marked:
            if items and sharing.of(saved) & needed:
                read = loads
            elif saved in needed:
                read = loads - {saved}
            else:
                continue
            if not read <= needed:
                needed |= read
                changed = True
    return needed


def _value_reads(node, shape_only: dict) -> tuple:
    """(the names read in `node`, those leaving out arguments that `shape_only` helpers read
    the shape of)."""
    skipped, reads = set(), []
    for found in nodes_of(node):  # one walk: the calls and the names read
        if isinstance(found, gast.Name):
            if isinstance(found.ctx, gast.Load):
                reads.append(found)
        elif (isinstance(found, gast.Call) and isinstance(found.func, gast.Name)
                and found.func.id in shape_only):
            for position in shape_only[found.func.id]:
                if position < len(found.args) and isinstance(found.args[position], gast.Name):
                    skipped.add(id(found.args[position]))
    return {n.id for n in reads}, {n.id for n in reads if id(n) not in skipped}


# Builtins that run through an iterable they are given: one that is lazy (map(out.append,
# items), a generator) does its work then, so an unread `r = list(items)` is not dead.
_CONSUMERS = frozenset({"list", "tuple", "set", "frozenset", "dict", "sorted", "sum", "any",
                        "all", "min", "max"})


def _consumes_a_name(value) -> bool:
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and \
        value.func.id in _CONSUMERS and any(isinstance(a, gast.Name) for a in value.args)


def remove_dead_code(body, is_pure, keep_names=()):
    """Remove assignments of pure expressions to names that are never read (but an
    iterable's consumer: see _CONSUMERS)."""
    # The reads are counted once and each removed assignment's taken off: what is left is
    # the same as counting again after each round (a name unread stays unread).
    loads = _loads(body)
    while True:
        removed = False

        def prune(block):
            nonlocal removed
            out = []
            for statement in block:
                if (isinstance(statement, gast.Assign) and not hasattr(statement, SAVE)
                        and isinstance(statement.targets[0], gast.Name)
                        and not loads[statement.targets[0].id]
                        and statement.targets[0].id not in keep_names
                        and is_pure(statement.value) and not _consumes_a_name(statement.value)):
                    removed = True
                    loads.subtract(_loads([statement]))
                    continue
                out.append(statement)
            return out or [gast.Pass()]  # a block stays a block
        body[:] = map_blocks(body, prune)
        if not removed:
            return


def inline_temporaries(body, temporaries, is_pure):
    """Write each temporary that is read once, later in its block, into the statement that
    reads it, when nothing between them changes what the temporary's expression reads."""
    # Counted once: moving a temporary's expression into the statement that reads it leaves
    # every other name's count as it was, and the temporary's at none.
    loads, stores = _loads_and_stores(body)
    names = _SimpleStatements(is_pure)
    while True:
        changed = False

        def inline(block):
            nonlocal changed
            out = list(block)
            position = 0
            while position < len(out):
                statement = out[position]
                use = None
                if (isinstance(statement, gast.Assign) and not hasattr(statement, SAVE)
                        and isinstance(statement.targets[0], gast.Name)
                        and statement.targets[0].id in temporaries
                        and loads[statement.targets[0].id] == 1
                        and stores[statement.targets[0].id] == 1
                        and names.pure(statement)):
                    use = _single_use(out, position, names)
                if use is not None and isinstance(statement.value, gast.IfExp) and not (
                        isinstance(out[use], gast.Assign)
                        and isinstance(out[use].value, gast.Name)):
                    use = None  # `a if c else b` reads best as a statement's whole value
                if use is not None:
                    _Substitute(statement.targets[0].id, statement.value).visit(out[use])
                    names.forget(out[use])
                    loads[statement.targets[0].id] -= 1
                    stores[statement.targets[0].id] -= 1
                    del out[position]
                    changed = True
                    continue
                position += 1
            return out
        body[:] = map_blocks(body, inline)
        if not changed:
            return


def _loads_and_stores(nodes) -> tuple:
    """(how often each name is read, how often assigned) in `nodes`: one walk."""
    loaded, stored = [], []  # in the order walk meets them, which is the Counters' order
    for root in nodes:
        for node in nodes_of(root):
            if isinstance(node, gast.Name):
                if isinstance(node.ctx, gast.Load):
                    loaded.append(node.id)
                elif isinstance(node.ctx, gast.Store):
                    stored.append(node.id)
    return collections.Counter(loaded), collections.Counter(stored)


class _SimpleStatements:
    """What inline_temporaries asks of a statement (the names it reads and assigns; whether
    its value is pure), found once for a statement that holds no block; one the pass writes a
    temporary into is forgotten. Each round asks again of every statement after a temporary,
    and most stay as they were. Statements are held, so that an id is never another's."""

    def __init__(self, is_pure):
        self.is_pure = is_pure
        self.known = {}  # id(statement) -> [statement, (loads, stores) or None, pure or None]

    def _entry(self, statement) -> list:
        entry = self.known.get(id(statement))
        if entry is None:
            entry = [statement, None, None]
            if not any(hasattr(statement, block) for block in ("body", "orelse")):
                self.known[id(statement)] = entry  # (a statement with a block is not kept)
        return entry

    def names(self, statement) -> tuple:
        """(loads: a Counter, stores: a set) of `statement`, nested blocks included."""
        entry = self._entry(statement)
        if entry[1] is None:
            loads, stores = _loads_and_stores([statement])
            entry[1] = (loads, set(stores))
        return entry[1]

    def pure(self, statement) -> bool:
        """Whether the value `statement` assigns is pure."""
        entry = self._entry(statement)
        if entry[2] is None:
            entry[2] = self.is_pure(statement.value)
        return entry[2]

    def forget(self, statement) -> None:
        self.known.pop(id(statement), None)


def _single_use(block, position, names: _SimpleStatements):
    """The index of the statement after `position` that reads its temporary, if the
    temporary's value can move there."""
    definition = block[position]
    temporary = definition.targets[0].id
    reads = set(_loads([definition.value]))
    for index in range(position + 1, len(block)):
        statement = block[index]
        if is_comment(statement):
            continue
        loads, stores = names.names(statement)
        if loads[temporary]:
            if (isinstance(statement, (gast.Assign, gast.Expr, gast.Return))
                    and not hasattr(statement, SAVE)):
                return index
            return None
        simple = (isinstance(statement, gast.Assign) and not hasattr(statement, SAVE)
                  and names.pure(statement))
        if not simple or reads & (stores | _written_into(statement)):
            return None  # (`_t = a[0]; a[0] = v; b = _t`: b is the old a[0])
    return None


def _written_into(statement) -> set:
    """The names an assignment writes into through a subscript or attribute (`a[0] = v`)."""
    found = set()
    for target in getattr(statement, "targets", ()):
        while isinstance(target, (gast.Subscript, gast.Attribute)):
            target = target.value
            if isinstance(target, gast.Name):
                found.add(target.id)
    return found


class _Substitute(gast.NodeTransformer):
    def __init__(self, identifier, value):
        self.identifier = identifier
        self.value = value

    def visit_Name(self, node):
        if node.id == self.identifier and isinstance(node.ctx, gast.Load):
            return self.value
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        return folded_factors(node)  # `t * 2`, t = `g * 0.1`: `g * 0.2`


def remove_empty_control_flow(body):
    def prune(block):
        out = []
        for statement in block:
            if isinstance(statement, gast.If):
                empty = all(isinstance(s, gast.Pass) or is_comment(s)
                            for s in statement.body + statement.orelse)
                if empty and (not statement.orelse or isinstance(
                        statement.test, (gast.Name, gast.Constant))):
                    continue  # an empty else goes too where testing runs nothing
                if not statement.body:
                    statement.body = [gast.Pass()]
            if isinstance(statement, gast.With) and all(
                    isinstance(s, gast.Pass) or is_comment(s) for s in statement.body):
                continue  # a name scope around nothing
            if isinstance(statement, (gast.For, gast.While)) and all(
                    isinstance(s, gast.Pass) or is_comment(s) for s in statement.body):
                if isinstance(statement, gast.For) and _is_plain_range(statement.iter):
                    continue
            out.append(statement)
        return out
    body[:] = map_blocks(body, prune)


def _is_plain_range(node) -> bool:
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and node.func.id == "range")


def remove_orphan_comments(body):
    """Drop comments whose block of code was optimized away."""
    def prune(block):
        out = []
        for position, statement in enumerate(block):
            if is_comment(statement) and not _is_heading(statement):
                following = block[position + 1] if position + 1 < len(block) else None
                if following is None or is_comment(following):
                    continue
            out.append(statement)
        return out or [gast.Pass()]  # a block stays a block
    body[:] = map_blocks(body, prune)


def _is_heading(statement) -> bool:
    return statement.value.args[0].value.endswith("sweep")


IMPURE_BUILTINS = {print, input, open, next, iter}


def purity(namespace, helper_identifiers, impure=frozenset()):
    """pure(expression): whether cleanup may drop or move `expression`, which calls only
    rules and constants (but the impure builtins), or the helpers `helper_identifiers` (but
    those in `impure`), and yields nothing."""
    def pure(value) -> bool:
        for node in walk(value):
            if isinstance(node, (gast.Yield, gast.YieldFrom)):
                return False
            if isinstance(node, gast.Call):
                if isinstance(node.func, gast.Name) and node.func.id in impure:
                    return False
                if isinstance(node.func, gast.Name) and node.func.id in helper_identifiers:
                    continue
                resolved = classify(node.func, namespace)
                if resolved.kind not in ("rule", "constant"):
                    return False
                if resolved.value in IMPURE_BUILTINS:
                    return False
        return True
    return pure
