"""Arrays in the state of objects, kept as state of a traced graph as Variables are.

    class BatchNorm:
        def forward(self, X):
            mean = X.mean(axis=0)
            self.running_mean = 0.9 * self.running_mean + 0.1 * mean
            ...
    step = autotrace.function(lambda X: layer.forward(X))

A traced function that writes a traced value into the state of an object that outlives the
call (an attribute, an item of a dict or list an object holds, a global, a closure variable:
runtime/object_walk.py finds them) gets a graph that writes it back after every call, as it
does for an autotrace.Variable it assigns; and a graph that reads the slot at the start of
each call, fed from what it holds then. Decisions:

- Which slots are state is learnt by tracing: after a trace, the reachable slots that hold
  the trace's values are written ones (`ObjectSlots.traced`). Reads before the write are
  concrete while the slot is not yet known (`0.9 * layer.running_mean` is computed by NumPy
  at once, and baked in), so a trace that found a new written slot serves one call: the
  next one traces again, with every known slot that holds an array made a graph input
  beforehand (its value on each call is fed from the slot). Each trace is then exactly one
  call's run of the Python function, whose other side effects it keeps (a layer built on
  the first call is built once).
- Before each run, `GraphState.problem` checks that every slot read still holds an array
  of the shape, dtype and device traced (and every written slot can still be reached):
  where not, the function traces again rather than give a wrong result.
- After the trace, the slots hold what they held before it (or lose what it added), so no
  traced value outlives the trace; the run then writes the graph's values into them. Only
  slots made inside the trace's own new containers (a dict a lazily built layer makes) hold
  their traced values until that run.
- Python values in the state (a counter `self.n_calls += 1`) cannot be replayed by a graph:
  they change while tracing only, as tf.function's guide says of Python side effects. A
  number that changes while tracing is warned of once per line (PythonStateWarning), naming
  the user's line and saying to use an autotrace.Variable; a Python value (a number, a
  string, a tuple, an attribute set on one path only) that a traced `if` leaves different on
  its two paths, or a traced loop's body changes, is refused at the statement
  (runtime/branch_writes.py). A traced value appended to a list that existed before the
  call, or kept in a tuple, or written inside a traced `if` or loop, is refused
  (ObjectStateError), naming the line.
"""
from __future__ import annotations

import inspect
import os
import types
import warnings
import weakref

import numpy as np

from .abstract import abstractify
from .containers import instance_fields, is_dataclass_instance, is_namedtuple, kept_as_they_are
from .devices import is_gpu_array
from .pytrees import registered
from .object_walk import NUMBERS, Root, container_of, follow, load, place_of_write, store, walk
from .state import StateCell, StateError, ThreadStack, current_scope


class ObjectStateError(StateError):
    """A traced value written into an object's state where a graph cannot keep it."""


class PythonStateWarning(UserWarning):
    """A Python value in an object's state changed while a function was traced: the traced
    graph does not change it on later calls.

    Examples:
        >>> import warnings
        >>> class Counter:
        ...     def __init__(self):
        ...         self.calls = 0
        ...     def __call__(self, x):
        ...         self.calls += 1
        ...         return 2 * x
        >>> counter = Counter()
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     _ = autotrace.function(counter)(np.ones(2))
        >>> print(caught[0].message)   # doctest: +ELLIPSIS
        self.calls changed from 0 to 1 while Counter was traced: ...
    """


_traces = ThreadStack()  # the traces by autotrace.function in progress in this thread


class SlotCell(StateCell):
    """A slot of an object's state as a state cell of one trace: read and written on each
    call by following its path from its root again. Its arrays are the user's, as they are."""

    owns_values = False

    def __init__(self, root: Root, steps: tuple, label: str):
        self._find, self._steps, self.name = root.find, steps, label
        self.aval = None  # what the graph takes it as, where it reads it

    def _place(self):
        root = self._find()
        if root is None:
            raise LookupError(self.name)
        value = follow(root, self._steps[:-1])
        return container_of(value, self._steps[-1]), self._steps[-1]

    @property
    def _value(self):
        return load(*self._place())

    @_value.setter
    def _value(self, value) -> None:
        store(*self._place(), value)

    def mismatch(self) -> str | None:
        """Why the slot no longer fits the trace (None where it does): it cannot be reached,
        or, where the trace reads it, it holds no array of the type the trace took."""
        try:
            place = self._place()
            value = load(*place) if self.aval is not None else None
        except (LookupError, AttributeError, TypeError, ValueError):
            return f"{self.name} can no longer be reached"
        if self.aval is None:
            return None
        if not is_state_array(value):
            return f"{self.name} holds a {type(value).__name__}, not an array"
        aval = abstractify(value)
        if (aval.shape, aval.dtype, aval.device) != \
                (self.aval.shape, self.aval.dtype, self.aval.device):
            return f"{self.name} is {aval}, where the trace took it as {self.aval}"
        return None

    def state_label(self) -> str:
        return self.name


def is_state_array(value) -> bool:
    """Whether a slot's value can be a graph input: a numeric array or NumPy scalar."""
    if isinstance(value, np.ndarray):
        return value.dtype != object
    return isinstance(value, (np.number, np.bool_)) or is_gpu_array(value)


def _is_tracer(value) -> bool:
    return getattr(type(value), "_is_traced_array", False)


def _traced_leaves(value) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _traced_leaves(item)]
    return [value] if _is_tracer(value) else []


def _holds_tracer(value) -> bool:
    """Whether `value` is a traced value or holds one in its tuples, lists, dicts and
    dataclass fields."""
    if isinstance(value, (list, tuple)):
        return any(_holds_tracer(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_tracer(item) for item in value.values())
    if is_dataclass_instance(value):
        return any(_holds_tracer(getattr(value, name)) for name in instance_fields(value))
    return _is_tracer(value)


def _inside(builder, owner) -> bool:
    """Whether `builder` records a subgraph (a branch, a loop body) of `owner`'s trace."""
    builder = getattr(builder, "parent", None)
    while builder is not None:
        if builder is owner:
            return True
        builder = getattr(builder, "parent", None)
    return False


def kept_as_graph_state(value, where: str) -> bool:
    """Whether a traced `value` that generated code writes into an object's state (at the
    user's `where`, "file.py:12") will be kept as graph state by the autotrace.function
    tracing now; an ObjectStateError where it is written inside a traced `if` or loop."""
    trace = _traces.top()
    if trace is None:
        return False
    for leaf in _traced_leaves(value):
        if leaf._builder is not trace.owner:
            if _inside(leaf._builder, trace.owner):
                raise ObjectStateError(f"{where}: {_IN_SUBGRAPH.format(what='a traced value')}")
            return False
        trace.places[id(leaf)] = where
    return True


_CHANGED_IN_PLACE = (
    "{what} is changed in place while {name} is traced, with values known while tracing: the "
    "traced graph would not change it on its later calls, where NumPy changes it on each. "
    "Assign it a new array instead ({what} = {what} + 1.0 for {what} += 1.0), which the graph "
    "writes on every call, or keep it in an autotrace.Variable")

_IN_SUBGRAPH = (
    "{what} is written into an object's state inside a traced `if` or loop, where the graph "
    "cannot keep it; compute the new value there (np.where(condition, new, old) for an if) "
    "and write it after the statement")


class ObjectSlots:
    """The slots of objects' state one autotrace.function has found written with traced
    values (by their paths), and the wrapper that keeps them as graph state while it traces.
    """

    def __init__(self, name: str, parameters: tuple):
        self.name = name
        self.parameters = parameters  # the names positional arguments fill
        self.known: set = set()
        self.warned: set = set()  # (place, label) of each Python value warned of

    def traced(self, function, root_function):
        """`function` (what is traced: `root_function` converted) for tracing with the
        slots of objects' state it writes kept as graph state (see the module docstring)."""
        def run(*args, **kwargs):
            trace = _Trace(self, current_scope(), self._roots(root_function, args, kwargs))
            with _traces.pushed(trace):
                try:
                    result = function(*args, **kwargs)
                except BaseException:
                    trace.finish(failed=True)
                    raise
                trace.finish()
            return result
        return run

    def _roots(self, function, args: tuple, kwargs: dict) -> list:
        """The traced function, and the objects among its arguments (each found again on a
        later call by identity: the trace's signature holds it)."""
        # Named "self" in messages: a callable object's attributes are its own
        # (a function's globals and closure variables are named by their own names).
        roots = [Root(("function",), function, "self", lambda: function)]

        def add(value, key, label):
            node_type = registered(type(value))
            if node_type is not None:  # a pytree node: its children are what is traced
                value = node_type.flatten(value)[0]
            if isinstance(value, (tuple, list)):
                for index, item in enumerate(value):
                    if not (is_namedtuple(value) and _method_of_item(item, value)):
                        add(item, key + (index,), f"{label}[{index}]")
            elif isinstance(value, dict):
                for item_key, item in value.items():
                    add(item, key + (item_key,), f"{label}[{item_key!r}]")
            elif is_dataclass_instance(value) and _holds_tracer(value):
                # The trace's copy of the caller's dataclass (tracing/trees.py map_arrays),
                # which a change to is refused (tracing/arguments_containers.py): its fields
                # are the arguments.
                for name in instance_fields(value):
                    if not _method_of_copy(getattr(value, name), value):
                        add(getattr(value, name), key + (name,), f"{label}.{name}")
                for name, held in kept_as_they_are(value).items():  # the caller's, as they are
                    if not _method_of_copy(held, value):
                        add(held, key + (name,), f"{label}.{name}")
            elif not _is_tracer(value) and hasattr(value, "__dict__") and \
                    not isinstance(value, type):
                roots.append(Root(key, value, label, _finder(value)))
        names = [name.lstrip("*") for name in self.parameters]
        for index, value in enumerate(args):
            add(value, ("argument", index),
                names[min(index, len(names) - 1)] if names else f"argument {index}")
        for name, value in kwargs.items():
            add(value, ("argument", name), name)
        return roots


def _method_of_copy(held, copy) -> bool:
    """Whether `held`, kept in a field or beside the fields of the trace's copy of a dataclass
    argument, is a method of that copy or of an object in one of its fields
    (containers.rebound): an object whose state the copy's fields hold, not one of the
    caller's."""
    owner = getattr(held, "__self__", None)
    return isinstance(held, types.MethodType) and (owner is copy or any(
        getattr(copy, name, None) is owner for name in instance_fields(copy)))


def _method_of_item(item, copy: tuple) -> bool:
    """Whether `item` of a namedtuple argument's copy is a method of an object that another
    of its items holds (containers.rebound_items): that item's state is traced."""
    owner = getattr(item, "__self__", None)
    return isinstance(item, types.MethodType) and any(held is owner for held in copy)


def _finder(value):
    """A function that finds `value` again (held weakly where it can be)."""
    try:
        reference = weakref.ref(value)
    except TypeError:
        return lambda: value
    return reference


class _Trace:
    """One trace's slots: those made graph inputs, and, at its end, those written."""

    def __init__(self, slots: ObjectSlots, scope, roots: list):
        self.slots, self.scope, self.roots = slots, scope, roots
        self.owner = scope.owner  # the builder of this trace
        self.places: dict[int, str] = {}  # id(traced value) -> where generated code wrote it
        self.before = walk(roots)
        self.held = {slot.place: slot for slot in self.before}
        self.containers = {id(slot.container) for slot in self.before} | {
            id(slot.value) for slot in self.before}  # (the values live while `before` does)
        # The items of each list (numbers in lists are no slots: object_walk.py)
        self.lists = {id(slot.value): list(slot.value) for slot in self.before
                      if type(slot.value) is list}
        self.watched = None  # the places a traced `if` or loop watches (branch_writes.py)
        known = [slot for slot in self.before if slot.path in slots.known]
        for slot in known:
            if _is_tracer(slot.value) and slot.value._builder.finished:
                raise ObjectStateError(
                    f"{slot.label} holds a value of an earlier trace of {slots.name} that was "
                    "not run: that trace made the dict, list or object holding it, and wrote a "
                    f"traced value into it. Call {slots.name} once (it traces and runs) before "
                    "asking for its graph, a concrete function or an export")
        # What the arrays the slots hold hold now: one the trace changes in place with values
        # known while tracing (`self.n += 1.0`) is refused (_CHANGED_IN_PLACE).
        self.contents = {slot.place: (slot.value, slot.value.copy()) for slot in self.before
                         if type(slot.value) is np.ndarray and slot.path not in slots.known}
        # place -> (slot, cell, the input Tracer, its Var) for each slot made a graph input
        self.inputs: dict = {}
        for slot in known:
            if is_state_array(slot.value) and slot.place not in self.inputs:
                cell = SlotCell(slot.root, slot.path[1:], slot.label)
                tracer = self.scope.read(cell)
                cell.aval = tracer.aval
                slot.set(tracer)
                self.inputs[slot.place] = (slot, cell, tracer, tracer.graph_var)

    def finish(self, failed: bool = False) -> None:
        """Make the written slots graph outputs (unless the trace `failed`), warn of changed
        Python numbers, refuse what a graph cannot keep; then put back what the slots held."""
        written, traced, replaced = [], [], []
        try:
            after = walk(self.roots)
            traced = [slot for slot in after if self._holds_traced(slot.value)]
            replaced = [slot for slot in after if self._replaced(slot)]
            for slot in traced:
                if self._written(slot):
                    self.slots.known.add(slot.path)
                    written.append(slot)
            for slot in replaced:
                self.slots.known.add(slot.path)
            changed = [slot for slot in after if self._changed_in_place(slot)]
            if changed:
                self._put_back_contents()
                if not failed:
                    raise ObjectStateError(self._at(changed[0], _CHANGED_IN_PLACE.format(
                        what=changed[0].label, name=self.slots.name)))
            if failed:
                return
            for slot in traced:
                self._refuse(slot)
            for slot in after:
                if isinstance(slot.value, NUMBERS) and not is_state_array(slot.value):
                    self._compare(slot)
            for slot in written + replaced:
                known = self.inputs.get(slot.place)
                cell = known[1] if known else SlotCell(slot.root, slot.path[1:], slot.label)
                self.scope.write(cell, slot.value)
        finally:
            self._restore(traced + replaced)

    def _holds_traced(self, value) -> bool:
        """Whether `value` is, or is a tuple holding, a value of this trace or its branches
        and loop bodies."""
        if type(value) is tuple:
            leaves = _traced_leaves(value)
        elif _is_tracer(value):
            leaves = [value]
        else:
            return False
        return any(leaf._builder is self.owner or _inside(leaf._builder, self.owner)
                   for leaf in leaves)

    def _written(self, slot) -> bool:
        if not _is_tracer(slot.value) or slot.value._builder is not self.owner:
            return False
        known = self.inputs.get(slot.place)
        return known is None or known[2] is not slot.value or \
            slot.value.graph_var is not known[3]

    def _replaced(self, slot) -> bool:
        """Whether the trace replaced the array a slot held with another NumPy array or scalar
        (`self.count = self.count + 1`, computed from state alone, at once): a write as a
        traced value's is, which the graph makes on every call (a constant on this trace,
        which read the slot as it was; the next reads the slot as a graph input)."""
        held = self.held.get(slot.place)
        return held is not None and held.value is not slot.value and \
            is_state_array(held.value) and is_state_array(slot.value)

    def _changed_in_place(self, slot) -> bool:
        held = self.contents.get(slot.place)
        return held is not None and held[0] is slot.value and \
            slot.value.tobytes() != held[1].tobytes()

    def _put_back_contents(self) -> None:
        """What the trace wrote into the arrays the slots hold, undone: refused, it loses
        nothing."""
        for array, contents in self.contents.values():
            if array.flags.writeable:
                array[...] = contents

    def _refuse(self, slot) -> None:
        """Refuse a slot holding this trace's values where the graph cannot keep them."""
        value = slot.value
        if isinstance(value, tuple):
            raise ObjectStateError(self._at(slot, (
                f"a traced value is kept in a tuple in {slot.label}, which the traced graph "
                "cannot write back; keep it in a list, or each value in an attribute of its "
                "own")))
        if value._builder is not self.owner:
            raise ObjectStateError(self._at(slot, _IN_SUBGRAPH.format(what=slot.label)))
        items = self.lists.get(id(slot.container))
        if items is not None and slot.step[1] >= len(items):
            raise ObjectStateError(self._at(slot, (
                f"a traced value is appended to {slot.label[:slot.label.rfind('[')]}, a list "
                "that outlives the call: Python would append on every call, the traced graph "
                "can only write the same item again; return the value and append it outside, "
                "or keep the latest one in an attribute (self.last = value)"), grown=True))

    def _compare(self, slot) -> None:
        """Warn of a Python number in the state that the trace changed."""
        held = self.held.get(slot.place)
        if held is not None and isinstance(held.value, NUMBERS) and \
                not isinstance(held.value, (bool, np.bool_)) and \
                not isinstance(slot.value, (bool, np.bool_)) and \
                not _same(held.value, slot.value):
            self._warn_of_python_state(slot, held.value, slot.value)

    def _at(self, slot, message: str, grown: bool = False) -> str:
        where = self.places.get(id(slot.value))
        if where is None:
            place = place_of_write(slot, grown)
            where = f"{os.path.basename(place[0])}:{place[1]}" if place else None
        return f"{where}: {message}" if where else message

    def _warn_of_python_state(self, slot, before, after) -> None:
        place = place_of_write(slot) or _place_of_function(self.roots[0].value)
        if (place, slot.label) in self.slots.warned:
            return
        self.slots.warned.add((place, slot.label))
        message = (
            f"{slot.label} changed from {before!r} to {after!r} while {self.slots.name} was "
            "traced: a Python value in an object's state changes only while autotrace.function "
            "traces, as Python side effects do in tf.function, not on the calls that run the "
            "traced graph. To change it on every call, keep it in an autotrace.Variable "
            "(self.n = autotrace.Variable(0); self.n.assign_add(1))")
        if place is None:
            warnings.warn(message, PythonStateWarning, stacklevel=2)
        else:
            warnings.warn_explicit(message, PythonStateWarning, place[0], place[1])

    def _restore(self, traced: list) -> None:
        """Put back what the slots held before the trace (see the module docstring): those
        made graph inputs, and those that hold the trace's values (`traced`)."""
        for slot, _, tracer, _ in self.inputs.values():
            try:
                if load(slot.container, slot.step) is tracer:
                    slot.set(slot.value)
            except (LookupError, AttributeError):
                pass  # the trace removed it, as the Python function does
        for slot in traced:
            held, items = self.held.get(slot.place), self.lists.get(id(slot.container))
            if items is not None:
                if slot.step[1] < len(items):
                    slot.set(items[slot.step[1]])
                else:  # appended: refused, or the trace failed
                    del slot.container[len(items):]
            elif held is not None:
                slot.set(held.value)
            elif id(slot.container) in self.containers:
                slot.delete()
            # else a container the trace made: the run fills it


def _place_of_function(function) -> tuple | None:
    code = getattr(inspect.unwrap(function), "__code__", None) \
        if callable(function) else None
    return None if code is None else (code.co_filename, code.co_firstlineno)


def _same(a, b) -> bool:
    return a == b or (a != a and b != b)  # NaN stays NaN


class GraphState:
    """The slots of objects' state one trace reads and writes; checked before each run."""

    def __init__(self, read: list, written: list, flagged: list = ()):
        self.read, self.written = read, written
        # The cells whose trainable flag the trace read (which gradients implicit_grad hands
        # out, a list of trainable variables), with the flag it saw: a change traces again.
        self.flags = [(cell, cell._trainable) for cell in flagged]
        # A trace that found a written slot not yet known read it as a constant: it serves
        # the call that traced it only.
        self.once = any(all(cell is not other for other in read) for cell in written)
        self.spent = False

    def problem(self) -> str | None:
        """Why the trace does not fit the state as it is now (None where it does)."""
        if self.spent:
            return ("its trace read the state it writes into objects as it was on the call "
                    f"that traced it ({self.written[0].name})")
        for cell in (*self.read, *self.written):
            mismatch = cell.mismatch()
            if mismatch is not None:
                return mismatch
        for cell, trainable in self.flags:
            if cell._trainable != trainable:
                return (f"{cell.state_label()} was made {'' if cell._trainable else 'non-'}"
                        f"trainable since the function was traced")
        return None

    def run(self, structure, compiled, arrays):
        """`structure.run(compiled, arrays)`, a trace that serves one call marked spent."""
        self.spent = self.once
        return structure.run(compiled, arrays)


def graph_state_of(structure) -> GraphState | None:
    """The GraphState of a trace's OutputStructure, or None where it keeps no object's state
    and reads no trainable flag."""
    read = [cell for cell in structure.captured if isinstance(cell, SlotCell)]
    written = [cell for cell in structure.written if isinstance(cell, SlotCell)]
    flagged = structure.flagged
    return GraphState(read, written, flagged) if read or written or flagged else None
