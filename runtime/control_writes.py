"""Writes a traced branch or loop body makes into its operands' memory, carried out after it.

NumPy changes an array in place inside an `if` or a loop, and every name and view of that
memory sees it after. A subgraph's operands are new values inside it, so the change is taken
out: the operand's value at the end is written into the operand outside (runtime/views.py),
and a result that is that operand's memory is the operand itself again.
"""
from __future__ import annotations

from autotrace.runtime.control_scope import ControlFlowError
from autotrace.runtime.tracer import Tracer, write_value
from autotrace.runtime.trees import leaves_with_paths, map_arrays
from autotrace.runtime.views import shares_memory_with_another


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
            raise ControlFlowError(
                f"a traced loop changes a loop value in place ({outer_leaves[index].aval}) "
                f"that shares its memory with another loop value (the same array, or a view "
                f"of it): autotrace cannot follow that from one iteration to the next. Give "
                f"the other name a copy before the loop (y = x.copy()), or write x = x + ... "
                f"rather than in place")
