"""Argument and result trees: tuples, lists, dicts, dataclasses and registered pytree types
(runtime/pytrees.py) of arrays (NumPy arrays, NumPy scalars and Tracers), walked in the one
order that signatures and traces share."""
from __future__ import annotations

import copy

import numpy as np

from ..containers import (KEPT_CONTAINERS, instance_fields, is_dataclass_instance,
                          kept_as_they_are, new_dataclass, rebound_items, rebuild)
from ..devices import is_gpu_array
from ..passes.outputs import outputs_sharing
from ..pytrees import registered, sorted_keys
from ..state import owned


def is_array(value) -> bool:
    """Whether a leaf of an argument tree becomes a graph input (NumPy arrays and scalars,
    CuPy arrays, Tracers)."""
    return isinstance(value, (np.ndarray, np.generic)) or \
        getattr(type(value), "_is_traced_array", False) or is_gpu_array(value) or \
        hasattr(type(value), "__array_namespace__")  # an array-API library's


__all__ = ["is_array", "sorted_keys", "map_arrays", "OutputStructure", "leaves_with_paths"]


def map_arrays(tree, function, is_leaf=is_array):
    """`tree` with each array leaf (each leaf for which `is_leaf` holds) replaced by
    `function(leaf)`, called in canonical order: sequences in order, dicts by sorted key (the
    rebuilt dict keeps its own order), a registered type's children as it flattens them."""
    node_type = registered(type(tree))
    if node_type is not None:
        children, aux = node_type.flatten(tree)
        return node_type.unflatten(aux, [map_arrays(child, function, is_leaf)
                                         for child in children])
    if isinstance(tree, (tuple, list)):
        items = [map_arrays(item, function, is_leaf) for item in tree]
        if isinstance(tree, tuple) and hasattr(type(tree), "_fields"):
            return type(tree)(*rebound_items(items, tree))
        return type(tree)(items)
    if isinstance(tree, dict):
        mapped = {key: map_arrays(tree[key], function, is_leaf) for key in sorted_keys(tree)}
        return {key: mapped[key] for key in tree} if type(tree) is dict else \
            rebuild(tree, ((key, mapped[key]) for key in tree))
    if is_dataclass_instance(tree):  # its fields in order, as a namedtuple's
        fields = {name: getattr(tree, name) for name in instance_fields(tree)}
        mapped = {name: map_arrays(value, function, is_leaf) for name, value in fields.items()}
        _refuse_traced_kept(tree)
        if all(mapped[name] is value for name, value in fields.items()):
            return tree  # no array in it: the object itself
        return new_dataclass(type(tree), mapped, like=tree)
    return function(tree) if is_leaf(tree) else tree


def _memory(array):
    """The object that holds `array`'s memory: the array its view is of, or itself."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


class OutputStructure:
    """Where a trace's graph outputs go in the function's result, and its static leaves.
    `reads_argument_memory`: whether the trace asked which array arguments share memory
    (runtime/derivatives/snapshots.py note_memory_read), so that it serves only calls whose
    arrays share memory as those it traced with did."""

    reads_argument_memory = False
    # (position among a call's arrays, NumPy's error): arguments its derivatives write into,
    # refused read-only (runtime/tracing/arguments.py arguments_written).
    arguments_written: tuple = ()
    # (position, error for a 0-d array, for a NumPy scalar): 0-d Spec arguments it changes in
    # place (runtime/tracing/arguments.py zero_d_written).
    zero_d_written: tuple = ()
    # the positions of outputs that stand for 0-d arrays, which a graph may compute as NumPy
    # scalars (`a = np.zeros_like(s); a += 1` is `add`): given as 0-d arrays
    zero_d_arrays: tuple = ()
    # the positions of outputs that are sizes the function returns (tracer_sizes.py): given
    # as Python ints, as NumPy's shapes hold them
    python_ints: tuple = ()
    # for each of `written`, whether the value written may share memory with an argument, a
    # constant, a cell read or another output (runtime/passes/outputs.py outputs_sharing):
    # those `_store` checks; None: all of them
    written_shared: tuple | None = None

    def __init__(self, template, captured: list = (), written: list = (), flagged=()):
        self.template = template  # the result with each graph output replaced by _Slot(i)
        self.single = isinstance(template, _Slot)
        # A result that is one Python value (`return 1.0`) is returned as it is, as _fill would.
        self.constant = not self.single and not isinstance(template, (dict, tuple, list)) \
            and not is_dataclass_instance(template) and registered(type(template)) is None
        self.captured = list(captured)  # state cells read: inputs after the arguments' arrays
        self.written = list(written)  # state cells written: outputs after the result's
        owning = {cell.owns_values for cell in (*self.captured, *self.written)}
        self.slots_alone = True not in owning  # (where no cell owns its value: _store)
        self.slots_too = False in owning
        self.flagged = list(flagged.values() if isinstance(flagged, dict) else flagged)

    def noting_sharing(self, graph) -> tuple:
        """(`graph`, the trace whose outputs end with the values written into cells, and this
        structure), which notes which of those values may share memory (`written_shared`)."""
        if self.written:
            count = len(graph.outputs) - len(self.written)
            self.written_shared = tuple(outputs_sharing(graph)[count:])
        return graph, self

    def run(self, compiled, arrays) -> object:
        """The function's result from running `compiled` (the graph) on the call's `arrays`,
        with the state cells it reads fed in and those it writes stored back."""
        if self.arguments_written or self.zero_d_written:
            self.refuse_arguments(arrays)
        if not self.captured and not self.written:
            return self.unflatten(self._zero_d_arrays(compiled(*arrays)))
        read = [cell._value for cell in self.captured]
        outputs = self._zero_d_arrays(compiled(*arrays, *read))
        if self.written:
            count = len(outputs) - len(self.written)
            self._store(arrays, outputs[:count], read, outputs[count:])
            outputs = outputs[:count]
        return self.unflatten(outputs)

    def _store(self, arrays, result, read, values) -> None:
        """Store the `values` a call writes into its cells. A slot of the user's object takes
        its value as it is, as the assignment in the function's source does. A cell that owns
        its value (a Variable: `owns_values`) takes it as an eager assign's copy, read-only: not
        the memory of an argument, of the result, or of a slot read or written (a graph may
        output its input as it is, `v.assign(x)`), which a write into either would change."""
        if self.slots_alone:
            for cell, value in zip(self.written, values):
                cell._value = value
            return
        if self.written_shared is None:
            pairs = list(zip(self.written, values))
        else:  # those that share no memory are new arrays: owned as they are
            pairs = []
            for cell, value, shared in zip(self.written, values, self.written_shared):
                if shared:
                    pairs.append((cell, value))
                    continue
                if cell.owns_values:
                    if type(value) is np.ndarray:  # (`owned`, on the path most values take)
                        value.setflags(write=False)
                    else:
                        value = owned(value)
                cell._value = value
            if not pairs:
                return
        held = {id(_memory(array)) for array in arrays}
        held.update(id(_memory(array)) for array in result)
        if self.slots_too:
            held.update(id(_memory(value)) for cell, value in (*zip(self.captured, read),
                                                               *pairs)
                        if not cell.owns_values)
        for cell, value in pairs:
            if cell.owns_values:
                memory = id(_memory(value))
                if memory in held and hasattr(value, "copy"):
                    value = value.copy()
                    memory = id(value)
                value = owned(value)
                held.add(memory)
            cell._value = value

    def _zero_d_arrays(self, outputs):
        if not self.zero_d_arrays and not self.python_ints:
            return outputs
        outputs = list(outputs)
        for index in self.zero_d_arrays:
            if isinstance(outputs[index], np.generic):
                outputs[index] = np.asarray(outputs[index])
        for index in self.python_ints:
            outputs[index] = int(outputs[index])
        return outputs

    def refuse_arguments(self, arrays) -> None:
        """Raise where a call passes read-only (NumPy's flags) an array argument that the
        trace's derivatives write into (`arguments_written`): NumPy's write would raise; and
        where it passes a 0-d array, or for `s[...] = v` a NumPy scalar, that the trace
        changes as a 0-d Spec (`zero_d_written`)."""
        for position, error in self.arguments_written:
            array = arrays[position]
            if isinstance(array, np.ndarray) and not array.flags.writeable:
                raise ValueError(error)
        for position, changed, scalar_error in self.zero_d_written:
            error = changed if isinstance(arrays[position], np.ndarray) else \
                scalar_error if isinstance(arrays[position], (np.generic, int, float, complex)) \
                else None
            if error is not None:
                kind = type(arrays[position])
                raise error[0](error[1].replace("<type>", f"{kind.__module__}.{kind.__name__}"
                                                if kind.__module__ == "numpy" else kind.__name__))

    def unflatten(self, outputs: tuple):
        """The function's result, from the compiled graph's flat tuple of outputs."""
        if self.single:
            return self.template.fill(outputs)
        if self.constant:
            return self.template
        return _fill(self.template, outputs)

    def __repr__(self) -> str:
        return f"OutputStructure({self.template!r})"


class _Slot:
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def fill(self, outputs):
        """Its value among a graph's `outputs` (runtime/tracing/tracer_eithers.py EitherSlot)."""
        return outputs[self.index]

    indices = property(lambda self: (self.index,))  # the graph outputs it is made of

    def source(self, outputs: str) -> str:
        """The expression of its value, in code whose graph outputs are the list `outputs`."""
        return f"{outputs}[{self.index}]"

    def __repr__(self) -> str:
        return f"<output {self.index}>"


def _fill(template, outputs):
    if isinstance(template, _Slot):
        return template.fill(outputs)
    node_type = registered(type(template))
    if node_type is not None:
        children, aux = node_type.flatten(template)
        return node_type.unflatten(aux, [_fill(child, outputs) for child in children])
    if isinstance(template, dict):
        return rebuild(template, ((key, _fill(value, outputs)) for key, value in template.items()))
    if isinstance(template, (tuple, list)):
        items = [_fill(item, outputs) for item in template]
        if isinstance(template, tuple) and hasattr(type(template), "_fields"):
            return type(template)(*rebound_items(items, template))
        return type(template)(items)
    if is_dataclass_instance(template):  # what it keeps as it is, a list or dict of its own
        values = {name: _fill(getattr(template, name), outputs)
                  for name in instance_fields(template)}
        made = new_dataclass(type(template), values, like=template)
        for name, held in kept_as_they_are(template).items():
            if isinstance(held, KEPT_CONTAINERS):
                object.__setattr__(made, name, copy.copy(held))
        return made
    return template


def _refuse_traced_kept(instance) -> None:
    """Raise where a dataclass object holds a traced value in a list, dict or tuple beside its
    fields (containers.kept_as_they_are): made again, it would keep that value after the trace
    (a dataclass a traced function makes and returns, `self.hist = [np.sum(self.w)]`)."""
    for name, held in kept_as_they_are(instance).items():
        pending = [held]
        while pending:
            value = pending.pop()
            if getattr(type(value), "_is_traced_array", False):
                raise TypeError(
                    f"an object of class {type(instance).__name__} holds a traced value in "
                    f"its attribute {name!r}, a {type(held).__name__} set beside its fields, "
                    f"which a trace keeps as it is: after the trace it would hold a value that "
                    f"has none. "
                    f"Make it a field of the dataclass, or keep arrays in fields")
            if isinstance(value, dict):
                pending.extend(value.values())
            elif isinstance(value, (*KEPT_CONTAINERS, tuple)):
                pending.extend(value)


def leaves_with_paths(tree, path: str = "") -> list:
    """The array leaves of `tree` with their paths (`[1]`, `['w']`), in map_arrays' order."""
    node_type = registered(type(tree))
    if node_type is not None:
        return [leaf for index, child in enumerate(node_type.flatten(tree)[0])
                for leaf in leaves_with_paths(child, f"{path}[{index}]")]
    if isinstance(tree, (tuple, list)):
        return [leaf for index, item in enumerate(tree)
                for leaf in leaves_with_paths(item, f"{path}[{index}]")]
    if isinstance(tree, dict):
        return [leaf for key in sorted_keys(tree)
                for leaf in leaves_with_paths(tree[key], f"{path}[{key!r}]")]
    if is_dataclass_instance(tree):
        return [leaf for name in instance_fields(tree)
                for leaf in leaves_with_paths(getattr(tree, name), f"{path}.{name}")]
    return [(path, tree)] if is_array(tree) else []
