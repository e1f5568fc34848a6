"""Gradients a derivative hands back, each in memory of its own: never an argument's memory
(or dy's, which `seed` passes on as it is), nor another gradient's, which the caller could
write into through it. Inside the derivative arrays are passed on without copies; here, where
they leave, those that may share memory are copied, and only those.
"""
from __future__ import annotations

import numpy as np

from ..array_subclasses import READ_BESIDE_ARGUMENTS, arguments_of, refuse_read_beside
from ..containers import instance_fields, rebuild
from ..held_state import holds_state
from .objects import is_dataclass_instance, map_fields


def fresh_gradients(gradients: tuple) -> tuple:
    """The gradients a derivative of several arguments hands back (each `match`ed already),
    each in memory of its own: one that may share memory with an earlier one is copied, any
    other is handed back as it is, without a copy.

    Inside the derivative arrays are passed on without copies (`unbroadcast` gives its
    gradient itself where the shapes agree), so `x + y` gives both arguments one array. NumPy
    code that computed the gradients would give two arrays, which a caller may write into; so
    here, where they leave, they are made so. Traced values are compared by identity (the
    memory they will have is not known while tracing).
    """
    return _apart(gradients, [])


def _apart(tree, seen: list):
    """`tree` with each array that may share memory with one of `seen`, or with an earlier
    array of `tree`, copied; `seen` gains the arrays of the result."""
    def fresh(leaf):
        refuse_read_beside(leaf, f"{READ_BESIDE_ARGUMENTS}, or dy,")  # computed from one
        if _may_share(leaf, seen):
            leaf = np.copy(leaf) if _is_traced_array(leaf) else leaf.copy()
        seen.append(leaf)
        return leaf

    return _map_leaves(tree, fresh)


def _may_share(leaf, others) -> bool:
    """Whether the array `leaf` may share memory with one of `others` (traced: is one, or a
    view of one, as far as the trace knows)."""
    if type(leaf) is np.ndarray and leaf.base is None:
        # It owns its memory: only it, or a view of it, can share that (a view's base is the
        # array that owns the memory), a test far cheaper than np.may_share_memory. (A loop:
        # a generator would cost more than the tests, in every gradient's `match`.)
        for other in others:
            if other is leaf or isinstance(other, np.ndarray) and other.base is leaf:
                return True
        return False
    if _is_traced_array(leaf):  # it, or what it is a view of (`dy.T`), is one of `others`
        while leaf is not None:
            if any(leaf is other for other in others):
                return True
            leaf = leaf._view_base
        return False
    return isinstance(leaf, np.ndarray) and any(
        isinstance(other, np.ndarray) and np.may_share_memory(leaf, other) for other in others)


_NO_ARRAYS = (type(None), float, int, bool, str)
_IMMUTABLE = (type(None), float, int, complex, np.generic)


def _apart_from_arguments(gradient, frame, given: dict | None = None):
    """`gradient` with each array that may share memory with an argument of the derivative
    running in `frame` (an input, or `dy`, which `seed` passes on as it is; `given`: its
    arguments_of(frame) if read already), or with another array of `gradient` (the gradient of
    a dict of arrays), copied."""
    if isinstance(gradient, _IMMUTABLE):
        return gradient  # a number: nothing to share, and no need to look at the arguments
    plain = type(gradient) is np.ndarray
    owner = plain and gradient.base is None
    arguments = []
    for value in (arguments_of(frame) if given is None else given).values():
        if type(value) is np.ndarray:
            if owner:  # only it, or a view of it, shares its memory: told here, for good
                if value is gradient or value.base is gradient:
                    return gradient.copy()
                continue
            arguments.append(value)
        elif type(value) not in _NO_ARRAYS:
            _leaves(value, arguments.append)
    if plain:  # the common case, without walking a tree
        return gradient.copy() if arguments and _may_share(gradient, arguments) else gradient
    return _apart(gradient, arguments)


def _is_traced_array(value) -> bool:
    """Whether `value` is a traced array, asked of its type: a name the derivative has not
    assigned yet (runtime/tracing/control_variables.py) raises on any attribute read."""
    return getattr(type(value), "_is_traced_array", False)


def _leaves(value, visit) -> None:
    """Call `visit` on each array (NumPy's, or traced) in a tree of containers and dataclasses."""
    if isinstance(value, (tuple, list)):
        for item in value:
            _leaves(item, visit)
    elif isinstance(value, dict):
        for item in value.values():
            _leaves(item, visit)
    elif is_dataclass_instance(value):  # (not what it holds as it is: its parent, itself)
        for name in instance_fields(value):
            _leaves(getattr(value, name), visit)
    elif isinstance(value, np.ndarray) or _is_traced_array(value):
        visit(value)


def _map_leaves(value, function):
    if isinstance(value, (tuple, list)):
        return rebuild(value, [_map_leaves(item, function) for item in value])
    if isinstance(value, dict):
        return rebuild(value, ((k, _map_leaves(v, function)) for k, v in value.items()))
    if is_dataclass_instance(value) and not holds_state(value):
        return map_fields(lambda field: _map_leaves(field, function), value)
    if isinstance(value, np.ndarray) or _is_traced_array(value):
        return function(value)
    return value
