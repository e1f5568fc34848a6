"""The executor: a graph becomes a straight-line Python function, one line per equation.

    def graph_1(a, b):
        c = np.multiply(a, b)  # f64[3]
        d = np.sum(c, axis=(0,))  # f64[]
        return (d,)

Calling it costs the NumPy calls and nothing else: no interpreter loop over ops, no dispatch.
Variables keep the names the graph prints with (a Python keyword gets a trailing underscore),
constants are globals of the function (`const0`), and the source is registered with linecache
under `<autotrace graph #N>`, so tracebacks, `inspect.getsource` and pdb show it.
"""
from __future__ import annotations

import itertools
import keyword
import linecache
import weakref
from typing import Callable

import numpy as np

from runtime.graph import Constant, Graph, Literal, short_name
from runtime.ops import literal_source

# Numbers the generated files; the only state here, and only so that file names are unique.
_graph_numbers = itertools.count(1)


class _SourceNames:
    """Python names for a graph's values: the names it prints with, made safe to assign.

    Constants are numbered by `constant_numbers`, shared by the functions of one source.
    """

    def __init__(self, namespace: dict, constant_numbers):
        self.namespace = namespace
        self.constant_numbers = constant_numbers
        self.names: dict[int, str] = {}
        self.constants = 0

    def of(self, var) -> str:
        name = self.names.get(id(var))
        if name is None:
            name = short_name(len(self.names) - self.constants)
            if keyword.iskeyword(name) or name == "np":
                name += "_"
            self.names[id(var)] = name
        return name

    def use(self, value) -> str:
        if isinstance(value, Literal):
            return literal_source(value.value)
        if isinstance(value, Constant):
            name = self.names.get(id(value))
            if name is None:
                name = self.names[id(value)] = f"const{next(self.constant_numbers)}"
                self.constants += 1
                self.namespace[name] = value.value
            return name
        return self.of(value)


def graph_source(graph: Graph, function_name: str, namespace: dict) -> str:
    """The Python source of `graph` as a function; constants are put in `namespace`.

    The subgraphs of control ops (cond, while) become functions of their own, defined first
    and named after this one (`graph_3_true_1`).
    """
    blocks: list[str] = []
    _function_source(graph, function_name, namespace, blocks, itertools.count(),
                     itertools.count(1))
    return "\n".join(blocks)


def _function_source(graph, function_name, namespace, blocks, constant_numbers,
                     subgraph_numbers) -> None:
    names = _SourceNames(namespace, constant_numbers)

    def define(subgraph: Graph, label: str) -> str:
        name = f"{function_name}_{label}_{next(subgraph_numbers)}"
        _function_source(subgraph, name, namespace, blocks, constant_numbers, subgraph_numbers)
        return name

    parameters = ", ".join(names.of(var) for var in graph.inputs)
    lines = [f"def {function_name}({parameters}):"]
    for equation in graph.equations:
        args = [names.use(value) for value in equation.inputs]
        outputs = [names.of(var) for var in equation.outputs]
        primitive = equation.primitive
        subgraph_statements = getattr(primitive, "subgraph_statements", None)
        if subgraph_statements is not None:
            statements = subgraph_statements(outputs, args, equation.attrs, define)
        elif primitive.statements is not None:
            statements = primitive.statements(outputs, args, equation.attrs)
        else:
            statements = [f"{', '.join(outputs)} = {primitive.source(args, equation.attrs)}"]
        types = " ".join(str(var.aval) for var in equation.outputs)
        lines.append(f"    {statements[0]}  # {types}" if types else f"    {statements[0]}")
        lines.extend(f"    {statement}" for statement in statements[1:])
    results = [_result(names.use(value), value) for value in graph.outputs]
    lines.append(f"    return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    blocks.append("\n".join(lines) + "\n")


def _result(name: str, value) -> str:
    # A constant output is copied on every call, as eager code would make a new array.
    if isinstance(value, Constant) and isinstance(value.value, np.ndarray):
        return f"{name}.copy()"
    return name


def compile_graph(graph: Graph, name: str = "graph") -> tuple[Callable, str]:
    """Compile `graph` into a Python function taking its inputs, returning a flat tuple.

    Arguments:
        graph: the (usually optimized) graph.
        name: a prefix for the function's name, shown in tracebacks.
    Returns:
        (function, source). `function(*arrays)` returns a tuple of the graph's outputs;
        runtime.tracer.OutputStructure.unflatten rebuilds the traced function's result.

    Example:
        >>> graph, structure = trace(lambda x: x * 2.0, (np.ones(3),))
        >>> function, source = compile_graph(graph)
        >>> function(np.ones(3))
        (array([2., 2., 2.]),)
    """
    number = next(_graph_numbers)
    function_name = f"{name}_{number}"
    filename = f"<autotrace graph #{number}>"
    namespace = {"np": np, "__name__": "autotrace_graph"}
    source = graph_source(graph, function_name, namespace)
    exec(compile(source, filename, "exec"), namespace)
    function = namespace[function_name]
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    weakref.finalize(function, linecache.cache.pop, filename, None)
    return function, source
