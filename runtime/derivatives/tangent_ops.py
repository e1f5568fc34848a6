"""Helpers that tangent (forward-mode) rules call, beside those in
runtime/derivatives/adjoint_ops.py.

Each is linear in its first argument, a tangent; the other arguments only say where that tangent
goes. Their own rules (transforms/rules/containers.py) keep derivative code closed under
further differentiation; `einsum_jvp_cross`, reached only by third derivatives of einsum, has none.
"""
from __future__ import annotations

from .adjoint_products import _replaced
from .items import _same
from .objects import iterates_by_its_methods, refuse_object_iteration
from .real_only import is_complex
from .structure import (_is_integral, in_dtype_of, item_by_item, like_container, ones_like,
                        zeros_like)
from ..array_subclasses import refuse_read_beside
from ..devices import array_module
from ..primitives.index import as_array
from ..primitives.registry import in_trace_of


def seed_tangent(tangent, value, dy):
    """The tangent of `seed(value, dy)`: dy's `tangent` when a seed was given, else zeros like
    `value` (the default seed, ones, is a constant)."""
    return zeros_like(value) if dy is None else tangent


def extremum_tangent(tangents, result, args):
    """The tangent of `result = max(*args)` (or min): the tangent of the first argument chosen,
    or, for a single iterable argument, of its first item chosen (as `extremum_gradient`)."""
    if len(args) == 1:
        items, tangents = list(args[0]), list(tangents[0])
    else:
        items = args
    for item, tangent in zip(items, tangents):
        if _same(item, result):
            return tangent
    return zeros_like(result)


def iteration_tangent(tangent, iterable, result):
    """The tangent of `result = list(iterable)` (or tuple, or `sequence`): the items' tangents in
    result's container. Iterating over a dict gives its keys, which carry no tangent."""
    if isinstance(iterable, dict):
        return zeros_like(result)
    if tangent is None and isinstance(result, range):  # a range's: an int's, of each item
        return zeros_like(list(result))
    if iterates_by_its_methods(iterable):  # (its items' tangents are not followed)
        refuse_object_iteration(iterable, tangent)
        return zeros_like(result)
    return like_container(tangent, result)


def sum_tangent(tangent, iterable, start):
    """The tangent of `sum(iterable, start)`, given those of the iterable and of start: the
    values an object of the user's iterates over by its methods carry none it follows (refused
    where a tangent reaches them)."""
    if iterates_by_its_methods(iterable):
        refuse_object_iteration(iterable, tangent)
        return start
    return sum(tangent, start)


def einsum_jvp_cross(subscripts, first, second, operands):
    """The second-order term of einsum: the sum over operand pairs j != k of
    np.einsum(subscripts, *operands) with operand j replaced by first[j] and k by second[k]."""
    xp = array_module(operands[0])
    total = xp.zeros_like(xp.einsum(subscripts, *operands))
    for j, tangent_j in enumerate(first):
        for k, tangent_k in enumerate(second):
            if j != k:
                moved = _replaced(_replaced(operands, j, tangent_j), k, tangent_k)
                total = total + xp.einsum(subscripts, *moved)
    return total


def tangent_seed(value, tangent):
    """The tangent a forward derivative starts from: `tangent` if given, else ones like
    `value` (a tuple of values takes a tuple of tangents), in the dtype of its value. An
    integer or boolean inside a container carries none: its tangent is zero, given or not, as
    its gradient is (`grad` of `{"a": 2.0, "n": 3}` gives n 0.0). A NumPy tangent of a traced
    value is traced too (the derivative may write into either)."""
    if tangent is None:
        return item_by_item(_zero_if_integral, ones_like(value), value)
    return item_by_item(_seed_leaf, in_dtype_of(tangent, value), value)


def _zero_if_integral(tangent, value):
    return zeros_like(value) if _is_integral(value) else tangent


def _seed_leaf(tangent, value):
    return in_trace_of(_zero_if_integral(tangent, value), value)


def tangent_like(tangent, value):
    """`tangent` broadcast to `value`'s shape, and complex where `value` is (after forward
    mode dropped a zero term that would have broadcast it, or made it complex: `x + 1j` of a
    real x, whose tangent a complex item written into it later must not lose its imaginary
    part in)."""
    refuse_read_beside(value)  # an operand was one, computed with operations of its own
    if is_complex(value) and not is_complex(tangent):
        tangent = read_as_array(tangent) + 0j
    shape = getattr(value, "shape", None)
    if shape is None or getattr(tangent, "shape", None) == shape:
        return tangent
    tangent = read_as_array(tangent)  # a list's, read as an array (`np.split(x, 3) - w`)
    return array_module(value).broadcast_to(tangent, shape).copy()


def read_as_array(tangent):
    """The tangent of a list or tuple that a NumPy function reads as one array: that array, as
    np.asarray makes it (stacked where some items are traced); any other tangent as it is. A
    tangent rule combines tangents with Python's operators, which repeat or join lists
    (`d[x] * 2`, `d[x1] + d[x2]`) where NumPy multiplies or adds their arrays."""
    return as_array(tangent)
