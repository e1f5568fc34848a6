"""The batching rules of traced control flow (runtime/tracing/control.py declares them in its
ops' rows; runtime/primitives/batching.py says what a rule is)."""
from __future__ import annotations

import numpy as np

from ..graph import Graph
from ..passes import optimize
from ..passes.cleanup import has_side_effect
from ..primitives.batching import NoBatchingRule, Unbatched, unrolled_batching
from .control_aliases import inline_graph
from .stack_batching import as_batch, is_stack, refuse_unrolled, select
from .tracer import GraphBuilder, Tracer


def cond_batching(call):
    """Both branches batched; where the condition is the same for every example, the cond
    chooses one; where it differs, both run, and np.where selects each example's results
    (stack_select each example's stacks of saved values, which both branches take as a
    batch: the one that is not taken must not change them). Each branch is given the mask of
    the examples that take it (tracer_batching.batch_graph), by which an index it reads is
    checked for those alone (primitives/batching.taken_indices)."""
    branches = call.attrs["branches"]
    if not call.batched[0]:
        return _one_branch(call, branches)
    args = [as_batch(arg, call.size) if is_stack(getattr(arg, "aval", None)) else arg
            for arg in call.args[1:]]
    flags = tuple(is_batched or is_stack(getattr(arg, "aval", None))
                  for arg, is_batched in zip(args, call.batched[1:]))
    true, false = (optimize(call.batch_graph(graph, flags)[0]) for graph in branches.graphs)
    builder = call.args[0]._builder
    condition = call.args[0] if call.args[0].dtype == bool else call.args[0] != 0
    masks = (_within(call, condition), _within(call, np.logical_not(condition)))
    chosen = [inline_graph(builder, graph, [*args, mask])
              for graph, mask in zip((true, false), masks)]
    if None in chosen:
        raise NoBatchingRule("its condition differs between examples, so both branches run, "
                             "but a branch prints or checks values; do that outside the if, "
                             "or loop over the examples in Python")
    condition = call.args[0]
    return tuple(_chosen(condition, t, f, call) for t, f in zip(*chosen))


def _one_branch(call, branches):
    """The cond of a condition the same for every example: one branch runs, for all of them.
    A result is batched where either branch makes it differ between examples (both give it
    the batch axis then, as the two branches of a cond must agree); the others stay one
    example's values (Unbatched), so that what depends on them alone is not batched."""
    flags = call.batched[1:]
    graphs, outputs = zip(*(call.batch_graph(graph, flags, False, all_batched=False)
                            for graph in branches.graphs))
    agreed = tuple(map(max, *outputs))
    true, false = (optimize(graph if batched == agreed else
                            call.batch_graph(original, flags, False, all_batched=agreed)[0])
                   for graph, batched, original in zip(graphs, outputs, branches.graphs))
    results = call.bind(*call.args, *_outer_mask(call), branches=type(branches)(true, false))
    return _marked(results, agreed)


def _outer_mask(call) -> list:
    """[the mask of the examples that take the subgraph `call` is in], which a graph it
    batches unmasked takes there too (its last input); [] outside such a subgraph."""
    return [call.mask] if call.masked else []


def _within(call, taken):
    """The examples that take a part of `call` (`taken`, bool[size]) and the subgraph that
    `call` is in."""
    return np.logical_and(taken, call.mask) if call.masked else taken


def _marked(results, batched: tuple) -> tuple:
    """The results of an op, those not `batched` marked Unbatched."""
    results = results if isinstance(results, tuple) else (results,)
    return tuple(result if is_batched else Unbatched(result)
                 for result, is_batched in zip(results, batched))


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
    """A loop whose condition is the same for every example runs as one loop, its values
    batched where they differ between examples. Otherwise a masked loop: it runs while the
    condition holds for any example, and each iteration changes only the loop values of the
    examples whose condition still holds, so every example ends with the values its own loop
    ends with."""
    loop = call.attrs["loop"]
    count = len(loop.body.outputs)
    carried = _batched_loop_values(call, loop, count)
    flags = (*carried, *call.batched[count:])
    if not call.batch_graph(loop.cond, flags, False, all_batched=False)[1][0]:
        return _same_trips(call, loop, carried)
    carried = [_with_batch(call, position) for position in range(count)]
    flags = (True,) * count + tuple(call.batched[count:])
    # The test runs for every example the loop is run for (the subgraph's mask where it is
    # in one, its last input), the body for those still running (the body's mask, its last)
    cond = optimize(call.batch_graph(loop.cond, flags, False)[0])
    body = optimize(call.batch_graph(loop.body, flags)[0])
    if any(has_side_effect(equation) for graph in (cond, body) for equation in graph.equations):
        refuse_unrolled(call.args)
        return unrolled_batching(call)  # it prints: each example's loop prints its own
    avals = [var.aval for var in cond.inputs]

    def running(builder, values):
        holds = inline_graph(builder, cond, values)[0]
        return np.logical_and(holds, values[-1]) if call.masked else holds

    def any_running(builder, values):
        return [np.any(running(builder, values))]

    def masked_body(builder, values):
        holds = running(builder, values)
        changed = inline_graph(builder, body, [*values[:len(body.inputs) - 1], holds])
        return [_chosen(holds, new, old, call) for new, old in zip(changed, values)]
    masked = type(loop)(optimize(_graph_of(avals, any_running)),
                        optimize(_graph_of(avals, masked_body)))
    return call.bind(*carried, *call.args[count:], *_outer_mask(call), loop=masked)


def _batched_loop_values(call, loop, count: int) -> tuple:
    """Which loop values differ between examples: those that come in batched, and those an
    iteration makes batched from batched values, until no more become so."""
    carried = tuple(call.batched[:count])
    while True:
        outputs = call.batch_graph(loop.body, (*carried, *call.batched[count:]), False,
                                   all_batched=False)[1]
        grown = tuple(map(max, carried, outputs))
        if grown == carried:
            return carried
        carried = grown


def _same_trips(call, loop, carried: tuple):
    """The loop as one loop for every example (its condition is the same for all), the loop
    values `carried` says batched with the batch axis, the others one example's."""
    count = len(carried)
    flags = (*carried, *call.batched[count:])
    body = optimize(call.batch_graph(loop.body, flags, False, all_batched=carried)[0])
    cond = optimize(call.batch_graph(loop.cond, flags, False, all_batched=False)[0])
    args = [_with_batch(call, position) if carried[position] else call.args[position]
            for position in range(count)]
    results = call.bind(*args, *call.args[count:], *_outer_mask(call),
                        loop=type(loop)(cond, body))
    return _marked(results, carried)


def _with_batch(call, position: int):
    """Loop value `position` with the batch axis (a copy of its own: the loop may write into
    it), or a batch of stacks."""
    value = call.args[position]
    if is_stack(getattr(value, "aval", None)):
        return as_batch(value, call.size)
    return np.copy(call.with_batch(position))


def _graph_of(avals: list, build) -> Graph:
    """The graph of `build(builder, inputs)` on inputs of `avals` (its results)."""
    builder = GraphBuilder()
    inputs = [builder.new_input(aval) for aval in avals]
    outputs = [builder.own_var(value) if isinstance(value, Tracer) else builder.constant(value)
               for value in build(builder, inputs)]
    builder.finished = True
    return Graph(builder.inputs, builder.equations, outputs)
