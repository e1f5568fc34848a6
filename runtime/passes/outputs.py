"""Fresh outputs: an optimized graph's results share memory only where NumPy's would.

The passes replace equations by values equal to their results: `x * 1.0` by `x`, two equal
equations by one, an equation of constants by a constant. Equal values are not the same array,
though. Eager NumPy gives a new array for `x * 1.0`, two arrays for `(x * 2, x * 2)` and a new
array for `c * 2.0` on every call, so a caller may write into what it got back. Without this
step a traced function would hand back the caller's own `x`, one array twice, or the graph's
constant, which the write would change for every later call.

So, after all other passes, each output of the optimized graph is compared with the same output
of the traced graph (`run(traced, optimized)`) by the buffers it may be (an input, a constant,
a new array) or view, followed through views (`viewed_inputs`) and results written into an
input's buffer (`out=`), as BufferReuse and the executor follow them:

- an output that may share a buffer with a graph input, where the traced output did not (the
  user returned `x * 1.0`, not `x` or `x.T`), is copied;
- an output that may share a buffer with an earlier output, where the traced ones did not
  (common subexpressions), is copied;
- an output that is a constant's array, or a view of one, is copied: a caller's write must not
  reach the next call (a NumPy scalar is immutable, and left as it is).

The copies are added at the end, one `copy` equation each, only for outputs that need one:
a result that an equation computed into new memory is never copied. Where the user's own code
returns an input or a view of one (`return x`, `return x.T`), NumPy's result shares it and so
does the traced function's.
"""
from __future__ import annotations

import numpy as np

from ..abstract import AbstractArray
from ..graph import Constant, Equation, Graph, Var
from ..primitives.registry import primitives, viewed_inputs


def _buffers(graph: Graph) -> list[frozenset]:
    """For each output of `graph`, the buffers it may be or view: graph inputs (by position,
    `("input", i)`), mutable constants (`("constant", id)`), or the Var that owns new memory."""
    buffers: dict = {}
    for position, var in enumerate(graph.inputs):
        buffers[var] = frozenset([("input", position)])

    def of(value) -> frozenset:
        if isinstance(value, Var):
            return buffers.get(value, frozenset())
        if isinstance(value, Constant) and not isinstance(value.value, np.generic):
            return frozenset([("constant", id(value))])
        return frozenset()  # a Literal, or an immutable NumPy scalar

    for equation in graph.equations:
        inner = _control_buffers(equation, of)
        if inner is not None:  # a cond's or while's: each output's own, through its graphs
            for var, shared in zip(equation.outputs, inner):
                buffers[var] = shared or frozenset([("new", var)])
            continue
        if "out" in equation.attrs:
            shared = of(equation.inputs[equation.attrs["out"]])
        elif equation.primitive.fresh:
            shared = frozenset()
        else:  # possibly a view of any of its (viewed) inputs
            shared = frozenset().union(*map(of, viewed_inputs(equation)))
        for var in equation.outputs:
            buffers[var] = shared or frozenset([("new", var)])
    return [of(value) for value in graph.outputs]


def outputs_sharing(graph: Graph) -> list[bool]:
    """For each output of `graph`, whether it may share memory with a graph input, a mutable
    constant or another output: False for one an equation computes into new memory that no
    other output is or views. The optimized graph's outputs share no more (FreshOutputs), so
    a caller that stores outputs apart checks only those (runtime/tracing/trees.py `_store`)."""
    buffers = _buffers(graph)
    return [any(buffer[0] != "new" for buffer in found) or
            any(found & other for position, other in enumerate(buffers) if position != index)
            for index, found in enumerate(buffers)]


def _control_buffers(equation: Equation, of) -> list | None:
    """For each output of a `cond` or `while` equation, the buffers it may be or view, read
    from its branches or loop body (`of`: the buffers of a value outside), or None for any
    other equation. Two results a branch gives from one operand (or one array it made) share
    memory, as `cond(p, x, x)` does where the passes made two operands one."""
    graphs = getattr(equation.attrs.get("branches"), "graphs", None)
    if graphs is not None:  # cond: the predicate, then what every branch takes
        operands = [of(value) for value in equation.inputs[1:]]
        found = [set() for _ in equation.outputs]
        for branch in graphs:
            for index, inner in enumerate(_buffers(branch)):
                found[index] |= _outside(inner, operands)
        return [frozenset(f) for f in found]
    loop = equation.attrs.get("loop")
    if loop is None:
        return None
    # while: the loop values, then the captured ones; a loop value is what it started as or
    # what the body gives it from any loop value of the run before
    operands = [set(of(value)) for value in equation.inputs]
    carried = len(equation.outputs)
    inner = _buffers(loop.body)
    while True:
        grown = [operands[index] | _outside(inner[index], operands) for index in range(carried)]
        if grown == operands[:carried]:
            return [frozenset(found) for found in grown]
        operands[:carried] = grown


def _outside(inner: frozenset, operands: list) -> set:
    """The buffers of a subgraph's `inner` ones outside it: its inputs are the `operands`'
    buffers; a constant or an array it made is its own."""
    found = set()
    for buffer in inner:
        found |= set(operands[buffer[1]]) if buffer[0] == "input" else {buffer}
    return found


def _is_shared_with_caller(buffer) -> bool:
    return buffer[0] in ("input", "constant")


def _fresh_copy(value):
    """The primitive that gives the output `value` new memory: a copy; for a 0-d number,
    positive, which gives it as NumPy gives a 0-d result, an immutable scalar, bit for bit (a
    copy would be a 0-d array, and the gradient of a float no float); but a copy of a constant
    0-d array, which the function made one (`a = np.zeros_like(s); a += 1`)."""
    aval = value.aval
    numeric = np.issubdtype(aval.dtype, np.number)
    array = isinstance(value, Constant) and isinstance(value.value, np.ndarray)
    return primitives["positive" if aval.shape == () and numeric and not array else "copy"]


class FreshOutputs:
    """Copy the outputs that the passes made share memory where the traced graph's did not."""

    def run(self, traced: Graph, optimized: Graph) -> Graph:
        """`optimized` (the result of the passes on `traced`) with the copies it needs."""
        if len(traced.outputs) != len(optimized.outputs):
            raise ValueError("FreshOutputs compares a graph with its own optimized version, "
                             "which has as many outputs")
        expected, found = _buffers(traced), _buffers(optimized)
        outputs, copies = list(optimized.outputs), []
        made = _Copies(optimized, copies)
        for index, buffers in enumerate(found):
            aval = optimized.outputs[index].aval
            if not isinstance(aval, AbstractArray):
                continue  # a stack or another value that is no array: passed on as it is
            allowed = {buffer for buffer in expected[index] if buffer[0] == "input"}
            from_caller = {buffer for buffer in buffers if _is_shared_with_caller(buffer)}
            shares_other_output = any(
                buffers & found[earlier] and not expected[index] & expected[earlier]
                for earlier in range(index))
            if from_caller - allowed or shares_other_output:
                shared = any(expected[index] & expected[other]
                             for other in range(len(expected)) if other != index)
                outputs[index] = made.fresh(outputs[index], expected[index], shared)
                found[index] = frozenset([("new", outputs[index])])
        if not copies:
            return optimized
        return Graph(optimized.inputs, [*optimized.equations, *copies], outputs)


class _Copies:
    """The copies FreshOutputs makes of `graph`'s outputs (equations appended to `copies`).
    Outputs whose traced ones shared memory (`A`, `A` and `A[1:]`, where the passes made `A =
    x * 1.0` the input x) share the one copy, as NumPy's results do: the same value is copied
    once, and a view of a value copied is taken again of the copy."""

    def __init__(self, graph: Graph, copies: list):
        self.copies, self.made = copies, {}  # Var -> (its copy, the traced buffers it was for)
        self.producer = {var: equation for equation in graph.equations
                         for var in equation.outputs}

    def fresh(self, value, wanted: frozenset, shared: bool = False):
        """A value equal to `value` in new memory, shared with the copies made for outputs
        whose traced buffers meet `wanted`. shared: another output's traced buffers meet them
        (`return A[1:], A`): a view is taken again of a copy of what it views, which that
        output's copy then is too."""
        again = self._again(value, wanted)
        if again is not None:
            return again
        root = self._viewed_root(value) if shared else None
        if root is not None:
            self.made[root] = (self.fresh(root, wanted), wanted)
            return self._again(value, wanted)
        fresh = Var(value.aval)
        self.copies.append(Equation(_fresh_copy(value), (value,), {}, (fresh,)))
        if isinstance(value, Var):
            self.made[value] = (fresh, wanted)
        return fresh

    def _viewed_root(self, value):
        """The value that `value`, a view (of a view...) of one value, views; None for no
        view."""
        root = value
        while isinstance(root, Var) and (viewed := self._viewed(root)) is not None:
            root = viewed
        return root if root is not value else None

    def _viewed(self, value):
        """The one value whose memory the equation making `value` views, or None."""
        equation = self.producer.get(value)
        if equation is None or equation.primitive.fresh or "out" in equation.attrs \
                or len(equation.outputs) != 1:
            return None
        viewed = [v for v in viewed_inputs(equation) if isinstance(v, Var)]
        return viewed[0] if len(viewed) == 1 else None

    def _again(self, value, wanted):
        if not isinstance(value, Var):
            return None
        if value in self.made and self.made[value][1] & wanted:
            return self.made[value][0]
        viewed = self._viewed(value)
        base = None if viewed is None else self._again(viewed, wanted)
        if base is None:
            return None
        equation = self.producer[value]
        view = Var(value.aval)
        inputs = tuple(base if v is viewed else v for v in equation.inputs)
        self.copies.append(Equation(equation.primitive, inputs, equation.attrs, (view,)))
        self.made[value] = (view, wanted)
        return view
