"""The `same_sizes` check: dimensions of unknown size that meet in broadcasting.

Shape rules take two unknown dimensions (None in a Spec) that meet in an op to be equal, where
NumPy would broadcast one of size 1 instead; `check_unknown_sizes` records a `same_sizes`
equation, which has no results, that checks when the graph runs that they are. The elementwise
ops (runtime/primitives/elementwise.py) and np.broadcast_arrays call it; a reshape of unknown
size binds the check itself (runtime/primitives/unknown_reshape.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .batching import same_sizes_batching
from .registry import Primitive, bind, is_traced, register


@dataclass(frozen=True)
class CheckPrimitive(Primitive):
    """A primitive without results that checks its inputs when the graph runs; the passes keep
    it in place, as they keep a print (runtime/passes/cleanup.py has_side_effect)."""

    side_effect: Callable = lambda attrs: True


def _same_sizes_message(op: str) -> str:
    return (f"{op}: shapes {{}} and {{}} differ in dimensions of unknown size (None in a Spec) "
            f"that the trace takes to be equal; give them the same size")


def _same_sizes(a, b, axes, op):
    if tuple(a.shape[i] for i, _ in axes) != tuple(b.shape[j] for _, j in axes):
        raise ValueError(_same_sizes_message(op).format(a.shape, b.shape))
    return ()


def _same_sizes_statements(outputs, args, attrs):
    a, b = args
    left = "".join(f"{a}.shape[{i}], " for i, _ in attrs["axes"])
    right = "".join(f"{b}.shape[{j}], " for _, j in attrs["axes"])
    message = _same_sizes_message(attrs["op"])
    return [f"if ({left.rstrip(' ')}) != ({right.rstrip(' ')}):",
            f"    raise ValueError({message!r}.format({a}.shape, {b}.shape))"]


register(CheckPrimitive("same_sizes", _same_sizes, lambda a, b, axes, op: (),
                        statements=_same_sizes_statements, batching=same_sizes_batching))


def check_unknown_sizes(op: str, inputs, core: int = 0) -> None:
    """Record a `same_sizes` check for each two traced inputs with unknown dimensions that
    meet in broadcasting (leaving out the last `core` dimensions, for matmul).

    Shape rules take two unknown dimensions that meet to be equal; NumPy would broadcast one of
    size 1 instead, so the graph checks, when it runs, that they are equal.
    """
    traced = []
    for value in inputs:
        if is_traced(value) and None in value.shape and not any(
                value.graph_var is other.graph_var for other in traced):
            traced.append(value)
    if len(traced) < 2:
        return
    first: dict = {}  # aligned position -> (the first input with it unknown, its axis)
    pairs: dict = {}  # (input i, input j) -> [(axis of i, axis of j), ...]
    for index, value in enumerate(traced):
        ndim = len(value.shape) - core
        for axis in range(max(ndim, 0)):
            if value.shape[axis] is None:
                position = axis - ndim
                if position in first:
                    other, other_axis = first[position]
                    if not _same_origin(traced[other], other_axis, value, axis):
                        pairs.setdefault((other, index), []).append((other_axis, axis))
                else:
                    first[position] = (index, axis)
    for (i, j), axes in pairs.items():
        bind("same_sizes", traced[i], traced[j], axes=tuple(axes), op=op)


def _same_origin(a, a_axis: int, b, b_axis: int) -> bool:
    """Whether two unknown dimensions are known to be equal: they have one origin."""
    a_origins, b_origins = a.aval.origins, b.aval.origins
    return (a_origins is not None and b_origins is not None
            and a_origins[a_axis] is not None and a_origins[a_axis] == b_origins[b_axis])
