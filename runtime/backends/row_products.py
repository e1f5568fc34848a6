"""A stack of matrices times one matrix, as one product of all their rows.

`x @ W` for activations x of (batch, tokens, features) and weights W of (features, units) is
what every dense layer of a transformer computes. NumPy's matmul gives BLAS one product per
matrix of the stack; where x is C-contiguous, its rows are one (batch * tokens, features)
matrix, and one product of it is the same numbers, in one BLAS call that BLAS can also split
over its threads. Measured on a 2-core Zen 3 with OpenBLAS, (8, 64, 64) @ (64, 64) float64
takes 124 us as a stack and 71 as one product on both cores (142 and 128 on one); (8, 64, 64)
@ (64, 256) float32 275 and 114 us (248 and 234 on one). So, on the CPU backends:

    c:f64[8,64,256] = matmul a b     ->     c:f64[8,64,256] = matmul_rows a b

whose code calls `row_product(a, b)`: np.matmul of a's rows where a (and the `out` buffer, if
given) is C-contiguous, else np.matmul of the stack as before. Float64 results came out the
same bits either way in these shapes; float32 ones differ in the last bits, as BLAS picks
another kernel for another shape (the traced graph agrees with NumPy's matmul to rounding, as
for runtime/passes/products.py). A stack of known size holding one matrix is left alone.
"""
from __future__ import annotations

import math

import numpy as np

from ..graph import Equation, Graph
from .outer_products import product_primitive, with_primitive


def row_product(a, b, out=None):
    """np.matmul(a, b, out=out) for a stack of matrices `a` (..., m, k) and a matrix `b` (k, n):
    one product of a's rows where `a` and `out` are C-contiguous."""
    if a.flags.c_contiguous and a.size and (out is None or out.flags.c_contiguous):
        rows = a.reshape(-1, a.shape[-1])
        if out is None:
            return np.matmul(rows, b).reshape(*a.shape[:-1], b.shape[-1])
        np.matmul(rows, b, out=out.reshape(-1, b.shape[-1]))
        return out
    return np.matmul(a, b, out=out)


def is_stacked_product(equation: Equation) -> bool:
    """Whether `equation` is a matmul of a stack of matrices by a matrix."""
    if equation.primitive.name != "matmul":
        return False
    a, b = (getattr(value, "aval", None) for value in equation.inputs)
    if a is None or b is None or a.ndim < 3 or b.ndim != 2:
        return False
    stack = a.shape[:-2]
    return None in stack or math.prod(stack) > 1


class RowProducts:
    """Write each matmul of a stack of matrices by one matrix as `matmul_rows`."""

    def run(self, graph: Graph) -> Graph:
        return with_primitive(graph, is_stacked_product, matmul_rows)


matmul_rows = product_primitive("matmul_rows", row_product)
