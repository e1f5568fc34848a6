"""Writes a traced branch or loop body makes into its operands' memory, carried out after it.

NumPy changes an array in place inside an `if` or a loop, and every name and view of that
memory sees it after. A subgraph's operands are new values inside it, so the change is taken
out: the operand's value at the end is written into the operand outside (runtime/views.py),
and a result that is that operand's memory is the operand itself again.
"""
from __future__ import annotations

import numpy as np

from .control_aliases import body_alias_is_new
from autotrace.runtime.control_scope import ControlFlowError
from autotrace.runtime.tracer import Tracer, write_value
from autotrace.runtime.trees import leaves_with_paths, map_arrays
from autotrace.runtime.views import shares_memory_with_another


class LoopMemoryError(ControlFlowError):
    """A traced loop changes memory in place in a way the graph cannot follow; the converted
    statement that traced it adds its line (control_variables._until_settled)."""


def changed_in_place(parent, operands, traced: list) -> list:
    """The indices of `operands`' array leaves (Tracers of `parent`) that a subgraph in
    `traced` changes in place: NumPy changes their memory, seen by every name for it."""
    return [index for index, (_, leaf) in enumerate(leaves_with_paths(operands))
            if isinstance(leaf, Tracer) and leaf._builder is parent and leaf.ndim >= 1
            and any(subgraph.written[index] is not None for subgraph in traced)]


def positions_of_operands(subgraph, changed: list) -> list:
    """For each array leaf of the subgraph's result, the index of the operand leaf (one of
    `changed`) whose inner leaf it is (the name still holds that memory), else None."""
    inner = {id(subgraph.inner[index]): index for index in reversed(changed)}
    return [inner.get(id(leaf)) for _, leaf in leaves_with_paths(subgraph.result)]


def write_back(operands, changed: list, values: tuple, results, positions: list):
    """Write `values`, the new values of the operand leaves at indices `changed`, into those
    operands, and put each of them back in `results` where `positions` says the result is
    that operand's memory (see positions_of_operands)."""
    outer_leaves = [leaf for _, leaf in leaves_with_paths(operands)]
    for index, value in zip(changed, values):
        write_value(outer_leaves[index], value)
    positions = iter(positions)

    def operand_or_leaf(leaf):
        index = next(positions)
        return leaf if index is None else outer_leaves[index]
    return map_arrays(results, operand_or_leaf)


def loop_write_back(parent, init_vals, body, values):
    """The loop's results `values`, after writing each loop value that the body (a
    TracedSubgraph) changes in place and carries on as itself into the value it was before the
    loop (the same memory), which then stands for it in `values`."""
    changed = changed_in_place(parent, (init_vals,), [body])
    _refuse_shared_change(init_vals, changed)
    positions = positions_of_operands(body, changed)
    carried = [index for index, position in enumerate(positions) if position == index]
    if not carried:
        return values
    leaves_after = [leaf for _, leaf in leaves_with_paths(values)]
    return write_back((init_vals,), carried, [leaves_after[index] for index in carried], values,
                      [index if index in carried else None for index in positions])


def _refuse_shared_change(init_vals, changed: list) -> None:
    """Raise where a loop changes in place (`changed`: indices of `init_vals`' array leaves) a
    value another loop value shares memory with: the body, traced once, reads each from an
    input of its own, which the next iteration could not keep in step."""
    outer_leaves = [leaf for _, leaf in leaves_with_paths(init_vals)]
    for index in changed:
        if shares_memory_with_another(outer_leaves, index):
            raise LoopMemoryError(
                f"a traced loop changes a loop value in place ({outer_leaves[index].aval}) "
                f"that shares its memory with another loop value (the same array, or a view "
                f"of it): autotrace cannot follow that from one iteration to the next. Give "
                f"the other name a copy before the loop (y = x.copy()), or write x = x + ... "
                f"rather than in place")


_LOST_WRITE_MESSAGE = (
    "a traced loop changes a loop value in place and then gives the name {what}: in NumPy "
    "the first iteration's change reaches the array the name held before the loop (and every "
    "other name for it), {why}. Write the change as a new array (x = x + 1.0 rather than "
    "x += 1.0), or give the loop a copy (x = x.copy() before the loop)")


def write_first_iteration(parent, init_vals, body, ran_none, first_iteration) -> None:
    """Write into each loop value from before the loop that the body changes in place and then
    rebinds to a new array (`x += 1.0; x = x * 2.0`) what the first iteration leaves in it,
    as NumPy does; later iterations change only the new arrays. `ran_none()` records the
    traced bool saying the loop ran no iteration (None where it cannot); `first_iteration(
    outputs)` records the body's values `outputs` on the values before the loop (None where
    the body has side effects)."""
    changed = changed_in_place(parent, (init_vals,), [body])
    positions = positions_of_operands(body, changed)
    lost = [index for index in changed if positions[index] != index]
    if not lost:
        return
    if not all(body_alias_is_new(body, index, init_vals) for index in lost):
        raise LoopMemoryError(_LOST_WRITE_MESSAGE.format(
            what="another array's memory or a view of one",
            why="and the next iterations change that memory, which autotrace cannot follow"))
    firsts = first_iteration([body.written[index] for index in lost])
    if firsts is None or ran_none is None:
        raise LoopMemoryError(_LOST_WRITE_MESSAGE.format(
            what="a new array", why="which autotrace cannot compute here: the loop prints "
                                    "or saves values"))
    ran_none_now = ran_none()
    outer_leaves = [leaf for _, leaf in leaves_with_paths(init_vals)]
    for index, first in zip(lost, firsts):
        outer = outer_leaves[index]
        write_value(outer, np.where(ran_none_now, outer, first))
