"""Outer products: a matmul whose contracted length is 1, computed by np.einsum, which gives
NumPy's matmul bit for bit and sooner (runtime/primitives/outer_matmul.py says when and why).
On the CPU:

    c:f32[784,512] = matmul a b     ->     c:f32[784,512] = matmul_outer a b

Only products whose contracted length is known to be 1 are rewritten. A backend whose matmul
is not NumPy's (CuPy's cuBLAS) does not run this pass.
"""
from __future__ import annotations

from ..graph import Equation, Graph
from ..primitives.batching import refuse_batching
from ..primitives.outer_matmul import SUBSCRIPTS, is_one_term, outer_product
from ..primitives.registry import C_ORDER, Primitive, out_argument, primitives, register


def _outer_product_shape(a, b):
    return primitives["matmul"].abstract_eval(a, b)


matmul_outer = register(Primitive(
    "matmul_outer", outer_product, _outer_product_shape, fresh=True,
    source=lambda args, attrs: f"np.einsum({SUBSCRIPTS!r}, {', '.join(args)})",
    batching=refuse_batching("it is made by the CPU backend's passes, after batching")))


def is_outer_product(equation: Equation) -> bool:
    """Whether `equation` is a matmul of float matrices whose contracted length is 1, other
    than one of a single element, which NumPy gives to BLAS."""
    if equation.primitive.name != "matmul" or "out" in equation.attrs:
        return False
    a, b = (getattr(value, "aval", None) for value in equation.inputs)
    if a is None or b is None:
        return False
    result = equation.outputs[0].aval
    return is_one_term(a.shape, b.shape, (a.dtype, b.dtype, result.dtype), result.shape)


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
