"""Building dicts and changing the ones a function builds, in terms the transforms follow.

The transforms follow a dict through literals (`{"a": x}`), comprehensions, reads `d[k]`,
`k in d`, and writes `d[k] = v` (reverse mode undoes each write in its adjoint sweep). The
other ways of building and changing a dict become those, before A-normal form:

    dict(a=x, b=y)              {"a": x, "b": y}
    dict(source)                {_key: _value for _key, _value in <the pairs of source>}
    dict(source, a=x)           the same over the pairs, then ("a", x)
    {**source, "a": x}          the same, over source's items, then ("a", x)
    d.get(k, default)           d[k] if k in d else default (where the function's source
                                does not say d is a dict: if hasattr(d, "keys"), else
                                d's own get)
    {...}.get(k, default)       the same, with the dict (a literal, a comprehension or a
                                dict(...) call, which nothing else holds) read once;
                                setdefault and pop on one are reads too
    make(x).get(k, default)     the same, the value held once

    d.setdefault(k, v)          _key = k
                                _default = v
                                if _key not in d:
                                    d[_key] = _default
                                (y = d[_key], for y = d.setdefault(k, v))

    d.update(source, a=x)       _pairs = dict(source, a=x), as above
                                for _key, _value in _pairs.items():
                                    d[_key] = _value

    y = d.pop(k, default)       _key = k
                                _default = default
                                if _key in d:
                                    y = d[_key]
                                    d = {_k: d[_k] for _k in d if _k != _key}
                                else:
                                    y = _default

`source` is a mapping (its items), or pairs: `zip(keys, values)`, a list of tuples. Where the
function's source does not say which, the generated code asks (`hasattr(source, "keys")`).

`setdefault`, `update`, `pop` and `copy` change or copy a dict the function builds itself:
every assignment of its name is a dict literal, a comprehension or a `dict(...)` call. A dict
that came from elsewhere (an argument, a call) may be shared with the caller, and one that
another name or a container shares (`e = d`, `[d]`) would change there too, unseen by the
gradient: those are refused, as is a write `d[k] = v` into a shared one.
"""
from __future__ import annotations

import collections
import functools

import gast

from ..codegen.visitors import NodeTransformer
from ..codegen.nodes import copy_tree
from ..errors import Location
from ..codegen.naming import SCOPES, Namer
from .parsing import resolve
from ..codegen.templates import name, replace, replace_expression
from ..codegen.nodes import children, nodes_of, walk

CHANGING_METHODS = ("setdefault", "update", "pop")


def rewrite_dict_methods(function: gast.FunctionDef, location: Location, namer: Namer,
                         namespace: dict) -> None:
    """Rewrite dict(...) calls and the dict methods of `function` in place (see the module
    docstring). (may_change_dicts says first whether there is anything to rewrite.)"""
    rewriter = _DictRewriter(function, location, namer, namespace)
    rewriter.check_sharing()
    function.body = rewriter.block(function.body)


def may_change_dicts(function: gast.FunctionDef) -> bool:
    """Whether rewrite_dict_methods may rewrite or refuse anything in `function`: False where
    it holds no node that the rewrite starts from, which most functions do not, so that their
    nodes and bindings need not be collected.

    Every rewrite and refusal needs one of them: a dict the function builds (a literal, a
    comprehension or a `dict(...)` call, without which no name is a dict's and no value built
    in an expression either), or a method that is rewritten or refused on any receiver
    (`get`, and `setdefault` or `update`, refused on a name that is no dict). `pop` and
    `copy` change nothing of a name that is no dict's. The walk enters nested functions too,
    which the rewrite leaves alone: it may run where it changes nothing, never the reverse."""
    for node in nodes_of(function):
        if isinstance(node, (gast.Dict, gast.DictComp)):
            return True
        if isinstance(node, gast.Name) and node.id == "dict":
            return True
        if isinstance(node, gast.Attribute) and node.attr in _ANY_RECEIVER_METHODS:
            return True
    return False


# The methods rewritten or refused on a receiver not known to be a dict
_ANY_RECEIVER_METHODS = ("get", "setdefault", "update")


def _own_nodes(node):
    """`node` and what it contains, but for the bodies of functions and lambdas defined in it
    (their names are their own; comprehensions are entered), depth first, in source order."""
    # A stack, not recursion: a recursive generator hands each node up through every level
    # above it. A node's children are pushed last to first, so that the first is taken next.
    todo = [node]
    pop, push = todo.pop, todo.extend
    while todo:
        node = pop()
        yield node
        if not isinstance(node, _OWN_SCOPES):
            push(reversed(children(node)))


_OWN_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


class _DictRewriter:
    def __init__(self, function, location: Location, namer: Namer, namespace: dict):
        self.location = location
        self.namer = namer
        self.namespace = namespace
        self.nodes = [n for statement in function.body for n in _own_nodes(statement)]
        self.parameters = {a.id for a in function.args.posonlyargs + function.args.args
                           + function.args.kwonlyargs}
        bindings = [binding for node in self.nodes for binding in _bindings(node)]
        self.local_names = {target for target, _ in bindings} | self.parameters
        # Names every assignment of which builds a new dict; a parameter too, where the first
        # statement that names it is one of those (`p = dict(p)`), at the top of the function.
        self.dicts = {target for target, _ in bindings} - {
            target for target, value in bindings if value is None or not self.builds_dict(value)}
        for parameter in self.parameters & self.dicts:
            first = next(s for s in function.body if parameter in _names(s))
            if not (isinstance(first, gast.Assign) and len(first.targets) == 1
                    and isinstance(first.targets[0], gast.Name)
                    and first.targets[0].id == parameter):
                self.dicts.discard(parameter)

    def builds_dict(self, value) -> bool:
        return isinstance(value, (gast.Dict, gast.DictComp)) or self.is_dict_call(value)

    def is_dict_call(self, node) -> bool:
        return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                and node.func.id == "dict" and "dict" not in self.local_names
                and resolve(node.func, self.namespace) is dict)

    def receiver(self, call, methods) -> str | None:
        """The local name `call` calls one of `methods` of (`d` in `d.update(...)`)."""
        if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and call.func.attr in methods and isinstance(call.func.value, gast.Name)
                and call.func.value.id in self.local_names
                and call.func.value.id not in ("self", "cls")):
            return call.func.value.id
        return None

    # ---- dicts that other names or containers share ------------------------------------------

    def check_sharing(self) -> None:
        """Refuse a change to a built dict after another name or a container came to hold it
        too (or in a loop that also shares it): the change would reach the other holder.
        (`d = {}; d[k] = v; e = d` shares it after the changes: that is no change to e.)"""
        order = {id(node): position for position, node in enumerate(self.nodes)}
        loops = collections.defaultdict(set)  # the loops around each node
        for loop in self.nodes:
            if isinstance(loop, (gast.For, gast.While)):
                for inner in _own_nodes(loop):
                    loops[id(inner)].add(id(loop))
        changes = collections.defaultdict(list)
        for node in self.nodes:
            owner = self.receiver(node, CHANGING_METHODS)
            if owner in self.dicts:
                changes[owner].append(node)
            if isinstance(node, (gast.Assign, gast.AugAssign)):
                for target in node.targets if isinstance(node, gast.Assign) else [node.target]:
                    if (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)
                            and target.value.id in self.dicts):
                        changes[target.value.id].append(node)
        returned = {id(n) for node in self.nodes if isinstance(node, gast.Return)
                    and node.value is not None for n in walk(node.value)}
        for node in self.nodes:
            if id(node) in returned:  # `return d, loss`: nothing changes it afterwards
                continue
            for shared in _shared_names(node):
                for change in changes.get(shared.id, ()):
                    if order[id(change)] > order[id(node)] or self.changes_again(
                            shared.id, change, node, order, loops):
                        raise self.location.error(
                            shared, f"the dict {shared.id!r} is shared here, and changed in "
                            f"place on line {self.location.line_of(change)}: the change would "
                            "reach the other holder, where autotrace cannot follow it; share a "
                            f"copy (dict({shared.id})), or make the change a new dict",
                            "shared dict")

    def changes_again(self, owner: str, change, share, order: dict, loops: dict) -> bool:
        """Whether a loop around both runs `change` after `share`, on the dict shared: no
        new dict is bound to `owner` on the way from the share, around the loop, to the
        change (`_pairs = {}` at the top of the loop gives each iteration its own)."""
        common = loops[id(change)] & loops[id(share)]
        return bool(common) and not any(
            common <= loops[id(binding)]
            and not order[id(change)] < order[id(binding)] < order[id(share)]
            for binding in self.nodes if isinstance(binding, gast.Assign)
            and any(isinstance(t, gast.Name) and t.id == owner for t in binding.targets))

    # ---- statements ------------------------------------------------------------------------------

    def block(self, statements) -> list:
        out = []
        for statement in statements:
            for field in ("body", "orelse"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and not isinstance(statement, SCOPES):
                    setattr(statement, field, self.block(inner))
            new = self.statement(statement)
            for node in new:
                if node is not statement:
                    _locate(node, statement)
            out.extend(new)
        return out

    def statement(self, statement) -> list:
        call, target = None, None
        if isinstance(statement, gast.Expr):
            call = statement.value
        elif (isinstance(statement, gast.Assign) and len(statement.targets) == 1
              and isinstance(statement.targets[0], gast.Name)):
            call, target = statement.value, statement.targets[0].id
        owner = self.receiver(call, CHANGING_METHODS)
        if owner in self.dicts:
            self.refuse_nested(call.args + [k.value for k in call.keywords])
            rewritten = self.change(owner, call, target)
            if rewritten is not None:
                return self.expressions(rewritten)
        self.refuse_nested([statement])
        return self.expressions([statement])

    def change(self, owner: str, call, target) -> list | None:
        """The statements for `target = owner.method(...)` (or the call alone), or None for
        a call Python refuses (it says so when the call runs)."""
        method, args = call.func.attr, call.args
        if method == "update" and target is not None:
            self.refuse_nested([call])  # y = d.update(...): None
        if method == "update" and len(args) <= 1:
            return self.update(owner, call)
        if call.keywords or not 1 <= len(args) <= 2:
            return None
        return (self.setdefault if method == "setdefault" else self.pop)(owner, args, target)

    def refuse_nested(self, nodes) -> None:
        """Refuse the changing methods in `nodes` (parts of expressions): those of a dict the
        function builds may stand as statements alone, other dicts' never; `pop` on a name
        that is no dict is a list's."""
        for root in nodes:
            for node in _own_nodes(root):
                owner = self.receiver(node, CHANGING_METHODS)
                if owner is None or owner not in self.dicts and node.func.attr == "pop":
                    continue
                if owner not in self.dicts:
                    raise self.not_built(node, owner)
                call = f"{owner}.{node.func.attr}(...)"
                how = (f"as a statement of its own (it returns None)"
                       if node.func.attr == "update" else
                       f"as a statement of its own, or assigned to a name (value = {call})")
                raise self.location.error(
                    node, f"autotrace follows {call} {how}; call it on its own line",
                    f".{node.func.attr}")

    def not_built(self, call, owner: str):
        method = call.func.attr
        if owner in self.parameters:
            where = "an argument"
            advice = (f"copy it first, in the first statement that names it: {owner} = "
                      f"dict({owner})")
        else:
            where = "not built here"
            advice = f"change a copy with a name of its own, e.g. new = dict({owner})"
        return self.location.error(
            call, f"autotrace cannot differentiate {owner}.{method}(): it changes {owner!r} in "
            f"place, and {owner!r} is {where} (autotrace follows changes to a dict the "
            f"function builds itself, with a literal, a comprehension or dict(...)); {advice}",
            f".{method}")

    def setdefault(self, owner: str, args, target) -> list:
        key, default = self.namer.temporary("key"), self.namer.temporary("default")
        value = args[1] if len(args) == 2 else gast.Constant(value=None, kind=None)
        out = replace("key = k\ndefault = v\nif key not in d:\n    d[key] = default",
                      key=key, k=args[0], default=default, v=value, d=owner)
        if target is not None:
            out += replace("target = d[key]", target=target, d=owner, key=key)
        return out

    def pop(self, owner: str, args, target) -> list:
        key = self.namer.temporary("key")
        target = target or self.namer.temporary("popped")
        others = self.namer.temporary("key")
        rest = replace("d = {other: d[other] for other in d if other != key}", d=owner,
                       other=others, key=key)
        if len(args) == 1:  # a missing key raises KeyError, as dict.pop does
            return replace("key = k\ntarget = d[key]\nrest", key=key, k=args[0],
                           target=target, d=owner, rest=rest)
        default = self.namer.temporary("default")
        return replace("key = k\ndefault = v\nif key in d:\n    target = d[key]\n    rest\n"
                       "else:\n    target = default", key=key, k=args[0], default=default,
                       v=args[1], target=target, d=owner, rest=rest)

    def update(self, owner: str, call) -> list:
        pairs, key, value = (self.namer.temporary(hint) for hint in ("pairs", "key", "value"))
        built = self.dict_call(call.args[0] if call.args else None, call.keywords)
        return replace("pairs = built\nfor key, value in pairs.items():\n    d[key] = value",
                       pairs=pairs, built=built, key=key, value=value, d=owner)

    # ---- expressions ------------------------------------------------------------------------

    def expressions(self, statements) -> list:
        """`dict(...)` calls and `.get(...)` in `statements` rewritten, in place."""
        rewriter = self

        class Rewrite(NodeTransformer):
            def visit_FunctionDef(self, node):
                return node  # its own scope: rewritten when it is differentiated

            visit_Lambda = visit_ClassDef = visit_FunctionDef

            def visit_Dict(self, node):
                self.generic_visit(node)
                if any(key is None for key in node.keys):  # {**p, "w": w}
                    return _located(rewriter.unpacked_dict(node), node)
                return node

            def visit_Call(self, node):
                self.generic_visit(node)
                if rewriter.is_dict_call(node) and len(node.args) <= 1:
                    return _located(rewriter.dict_call(node.args[0] if node.args else None,
                                                       node.keywords), node)
                owner = rewriter.receiver(node, ("get",))
                if owner is not None and 1 <= len(node.args) <= 2 and not node.keywords:
                    return _located(rewriter.read(owner, node, owner in rewriter.dicts), node)
                read = rewriter.read_of_unnamed(node)
                if read is not None:
                    return _located(read, node)
                owner = rewriter.receiver(node, ("copy",))
                if owner in rewriter.dicts and not node.args and not node.keywords:
                    return _located(rewriter.dict_call(name(owner), []), node)
                return node
        return [Rewrite().visit(statement) for statement in statements]

    def read_of_unnamed(self, call) -> gast.expr | None:
        """`{...}.get(k, default)` (or `setdefault`, `pop`) on a dict built in the expression
        itself, which nothing else holds, and `.get` on a value with no name (`make(x).get(k)`):
        a read, with the receiver held once by a one-item list."""
        if not (isinstance(call.func, gast.Attribute) and not call.keywords
                and 1 <= len(call.args) <= 2 and not isinstance(call.func.value, gast.Name)):
            return None
        method, built = call.func.attr, self.builds_dict(call.func.value)
        if not (method == "get" or built and method in ("setdefault", "pop")):
            return None
        held = self.namer.temporary("held")
        return gast.Subscript(
            value=gast.ListComp(elt=self.read(held, call, built), generators=[
                _generator(name(held, True), gast.List(elts=[call.func.value], ctx=gast.Load()))]),
            slice=gast.Constant(value=0, kind=None), ctx=gast.Load())

    @staticmethod
    def read(held: str, call, known_dict: bool) -> gast.expr:
        """What `held.get(k, default)` reads (`held.pop(k)`: `held[k]`). Where the function's
        source does not say `held` is a dict, the generated code asks (`hasattr(held,
        "keys")`), and any other value's own `get` is called."""
        key = call.args[0]
        if call.func.attr == "pop" and len(call.args) == 1:  # a missing key raises KeyError
            return replace_expression("held[key]", held=held, key=key)
        default = call.args[1] if len(call.args) == 2 else gast.Constant(value=None, kind=None)
        read = replace_expression("held[key] if key in held else default", held=held, key=key,
                                  default=default)
        if known_dict:
            return read
        own = gast.Call(func=gast.Attribute(value=name(held), attr="get", ctx=gast.Load()),
                        args=[copy_tree(a) for a in call.args], keywords=[])
        return replace_expression("read if hasattr(held, 'keys') else own", read=read,
                                  held=held, own=own)

    def dict_call(self, source, keywords) -> gast.expr:
        """`dict(source, **keywords)` as a literal or a comprehension."""
        if source is None:
            return gast.Dict(keys=[gast.Constant(value=k.arg, kind=None) for k in keywords],
                             values=[k.value for k in keywords])
        key, value = self.namer.temporary("key"), self.namer.temporary("value")
        generators = self.pair_generators(source, key, value)
        if keywords:  # the pairs of source, then those of the keywords
            pairs = gast.BinOp(
                left=gast.ListComp(elt=_pair(name(key), name(value)), generators=generators),
                op=gast.Add(),
                right=gast.List(elts=[_pair(gast.Constant(value=k.arg, kind=None), k.value)
                                      for k in keywords], ctx=gast.Load()))
            key, value = self.namer.temporary("key"), self.namer.temporary("value")
            generators = [_generator(_pair(name(key, True), name(value, True)), pairs)]
        return gast.DictComp(key=name(key), value=name(value), generators=generators)

    def unpacked_dict(self, node: gast.Dict) -> gast.expr:
        """`{**p, "w": w}` as a comprehension over the pairs of its parts, in order: the
        items of each mapping unpacked, the pairs written out."""
        parts = []
        for key_node, value_node in zip(node.keys, node.values):
            if key_node is not None:
                if not parts or not isinstance(parts[-1], gast.List):
                    parts.append(gast.List(elts=[], ctx=gast.Load()))
                parts[-1].elts.append(_pair(key_node, value_node))
                continue
            key, value = self.namer.temporary("key"), self.namer.temporary("value")
            parts.append(gast.ListComp(elt=_pair(name(key), name(value)), generators=[
                _generator(_pair(name(key, True), name(value, True)), _items(value_node))]))
        pairs = functools.reduce(lambda left, right: gast.BinOp(left=left, op=gast.Add(),
                                                                right=right), parts)
        key, value = self.namer.temporary("key"), self.namer.temporary("value")
        return gast.DictComp(key=name(key), value=name(value), generators=[
            _generator(_pair(name(key, True), name(value, True)), pairs)])

    def pair_generators(self, source, key: str, value: str) -> list:
        """Comprehension clauses binding `key, value` to each pair `dict(source)` reads."""
        target = _pair(name(key, True), name(value, True))
        if isinstance(source, (gast.Dict, gast.DictComp)):
            return [_generator(target, _items(source))]
        if isinstance(source, (gast.List, gast.Tuple, gast.ListComp)) or (
                isinstance(source, gast.Call) and (
                    resolve(source.func, self.namespace) in (zip, enumerate)
                    or isinstance(source.func, gast.Attribute) and source.func.attr == "items"
                    and not source.args)):
            return [_generator(target, source)]
        if isinstance(source, gast.Name):
            return [_generator(target, _pairs_of(source))]
        held = self.namer.temporary("source")  # read once: a one-item list holds it
        return [_generator(name(held, True), gast.List(elts=[source], ctx=gast.Load())),
                _generator(target, _pairs_of(name(held)))]


def _bindings(node):
    """(name, value or None) for each name `node` binds in the function's own scope."""
    if isinstance(node, gast.Assign):
        for target in node.targets:
            if isinstance(target, gast.Name):
                yield target.id, node.value
            elif isinstance(target, (gast.Tuple, gast.List)):
                for element in walk(target):
                    if isinstance(element, gast.Name):
                        yield element.id, None
    elif isinstance(node, gast.AnnAssign) and isinstance(node.target, gast.Name):
        yield node.target.id, node.value
    elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
        yield node.target.id, None
    elif isinstance(node, gast.For):
        for element in walk(node.target):
            if isinstance(element, gast.Name):
                yield element.id, None
    elif isinstance(node, (gast.FunctionDef, gast.ClassDef)):
        yield node.name, None


def _names(node) -> set:
    return {n.id for n in walk(node) if isinstance(n, gast.Name)}


def _shared_names(node):
    """The names `node` hands to another name or a container as they are (`e = d`, `[d]`,
    `x[i] = d`, `items.append(d)`), so that a change through one reaches the other."""
    if isinstance(node, (gast.Assign, gast.AnnAssign)) and isinstance(node.value, gast.Name):
        yield node.value
    elif isinstance(node, (gast.List, gast.Tuple, gast.Set)):
        yield from (e for e in node.elts if isinstance(e, gast.Name))
    elif isinstance(node, gast.Dict):
        yield from (v for v in node.values if isinstance(v, gast.Name))
    elif isinstance(node, (gast.ListComp, gast.SetComp, gast.GeneratorExp)) and isinstance(
            node.elt, gast.Name):
        yield node.elt
    elif isinstance(node, gast.DictComp) and isinstance(node.value, gast.Name):
        yield node.value
    elif (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
          and node.func.attr in ("append", "insert", "extend", "setdefault", "update")):
        yield from (a for a in node.args if isinstance(a, gast.Name))


def _pair(key, value) -> gast.Tuple:
    ctx = gast.Store() if isinstance(getattr(key, "ctx", None), gast.Store) else gast.Load()
    return gast.Tuple(elts=[key, value], ctx=ctx)


def _generator(target, iterable) -> gast.comprehension:
    return gast.comprehension(target=target, iter=iterable, ifs=[], is_async=0)


def _items(mapping) -> gast.Call:
    return gast.Call(func=gast.Attribute(value=mapping, attr="items", ctx=gast.Load()),
                     args=[], keywords=[])


def _pairs_of(source: gast.Name) -> gast.expr:
    """The pairs `dict(source)` reads, decided when it runs: a mapping's items, or source."""
    return replace_expression("items if hasattr(source, 'keys') else source",
                              items=_items(name(source.id)), source=source.id)


def _located(new, like):
    return _locate(new, like) or new


def _locate(node, like) -> None:
    for child in walk(node):
        if isinstance(child, (gast.stmt, gast.expr)) and getattr(child, "lineno", None) is None:
            gast.copy_location(child, like)
