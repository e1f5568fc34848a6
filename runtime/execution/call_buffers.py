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
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..graph import Constant, Graph, Var
from ..primitives.primitive import C_ORDER, INPUTS_ORDER, Primitive


@dataclass
class KeptBuffers:
    """The buffers of one compiled function: `slots` (shape, dtype) each, and for each equation
    index, the slot each of its results is written into (None: a new array)."""

    slots: list = field(default_factory=list)
    results: dict = field(default_factory=dict)

    def names(self, prefix: str) -> list:
        return [f"{prefix}{index}" for index in range(len(self.slots))]

    def maker(self):
        """A function making one set of the buffers."""
        slots = tuple(self.slots)
        return lambda: tuple(np.empty(shape, dtype) for shape, dtype in slots)


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
    assignment = KeptBuffers()
    free: dict[tuple, list] = {}
    ending: dict[int, list] = {}  # equation index -> slots free after it
    for index, equation in enumerate(graph.equations):
        for slot in ending.pop(index - 1, ()):
            free.setdefault(assignment.slots[slot], []).append(slot)
        if not equation.primitive.takes_out or "out" in equation.attrs:
            continue
        slots = []
        for var in equation.outputs:
            slot = None
            shape = var.aval.shape
            if (var in sets and var not in held and var in in_c_order and len(shape) >= 1
                    and all(isinstance(size, int) for size in shape)
                    and math.prod(shape) > 0):
                key = (tuple(shape), np.dtype(var.aval.dtype))
                if free.get(key):
                    slot = free[key].pop()
                else:
                    slot = len(assignment.slots)
                    assignment.slots.append(key)
                end = max(last_read.get(member, index) for member in sets[var])
                ending.setdefault(max(end, index), []).append(slot)
            slots.append(slot)
        if any(slot is not None for slot in slots):
            assignment.results[index] = slots
    return assignment


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
