"""The batching rules of traced control flow (runtime/tracing/control.py declares them in its
ops' rows; runtime/primitives/batching.py says what a rule is)."""
from __future__ import annotations

import numpy as np

from ..abstract import AbstractArray
from ..graph import Graph
from ..passes import optimize
from ..passes.cleanup import has_side_effect
from ..primitives.batching import NoBatchingRule, unrolled_batching
from .control_aliases import inline_graph
from .tracer import GraphBuilder, Tracer


def cond_batching(call):
    """Both branches batched; where the condition is the same for every example, the cond
    chooses one; where it differs, both run, and np.where selects each example's results."""
    branches = call.attrs["branches"]
    _refuse_stacks(branches.graphs)
    true, false = (optimize(call.batch_graph(graph, call.batched[1:])[0])
                   for graph in branches.graphs)
    if not call.batched[0]:
        return call.bind(*call.args, branches=type(branches)(true, false))
    builder = call.args[0]._builder
    chosen = [inline_graph(builder, graph, list(call.args[1:])) for graph in (true, false)]
    if None in chosen:
        raise NoBatchingRule("its condition differs between examples, so both branches run, "
                             "but a branch prints or checks values")
    condition = call.args[0]
    return tuple(np.where(np.reshape(condition, (call.size, *(1,) * (np.ndim(t) - 1))), t, f)
                 for t, f in zip(*chosen))


def print_batching(call):
    call.bind(*call.args)  # prints the batch's values
    return ()


def while_batching(call):
    """A masked loop: it runs while the condition holds for any example, and each iteration
    changes only the loop values of the examples whose condition still holds, so every
    example ends with the values its own loop ends with."""
    loop = call.attrs["loop"]
    _refuse_stacks(loop.graphs)
    count = len(loop.body.outputs)
    carried = [np.copy(call.with_batch(position)) for position in range(count)]
    flags = (True,) * count + tuple(call.batched[count:])
    cond, body = (optimize(call.batch_graph(graph, flags)[0]) for graph in loop.graphs)
    if any(has_side_effect(equation) for graph in (cond, body) for equation in graph.equations):
        return unrolled_batching(call)  # it prints: each example's loop prints its own
    avals = [var.aval for var in cond.inputs]

    def running(builder, values):
        holds = inline_graph(builder, cond, values)[0]
        return holds, [np.reshape(holds, (call.size, *(1,) * (np.ndim(value) - 1)))
                       for value in values[:count]]

    def any_running(builder, values):
        return [np.any(running(builder, values)[0])]

    def masked_body(builder, values):
        _, masks = running(builder, values)
        changed = inline_graph(builder, body, values)
        return [np.where(mask, new, old) for mask, new, old in zip(masks, changed, values)]
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


_STACKS = ("the derivative of a traced loop saves values on a stack, which is not batched yet "
           "(masked or chosen by example, its pushes and pops would not pair up); take the "
           "gradient inside a loop over the examples")


def _refuse_stacks(graphs) -> None:
    """Refuse subgraphs that push or pop a stack of saved values (or hold one): run for
    examples whose condition does not hold, or for none, they would change it."""
    for graph in graphs:
        values = [*graph.inputs, *(var for equation in graph.equations
                                   for var in equation.outputs)]
        if any(not isinstance(var.aval, AbstractArray) for var in values):
            raise NoBatchingRule(_STACKS)
        for equation in graph.equations:
            _refuse_stacks([inner for value in equation.attrs.values()
                            for inner in getattr(value, "graphs", ())])
