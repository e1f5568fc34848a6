"""Outer products: a matmul whose contracted length is 1, computed by np.einsum.

The weight gradient of a dense layer at batch 1 is `x.T @ g`, a (784, 1) @ (1, 512) product.
NumPy's matmul gives a product whose contracted length is 1 to BLAS only where it is a dot
product: a column times a row runs NumPy's own triple loop (numpy/_core/src/umath/
matmul.c.src, "column @ row"), 570 us for (784, 1) @ (1, 512) in float32 or float64 (2 cores,
AVX-512). np.einsum("...ij,...jk->...ik") computes the same in 85 us (float32) and 170 us
(float64), about the time it takes to write the result; the broadcast multiply `a * b`, with
an add of +0.0 for the sign of zeros, takes 165 and 310. So, on the CPU:

    c:f32[784,512] = matmul a b     ->     c:f32[784,512] = matmul_outer a b

Both loops set each element to +0.0 and add the one product to it, so where the product is
-0.0 both give +0.0, and every other product (infinities, NaN, what underflows) is the rounded
product: the result is NumPy's matmul's, bit for bit (tests/runtime/test_outer_products.py
holds both to it, special values included).

Only float32 and float64 matrices (two dimensions or more, batched ones included) whose
contracted length is known to be 1 are rewritten, with results of MIN_ELEMENTS elements or
more (or of unknown size), and not a (1, 1) @ (1, 1) product, which NumPy computes as a BLAS
dot. A backend whose matmul is not NumPy's (CuPy's cuBLAS) does not
run this pass.
"""
from __future__ import annotations

import math

import numpy as np

from ..graph import Equation, Graph
from ..primitives.batching import refuse_batching
from ..primitives.registry import C_ORDER, Primitive, out_argument, primitives, register

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Below this many elements einsum's fixed cost is not won back: (16, 1) @ (1, 10) 1.5 us with
# matmul, 2.7 with einsum; (32, 1) @ (1, 64) 4.2 and 3.4; (64, 1) @ (1, 64) 7.1 and 4.0.
MIN_ELEMENTS = 1024
SUBSCRIPTS = "...ij,...jk->...ik"


def _outer_product(a, b):
    return np.einsum(SUBSCRIPTS, a, b)


def _outer_product_shape(a, b):
    return primitives["matmul"].abstract_eval(a, b)


matmul_outer = register(Primitive(
    "matmul_outer", _outer_product, _outer_product_shape, fresh=True,
    source=lambda args, attrs: f"np.einsum({SUBSCRIPTS!r}, {', '.join(args)})",
    batching=refuse_batching("it is made by the CPU backend's passes, after batching")))


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
    shape = equation.outputs[0].aval.shape
    if None not in shape and math.prod(shape) < MIN_ELEMENTS:
        return False
    return all(aval.dtype in _FLOATS for aval in (a, b, equation.outputs[0].aval))


class OuterProducts:
    """Write each matmul whose contracted length is 1 as `matmul_outer` (np.einsum)."""

    def run(self, graph: Graph) -> Graph:
        return with_primitive(graph, is_outer_product, matmul_outer)


def with_primitive(graph: Graph, chosen, primitive: Primitive) -> Graph:
    """`graph` with each equation that `chosen(equation)` picks an equation of `primitive`
    (the same inputs, attributes and outputs); `graph` itself where it picks none."""
    picked = [chosen(equation) for equation in graph.equations]
    if not any(picked):
        return graph
    equations = [equation.replace(primitive=primitive) if pick else equation
                 for equation, pick in zip(graph.equations, picked)]
    return Graph(graph.inputs, equations, graph.outputs)


def product_primitive(name: str, function) -> Primitive:
    """A primitive of two operands whose result is matmul's, computed by `function(a, b,
    out=None)` and written as a call of it by its name, into the C-contiguous buffer the
    executor gives it where it has one. A CPU backend's pass makes it, after batching."""
    called = function.__name__

    def source(args, attrs) -> str:
        into = f", out={out_argument(args, attrs)}" if "out" in attrs else ""
        return f"{called}({args[0]}, {args[1]}{into})"

    return register(Primitive(
        name, lambda a, b, **attrs: function(a, b),
        lambda a, b, **attrs: primitives["matmul"].abstract_eval(a, b), source=source,
        fresh=True, takes_out=C_ORDER, globals=lambda attrs: {called: function},
        batching=refuse_batching("it is made by the CPU backend's passes, after batching")))
