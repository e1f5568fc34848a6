"""Stacks of saved values under autotrace.vmap: one stack per example.

The derivative of a traced loop pushes values in its forward loop and pops them in its adjoint
loop (runtime/tracing/stacks.py). Batched, a loop is masked: it runs while any example's
condition holds, and an iteration changes only the values of the examples still running
(runtime/tracing/control_batching.py). A stack must follow the same rule, or the adjoint loop of
an example would pop what the forward loop pushed for the others' iterations. So a stack that
a batched value is pushed on, or that a masked loop or a branch chosen per example carries,
becomes a batch of stacks, one per example, each an immutable linked list: a push or a pop
makes new lists, and a masked loop or a per-example branch keeps, for each example, the lists
its own path made (`stack_select`), as it keeps the example's arrays with np.where.

    b:stack[4] = stack_to_batch[size=4] a      # each example starts from a's contents
    c:stack[4] = stack_batch_push b x          # x[i] on example i's list
    d:stack[4] e:f64[4,3] = stack_batch_pop[shape=(3,), dtype=float64] c
    f:stack[4] = stack_select m c d            # c's list where m[i], else d's

At run time a batch of stacks is a tuple with one entry per example: None for an empty list,
else (the top value, the rest). Each example's list holds exactly what its own run would have
pushed, so where the example takes the path that pops, the pop pairs with its push. An example
whose list is empty, or whose top value is not of the popped type, pops zeros, and its list
becomes UNPAIRED: that happens only in an iteration or branch the example does not take (also
one nested in such), whose results a mask discards. Where the example's path is its own (a
pop outside any masked loop or per-example branch, the mask of the outermost one), its stack
being UNPAIRED is an error, never a wrong value: the pops are checked as where unbatched.
"""
from __future__ import annotations

import numpy as np

from ..abstract import AbstractArray
from ..devices import array_module
from ..primitives.batching import NoBatchingRule, refuse_batching
from ..primitives.registry import bind


class AbstractStackBatch:
    """The type of a batch of `size` stacks, each holding what `example`, the type of one
    example's stack, says."""

    shape = ()
    ndim = 0
    dtype = np.dtype(object)
    device = "cpu"

    def __init__(self, example, size: int):
        self.example, self.size = example, size

    def __eq__(self, other) -> bool:
        return (isinstance(other, AbstractStackBatch) and other.example == self.example
                and other.size == self.size)

    def __hash__(self) -> int:
        return hash((self.example, self.size))

    def __repr__(self) -> str:
        return f"stack[{self.size}]"


def is_stack(aval) -> bool:
    """Whether a graph value of type `aval` is a stack of saved values, of one example or a
    batch (the only values of a graph that are no arrays); None, the type of no graph value,
    is none."""
    return aval is not None and not isinstance(aval, AbstractArray)


def batched_aval(aval, size: int):
    """The type of the batch of `size` examples of a value of type `aval`."""
    if isinstance(aval, AbstractStackBatch):
        return aval
    if is_stack(aval):
        return AbstractStackBatch(aval, size)
    return AbstractArray((size, *aval.shape), aval.dtype, aval.device)


def as_batch(stack, size: int):
    """A traced stack as a batch of `size` stacks (each starting with its contents)."""
    if isinstance(stack.aval, AbstractStackBatch):
        return stack
    return bind("stack_to_batch", stack, size=size)


def select(mask, chosen, other, strict: bool):
    """For each example, the stacks of `chosen` where `mask` (one bool per example) holds,
    else those of `other`; `strict` where the mask is each example's own path (no enclosing
    loop or branch runs for examples that do not take it)."""
    return bind("stack_select", mask, as_batch(chosen, mask.shape[0]),
                as_batch(other, mask.shape[0]), strict=strict)


def refuse_unrolled(args) -> None:
    """Refuse to run an op once per example (a loop that prints) where it carries stacks."""
    if any(is_stack(getattr(arg, "aval", None)) for arg in args):
        raise NoBatchingRule("a loop that prints and saves values for a derivative runs once "
                             "per example, which a stack of saved values cannot follow; take "
                             "the print out of the loop")


# --- the batching rules of the stack ops ---------------------------------------------------

def push_batching(call):
    stack = as_batch(call.args[0], call.size)
    return bind("stack_batch_push", stack, call.args[1], batched=call.batched[1])


def pop_batching(call):
    popped = call.attrs["popped"]
    return bind("stack_batch_pop", call.args[0], shape=popped.shape,
                dtype=popped.dtype.name, strict=not call.masked)


# The ops below hold the batch of one vmap; a vmap around it is refused.
batched_again = refuse_batching(
    "the derivative of a traced loop, batched by one vmap, is not batched again by another; "
    "loop over one of the two batch axes in Python")


# --- the ops -------------------------------------------------------------------------------

def to_batch_impl(stack, *, size):
    linked = None
    for value in stack:
        linked = (value, linked)
    return (linked,) * size


def push_impl(stacks, value, *, batched):
    return tuple(UNPAIRED if linked is UNPAIRED else (value[index] if batched else value, linked)
                 for index, linked in enumerate(stacks))


def pop_impl(stacks, *, shape, dtype, strict):
    values, rests = [], []
    for linked in stacks:
        value, rest = (None, UNPAIRED) if linked is None or linked is UNPAIRED else linked
        if value is not None and (np.ndim(value) != len(shape) or any(
                size is not None and got != size for got, size in zip(np.shape(value), shape))):
            value, rest = None, UNPAIRED
        if strict and rest is UNPAIRED:
            raise RuntimeError(POPPED_WRONG)
        values.append(value)
        rests.append(rest)
    taken = [value for value in values if value is not None]
    xp = array_module(taken[0]) if taken else np  # (CuPy's arrays stay on their device)
    example_shape = np.shape(taken[0]) if taken else tuple(size or 0 for size in shape)
    empty = xp.zeros(example_shape, np.dtype(dtype))
    stacked = xp.stack([empty if value is None else value for value in values])
    return tuple(rests), stacked.astype(dtype, copy=False)


def select_impl(mask, chosen, other, *, strict):
    selected = tuple(a if keep else b for keep, a, b in zip(mask.tolist(), chosen, other))
    if strict and any(linked is UNPAIRED for linked in selected):
        raise RuntimeError(POPPED_WRONG)
    return selected


def to_batch_eval(stack, *, size):
    return AbstractStackBatch(stack, size)


def push_eval(stacks, value, *, batched):
    return stacks


def pop_eval(stacks, *, shape, dtype, strict):
    return stacks, AbstractArray((stacks.size, *shape), np.dtype(dtype))


def select_eval(mask, chosen, other, *, strict):
    return chosen


def source_of(function_name: str):
    """The `source` of an op computed by the function of that name in this module."""
    def source(args, attrs):
        keywords = "".join(f", {key}={value!r}" for key, value in attrs.items())
        return f"{function_name}({', '.join(args)}{keywords})"
    return source


# An example's stack after a pop that did not pair with its pushes (on a path it does not take).
UNPAIRED = ("unpaired",)

# Where an example's path is its own (`strict`), an UNPAIRED stack is an error, never a value.
POPPED_WRONG = ("autotrace internal error: under vmap, the saved values an example popped "
                "were not the ones it pushed; compute this derivative in a loop over the "
                "examples")
