"""Writes a traced branch or loop body makes into its operands' memory, carried out after it.

NumPy changes an array in place inside an `if` or a loop, and every name and view of that
memory sees it after. A subgraph's operands are new values inside it, so the change is taken
out: the operand's value at the end is written into the operand outside (runtime/tracing/views.py),
and a result that is that operand's memory is the operand itself again.
"""
from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np

from ..abstract import abstractify
from .arguments import writing_back
from .control_aliases import body_alias_is_new
from ..graph import Equation, Var
from ..primitives.registry import primitives
from .control_scope import ControlFlowError
from .tracer import Tracer, write_value
from .trees import leaves_with_paths, map_arrays
from .type_checks import is_zero_d_array
from .views import refuse_unfollowed, shares_memory_with_another, view_chain


class LoopMemoryError(ControlFlowError):
    """A traced loop changes memory in place in a way the graph cannot follow; the converted
    statement that traced it adds its line (control_variables._until_settled)."""


def changed_in_place(parent, operands, traced: list) -> list:
    """The indices of `operands`' array leaves (Tracers of `parent`) that a subgraph in
    `traced` changes in place: NumPy changes their memory, seen by every name for it."""
    return [index for index, (_, leaf) in enumerate(leaves_with_paths(operands))
            if isinstance(leaf, Tracer) and leaf._builder is parent and (
                leaf.ndim >= 1 or is_zero_d_array(leaf))
            and any(subgraph.written[index] is not None for subgraph in traced)]


def refuse_kind_change(body) -> None:
    """Raise where a traced loop's body changes a 0-d loop value in place and then makes the
    name a value of the other kind, which NumPy's next iteration treats the other way:
    - it writes into a 0-d array it is given (`u += v`) and then gives the name a value not
      known for one (`u = u * 1.0`, a NumPy scalar): from its second run on, NumPy's `+=`
      gives that number a new value, where the graph would write into it;
    - `u += v` gives a NumPy scalar it is given a new value, and then the name is made a 0-d
      array (`u = np.asarray(u)`) that another loop value is too (`b = u`, before the `+=` or
      after the array is made): from its second run on, NumPy's `+=` changes that array in
      place, and that other name with it, where the graph gives u alone a new value."""
    outputs = [leaf for _, leaf in leaves_with_paths(body.result)]

    def shared(index):  # another loop value leaves the body as u's array, or as u itself
        mine = {id(outputs[index]), id(body.inner[index])}
        return any(id(member) in mine for position, leaf in enumerate(outputs)
                   if position != index and isinstance(leaf, Tracer)
                   for member in view_chain(leaf))
    for index, (var, written, output) in enumerate(zip(body.builder.inputs, body.written,
                                                        outputs)):
        if written is not None and var in body.builder.zero_d_arrays and \
                not is_zero_d_array(output):
            raise ControlFlowError(
                "a traced loop changes a 0-d array in place (u += v) and then gives the name a "
                "NumPy scalar (u = u * 1.0, or another value NumPy makes a number): from its "
                "second run on, NumPy's `+=` would give that number a new value, where the "
                "graph changes it in place. Keep it an array (u = np.asarray(u * 1.0)), or "
                "write the change as a new value (u = u + v)")
        if id(body.inner[index]) in body.builder.rebound_in_place and \
                is_zero_d_array(output) and shared(index):
            raise ControlFlowError(
                "a traced loop gives a NumPy scalar a new value by an in-place operator "
                "(u += v) and then makes the name a 0-d array (u = np.asarray(u), or another "
                "value NumPy makes an array): from its second run on, NumPy's `+=` would change "
                "that array in place, with every name for it, where the graph gives a new "
                "value. Make it an array before the loop, or write the change as a new value "
                "(u = u + v)")


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
    with writing_back():
        for index, value in zip(changed, values):
            refuse_unfollowed(outer_leaves[index])
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
    _refuse_shared_change(init_vals, changed, body)
    positions = positions_of_operands(body, changed)
    carried = [index for index, position in enumerate(positions) if position == index]
    if not carried:
        return values
    leaves_after = [leaf for _, leaf in leaves_with_paths(values)]
    return write_back((init_vals,), carried, [leaves_after[index] for index in carried], values,
                      [index if index in carried else None for index in positions])


def _refuse_shared_change(init_vals, changed: list, body) -> None:
    """Raise where a loop changes in place (`changed`: indices of `init_vals`' array leaves) a
    value another loop value shares memory with, which the body reads or passes on: the body,
    traced once, reads each from an input of its own, which the next iteration could not keep
    in step. (A loop value the body binds again before any read, such as a view the adjoint
    of a write takes again of the array it restored, is left out.)"""
    outer_leaves = [leaf for _, leaf in leaves_with_paths(init_vals)]
    read = _inputs_read(body)
    for index in changed:
        if shares_memory_with_another(outer_leaves, index, lambda other: other in read):
            raise LoopMemoryError(
                f"a traced loop changes a loop value in place ({outer_leaves[index].aval}) "
                f"that shares its memory with another loop value (the same array, or a view "
                f"of it): autotrace cannot follow that from one iteration to the next. Give "
                f"the other name a copy before the loop (y = x.copy()), or write x = x + ... "
                f"rather than in place")


def _inputs_read(body) -> set:
    """The indices of the body's (a TracedSubgraph's) operand leaves that an equation of it
    reads or that it gives back as they came in."""
    used = {id(var) for equation in body.builder.equations for var in equation.inputs}
    used |= {id(var) for var in body.outputs}
    return {index for index, var in enumerate(body.operand_vars) if id(var) in used}


_LOST_WRITE_MESSAGE = (
    "a traced loop changes a loop value in place and then gives the name another array's "
    "memory or a view of one: in NumPy the first iteration's change reaches the array the "
    "name held before the loop (and every other name for it), and the next iterations change "
    "that memory, which autotrace cannot follow. Write the change as a new array (x = x + 1.0 "
    "rather than x += 1.0), or give the loop a copy (x = x.copy() before the loop)")


class FirstWrites(NamedTuple):
    """Loop values a `while` op carries beside the body's own (first_iteration_writes): the
    value each of the `lost` loop values holds after the first iteration, then whether an
    iteration ran. They follow the body's loop values, before the captured values."""

    lost: list       # the indices of the loop values written in place, then rebound
    initial: list    # the added loop values before the loop
    inputs: list     # the body's inputs (Vars) for them
    equations: list  # what the body computes them with, after its own equations
    outputs: list    # the body's outputs for them


def first_iteration_writes(parent, init_vals, body, device: str) -> FirstWrites | None:
    """The loop values to add to a `while` op whose body (a TracedSubgraph) changes a loop
    value from before the loop in place and then rebinds it to a new array (`x += 1.0; x = x *
    2.0`): NumPy's first iteration changes the array before the loop, later ones only the new
    arrays. None where the body does not. The body carries what its first iteration leaves in
    each (`first = where(ran, first, written)`, `ran = True`), so that it runs once: computed
    again outside the loop, a body's pops and pushes of saved values, or a print, would run
    twice. `device`: the trace's."""
    refuse_kind_change(body)
    changed = changed_in_place(parent, (init_vals,), [body])
    positions = positions_of_operands(body, changed)
    lost = [index for index in changed if positions[index] != index]
    if not lost:
        return None
    if not all(body_alias_is_new(body, index, init_vals) for index in lost):
        raise LoopMemoryError(_LOST_WRITE_MESSAGE)
    outer_leaves = [leaf for _, leaf in leaves_with_paths(init_vals)]
    ran = Var(replace(abstractify(np.False_), device=device))
    where = primitives["where"]
    so_far, equations, firsts = [], [], []
    for index in lost:
        written = body.written[index]
        so_far.append(Var(written.aval))
        firsts.append(Var(where.abstract_eval(ran.aval, written.aval, written.aval)))
        equations.append(Equation(where, [ran, so_far[-1], written], {}, [firsts[-1]]))
    return FirstWrites(lost, [*(outer_leaves[index] for index in lost), np.False_],
                       [*so_far, ran], equations, [*firsts, body.builder.constant(np.True_)])


def write_first_iteration(init_vals, first_writes: FirstWrites | None, results) -> None:
    """Write into each loop value from before the loop that the body changes in place and then
    rebinds what the first iteration left in it (its value before the loop where the loop ran
    no iteration), as NumPy does: `results`, the `while` op's results for `first_writes`."""
    if first_writes is None:
        return
    outer_leaves = [leaf for _, leaf in leaves_with_paths(init_vals)]
    with writing_back():
        for index, first in zip(first_writes.lost, results):
            refuse_unfollowed(outer_leaves[index])
            write_value(outer_leaves[index], first)


