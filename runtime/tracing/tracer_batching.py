"""The batching transform: a graph of one example becomes the graph of a batch (autotrace.vmap).

    batched, outputs_batched = batch_graph(graph, (True, False), size=8)

Each value of the graph either carries a batch axis, always its axis 0, or is the same for
every example. An equation none of whose inputs is batched is copied as it is; one that reads a
batched value is replaced by what its op's batching rule records (`Primitive.batching`,
runtime/primitives/batching.py), and its results are batched (but those the rule of a `cond` or
`while` finds the same for every example: `Unbatched`). Every result a rule makes is
checked against the example's trace: the batch size first, then the example's shape, and the
same dtype; a mismatch is an error rather than a wrong value. An op without a rule is refused,
naming the op. The rules compute on Tracers of a builder of the transform's own, with NumPy's
functions as a traced function does: batching is tracing a graph again, a batch at a time.
"""
from __future__ import annotations

import numpy as np

from ..abstract import AbstractArray
from ..graph import Constant, Graph, Literal
from ..passes.buffers import unbuffered_attrs
from ..primitives.batching import BatchedCall, NoBatchingRule, Unbatched
from .stack_batching import AbstractStackBatch, as_batch, batched_aval, is_stack
from .tracer import GraphBuilder, Tracer
from ..user_frames import code_site
from ..errors import TracingError


class BatchingError(NotImplementedError, TracingError):
    """autotrace.vmap cannot batch an op of the traced function (the message goes on from
    `autotrace.vmap(f) `, which autotrace.vmap puts before it, and the place of the code that
    made the op after it).

    Attributes:
        site: (file, line) of the code that recorded the op (Equation.site), or None.
    """

    def __init__(self, message: str, site: tuple | None = None):
        super().__init__(message)
        self.site = site


def batch_graph(graph: Graph, batched: tuple, size: int,
                all_batched: bool = False, masked: bool = False) -> tuple[Graph, tuple]:
    """The graph computing `graph` for `size` examples at once.

    Arguments:
        graph: a traced graph of one example.
        batched: for each input of `graph`, whether it differs between examples; the batched
            graph takes those with a batch axis first (length `size`).
        size: the batch size.
        all_batched: give every output the batch axis, also those the same for every
            example (the branches of a `cond` must agree); a tuple: the outputs it names
            (True), and those that differ between examples.
        masked: the graph is a loop body or branch that runs for examples that do not take
            it too (whose results a mask then discards); the batched graph then takes one
            input more, the last: that mask (bool[size]), True for the examples that take it.
    Returns:
        (batched graph, for each output whether it carries the batch axis first).
    """
    builder = GraphBuilder()
    values = {}
    for var, is_batched in zip(graph.inputs, batched):
        aval = batched_aval(var.aval, size) if is_batched else var.aval
        values[var] = (builder.new_input(aval), is_batched)
    mask = builder.new_input(AbstractArray((size,), np.dtype(bool), _device(graph))) \
        if masked else None
    for equation in graph.equations:
        _batch_equation(equation, values, size, builder, mask)
    outputs, outputs_batched = [], []
    wanted = all_batched if isinstance(all_batched, tuple) else (all_batched,) * len(
        graph.outputs)
    for value, batch_it in zip(graph.outputs, wanted):
        traced, is_batched = _value_of(value, values)
        if batch_it and not is_batched:
            traced = as_batch(traced, size) if is_stack(getattr(traced, "aval", None)) \
                else np.broadcast_to(traced, (size, *np.shape(traced)))
            is_batched = True
        outputs.append(builder.own_var(traced) if isinstance(traced, Tracer)
                       else builder.constant(traced))
        outputs_batched.append(is_batched)
    builder.finished = True
    return Graph(builder.inputs, builder.equations, outputs), tuple(outputs_batched)


def _device(graph: Graph) -> str:
    """The device of the graph's first array input ("cpu" where it has none)."""
    return next((var.aval.device for var in graph.inputs
                 if isinstance(var.aval, AbstractArray)), "cpu")


def _value_of(item, values: dict):
    """(what an equation input is in the batched graph, whether it is batched)."""
    if isinstance(item, Literal):
        return item.value, False
    if isinstance(item, Constant):
        return item.value, False
    return values[item]


def _batch_equation(equation, values: dict, size: int, builder: GraphBuilder,
                    mask) -> None:
    args, batched = zip(*[_value_of(item, values) for item in equation.inputs]) \
        if equation.inputs else ((), ())
    attrs = unbuffered_attrs(equation)  # a subgraph's, optimized: the batch chooses again
    start, here = len(builder.equations), code_site()  # (the site `bind` gives an op here)
    _record_batched(equation, args, batched, attrs, values, size, builder, mask)
    for recorded in builder.equations[start:]:  # made by the line that made the equation,
        if recorded.site == here:  # but a subgraph's inlined ops keep their own lines
            recorded.site = equation.site


def _record_batched(equation, args, batched, attrs, values, size, builder, mask) -> None:
    masked = mask is not None
    if not any(batched):
        results = builder.record(equation.primitive, args, attrs)
        results = results if isinstance(results, tuple) else (results,)
        values.update((var, (result, False)) for var, result in zip(equation.outputs, results))
        return
    rule = equation.primitive.batching
    name = equation.primitive.name
    if rule is None:
        raise BatchingError(
            f"has no batching rule for the op {name!r}, which the function applies to a "
            f"batched value; compute it outside vmap, or loop over the examples in Python",
            equation.site)
    call = BatchedCall(equation.primitive, tuple(args), tuple(batched), size, attrs,
                       lambda graph, flags, inner_masked=True, all_batched=True: batch_graph(
                           graph, flags, size, all_batched=all_batched,
                           masked=masked or inner_masked),
                       tuple(var.aval for var in equation.outputs), masked, mask)
    try:
        results = rule(call)
    except NoBatchingRule as error:
        raise BatchingError(f"cannot batch the op {name!r}: {error}", equation.site) from None
    results = results if isinstance(results, tuple) else (results,)
    if len(results) != len(equation.outputs):
        raise AssertionError(f"autotrace internal error: the batching rule of {name!r} gave "
                             f"{len(results)} results for {len(equation.outputs)}")
    for var, result in zip(equation.outputs, results):
        is_batched = not isinstance(result, Unbatched)
        result = result if is_batched else result.value
        _check_result(name, var.aval, result, size if is_batched else None)
        values[var] = (result, is_batched)


def _check_result(name: str, example: AbstractArray, result, size: int | None) -> None:
    """Refuse a batched result whose type is not the example's with the batch axis first (an
    unbatched one, `size` None, whose type is not the example's)."""
    if is_stack(example):
        wanted = example if size is None else AbstractStackBatch(example, size)
        if getattr(result, "aval", None) != wanted:
            raise AssertionError(f"autotrace internal error: the batching rule of {name!r} "
                                 f"gave {result!r} where {wanted!r} belongs")
        return
    shape, dtype = np.shape(result), getattr(result, "dtype", None)
    expected = example.shape if size is None else (size, *example.shape)
    fits = len(shape) == len(expected) and all(
        want is None or got is None or got == want for got, want in zip(shape, expected))
    if not fits or dtype != example.dtype:
        raise AssertionError(
            f"autotrace internal error: the batching rule of {name!r} gave a "
            f"{getattr(dtype, 'name', dtype)} array of shape {shape} where the batch of "
            f"{'no' if size is None else size} examples of {example} is {example.dtype.name}{list(expected)}")
