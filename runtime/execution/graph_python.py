"""A graph written as readable Python: one NumPy call a line, as the executor lowers it, with
`cond` written as `if`/`else` and `while` as a `while` loop, inline.

    lines, outputs = graph_statements(graph, ["x", "params['w']"], namespace, reserved={"x"})

gives

    b = np.multiply(x, c)  # f64[3]
    if e:  # f64[3]
        f = np.negative(b)  # f64[3]
        g = f
    else:
        g = b

Where the executor writes code to run fast (subgraphs as functions of their own, buffers
reused, arrays deleted), this writes code for people and for the source transforms to read:
autotrace differentiates a function whose source cannot be read by printing its trace this
way (autotrace/from_trace.py). Names are the graph's own (a, b, c, ...), skipping `reserved`;
constants go into `namespace` as `const0`, `const1`, ...
"""
from __future__ import annotations

import itertools
import keyword

from .executor import _Source, _SourceNames
from ..graph import Graph, short_name
from ..ops import source_globals
from ..primitives.index import add_at, index_source


class UnprintableGraphError(NotImplementedError):
    """A graph holds an op that has no readable Python form (a stack of saved values)."""


class _ReadableNames(_SourceNames):
    """The executor's names, but never one of `reserved` (the function's parameters and the
    names its body must not shadow), and with a Var bound to a given expression where it is
    one of the function's inputs or the operand of an inlined subgraph."""

    def __init__(self, namespace: dict, reserved: set):
        super().__init__(_Source(namespace, lower_scalars=False))
        self.reserved = set(reserved) | {"np", "math"} | set(source_globals) | {"add_at"}
        self.numbers = itertools.count()

    def bind(self, var, expression: str) -> None:
        self.names[id(var)] = expression

    def of(self, var) -> str:
        name = self.names.get(id(var))
        while name is None:
            candidate = short_name(next(self.numbers))
            if not keyword.iskeyword(candidate) and candidate not in self.reserved:
                name = self.names[id(var)] = candidate
        return name


def graph_statements(graph: Graph, inputs: list, namespace: dict, reserved=()) -> tuple:
    """Python statements computing `graph`, and the expressions of its outputs.

    Arguments:
        graph: a traced graph (before the passes: one equation a NumPy call).
        inputs: for each graph input, the expression that holds it (`x`, `params['w']`).
        namespace: where the constants the statements read are put.
        reserved: names the statements must not assign.
    Returns:
        (lines, outputs): the lines (unindented), and one expression per graph output.
    """
    names = _ReadableNames(namespace, reserved)
    for var, expression in zip(graph.inputs, inputs):
        names.bind(var, expression)
    lines = _statements(graph, names)
    return lines, [names.use(value) for value in graph.outputs]


def _statements(graph: Graph, names: _ReadableNames) -> list:
    lines = []
    for equation in graph.equations:
        args = [names.use(value) for value in equation.inputs]
        outputs = [names.of(var) for var in equation.outputs]
        name = equation.primitive.name
        # Subgraphs come optimized, their results written into dying inputs' buffers
        # (`out=`): readable code assigns each result to a name of its own instead.
        attrs = {key: value for key, value in equation.attrs.items() if key != "out"}
        if name == "cond":
            statements = _cond(equation, args, outputs, names)
        elif name == "while":
            statements = _while(equation, args, outputs, names)
        elif name == "scatter_add":
            statements = _scatter_add(args, outputs, attrs, names.namespace)
        elif getattr(equation.primitive, "subgraph_statements", None) is not None:
            if name != "print":
                raise UnprintableGraphError(f"a {name} op, which has no readable Python form")
            statements = equation.primitive.subgraph_statements(outputs, args, attrs, None)
        elif equation.primitive.statements is not None:
            statements = equation.primitive.statements(outputs, args, attrs)
        else:
            statements = [f"{', '.join(outputs)} = {equation.primitive.source(args, attrs)}"]
        types = " ".join(str(var.aval) for var in equation.outputs)
        if name in ("cond", "while"):  # each statement inside says its own types
            types = ""
        lines.append(f"{statements[0]}  # {types}" if types else statements[0])
        lines.extend(statements[1:])
    return lines


def _scatter_add(args, outputs, attrs, namespace) -> list:
    """`x` with `value` added at `index` (repeated positions adding up), as a new array: the
    executor writes `np.add.at` into a copy, which changes an array in place; readable code
    calls the op's own function, which does the same and returns the result."""
    namespace["add_at"] = add_at
    index = index_source(attrs["index"], args[2:])
    return [f"{outputs[0]} = add_at({args[0]}, np.s_[{index}], {args[1]})"]


def _assign(targets: list, values: list) -> list:
    if not targets:
        return []
    return [f"{', '.join(targets)} = {', '.join(values)}"]


def _inline(graph: Graph, operands: list, names: _ReadableNames) -> tuple:
    """A subgraph's statements with its inputs bound to `operands`; and its outputs."""
    for var, operand in zip(graph.inputs, operands):
        names.bind(var, operand)
    return _statements(graph, names), [names.use(value) for value in graph.outputs]


def _indented(lines: list) -> list:
    return ["    " + line for line in lines]


def _cond(equation, args, outputs, names) -> list:
    branches = equation.attrs["branches"]
    true_lines, true_outputs = _inline(branches.true, args[1:], names)
    false_lines, false_outputs = _inline(branches.false, args[1:], names)
    return ([f"if {args[0]}:"] + _indented(true_lines + _assign(outputs, true_outputs) or
                                          ["pass"])
            + ["else:"] + _indented(false_lines + _assign(outputs, false_outputs) or ["pass"]))


def _while(equation, args, outputs, names) -> list:
    """`values = init; test; while test: body; values = new; test`: the loop values are the
    equation's outputs, and the test is computed before the loop and at the end of its body."""
    loop = equation.attrs["loop"]
    carried = len(outputs)
    operands = outputs + args[carried:]
    test_lines, (test,) = _inline(loop.cond, operands, names)
    body_lines, new_values = _inline(loop.body, operands, names)
    return (_assign(outputs, args[:carried]) + test_lines + [f"while {test}:"]
            + _indented(body_lines + _assign(outputs, new_values) + test_lines))
