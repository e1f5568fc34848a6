"""Outer products: a matmul whose contracted length is 1 becomes a broadcast multiply.

The weight gradient of a dense layer at batch 1 is `x.T @ g`, a (784, 1) @ (1, 512) product.
NumPy's matmul gives a product whose contracted length is 1 to BLAS only where it is a dot
product: a column times a row runs NumPy's own triple loop (numpy/_core/src/umath/
matmul.c.src, "column @ row"), which takes 570 us for (784, 1) @ (1, 512) in float32 or
float64 (2 cores, AVX-512), against 130 us (float32) and 245 us (float64) for the broadcast
multiply `a * b` that computes the same products. So, on the CPU:

    c:f32[784,512] = matmul a b              d:f32[784,512] = multiply a b
                                      ->     c:f32[784,512] = add d 0.0

The loop sets each element to +0.0 and adds the one product to it, so where the product is
-0.0 NumPy's matmul gives +0.0: `add d 0.0` does the same (AlgebraicSimplification keeps
`x + 0.0`, which is not x for -0.0). Every other product (infinities, NaN, what underflows) is
the rounded product either way, so the result is NumPy's matmul's, bit for bit; with the add
in place (BufferReuse), the pair costs 165 us in float32 and 305 us in float64.

Only float32 and float64 matrices (two dimensions or more, batched ones included) whose
contracted length is known to be 1 are rewritten, and not a (1, 1) @ (1, 1) product, which
NumPy computes as a BLAS dot. A backend whose matmul is not NumPy's (CuPy's cuBLAS) does not
run this pass.
"""
from __future__ import annotations

import numpy as np

from ..graph import Equation, Graph, Literal, Var
from ..ops import primitives

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def is_outer_product(equation: Equation) -> bool:
    """Whether `equation` is a matmul of float matrices whose contracted length is 1, other
    than one of a single element, which NumPy gives to BLAS."""
    if equation.primitive.name != "matmul" or "out" in equation.attrs:
        return False
    a, b = (getattr(value, "aval", None) for value in equation.inputs)
    if a is None or b is None or a.ndim < 2 or b.ndim < 2:
        return False
    if a.shape[-1] != 1 or b.shape[-2] != 1:
        return False
    if a.shape[-2] == 1 and b.shape[-1] == 1:
        return False
    return all(aval.dtype in _FLOATS for aval in (a, b, equation.outputs[0].aval))


class OuterProducts:
    """Write each matmul whose contracted length is 1 as a multiply and an add of +0.0."""

    def run(self, graph: Graph) -> Graph:
        if not any(is_outer_product(equation) for equation in graph.equations):
            return graph
        equations = []
        for equation in graph.equations:
            if not is_outer_product(equation):
                equations.append(equation)
                continue
            result = equation.outputs[0]
            products = Var(result.aval)
            equations.append(Equation(primitives["multiply"], equation.inputs, {}, [products],
                                      equation.scope))
            equations.append(Equation(primitives["add"], [products, Literal(0.0)], {},
                                      [result], equation.scope))
        return Graph(graph.inputs, equations, graph.outputs)
