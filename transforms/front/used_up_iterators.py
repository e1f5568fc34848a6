"""Refuse an iterator kept in a name and read again after a read has taken items from it.

The transforms make `zip(a, b)`, `enumerate(a)`, `reversed(a)`, `map`, `filter`, the iterators
of itertools and generator expressions lists they index (transforms/front/list_methods.py,
itertools_loops.py, maps_and_filters.py), which every read sees whole. Python's iterator is
used up as it is read: a second loop over it resumes where a break left the first, or runs no
iteration at all. So where one iterator kept in a name may be read twice, the read that may
come second is refused with its line:

    z = zip(w, x)
    for a, b in z:                       (first read)
        s = s + a * b
    for a, b in z:                       refused: Python's zip gives no items here
        s = s + b

A read is any use of the name but a plain copy to another (`y = z`: both names hold the one
iterator). Reads are counted along each path through the function: a loop's body is read as if
it ran twice (a read inside a loop the iterator is not made in is refused), an `if` counts the
larger of its branches, and a path that returns counts no further. A function or lambda that
reads the name may run any number of times, so reads there count twice. Rebinding the name
starts over (`pairs = list(pairs)` reads the zip once and holds a list).
"""
from __future__ import annotations

import builtins

import gast

from ..codegen.codegen import to_source
from ..errors import Location
from .parsing import resolve

_MAKERS = (builtins.zip, builtins.enumerate, builtins.reversed, builtins.map, builtins.filter,
           builtins.iter)
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
_ENDS = (gast.Return, gast.Raise, gast.Break, gast.Continue)


def refuse_used_up_iterators(function: gast.FunctionDef, namespace: dict,
                             location: Location) -> None:
    """Raise where an iterator `function` keeps in a name may be read after another read (see
    the module docstring); functions defined inside are checked as their own."""
    _Paths(namespace, location).block(function.body, _State())


class _Iterator:
    """One iterator kept in a name: the statement that makes it, and how it makes it."""

    def __init__(self, node, made: str):
        self.node, self.made = node, made


class _State:
    """Along one path: the iterators each name may hold, and how often each was read."""

    def __init__(self, held=None, reads=None):
        self.held = dict(held or {})  # name -> frozenset of _Iterator
        self.reads = dict(reads or {})  # _Iterator -> reads so far

    def copy(self) -> _State:
        return _State(self.held, self.reads)

    def bind(self, variable: str, iterators=frozenset()) -> None:
        self.held[variable] = frozenset(iterators)

    @staticmethod
    def merge(states) -> _State | None:
        """What may hold after any of `states` (None: a path that returned)."""
        states = [s for s in states if s is not None]
        if not states:
            return None
        merged = _State()
        for state in states:
            for variable, iterators in state.held.items():
                merged.held[variable] = merged.held.get(variable, frozenset()) | iterators
            for iterator, count in state.reads.items():
                merged.reads[iterator] = max(merged.reads.get(iterator, 0), count)
        return merged


class _Paths:
    def __init__(self, namespace: dict, location: Location):
        self.namespace = namespace
        self.location = location
        self.loop_exits = []  # per enclosing loop: the states a break or continue leaves

    def block(self, statements, state):
        for statement in statements:
            if state is None:
                return None
            state = self.statement(statement, state)
        return state

    def statement(self, node, state):
        if isinstance(node, _SCOPES):
            self.scope(node, state)
            if not isinstance(node, gast.Lambda):
                state.bind(node.name)
            return state
        if isinstance(node, (gast.Assign, gast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            copied = isinstance(node.value, gast.Name) and all(
                isinstance(t, gast.Name) for t in targets)  # (y = z: both hold one iterator)
            if not copied:
                self.read(node.value, state)
            made = self.made(node.value)
            iterator = _Iterator(node, made) if made else None
            for target in targets:
                self.read(target, state)  # (a of a[i] = v)
                if isinstance(target, gast.Name) and copied:
                    state.bind(target.id, state.held.get(node.value.id, ()))
                elif isinstance(target, gast.Name) and iterator is not None:
                    state.bind(target.id, {iterator})
                    state.reads[iterator] = 0
                else:
                    self.unbind(target, state)
            return state
        if isinstance(node, gast.AugAssign):
            self.read(node.value, state)
            self.read(node.target, state)
            self.unbind(node.target, state)
            return state
        if isinstance(node, gast.If):
            self.read(node.test, state)
            return _State.merge([self.block(node.body, state.copy()),
                                 self.block(node.orelse, state.copy())])
        if isinstance(node, (gast.For, gast.AsyncFor, gast.While)):
            return self.loop(node, state)
        if isinstance(node, (gast.With, gast.AsyncWith)):
            for item in node.items:
                self.read(item.context_expr, state)
                if item.optional_vars is not None:
                    self.unbind(item.optional_vars, state)
            return self.block(node.body, state)
        if isinstance(node, gast.Try):
            tried = self.block(node.body, state.copy())
            ends = [self.block(node.orelse, tried.copy()) if tried is not None else None]
            for handler in node.handlers:
                start = _State.merge([state, tried])
                if handler.name is not None:
                    self.unbind(handler.name, start)
                ends.append(self.block(handler.body, start))
            return self.block(node.finalbody, _State.merge(ends) or _State.merge([state]))
        if isinstance(node, gast.Delete):
            for target in node.targets:
                self.unbind(target, state)
            return state
        for child in gast.iter_child_nodes(node):
            if isinstance(child, gast.expr):
                self.read(child, state)
        if isinstance(node, (gast.Break, gast.Continue)) and self.loop_exits:
            self.loop_exits[-1].append(state)
        return None if isinstance(node, _ENDS) else state

    def loop(self, node, state):
        """A loop's body read as if it ran twice, after it ran no time, once or twice."""
        if not isinstance(node, gast.While):
            self.read(node.iter, state)
        starts, ends = [state], []
        self.loop_exits.append(ends)
        for _ in range(2):
            start = _State.merge(starts + ends)
            if isinstance(node, gast.While):
                self.read(node.test, start)
            else:
                self.unbind(node.target, start)
            starts.append(self.block(node.body, start))
        self.loop_exits.pop()
        after = _State.merge(starts + ends)
        return self.block(node.orelse, after) if after is not None else None

    def scope(self, node, state) -> None:
        """A function or class defined here: its own iterators, and the names it reads from
        this function's (any number of times)."""
        outer = list(getattr(node, "decorator_list", []))
        if isinstance(node, gast.ClassDef):
            outer += node.bases + [k.value for k in node.keywords]
        else:
            outer += node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
        for expression in outer:
            self.read(expression, state)
        body = node.body if isinstance(node.body, list) else [gast.Expr(value=node.body)]
        own = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
               and not isinstance(n.ctx, gast.Load)}
        outside = _State({v: i for v, i in state.held.items() if v not in own}, state.reads)
        if not isinstance(node, gast.Lambda):
            _Paths(self.namespace, self.location).block(body, _State())
        for _ in range(2):
            for statement in body:
                self.read(statement, outside, skip_own=own)
        state.reads.update(outside.reads)

    def read(self, node, state, skip_own=frozenset()) -> None:
        """Count the reads of `node` (an expression, or a statement of a function defined
        here); a comprehension's parts after its first iterable are read again and again."""
        if isinstance(node, _COMPREHENSIONS):
            first, *rest = node.generators
            self.read(first.iter, state, skip_own)
            inner = skip_own | {n.id for g in node.generators for n in gast.walk(g.target)
                                if isinstance(n, gast.Name)}
            parts = [node.elt] if not isinstance(node, gast.DictComp) else [node.key,
                                                                             node.value]
            parts += [c for g in node.generators for c in g.ifs] + [g.iter for g in rest]
            for _ in range(2):
                for part in parts:
                    self.read(part, state, inner)
            return
        if isinstance(node, gast.Lambda):
            self.scope(node, state)
            return
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and \
                node.id not in skip_own:
            for iterator in state.held.get(node.id, ()):
                state.reads[iterator] = state.reads.get(iterator, 0) + 1
                if state.reads[iterator] > 1:
                    construct = iterator.made.split("(")[0] or "generator expression"
                    line = self.location.line_of(iterator.node)
                    raise self.location.error(node, _refusal(node.id, iterator, line),
                                              construct)
            return
        for child in gast.iter_child_nodes(node):
            self.read(child, state, skip_own)

    @staticmethod
    def unbind(target, state) -> None:
        """The names `target` assigns (a name itself, for an except clause's) hold no
        iterator now."""
        if isinstance(target, str):
            state.bind(target)
            return
        for n in gast.walk(target):
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
                state.bind(n.id)

    def made(self, value) -> str | None:
        """How `value` makes an iterator (`zip(...)`), or None where it makes none."""
        if isinstance(value, gast.GeneratorExp):
            return "(... for ...)"
        if not isinstance(value, gast.Call):
            return None
        function = resolve(value.func, self.namespace)
        if any(function is maker for maker in _MAKERS) or getattr(
                function, "__module__", None) == "itertools":
            return f"{to_source(value.func).strip()}(...)"
        return None


def _refusal(name: str, iterator: _Iterator, line: int) -> str:
    made = iterator.made
    listed = "[... for ...]" if made.startswith("(") else f"list({made})"
    return (f"{name} holds the iterator {made} made on line {line}, which an earlier read "
            f"(or this one, run before in a loop or a function defined here) has taken items "
            f"from: Python's iterator gives this read only the items left (none after a loop "
            f"over it), where autotrace would give all of them again; write {name} = {listed} "
            f"to read its items more than once")
