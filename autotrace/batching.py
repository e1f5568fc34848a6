"""`autotrace.vmap`: a function of one example made a function of a batch, as jax.vmap.

    per_example = autotrace.vmap(autotrace.grad(loss), in_axes=(None, 0, 0))
    per_example(w, X, Y)          # one gradient for each row of X and Y

The function is traced once per signature on one example (the mapped axes taken out), and the
traced graph is batched (runtime/tracing/tracer_batching.py, by each op's batching rule); the
batched graph is compiled and cached, as autotrace.function caches its graphs. Called while
another function is traced (`autotrace.function(vmap(f))`, `vmap(vmap(f))`), the batched
graph is recorded into that trace instead.
"""
from __future__ import annotations

import functools
import inspect
import types
from typing import Callable

import numpy as np

from autotrace.runtime.tracing.tracer_batching import BatchingError, batch_graph
from autotrace.runtime.user_frames import code_site
from autotrace.trace_errors import explain_run_error, located
from autotrace.runtime.execution import executor
from autotrace.runtime.abstract import AbstractArray
from autotrace.runtime.devices import device_of
from autotrace.runtime.graph import Constant, Graph
from autotrace.runtime.tracing.control_aliases import inline_graph
from autotrace.runtime.tracing.arguments import arrays_overlap, memory_shared
from autotrace.runtime.derivatives.snapshots import note_memory_read
from autotrace.transforms.front.shared_items import may_share
from autotrace.runtime.array_subclasses import ArraySubclassError, is_refused_subclass
from autotrace.runtime.tracing.signature import array_call_key, signature_of
from autotrace.runtime.tracing.spec import placeholder
from autotrace.runtime.tracing.type_checks import SCALAR, stands_for
from autotrace.runtime.primitives.registry import is_traced
from autotrace.runtime.pytrees import registered
from autotrace.runtime.tracing.trees import (OutputStructure, _Slot, is_array, map_arrays,
                                             sorted_keys)
from autotrace.runtime.containers import instance_fields, is_dataclass_instance
from autotrace.transforms.analysis.calls import note_own_rule, own_rules_met
from autotrace.traced_function import traced_and_instance


# How many batched traces a vmapped function keeps, as autotrace.function keeps 64.
MAX_TRACES = 64


class _Entry:
    """The batched trace of one signature: its graphs, which outputs are batched, their
    out_axes, the function's output structure, the compiled graph once it has run, and the
    functions whose gradient the user wrote that its trace called (see own_rules_met)."""

    def __init__(self, graph, batched_graph, outputs_batched, out_axes, structure,
                 own_rules: list):
        self.graph = graph
        self.batched_graph = batched_graph
        self.outputs_batched = outputs_batched
        self.out_axes = out_axes
        self.structure = structure
        self.compiled = None
        self.own_rules = own_rules


class Vmapped:
    """A function mapped over a batch axis of its arguments (made by `autotrace.vmap`, whose
    docstring says what the arguments do).

    Attributes:
        trace_count: how many batched traces it keeps (one per signature, at most
            MAX_TRACES, the oldest dropped first).
    """

    def __init__(self, function: Callable, in_axes=0, out_axes=0, axis_size=None):
        if not callable(function):
            raise TypeError(f"autotrace.vmap expects a function, got {type(function).__name__}")
        _check_axes_spec(in_axes, "in_axes")
        _check_axes_spec(out_axes, "out_axes")
        if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 1):
            raise ValueError(f"autotrace.vmap: axis_size must be a positive int or None, "
                             f"not {axis_size!r}")
        self.function = function
        self.in_axes, self.out_axes, self.axis_size = in_axes, out_axes, axis_size
        self._traced, self._bound = traced_and_instance(function, "autotrace.vmap")
        self._parameter_names = _parameter_names(function)
        self._entries: dict = {}
        # Calls of NumPy arrays alone, by position, by their shapes and dtypes: what `_entry`
        # found for them (the entry, the mapped axes, the batch size), without walking them.
        self._array_calls: dict = {}
        # Its name and docstring, not its attributes (those of an inner vmap would replace
        # this one's), nor `__wrapped__`: its signature is not this function's, and what
        # differentiates a function must not reach past vmap to the unbatched one.
        functools.update_wrapper(self, function, updated=())
        del self.__wrapped__
        if not hasattr(self, "__name__"):  # a functools.partial, a callable object
            self.__name__ = type(function).__name__

    # A call of it in a function autotrace differentiates is derived from its batched trace
    # (transforms/traced_calls.py, autotrace/from_trace.py): the derivative of the batch.
    __autotrace_traced_call__ = True

    @property
    def __autotrace_traced_key__(self) -> tuple:
        """(the function, its axes): the vmaps whose derivatives are the same."""
        return self.function, (repr(self.in_axes), repr(self.out_axes), self.axis_size)

    @property
    def trace_count(self) -> int:
        return len(self._entries)

    def __call__(self, *args, **kwargs):
        array_call = None if kwargs else array_call_key(args, self._traced._memory_keyed)
        if array_call is not None and len(array_call) > 2 * len(args):
            array_call = None  # arrays that share memory: keyed by their examples' (_entry)
        found = self._array_calls.get(array_call) if array_call is not None else None
        if found is not None:
            entry, axes, size = found
            leaves = args
        else:
            entry, leaves, axes, size = self._entry(args, kwargs)
            if array_call is not None:
                self._array_calls[array_call] = (entry, axes, size)
        entry.structure.refuse_arguments(leaves)
        met = own_rules_met.get()
        if met is not None:  # (a derivative built from a trace of this call asks)
            met.extend(entry.own_rules)
        for position, _ in entry.structure.arguments_written:  # called while tracing: the
            if is_traced(leaves[position]):  # enclosing trace notes the write (or refuses it)
                leaves[position]._refuse_read_only()
        captured = [cell.read() for cell in entry.structure.captured]
        inputs = [leaf if not axis else _moved(leaf, axis, 0)  # None, or 0: as it is
                  for leaf, axis in zip(leaves, axes)] + captured
        builder = next((value._builder for value in inputs if is_traced(value)), None)
        if builder is not None:  # called while tracing: record the batched graph there
            outputs = inline_graph(builder, entry.batched_graph, inputs, once=True)
        else:
            try:
                outputs = self._compiled(entry).run(*inputs)
            except IndexError as error:  # an example's index out of range: the user's line
                explain_run_error(error, batched=True)
                raise
            # A batch is a new array, as np.stack of the examples' results is, even where an
            # example's result is its argument: never a view of the caller's arrays.
            outputs = [value.copy() if any(np.may_share_memory(value, leaf) for leaf in leaves)
                       else value for value in outputs]
        outputs = [_to_out_axis(value, batched, axis, size, self.__name__)
                   for value, batched, axis in zip(outputs, entry.outputs_batched,
                                                   entry.out_axes)]
        return entry.structure.unflatten(tuple(outputs))

    # --- what users look at ------------------------------------------------------------------

    def graph(self, *args, optimized: bool = True, batched: bool = True, **kwargs) -> Graph:
        """The batched graph a call with these arguments runs (traced now if there is none).

        Arguments:
            args, kwargs: arguments as for a call (only their signature matters).
            optimized: False for the batched graph as the batching rules wrote it, before
                the passes.
            batched: False for the graph of one example, as traced.
        Examples:
            >>> print(autotrace.vmap(np.sum).graph(np.ones((4, 3)), optimized=False))
            { lambda a:f64[4,3] ;
              b:f64[4] = reduce_sum[axis=(1,)] a
              in (b) }
        """
        entry = self._entry(args, kwargs)[0]
        if not batched:
            return entry.graph
        if not optimized:
            return entry.batched_graph
        return self._compiled(entry).graph

    def source(self, *args, **kwargs) -> str:
        """The Python source that runs the batch for these arguments' signature."""
        return self._compiled(self._entry(args, kwargs)[0]).source

    def sources(self) -> list[str]:
        """The sources of the batched graphs traced so far (autotrace.source shows them)."""
        return [self._compiled(entry).source for entry in self._entries.values()]

    __autotrace_batched_sources__ = sources

    def __get__(self, instance, owner=None):
        """`@autotrace.vmap` on a method: read from an instance, it takes the instance first
        (an object, the same for every example; a tuple in_axes has an entry for it)."""
        return self if instance is None else types.MethodType(self, instance)

    def __repr__(self) -> str:
        return f"<autotrace.vmap of {getattr(self.function, '__qualname__', self.__name__)}>"

    # --- tracing -----------------------------------------------------------------------------

    def _compiled(self, entry: _Entry):
        if entry.compiled is None:
            entry.compiled = executor.compile(entry.batched_graph,
                                              name=f"vmap_{_label(self.function)}")
        return entry.compiled

    def _entry(self, args: tuple, kwargs: dict):
        """The batched trace for a call, the call's array leaves and their mapped axes."""
        try:
            leaves, axes, paths, slots = _mapped_leaves(args, kwargs, self.in_axes,
                                                        self._parameter_names)
            for leaf in leaves:  # np.matrix, a masked array: operations of their own
                if is_refused_subclass(leaf):
                    raise ArraySubclassError(leaf).named(args, kwargs, self._parameter_names)
            size = self._size(leaves, axes, paths)
            keyed = self._traced._memory_keyed  # (autotrace/traced_function.py)
            shared = _examples_sharing(leaves, axes, size) if keyed else ()
            tokens = _groups(shared)
            zeros: dict = {}  # one element for the examples of leaves that share memory
            examples = iter([_example(leaf, axis, path, zeros, tokens.get(index))
                             for index, (leaf, axis, path) in enumerate(zip(leaves, axes, paths))])
        except ValueError as error:  # arguments that in_axes does not fit: name the call
            site = code_site()
            raise ValueError(f"{error}{'' if site is None else located(*site)}") from None
        example_args, example_kwargs = map_arrays((args, kwargs), lambda leaf: next(examples))
        key = (signature_of(example_args, example_kwargs), tuple(axis is not None for axis in axes),
               size, shared)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._trace(example_args, example_kwargs, axes, slots, size)
            if len(self._entries) >= MAX_TRACES:  # the oldest goes first
                del self._entries[next(iter(self._entries))]
                self._array_calls.clear()
            self._entries[key] = entry
            if not keyed and self._traced._memory_keyed:
                # The trace asked which arrays share memory: key this call by it too.
                self._array_calls.clear()
                return self._entry(args, kwargs)
        return entry, leaves, axes, size

    def _trace(self, args, kwargs, axes, slots, size) -> _Entry:
        met: list = []  # (see _Entry.own_rules)
        token = own_rules_met.set(met)
        try:
            note_own_rule(self.function)  # (a custom_vjp mapped itself)
            graph, structure = self._traced.traced_graph(  # (its key holds no identities)
                (*self._bound, *args), kwargs, state_known=False, identities=False)
        finally:
            own_rules_met.reset(token)
        if structure.written:
            graph = _without_unchanged_arguments(graph, structure, slots, self.__name__)
        graph, structure = _numbers_as_outputs(graph, structure)
        flags = tuple(axis is not None for axis in axes) + (False,) * len(structure.captured)
        try:
            batched_graph, outputs_batched = batch_graph(graph, flags, size)
        except BatchingError as error:
            place = "" if error.site is None else located(*error.site)
            raise BatchingError(f"autotrace.vmap({self.__name__}) {error}{place}",
                                error.site) from None
        out_axes = _output_axes(structure.template, self.out_axes, len(graph.outputs))
        return _Entry(graph, batched_graph, outputs_batched, out_axes, structure, met)

    def _size(self, leaves, axes, paths) -> int:
        """The batch size: the length of every mapped axis, or axis_size."""
        sizes = [(np.shape(leaf)[axis], path) for leaf, axis, path in zip(leaves, axes, paths)
                 if axis is not None]
        if self.axis_size is not None:
            sizes.insert(0, (self.axis_size, "axis_size"))
        if not sizes:
            raise ValueError(
                f"autotrace.vmap({self.__name__}): no argument is mapped (in_axes is None for "
                "every array), so the batch size is unknown; map an argument or give axis_size")
        size, first = sizes[0]
        for other, path in sizes[1:]:
            if other != size:
                raise ValueError(
                    f"autotrace.vmap({self.__name__}) got mapped axes of different sizes: "
                    f"{first} has size {size}, {path} has size {other}; every mapped axis "
                    "must have the batch size")
        return size


def vmap(function: Callable, in_axes=0, out_axes=0, axis_size: int | None = None) -> Vmapped:
    """`function` mapped over an axis of its arguments: one call computes it for a batch of
    examples, as stacking its results for each example would (JAX's vmap).

    Arguments:
        function: a function of NumPy arrays (also one made by grad, jvp, vjp, forward,
            autotrace.function or vmap).
        in_axes: the axis of each argument to map over: an int (a negative one counts from
            the end) or None (the same value for every example), for all arguments; or a
            tuple or list with one entry per positional argument, each an int, None, or a
            tuple, list or dict matching the argument's own structure. Keyword arguments are
            mapped over their axis 0. Python numbers, strings and other objects that are no
            arrays are the same for every example, whatever in_axes says for them.
        out_axes: where the batch axis goes in each output: an int, None for an output that is
            the same for every example, or a tree matching the function's result.
        axis_size: the batch size, needed where no argument is mapped.

    Returns:
        a `Vmapped` function: call it like `function`; `graph(*args)` and `source(*args)`
        show the batched graph and the code that runs it.

    Examples:
        >>> def loss(w, x, y):
        ...     return (x @ w - y) ** 2
        >>> per_example = autotrace.vmap(autotrace.grad(loss), in_axes=(None, 0, 0))
        >>> X, Y = np.ones((4, 3)), np.arange(4.0)
        >>> per_example(np.ones(3), X, Y)   # one gradient of w for each row of X (and of Y)
        array([[6., 6., 6.],
               [4., 4., 4.],
               [2., 2., 2.],
               [0., 0., 0.]])
    """
    return Vmapped(function, in_axes, out_axes, axis_size)


# --- in_axes and out_axes -----------------------------------------------------------------------

def _without_unchanged_arguments(graph: Graph, structure, slots: list, name: str) -> Graph:
    """The trace without the writes of the state of objects it was passed that it left as
    they were (a dataclass argument's fields: the trace finds them written with the values
    they held); any other write is refused: one value cannot stand for every example's."""
    count = len(graph.outputs) - len(structure.written)
    inputs = dict(zip(slots, graph.inputs))
    changed = [cell.name for cell, value in zip(structure.written, graph.outputs[count:])
               if inputs.get(cell.name) is not value]
    if changed:
        raise NotImplementedError(
            f"autotrace.vmap({name}) writes the state of objects or autotrace.Variables "
            f"({', '.join(changed)}), one value for all examples; return the new values "
            "instead and update them outside vmap")
    structure.written = []
    return Graph(graph.inputs, graph.equations, graph.outputs[:count])


def _numbers_as_outputs(graph: Graph, structure):
    """The trace with the Python numbers of the result (a gradient that is 0.0 for every
    example) made outputs of the graph, constants: out_axes then repeats them along the batch
    axis, as np.stack of the examples' results (and jax.vmap) does."""
    numbers = []

    def output(number):
        numbers.append(Constant(np.asarray(number)))
        return _Slot(len(graph.outputs) + len(numbers) - 1)
    template = map_arrays(structure.template, output,
                          is_leaf=lambda leaf: type(leaf) in (bool, int, float, complex))
    if not numbers:
        return graph, structure
    return (Graph(graph.inputs, graph.equations, [*graph.outputs, *numbers]),
            OutputStructure(template, structure.captured, structure.written, structure.flagged))


def _check_axes_spec(spec, name: str) -> None:
    if spec is None or (isinstance(spec, int) and not isinstance(spec, bool)):
        return
    if isinstance(spec, (tuple, list)):
        for item in spec:
            _check_axes_spec(item, name)
        return
    if isinstance(spec, dict):
        for item in spec.values():
            _check_axes_spec(item, name)
        return
    raise TypeError(f"autotrace.vmap: {name} must be an int, None, or a tuple, list or dict of "
                    f"them, not {type(spec).__name__} {spec!r}")


def _mapped_leaves(args: tuple, kwargs: dict, in_axes, parameters: tuple):
    """The array leaves of a call in the order they become graph inputs, the axis in_axes
    maps each over (None where it is not mapped), and a name of each for messages."""
    if isinstance(in_axes, (tuple, list)):
        if len(in_axes) != len(args):
            raise ValueError(
                f"autotrace.vmap: in_axes has {len(in_axes)} entries but the call has "
                f"{len(args)} positional arguments; give one axis (or None) per positional "
                f"argument, or one int for all")
        per_argument = list(in_axes)
    elif isinstance(in_axes, dict):
        raise ValueError("autotrace.vmap: in_axes is a dict, but it is matched against the "
                         "tuple of positional arguments; wrap it: in_axes=(the dict,)")
    else:
        per_argument = [in_axes] * len(args)
    found: list = []
    for position, (arg, spec) in enumerate(zip(args, per_argument)):
        name = parameters[position] if position < len(parameters) else f"argument {position}"
        _walk(arg, spec, f"argument {name!r}", name, found)
    for key in sorted_keys(kwargs):
        _walk(kwargs[key], 0, f"argument {key!r}", key, found)
    leaves, axes, paths, slots = (list(column) for column in zip(*found)) if found \
        else ([], [], [], [])
    return leaves, axes, paths, slots


def _walk(tree, spec, path: str, slot: str, found: list) -> None:
    """Append (leaf, axis, path, slot) for each array leaf of `tree`, in map_arrays' order,
    `spec` being the in_axes entry for `tree` (a prefix of its structure); `path` names the
    leaf in messages, `slot` as the state of objects names it (`p.w`, `p.b[0]`)."""
    node_type = registered(type(tree))
    if node_type is not None:  # a registered pytree: its children, each mapped by `spec`
        if not (spec is None or isinstance(spec, int)):
            raise ValueError(f"autotrace.vmap: in_axes for {path} (a registered "
                             f"{type(tree).__name__}) must be an int or None, not {spec!r}")
        children, _ = node_type.flatten(tree)
        for index, child in enumerate(children):
            _walk(child, spec, f"{path}<{index}>", f"{slot}<{index}>", found)
        return
    if isinstance(spec, (tuple, list)) or isinstance(spec, dict):
        _check_matches(tree, spec, path)
    if isinstance(tree, (tuple, list)):
        for index, item in enumerate(tree):
            _walk(item, spec[index] if isinstance(spec, (tuple, list)) else spec,
                  f"{path}[{index}]", f"{slot}[{index}]", found)
    elif isinstance(tree, dict):
        for key in sorted_keys(tree):
            _walk(tree[key], spec[key] if isinstance(spec, dict) else spec,
                  f"{path}[{key!r}]", f"{slot}[{key!r}]", found)
    elif is_dataclass_instance(tree):
        for name in instance_fields(tree):
            _walk(getattr(tree, name), spec, f"{path}.{name}", f"{slot}.{name}", found)
    elif is_array(tree):
        found.append((tree, _axis(tree, spec, path), path, slot))


def _check_matches(tree, spec, path: str) -> None:
    if isinstance(spec, dict):
        if not isinstance(tree, dict) or set(tree) != set(spec):
            got = f"a dict with keys {sorted_keys(tree)}" if isinstance(tree, dict) \
                else "an array" if is_array(tree) else f"a {type(tree).__name__}"
            raise ValueError(f"autotrace.vmap: in_axes gives a dict with keys "
                             f"{sorted_keys(spec)} for {path}, which is {got}; give an int, "
                             f"None, or a dict with the same keys")
        return
    if not isinstance(tree, (tuple, list)) or len(tree) != len(spec):
        got = f"a {type(tree).__name__} of {len(tree)}" if isinstance(tree, (tuple, list)) \
            else "an array" if is_array(tree) else f"a {type(tree).__name__}"
        raise ValueError(f"autotrace.vmap: in_axes gives a {type(spec).__name__} of {len(spec)} "
                         f"for {path}, which is {got}; give an int, None, or a tuple or list "
                         f"of the same length")


def _axis(leaf, spec, path: str):
    if spec is None:
        return None
    ndim = np.ndim(leaf)
    if not -ndim <= spec < ndim:
        raise ValueError(f"autotrace.vmap: in_axes maps {path} over axis {spec}, but it has "
                         f"{ndim} axes (shape {tuple(np.shape(leaf))}); map an axis it has, or "
                         f"give None")
    axis = spec % ndim
    if np.shape(leaf)[axis] is None:
        raise ValueError(f"autotrace.vmap: {path} is mapped over axis {spec}, of unknown size")
    return axis


def _examples_sharing(leaves: list, axes: list, size: int) -> tuple:
    """The pairs (i, j) of the call's array leaves whose examples share memory: example k of
    one (the leaf itself where it is not mapped) and example k of the other, for some k; of
    traced leaves (a vmap inside a trace), those that view one array, or arguments the caller
    passed sharing memory (transforms/front/shared_items.py may_share)."""
    def example(index, k):
        leaf, axis = leaves[index], axes[index]
        return leaf if axis is None else leaf[(slice(None),) * axis + (k,)]
    traced = [index for index, leaf in enumerate(leaves) if is_traced(leaf)]
    for index in traced:  # the enclosing trace asks which of its arrays share memory
        note_memory_read(leaves[index])
    return tuple(sorted(
        [(i, j) for i, j in memory_shared(leaves)
         if any(arrays_overlap(example(i, k), example(j, k)) for k in range(size))]
        + [(i, j) for place, i in enumerate(traced) for j in traced[place + 1:]
           if may_share(leaves[i], leaves[j])]))


def _groups(pairs: tuple) -> dict:
    """For each leaf in `pairs`, its group: leaves joined by a pair, directly or through
    others, are one (the examples of one group share one element, _example)."""
    groups: dict = {}
    for first, second in pairs:
        joined = {groups[index] for index in (first, second) if index in groups}
        group = min(joined) if joined else first
        for index in [index for index, held in groups.items() if held in joined]:
            groups[index] = group
        groups[first] = groups[second] = group
    return groups


def _example(leaf, axis, path: str, zeros: dict, token=None):
    """A stand-in for one example of `leaf` (its mapped axis taken out): zeros of its dtype
    that cost no memory, or, for an array on a GPU, a placeholder there. Unmapped NumPy
    scalars stay as they are (they trace as scalars); so is the example of a mapped 1-d array
    (NumPy's item of one is a scalar) and of a traced number. Leaves whose examples share
    memory (one `token`, _groups) have examples that share it too, one element of `zeros` for
    each token and dtype, so that the trace follows their sharing."""
    shape = tuple(np.shape(leaf))
    if axis is None and isinstance(leaf, np.generic):
        return leaf
    if None in shape:
        raise ValueError(f"autotrace.vmap: {path} has a dimension of unknown size {shape}; "
                         "vmap traces with known sizes")
    shape = shape if axis is None else shape[:axis] + shape[axis + 1:]
    device = leaf.device if is_traced(leaf) else device_of(leaf)
    if device != "cpu":
        return placeholder(AbstractArray(shape, leaf.dtype, device))
    if not shape and (axis is not None or is_traced(leaf) and (
            leaf._weak or stands_for(leaf) == SCALAR)):
        return leaf.dtype.type(0)  # NumPy's item of a 1-d array: a scalar, sharing nothing
    zero = np.zeros((), leaf.dtype) if token is None else \
        zeros.setdefault((token, leaf.dtype), np.zeros((), leaf.dtype))
    return zero if not shape and token is None else np.broadcast_to(zero, shape)


def _output_axes(template, out_axes, count: int) -> list:
    """The out_axes entry for each graph output (after the result's, the Variables written)."""
    axes = [None] * count

    def walk(tree, spec, path):
        if isinstance(spec, (tuple, list, dict)) and not isinstance(tree, type(spec)) and not (
                isinstance(spec, (tuple, list)) and isinstance(tree, (tuple, list))):
            raise ValueError(f"autotrace.vmap: out_axes gives a {type(spec).__name__} for the "
                             f"result{path}, which is a {type(tree).__name__}")
        node_type = registered(type(tree))
        if isinstance(tree, _Slot):  # (a returned either-value's flag too: its `indices`)
            for index in tree.indices:
                axes[index] = spec
        elif node_type is not None:  # a registered pytree: each child by `spec`
            for index, child in enumerate(node_type.flatten(tree)[0]):
                walk(child, spec, f"{path}<{index}>")
        elif isinstance(tree, (tuple, list)):
            if isinstance(spec, (tuple, list)) and len(spec) != len(tree):
                raise ValueError(f"autotrace.vmap: out_axes has {len(spec)} entries for the "
                                 f"result{path}, which has {len(tree)}")
            for index, item in enumerate(tree):
                walk(item, spec[index] if isinstance(spec, (tuple, list)) else spec,
                     f"{path}[{index}]")
        elif isinstance(tree, dict):
            for key, item in tree.items():
                walk(item, spec[key] if isinstance(spec, dict) else spec, f"{path}[{key!r}]")
        elif is_dataclass_instance(tree):
            for name in instance_fields(tree):
                walk(getattr(tree, name), spec, f"{path}.{name}")
    walk(template, out_axes, "")
    return axes


def _to_out_axis(value, batched: bool, axis, size: int, name: str):
    """A graph output, batched along axis 0 or the same for every example, as out_axes asks."""
    if axis is None:
        if batched:
            raise ValueError(f"autotrace.vmap({name}): out_axes is None for an output that "
                             "differs between examples; give it an axis")
        return value
    if not batched:  # the same for every example: repeated along the batch axis
        value = np.broadcast_to(value, (size, *np.shape(value)))
        if not is_traced(value):
            value = value.copy()
    ndim = np.ndim(value)
    if not -ndim <= axis < ndim:
        raise ValueError(f"autotrace.vmap({name}): out_axes {axis} is out of range for an "
                         f"output with {ndim} axes (the batch axis included)")
    return value if axis % ndim == 0 else _moved(value, 0, axis)


def _moved(value, source: int, destination: int):
    return np.moveaxis(value, source, destination)


def _label(function) -> str:
    return "".join(c if c.isalnum() else "_" for c in getattr(function, "__name__", "f"))


def _parameter_names(function) -> tuple:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in parameters
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
