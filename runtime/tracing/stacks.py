"""Stacks as graph values: what lets a traced loop or branch push values that a later traced
loop or branch pops.

Reverse-mode code saves values on a stack (a Python list) in the forward sweep and pops them
in the adjoint sweep. While tracing straight-line or unrolled code the list stays a Python list
of tracers, and pushes and pops vanish from the graph. Once a loop runs in the graph (a `while`
op, its trip count known only at run time), or a branch on a traced value pushes, the list
becomes a `TracedStack`: a graph value (a Python list at run time) with three ops:

    b:stack = stack_new            # the list, made on every run
    c:stack = stack_push b x       # b.append(x)
    d:stack e:f64[3] = stack_pop[popped=f64[3]] c  # e = c.pop()

From then on every push is recorded, and the `StackSchema` describes what the run-time list
holds, as a tree of `entries` in push order: an `Item` (a traced array, or a value known while
tracing, such as None, a Python int or a constant array, which is not stored; a tuple,
list or dict holding arrays is its arrays' Items, then an Item of its `Container`), or a
`Nested` entry for the pushes inside a `while` op's body (its `block`, repeated a number of
times known only at run time) or inside a `cond` op's branches (one list per side; at run time
only the taken side's items are there). Where a push goes follows from the subgraph builders
between the one recording it and the stack's home (each builder's `role`).

Pops walk the same tree from the end. An adjoint loop or branch that pops is bound, at its first
pop, to the forward loop or branch entry on top at its level: the adjoint of a loop pops what
that loop pushed, iteration by iteration in reverse, and the adjoint of a branch pops, on each
side, what the same side pushed (its condition is the forward one, saved). So the types of what
is popped are known while tracing, whichever path runs.

Decisions:
- A stack op has no side effect of its own: each consumes the stack value the previous one made,
  so the passes keep them in order, and a chain whose stack nobody reads again is dead code.
  Buffer reuse never writes into a pushed array (the stack still holds it), nor into an input of
  a loop or branch that pushes.
- Tracing a branch or loop body again (after a retry) first restores the schema (`snapshot`,
  `restore`): a copy of each list of entries.
- A push after pops at the same level (a second derivative pushes back, in its adjoint sweep,
  what the first derivative popped) first drops the entries popped there: the list of entries
  is then what the stack holds, as at run time.
- The gradient of a stack (`b_stack1 = zeros_like(_stack1)` in a second derivative, or the
  tangents beside it in forward over reverse) is a stack too (`SavedValues.zeros_like`), made
  where the stack holds nothing on the path being traced: an empty one, the same graph value
  in both branches of a traced if that each make it.
- Pops that do not match the pushes (a branch's pops where the forward pushed outside one) are
  an error that says so: never a wrong value. Each pop also checks, when it runs, that what it
  took has the shape the trace expected.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..abstract import abstractify
from .control import ControlFlowError, ControlPrimitive, current_builder
from ..ops import primitives, register
from ..primitives.batching import never_batched
from . import stack_batching
from ..containers import zeros_like
from .tracer import (OutputStructure, Tracer, _Slot, is_array, leaves_with_paths,
                                      map_arrays, tracer_kinds)
from .weak_scalars import is_weak, make_weak

_TOP = "top"  # the reading key of the top-level entries


class Item(NamedTuple):
    """One pushed value: `stored` arrays by their AbstractArray, other values as they are;
    `weak` where a stored one stands for a Python number (weak_scalars.make_weak), as its pop does."""

    stored: bool
    content: object
    weak: bool = False


class Container(NamedTuple):
    """A pushed tuple, list or dict holding arrays (the list `np.concatenate` read): its
    `count` arrays are the items pushed just before it, and `structure` rebuilds it."""

    structure: OutputStructure
    count: int


class Nested:
    """The pushes inside a `cond` op's branches (`parts[True]`, `parts[False]`) or a `while`
    op's body (`parts["body"]`), under the op's token."""

    def __init__(self, kind: str, token):
        self.kind, self.token = kind, token
        self.parts: dict = {}

    def stores_anything(self) -> bool:
        return any(entry.stored if isinstance(entry, Item) else entry.stores_anything()
                   for part in self.parts.values() for entry in part)


class StackSchema:
    """What is known while tracing about one stack's contents (see the module docstring)."""

    def __init__(self, home):
        self.home = home      # the builder the stack was made in
        self.entries: list = []
        self.readings: dict = {}  # _TOP or (token, part) -> how many entries are not popped yet
        self.bindings: dict = {}  # token of an adjoint op -> the forward Nested it pops

    def __repr__(self) -> str:
        return "saved values"


class AbstractStack:
    """The type of a stack value: equal only to itself's schema (a loop keeps it)."""

    shape = ()
    ndim = 0
    dtype = np.dtype(object)
    device = "cpu"

    def __init__(self, schema: StackSchema):
        self.schema = schema

    def __eq__(self, other) -> bool:
        return isinstance(other, AbstractStack) and other.schema is self.schema

    def __hash__(self) -> int:
        return id(self.schema)

    def __repr__(self) -> str:
        return "stack"


class StackMismatch(ControlFlowError):
    """Pushes and pops a trace cannot follow; the converted `if` or loop it happens in adds the
    user's file and line (runtime/tracing/control_variables.py)."""


def _mismatch(what: str) -> StackMismatch:
    return StackMismatch(
        f"autotrace cannot trace this gradient: {what}, so the saved values it pops would not "
        f"be the ones it pushed. Take the gradient of the traced function instead, "
        f"autotrace.grad(autotrace.function(f)), or compute it eagerly")


class SavedValues(list):
    """The list generated reverse-mode code saves values on, as converted code makes it
    (`_stack1 = []` becomes `_stack1 = SavedValues()`): a loop or branch on a traced value
    turns it, and no other list, into a TracedStack. A list the code computes with, such as
    the one `np.concatenate` reads, stays a list."""

    __slots__ = ()

    @staticmethod
    def zeros_like(stack, gradients=None):
        """The gradient or tangent of a stack of saved values, a stack of the same kind: the
        zeros of what `stack` holds (`b_stack1 = zeros_like(_stack1)` in converted code
        becomes `b_stack1 = SavedValues.zeros_like(_stack1, b_stack1)`).

        A traced stack must hold nothing here. Its gradient is then `gradients`, the stack the
        name held before, where that holds nothing either: made again in each branch of a
        traced if, the gradient stays one graph value that the if passes on."""
        if not isinstance(stack, TracedStack):
            return SavedValues(zeros_like(item) for item in stack)
        if stack.holds_values():
            raise _mismatch("the gradient of a stack of saved values is made while the stack "
                            "still holds values pushed in a loop or branch on a traced value")
        if isinstance(gradients, SavedValues) and not gradients or isinstance(
                gradients, TracedStack) and not gradients.holds_values():
            return gradients
        return new_stack(current_builder(stack), [])


class TracedStack(Tracer):
    """A traced stack: `append` and `pop` record stack ops (see the module docstring)."""

    __slots__ = ()

    @property
    def schema(self) -> StackSchema:
        return self.aval.schema

    def _rebind(self, builder, primitive: str, inputs: list, **attrs):
        results = builder.record(primitives[primitive], inputs, attrs)
        stack, *items = results if isinstance(results, tuple) else (results,)
        self._builder, self.graph_var = stack._builder, stack.graph_var
        return items

    def _roles(self, builder) -> list:
        """The roles of the subgraph builders from the stack's home down to `builder`."""
        roles = []
        while builder is not self.schema.home:
            role = getattr(builder, "role", None)
            if role is None:
                raise _mismatch("a stack of saved values is used outside the trace it was "
                                "made in")
            roles.append(role)
            builder = builder.parent
        return roles[::-1]

    def holds_values(self) -> bool:
        """Whether the stack may hold arrays at run time on the path being traced, as far as
        the pushes and pops so far tell: the other side of a branch being traced does not
        count; earlier iterations of a loop being traced, and what a loop or branch popping
        here has not popped yet, do."""
        schema = self.schema
        entries, key = schema.entries, _TOP
        for kind, token, part in self._roles(current_builder(self)):
            visible = entries[:schema.readings.get(key, len(entries))]
            current = visible[-1] if visible and isinstance(visible[-1], Nested) and (
                visible[-1].token is token) else None
            if _stores(visible if current is None else visible[:-1]):
                return True
            bound = schema.bindings.get(token)  # the forward loop or branch popped here
            if bound is not None and (kind != "cond" and bound.stores_anything() or _stores(
                    bound.parts.get(part, [])[:schema.readings.get((token, part))])):
                return True
            if current is None:
                return False
            if kind != "cond" and current.stores_anything():
                return True  # pushed by the iterations before this one
            entries, key = current.parts.get(part, []), (token, part)
        return _stores(entries[:schema.readings.get(key, len(entries))])

    def append(self, value) -> None:
        builder = current_builder(self)
        entries = self._unpopped(self.schema.entries, _TOP)
        for kind, token, part in self._roles(builder):
            if not (entries and isinstance(entries[-1], Nested) and entries[-1].token is token):
                entries.append(Nested(kind, token))
            entries = self._unpopped(entries[-1].parts.setdefault(part, []), (token, part))
        if isinstance(value, Tracer):
            self._push_array(builder, entries, value)
        elif is_array(value):
            # A constant of the trace (the same on every run): the pop gives it back as it was,
            # so that a Python `if` on it stays a Python `if` in the adjoint sweep too.
            entries.append(Item(False, value.copy() if isinstance(value, np.ndarray) else value))
        elif leaves_with_paths(value):
            # A container's arrays are graph values too (traced in this branch or loop body,
            # they exist nowhere else): each is pushed, and the pop rebuilds the container.
            arrays = []

            def push(leaf):
                self._push_array(builder, entries, leaf)
                arrays.append(leaf)
                return _Slot(len(arrays) - 1)
            entries.append(Item(False, Container(OutputStructure(map_arrays(value, push)),
                                                 len(arrays))))
        else:
            entries.append(Item(False, value))

    def _unpopped(self, entries: list, key) -> list:
        """`entries`, less those popped already: a push after pops (a second derivative
        pushes again what its first derivative popped) goes on top of what is left."""
        left = self.schema.readings.pop(key, len(entries))
        del entries[left:]
        return entries

    def _push_array(self, builder, entries: list, value) -> None:
        entries.append(Item(True, value.aval if isinstance(value, Tracer)
                            else abstractify(value), is_weak(value)))
        self._rebind(builder, "stack_push", [self, value])

    def pop(self):
        schema = self.schema
        builder = current_builder(self)
        entries, key = schema.entries, _TOP
        for kind, token, part in self._roles(builder):
            nested = schema.bindings.get(token)
            if nested is None:
                nested = schema.bindings[token] = self._take(entries, key, kind)
                if not isinstance(nested, Nested) or nested.kind != kind:
                    raise _mismatch(f"a {kind} on a traced value pops values that were not "
                                    f"pushed by a {kind} at the same place")
            entries, key = nested.parts.get(part, []), (token, part)
        item = self._take_item(entries, key)
        if not item.stored:
            content = item.content
            if isinstance(content, Container):
                arrays = [self._pop_array(builder, self._take_item(entries, key))
                          for _ in range(content.count)]
                return content.structure.unflatten(tuple(reversed(arrays)))
            return content
        return self._pop_array(builder, item)

    def _take_item(self, entries: list, key) -> Item:
        item = self._take(entries, key, "item")
        if not isinstance(item, Item):
            raise _mismatch(f"it pops a value where a {item.kind} on a traced value pushed "
                            f"values")
        return item

    def _pop_array(self, builder, item: Item):
        # The pop holds the type of what it pops, so that a graph holding it can be recorded
        # again (batched by vmap, inlined) without the schema's state of the trace.
        (value,) = self._rebind(builder, "stack_pop", [self], popped=item.content)
        return make_weak(value) if item.weak else value

    def _take(self, entries: list, key, wanted: str):
        """The top entry of `entries` not popped yet. A loop or branch whose pushes were not
        stored at run time (None, Python numbers) and whose adjoint pops nothing is passed
        over: only a pop that wants such an entry (`wanted`, "item" or a kind) takes it."""
        readings = self.schema.readings
        left = readings.get(key, len(entries))
        while True:
            if left == 0:
                raise _mismatch("it pops more values than were pushed")
            left -= 1
            entry = entries[left]
            if isinstance(entry, Item) or entry.kind == wanted or entry.stores_anything():
                break
        readings[key] = left
        return entry

    def __repr__(self) -> str:
        return "TracedStack"


def _stores(entries: list) -> bool:
    return any(entry.stored if isinstance(entry, Item) else entry.stores_anything()
               for entry in entries)


def new_stack(builder, items: list) -> TracedStack:
    """A traced stack holding the Python list `items` (pushed onto it in the graph)."""
    stack = builder.record(primitives["stack_new"], [], {"schema": StackSchema(builder)})
    for item in items:
        stack.append(item)
    return stack


def _lists(entries: list):
    yield entries
    for entry in entries:
        if isinstance(entry, Nested):
            for part in entry.parts.values():
                yield from _lists(part)


def _nested(entries: list):
    for entry in entries:
        if isinstance(entry, Nested):
            yield entry
            for part in entry.parts.values():
                yield from _nested(part)


def snapshot(stacks) -> list:
    """What is known of `stacks` now, for `restore` before a branch or loop is traced again."""
    return [(stack.schema, [(entries, list(entries)) for entries in _lists(stack.schema.entries)],
             [(nested, dict(nested.parts)) for nested in _nested(stack.schema.entries)],
             dict(stack.schema.readings), dict(stack.schema.bindings)) for stack in stacks]


def restore(saved: list) -> None:
    """Forget what a failed trace of a branch or loop body pushed onto or popped from stacks
    (a push after pops also drops the popped entries, so each list is restored whole)."""
    for schema, lists, parts, readings, bindings in saved:
        for entries, contents in lists:
            entries[:] = contents
        for nested, nested_parts in parts:
            nested.parts = dict(nested_parts)
        schema.readings, schema.bindings = dict(readings), dict(bindings)


# --- the ops --------------------------------------------------------------------------------

def _new_impl(*, schema):
    return []


def _push_impl(stack, value):
    stack.append(value)
    return stack


def _pop_impl(stack, *, popped):
    value = stack.pop()
    if not _has_shape(value, popped.shape):
        raise RuntimeError(_POPPED_WRONG)
    return stack, value


def _has_shape(value, shape: tuple) -> bool:
    actual = getattr(value, "shape", ())
    return len(actual) == len(shape) and all(
        expected is None or size == expected for size, expected in zip(actual, shape))


# A pop checks what it took against what the trace expected, so that a mistake in following the
# pushes is an error, never a wrong value.
_POPPED_WRONG = ("autotrace internal error: a traced stack of saved values gave back a value "
                 "of another shape than its trace expected; compute this derivative eagerly")


def _pop_statements(outputs, args, attrs, define) -> list:
    stack, value = outputs
    shape = attrs["popped"].shape
    wrong = [f"len(getattr({value}, 'shape', ())) != {len(shape)}"] + [
        f"{value}.shape[{axis}] != {size}" for axis, size in enumerate(shape) if size is not None]
    return [f"{stack} = {args[0]}", f"{value} = {stack}.pop()",
            f"if {' or '.join(wrong)}: raise RuntimeError({_POPPED_WRONG!r})"]


register(ControlPrimitive(
    "stack_new", _new_impl, lambda *, schema: AbstractStack(schema),
    subgraph_statements=lambda outputs, args, attrs, define: [f"{outputs[0]} = []"],
    batching=never_batched))
register(ControlPrimitive(
    "stack_push", _push_impl, lambda stack, value: stack, retains_inputs=True,
    subgraph_statements=lambda outputs, args, attrs, define: [
        f"{args[0]}.append({args[1]})", f"{outputs[0]} = {args[0]}"],
    batching=stack_batching.push_batching))
register(ControlPrimitive(
    "stack_pop", _pop_impl, lambda stack, *, popped: (stack, popped),
    subgraph_statements=_pop_statements, batching=stack_batching.pop_batching))

# Under autotrace.vmap, one stack per example (runtime/tracing/stack_batching.py).
for name, impl, abstract_eval, retains in (
        ("stack_to_batch", stack_batching.to_batch_impl, stack_batching.to_batch_eval, True),
        ("stack_batch_push", stack_batching.push_impl, stack_batching.push_eval, True),
        ("stack_batch_pop", stack_batching.pop_impl, stack_batching.pop_eval, False),
        ("stack_select", stack_batching.select_impl, stack_batching.select_eval, False)):
    register(ControlPrimitive(
        name, impl, abstract_eval, source=stack_batching.source_of(name),
        globals=lambda attrs, name=name, impl=impl: {name: impl}, retains_inputs=retains,
        batching=stack_batching.batched_again))
tracer_kinds[AbstractStack] = TracedStack
