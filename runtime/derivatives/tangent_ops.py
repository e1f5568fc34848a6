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
from .structure import like_container, zeros_like
from ..devices import array_module


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
    if iterates_by_its_methods(iterable):  # (its items' tangents are not followed)
        refuse_object_iteration(iterable, tangent)
        return zeros_like(result)
    return like_container(tangent, result)


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
