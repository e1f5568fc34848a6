"""Stacks as graph values: what lets a traced loop push values that a later traced loop pops.

Reverse-mode code saves values on a stack (a Python list) in the forward loop and pops them in
the adjoint loop. While tracing straight-line or unrolled code the list stays a Python list of
tracers, and pushes and pops vanish from the graph. A loop that runs in the graph (a `while`
op, its trip count known only at run time) cannot carry a Python list that grows, so there the
list becomes a `TracedStack`: a graph value (a Python list at run time) with three ops:

    b:stack = stack_new            # the list, made on every run
    c:stack = stack_push b x       # b.append(x)
    d:stack e:f64[3] = stack_pop c # e = c.pop()

The types of what is popped are known while tracing: the loop body pushes the same sequence
of values every iteration (its `block`), and the adjoint body pops them in reverse. Values
pushed before the loop stay a trace-time `prefix`; values pushed after it (outside any loop),
a trace-time `suffix`. A pushed value that is not an array (None, a Python number) is the same
every iteration and is not stored at run time.

Decisions:
- The stack ops have side effects (the passes keep them in order, never merge or fold them),
  and buffer reuse never writes into a pushed array: the stack still holds it.
- A stack pushed onto in two different loops, or in a branch inside the loop, is an error that
  says so (one block per stack).
"""
from __future__ import annotations

import numpy as np

from runtime.abstract import abstractify
from runtime.control import ControlFlowError, ControlPrimitive, current_builder
from runtime.ops import primitives, register
from runtime.tracer import Tracer, tracer_kinds


class StackSchema:
    """What is known while tracing about one stack's contents."""

    def __init__(self, prefix: list, home):
        self.home = home             # the builder the stack was made in
        self.prefix = list(prefix)   # trace-time items under the graph-level part
        self.block: list = []        # per loop iteration: ("array", aval) or ("value", value)
        self.pushing = None          # the builder of the loop body that pushes
        self.cursor = 0              # the next block entry to pop (counting down)
        self.popped = 0              # how many pops the graph-level part has had
        self.exhausted = False       # the graph-level part is empty (its loop of pops ended)
        self.suffix: list = []       # trace-time items pushed after the pushing loop

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


class TracedStack(Tracer):
    """A traced stack: `append` and `pop` record stack ops (see the module docstring)."""

    __slots__ = ()

    @property
    def schema(self) -> StackSchema:
        return self.aval.schema

    def _rebind(self, builder, primitive: str, inputs: list):
        results = builder.record(primitives[primitive], inputs, {})
        stack, *items = results if isinstance(results, tuple) else (results,)
        self._builder, self.graph_var = stack._builder, stack.graph_var
        return items

    def _trace_time(self, builder) -> None:
        """Check that a push or pop of trace-time items happens where the stack was made: in a
        branch or a loop body it would happen once for every path or iteration."""
        if builder is not self.schema.home:
            raise ControlFlowError(
                "autotrace cannot trace this gradient yet: it pops values that were saved "
                "while tracing (in straight-line code or an unrolled loop) inside a loop or "
                "branch on a traced value, where they would have to be saved in the graph. "
                "Take the gradient of the traced function instead, "
                "autotrace.grad(autotrace.function(f)), or compute it eagerly")

    def append(self, value) -> None:
        schema = self.schema
        builder = current_builder(self)
        if schema.exhausted or (schema.pushing is not None and builder is not schema.pushing):
            self._trace_time(builder)
            schema.suffix.append(value)
            return
        if builder is schema.home:
            raise ControlFlowError("a stack of saved values is pushed onto outside the traced "
                                   "loop it was made for")
        schema.pushing = builder
        if isinstance(value, Tracer) or isinstance(value, (np.ndarray, np.generic)):
            aval = value.aval if isinstance(value, Tracer) else abstractify(value)
            schema.block.append(("array", aval))
            self._rebind(builder, "stack_push", [self, value])
        else:
            schema.block.append(("value", value))

    def pop(self):
        schema = self.schema
        builder = current_builder(self)
        if schema.suffix or schema.exhausted or not schema.block:
            self._trace_time(builder)
            return (schema.suffix or schema.prefix).pop()
        schema.cursor = (schema.cursor - 1) % len(schema.block)
        schema.popped += 1
        kind, entry = schema.block[schema.cursor]
        if kind == "value":
            return entry
        (item,) = self._rebind(builder, "stack_pop", [self])
        return item

    def __repr__(self) -> str:
        return "TracedStack"


def new_stack(builder, items: list) -> TracedStack:
    """A traced stack over the Python list `items` (they become its trace-time prefix)."""
    schema = StackSchema(items, builder)
    return builder.record(primitives["stack_new"], [], {"schema": schema})


def snapshot(stacks) -> list:
    """What is known of `stacks` now, for `restore` before a loop body is traced again."""
    return [(stack.schema, dict(stack.schema.__dict__, block=list(stack.schema.block),
                                prefix=list(stack.schema.prefix),
                                suffix=list(stack.schema.suffix))) for stack in stacks]


def restore(saved: list) -> None:
    """Forget what a failed trace of a loop body pushed onto or popped from the stacks."""
    for schema, state in saved:
        schema.__dict__.update(state, block=list(state["block"]),
                               prefix=list(state["prefix"]), suffix=list(state["suffix"]))
        schema.popped = 0


def end_loop(stacks) -> None:
    """After a loop body was traced: a stack it popped from has its graph-level part empty."""
    for stack in stacks:
        if stack.schema.popped:
            stack.schema.exhausted = True


# --- the ops --------------------------------------------------------------------------------

def _new_impl(*, schema):
    return []


def _push_impl(stack, value):
    stack.append(value)
    return stack


def _pop_impl(stack):
    return stack, stack.pop()


def _pop_eval(stack):
    schema = stack.schema
    return stack, schema.block[schema.cursor][1]


register(ControlPrimitive(
    "stack_new", _new_impl, lambda *, schema: AbstractStack(schema),
    subgraph_statements=lambda outputs, args, attrs, define: [f"{outputs[0]} = []"],
    side_effect=lambda attrs: True))
register(ControlPrimitive(
    "stack_push", _push_impl, lambda stack, value: stack, retains_inputs=True,
    subgraph_statements=lambda outputs, args, attrs, define: [
        f"{args[0]}.append({args[1]})", f"{outputs[0]} = {args[0]}"],
    side_effect=lambda attrs: True))
register(ControlPrimitive(
    "stack_pop", _pop_impl, _pop_eval,
    subgraph_statements=lambda outputs, args, attrs, define: [
        f"{outputs[0]} = {args[0]}", f"{outputs[1]} = {outputs[0]}.pop()"],
    side_effect=lambda attrs: True))
tracer_kinds[AbstractStack] = TracedStack
