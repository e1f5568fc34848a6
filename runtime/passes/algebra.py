"""Algebraic simplification: x*1, 1*x, x+(-0.0), x-0.0, x/1, x**1, +x, --x, transposes and
reshapes of transposes and reshapes, and broadcasts that an elementwise op does itself
(`multiply(broadcast_to(s, (64, 10)), n)` with n:f64[64,10] is `multiply(s, n)`: gradients are
full of them, and np.broadcast_to costs several microseconds a call).

A rule may only drop an equation whose result has exactly the type of the value that replaces
it: `x * 1` with x:f64[3] is x, but `x * ones((2, 3))` broadcasts x to a new shape and
`int_x * 1.0` changes its dtype, so both stay.

A rule drops only what is NumPy's result bit for bit, for every value (-0.0, infinities, nans):
x * 1, x / 1, x ** 1, x - 0.0 and -(-x) are x, but x + 0.0 is not where x is -0.0 (NumPy gives
+0.0, and then `1.0 / (x + 0.0)` is inf, not -inf): for floats, only x + (-0.0) is x. The result
is still a new array in NumPy; FreshOutputs (outputs.py) copies it where it is an output.
Nor may a rule make a result share memory that NumPy's would not: a reshape of a reshape is one
reshape only where both are views of the same memory in NumPy too (`_reshapes_compose`).
"""
from __future__ import annotations

import numpy as np

from ..abstract import broadcast_shapes
from ..graph import Constant, Graph, Literal, Var
from .cleanup import Renames


def _is_scalar(value, number) -> bool:
    """Whether `value` is a literal or constant equal to `number` everywhere."""
    if isinstance(value, Literal):
        return type(value.value) in (int, float, complex) and value.value == number
    if isinstance(value, Constant) and value.aval.size <= 1024:
        return bool(np.all(value.value == number))
    return False


def _zero_signs(value) -> set:
    """The signs (True: negative) of the zeros in a literal or constant zero, real and
    imaginary parts both, as IEEE arithmetic sees them (an int 0 is +0.0)."""
    parts = np.asarray(value.value)
    if parts.dtype.kind == "c":
        parts = np.concatenate([parts.real.reshape(-1), parts.imag.reshape(-1)])
    return set(np.signbit(parts).reshape(-1).tolist()) if parts.dtype.kind == "f" else {False}


def _neutral_operand(equation):
    """`x` for x*1, 1*x, x+(-0.0), (-0.0)+x, x-0.0, x/1, x**1 (and x+0, x-0 for integers), as
    the primitive's `neutral` says; None otherwise. None for a complex result: NumPy's complex
    loops give inf or nan parts for x*1 and x/1 where a part of x is infinite or nan (float32's
    at least), and x+(-0.0) may flip the sign of a zero imaginary part."""
    if equation.primitive.neutral is None or equation.outputs[0].aval.dtype.kind == "c":
        return None
    neutral, positions, negative_zero = equation.primitive.neutral
    signed = equation.outputs[0].aval.dtype.kind in "fc"
    for position in positions:
        operand = equation.inputs[position]
        if _is_scalar(operand, neutral) and (
                negative_zero is None or not signed
                or _zero_signs(operand) == {negative_zero}):
            return equation.inputs[1 - position]
    return None


def _without_broadcasts(equation, producers):
    """An elementwise ufunc reading `broadcast_to(x, shape)` as one that reads x, where the
    ufunc's own broadcasting gives the same shape; None if there is none."""
    impl = equation.primitive.impl
    if not isinstance(impl, np.ufunc) or impl.signature is not None or "out" in equation.attrs:
        return None
    inputs, shape = list(equation.inputs), equation.outputs[0].aval.shape
    for position, value in enumerate(equation.inputs):
        source = producers.get(value) if isinstance(value, Var) else None
        if (source is None or source.primitive.name != "broadcast_to"
                or isinstance(source.inputs[0], Literal)):  # a Python number promotes weakly
            continue
        candidate = [*inputs[:position], source.inputs[0], *inputs[position + 1:]]
        shapes = [getattr(getattr(item, "aval", None), "shape", ()) for item in candidate]
        if broadcast_shapes(*shapes) == shape:
            inputs = candidate
    if all(new is old for new, old in zip(inputs, equation.inputs)):
        return None
    return equation.replace(inputs=tuple(inputs))


def _same_but_unit(a: tuple, b: tuple) -> bool:
    return [size for size in a if size != 1] == [size for size in b if size != 1]


def _reshapes_compose(inner, output, producers) -> bool:
    """Whether `reshape(reshape(x, s1), s2)` (`inner` the first, `output` the result) may be
    `reshape(x, s2)`. NumPy's first reshape copies where x's memory layout allows no view of
    shape s1, and the second then views the copy, though x's layout may allow a view of shape
    s2: the result is new memory in NumPy, and would share x's. So only where either reshape
    changes axes of length 1 alone (a view for every layout), or x is new memory the graph
    made, which no caller's array shares."""
    x, middle = inner.inputs[0], inner.outputs[0]
    source = producers.get(x) if isinstance(x, Var) else None
    return (_same_but_unit(x.aval.shape, middle.aval.shape)
            or _same_but_unit(middle.aval.shape, output.aval.shape)
            or (source is not None and source.primitive.fresh))


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
            if source_name == "reshape" and _reshapes_compose(source, output, producers):
                inputs = source.inputs
            candidate = inputs[0]
            if candidate.aval.shape != output.aval.shape:
                return equation.replace(inputs=inputs) if inputs is not equation.inputs else None
        elif name == "astype" and source_name == "astype" and isinstance(
                source.inputs[0], Var) and np.can_cast(source.inputs[0].aval.dtype,
                                                       source.outputs[0].aval.dtype, "safe"):
            # (a value widened exactly and cast back: the value itself, as an either-value's
            # number path gives a float32 value it carries, weak_scalars.py)
            candidate = source.inputs[0]
        else:
            candidate = _neutral_operand(equation)
        if isinstance(candidate, (Var, Constant)) and candidate.aval == output.aval:
            return candidate
        return _without_broadcasts(equation, producers)

