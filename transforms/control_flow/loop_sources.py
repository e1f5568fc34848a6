"""What the iterator of a `for` loop with a `break` is made from, for the loop's helper
(runtime/tracing/control_loops.py for_stmt, its `made_from`).

A Python loop whose break turns traced takes every item, so where Python's iterator would stop
is known only at run time. That is harmless where nothing reads the iterator after the loop: it
is made in the loop's header, by zip, enumerate, map, filter, reversed, iter, range or a
generator expression, from names whose values are lists, tuples or arrays, or from parts of
arrays (`x[1:]`), reading no other iterator (`next(it)` in a generator expression). The loop's
helper refuses the loop where one of the names or paths of attributes and items it reads
holds an iterator (`for v in it:`, `zip(w, it)`, `for v in self.items:` where `self.items` is a
generator), which may be read again after it; an iterator a call in the header makes
(`for v in make_items(x):`, made_from None) nothing else holds:

    for i, v in enumerate(x[k:]):      made_from=((x, "indexed"), (k, "read"))
    for v in zip(w, it):               made_from=((w, "iterated"), (it, "iterated"))
    for v in it:                       made_from=((it, "iterated"),)
    for v in self.items:               made_from=((self.items, "iterated"),)
    for v in make_items(x):            made_from=None
"""
from __future__ import annotations

import builtins
import copy

import gast

from ..front.parsing import resolve
from ..codegen.templates import name

# What these make reads its iterable arguments from their first item (map's and filter's
# first argument is their function).
_ITERATORS = (builtins.enumerate, builtins.zip, builtins.reversed, builtins.iter,
              builtins.range, builtins.list, builtins.tuple, builtins.sorted)
_WITH_FUNCTION = (builtins.map, builtins.filter)
# Expressions that make a new value, which no iterator outside the loop reads from.
_NEW_VALUES = (gast.Constant, gast.List, gast.Tuple, gast.ListComp, gast.Dict, gast.DictComp,
               gast.Set, gast.SetComp, gast.BinOp, gast.UnaryOp, gast.Compare)


def loop_sources(iterable, namespace: dict):
    """The `made_from` expression of a loop over `iterable` (see the module docstring)."""
    sources = []
    if not _follow(iterable, namespace, sources, frozenset()):
        return gast.Constant(value=None, kind=None)
    pairs = [gast.Tuple(elts=[name(source) if isinstance(source, str) else copy.deepcopy(source),
                              gast.Constant(value=how, kind=None)], ctx=gast.Load())
             for source, how in sources]
    return gast.Tuple(elts=pairs, ctx=gast.Load())


def _follow(node, namespace: dict, sources: list, local: frozenset) -> bool:
    """Add to `sources` what `node` reads its items from; False where it cannot be told."""
    if isinstance(node, gast.Name):
        sources.extend([(node.id, "iterated")] if node.id not in local else [])
        return True
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and isinstance(
            node.slice, gast.Slice):
        sources.extend([(node.value.id, "indexed")] if node.value.id not in local else [])
        _read(node.slice, sources, local)
        return True
    if isinstance(node, (gast.Attribute, gast.Subscript)) and _path(node, local):
        sources.append((node, "iterated"))  # (read again by the loop's helper: no call in it)
        return True
    if isinstance(node, _NEW_VALUES):
        return True
    if isinstance(node, gast.GeneratorExp):
        # Every name the generator reads may be an iterator its items take from (`next(it)`).
        targets = local | {n.id for g in node.generators for n in gast.walk(g.target)
                           if isinstance(n, gast.Name)}
        for part in [node.elt] + [c for g in node.generators for c in g.ifs]:
            _read(part, sources, targets)
        return _follow_all([g.iter for g in node.generators], namespace, sources, targets)
    if isinstance(node, gast.Call) and not any(
            isinstance(a, gast.Starred) for a in node.args):
        function = resolve(node.func, namespace)
        if any(function is f for f in _ITERATORS):
            return _follow_all(node.args, namespace, sources, local)
        if any(function is f for f in _WITH_FUNCTION):
            return _follow_all(node.args[1:], namespace, sources, local)
    return False


def _path(node, local: frozenset) -> bool:
    """Whether `node` is a path of attributes and items from a name outside the loop's
    generators (`self.items`, `its[0]`, `d["it"]`, `h.it`), which reads no call."""
    while isinstance(node, (gast.Attribute, gast.Subscript)):
        if isinstance(node, gast.Subscript) and not all(
                isinstance(part, (gast.Name, gast.Constant)) for part in gast.walk(node.slice)
                if not isinstance(part, (gast.expr_context, gast.Tuple))):
            return False
        node = node.value
    return isinstance(node, gast.Name) and node.id not in local


def _follow_all(nodes, namespace: dict, sources: list, local: frozenset) -> bool:
    return all([_follow(n, namespace, sources, local) for n in nodes])


def _read(node, sources: list, local: frozenset) -> None:
    """Add the names `node` reads to `sources`: none may hold an iterator."""
    sources.extend((n.id, "read") for n in gast.walk(node)
                   if isinstance(n, gast.Name) and n.id not in local)
