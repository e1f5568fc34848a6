"""Control flow and printing on traced values: the graph-level `cond`, `while` and `print` ops.

    y = cond(x.sum() > 0, lambda x: x * 2.0, lambda x: -x, x)
    n, x = while_loop(lambda s: s[1].sum() < 100.0, lambda s: (s[0] + 1, s[1] * 2.0), (0, x))
    print_values("doubled", n, "times:", x)

On concrete values each is plain Python (an `if`, a `while`, `print`). When the predicate or a
loop value is traced, the branches (or the loop's cond and body) are traced as subgraphs over
the operands and recorded as one equation, so one trace serves every value:

    d:f64[3] = cond[branches=(
      true={ lambda a:f64[3] ;
        b:f64[3] = multiply a 2.0
        in (b) }
      false={ lambda a:f64[3] ;
        b:f64[3] = negative a
        in (b) }
    )] c a

Decisions:
- A subgraph is traced with a builder of its own. Tracers of an enclosing trace that a branch
  uses (closed over, not passed as operands) are captured: they become extra inputs of the
  subgraph and of the equation. While a subgraph traces, the enclosing builders record into it,
  so `outer * 2.0` inside a branch runs in the branch, not before it.
- Subgraphs are optimized when recorded (the passes see the control equations as opaque).
- Branch outputs and loop values may be Python numbers; they become 0-d NumPy arrays, so a
  loop counter `0` is an i64[] loop value.
- `print` has a side effect: the passes keep it, in order, and never fold or merge it.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Callable, NamedTuple

import numpy as np

from ..abstract import abstractify, same_type
from .control_scope import ControlFlowError, current_builder
from ..scopes import TraceRecord, active_subgraphs
from ..execution.executor import compile_graph
from ..graph import Graph, Var
from ..containers import rebuild
from ..ops import LITERAL_TYPES, Primitive, primitives, register
from .control_batching import cond_batching, print_batching, while_batching
from ..passes import optimize
from ..passes.cleanup import has_side_effect
from .tracer import (GraphBuilder, OutputStructure, Tracer, _Slot,
                     inherit_arguments, is_array, leaves_with_paths, map_arrays)
from .weak_scalars import inherit_weak, make_weak
from .control_aliases import branch_choices, carry_branch_aliases, carry_loop_aliases, inline_graph
from .control_writes import (changed_in_place, first_iteration_writes, loop_write_back,
                             positions_of_operands, write_back, write_first_iteration)
from .views import note_operands, share_operand_memory
from .type_checks import inherit_zero_d_kind
from .control_print import print_values  # noqa: F401 - the `print` op's recording, re-exported
from .control_stale import StaleReads, bases_inside, check_loop, outside_bases, view_of_operand

# --- subgraph attributes ------------------------------------------------------------------------

def _indented(graph: Graph, key: str) -> str:
    return "\n    " + f"{key}={graph}".replace("\n", "\n    ")


@dataclass(frozen=True, eq=False)
class Branches:
    """The attribute of a `cond` equation: a subgraph for each branch (same inputs, outputs)."""

    true: Graph
    false: Graph

    @property
    def graphs(self) -> tuple:
        return (self.true, self.false)

    def __repr__(self) -> str:
        return f"({_indented(self.true, 'true')}{_indented(self.false, 'false')}\n  )"


@dataclass(frozen=True, eq=False)
class Loop:
    """The attribute of a `while` equation: `cond` (loop values -> bool[]) and `body`
    (loop values -> loop values); both also take the captured values after the loop values."""

    cond: Graph
    body: Graph

    @property
    def graphs(self) -> tuple:
        return (self.cond, self.body)

    def __repr__(self) -> str:
        return f"({_indented(self.cond, 'cond')}{_indented(self.body, 'body')}\n  )"


@dataclass(frozen=True)
class ControlPrimitive(Primitive):
    """A primitive holding subgraphs or having a side effect.

    Attributes:
        subgraph_statements: `(outputs, args, attrs, define) -> lines` for the executor, where
            `define(graph, label)` compiles a subgraph into a function and returns its name.
        side_effect: `side_effect(attrs) -> bool`: whether the passes must keep it as it is.
        retains_inputs: it keeps its array inputs (buffer reuse must never write into them).
    """

    subgraph_statements: Callable | None = None
    side_effect: Callable | None = None
    retains_inputs: bool = False  # keeps references to its array inputs (a stack push)


def _evaluate(graph: Graph, values) -> tuple:
    return compile_graph(graph, name="subgraph")[0](*values)


def _single_or_tuple(results: tuple):
    return results[0] if len(results) == 1 else results


def _cond_impl(predicate, *values, branches: Branches):
    return _single_or_tuple(_evaluate(branches.true if predicate else branches.false, values))


def _while_impl(*values, loop: Loop):
    carried, captured = values[:len(loop.body.outputs)], values[len(loop.body.outputs):]
    while bool(_evaluate(loop.cond, (*carried, *captured))[0]):
        carried = _evaluate(loop.body, (*carried, *captured))
    return _single_or_tuple(tuple(carried))


def _tuple_source(names) -> str:
    return f"({', '.join(names)}{',' if len(names) == 1 else ''})"


def _cond_statements(outputs, args, attrs, define):
    true_name = define(attrs["branches"].true, "true")
    false_name = define(attrs["branches"].false, "false")
    call = ", ".join(args[1:])
    return [f"if bool({args[0]}):",
            f"    {_tuple_source(outputs)} = {true_name}({call})",
            "else:",
            f"    {_tuple_source(outputs)} = {false_name}({call})"]


def _while_statements(outputs, args, attrs, define):
    cond_name = define(attrs["loop"].cond, "cond")
    body_name = define(attrs["loop"].body, "body")
    carried = _tuple_source(outputs)
    call = ", ".join([*outputs, *args[len(outputs):]])
    return [f"{carried} = {_tuple_source(args[:len(outputs)])}",
            f"while bool({cond_name}({call})[0]):",
            f"    {carried} = {body_name}({call})"]


def _subgraphs_have_effects(attrs) -> bool:
    return any(has_side_effect(equation) for value in attrs.values()
               for graph in getattr(value, "graphs", ()) for equation in graph.equations)


def _print_impl(*values, texts, sep, end):
    values = iter(values)
    print(*[_printed(text, values) for text in texts], sep=sep, end=end)
    return ()


def _printed(text, values):
    """One item a print op shows (control_print.py): a traced value, a text, or a container's
    text in pieces, None for each traced value in it (shown by repr)."""
    if text is None:
        return next(values)
    if isinstance(text, str):
        return text
    return "".join(repr(next(values)) if piece is None else piece for piece in text)


def _print_statements(outputs, args, attrs, define):
    args = iter(args)
    items = [next(args) if text is None else repr(text) if isinstance(text, str) else
             "''.join([" + ", ".join(f"repr({next(args)})" if piece is None else repr(piece)
                                     for piece in text) + "])" for text in attrs["texts"]]
    return [f"print({', '.join(items)}, sep={attrs['sep']!r}, end={attrs['end']!r})"]


register(ControlPrimitive(
    "cond", _cond_impl,
    lambda *avals, branches: tuple(value.aval for value in branches.true.outputs),
    subgraph_statements=_cond_statements, side_effect=_subgraphs_have_effects,
    batching=cond_batching))
register(ControlPrimitive(
    "while", _while_impl,
    lambda *avals, loop: tuple(value.aval for value in loop.body.outputs),
    subgraph_statements=_while_statements, side_effect=_subgraphs_have_effects,
    batching=while_batching))
register(ControlPrimitive(
    "print", _print_impl, lambda *avals, texts, sep, end: (),
    subgraph_statements=_print_statements, side_effect=lambda attrs: True,
    batching=print_batching))


# --- tracing subgraphs --------------------------------------------------------------------------

class SubgraphBuilder(GraphBuilder):
    """Records one subgraph; captures the tracers of enclosing traces it is given.

    Its `role` says which part of which op it is: `("cond", token, True)` for a true branch,
    `("loop", token, "body")` for a loop body, `("loop", token, "test")` for its condition, the
    token being one object per op (runtime/tracing/stacks.py finds saved values by these).
    """

    def __init__(self, parent: GraphBuilder, role: tuple):
        super().__init__()
        self.parent = parent
        self.role = role
        self.captures: dict[Var, tuple] = {}  # enclosing Var -> (enclosing Tracer, inner Var)
        # id of an operand's Tracer -> the input standing for it (a branch's, which runs once:
        # the same memory; not a loop body's, whose next iteration may rebind it)
        self.inner_of: dict[int, Tracer] = {}
        # reads of arrays sharing memory with an operand the subgraph wrote (control_stale.py)
        self.stale_reads = StaleReads(in_loop=role[0] == "loop")
        self.operand_views: dict[int, tuple] = {}  # see control_stale.view_of_operand

    def enclosing(self):
        """The builders of the traces this subgraph is traced inside, innermost first."""
        builder = self.parent
        while builder is not None:
            yield builder
            builder = getattr(builder, "parent", None)

    def own_var(self, tracer: Tracer) -> Var:
        if tracer._builder is not self and not tracer._builder.finished and \
                any(tracer._builder is builder for builder in self.enclosing()):
            standing = view_of_operand(self, tracer)
            if standing is not None:  # a view of an operand: of its input here
                return standing.graph_var
            self.stale_reads.read(tracer)
            known = self.captures.get(tracer.graph_var)
            if known is None:
                inner = Var(tracer.aval)
                known = self.captures[tracer.graph_var] = (
                    Tracer(tracer._builder, tracer.graph_var), inner)
            return known[1]
        return super().own_var(tracer)


@contextmanager
def _recording_into(builder: SubgraphBuilder):
    """While tracing a subgraph, the enclosing builders record into it: `bind` picks the
    builder of an op's first traced input, which may be a closed-over enclosing tracer."""
    enclosing = list(builder.enclosing())
    saved = [outer.__dict__.get("record") for outer in enclosing]
    for outer in enclosing:
        outer.record = builder.record
    active = active_subgraphs()
    active.append(builder)
    try:
        yield
    finally:
        active.pop()
        builder.finished = True
        for outer, record in zip(enclosing, saved):
            if record is None:
                del outer.record
            else:
                outer.record = record


def _numbers_to_arrays(tree):
    """`tree` with Python numbers as NumPy scalars (loop values and branch outputs): a result
    is then a NumPy scalar whichever path gave it, as the result of NumPy arithmetic on one."""
    if isinstance(tree, (tuple, list)):
        items = [_numbers_to_arrays(item) for item in tree]
        if isinstance(tree, tuple) and hasattr(type(tree), "_fields"):
            return type(tree)(*items)
        return type(tree)(items)
    if isinstance(tree, dict):
        return rebuild(tree, ((key, _numbers_to_arrays(value)) for key, value in tree.items()))
    if type(tree) in LITERAL_TYPES:
        return np.asarray(tree)[()]
    return tree


def _describe(tree) -> str:
    """A tree's structure with its array leaves as their types: `(f64[3], {'n': i64[]})`."""
    return str(map_arrays(tree, lambda leaf: _Type(_aval(leaf))))


class _Type:
    def __init__(self, aval):
        self.aval = aval

    def __repr__(self) -> str:
        return str(self.aval)


def _aval(leaf):
    return leaf.aval if isinstance(leaf, Tracer) else abstractify(leaf)


def _input_aval(leaf, builder):
    """The aval of a subgraph input standing for `leaf`: a concrete leaf is on the device of
    the trace (the graph's)."""
    if isinstance(leaf, Tracer):
        return leaf.aval
    aval, device = abstractify(leaf), builder.device()
    return aval if aval.device == device else replace(aval, device=device)


def _same_structure(a, b) -> bool:
    if isinstance(a, _Slot) or isinstance(b, _Slot):
        return isinstance(a, _Slot) and isinstance(b, _Slot)
    if isinstance(a, TraceRecord):  # made anew by each run of a body (runtime/scopes.py)
        return a.same_in_graph(b)
    if isinstance(a, (tuple, list, dict)) or isinstance(b, (tuple, list, dict)):
        if type(a) is not type(b) or len(a) != len(b):
            return False
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(_same_structure(a[k], b[k]) for k in a)
        return all(_same_structure(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an object without a usable ==: compare identity
        return a is b


class TracedSubgraph(NamedTuple):
    """One function traced as a subgraph, before its captured values become inputs."""

    builder: SubgraphBuilder
    operand_vars: list   # the inputs for the operands' array leaves
    outputs: list        # the graph values of the result's array leaves
    result: object       # what the function returned (Tracers of `builder` among it)
    structure: OutputStructure
    inner: list          # the operands' array leaves inside the subgraph
    written: list        # for each, its graph value at the end if changed in place, else None
    choices: list        # (key, graph value): what views among the result were chosen by


def _trace_subgraph(parent: GraphBuilder, function, operands: tuple, role: tuple,
                    share: bool = True, bases: list = (), weak=frozenset()) -> TracedSubgraph:
    """Trace `function(*operands)` as a subgraph inside `parent`'s trace (as `role`, see
    SubgraphBuilder); Python numbers it returns become 0-d arrays. With `share`, operands that
    share memory share it inside too (share_operand_memory): true for a branch, which runs
    once, not for a loop body, whose next iteration may have rebound one of them. `bases`:
    arrays the operands view, inputs of the subgraph after the operands' leaves, which the
    code reads by name (control_stale.bases_inside); their leaves come last in `inner`. An
    operand is weak inside (weak_scalars.py) where it is outside, or its leaf's position is in
    `weak` (a loop's Python numbers, NumPy scalars outside it)."""
    builder = SubgraphBuilder(parent, role)
    with _recording_into(builder):
        outer_leaves = [leaf for _, leaf in leaves_with_paths(operands)]
        inner_leaves = [builder.new_input(_input_aval(leaf, parent)) for leaf in outer_leaves]
        for position, (outer, inner) in enumerate(zip(outer_leaves, inner_leaves)):
            inherit_weak(inner, outer, position in weak, either=share)  # (no loop body's)
            inherit_zero_d_kind(outer, inner)
        base_inputs = [builder.new_input(base.aval) for base in bases]
        with bases_inside(builder, bases, base_inputs):
            outer_leaves, inner_leaves = outer_leaves + list(bases), inner_leaves + list(bases)
            if share:
                inner_leaves = share_operand_memory(outer_leaves, inner_leaves)
                builder.inner_of = {id(outer): inner for outer, inner in zip(outer_leaves,
                                                                              inner_leaves)
                                    if isinstance(outer, Tracer)}
            note_operands(builder, outer_leaves, inner_leaves)
            operand_vars = list(builder.inputs)
            builder.stale_reads.enter(outer_leaves, inner_leaves)
            leaves = iter(inner_leaves)
            inner = map_arrays(operands, lambda leaf: next(leaves))
            inherit_arguments(builder, operands, inner)
            entry_vars = [leaf.graph_var if isinstance(leaf, Tracer) else None
                          for leaf in inner_leaves]
            result = _numbers_to_arrays(function(*inner))
            written = [None if entry is None or leaf.graph_var is entry else leaf.graph_var
                       for leaf, entry in zip(inner_leaves, entry_vars)]
            outputs: list = []

            def output_slot(leaf):
                outputs.append(builder.own_var(leaf) if isinstance(leaf, Tracer)
                               else builder.constant(leaf))
                return _Slot(len(outputs) - 1)

            structure = OutputStructure(map_arrays(result, output_slot))
            choices = [(key, builder.own_var(value)) for key, value in
                       branch_choices(result, builder, inner_leaves)] if share else []
    return TracedSubgraph(builder, operand_vars, outputs, result, structure, inner_leaves,
                          written, choices)


def _finish(traced: list, captured: list, first_writes=None) -> list:
    """The optimized subgraphs, each taking its operands, then every value in `captured`
    (a placeholder input for those only another subgraph uses). A loop's condition and body
    with `first_writes` (control_writes.FirstWrites) take its loop values after their own, and
    the body computes them."""
    return [optimize(_as_graph(subgraph, captured, first_writes=first_writes))
            for subgraph in traced]


def _as_graph(subgraph: TracedSubgraph, captured: list, outputs: list | None = None,
              first_writes=None) -> Graph:
    """The subgraph as traced (with `outputs`, by default its own), taking its operands, then
    every value in `captured`; with the loop values of `first_writes` (see _finish)."""
    captures = subgraph.builder.captures
    capture_vars = [captures[tracer.graph_var][1] if tracer.graph_var in captures
                    else Var(tracer.aval) for tracer in captured]
    inputs, equations = subgraph.operand_vars, subgraph.builder.equations
    outputs = subgraph.outputs if outputs is None else outputs
    if first_writes is not None:
        if subgraph.builder.role[2] == "body":
            inputs = [*inputs, *first_writes.inputs]
            equations = [*equations, *first_writes.equations]
            outputs = [*outputs, *first_writes.outputs]
        else:  # the condition reads none of them
            inputs = [*inputs, *(Var(var.aval) for var in first_writes.inputs)]
    return Graph([*inputs, *capture_vars], equations, outputs)


def _union_of_captures(*builders) -> list:
    captured, seen = [], set()
    for builder in builders:
        for var, (tracer, _) in builder.captures.items():
            if var not in seen:
                seen.add(var)
                captured.append(tracer)
    return captured


def _first_tracer(tree):
    found = []
    map_arrays(tree, lambda leaf: found.append(leaf) if isinstance(leaf, Tracer) else None)
    return found[0] if found else None


# --- the public operations ----------------------------------------------------------------------

def cond(predicate, true_fn: Callable, false_fn: Callable, *operands):
    """`true_fn(*operands)` if `predicate` else `false_fn(*operands)`.

    A concrete predicate picks a branch now. A traced one records a `cond` op holding both
    branches, traced over `operands` (pytrees of arrays); they must return the same structure
    of arrays with the same shapes and dtypes.
    """
    if not isinstance(predicate, Tracer):
        return true_fn(*operands) if predicate else false_fn(*operands)
    if predicate.shape != ():
        raise ControlFlowError(
            f"autotrace.cond: the predicate must be a scalar, but it is {predicate.aval}; "
            f"reduce it first, e.g. np.all(predicate) or np.any(predicate)")
    return traced_cond(predicate, true_fn, false_fn, operands, _check_branches)


def traced_cond(predicate: Tracer, true_fn, false_fn, operands: tuple, check: Callable):
    """Record a `cond` op on the traced scalar `predicate`; `check(true_branch,
    false_branch)` (TracedSubgraphs) raises when the branches do not fit together."""
    parent = current_builder(predicate)
    token = object()
    # the arrays the operands view, which the branches may read by name after writing
    # through an operand (control_stale.py): operands too, after the others
    bases = outside_bases(parent, [leaf for _, leaf in leaves_with_paths(operands)])
    true_branch = _trace_subgraph(parent, true_fn, operands, ("cond", token, True),
                                  bases=bases)
    false_branch = _trace_subgraph(parent, false_fn, operands, ("cond", token, False),
                                   bases=bases)
    operands = (*operands, *bases)
    check(true_branch, false_branch)
    changed = changed_in_place(parent, operands, [true_branch, false_branch])
    branches = (true_branch, false_branch)
    for branch in branches:  # what views among the results were chosen by in each branch
        for owner in branches:
            branch.outputs.extend(var if owner is branch else branch.builder.constant(np.False_)
                                  for _, var in owner.choices)
    for branch in branches:  # the changed operands' memory at the end
        branch.outputs.extend(branch.written[index] or branch.operand_vars[index]
                              for index in changed)
    captured = _union_of_captures(true_branch.builder, false_branch.builder)
    true_graph, false_graph = _finish([true_branch, false_branch], captured)
    leaves = [leaf for _, leaf in leaves_with_paths(operands)]
    results = parent.record(primitives["cond"], [predicate, *leaves, *captured],
                            {"branches": Branches(true_graph, false_graph)})
    results = results if isinstance(results, tuple) else (results,)
    exported = len(true_branch.choices) + len(false_branch.choices)
    count = len(results) - len(changed) - exported
    values = true_branch.structure.unflatten(results[:count])
    choices = iter(results[count:count + exported])
    exported = [{id(key): next(choices) for key, _ in branch.choices} for branch in branches]
    if changed:
        positions = [true if true == false else None for true, false in zip(
            positions_of_operands(true_branch, changed),
            positions_of_operands(false_branch, changed))]
        values = write_back(operands, changed, results[len(results) - len(changed):], values,
                            positions)
    return carry_branch_aliases(values, predicate, branches, operands, exported)


def _check_branches(true_branch: TracedSubgraph, false_branch: TracedSubgraph) -> None:
    true_result, false_result = true_branch.result, false_branch.result
    if not _same_structure(true_branch.structure.template, false_branch.structure.template):
        raise ControlFlowError(
            f"autotrace.cond: true_fn and false_fn must return the same structure, but "
            f"true_fn returned {_describe(true_result)} and false_fn returned "
            f"{_describe(false_result)}")
    for (path, true_leaf), (_, false_leaf) in zip(leaves_with_paths(true_result),
                                                  leaves_with_paths(false_result)):
        if not same_type(_aval(true_leaf), _aval(false_leaf)):
            raise ControlFlowError(
                f"autotrace.cond: true_fn and false_fn must return arrays of the same shape "
                f"and dtype, but output{path} is {_aval(true_leaf)} in true_fn and "
                f"{_aval(false_leaf)} in false_fn")


def while_loop(cond_fn: Callable, body_fn: Callable, init_vals):
    """`vals = init_vals; while cond_fn(vals): vals = body_fn(vals)`; returns `vals`.

    On concrete values it is that Python loop. Once a loop value or the condition is traced,
    it records one `while` op: `cond_fn` and `body_fn` traced over the loop values, where
    `body_fn` must return them with the same structure, shapes and dtypes.
    """
    values = init_vals
    while True:
        tracer = _first_tracer(values)
        if tracer is not None:
            return traced_while(current_builder(tracer), cond_fn, body_fn, values)
        keep_going = cond_fn(values)
        if isinstance(keep_going, Tracer):
            return traced_while(current_builder(keep_going), cond_fn, body_fn, values)
        if not keep_going:
            return values
        values = body_fn(values)


def traced_while(parent: GraphBuilder, cond_fn, body_fn, init_vals,
                 check: Callable | None = None, weak=frozenset()):
    """Record a `while` op in `parent`'s trace; `check(init_vals, result)` (the loop values
    before and after one traced iteration) raises when the body changes them. `weak`: the
    positions in `init_vals` of Python numbers the loop carries as such (weak_scalars.make_weak),
    in the body and after the loop."""
    init_vals = _numbers_to_arrays(init_vals)
    token = object()
    weak_leaves = frozenset(sum(len(leaves_with_paths(value)) for value in init_vals[:position])
                            for position in weak)
    condition = _trace_subgraph(parent, cond_fn, (init_vals,), ("loop", token, "test"),
                                share=False, weak=weak_leaves)
    predicate = condition.result
    if not is_array(predicate) or _aval(predicate).shape != ():
        what = _describe(predicate) if is_array(predicate) else type(predicate).__name__
        raise ControlFlowError(
            f"autotrace.while_loop: cond_fn must return a scalar (a bool array of shape ()), "
            f"but it returned {what}")
    body = _trace_subgraph(parent, body_fn, (init_vals,), ("loop", token, "body"),
                           share=False, weak=weak_leaves)
    (check or _check_body)(init_vals, body.result)
    check_loop(condition.builder.stale_reads, body.builder.stale_reads)
    first_writes = first_iteration_writes(parent, init_vals, body, parent.device())
    captured = _union_of_captures(condition.builder, body.builder)
    cond_graph, body_graph = _finish([condition, body], captured, first_writes)
    leaves = [leaf for _, leaf in leaves_with_paths(init_vals)]
    before = [Tracer(leaf._builder, leaf.graph_var) if isinstance(leaf, Tracer) else leaf
              for leaf in leaves]
    added = first_writes.initial if first_writes is not None else []
    results = parent.record(primitives["while"], [*leaves, *added, *captured],
                            {"loop": Loop(cond_graph, body_graph)})
    count = len(body.outputs)
    write_first_iteration(init_vals, first_writes, results[count:])
    if first_writes is not None:
        def ran_none():  # the loop carries whether an iteration ran
            return np.logical_not(results[-1])
    elif not _subgraphs_have_effects({"loop": Loop(cond_graph, cond_graph)}):
        test_graph = _as_graph(condition, captured)

        def ran_none():  # the loop's condition on the values before it is false
            return np.logical_not(inline_graph(parent, test_graph, [*before, *captured])[0])
    else:
        ran_none = None
    values = loop_write_back(parent, init_vals, body, body.structure.unflatten(results[:count]))
    values = carry_loop_aliases(values, init_vals, body, ran_none)
    return type(values)(make_weak(value) if position in weak else value
                        for position, value in enumerate(values)) if weak else values


def _check_body(init_vals, result) -> None:
    before = OutputStructure(map_arrays(init_vals, lambda leaf: _Slot(0))).template
    after = OutputStructure(map_arrays(result, lambda leaf: _Slot(0))).template
    if not _same_structure(before, after):
        raise ControlFlowError(
            f"autotrace.while_loop: body_fn must return the loop values in the structure it "
            f"takes them, but it takes {_describe(init_vals)} and returns {_describe(result)}")
    for (path, old), (_, new) in zip(leaves_with_paths(init_vals), leaves_with_paths(result)):
        if not same_type(_aval(old), _aval(new)):
            raise ControlFlowError(
                f"autotrace.while_loop: body_fn must keep the shape and dtype of each loop "
                f"value, but loop value{path} goes in as {_aval(old)} and comes out as "
                f"{_aval(new)}")
