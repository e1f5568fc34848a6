"""`items.extend(more)` and `items.insert(i, item)` in terms of `append` and `pop`.

The transforms follow a list through `append` and `pop` (reverse mode undoes them in its
adjoint sweep, forward mode repeats them on the tangent list). The other two methods that
grow a list become those, in place, before A-normal form:

    items.extend(more)          for _item in more:
                                    items.append(_item)

    items.insert(i, item)       _item = item
                                _tail = items[i:]
                                for _ in range(len(_tail)):
                                    items.pop()
                                items.append(_item)
                                for _item in _tail:
                                    items.append(_item)

    value = items.pop(i)        _position = i
                                (an IndexError where i is out of range, as pop raises)
                                _tail = items[_position:]
                                for _ in range(len(_tail)):
                                    items.pop()
                                value = _tail[0]
                                for _item in _tail[1:]:
                                    items.append(_item)

(`items[i:]` is what follows position i as `insert` reads it, negative or past the end.)

A loop reads `zip(a, b)`, `enumerate(a)` and `reversed(a)` by index, so the gradient reaches
the items (transforms/front/anf.py); one used as a value, kept in a name or passed to `list`, is made
the list it iterates over, in the same way: `[(_i, _j) for _i, _j in zip(a, b)]`. And
`sorted(items)` reads the items by index, in the order `sort_order` finds, and so does
`min(items, key=k)`, as `sorted(items, key=k)[0]` (max's with reverse=True).
`d.pop(key)` of a dict the function builds is transforms/front/dict_methods.py's; a dict that comes
from elsewhere is refused when the call runs.
"""
from __future__ import annotations

import gast

from ..codegen.visitors import NodeTransformer
from ..errors import Location
from ..codegen.naming import Namer
from .object_operators import ObjectClasses
from .parsing import MISSING, resolve
from ..codegen.codegen import to_source
from ..codegen.templates import name, replace
from ..codegen.nodes import walk

_EXTEND = """
for item in more:
    items.append(item)
"""
_INSERT = """
value = item
tail = items[index:]
for _ in range(len(tail)):
    items.pop()
items.append(value)
for each in tail:
    items.append(each)
"""
_POP_AT = """
position = index
if isinstance(items, dict):
    raise TypeError(not_followed)
if not -len(items) <= position < len(items):
    raise IndexError("pop index out of range")
tail = items[position:]
for _ in range(len(tail)):
    items.pop()
value = tail[0]
for each in tail[1:]:
    items.append(each)
"""
GROWING_METHODS = ("extend", "insert", "pop")


def rewrite_list_methods(function: gast.FunctionDef, location: Location, namer: Namer,
                         namespace: dict, helper) -> None:
    """Rewrite each `x.extend(...)`, `x.insert(...)` and `x.pop(i)` statement of `function`,
    and each zip, enumerate, reversed used as a value and each sorted, in place.
    helper(name): the name generated code calls a runtime helper by."""
    objects = ObjectClasses(function, namespace)  # (their own methods of these names)
    function.body = _block(function.body, location, namer, namespace, objects)
    as_lists = _IteratorsAsLists(namer, namespace, helper, location)
    function.body = [as_lists.visit(statement) for statement in function.body]


class _IteratorsAsLists(NodeTransformer):
    """`zip(a, b)` used as a value becomes `[(_i, _j) for _i, _j in zip(a, b)]` (enumerate
    and reversed too); where a loop iterates over it, it stays."""

    def __init__(self, namer: Namer, namespace: dict, helper, location: Location):
        self.namer = namer
        self.namespace = namespace
        self.helper = helper
        self.location = location

    def visit_FunctionDef(self, node):
        return node  # a function defined inside: lifted, and rewritten as its own

    visit_Lambda = visit_FunctionDef

    def visit_For(self, node):
        node.iter = self.iterated(node.iter)
        node.target, node.body, node.orelse = (self.visit(node.target),
                                               [self.visit(s) for s in node.body],
                                               [self.visit(s) for s in node.orelse])
        return node

    def visit_comprehension(self, node):
        node.iter = self.iterated(node.iter)
        node.ifs = [self.visit(condition) for condition in node.ifs]
        return node

    def iterated(self, iterable):
        """A loop's iterable: a lazy iterator there stays; its arguments are visited."""
        if self.lazy_width(iterable) is None:
            return self.visit(iterable)
        iterable.args = [self.visit(a) for a in iterable.args]
        return iterable

    def visit_Call(self, node):
        self.generic_visit(node)
        if (isinstance(node.func, gast.Name) and resolve(node.func, self.namespace) is sorted
                and len(node.args) == 1):
            return self.sorted_by_index(node)
        if self.extremum_by_key(node):
            return self.first_sorted(node)
        width = self.lazy_width(node)
        if width is None:
            return node
        items = [self.namer.temporary("item") for _ in range(width)]
        if width == 1:
            element, target = name(items[0]), name(items[0], store=True)
        else:
            element = gast.Tuple(elts=[name(i) for i in items], ctx=gast.Load())
            target = gast.Tuple(elts=[name(i, store=True) for i in items], ctx=gast.Store())
        made = gast.ListComp(elt=element, generators=[gast.comprehension(
            target=target, iter=node, ifs=[], is_async=0)])
        _locate(made, node)
        return made

    def sorted_by_index(self, node):
        """`sorted(items, ...)` as `[_x[_i] for _x in [sequence(items)] for _i in
        sort_order(_x, ...)]`: the items, read by index in sorted order, carry their gradients
        (sorted, a builtin without a rule, gave none). `sequence` makes a dict its keys."""
        held, index = self.namer.temporary("items"), self.namer.temporary("index")
        order = gast.Call(func=name(self.helper("sort_order")), args=[name(held)],
                          keywords=node.keywords)
        made = gast.ListComp(
            elt=gast.Subscript(value=name(held), slice=name(index), ctx=gast.Load()),
            generators=[gast.comprehension(target=name(held, store=True), iter=gast.List(
                elts=[gast.Call(func=name(self.helper("sequence")), args=node.args,
                                keywords=[])], ctx=gast.Load()), ifs=[], is_async=0),
                gast.comprehension(target=name(index, store=True), iter=order, ifs=[],
                                   is_async=0)])
        _locate(made, node)
        return made

    def extremum_by_key(self, node) -> bool:
        """A call `min(items, key=k)` or `max(a, b, key=k)` (no `default`, nothing unpacked)."""
        return (isinstance(node.func, gast.Name) and node.args
                and resolve(node.func, self.namespace) in (min, max)
                and [k.arg for k in node.keywords] == ["key"]
                and not any(isinstance(a, gast.Starred) for a in node.args))

    def first_sorted(self, node):
        """`min(items, key=k)` as `sorted(items, key=k)[0]`, read by index as sorted is (the
        builtin's rule takes no key): the first item of the least key, as min gives; max's
        sorts with reverse=True, which keeps equal keys in order: the first of the greatest."""
        items = node.args[0] if len(node.args) == 1 else gast.List(elts=node.args,
                                                                   ctx=gast.Load())
        keywords = list(node.keywords)
        if resolve(node.func, self.namespace) is max:
            keywords.append(gast.keyword(arg="reverse", value=gast.Constant(value=True,
                                                                            kind=None)))
        ordered = self.sorted_by_index(gast.Call(func=node.func, args=[items],
                                                 keywords=keywords))
        first = gast.Subscript(value=ordered, slice=gast.Constant(value=0, kind=None),
                               ctx=gast.Load())
        _locate(first, node)
        return first

    def lazy_width(self, node) -> int | None:
        """How many names an item of the lazy iterator `node` unpacks into, or None."""
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)):
            return None
        function = resolve(node.func, self.namespace)
        if function is zip and any(isinstance(a, gast.Starred) for a in node.args):
            raise self.location.error(
                node, f"autotrace follows zip(...) of the arguments written out, which it "
                f"counts; {to_source(node).strip()} passes them unpacked: write them out, or "
                f"index the items (`[pair[0] for pair in pairs]` for `zip(*pairs)`)", "zip")
        if function is reversed and len(node.args) == 1 and not node.keywords:
            return 1
        if function is enumerate and node.args:
            return 2
        if function is zip and node.args and not node.keywords:
            return len(node.args)
        return None


def _block(statements, location, namer, namespace, objects) -> list:
    out = []
    for statement in statements:
        for field in ("body", "orelse"):
            block = getattr(statement, field, None)
            if isinstance(block, list) and not isinstance(statement, gast.FunctionDef):
                setattr(statement, field, _block(block, location, namer, namespace, objects))
        call, target = None, None
        if isinstance(statement, gast.Expr):
            call = statement.value
        elif (isinstance(statement, gast.Assign) and len(statement.targets) == 1
              and isinstance(statement.targets[0], gast.Name)):
            call, target = statement.value, statement.targets[0]
        method = _growing_method(call, namespace, objects)
        if method == "pop" and (len(call.args) != 1 or call.keywords):
            method = None  # items.pop(): followed as it is
        elif method != "pop" and target is not None:
            method = None  # y = items.extend(...): refused below
        if not isinstance(statement, (gast.If, gast.For, gast.While, gast.With)):  # (done)
            _refuse_changes_inside(statement, location, namespace)
        if method is None:
            _refuse_as_value(statement, location, namespace, objects)
            out.append(statement)
            continue
        items = call.func.value
        if method == "extend" and len(call.args) == 1 and not call.keywords:
            new = replace(_EXTEND, item=namer.temporary("item"), more=call.args[0],
                          items=items)
        elif method == "insert" and len(call.args) == 2 and not call.keywords:
            new = replace(_INSERT, value=namer.temporary("item"), item=call.args[1],
                          tail=namer.temporary("tail"), items=items, index=call.args[0],
                          _=namer.temporary("i"), each=namer.temporary("item"))
        elif method == "pop":
            owner = to_source(items).strip()
            not_followed = (f'File "{location.filename}", line {location.line_of(statement)}: '
                            f"autotrace cannot differentiate {owner}.pop(key) of a dict that the "
                            "function does not build itself (with a literal, a comprehension or "
                            f"dict(...)); change a copy with a name of its own, e.g. new = "
                            f"dict({owner})")
            new = replace(_POP_AT, position=namer.temporary("position"), index=call.args[0],
                          items=items, not_followed=gast.Constant(value=not_followed, kind=None),
                          tail=namer.temporary("tail"), _=namer.temporary("i"),
                          value=target or name(namer.temporary("popped"), store=True),
                          each=namer.temporary("item"))
        else:
            out.append(statement)  # a wrong call: Python says so when it runs
            continue
        for node in new:
            _locate(node, statement)
        out.extend(new)
    return out


def _growing_method(call, namespace, objects) -> str | None:
    """"extend", "insert" or "pop" for a call of that method on a value (not a module
    function, nor an object the source tells the class of, whose own method it is)."""
    if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr in GROWING_METHODS
            and resolve(call.func, namespace) is MISSING
            and not (isinstance(call.func.value, gast.Name)
                     and call.func.value.id in ("self", "cls"))
            and not isinstance(objects.of(call.func.value), frozenset)):
        return call.func.attr
    return None


# Methods that change the list or dict they are called on.
_CHANGING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                     "update", "setdefault", "popitem"}


def _refuse_changes_inside(statement, location: Location, namespace: dict) -> None:
    """`d["a"].append(v)`: a change to a list or dict held in another container, which the
    transforms would not see (they follow names; the gradient of d would miss it)."""
    for node in walk(statement):
        if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                and node.func.attr in _CHANGING_METHODS
                and isinstance(node.func.value, gast.Subscript)):
            held, method = to_source(node.func.value).strip(), node.func.attr
            copy = "dict" if method in ("update", "setdefault", "popitem") else "list"
            raise location.error(
                node, f"autotrace cannot differentiate {held}.{method}(...): it changes in "
                f"place a value held in a container, where the gradient cannot follow it; "
                f"change a copy in a name of its own and store it back, e.g. inner = "
                f"{copy}({held}); inner.{method}(...); {held} = inner", f".{method}")


def _refuse_as_value(statement, location: Location, namespace: dict, objects) -> None:
    """`y = x.extend(...)` (None) is no growing of a list the transforms can follow, nor is
    `2 * x.pop(i)`."""
    for node in walk(statement):
        method = _growing_method(node, namespace, objects)
        if method == "pop" and (len(node.args) != 1 or node.keywords):
            continue  # items.pop(): followed anywhere
        if method == "pop":
            raise location.error(
                node, "autotrace follows .pop(i) as a statement of its own, or assigned to a "
                "name (value = items.pop(i)); call it on its own line", ".pop")
        if method is not None:
            raise location.error(
                node, f"autotrace follows .{method}(...) only as a statement of its own "
                f"(it returns None); call it on its own line", f".{method}")


def _locate(node, like) -> None:
    for child in walk(node):
        if hasattr(child, "lineno") or isinstance(child, (gast.stmt, gast.expr)):
            gast.copy_location(child, like)
