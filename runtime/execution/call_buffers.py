"""Buffers a compiled graph keeps from one call to the next, for the arrays that die inside it.

Every array a NumPy call returns is new memory. Past a few hundred kilobytes the C library
maps it fresh from the system and gives it back when it is freed, so each call of a traced
gradient touches its intermediates' pages anew: 1,700 to 3,700 page faults a call for the
transformer block, the MLP at batch 256 and the ConvNet step of benchmarks/models.py, a
quarter to half of their time. A traced graph's shapes are fixed, so, as XLA assigns its
buffers once per compiled program, the executor gives each array that dies within the call a
buffer of the function's own, and the result is written there (`out=`):

    def graph_7(a, b):
        _kept = kept_graph_7.pop() if kept_graph_7 else new_kept_graph_7()
        _kept0, _kept1 = _kept
        c = np.multiply(a, b, out=_kept0)  # f64[256,512]
        ...
        kept_graph_7.append(_kept)
        return (f,)

A buffer holds one array at a time: another array of the same shape and dtype takes it once
every name of the first (results written into it, views of it) has been read for the last
time, before the equation that reads it last. Only what dies inside the call is kept there:
never an output or anything an output may view, nor anything a control op, a stack push or a
side effect reads (which may hold on to it); only results of ops that write into any array
given (`Primitive.takes_out`: ufuncs, clip, matmul, fused kernels), of known shape, of at
least one dimension, and C-contiguous whatever the inputs' layout (`c_ordered`), as the
kept buffer is: NumPy's results are then the same arrays, bit for bit. A call running while
another holds the buffers (another thread) makes its own set, and both sets are kept for the
next calls; a call that raises leaves its set to the garbage collector.

A join along the first axis (`np.concatenate(..., axis=0)`, `np.stack(..., axis=0)`) of arrays
that die inside the call is made in place: its result is one kept buffer, and each part of it
a view of its rows kept beside it, into which the op making that part writes, so that the join
itself copies nothing. The unrolled loop of a traced RNN gradient joins its 50 steps' states
and cotangents so, for the two products that sum over the steps (runtime/passes/products.py):

    _kept0, _kept1, ..., _kept51 = _kept         # _kept1 ... _kept50: rows of _kept0
    k = fused_bb41e77164cf(i, j, c, y0=_kept2)   # each step's state, into its rows
    ...
    kb = _kept0                                  # was np.concatenate((e, k, n, ...), axis=0)
    np.copyto(_kept1, e)                         # a part made elsewhere: copied in

A part is written in place only where the op makes it C-contiguous, where no op writes into it
(`out=`) before the last read of the join's result, nor into the result before the last read
of the part, and where the same array is not joined twice; any other part (an input of the
graph, a constant, a part joined twice) is copied into its rows where the join was. The join's
rows stay in use until the last read of the result or of any part. At least one part is
written in place, and one with every axis longer than 1, so that NumPy's own join would be
C-contiguous too.
"""
from __future__ import annotations

import collections
import math
from dataclasses import dataclass, field

import numpy as np

from ..graph import Constant, Graph, Var
from ..primitives.primitive import C_ORDER, INPUTS_ORDER, Primitive


@dataclass(frozen=True)
class Rows:
    """A slot that is rows `start:stop` of the buffer of slot `base`, viewed as `shape`."""

    base: int
    start: int
    stop: int
    shape: tuple


@dataclass
class KeptBuffers:
    """The buffers of one compiled function: `slots`, each (shape, dtype) or Rows of another;
    for each equation index, the slot each of its results is written into (None: a new
    array); and for each join made in place, its result's slot and the (slot, value) of each
    part copied in there."""

    slots: list = field(default_factory=list)
    results: dict = field(default_factory=dict)
    joins: dict = field(default_factory=dict)

    def names(self, prefix: str) -> list:
        return [f"{prefix}{index}" for index in range(len(self.slots))]

    def maker(self):
        """A function making one set of the buffers."""
        slots = tuple(self.slots)

        def make() -> tuple:
            made: list = []
            for slot in slots:
                if isinstance(slot, Rows):
                    made.append(made[slot.base][slot.start:slot.stop].reshape(slot.shape))
                else:
                    made.append(np.empty(*slot))
            return tuple(made)
        return make


def kept_buffers(graph: Graph, sets: dict, last_read: dict, seen: set) -> KeptBuffers:
    """Assign buffers kept across calls to the arrays of `graph` that die inside a call.

    `sets`: var -> every name of its buffer (results written into it with `out=`, views of it;
    runtime/execution/executor.buffer_sets); `last_read`: var -> the index of the last equation
    reading it; `seen`: the vars whose buffer the caller sees (inputs, outputs)."""
    held = set(seen)
    for equation in graph.equations:
        if type(equation.primitive) is not Primitive:  # control ops, stacks, side effects
            for value in equation.inputs:
                if isinstance(value, Var):
                    held.update(sets.get(value, ()))
    in_c_order = c_ordered(graph)

    def keepable(var, made_c_ordered: bool = True) -> bool:
        """Whether `var` may live in a kept buffer; `made_c_ordered`: whether the op that
        makes it must be known to make it C-contiguous (a join's result need not)."""
        shape = var.aval.shape
        return (var in sets and var not in held and (var in in_c_order or not made_c_ordered)
                and len(shape) >= 1 and all(isinstance(size, int) for size in shape)
                and math.prod(shape) > 0)

    joins = _joins_in_place(graph, sets, last_read, keepable)
    starts = {}  # equation index -> the joins whose buffer is taken there
    for join in joins.values():
        starts.setdefault(join.first, []).append(join)
    assignment = KeptBuffers()
    free: dict[tuple, list] = {}
    ending: dict[int, list] = {}  # equation index -> slots free after it
    rows_of: dict = {}  # a part written in place -> its Rows slot

    def take(key: tuple, end: int) -> int:
        if free.get(key):
            slot = free[key].pop()
        else:
            slot = len(assignment.slots)
            assignment.slots.append(key)
        ending.setdefault(end, []).append(slot)
        return slot

    for index, equation in enumerate(graph.equations):
        for slot in ending.pop(index - 1, ()):
            free.setdefault(assignment.slots[slot], []).append(slot)
        for join in starts.get(index, ()):
            end = max(last_read.get(member, join.index)
                      for value in (join.result, *join.in_place) for member in sets[value])
            result = join.result.aval
            base = take((tuple(result.shape), np.dtype(result.dtype)), max(end, join.index))
            copied = []
            for value, (start, stop) in zip(join.parts, join.rows):
                slot = len(assignment.slots)  # rows are never free for another array
                assignment.slots.append(Rows(base, start, stop, shape_of(value)))
                if value in join.roots:
                    rows_of[join.roots[value]] = slot
                else:
                    copied.append((slot, value))
            assignment.joins[join.index] = (base, copied)
        if not equation.primitive.takes_out or "out" in equation.attrs:
            continue
        slots = []
        for var in equation.outputs:
            slot = rows_of.get(var)
            if slot is None and keepable(var):
                key = (tuple(var.aval.shape), np.dtype(var.aval.dtype))
                end = max(last_read.get(member, index) for member in sets[var])
                slot = take(key, max(end, index))
            slots.append(slot)
        if any(slot is not None for slot in slots):
            assignment.results[index] = slots
    return assignment


@dataclass
class _Join:
    """A join along the first axis made in place: the equation's `index`, its `result`, its
    `parts` and the `rows` of the result each takes, the arrays made `in_place` in those rows,
    the index of the `first` equation making one of them, and the `roots`: part -> that
    array, the part itself or the array it was written into."""

    index: int
    result: Var
    parts: tuple
    rows: list
    in_place: set
    first: int
    roots: dict


def _joins_in_place(graph: Graph, sets: dict, last_read: dict, keepable) -> dict:
    """Equation index -> the _Join of each join along the first axis whose result and at
    least one part can be kept buffers, the parts written in place (the module docstring says
    when)."""
    made_at: dict = {}
    for index, equation in enumerate(graph.equations):
        for var in equation.outputs:
            made_at[var] = index

    def written(member) -> bool:
        return "out" in graph.equations[made_at[member]].attrs

    def first_write(var, after: int) -> float:
        """Where an op first writes into `var`'s buffer (`out=`) after equation `after`."""
        return min((made_at[member] for member in sets[var]
                    if made_at[member] > after and written(member)), default=math.inf)

    def root(var):
        """The array made first in `var`'s buffer, where `var` is that array or a result
        written into it, and no input of the graph is a name of the buffer; else None."""
        if any(member not in made_at for member in sets[var]):
            return None
        first = min(sets[var], key=made_at.__getitem__)
        return first if var is first or written(var) else None

    def last_use(var) -> int:
        return max(last_read.get(member, -1) for member in sets[var])

    joins: dict = {}
    joined: set = set()
    for index, equation in enumerate(graph.equations):
        name = equation.primitive.name
        if name not in ("concatenate", "stack") or equation.attrs.get("axis") != 0 \
                or "out" in equation.attrs or len(equation.outputs) != 1:
            continue
        (result,) = equation.outputs
        parts = tuple(equation.inputs)
        if not keepable(result, made_c_ordered=False) or not all(
                isinstance(size, int) for value in parts for size in shape_of(value)):
            continue
        rows, start = [], 0
        for value in parts:
            length = 1 if name == "stack" else shape_of(value)[0]
            rows.append((start, start + length))
            start += length
        dtype = np.dtype(result.aval.dtype)
        counts = collections.Counter(id(value) for value in parts)
        # a write into the result changes every part's rows, and one into a part the
        # result's: neither may come before the last use of what it changes
        result_written, result_used = first_write(result, index), last_use(result)
        in_place = set()  # the first array of each part's buffer, made in its rows
        roots = {}  # each of those parts -> that array
        for value in parts:
            first = root(value) if isinstance(value, Var) and counts[id(value)] == 1 else None
            if (first is not None and first not in joined and keepable(first)
                    and np.dtype(first.aval.dtype) == dtype
                    and tuple(first.aval.shape) == shape_of(value)
                    and last_use(value) < result_written
                    and result_used < first_write(value, index)):
                producer = graph.equations[made_at[first]]
                if producer.primitive.takes_out and "out" not in producer.attrs:
                    in_place.add(first)
                    roots[value] = first
        if not any(len(value.aval.shape) == 1 or min(value.aval.shape) > 1
                   for value in in_place):
            continue
        joined |= in_place
        joins[index] = _Join(index, result, parts, rows, in_place,
                             min(made_at[value] for value in in_place), roots)
    return joins


def shape_of(value) -> tuple:
    """The shape of an input of an equation: a Var's, a constant's or a literal's."""
    return tuple(value.aval.shape) if isinstance(value, Var) else np.shape(value.value)


def c_ordered(graph: Graph) -> set:
    """The results of `graph` surely C-contiguous, whatever the layout of its inputs: the new
    results of matmul and fused kernels, and of ufuncs whose array inputs all are. A kept buffer
    is C-contiguous, so it may hold only these: NumPy gives a ufunc's result the memory order of
    its inputs, and a sum over a transposed layout adds in another order, with other roundings."""
    known: set = set()

    def c_contiguous(value) -> bool:
        if isinstance(value, Var):
            return value in known or value.aval.shape == ()
        if isinstance(value, Constant):
            return np.ndim(value.value) == 0 or value.value.flags.c_contiguous
        return True  # a Python number

    for equation in graph.equations:
        order = equation.primitive.takes_out
        if "out" in equation.attrs:  # written into an input's buffer (BufferReuse)
            ordered = c_contiguous(equation.inputs[equation.attrs["out"]])
        else:
            ordered = order == C_ORDER or (order == INPUTS_ORDER and all(
                c_contiguous(value) for value in equation.inputs))
        if ordered:
            known.update(equation.outputs)
    return known
