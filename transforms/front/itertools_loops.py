"""The iterators of itertools, and zip with keywords or endless arguments, written out as list
comprehensions that every mode differentiates. Each reads its iterables once, as lists, and
indexes them by the positions the same iterator yields over their ranges, so the gradient of
an item reaches the item it came from:

    for a, b in pairwise(points):      for a, b in [(_seq1[_k1], _seq1[_k2])
                                                    for _seq1 in [list(points)]
                                                    for _k1, _k2 in pairwise(range(len(_seq1)))]

combinations, combinations_with_replacement, permutations, product, islice, zip_longest (its
fillvalue last in each list, at index -1) and zip(..., strict=...) alike; zip's endless
arguments are ranges longer than any list in the zip of positions (count(start, step) of whole
numbers gives their values, repeat(v)'s items read v). chain(a, b) is
`[_v for _q in (a, b) for _v in _q]`, repeat(v, n) `[_r for _r in [v] for _ in range(n)]`.
accumulate(xs, f, initial=i) in a for loop's header (or in `totals = list(...)`) is the list
of its running values, built by a loop before it. An iterator whose iterables are all ranges
stays: its items are constants. A zip with keywords used as a value is the list it iterates
over, as a plain zip is (transforms/front/list_methods.py).

Only where the iterator is read whole, at once (the places transforms/front/maps_and_filters.py
rewrites: a for loop's or a comprehension's iterable, the argument of list, tuple, sum, ...).
count(), cycle and repeat(v) never end but in zip beside a sequence or as islice's iterable
(which stays, as Python's, as accumulate elsewhere does): elsewhere they are refused, with what
to write. zip_longest lists a range argument to add its fillvalue.
"""
from __future__ import annotations

import builtins
import itertools

import gast

from ..codegen.visitors import NodeTransformer
from ..codegen.naming import Namer, names_in
from ..codegen.nodes import rewrite_statements, walk
from ..codegen.templates import replace
from ..errors import Location
from .maps_and_filters import WHOLE_READERS
from .parsing import resolve

_OF_POSITIONS = (itertools.pairwise, itertools.combinations, itertools.permutations,
                 itertools.combinations_with_replacement, itertools.product, itertools.islice,
                 itertools.zip_longest, builtins.zip)
_ENDLESS = (itertools.count, itertools.cycle, itertools.repeat)
# The iterators of itertools written out where they are read whole.
WRITTEN_OUT = _OF_POSITIONS[:-1] + (itertools.chain, itertools.repeat, itertools.accumulate)
_ACCUMULATE = """
values = []
for item in iterable:
    if len(values) == 0:
        values.append(item)
    else:
        values.append(step)
"""


def write_out_itertools(function: gast.FunctionDef, namespace: dict,
                        location: Location) -> None:
    """Rewrite each iterator of itertools (and zip) read whole in `function` (see the module
    docstring) in place."""
    Iterators(function, namespace, location).rewrite()


class Iterators:
    """The rewrite of one function's iterators, with the names it reads them by."""

    def __init__(self, function, namespace: dict, location: Location):
        self.function = function
        self.namespace = namespace
        self.location = location
        self.assigned = {n.id for n in walk(function)
                         if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
        self.namer = None

    def rewrite(self) -> None:
        if not any(isinstance(n, gast.Call) and (self.written(n) or resolve(
                n.func, self.namespace) is itertools.groupby) for n in walk(self.function)):
            return
        self.namer = Namer(names_in(self.function))
        comprehensions = {id(g): c for c in walk(self.function) if isinstance(
            c, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp))
            for g in c.generators}
        for node in walk(self.function):
            if isinstance(node, (gast.For, gast.comprehension)):
                self.check_groups(node)
                self.check_unwritten(node, node.body if isinstance(node, gast.For) else
                                     [comprehensions[id(node)]])
        rewrite_statements(self.function, self.accumulated)
        for node in walk(self.function):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.args \
                    and any(self.function_of(node) is reader for reader in WHOLE_READERS):
                node.args[0] = self.iterable(node.args[0])
            elif isinstance(node, (gast.For, gast.comprehension)):
                node.iter = self.iterable(node.iter)
        _ZipsAsLists(self).visit(self.function)

    def check_groups(self, loop) -> None:
        """Refuse groupby(...) in a loop's iterable: its groups are iterators, used up by the
        time the loop, which reads its iterable whole first, reads them."""
        grouped = next((c for c in walk(loop.iter) if isinstance(c, gast.Call) and
                        resolve(c.func, self.namespace) is itertools.groupby), None)
        if grouped is not None:
            raise self.location.error(
                grouped, "autotrace reads a loop's iterable whole, before the loop, and the "
                "groups groupby(...) yields are iterators used up by then: loop over the items "
                "and compare each key with the one before", "groupby")

    def check_unwritten(self, loop, body: list) -> None:
        """Refuse a loop over an iterator written out whose body writes into what the
        iterator reads (the list is read before the loop; Python's iterator sees the write),
        or, over accumulate(xs, f), changes a variable f reads (its steps run before the
        loop)."""
        call = next((c for c in walk(loop.iter) if isinstance(c, gast.Call)
                     and self.written(c)), None)
        if call is None:
            return
        name = self.function_of(call).__name__
        written = _written_into(body)
        read = {n.id for n in walk(loop.iter) if isinstance(n, gast.Name)}
        if read & written:
            raise self.location.error(
                loop.iter, f"autotrace reads {name}(...)'s items before the loop, and the loop "
                f"writes into {sorted(read & written)[0]}, which Python's {name} would read "
                f"after the write: index the items in the loop body instead", name)
        if self.function_of(loop.iter) is itertools.accumulate and isinstance(loop, gast.For):
            options = {k.arg: k.value for k in loop.iter.keywords}
            combine = loop.iter.args[1] if len(loop.iter.args) == 2 else options.get("func")
            if combine is None:
                return
            nodes = list(walk(combine))
            nodes += [n for d in walk(self.function) if isinstance(d, gast.FunctionDef)
                      and isinstance(combine, gast.Name) and d.name == combine.id
                      for n in walk(d)]
            changed = {n.id for s in loop.body + [loop.target] for n in walk(s)
                       if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
            own = {n.id for n in walk(combine.args) if isinstance(n, gast.Name)} \
                if isinstance(combine, gast.Lambda) else set()
            read = {n.id for n in nodes if isinstance(n, gast.Name)} - own & (
                changed | written)
            if read:
                raise self.location.error(
                    loop.iter, f"autotrace runs accumulate(...)'s steps before the loop, and "
                    f"the loop changes {sorted(read)[0]}, which its function reads: write "
                    f"the running value in the loop (total = f(total, item))", name)

    def written(self, call) -> bool:
        """Whether `call` is one this module writes out where it is read whole."""
        function = self.function_of(call)
        if function is builtins.zip:
            return bool(call.keywords) or any(self.endless(a) for a in call.args)
        return function in _OF_POSITIONS + _ENDLESS or function in (
            itertools.chain, itertools.chain.from_iterable, itertools.accumulate)

    def function_of(self, call):
        if isinstance(call.func, gast.Name) and call.func.id in self.assigned:
            return None
        function = resolve(call.func, self.namespace)
        if function == itertools.chain.from_iterable:
            return itertools.chain.from_iterable
        known = _OF_POSITIONS + _ENDLESS + WHOLE_READERS + (
            itertools.chain, itertools.accumulate, builtins.enumerate, builtins.reversed)
        return next((f for f in known if function is f), None)

    def iterable(self, node):
        """`node`, an iterable read whole, written out where it is an iterator of itertools;
        the iterables of zip, enumerate and reversed are so too."""
        if not isinstance(node, gast.Call) or getattr(node, "written_out", False) or any(
                isinstance(a, gast.Starred) for a in node.args):
            return node
        function = self.function_of(node)
        if function is None:
            return node
        if function in (builtins.enumerate, builtins.reversed):
            if node.args:
                node.args[0] = self.iterable(node.args[0])
            return node
        if function is itertools.accumulate or function is itertools.islice and (
                node.args and self.endless(node.args[0])):
            return node  # (an accumulate outside a loop's header, an islice bounding an
            # endless iterator: Python runs them, as any iterator it is not written out)
        if function in _ENDLESS and not (function is itertools.repeat and
                                         len(node.args) + len(node.keywords) == 2):
            raise self.location.error(
                node, f"autotrace reads a loop's iterable whole, before the loop, and "
                f"{function.__name__}(...) never ends: write a while loop with a counter, or "
                f"zip it with a sequence that ends", function.__name__)
        if function is builtins.zip and any(self.endless(a) for a in node.args) and (
                all(self.endless(a) for a in node.args) or any(
                    k.arg == "strict" and not (isinstance(k.value, gast.Constant)
                                               and k.value.value is False)
                    for k in node.keywords)):
            raise self.location.error(
                node, "autotrace reads a loop's iterable whole, before the loop, and this "
                "zip(...) never ends or, strict, always raises: zip an endless count(...) or "
                "repeat(...) with a sequence that ends, without strict=True", "zip")
        endless = next((a for a in node.args if self.endless(a)), None)
        if function is not builtins.zip and endless is not None:
            raise self.location.error(
                node, f"autotrace reads {function.__name__}(...) whole, before the loop, and "
                f"{self.function_of(endless).__name__}(...) in it never ends: pass a range or "
                f"a list", function.__name__)
        if function is builtins.zip and not node.keywords and endless is None:
            node.args = [self.iterable(a) for a in node.args]
            return node  # followed by position already (transforms/front/anf.py)
        if function in _OF_POSITIONS or function in (itertools.chain, itertools.repeat,
                                                     itertools.chain.from_iterable):
            node.args = [a if self.endless(a) else self.iterable(a) for a in node.args]
            return _located(self.written_out(node, function), node)
        return node

    def endless(self, node) -> bool:
        return isinstance(node, gast.Call) and self.function_of(node) in _ENDLESS and not (
            self.function_of(node) is itertools.repeat and len(node.args) + len(node.keywords)
            == 2)

    def written_out(self, call, function):
        temporary = self.namer.temporary
        if function is itertools.chain or function == itertools.chain.from_iterable:
            part, item = temporary("part"), temporary("item")
            parts = call.args[0] if function is not itertools.chain else gast.Tuple(
                elts=call.args, ctx=gast.Load())
            return _comprehension(_name(item), [(part, parts), (item, _name(part))])
        if function is itertools.repeat:
            given = dict(zip(("object", "times"), call.args))
            given.update({k.arg: k.value for k in call.keywords})
            item = temporary("item")
            return _comprehension(_name(item), [
                (item, gast.List(elts=[given["object"]], ctx=gast.Load())),
                (temporary("unused"), gast.Call(func=_name("range"), args=[given["times"]],
                                                keywords=[]))])
        iterables = [a for a in call.args if not self.endless(a)] if function is builtins.zip \
            else _iterable_arguments(call, function)
        if not iterables or all(self.is_range(a) for a in iterables) and not any(
                self.endless(a) for a in call.args):
            return call  # positions already: constants
        fill = next((k.value for k in call.keywords if k.arg == "fillvalue"),
                    gast.Constant(value=None, kind=None))
        sequences, lists, positions, readers = [], [], [], []
        fills = []  # zip_longest's fillvalue, computed once: the generator that binds it
        if function is itertools.zip_longest and not isinstance(fill, (gast.Constant,
                                                                       gast.Name)):
            bound_fill = temporary("fill")
            fills.append(gast.comprehension(
                target=_name(bound_fill, gast.Store()),
                iter=gast.List(elts=[fill], ctx=gast.Load()), ifs=[], is_async=0))
            fill = _name(bound_fill)
        for argument in call.args:
            if any(argument is a for a in iterables):
                sequence = temporary("seq")
                sequences.append(sequence)
                listed = argument if isinstance(argument, (gast.List, gast.ListComp)) or \
                    self.is_range(argument) and function is not itertools.zip_longest else \
                    gast.Call(func=_name("list"), args=[argument], keywords=[])
                if function is itertools.zip_longest:
                    listed = gast.BinOp(left=listed, op=gast.Add(),
                                        right=gast.List(elts=[fill], ctx=gast.Load()))
                lists.append(listed)
                positions.append(_positions(sequence, function))
                readers.append(lambda position, sequence=sequence: _read(sequence, position))
            elif function is not builtins.zip:  # r of combinations, islice's bounds
                positions.append(argument)
            elif self.function_of(argument) is itertools.repeat and argument.args:
                value = temporary("seq")  # repeat(v): v, bound once
                sequences.append(value)
                lists.append(argument.args[0])
                positions.append(_endless_range(0, 1))
                readers.append(lambda position, value=value: _name(value))
            else:
                positions.append(self.counted(argument))
                readers.append(_name)  # count(...)'s value, as zip gives it
        keywords = [k for k in call.keywords if k.arg != "fillvalue"] + (
            [gast.keyword(arg="fillvalue", value=gast.Constant(value=-1, kind=None))]
            if function is itertools.zip_longest else [])
        of_positions = gast.Call(func=call.func, args=positions, keywords=keywords)
        of_positions.written_out = True
        if function in (builtins.zip, itertools.zip_longest):
            names = [temporary("k") for _ in call.args]
            target = gast.Tuple(elts=[_name(n, gast.Store()) for n in names], ctx=gast.Store())
            element = gast.Tuple(elts=[read(n) for read, n in zip(readers, names)],
                                 ctx=gast.Load())
        else:
            target, element = _items(call, function, sequences, temporary)
        bound = gast.Tuple(elts=[_name(s, gast.Store()) for s in sequences], ctx=gast.Store()) \
            if len(sequences) > 1 else _name(sequences[0], gast.Store())
        bound_lists = gast.List(elts=[gast.Tuple(elts=lists, ctx=gast.Load())
                                      if len(lists) > 1 else lists[0]], ctx=gast.Load())
        return gast.ListComp(elt=element, generators=fills + [
            gast.comprehension(target=bound, iter=bound_lists, ifs=[], is_async=0),
            gast.comprehension(target=target, iter=of_positions, ifs=[], is_async=0)])

    def counted(self, argument):
        """count(start, step) of whole numbers, an endless argument of zip, as it stands in
        the zip of positions: a range as long as no list can be (a range, not an iterator,
        for a derivative of the derivative to read as a constant)."""
        if self.function_of(argument) is itertools.count:
            given = dict(zip(("start", "step"), argument.args))
            given.update({k.arg: k.value for k in argument.keywords})
            start, step = given.get("start", _constant(0)), given.get("step", _constant(1))
            if not (_whole_number(start) is not None and _whole_number(step)):
                raise self.location.error(
                    argument, "autotrace follows count(...) in zip with whole numbers written "
                    "out as its start and step; use enumerate(..., start=...), or a range",
                    "count")
            return _endless_range(_whole_number(start), _whole_number(step))
        raise self.location.error(
            argument, "autotrace follows zip(...) with count(...) or repeat(value) among its "
            "arguments; cycle(...) never ends there: index the items instead", "cycle")

    def is_range(self, node) -> bool:
        return isinstance(node, gast.Call) and resolve(node.func, self.namespace) is range

    def accumulated(self, statement):
        """A for loop over accumulate(...) (or `name = list(accumulate(...))`, tuple(...)):
        the loop that builds its running values, then the statement, reading them."""
        call = self.accumulate_call(statement)
        if call is None:
            return None
        options = {k.arg: k.value for k in call.keywords}
        combine = call.args[1] if len(call.args) == 2 else options.get("func")
        values, item = self.namer.temporary("running"), self.namer.temporary("item")
        previous = gast.Subscript(value=_name(values), slice=gast.Constant(value=-1, kind=None),
                                  ctx=gast.Load())
        step = gast.BinOp(left=previous, op=gast.Add(), right=_name(item)) \
            if combine is None or _is_none(combine) else \
            gast.Call(func=combine, args=[previous, _name(item)], keywords=[])
        built = replace(_ACCUMULATE, values=values, item=item, iterable=call.args[0], step=step)
        if "initial" in options and not _is_none(options["initial"]):
            built[0].value.elts.append(options["initial"])
        if isinstance(step, gast.Call) and not isinstance(step.func,
                                                          (gast.Name, gast.Attribute)):
            bound = self.namer.temporary("combine")  # (a lambda: called by a name)
            built.insert(0, gast.Assign(targets=[_name(bound, gast.Store())], value=step.func,
                                        type_comment=None))
            step.func = _name(bound)
        for node in built:
            _located(node, statement)
        if isinstance(statement, gast.For):
            statement.iter = _name(values)
        else:
            statement.value.args[0] = _name(values)
        return built + [statement]

    def accumulate_call(self, statement):
        """The accumulate(...) call `statement` reads first and whole, or None."""
        if isinstance(statement, gast.For):
            call = statement.iter
        elif isinstance(statement, gast.Assign) and len(statement.targets) == 1 and \
                isinstance(statement.targets[0], gast.Name) and \
                isinstance(statement.value, gast.Call) and \
                self.function_of(statement.value) in (list, tuple) and \
                len(statement.value.args) == 1 and not statement.value.keywords:
            call = statement.value.args[0]
        else:
            return None
        if isinstance(call, gast.Call) and self.function_of(call) is itertools.accumulate \
                and 1 <= len(call.args) <= 2 \
                and not any(isinstance(a, gast.Starred) for a in call.args):
            return call
        return None


class _ZipsAsLists(NodeTransformer):
    """A zip with keywords or endless arguments used as a value is the list it iterates over,
    as transforms/front/list_methods.py makes a plain zip one."""

    def __init__(self, iterators: Iterators):
        self.iterators = iterators

    def visit_Call(self, node):
        self.generic_visit(node)
        if self.iterators.function_of(node) is builtins.zip and (
                node.keywords or any(self.iterators.endless(a) for a in node.args)):
            return self.iterators.iterable(node)
        return node


_MUTATING = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
             "update", "setdefault", "popitem", "add", "discard", "fill", "put", "resize",
             "__setitem__", "__iadd__", "__delitem__"}


def _written_into(body: list) -> set:
    """The names whose values `body` may write into: stored into by item or attribute, added
    to in place (+=), or given to a method that changes its object."""
    written = set()
    for node in (n for statement in body for n in walk(statement)):
        target = None
        if isinstance(node, (gast.Subscript, gast.Attribute)) and not isinstance(
                node.ctx, gast.Load):
            target = node.value
        elif isinstance(node, gast.AugAssign):
            target = node.target
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                node.func.attr in _MUTATING:
            target = node.func.value
        while isinstance(target, (gast.Subscript, gast.Attribute)):
            target = target.value
        if isinstance(target, gast.Name):
            written.add(target.id)
    return written


def _located(tree, like):
    """`tree`, its new nodes at the position of `like` (the user's line)."""
    for node in walk(tree):
        if isinstance(node, (gast.stmt, gast.expr)) and getattr(node, "lineno", None) is None:
            gast.copy_location(node, like)
    return tree


def _iterable_arguments(call, function) -> list:
    if function in (itertools.product, itertools.zip_longest):
        return list(call.args)
    return call.args[:1]


def _positions(sequence: str, function):
    """range(len(_seq)), less the fill value zip_longest's list ends with."""
    length = gast.Call(func=_name("len"), args=[_name(sequence)], keywords=[])
    if function is itertools.zip_longest:
        length = gast.BinOp(left=length, op=gast.Sub(), right=gast.Constant(value=1, kind=None))
    return gast.Call(func=_name("range"), args=[length], keywords=[])


def _items(call, function, sequences, temporary):
    """(target, element): the names of one item of the zip of positions, and the item."""
    if function is itertools.islice:
        position = temporary("k")
        return _name(position, gast.Store()), _read(sequences[0], position)
    width = _width(call, function)
    if width is None:  # a tuple of unknown length: read position by position
        positions, each, at = temporary("ks"), temporary("k"), temporary("p")
        if len(sequences) == 1:
            read = _read(sequences[0], each)
            generator = (each, _name(positions))
        else:
            chosen = gast.Subscript(
                value=gast.Tuple(elts=[_name(s) for s in sequences], ctx=gast.Load()),
                slice=gast.BinOp(left=_name(at), op=gast.Mod(),
                                 right=gast.Constant(value=len(sequences), kind=None)),
                ctx=gast.Load())
            read = gast.Subscript(value=chosen, slice=_name(each), ctx=gast.Load())
            generator = (gast.Tuple(elts=[_name(at, gast.Store()), _name(each, gast.Store())],
                                    ctx=gast.Store()),
                         gast.Call(func=_name("enumerate"), args=[_name(positions)],
                                   keywords=[]))
        element = gast.Call(func=_name("tuple"), args=[_comprehension(read, [generator])],
                            keywords=[])
        return _name(positions, gast.Store()), element
    names = [temporary("k") for _ in range(width)]
    target = gast.Tuple(elts=[_name(n, gast.Store()) for n in names], ctx=gast.Store())
    element = gast.Tuple(elts=[_read(sequences[i % len(sequences)], n)
                               for i, n in enumerate(names)], ctx=gast.Load())
    return target, element


def _width(call, function):
    """How many items one item of `call` holds, where the call tells, else None."""
    options = {k.arg: k.value for k in call.keywords}
    if function is itertools.pairwise:
        return 2
    if function is itertools.product:
        repeat = options.get("repeat", gast.Constant(value=1, kind=None))
        return len(call.args) * repeat.value if _is_int(repeat) else None
    size = call.args[1] if len(call.args) > 1 else options.get("r")
    return size.value if _is_int(size) else None


def _comprehension(element, generators) -> gast.ListComp:
    return gast.ListComp(elt=element, generators=[
        gast.comprehension(target=_name(target, gast.Store()) if isinstance(target, str)
                           else target, iter=iterable, ifs=[], is_async=0)
        for target, iterable in generators])


def _read(sequence: str, position: str):
    return gast.Subscript(value=_name(sequence), slice=_name(position), ctx=gast.Load())


def _is_int(node) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) is int


def _whole_number(node) -> int | None:
    """The value of an int literal (negated or not), else None."""
    sign = 1
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        sign, node = (-1 if isinstance(node.op, gast.USub) else 1), node.operand
    return sign * node.value if _is_int(node) else None


def _endless_range(start: int, step: int) -> gast.Call:
    """range(start, start + step * 2 ** 62, step): count(start, step) as zip reads it."""
    return gast.Call(func=_name("range"), args=[
        _constant(start), _constant(start + step * 2 ** 62), _constant(step)], keywords=[])


def _constant(value) -> gast.Constant:
    return gast.Constant(value=value, kind=None)


def _is_none(node) -> bool:
    return isinstance(node, gast.Constant) and node.value is None


def _name(identifier: str, ctx=None) -> gast.Name:
    return gast.Name(id=identifier, ctx=ctx or gast.Load(), annotation=None, type_comment=None)
