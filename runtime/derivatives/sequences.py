"""Gradients of list and tuple concatenation (`a + b`) and repetition (`a * n`).

A concatenation's gradient splits into the operands' lengths; a repetition's sums the copies.
Reverse mode writes these where an operand is a list or a tuple; where it cannot tell a list
from an array before the code runs, the generated code asks `concatenates(a, b)` or
`repeats(a, b)` (transforms/analysis/list_operators.py says where).
"""
from __future__ import annotations

import numpy as np

from .structure import add, zeros_like
from ..primitives.index import as_array

_SEQUENCES = (list, tuple)


def concatenate(a, b):
    """`a + b` for two lists or two tuples (reverse mode keys its rule on this function)."""
    return a + b


def add_or_concatenate(a, b):
    """`a + b`, where either the operands are numbers or arrays, or both lists or tuples."""
    return a + b


def repeat(a, b):
    """`a * b` for a list or tuple and an integer count, either way round."""
    return a * b


def multiply_or_repeat(a, b):
    """`a * b`, where either the operands are numbers or arrays, or one repeats the other."""
    return a * b


def concatenates(a, b) -> bool:
    """Whether `a + b` joins two lists or two tuples, rather than adding numbers or arrays."""
    return isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES)


def repeats(a, b) -> bool:
    """Whether `a * b` repeats a list or tuple: the other operand is an integer (a Python or
    NumPy scalar; an array, even a 0-d one, broadcasts the sequence instead)."""
    return ((isinstance(a, _SEQUENCES) and _is_count(b))
            or (isinstance(b, _SEQUENCES) and _is_count(a)))


def _is_count(value) -> bool:
    # A traced array has `__index__` (which refuses) and multiplies a list as an array does.
    return (not isinstance(value, _SEQUENCES + (np.ndarray,))
            and not getattr(type(value), "_is_traced_array", False)
            and hasattr(value, "__index__"))


def _like(value, items):
    """`items` in the container kind of `value` (a list, tuple or namedtuple); the array of
    them where `value` is an array (a list's gradient, read as NumPy reads the list, which a
    derivative of a derivative gets as `value`)."""
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return type(value)(*items)
    if not isinstance(value, _SEQUENCES):
        return as_array(list(items))
    return type(value)(items)


def first_items(gradient, like):
    """The gradient of `a` in the concatenation `a + b`, given the gradient of the result: its
    first len(a) items."""
    return _like(like, list(gradient)[:len(like)])


def last_items(gradient, like):
    """The gradient of `b` in the concatenation `a + b`: the last len(b) items."""
    items = list(gradient)
    return _like(like, items[len(items) - len(like):])


def sum_copies(gradient, like):
    """The gradient of `like` in the repetition `like * n` (or `n * like`): the sum of the
    gradient's n copies of like's items. For the count n itself, zero."""
    if not isinstance(like, _SEQUENCES) or not len(like):
        return zeros_like(like)
    items = list(gradient)
    size = len(like)
    total = items[:size]
    for start in range(size, len(items), size):
        total = [add(t, g) for t, g in zip(total, items[start:start + size])]
    return _like(like, total)


def append_zeros_like(gradient, value):
    """`gradient` (of a list) with a zero gradient for `value` after its items: the gradient
    of the list before `pop` took `value` off it, where nothing read `value`."""
    return _like(gradient, list(gradient) + [zeros_like(value)])


# The adjoints of first_items, last_items and sum_copies (second derivatives differentiate
# generated code).

def place_first(gradient, like):
    """Zeros shaped like `like` (a list or tuple), with `gradient`'s items first: the adjoint of
    `first_items`."""
    rest = list(zeros_like(like))[len(gradient):]
    return _like(like, list(gradient) + rest)


def place_last(gradient, like):
    """Zeros shaped like `like`, with `gradient`'s items last: the adjoint of `last_items`."""
    items = list(zeros_like(like))
    return _like(like, items[:len(items) - len(gradient)] + list(gradient))


def copies(gradient, like, repeated):
    """`gradient` repeated to the length of `like`, the adjoint of `sum_copies(g, repeated)`;
    zeros shaped like `like` where `repeated` is the count."""
    if not isinstance(repeated, _SEQUENCES) or not len(gradient):
        return zeros_like(like)
    return _like(like, list(gradient) * (len(like) // len(gradient)))
