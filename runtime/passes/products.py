"""Stacked products: the many small matmuls of an unrolled loop that share one operand, run as
one matmul.

A recurrent network unrolled over the steps of `xs` multiplies each step's slice by the same
weights, and its reverse sweep adds up one weight gradient a step:

    forward:   x_t @ Wx               for x_t = xs[t], every t
    backward:  dWx = z + xs[S-1].T @ d_(S-1) + ... + xs[0].T @ d_0

Each product is a small BLAS call whose fixed cost outweighs its arithmetic: for 50 steps of
batch 32, 32 inputs and 128 units (float32, one core, OpenBLAS), the 50 forward products take
290 us and one (1600, 32) @ (32, 128) product 200 us; the 50 products of the sum and its adds
370 us, one (32, 1600) @ (1600, 128) product of the stacked d_t 240 us, the stacking included.
So:

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
  dtype. The a_i, and the d_i, are stacked in the chain's order; where the a_i are the slices
  xs[t] of one array, every t once, xs itself is read (reshaped, no copy) and the d_i are put
  in the order of t. The last add's place holds the stacked product, added to the chain's
  first value; the chain's other adds and products are left to DeadCode.
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
from ..graph import Constant, Equation, Graph, Var
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

    replacements = {}
    for (array, weights), by_step in groups.items():
        steps, columns = array.aval.shape[0], weights.aval.shape[1]
        stacked_shape = (*array.aval.shape[:-1], columns)
        if (sorted(by_step) != list(range(steps)) or steps < MIN_PRODUCTS
                or math.prod(stacked_shape) > MAX_STACKED_ELEMENTS):
            continue
        products = [equation for step in sorted(by_step) for equation in by_step[step]]
        first = min(products, key=graph.equations.index)
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
                if (terms[position] is not None and isinstance(other, (Var, Constant))
                        and other.aval == total.aval):
                    chain = _Chain(other, [terms[position]])
                    break
        if chain is not None:
            chains[total] = chain
            lasts[total] = equation

    replacements = {}
    for total, chain in chains.items():
        stacked = _stacked(chain, producers, lasts[total].scope)
        if stacked is not None:
            product, equations = stacked
            replacements[id(lasts[total])] = [
                *equations, _equation("add", [chain.start, product], {}, total,
                                      lasts[total].scope)]
    return replacements


def _stacked(chain: _Chain, producers, scope):
    """(Var, equations) of transpose(stack of the a_i) @ (stack of the d_i), or None where the
    chain is too short, too large or its terms differ in shape."""
    lefts, rights = zip(*chain.terms)
    left_shape, right_shape = lefts[0].aval.shape, rights[0].aval.shape
    if (len(chain.terms) < MIN_PRODUCTS
            or any(a.aval != lefts[0].aval for a in lefts)
            or any(d.aval != rights[0].aval for d in rights)):
        return None
    count = len(chain.terms)
    stacked_left = (count * left_shape[0], left_shape[1])
    stacked_right = (count * right_shape[0], right_shape[1])
    if math.prod(stacked_left) + math.prod(stacked_right) > MAX_STACKED_ELEMENTS:
        return None
    equations = []
    rows = [_row_of(a, producers) for a in lefts]
    arrays = {row[0] for row in rows if row is not None}
    if (None not in rows and len(arrays) == 1
            and sorted(t for _, t in rows) == list(range(next(iter(arrays)).aval.shape[0]))):
        (array,) = arrays
        order = sorted(range(count), key=lambda i: rows[i][1])
        rights = [rights[i] for i in order]
        left = _new(stacked_left, lefts[0].aval)
        equations.append(_equation("reshape", [array], {"shape": stacked_left}, left, scope))
    else:
        left = _new(stacked_left, lefts[0].aval)
        equations.append(_equation("concatenate", lefts, {"axis": 0}, left, scope))
    right = _new(stacked_right, rights[0].aval)
    equations.append(_equation("concatenate", rights, {"axis": 0}, right, scope))
    flipped = _new(stacked_left[::-1], left.aval)
    equations.append(_equation("transpose", [left], {"axes": (1, 0)}, flipped, scope))
    product = _new((left_shape[1], right_shape[1]), chain.start.aval)
    equations.append(_equation("matmul", [flipped, right], {}, product, scope))
    return product, equations
