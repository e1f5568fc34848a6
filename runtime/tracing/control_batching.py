"""The batching rules of traced control flow (runtime/tracing/control.py declares them in its
ops' rows; runtime/primitives/batching.py says what a rule is)."""
from __future__ import annotations

import numpy as np

from ..graph import Graph
from ..passes import optimize
from ..passes.cleanup import has_side_effect
from ..primitives.batching import NoBatchingRule, unrolled_batching
from .control_aliases import inline_graph
from .stack_batching import as_batch, is_stack, refuse_unrolled, select
from .tracer import GraphBuilder, Tracer


def cond_batching(call):
    """Both branches batched; where the condition is the same for every example, the cond
    chooses one; where it differs, both run, and np.where selects each example's results
    (stack_select each example's stacks of saved values, which both branches take as a
    batch: the one that is not taken must not change them)."""
    branches = call.attrs["branches"]
    if not call.batched[0]:  # one branch runs, for every example
        true, false = (optimize(call.batch_graph(graph, call.batched[1:], False)[0])
                       for graph in branches.graphs)
        return call.bind(*call.args, branches=type(branches)(true, false))
    args = [as_batch(arg, call.size) if is_stack(getattr(arg, "aval", None)) else arg
            for arg in call.args[1:]]
    flags = tuple(is_batched or is_stack(getattr(arg, "aval", None))
                  for arg, is_batched in zip(args, call.batched[1:]))
    true, false = (optimize(call.batch_graph(graph, flags)[0]) for graph in branches.graphs)
    builder = call.args[0]._builder
    chosen = [inline_graph(builder, graph, args) for graph in (true, false)]
    if None in chosen:
        raise NoBatchingRule("its condition differs between examples, so both branches run, "
                             "but a branch prints or checks values; do that outside the if, "
                             "or loop over the examples in Python")
    condition = call.args[0]
    return tuple(_chosen(condition, t, f, call) for t, f in zip(*chosen))


def _chosen(condition, true, false, call):
    """Each example's value of `true` where its `condition` holds, else of `false`."""
    if is_stack(getattr(true, "aval", None)):
        return select(condition, true, false, strict=not call.masked)
    mask = np.reshape(condition, (call.size, *(1,) * (np.ndim(true) - 1)))
    return np.where(mask, true, false)


def print_batching(call):
    call.bind(*call.args)  # prints the batch's values
    return ()


def while_batching(call):
    """A masked loop: it runs while the condition holds for any example, and each iteration
    changes only the loop values of the examples whose condition still holds, so every
    example ends with the values its own loop ends with."""
    loop = call.attrs["loop"]
    count = len(loop.body.outputs)
    carried = [as_batch(call.args[position], call.size)
               if is_stack(getattr(call.args[position], "aval", None))
               else np.copy(call.with_batch(position)) for position in range(count)]
    flags = (True,) * count + tuple(call.batched[count:])
    cond, body = (optimize(call.batch_graph(graph, flags)[0]) for graph in loop.graphs)
    if any(has_side_effect(equation) for graph in (cond, body) for equation in graph.equations):
        refuse_unrolled(call.args)
        return unrolled_batching(call)  # it prints: each example's loop prints its own
    avals = [var.aval for var in cond.inputs]

    def running(builder, values):
        return inline_graph(builder, cond, values)[0]

    def any_running(builder, values):
        return [np.any(running(builder, values))]

    def masked_body(builder, values):
        holds = running(builder, values)
        changed = inline_graph(builder, body, values)
        return [_chosen(holds, new, old, call) for new, old in zip(changed, values)]
    masked = type(loop)(optimize(_graph_of(avals, any_running)),
                        optimize(_graph_of(avals, masked_body)))
    return call.bind(*carried, *call.args[count:], loop=masked)


def _graph_of(avals: list, build) -> Graph:
    """The graph of `build(builder, inputs)` on inputs of `avals` (its results)."""
    builder = GraphBuilder()
    inputs = [builder.new_input(aval) for aval in avals]
    outputs = [builder.own_var(value) if isinstance(value, Tracer) else builder.constant(value)
               for value in build(builder, inputs)]
    builder.finished = True
    return Graph(builder.inputs, builder.equations, outputs)
