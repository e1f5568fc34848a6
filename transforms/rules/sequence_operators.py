"""Rules of `+` and `*` on lists and tuples, and of the helpers their gradients call.

Reverse mode inlines `concatenate`'s rule for `a + b` on operands it knows are lists or tuples,
and `add_or_concatenate`'s where it cannot tell (transforms/sequences.py): that one decides
when it runs. `*` has the same pair, for repetition.
"""
from ...runtime.derivatives.adjoint_ops import unbroadcast
from ...runtime.derivatives.sequences import (add_or_concatenate, append_zeros_like, concatenate,
                                              concatenates, copies, first_items, last_items,
                                              multiply_or_repeat, place_first, place_last, repeat,
                                              repeats, sum_copies)
from .core import adjoint, constant, d
from .declarations import linear

constant(concatenates, repeats)


@adjoint(concatenate)
def concatenate_rule(y, x1, x2):
    d[x1] = first_items(d[y], x1)
    d[x2] = last_items(d[y], x2)


@adjoint(add_or_concatenate)
def add_or_concatenate_rule(y, x1, x2):
    d[x1] = first_items(d[y], x1) if concatenates(x1, x2) else unbroadcast(d[y], x1)
    d[x2] = last_items(d[y], x2) if concatenates(x1, x2) else unbroadcast(d[y], x2)


@adjoint(repeat)
def repeat_rule(y, x1, x2):
    d[x1] = sum_copies(d[y], x1)
    d[x2] = sum_copies(d[y], x2)


@adjoint(multiply_or_repeat)
def multiply_or_repeat_rule(y, x1, x2):
    d[x1] = sum_copies(d[y], x1) if repeats(x1, x2) else unbroadcast(d[y] * x2, x1)
    d[x2] = sum_copies(d[y], x2) if repeats(x1, x2) else unbroadcast(d[y] * x1, x2)


# The helpers are linear in their first argument, their own tangents: each one's adjoint is
# another of them.

@linear(first_items)
def first_items_rule(y, gradient, like):
    d[gradient] = place_first(d[y], gradient)


@linear(last_items)
def last_items_rule(y, gradient, like):
    d[gradient] = place_last(d[y], gradient)


@linear(sum_copies)
def sum_copies_rule(y, gradient, like):
    d[gradient] = copies(d[y], gradient, like)


@linear(place_first)
def place_first_rule(y, gradient, like):
    d[gradient] = first_items(d[y], gradient)


@linear(place_last)
def place_last_rule(y, gradient, like):
    d[gradient] = last_items(d[y], gradient)


@linear(copies)
def copies_rule(y, gradient, like, repeated):
    d[gradient] = sum_copies(d[y], gradient)


@linear(append_zeros_like)
def append_zeros_like_rule(y, gradient, value):
    d[gradient] = first_items(d[y], gradient)

