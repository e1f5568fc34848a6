"""Algebraic simplification: x*1, 1*x, x+0, 0+x, x-0, x/1, x**1, +x, --x, transposes and
reshapes of transposes and reshapes.

A rule may only drop an equation whose result has exactly the type of the value that replaces
it: `x * 1` with x:f64[3] is x, but `x * ones((2, 3))` broadcasts x to a new shape and
`int_x * 1.0` changes its dtype, so both stay. (`x + 0` is taken to be x also where x is -0.0,
as compilers commonly do.)
"""
from __future__ import annotations

import numpy as np

from runtime.graph import Constant, Graph, Literal, Var
from runtime.passes_cleanup import Renames


def _is_scalar(value, number) -> bool:
    """Whether `value` is a literal or constant equal to `number` everywhere."""
    if isinstance(value, Literal):
        return type(value.value) in (int, float, complex) and value.value == number
    if isinstance(value, Constant) and value.aval.size <= 1024:
        return bool(np.all(value.value == number))
    return False


_NEUTRAL = {  # primitive -> (the neutral element, the input positions it may take)
    "add": (0, (0, 1)),
    "multiply": (1, (0, 1)),
    "subtract": (0, (1,)),
    "divide": (1, (1,)),
    "power": (1, (1,)),
}


def _neutral_operand(equation):
    """`x` for x*1, 1*x, x+0, 0+x, x-0, x/1, x**1; None otherwise."""
    rule = _NEUTRAL.get(equation.primitive.name)
    if rule is None:
        return None
    neutral, positions = rule
    for position in positions:
        if _is_scalar(equation.inputs[position], neutral):
            return equation.inputs[1 - position]
    return None


class AlgebraicSimplification:
    """Replace equations by an input, or by one cheaper equation, where algebra allows."""

    def run(self, graph: Graph) -> Graph:
        renames, producers, equations = Renames(), {}, []
        for equation in graph.equations:
            equation = renames.inputs(equation)
            replacement = self.simplify(equation, producers)
            if isinstance(replacement, (Var, Constant)):
                renames.to[equation.outputs[0]] = replacement
                continue
            equation = replacement or equation
            for var in equation.outputs:
                producers[var] = equation
            equations.append(equation)
        return renames.graph(graph, equations)

    @staticmethod
    def simplify(equation, producers):
        """A value equal to the equation's result, a simpler equation, or None."""
        if len(equation.outputs) != 1:
            return None
        name, inputs, output = equation.primitive.name, equation.inputs, equation.outputs[0]
        source = producers.get(inputs[0]) if inputs else None
        source_name = source.primitive.name if source is not None else None
        if name == "positive" or (name == "negative" and source_name == "negative"):
            candidate = inputs[0] if name == "positive" else source.inputs[0]
        elif name == "transpose":
            axes = equation.attrs["axes"]
            if source_name == "transpose":
                axes = tuple(source.attrs["axes"][i] for i in axes)
                inputs = source.inputs
            if axes == tuple(range(len(axes))):
                candidate = inputs[0]
            else:
                return equation.replace(inputs=inputs, attrs={"axes": axes})
        elif name == "reshape":
            if source_name == "reshape":
                inputs = source.inputs
            candidate = inputs[0]
            if candidate.aval.shape != output.aval.shape:
                return equation.replace(inputs=inputs) if inputs is not equation.inputs else None
        else:
            candidate = _neutral_operand(equation)
        if isinstance(candidate, (Var, Constant)) and candidate.aval == output.aval:
            return candidate
        return None

