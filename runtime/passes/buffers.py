"""Buffer reuse: write an elementwise result into the buffer of an input nobody reads again.

`c = np.add(a, b)` becomes `c = np.add(a, b, out=a)` (attribute `out=0`) when:
- the op can write into that input (`Primitive.writes_into`: ufuncs, clip, setitem, scatter),
- the input has exactly the output's type (shape, dtype, device) and at least one dimension
  (a 0-d NumPy result is an immutable scalar),
- the input owns its buffer: it was made by an op that returns new memory (`Primitive.fresh`),
  not a graph input, a constant, or a view such as reshape, transpose or basic indexing,
- and this equation is the last to read that buffer through any name: the input itself, a view
  of it, or an earlier result written into it; graph outputs are read "forever".
- A power of one element (or of a size known only at run time) is not written in place: NumPy
  reads a one-element operand in place as a scalar exponent and computes it apart.
For `setitem` this turns the copy that keeps values immutable into an in-place write.
"""
from __future__ import annotations

import math

from ..graph import Graph, Var
from ..primitives.registry import viewed_inputs


# NumPy's power loop computes an exponent read with stride 0 apart (0.5 as sqrt: -0.0 for -0.0,
# nan for -inf, where pow gives 0.0 and inf), and one element written into an input's buffer
# is read so: np.power(x, e, out=e) differs from np.power(x, e) for x = [-0.0], e = [0.5].
_STRIDE_DEPENDENT = frozenset(["power", "float_power"])


def unbuffered_attrs(equation) -> dict:
    """An equation's attributes without the input BufferReuse chose to write into (`out`),
    for recording it again into another graph (inlined, or batched by vmap): which buffers die
    where is that graph's, and its own optimization chooses again."""
    return {key: value for key, value in equation.attrs.items() if key != "out"}


class BufferReuse:
    """Mark equations that may write their result into a dying input's buffer (attr `out`)."""

    def run(self, graph: Graph) -> Graph:
        last_read = {}
        for index, equation in enumerate(graph.equations):
            retains = getattr(equation.primitive, "retains_inputs", False)
            for value in equation.inputs:
                if isinstance(value, Var):
                    last_read[value] = math.inf if retains else max(
                        index, last_read.get(value, -1))
        for value in graph.outputs:
            last_read[value] = math.inf

        buffers: dict[Var, frozenset] = {}   # var -> the fresh buffers (by first owner) it may see
        owners: set[Var] = set()             # vars that are a whole buffer of their own
        buffer_last_read: dict[Var, float] = {}
        equations = []
        for index, equation in enumerate(graph.equations):
            target = self.target(equation, index, owners, buffers, buffer_last_read)
            if target is not None:
                equation = equation.replace(attrs={**equation.attrs, "out": target})
            for var in equation.outputs:
                if target is not None:
                    buffers[var] = buffers[equation.inputs[target]]
                    owners.add(var)
                elif equation.primitive.fresh:
                    buffers[var] = frozenset([var])
                    owners.add(var)
                else:  # a view, possibly of any of its inputs
                    buffers[var] = frozenset().union(*[
                        buffers.get(value, ()) for value in viewed_inputs(equation)
                        if isinstance(value, Var)])
                for buffer in buffers[var]:
                    buffer_last_read[buffer] = max(buffer_last_read.get(buffer, -1),
                                                   last_read.get(var, -1))
            equations.append(equation)
        return Graph(graph.inputs, equations, graph.outputs)

    @staticmethod
    def target(equation, index, owners, buffers, buffer_last_read):
        """The input position whose buffer this equation may write into, or None."""
        if "out" in equation.attrs or len(equation.outputs) != 1:
            return None
        output = equation.outputs[0].aval
        if equation.primitive.name in _STRIDE_DEPENDENT and not (
                None not in output.shape and math.prod(output.shape) > 1):
            return None
        for position in equation.primitive.writes_into:
            value = equation.inputs[position]
            if (isinstance(value, Var) and value in owners and value.aval == output
                    and output.ndim >= 1):
                (buffer,) = buffers[value]
                if buffer_last_read[buffer] == index:
                    return position
        return None
