"""Stacked products: the many small matmuls of an unrolled loop that share one operand, run as
one matmul.

A recurrent network unrolled over the steps of `xs` multiplies each step's slice by the same
weights, and its reverse sweep adds up one weight gradient a step:

    forward:   x_t @ Wx               for x_t = xs[t], every t
    backward:  dWx = z + xs[S-1].T @ d_(S-1) + ... + xs[0].T @ d_0

Each product is a small BLAS call whose fixed cost outweighs its arithmetic: for 50 steps of
batch 32, 32 inputs and 128 units (float32, one core of an AMD EPYC, Zen 3, OpenBLAS), the 50
forward products take 290 us and one (1600, 32) @ (32, 128) product 200 us; the 50 products of
the sum and its adds 370 us, one (32, 1600) @ (1600, 128) product of the stacked d_t 240 us,
the stacking included. So:

    f = getitem[index=(0,)] xs                  r = reshape[shape=(S*B, K)] xs
    g = matmul f Wx                   ->        p = matmul r Wx
    (one such pair for every t)                 q = reshape[shape=(S, B, N)] p
                                                g = getitem[index=(0,)] q      (a view of q)

    acc1 = add z (matmul (transpose a0) d0)     l = concatenate a_i ...     (or a reshape of
    acc2 = add acc1 (matmul (transpose a1) d1)  s = concatenate d_i ...      xs, where the a_i
    ...                               ->        m = matmul (transpose l) s   are its slices)
                                                accN = add z m

- Forward: matmuls of `xs[t] @ W` for every t of the first axis of `xs` (of two dimensions or
  more, its shape known), by one matrix `W` (a Var or a constant). Each result becomes a view
  of the stacked product, which no later pass writes into (BufferReuse writes only into
  buffers that an equation made whole); the first product's place holds the stacked one.
- Backward: a chain of adds, each adding one `matmul(transpose(a), d)` (a, d matrices, read by
  that add alone) to the sum so far (read by the next add alone), every term of one shape and
  dtype, starting from an array of that type or a scalar (a zero gradient read as 0.0). The
  a_i, and the d_i, are stacked in the chain's order; where the a_i are the slices xs[t] of
  one array, every t once, xs itself is read (reshaped, no copy) and the d_i are put
  in the order of t; chains of the same d_i (an RNN's two weight gradients) read one
  concatenation of them, in one order. The last add's place holds the stacked product, added
  to the chain's first value; the chain's other adds and products are left to DeadCode.
- Only float32 and float64 products of MIN_PRODUCTS or more, whose stacked operands and result
  hold at most MAX_STACKED_ELEMENTS elements (all of them live at once: the d_i until the
  last add, the forward's results until the last reader of any of them).

The merged product adds the same products in another order (BLAS chooses its kernel by the
shapes, and the sum over steps becomes part of each dot product), so results agree with the
unmerged graph's to rounding, not bit for bit.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..abstract import AbstractArray
from ..graph import Constant, Equation, Graph, Literal, Var
from ..ops import primitives

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
MIN_PRODUCTS = 4             # fewer small products than this are left as they are
MAX_STACKED_ELEMENTS = 1 << 22


class StackedProducts:
    """Run the matmuls of each slice of one array by one matrix, and sums of products of
    transposed matrices, as one matmul each."""

    def run(self, graph: Graph) -> Graph:
        producers = {var: equation for equation in graph.equations for var in equation.outputs}
        readers = Counter(value for equation in graph.equations for value in equation.inputs
                          if isinstance(value, Var))
        readers.update(value for value in graph.outputs if isinstance(value, Var))
        replacements = {**_slice_products(graph, producers),
                        **_summed_products(graph, producers, readers)}
        if not replacements:
            return graph
        equations = []
        for equation in graph.equations:
            equations.extend(replacements.get(id(equation), [equation]))
        return Graph(graph.inputs, equations, graph.outputs)


def _row_of(value, producers):
    """(array, t) where `value` is `array[t]`, a getitem of one integer, else None."""
    equation = producers.get(value)
    if equation is None or equation.primitive.name != "getitem" or len(equation.inputs) != 1:
        return None
    index = equation.attrs.get("index")
    if not (isinstance(index, tuple) and len(index) == 1 and isinstance(index[0], int)
            and not isinstance(index[0], bool)):
        return None
    (array,) = equation.inputs
    if not isinstance(array, Var) or not array.aval.known or array.aval.ndim < 2:
        return None
    steps = array.aval.shape[0]
    if not -steps <= index[0] < steps:
        return None
    return array, index[0] % steps


def _is_float_matrix(value) -> bool:
    aval = getattr(value, "aval", None)
    return aval is not None and aval.ndim == 2 and aval.known and aval.dtype in FLOATS


def _new(shape, like) -> Var:
    return Var(AbstractArray(tuple(shape), like.dtype, like.device))


def _equation(name, inputs, attrs, output, scope) -> Equation:
    return Equation(primitives[name], inputs, attrs, [output], scope)


# --- forward: xs[t] @ W for every t ------------------------------------------------------------

def _slice_products(graph: Graph, producers) -> dict:
    """{id(first product): its replacement, id(other product): a view of the stacked one}."""
    groups: dict = {}  # (xs, W) -> {t: [matmul equations]}
    for equation in graph.equations:
        if equation.primitive.name != "matmul" or "out" in equation.attrs:
            continue
        row, weights = equation.inputs
        found = _row_of(row, producers)
        if (found is None or not isinstance(weights, (Var, Constant))
                or not _is_float_matrix(weights)
                or equation.outputs[0].aval.dtype != found[0].aval.dtype
                or found[0].aval.dtype not in FLOATS):
            continue
        groups.setdefault((found[0], weights), {}).setdefault(found[1], []).append(equation)

    position = {id(equation): index for index, equation in enumerate(graph.equations)}
    replacements = {}
    for (array, weights), by_step in groups.items():
        steps, columns = array.aval.shape[0], weights.aval.shape[1]
        stacked_shape = (*array.aval.shape[:-1], columns)
        if (sorted(by_step) != list(range(steps)) or steps < MIN_PRODUCTS
                or math.prod(stacked_shape) > MAX_STACKED_ELEMENTS):
            continue
        first = min((equation for equations in by_step.values() for equation in equations),
                    key=lambda equation: position[id(equation)])
        output = first.outputs[0].aval
        rows = math.prod(array.aval.shape[:-1])
        stacked = []
        matrix = array
        if array.aval.ndim > 2:
            matrix = _new((rows, array.aval.shape[-1]), array.aval)
            stacked.append(_equation("reshape", [array], {"shape": matrix.aval.shape}, matrix,
                                     first.scope))
        product = _new((rows, columns), output)
        stacked.append(_equation("matmul", [matrix, weights], {}, product, first.scope))
        result = product
        if array.aval.ndim > 2:
            result = _new(stacked_shape, output)
            stacked.append(_equation("reshape", [product], {"shape": stacked_shape}, result,
                                     first.scope))
        for step, equations in by_step.items():
            for equation in equations:
                view = _equation("getitem", [result], {"index": (step,)}, equation.outputs[0],
                                 equation.scope)
                replacements[id(equation)] = [view]
        replacements[id(first)] = stacked + replacements[id(first)]
    return replacements


# --- backward: a sum of transpose(a_i) @ d_i ---------------------------------------------------

@dataclass
class _Chain:
    """A chain of adds: `start`, plus each (a, d) term's transpose(a) @ d."""
    start: object
    terms: list = field(default_factory=list)


def _term(value, producers, readers, aval):
    """(a, d) where `value` is matmul(transpose(a), d) of float matrices, read once, of `aval`;
    else None."""
    equation = producers.get(value)
    if (equation is None or equation.primitive.name != "matmul" or "out" in equation.attrs
            or readers[value] != 1 or value.aval != aval or aval.dtype not in FLOATS):
        return None
    transposed, right = equation.inputs
    flip = producers.get(transposed)
    if (flip is None or flip.primitive.name != "transpose"
            or tuple(flip.attrs.get("axes", ())) != (1, 0)):
        return None
    (left,) = flip.inputs
    if not (_is_float_matrix(left) and _is_float_matrix(right)):
        return None
    return left, right


def _summed_products(graph: Graph, producers, readers) -> dict:
    """{id(last add of a chain): the stacked product added to the chain's start}."""
    chains: dict = {}  # the sum so far (a Var) -> its _Chain
    lasts = {}         # the sum so far -> the add that made it
    for equation in graph.equations:
        if equation.primitive.name != "add" or equation.attrs:
            continue
        (total,) = equation.outputs
        terms = [_term(value, producers, readers, total.aval) for value in equation.inputs]
        chain = None
        for position in (0, 1):
            other = equation.inputs[1 - position]
            if terms[position] is not None and other in chains and readers[other] == 1:
                chain = chains.pop(other)
                chain.terms.append(terms[position])
                break
        if chain is None:
            for position in (1, 0):
                other = equation.inputs[1 - position]
                if terms[position] is not None and _starts_sum(other, total.aval):
                    chain = _Chain(other, [terms[position]])
                    break
        if chain is not None:
            chains[total] = chain
            lasts[total] = equation

    plans = {total: _plan(chain, producers) for total, chain in chains.items()}
    plans = {total: plan for total, plan in plans.items() if plan is not None}
    _share_right_operands(plans.values())
    position = {id(equation): index for index, equation in enumerate(graph.equations)}
    stacked_rights: dict = {}  # the d_i in order -> the Var of their concatenation
    replacements = {}
    for total in sorted(plans, key=lambda total: position[id(lasts[total])]):
        plan, last = plans[total], lasts[total]
        equations = []
        if plan.rights not in stacked_rights:
            right = _new((len(plan.rights) * plan.rights[0].aval.shape[0],
                          plan.rights[0].aval.shape[1]), plan.rights[0].aval)
            equations.append(_equation("concatenate", plan.rights, {"axis": 0}, right,
                                       last.scope))
            stacked_rights[plan.rights] = right
        right = stacked_rights[plan.rights]
        first = plan.lefts[0].aval
        left = _new((len(plan.lefts) * first.shape[0], first.shape[1]), first)
        if plan.array is not None:
            equations.append(_equation("reshape", [plan.array], {"shape": left.aval.shape},
                                       left, last.scope))
        else:
            equations.append(_equation("concatenate", plan.lefts, {"axis": 0}, left,
                                       last.scope))
        flipped = _new(left.aval.shape[::-1], left.aval)
        equations.append(_equation("transpose", [left], {"axes": (1, 0)}, flipped, last.scope))
        product = _new((first.shape[1], right.aval.shape[1]), total.aval)
        equations.append(_equation("matmul", [flipped, right], {}, product, last.scope))
        equations.append(_equation("add", [plan.start, product], {}, total, last.scope))
        replacements[id(last)] = equations
    return replacements


def _starts_sum(value, aval) -> bool:
    """Whether a chain of terms of `aval` may start at `value`: an array of `aval`, or a
    scalar the terms' dtype keeps (a zero gradient that UniformConstants reads as 0.0)."""
    if isinstance(value, Literal):
        return type(value.value) in (int, float)
    return isinstance(value, (Var, Constant)) and (
        value.aval == aval or value.aval.shape == () and value.aval.dtype == aval.dtype
        and value.aval.device == aval.device)


@dataclass
class _Plan:
    """How a chain is stacked: its start, its a_i and d_i in the order they are stacked, and
    the array whose slices the a_i are, in that order (None: the a_i are concatenated)."""
    start: object
    lefts: tuple
    rights: tuple
    array: Var | None


def _plan(chain: _Chain, producers) -> _Plan | None:
    """The chain's _Plan, or None where it is too short, too large or its terms differ in
    shape."""
    lefts, rights = zip(*chain.terms)
    count = len(chain.terms)
    if (count < MIN_PRODUCTS or any(a.aval != lefts[0].aval for a in lefts)
            or any(d.aval != rights[0].aval for d in rights)
            or count * (math.prod(lefts[0].aval.shape) + math.prod(rights[0].aval.shape))
            > MAX_STACKED_ELEMENTS):
        return None
    rows = [_row_of(a, producers) for a in lefts]
    arrays = {row[0] for row in rows if row is not None}
    if (None not in rows and len(arrays) == 1
            and sorted(t for _, t in rows) == list(range(next(iter(arrays)).aval.shape[0]))):
        order = sorted(range(count), key=lambda i: rows[i][1])
        return _Plan(chain.start, tuple(lefts[i] for i in order),
                     tuple(rights[i] for i in order), next(iter(arrays)))
    return _Plan(chain.start, lefts, rights, None)


def _share_right_operands(plans) -> None:
    """Put the terms of each chain whose a_i are concatenated in the order of another chain
    with the same d_i, so that both read one concatenation of them: an RNN's two weight
    gradients, sum_t xs[t].T @ d_t and sum_t h_t.T @ d_t."""
    orders = {}
    for plan in plans:
        if len(set(plan.rights)) == len(plan.rights):
            orders.setdefault(frozenset(plan.rights), plan.rights)
            if plan.array is not None:  # an order that cannot change
                orders[frozenset(plan.rights)] = plan.rights
    for plan in plans:
        order = orders.get(frozenset(plan.rights))
        if (plan.array is None and order is not None
                and len(set(plan.rights)) == len(plan.rights) == len(order)):
            left_of = dict(zip(plan.rights, plan.lefts))
            plan.lefts, plan.rights = tuple(left_of[d] for d in order), order
