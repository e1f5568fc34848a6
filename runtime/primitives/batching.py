"""Batching rules: how an op runs on values that carry a batch axis (autotrace.vmap).

A rule is the `batching` field of an op's `Primitive`, declared in its family's row. The graph
transform (runtime/tracing/tracer_batching.py) calls it for each equation that reads a batched
value, with a `BatchedCall`: the equation's inputs (those batched carry the batch axis first,
axis 0), which of them are batched, the batch size and the attributes. The rule records what
computes the batched result, by `bind` and NumPy functions on the inputs, and returns it (a
tuple for several results), every result batched along axis 0, or, where it is the same for
every example, wrapped in `Unbatched` (a traced `cond` whose condition is):

    def transpose_batching(call):            # per example: np.transpose(x, axes)
        axes = call.attrs["axes"] or reversed_axes(call.example_ndim(0))
        return call.bind(call.args[0], axes=(0, *(axis + 1 for axis in axes)))

The transform checks each result's shape and dtype against the per-example trace, so a rule
that gets an axis wrong is an error, never a wrong value. An op that cannot be batched yet has a
rule that refuses with the reason (`refuse_batching`); an op with no rule at all is refused too.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .registry import bind
from ..errors import TracingError


class NoBatchingRule(NotImplementedError, TracingError):
    """An op autotrace.vmap cannot batch (the transform adds which op and where)."""


@dataclass(frozen=True)
class Unbatched:
    """A result of a batching rule that is the same for every example: `value` has no batch
    axis. Only rules that run a subgraph (cond, while) know that of a result; keeping it
    unbatched keeps what depends on it alone (a branch on it, an index with it) one example's
    computation, run once."""

    value: object


@dataclass
class BatchedCall:
    """One equation to batch.

    Attributes:
        primitive: its Primitive.
        args: its inputs: traced values (batched ones with the batch axis first), Python
            scalars for literals, arrays for constants.
        batched: for each input, whether it carries the batch axis.
        size: the batch size.
        attrs: its attributes.
        batch_graph: `batch_graph(graph, batched, masked=True, all_batched=True) -> (graph,
            batched outputs)` batches a subgraph (the branches of a traced `cond`), every
            output with the batch axis (`all_batched`; False: only those that differ between
            examples; a tuple: those it names, and those that differ); `masked` where it runs
            for examples that do not take it too. A graph batched where it runs so, or inside
            such a subgraph (this equation `masked`), takes one input more, the last: the mask
            (bool[size]) of the examples that take it, which the rule gives it.
        example_outputs: the types of its results in one example's trace.
        masked: the equation is in a subgraph that runs for examples that do not take it
            too (a masked loop's body, a branch chosen per example), whose results for those
            examples a mask discards.
        mask: there, that mask (bool[size]): the examples that take the subgraph.
    """

    primitive: object
    args: tuple
    batched: tuple
    size: int
    attrs: dict
    batch_graph: object = None
    example_outputs: tuple = ()
    masked: bool = False
    mask: object = None

    def bind(self, *args, **changed):
        """The op itself on `args`, its attributes updated by `changed`."""
        return bind(self.primitive.name, *args, **{**self.attrs, **changed})

    def example_ndim(self, position: int) -> int:
        """The number of axes of input `position` in one example (without the batch axis)."""
        return np.ndim(self.args[position]) - self.batched[position]

    def example_shape(self, position: int) -> tuple:
        return tuple(np.shape(self.args[position])[self.batched[position]:])

    def with_batch(self, position: int):
        """Input `position` with the batch axis: broadcast along it where it has none."""
        value = self.args[position]
        if self.batched[position]:
            return value
        return np.broadcast_to(value, (self.size, *np.shape(value)))

    def aligned(self, position: int, ndim: int):
        """Batched input `position` with unit axes after the batch axis up to `ndim` axes per
        example, so that it broadcasts against unbatched values as NumPy aligns them (from the
        right); an unbatched one as it is."""
        value = self.args[position]
        missing = ndim - self.example_ndim(position)
        if not self.batched[position] or missing <= 0:
            return value
        return np.reshape(value, (self.size, *(1,) * missing, *self.example_shape(position)))


def taken_indices(call: BatchedCall, positions) -> BatchedCall:
    """`call` with its integer inputs at `positions` (indices, which raise where out of range)
    0 for the examples outside its mask, which run an equation they do not take (a branch
    chosen per example, a masked loop's body after they stopped) and whose results the mask
    discards: NumPy, which runs no such example, raises no IndexError for them. The examples
    that take it keep their indices, and NumPy's IndexError where one is out of range."""
    if call.mask is None:
        return call
    args, batched = list(call.args), list(call.batched)
    for position in positions:
        dtype = getattr(args[position], "dtype", None)
        if np.dtype(np.result_type(args[position]) if dtype is None else dtype).kind not in "iu":
            continue
        index = call.with_batch(position)
        mask = np.reshape(call.mask, (call.size, *(1,) * (np.ndim(index) - 1)))
        args[position], batched[position] = np.where(mask, index, 0), True
    return replace(call, args=tuple(args), batched=tuple(batched))


def refuse_batching(reason: str):
    """The rule of an op that autotrace.vmap cannot batch: `reason` says why and what to do."""
    def rule(call: BatchedCall):
        raise NoBatchingRule(reason)
    rule.refuses = reason
    return rule


# An op without a batched form runs once per example for batches up to this size.
UNROLL_LIMIT = 256


def unrolled_batching(call: BatchedCall):
    """The rule of an op without a batched form (np.kron, a random draw per key): it runs once
    for each example, on that example's inputs, and its results are stacked. The graph holds
    one such op per example, so batches past UNROLL_LIMIT are refused."""
    if call.size > UNROLL_LIMIT:
        raise NoBatchingRule(
            f"it has no batched form, so it runs once per example, for batches of at most "
            f"{UNROLL_LIMIT} examples (this one has {call.size}); split the batch")
    if call.size == 0:  # no example: one of zeros says the results' shapes, none of them
        example = call.bind(*[np.zeros(np.shape(arg)[1:], arg.dtype) if is_batched else arg
                              for arg, is_batched in zip(call.args, call.batched)])
        empty = [np.zeros((0, *np.shape(result)), result.dtype) for result in (
            example if isinstance(example, tuple) else (example,))]
        return tuple(empty) if isinstance(example, tuple) else empty[0]
    examples = [call.bind(*[arg[index] if is_batched else arg
                            for arg, is_batched in zip(call.args, call.batched)])
                for index in range(call.size)]
    if isinstance(examples[0], tuple):
        return tuple(np.stack(results) for results in zip(*examples))
    return np.stack(examples)


# The rule of an op that takes no inputs (np.zeros): no input of it is ever batched.
never_batched = refuse_batching("it takes no inputs, so none of them is ever batched")


def elementwise_batching(call: BatchedCall):
    """Any op that broadcasts its inputs elementwise (ufuncs, where, clip): the batched inputs
    get unit axes so that every example's axes line up, the batch axis first."""
    ndim = max(call.example_ndim(position) for position in range(len(call.args)))
    return call.bind(*[call.aligned(position, ndim) for position in range(len(call.args))])


def same_sizes_batching(call: BatchedCall):
    """The check that axes of two inputs have the same sizes: a batched input's axes move by
    one (an unbatched one is not broadcast, as a size it does not know cannot be)."""
    axes = tuple(tuple(shifted(axis) if call.batched[k] else axis for k, axis in enumerate(pair))
                 for pair in call.attrs["axes"])
    call.bind(*call.args[:2], axes=axes)
    return ()


def shifted(axis):
    """An axis attribute (an int, a tuple of ints or None) of one example as an axis of the
    batch; None stays None. Negative axes count from the end, which the batch axis does not
    change."""
    if axis is None:
        return None
    if isinstance(axis, tuple):
        return tuple(shifted(item) for item in axis)
    return axis + 1 if axis >= 0 else axis


def axis_batching(*names: str, defaults: dict | None = None, flat_when_none: str | None = None):
    """The rule of an op of one array input, the first, whose attributes `names` are axes of
    it (those absent from an equation take their NumPy default, from `defaults`): they move by
    one. Other array inputs get the batch axis too. With `flat_when_none`, the attribute of
    that name being None means the op works on the flattened array (np.cumsum(x)), and its
    result is flat: each example is flattened first."""
    defaults = defaults or {}

    def rule(call: BatchedCall):
        x = call.with_batch(0)
        axes = {name: call.attrs.get(name, defaults.get(name)) for name in names}
        changed = {name: shifted(axis) for name, axis in axes.items()}
        if flat_when_none is not None and axes[flat_when_none] is None:
            x = np.reshape(x, (call.size, -1))
            changed[flat_when_none] = 1
        others = [call.with_batch(p) for p in range(1, len(call.args))]
        return call.bind(x, *others, **changed)
    return rule


def merged_batch_batching(*positions: int):
    """The rule of an op over a leading axis of examples of its own (conv2d's and the
    pooling ops' N): the inputs at `positions` get the batch axis and merge it into that
    axis. Where another input (a kernel) differs between examples, the op runs once per
    example (`unrolled_batching`)."""
    def rule(call: BatchedCall):
        if any(is_batched and position not in positions
               for position, is_batched in enumerate(call.batched)):
            return unrolled_batching(call)
        args = list(call.args)
        for position in positions:
            value = call.with_batch(position)
            args[position] = np.reshape(value, (-1, *np.shape(value)[2:]))
        result = call.bind(*args)
        return np.reshape(result, (call.size, -1, *np.shape(result)[1:]))
    return rule
