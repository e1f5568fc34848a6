"""The recomputation barrier of gradient checkpointing (autotrace.checkpoint).

Reverse mode recomputes a checkpointed call in the adjoint sweep from the call's inputs,
`dg(recompute_from(x, dy), dy=dy)`, instead of keeping what the call computed in the primal
sweep. Eagerly `recompute_from(x, dy)` is `x`. In a traced graph it is the op
`recompute_barrier`, an identity that the graph passes do not see through: common-subexpression
elimination would otherwise find the recomputed ops equal to the primal sweep's (same op, same
inputs) and merge them, keeping every intermediate alive from the primal sweep to the adjoint
sweep, which is what checkpointing is there to avoid. Its second input, the gradient arriving at
the call, ties the recomputation to the adjoint sweep. Executors write it as the name of its
first input: it costs nothing when it runs.
"""
from __future__ import annotations

from ..containers import rebuild
from .registry import Primitive, register


class _Barrier(Primitive):
    """A primitive that constant folding leaves as it is (runtime/passes/cleanup.py)."""

    opaque = True
    views_of = (0,)  # its output is its first input; the second only orders it


BARRIER = register(_Barrier(
    "recompute_barrier", lambda value, *after: value, lambda value, *after: value,
    source=lambda args, attrs: args[0],
    batching=lambda call: call.bind(call.with_batch(0), *call.args[1:])))


def _innermost_builder(builders: list):
    """Of the traces `builders` record into, the one inside all the others (a loop body's,
    which captures the enclosing trace's values)."""
    for builder in builders:
        enclosing = list(getattr(builder, "enclosing", lambda: ())())
        if all(other is builder or other in enclosing for other in builders):
            return builder
    return builders[0]


def _first_traced(value):
    if getattr(value, "_builder", None) is not None:
        return value
    items = value.values() if isinstance(value, dict) else (
        value if isinstance(value, (tuple, list)) else ())
    for item in items:
        found = _first_traced(item)
        if found is not None:
            return found
    return None


def recompute_from(value, after):
    """`value` (each array of a tuple, list or dict of them) as the input of a recomputation
    that runs after `after` is computed; see the module docstring."""
    if isinstance(value, (tuple, list)):
        return rebuild(value, [recompute_from(item, after) for item in value])
    if isinstance(value, dict):
        return type(value)((key, recompute_from(item, after)) for key, item in value.items())
    if getattr(value, "_builder", None) is None:
        return value  # not traced: nothing a graph pass could merge
    anchor = _first_traced(after)
    inputs = (value,) if anchor is None else (value, anchor)
    builder = _innermost_builder([item._builder for item in inputs])
    return builder.record(BARRIER, inputs, {})
