"""Checkpointing written into the source, before the other passes: `grad(f,
checkpoint_every=k)`'s loop segments, and `autotrace.checkpoint(g)(x)` written inline.

Each outermost loop of f becomes a loop over segments of k iterations, each segment a call of
a checkpointed function (see autotrace.checkpoint) made of the loop's body:

    for i in range(n):                 def f__segment(h, steps, *, w):   # lifted later
        h = np.tanh(h @ w)                 for i in steps:
                                               h = np.tanh(h @ w)
                                           return h
                                       loop = range(n)
                                       for position in range(0, len(loop), k):
                                           h = f__segment(h, loop[position:position + k])

(`while test:` becomes `while test: h = f__segment(h)`, the segment running up to k
iterations while the test holds.) The primal sweep then stores the loop's state once a segment
(n / k snapshots: the segment calls' inputs); the adjoint sweep recomputes each segment from
its snapshot, storing its k iterations, and reverses it: O(n / k + k) stored values instead of
O(n), O(sqrt n) for k near sqrt n. The segment function is a nested def, lifted like any other
(transforms/front/nested.py), which binds it checkpointed. The loop's state is what its body
assigns or changes in place and the function reads elsewhere.
"""
from __future__ import annotations

import inspect

import gast

from ..analysis.calls import Checkpointed
from ..analysis.liveness import closure_reads, read_before_bound
from ..analysis.random_draws import refuse_draws
from ..errors import Location
from ..codegen.naming import Namer
from .parsing import resolve
from ..codegen.templates import name, replace
from ..codegen.nodes import walk

# Builtins whose results are iterators: no len(), no slices.
_ITERATORS = frozenset({"zip", "enumerate", "reversed", "map", "filter", "iter"})

# Methods that change the object they are called on: a container they are called on is loop
# state even when the loop never assigns its name.
_MUTATING = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update",
                       "setdefault", "popitem", "sort", "reverse"})


def check_every(every, site: str) -> None:
    """Refuse a `checkpoint_every` that is no positive int (None: no segments)."""
    if every is None:
        return
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f"{site}: checkpoint_every must be a positive int, the number of "
                         "loop iterations between stored snapshots of the loop's state (or "
                         f"None, the default, to store every iteration); got {every!r}")


_USER = "_autotrace_user_node"  # on the nodes of the user's loop (copies keep it)


def _located(node, origin):
    """`node` with every node inside it that is not the user's (templates' nodes, which have
    the template's lines) at the line of `origin`, the user's loop."""
    for inner in walk(node):
        if not getattr(inner, _USER, False) and "lineno" in getattr(inner, "_attributes", ()):
            gast.copy_location(inner, origin)
    return node


def _statements(body):
    """The statements of `body` and of the blocks inside it, but not inside nested defs."""
    for statement in body:
        yield statement
        if isinstance(statement, (gast.FunctionDef, gast.Lambda)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(statement, field, None) or [])
        for handler in getattr(statement, "handlers", None) or []:
            yield from _statements(handler.body)


def _written(loop) -> tuple[set, set]:
    """(names the loop's body assigns, names whose value it changes: `x[i] = ...`,
    `x.append(...)`)."""
    assigned, changed = set(), set()
    for node in walk(gast.Module(body=loop.body, type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            assigned.add(node.id)
        elif isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(
                node.ctx, gast.Store) and isinstance(node.value, gast.Name):
            changed.add(node.value.id)
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                node.func.attr in _MUTATING and isinstance(node.func.value, gast.Name):
            changed.add(node.func.value.id)
    return assigned, changed


def _names_outside(function: gast.FunctionDef, loop) -> dict:
    """Name -> the lines where it occurs in `function` outside `loop` (parameters: line 0)."""
    inside = {id(node) for node in walk(loop)}
    found: dict = {}
    for node in walk(function):
        if isinstance(node, gast.Name) and id(node) not in inside:
            line = 0 if isinstance(node.ctx, gast.Param) else getattr(node, "lineno", 0)
            found.setdefault(node.id, []).append((line, isinstance(node.ctx, gast.Load)))
    return found


class _Segmenter:
    """Rewrites the outermost loops of one function (see the module docstring)."""

    def __init__(self, function: gast.FunctionDef, every: int, location: Location,
                 namer: Namer, shallow_copy: str, namespace):
        self.function, self.namespace = function, namespace
        self.shallow_copy = shallow_copy  # the name generated code calls shallow_copy by
        self.every = every
        self.location = location
        self.namer = namer

    def block(self, body) -> list:
        out = []
        for statement in body:
            if isinstance(statement, (gast.For, gast.While)):
                out += self.loop(statement)
                continue
            if not isinstance(statement, gast.FunctionDef):
                for field in ("body", "orelse", "finalbody"):
                    if isinstance(getattr(statement, field, None), list):
                        setattr(statement, field, self.block(getattr(statement, field)))
            out.append(statement)
        return out

    def refuse(self, node, what: str):
        return self.location.error(
            node, f"checkpoint_every cannot split this loop into segments: {what}",
            "checkpoint_every")

    def loop(self, loop) -> list:
        """The statements replacing `loop` (a For or a While): itself where it carries no
        state out."""
        for node in walk(loop):
            setattr(node, _USER, True)
        if loop.orelse:
            raise self.refuse(loop, "it has an else block; move that after the loop")
        target = None
        if isinstance(loop, gast.For):
            if not isinstance(loop.target, gast.Name):
                raise self.refuse(loop, "its target is no single name; write `for i in ...` "
                                  "and unpack inside the loop")
            target = loop.target.id
            self.check_iterable(loop)
            if not self._only_other_targets(target, loop):
                raise self.refuse(loop, f"its variable {target!r} is read outside it; "
                                  "rename one of them")
        for statement in _statements(loop.body):
            exits = statement if isinstance(statement, gast.Return) else None
            if isinstance(statement, gast.Break) and self._owner(loop, statement) is loop:
                exits = statement
            if exits is not None:
                keyword = type(exits).__name__.lower()
                raise self.refuse(exits, f"it leaves the loop early (`{keyword}`); segments "
                                  "run whole")
        outside = _names_outside(self.function, loop)
        line = getattr(loop, "lineno", 0)
        assigned, changed = _written(loop)
        # An iteration's state is also what the next one reads before assigning it, which a
        # segment's first iteration reads from the segment before.
        from_before = read_before_bound(loop.body, closure_reads(loop.body))
        carried = sorted(n for n in (assigned | changed) - {target}
                         if n in outside or n in from_before)
        if not carried:
            return [loop]  # (computes nothing read after it: left as it is)
        refuse_draws(loop.body, self.namespace, self.location,
                     "a segment of the loop that checkpoint_every splits")
        for carried_name in carried:
            if not any(where < line for where, _ in outside.get(carried_name, ())):
                read = ("after it" if carried_name in outside else
                        "by the iteration after the one assigning it")
                raise self.refuse(loop, f"{carried_name!r} is assigned in the loop and read "
                                  f"{read}, but not bound before it; assign it a value "
                                  "before the loop")
        state = (name(carried[0]) if len(carried) == 1 else
                 gast.Tuple(elts=[name(n) for n in carried], ctx=gast.Load()))
        # A container the loop changes in place is copied first: a function may not change
        # its arguments (its caller would not see it); the segment returns the new one.
        copies = [statement for n in carried if n in changed for statement in replace(
            "value = shallow_copy(value)", value=n, shallow_copy=self.shallow_copy)]
        segment = self.namer.fresh("segment")
        every = gast.Constant(value=self.every, kind=None)
        if target is not None:  # for target in iterable: segments of `every` items
            steps, whole, position = (self.namer.fresh(hint) for hint in
                                      ("steps", "loop", "position"))
            inner = replace("for target in steps:\n    body", target=target, steps=steps,
                            body=loop.body)
            extra = [steps]
            outer = replace(
                "whole = iterable\n"
                "for position in range(0, len(whole), every):\n"
                "    state = segment(state, whole[position:position + every])",
                whole=whole, iterable=loop.iter, position=position, every=every, state=state,
                segment=segment)
        else:  # while test: segments of up to `every` iterations, each while the test holds
            count = self.namer.fresh("count")
            inner = replace("for count in range(every):\n"
                            "    if not test:\n"
                            "        break\n"
                            "    body", count=count, every=every, test=loop.test,
                            body=loop.body)
            extra = []
            outer = replace("while test:\n    state = segment(state)", test=loop.test,
                            state=state, segment=segment)
        for statement in outer:  # `state = segment(state, ...)`: arguments, then targets
            for node in walk(statement):
                if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                        node.func.id == segment:
                    node.args = [name(n) for n in carried] + node.args[1:]
        parameters = gast.arguments(
            args=[gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)
                  for n in carried + extra],
            posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
            defaults=[])
        definition = gast.FunctionDef(
            name=segment, args=parameters, body=copies + inner + [gast.Return(value=state)],
            decorator_list=[], returns=None, type_comment=None, type_params=[])
        definition.checkpointed = True  # bound checkpointed when lifted
        return [_located(node, loop) for node in [definition] + outer]

    def check_iterable(self, loop) -> None:
        """Refuse a loop over an iterator: its segments are slices of what it iterates."""
        iterable = loop.iter
        if isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Name) and \
                iterable.func.id in _ITERATORS:
            raise self.refuse(loop, f"it iterates over {iterable.func.id}(...), which has no "
                              "len() and cannot be sliced into segments; iterate over a "
                              "range, list, tuple or array (`for i in range(len(xs))`)")

    @staticmethod
    def _owner(loop, statement):
        """The innermost loop of `loop` (itself included) that holds `statement`."""
        owner = loop
        for node in walk(loop):
            if node is not loop and isinstance(node, (gast.For, gast.While)) and any(
                    inner is statement for inner in walk(node)):
                owner = node
        return owner

    def _only_other_targets(self, target: str, loop) -> bool:
        """Whether every read of `target` outside `loop` is inside another loop over it."""
        inside_loops = set()
        for node in walk(self.function):
            if node is not loop and isinstance(node, gast.For) and isinstance(
                    node.target, gast.Name) and node.target.id == target:
                inside_loops |= {id(n) for n in walk(node)}
        inside = {id(n) for n in walk(loop)}
        return all(id(n) in inside_loops or id(n) in inside for n in walk(self.function)
                   if isinstance(n, gast.Name) and n.id == target
                   and isinstance(n.ctx, gast.Load))


def segment_loops(function: gast.FunctionDef, every: int | None, location: Location,
                  namer: Namer, helper, namespace) -> None:
    """Rewrite each outermost `for` loop of `function` into segments of `every` iterations
    (see the module docstring); nothing when `every` is None. helper(name) binds a runtime
    helper for generated code and gives its name; `namespace`: what the function's names
    mean (a segment that draws NumPy random numbers is refused: analysis/random_draws.py)."""
    if every is None:
        return
    segmenter = _Segmenter(function, every, location, namer, helper("shallow_copy"),
                           namespace)
    function.body = segmenter.block(function.body)


def bind_checkpointed_calls(function: gast.FunctionDef, namespace, namer: Namer) -> None:
    """`autotrace.checkpoint(g)(x)` written in `function`, g a function known before it runs:
    a call of the checkpointed g bound to a name (`g_checkpointed(x)`), which reverse mode
    then derives as any checkpointed call, shown in the source. (Left alone, the call is
    derived when it runs, by vjp_call, which recomputes it all the same.)"""
    for node in walk(function):
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Call)):
            continue
        maker = node.func
        if len(maker.args) != 1 or maker.keywords or not getattr(
                resolve(maker.func, namespace), "__autotrace_makes_checkpointed__", False):
            continue
        inner = resolve(maker.args[0], namespace)
        if isinstance(inner, Checkpointed):
            inner = inner.function
        if not inspect.isfunction(inner):
            continue
        identifier = namer.fresh(f"{inner.__name__}_checkpointed".strip("_<>"))
        namespace[identifier] = Checkpointed(inner)
        node.func = gast.copy_location(name(identifier), maker)
