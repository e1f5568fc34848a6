"""Names that hold part of an object's state across a write into that state.

`p = self.parameters`, then `self.parameters["W"] = w` (a write the function makes,
transforms/analysis/given_state_writes.py), then `p["W"]`: p is the dict written into, and reads the new
value. Its gradient reaches `self`'s where p was bound, before the write, whose adjoint has
taken the value's gradient by then: it would go to the value the slot held before. So such
a read is refused at its line; a read of another slot of p (`p["b"]`), or of p bound after the
write, is followed as any read is. A method called on the object may write into its state
too (a cache, a running mean): a name bound before the call to a container the object holds,
read after it, is refused unless autotrace reads the method's code and finds no write into
its object's state.

The function is in A-normal form: each alias is bound by `a = b.attribute`, `a = b[key]` or
`a = b`, from a root (an object that carries gradient).
"""
from __future__ import annotations

import gast

from ...runtime.derivatives.state_writes import GROWING
from ..codegen.nodes import walk
from .object_state import is_state_write
from ..front.parsing import MISSING, resolve
from .object_state import _attribute_write, held_attributes, function_called
from ..front.parsing import parse_function
from .argument_writes import parameter_names
from ..codegen.naming import walk_scope

# A key not known before running: it may be any.
_ANY = object()


def refuse_stale_aliases(body: list, roots: set, location, namespace: dict,
                         writes_state) -> None:
    """Refuse a read, after a write into the state of one of `roots` (or a call that may
    make one: `writes_state(call, root)` says whether), of a name bound before it to a
    container the write changes (see the module docstring)."""
    order, parents = _positions(body)
    tuples = {s.targets[0].id: s.value for s in order
              if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
              and isinstance(s.value, gast.Tuple)}
    aliases = _aliases(order, roots)
    if not aliases:
        return
    for statement in order:
        written = _written_path(statement, roots, tuples, namespace)
        if written is None:
            written = _call_writing(statement, roots, writes_state)
        if written is None:
            continue
        root, path = written
        later = _after(statement, parents)
        for alias, (alias_root, alias_path, bound) in aliases.items():
            if alias_root != root or not _holds(alias_path, path):
                continue
            if all(id(b) in later and not _shares_loop(b, statement, parents) for b in bound):
                continue  # bound after the write: it reads the new state through the root
            for use in order:
                if id(use) not in later or use is statement or any(
                        _bound_between(b, use, statement, parents) for b in bound):
                    continue
                read = _stale_read(use, alias, alias_path, path)
                if read:
                    raise location.error(use, _MESSAGE.format(
                        alias=alias, line=location.line_of(statement)),
                        "write into an object's state")


_MESSAGE = (
    "autotrace cannot differentiate this read of {alias!r}: it holds part of an object's "
    "state, bound before the write into that state at line {line}, and reads what the write "
    "changed, whose gradient autotrace would send to the value held before the write; read "
    "it through the object again after the write (self.parameters[...], not {alias}[...])")


def _positions(body: list) -> tuple:
    """(the statements of `body` in order, nested ones included; statement id -> (the list
    it is in, the statement holding that list or None))."""
    order, parents = [], {}

    def visit(block, owner):
        for statement in block:
            order.append(statement)
            parents[id(statement)] = (block, owner)
            if isinstance(statement, (gast.FunctionDef, gast.ClassDef)):
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    visit(inner, statement)
    visit(body, None)
    return order, parents


def _after(statement, parents: dict) -> set:
    """The ids of the statements that may run after `statement`: those after it in its
    block, every statement of a loop around it, and so on outwards (not the other branch of
    an `if` it is in)."""
    out = set()
    node = statement
    while True:
        block, owner = parents[id(node)]
        index = next(i for i, s in enumerate(block) if s is node)
        for later in block[index + 1:]:
            out.update(id(n) for n in walk(later) if isinstance(n, gast.stmt))
        if owner is None:
            return out
        if isinstance(owner, (gast.For, gast.While)):
            out.update(id(n) for n in walk(owner) if isinstance(n, gast.stmt))
        node = owner


def _index_in(block: list, node, parents: dict):
    """The index in `block` of the statement that is `node` or holds it, or None."""
    while True:
        holder, owner = parents[id(node)]
        if holder is block:
            return next(i for i, s in enumerate(block) if s is node)
        if owner is None:
            return None
        node = owner


def _bound_between(binding, use, write, parents: dict) -> bool:
    """Whether every way from `write` to `use` runs `binding` in between: the binding comes
    before the use in a block that holds both, and the write is not between them there."""
    block = parents[id(binding)][0]
    at, used = _index_in(block, binding, parents), _index_in(block, use, parents)
    if used is None or used <= at:
        return False
    written = _index_in(block, write, parents)
    return written is None or not at < written <= used


def _shares_loop(a, b, parents: dict) -> bool:
    """Whether a loop encloses both statements."""
    def loops(node):
        found = set()
        while parents[id(node)][1] is not None:
            node = parents[id(node)][1]
            if isinstance(node, (gast.For, gast.While)):
                found.add(id(node))
        return found
    return bool(loops(a) & loops(b))


def _aliases(order: list, roots: set) -> dict:
    """name -> (root, path from the root, the statements binding it) for names bound to part
    of a root's state (to a fixed point: `q = p[k]` after `p = self.a`)."""
    aliases: dict = {}
    changed = True
    while changed:
        changed = False
        for statement in order:
            if not (isinstance(statement, gast.Assign) and isinstance(statement.targets[0],
                                                                      gast.Name)):
                continue
            target, value = statement.targets[0].id, statement.value
            found = _part_of(value, roots, aliases)
            if found is None or target in roots:
                continue
            root, path = found
            known = aliases.get(target)
            if known is None:
                aliases[target] = (root, path, [statement])
                changed = True
            elif not any(s is statement for s in known[2]):
                known[2].append(statement)
                changed = True
    return aliases


def _part_of(value, roots: set, aliases: dict):
    """(root, path) of the part of a root's state `value` reads, or None."""
    if isinstance(value, gast.Name):
        if value.id in aliases:
            return aliases[value.id][:2]
        return (value.id, ()) if value.id in roots else None
    if isinstance(value, (gast.Attribute, gast.Subscript)) and isinstance(value.value,
                                                                          gast.Name):
        base = _part_of(value.value, roots, aliases)
        if base is None:
            return None
        if isinstance(value, gast.Attribute):
            key = value.attr
        else:
            key = value.slice.value if isinstance(value.slice, gast.Constant) else _ANY
        return base[0], base[1] + (key,)
    return None


def _written_path(statement, roots: set, tuples: dict, namespace: dict):
    """(root, path) of `root = write_state(root, kinds, keys, ...)`, else None."""
    call = statement.value if isinstance(statement, gast.Assign) else None
    if not (is_state_write(call, namespace)
            and isinstance(call.args[0], gast.Name) and call.args[0].id in roots):
        return None
    keys = call.args[2]
    keys = tuples.get(keys.id, keys) if isinstance(keys, gast.Name) else keys
    path = tuple(k.value if isinstance(k, gast.Constant) else _ANY
                 for k in keys.elts) if isinstance(keys, gast.Tuple) else (_ANY,)
    symbol = call.args[4].value if len(call.args) > 4 and isinstance(
        call.args[4], gast.Constant) else None
    if symbol in GROWING:
        path = path[:-1] + (_ANY,)  # the list grows: its length changes too
    return call.args[0].id, path


def _call_writing(statement, roots: set, writes_state):
    """(root, a path any write may have) for a call given a root (its method, or an
    argument) that may write into the root's state, else None."""
    call = statement.value if isinstance(statement, (gast.Assign, gast.Expr)) else None
    if not isinstance(call, gast.Call):
        return None
    given = [call.func.value] if isinstance(call.func, gast.Attribute) else []
    given += call.args + [k.value for k in call.keywords]
    for argument in given:
        if isinstance(argument, gast.Name) and argument.id in roots and \
                writes_state(call, argument.id):
            return argument.id, (_ANY, _ANY)
    return None


def _holds(alias_path: tuple, written: tuple) -> bool:
    """Whether the part of the state at `alias_path` contains the slot `written` changes
    (a container the write changes in place: a proper prefix of its path)."""
    if not alias_path or len(alias_path) >= len(written):
        return False
    return all(a is _ANY or w is _ANY or a == w for a, w in zip(alias_path, written))


def _stale_read(use, alias: str, alias_path: tuple, written: tuple) -> bool:
    """Whether the statement `use` reads, through `alias`, what the write changed: an item or
    attribute on the way to the slot written, or the alias itself otherwise (passed on,
    returned, copied)."""
    depth = len(alias_path)
    if isinstance(use, (gast.If, gast.While)):
        use = use.test  # (its body's statements are uses of their own)
    elif isinstance(use, gast.For):
        use = use.iter
    elif isinstance(use, (gast.With, gast.Try, gast.FunctionDef, gast.ClassDef)):
        return False
    for node in walk(use):
        if isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(
                node.value, gast.Name) and node.value.id == alias:
            key = node.attr if isinstance(node, gast.Attribute) else (
                node.slice.value if isinstance(node.slice, gast.Constant) else _ANY)
            wanted = written[depth]
            if key is _ANY or wanted is _ANY or key == wanted:
                return True
    reads = [n for n in walk(use) if isinstance(n, gast.Name) and n.id == alias
             and isinstance(n.ctx, gast.Load)]
    through = [n for n in walk(use) if isinstance(n, (gast.Subscript, gast.Attribute))
               and isinstance(n.value, gast.Name) and n.value.id == alias]
    return len(reads) > len(through)


def method_may_write(namespace: dict):
    """writes_state(call, root) for `refuse_stale_aliases`: False where autotrace reads the
    method or function called and finds no write into the state of what it is given."""

    def writes_state(call, root: str) -> bool:
        callee = resolve(call.func, namespace)
        if callee is MISSING:
            return True  # found when it runs: it may
        function, _ = function_called(callee)
        if function is None:
            return False  # NumPy's, autotrace's, the standard library's
        try:
            node = parse_function(function).node
        except Exception:  # noqa: BLE001 - no source: nothing known
            return True
        parameters = parameter_names(node)
        nodes = [n for statement in node.body for n in walk_scope(statement)]
        held = held_attributes(nodes, parameters)
        everything = {n.id for n in nodes if isinstance(n, gast.Name)} | set(parameters)
        # (a method it calls on what it is given may write: taken as one that does)
        return any(_attribute_write(n, held, everything) is not None or (
            isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
            and isinstance(n.func.value, gast.Name) and n.func.value.id in parameters)
            for n in nodes)
    return writes_state
