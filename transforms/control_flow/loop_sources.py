"""What the iterator of a `for` loop with a `break` is made from, for the loop's helper
(runtime/tracing/control_loops.py for_stmt, its `made_from`).

A Python loop whose break turns traced takes every item, so where Python's iterator would stop
is known only at run time. That is harmless where nothing reads the iterator after the loop: it
is made in the loop's header, by zip, enumerate, map, filter, reversed, iter, range or a
generator expression, from names whose values are lists, tuples or arrays, or from parts of
arrays (`x[1:]`), reading no other iterator (`next(it)` in a generator expression). The loop's
helper refuses the loop where one of the names it reads holds an iterator (`for v in it:`,
`zip(w, it)`), which may be read again after it; an iterator made in the header from anything
else (`for v in self.items:`, `for v in make_items(x):`, made_from None) nothing else holds:

    for i, v in enumerate(x[k:]):      made_from=((x, "indexed"), (k, "read"))
    for v in zip(w, it):               made_from=((w, "iterated"), (it, "iterated"))
    for v in it:                       made_from=((it, "iterated"),)
    for v in self.items:               made_from=((None, "kept"),)
    for v in make_items(x):            made_from=None

A header that reads an item or an attribute (`for v in holder[0]:`, `for v in self.items:`)
adds `(None, "kept")`: where its value is an iterator, not one an array's attribute makes
afresh (`x.flat`), the list, dict or object holds it after the loop, and the helper refuses
the loop too.
"""
from __future__ import annotations

import builtins

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
    kept = isinstance(iterable, (gast.Subscript, gast.Attribute))
    sources = [(None, "kept")] if kept else []
    if not _follow(iterable, namespace, sources, frozenset()):
        if not kept:
            return gast.Constant(value=None, kind=None)
        sources = [(None, "kept")]
    pairs = [gast.Tuple(elts=[name(variable) if variable is not None else gast.Constant(
        value=None, kind=None), gast.Constant(value=how, kind=None)], ctx=gast.Load())
        for variable, how in sources]
    return gast.Tuple(elts=pairs, ctx=gast.Load())


def _follow(node, namespace: dict, sources: list, local: frozenset) -> bool:
    """Add to `sources` what `node` reads its items from; False where it cannot be told."""
    if isinstance(node, gast.Name):
        sources.extend([(node.id, "iterated")] if node.id not in local else [])
        return True
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name):
        sources.extend([(node.value.id, "indexed")] if node.value.id not in local else [])
        _read(node.slice, sources, local)
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


def _follow_all(nodes, namespace: dict, sources: list, local: frozenset) -> bool:
    return all([_follow(n, namespace, sources, local) for n in nodes])


def _read(node, sources: list, local: frozenset) -> None:
    """Add the names `node` reads to `sources`: none may hold an iterator."""
    sources.extend((n.id, "read") for n in gast.walk(node)
                   if isinstance(n, gast.Name) and n.id not in local)
