"""The batching rules of traced control flow (runtime/tracing/control.py declares them in its
ops' rows; runtime/primitives/batching.py says what a rule is)."""
from __future__ import annotations

import numpy as np

from ..passes import optimize
from ..primitives.batching import NoBatchingRule
from .control_aliases import inline_graph


def cond_batching(call):
    """Both branches batched; where the condition is the same for every example, the cond
    chooses one; where it differs, both run, and np.where selects each example's results."""
    branches = call.attrs["branches"]
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
