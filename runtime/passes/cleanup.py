"""Passes that remove work: constant folding, common subexpressions, dead code.

Each is a class with `run(graph) -> graph` that leaves its argument alone. `Renames` is the
bookkeeping they share: which Var now stands for which value. An equation with a side effect
(`has_side_effect`: print, or a cond/while whose subgraphs print) is kept as it is: never
folded, merged or dropped.
"""
from __future__ import annotations

import numpy as np

from ..graph import Constant, Graph, Literal, Var


def has_side_effect(equation) -> bool:
    """Whether running `equation` does more than compute its outputs (it prints)."""
    side_effect = getattr(equation.primitive, "side_effect", None)
    return side_effect is not None and side_effect(equation.attrs)


class Renames:
    """Vars replaced by other values: `renames(value)` follows the replacements."""

    def __init__(self):
        self.to: dict[Var, object] = {}

    def __call__(self, value):
        while isinstance(value, Var) and value in self.to:
            value = self.to[value]
        return value

    def inputs(self, equation):
        """`equation` reading the replacements (itself, if none of its inputs changed)."""
        inputs = tuple(self(value) for value in equation.inputs)
        if all(new is old for new, old in zip(inputs, equation.inputs)):
            return equation
        return equation.replace(inputs=inputs)

    def graph(self, graph: Graph, equations) -> Graph:
        return Graph(graph.inputs, equations, [self(value) for value in graph.outputs])


class ConstantFolding:
    """Evaluate, once, each equation whose inputs are all constants or literals."""

    def run(self, graph: Graph) -> Graph:
        renames, equations = Renames(), []
        for equation in graph.equations:
            equation = renames.inputs(equation)
            results = self.fold(equation)
            if results is None:
                equations.append(equation)
                continue
            for var, value in zip(equation.outputs, results):
                renames.to[var] = Constant(value)
        return renames.graph(graph, equations)

    @staticmethod
    def fold(equation):
        """The equation's results as read-only arrays, or None if it is not to be folded."""
        inputs = equation.inputs
        # No inputs: a creation op (np.zeros_like) makes a fresh buffer on every call on purpose.
        if not inputs or not all(isinstance(value, (Constant, Literal)) for value in inputs):
            return None
        if has_side_effect(equation) or getattr(equation.primitive, "opaque", False):
            return None  # (an opaque op: runtime/primitives/recompute_barrier.py's barrier)
        try:
            with np.errstate(all="ignore"):
                result = equation.primitive.impl(*[value.value for value in inputs],
                                                 **equation.attrs)
        except Exception:  # noqa: BLE001 - the compiled call will raise it, as eager code would
            return None
        results = result if len(equation.outputs) > 1 else (result,)
        arrays = []
        for var, value in zip(equation.outputs, results):
            if not isinstance(value, (np.ndarray, np.generic)):
                value = np.asarray(value, var.aval.dtype)
            if isinstance(value, np.ndarray):
                value = value.copy()
                value.flags.writeable = False
            arrays.append(value)
        return arrays


def _value_key(value):
    if isinstance(value, Literal):
        return (type(value.value), repr(value.value))
    return value  # Vars and Constants by identity


def _attrs_key(attrs: dict) -> tuple:
    # The type too: 1 == 1.0 == True, but they are different attributes.
    return tuple((name, type(attrs[name]), attrs[name]) for name in sorted(attrs))


class CommonSubexpressions:
    """Compute each (primitive, inputs, attributes) once; later copies read the first result."""

    def run(self, graph: Graph) -> Graph:
        renames, seen, equations = Renames(), {}, []
        for equation in graph.equations:
            equation = renames.inputs(equation)
            if has_side_effect(equation):
                equations.append(equation)
                continue
            key = (equation.primitive.name, tuple(map(_value_key, equation.inputs)),
                   _attrs_key(equation.attrs))
            first = seen.get(key)
            if first is None:
                seen[key] = equation
                equations.append(equation)
                continue
            for var, earlier in zip(equation.outputs, first.outputs):
                renames.to[var] = earlier
        return renames.graph(graph, equations)


class DeadCode:
    """Drop equations none of whose results reach an output."""

    def run(self, graph: Graph) -> Graph:
        live = {value for value in graph.outputs if isinstance(value, Var)}
        kept = []
        for equation in reversed(graph.equations):
            if any(var in live for var in equation.outputs) or has_side_effect(equation):
                kept.append(equation)
                live.update(value for value in equation.inputs if isinstance(value, Var))
        return Graph(graph.inputs, reversed(kept), graph.outputs)
