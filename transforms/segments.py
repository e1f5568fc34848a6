"""`grad(f, checkpoint_every=k)`: each loop of f becomes a loop over segments of k iterations,
each segment a call of a checkpointed function (see autotrace.checkpoint).

    for i in range(n):                 def f__segment(h, steps, *, w):   # lifted later
        h = np.tanh(h @ w)                 for i in _steps1:
                                               h = np.tanh(h @ w)
                                           return h
                                       loop = range(n)
                                       for position in range(0, len(loop), k):
                                           h = f__segment(h, loop[position:position + k])

The primal sweep then stores the loop's state once a segment (n / k snapshots: the segment
calls' inputs); the adjoint sweep recomputes each segment from its snapshot, storing its k
iterations, and reverses it: O(n / k + k) stored values instead of O(n), O(sqrt n) for k near
sqrt n. The segment function is a nested def, lifted like any other (transforms/nested.py),
which binds it checkpointed.
"""
from __future__ import annotations

import gast

from autotrace.transforms.errors import Location
from autotrace.transforms.naming import Namer
from autotrace.transforms.templates import name

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
    for node in gast.walk(gast.Module(body=loop.body, type_ignores=[])):
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
    inside = {id(node) for node in gast.walk(loop)}
    found: dict = {}
    for node in gast.walk(function):
        if isinstance(node, gast.Name) and id(node) not in inside:
            line = 0 if isinstance(node.ctx, gast.Param) else getattr(node, "lineno", 0)
            found.setdefault(node.id, []).append((line, isinstance(node.ctx, gast.Load)))
    return found


class _Segmenter:
    def __init__(self, function: gast.FunctionDef, every: int, location: Location,
                 namer: Namer, shallow_copy: str):
        self.function = function
        self.shallow_copy = shallow_copy  # the name generated code calls shallow_copy by
        self.every = every
        self.location = location
        self.namer = namer

    def block(self, body) -> list:
        out = []
        for statement in body:
            if isinstance(statement, gast.For):
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
        if loop.orelse:
            raise self.refuse(loop, "it has an else block; move that after the loop")
        if not isinstance(loop.target, gast.Name):
            raise self.refuse(loop, "its target is no single name; write `for i in ...` and "
                              "unpack inside the loop")
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
        target = loop.target.id
        if not self._only_other_targets(target, loop):
            raise self.refuse(loop, f"its variable {target!r} is read outside it; "
                              "rename one of them")
        assigned, changed = _written(loop)
        carried = sorted(n for n in (assigned | changed) - {target} if n in outside)
        if not carried:
            return [loop]  # (computes nothing read after it: left as it is)
        for carried_name in carried:
            if not any(where < line for where, _ in outside[carried_name]):
                raise self.refuse(loop, f"{carried_name!r} is assigned in the loop and read "
                                  "after it, but not bound before it; assign it a value "
                                  "before the loop")
        segment = self.namer.fresh("segment")
        steps = self.namer.fresh("steps")
        whole = self.namer.fresh("loop")
        position = self.namer.fresh("position")
        parameters = gast.arguments(
            args=[gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)
                  for n in carried + [steps]],
            posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
            defaults=[])
        returned = (name(carried[0]) if len(carried) == 1 else
                    gast.Tuple(elts=[name(n) for n in carried], ctx=gast.Load()))
        inner = gast.For(target=loop.target, iter=name(steps), body=loop.body, orelse=[],
                         type_comment=None)
        # A container the loop changes in place is copied first: a function may not change
        # its arguments (its caller would not see it); the segment returns the new one.
        copies = [gast.Assign(targets=[name(n, store=True)], value=gast.Call(
            func=name(self.shallow_copy), args=[name(n)], keywords=[]), type_comment=None)
            for n in carried if n in changed]
        definition = gast.FunctionDef(
            name=segment, args=parameters,
            body=[gast.copy_location(node, loop) for node in copies + [inner]] + [
                gast.copy_location(gast.Return(value=returned), loop)],
            decorator_list=[], returns=None, type_comment=None, type_params=[])
        definition.checkpointed = True  # bound checkpointed when lifted
        every = gast.Constant(value=self.every, kind=None)
        window = gast.Subscript(value=name(whole), slice=gast.Slice(
            lower=name(position), upper=gast.BinOp(left=name(position), op=gast.Add(),
                                                   right=every), step=None), ctx=gast.Load())
        call = gast.Call(func=name(segment), args=[name(n) for n in carried] + [window],
                         keywords=[])
        targets = (name(carried[0], store=True) if len(carried) == 1 else
                   gast.Tuple(elts=[name(n, store=True) for n in carried], ctx=gast.Store()))
        outer = gast.For(
            target=name(position, store=True),
            iter=gast.Call(func=name("range"), args=[
                gast.Constant(value=0, kind=None),
                gast.Call(func=name("len"), args=[name(whole)], keywords=[]), every],
                keywords=[]),
            body=[gast.copy_location(gast.Assign(targets=[targets], value=call,
                                                 type_comment=None), loop)],
            orelse=[], type_comment=None)
        bind_range = gast.Assign(targets=[name(whole, store=True)], value=loop.iter,
                                 type_comment=None)
        return [gast.copy_location(node, loop) for node in (definition, bind_range, outer)]

    @staticmethod
    def _owner(loop, statement):
        """The innermost loop of `loop` (itself included) that holds `statement`."""
        owner = loop
        for node in gast.walk(loop):
            if node is not loop and isinstance(node, (gast.For, gast.While)) and any(
                    inner is statement for inner in gast.walk(node)):
                owner = node
        return owner

    def _only_other_targets(self, target: str, loop) -> bool:
        """Whether every read of `target` outside `loop` is inside another loop over it."""
        inside_loops = set()
        for node in gast.walk(self.function):
            if node is not loop and isinstance(node, gast.For) and isinstance(
                    node.target, gast.Name) and node.target.id == target:
                inside_loops |= {id(n) for n in gast.walk(node)}
        inside = {id(n) for n in gast.walk(loop)}
        return all(id(n) in inside_loops or id(n) in inside for n in gast.walk(self.function)
                   if isinstance(n, gast.Name) and n.id == target
                   and isinstance(n.ctx, gast.Load))


def segment_loops(function: gast.FunctionDef, every: int | None, location: Location,
                  namer: Namer, helper) -> None:
    """Rewrite each outermost `for` loop of `function` into segments of `every` iterations
    (see the module docstring); nothing when `every` is None. helper(name) binds a runtime
    helper for generated code and gives its name."""
    if every is None:
        return
    segmenter = _Segmenter(function, every, location, namer, helper("shallow_copy"))
    function.body = segmenter.block(function.body)
