"""Matmul layout: a transposed matrix that several matmuls read on the right is copied, once, to
row-major order.

Reverse mode is full of `d @ W.T`: the adjoint of `h @ W` with respect to h. Inside an unrolled
loop the same `W.T` is the right operand of one matmul per step. `np.transpose` is a view, and
BLAS multiplies by a transposed right operand more slowly than by a row-major one: on a Xeon
with OpenBLAS, (32x128) @ (128x128).T takes 25 us, against 19 us with a row-major copy of the
transpose. The copy costs one pass over the matrix (about 10 us for 128x128), so the pass makes
it only where two or more matmuls share it:

    c = transpose[axes=(1, 0)] b               c = transpose[axes=(1, 0)] b
    e = matmul d c                     ->      f = copy[order='C'] c
    h = matmul g c                             e = matmul d f
                                               h = matmul g f

The copy is placed right after the transpose; other readers of the transpose keep the view.
The products are the same numbers either way, computed by a different BLAS kernel.
"""
from __future__ import annotations

from collections import Counter

from ..graph import Equation, Graph, Var
from ..ops import primitives

MIN_SHARED_PRODUCTS = 2   # matmuls that must read the transpose before a copy pays for itself


class MatmulLayout:
    """Give matmuls a row-major copy of a transposed right operand that two or more of them
    share."""

    def run(self, graph: Graph) -> Graph:
        producers = {var: equation for equation in graph.equations for var in equation.outputs}
        right_operand_uses = Counter(
            equation.inputs[1] for equation in graph.equations
            if equation.primitive.name == "matmul" and isinstance(equation.inputs[1], Var))
        copies = {}
        for operand, uses in right_operand_uses.items():
            source = producers.get(operand)
            if (uses >= MIN_SHARED_PRODUCTS and source is not None
                    and source.primitive.name == "transpose" and operand.aval.ndim >= 2):
                copies[operand] = Var(operand.aval)
        if not copies:
            return graph

        equations = []
        for equation in graph.equations:
            if equation.primitive.name == "matmul" and equation.inputs[1] in copies:
                equation = equation.replace(
                    inputs=(equation.inputs[0], copies[equation.inputs[1]]))
            equations.append(equation)
            for var in equation.outputs:
                if var in copies:
                    equations.append(Equation(primitives["copy"], [var], {"order": "C"},
                                              [copies[var]], equation.scope))
        return Graph(graph.inputs, equations, graph.outputs)
