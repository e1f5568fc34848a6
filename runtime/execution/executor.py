"""The executor: a graph becomes a straight-line Python function, one line per equation.

    def graph_1(a, b):
        c = np.multiply(a, b)  # f64[3]
        d = np.add.reduce(c, axis=(0,))  # f64[]
        del c
        return (d,)

Calling it costs the NumPy calls and nothing else: no interpreter loop over ops, no dispatch.
Variables keep the names the graph prints with (a Python keyword, or a name the code uses such
as `np`, gets a trailing underscore), constants are globals of the function (`const0`), and the
source is registered with linecache under `<autotrace graph #N>`, so tracebacks,
`inspect.getsource` and pdb show it.

An array is deleted (`del c`) after the last equation that reads it, as eager code drops it when
a name is rebound: otherwise every intermediate would live until the function returns, which
costs memory and, once it is all freed at once, page faults as the allocator hands it back to
the system and takes it again on the next call. On a backend that allows it (the CPU's), a
graph of float64 scalars is also written as Python float arithmetic (runtime/passes/floats.py),
which falls back on the NumPy version.

What the names of the generated code mean is the backend's to say (runtime/backends/): `np` is
its array module (NumPy, CuPy), and equations its passes made (a fused kernel) bring their own
globals.

`compile(graph, backend)` is the one way from a traced graph to something that runs: the graph
passes (runtime/passes/__init__.py, the common ones then the backend's), then this executor.
Export and summary graphs, which write the optimized graph out rather than run it, take the
passes alone (`optimize(graph, backend=...)`).
"""
from __future__ import annotations

import builtins
import itertools
import keyword
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..abstract import AbstractArray
from ..backends.protocol import Backend
from ..backends.selection import backend_for
from ..graph import Constant, Graph, Literal, Var, short_name
from ..ops import literal_source, viewed_inputs
from ..passes import optimize
from ..passes.floats import float_function_source, lowerable
from ..generated_source import forget_with, register_generated
from .call_buffers import KeptBuffers, kept_buffers

# Numbers the generated files; the only state here, and only so that file names are unique.
_graph_numbers = itertools.count(1)


class _Source:
    """What the functions of one source share while it is written: the namespace it will run
    in (constants are put there), its blocks of text so far, the numbers of its constants and
    subgraph functions, and how a backend places a constant where the function runs."""

    def __init__(self, namespace: dict, lower_scalars: bool, place_constant=None,
                 sources=None):
        self.namespace = namespace
        self.sources = sources or {}
        self.lower_scalars = lower_scalars
        self.place_constant = place_constant
        self.blocks: list[str] = []
        self.sites: dict[int, tuple] = {}  # a line of the source -> the site of its equation
        self.constant_numbers = itertools.count()
        self.subgraph_numbers = itertools.count(1)


class _SourceNames:
    """Python names for a graph's values: the names it prints with, made safe to assign.

    Constants are numbered across the functions of one source (`_Source`).
    """

    def __init__(self, source: _Source):
        self.source = source
        self.namespace = source.namespace
        self.names: dict[int, str] = {}
        self.constants = 0

    def of(self, var) -> str:
        name = self.names.get(id(var))
        if name is None:
            name = short_name(len(self.names) - self.constants)
            if keyword.iskeyword(name) or name in self.namespace:  # np, math, conv2d...
                name += "_"
            self.names[id(var)] = name
        return name

    def use(self, value) -> str:
        if isinstance(value, Literal):
            return literal_source(value.value)
        if isinstance(value, Constant):
            name = self.names.get(id(value))
            if name is None:
                name = self.names[id(value)] = f"const{next(self.source.constant_numbers)}"
                self.constants += 1
                place = self.source.place_constant
                self.namespace[name] = value.value if place is None else place(value.value)
            return name
        return self.of(value)

    def literal(self, value) -> str:
        return literal_source(value)

    def result(self, value) -> str:
        """`value` as the function returns it: a constant array is copied on every call, as
        eager code would make a new array."""
        name = self.use(value)
        if isinstance(value, Constant) and not isinstance(self.namespace[name], np.generic):
            return f"np.copy({name})"
        return name


def graph_source(graph: Graph, function_name: str, namespace: dict,
                 lower_scalars: bool = True, place_constant=None,
                 keep_buffers: bool = False, sources=None, sites=None) -> str:
    """The Python source of `graph` as a function; constants are put in `namespace`.

    The subgraphs of control ops (cond, while) become functions of their own, defined first
    and named after this one (`graph_3_true_1`). A graph of float64 scalars is written twice:
    `graph_3_numpy` and the float version `graph_3`, which runs the other where they may differ,
    unless `lower_scalars` is false (a backend whose values stay on a device).
    `place_constant(value)` gives a constant's value as the function uses it (on a device).
    With `keep_buffers`, the arrays that die inside a call of the graph (not of its subgraphs)
    are written into buffers the function keeps for its next call (call_buffers.py).
    `sources` (primitive name -> source function) replaces primitives' own sources: a
    backend's faster calls (Backend.sources). `sites`, a dict, gets the site (Equation.site)
    of each line that computes an equation of an array function, by line number.
    """
    source = _Source(namespace, lower_scalars, place_constant, sources)
    _function_source(graph, function_name, source, keep_buffers)
    if sites is not None:
        sites.update(source.sites)
    return "\n".join(source.blocks)


def _function_source(graph, function_name, source: _Source, keep_buffers=False) -> None:
    if source.lower_scalars and lowerable(graph):
        exact_name = f"{function_name}_numpy"
        _array_function_source(graph, exact_name, source)
        source.blocks.append(float_function_source(graph, function_name, exact_name,
                                                   _SourceNames(source)))
    else:
        _array_function_source(graph, function_name, source, keep_buffers)


def _array_function_source(graph, function_name, source: _Source, keep_buffers=False) -> None:
    names = _SourceNames(source)
    namespace = source.namespace

    def define(subgraph: Graph, label: str) -> str:
        name = f"{function_name}_{label}_{next(source.subgraph_numbers)}"
        _function_source(subgraph, name, source)
        return name

    parameters = ", ".join(names.of(var) for var in graph.inputs)
    lines = [f"def {function_name}({parameters}):"]
    placed = {}  # a line of `lines` -> the site of the equation it computes
    sets, last_read, seen = buffer_sets(graph)
    deletions = _deletions(sets, last_read, seen)
    kept = kept_buffers(graph, sets, last_read, seen) if keep_buffers else KeptBuffers()
    if kept.slots:
        pool, slot_names = f"kept_{function_name}", kept.names("_kept")
        namespace[pool], namespace[f"new_{pool}"] = [], kept.maker()
        lines += [f"    _kept = {pool}.pop() if {pool} else new_{pool}()",
                  f"    {', '.join(slot_names)}{',' if len(slot_names) == 1 else ''} = _kept"]
    for index, equation in enumerate(graph.equations):
        args = [names.use(value) for value in equation.inputs]
        outputs = [names.of(var) for var in equation.outputs]
        primitive = equation.primitive
        attrs = equation.attrs
        if index in kept.results:
            slots = kept.results[index]
            into = [None if slot is None else slot_names[slot] for slot in slots]
            attrs = {**attrs, "out": into[0] if len(into) == 1 else tuple(into)}
        if primitive.globals is not None:
            namespace.update(primitive.globals(attrs))
        subgraph_statements = getattr(primitive, "subgraph_statements", None)
        if index in kept.joins:  # made in place (call_buffers.py): its parts are written
            result, copied = kept.joins[index]
            statements = [f"{outputs[0]} = {slot_names[result]}", *(
                f"np.copyto({slot_names[slot]}, {names.use(value)})" for slot, value in copied)]
        elif subgraph_statements is not None:
            statements = subgraph_statements(outputs, args, attrs, define)
        elif primitive.statements is not None:
            statements = primitive.statements(outputs, args, attrs)
        else:
            write = source.sources.get(primitive.name, primitive.source)
            statements = [f"{', '.join(outputs)} = {write(args, attrs)}"]
        types = " ".join(str(var.aval) for var in equation.outputs)
        if equation.site is not None:
            placed.update((len(lines) + offset, equation.site)
                          for offset in range(len(statements)))
        lines.append(f"    {statements[0]}  # {types}" if types else f"    {statements[0]}")
        lines.extend(f"    {statement}" for statement in statements[1:])
        if index in deletions:
            lines.append(f"    del {', '.join(names.of(var) for var in deletions[index])}")
    results = [names.result(value) for value in graph.outputs]
    if kept.slots:
        lines.append(f"    {pool}.append(_kept)")
    lines.append(f"    return ({', '.join(results)}{',' if len(results) == 1 else ''})")
    first = 1 + sum(block.count("\n") + 1 for block in source.blocks)  # (joined by "\n")
    source.sites.update((first + offset, site) for offset, site in placed.items())
    source.blocks.append("\n".join(lines) + "\n")


def buffer_sets(graph: Graph) -> tuple[dict, dict, set]:
    """The arrays of `graph` that may share memory: (var -> the list of every name of its
    buffer: the array, the results written into it with `out=`, views of it, one list object
    per buffer; var -> the index of the last equation reading it; the vars whose buffer the
    caller sees: the graph's inputs and outputs and every name of theirs)."""
    parent: dict[Var, Var] = {}

    def root(var: Var) -> Var:
        while parent[var] is not var:
            parent[var] = var = parent[parent[var]]  # halving the path keeps chains short
        return var

    last_read: dict[Var, int] = {}
    for var in graph.inputs:
        parent[var] = var
    for index, equation in enumerate(graph.equations):
        sources = [value for value in viewed_inputs(equation) if isinstance(value, Var)]
        if "out" in equation.attrs:
            sources = [equation.inputs[equation.attrs["out"]]]
        elif equation.primitive.fresh:
            sources = []
        for var in equation.outputs:
            parent[var] = var
            last_read[var] = index
            for source in sources:  # the same array, or possibly a view of it
                parent[root(source)] = root(var)
        for value in equation.inputs:
            if isinstance(value, Var):
                last_read[value] = index

    members: dict[Var, list] = {}
    for var in parent:
        members.setdefault(root(var), []).append(var)
    sets = {var: members[root(var)] for var in parent}
    seen = {root(value) for value in (*graph.inputs, *graph.outputs) if isinstance(value, Var)}
    return sets, last_read, {var for owner in seen for var in members[owner]}


def _deletions(sets: dict, last_read: dict, seen: set) -> dict:
    """Equation index -> the Vars to delete after it: all the names of one buffer, once the
    last of them is read. Buffers that hold only 0-d values, and those the caller sees (the
    graph's inputs and outputs), are left."""
    deletions: dict[int, list] = {}
    done = set()
    for members in sets.values():
        if id(members) in done or members[0] in seen:
            continue
        done.add(id(members))
        if all(var.aval.shape == () for var in members):
            continue
        deletions.setdefault(max(last_read[var] for var in members), []).extend(members)
    return deletions


def compile_graph(graph: Graph, name: str = "graph",
                  backend: Backend | None = None) -> tuple[Callable, str]:
    """Compile `graph` into a Python function taking its inputs, returning a flat tuple.

    Arguments:
        graph: the (usually optimized) graph.
        name: a prefix for the function's name, shown in tracebacks.
        backend: what the function runs on (runtime/backends/); by default the one for the
            devices of the graph's inputs (`backend_for`).
    Returns:
        (function, source). `function(*arrays)` returns a tuple of the graph's outputs;
        runtime.tracing.tracer.OutputStructure.unflatten rebuilds the traced function's result.

    Examples:
        >>> graph, structure = trace(lambda x: x * 2.0, (np.ones(3),))
        >>> function, source = compile_graph(graph)
        >>> function(np.ones(3))
        (array([2., 2., 2.]),)
    """
    number = next(_graph_numbers)
    function_name = f"{name}_{number}"
    filename = f"<autotrace graph #{number}>"
    if backend is None:
        backend = backend_for(var.aval.device for var in graph.inputs)
    namespace = backend.namespace()
    devices = sorted({var.aval.device for var in graph.inputs
                      if isinstance(var.aval, AbstractArray)}) or ["cpu"]
    sites = {}
    source = graph_source(graph, function_name, namespace, backend.lowers_scalars,
                          lambda value: backend.place_constant(value, devices[0]),
                          backend.keeps_buffers, backend.sources, sites)
    exec(builtins.compile(source, filename, "exec"), namespace)
    function = namespace[function_name]
    native = backend.compile_whole(graph, function)
    if native is not None:
        function = native
        source += (f"\n# {function_name} runs as native code compiled by the {backend.name} "
                   "backend; the Python above\n# computes the same, and runs where NumPy "
                   "must warn.\n")
    function = backend.run_on(function, devices[0])
    register_generated(filename, source, sites)
    forget_with(function, filename)
    return function, source


@dataclass(frozen=True)
class CompiledGraph:
    """A traced graph made ready to run.

    Attributes:
        graph: the graph optimized for `backend` (what `Function.graph` shows).
        run: `run(*arrays)` -> a tuple of the graph's outputs.
        source: the Python that `run` is (or, for native code, computes the same as).
        backend: what it runs on.
    """

    graph: Graph
    run: Callable
    source: str
    backend: Backend


def compile(graph: Graph, backend: Backend | None = None,  # noqa: A001 - runtime.compile
            name: str = "graph") -> CompiledGraph:
    """Optimize `graph` for `backend` (the common passes, then the backend's own), then
    compile it (`compile_graph`).

    Arguments:
        graph: a traced graph, as the tracer recorded it.
        backend: by default the one for the devices of the graph's inputs (`backend_for`).
        name: a prefix for the function's name, shown in tracebacks.

    Examples:
        >>> graph, structure = trace(lambda x: x * 2.0 + 0.0, (np.ones(3),))
        >>> compiled = compile(graph)
        >>> compiled.run(np.ones(3))
        (array([2., 2., 2.]),)
    """
    if backend is None:
        backend = backend_for(var.aval.device for var in graph.inputs)
    optimized = optimize(graph, backend=backend)
    run, source = compile_graph(optimized, name=name, backend=backend)
    return CompiledGraph(optimized, run, source, backend)
