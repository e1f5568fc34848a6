"""Traced loops: the helpers that converted `while` and `for` statements call
(transforms/control_flow/control_flow.py; runtime/tracing/control_statements.py lists them).

Each runs the plain Python loop while its condition is a Python value. From the first
iteration whose condition is traced (or over a traced array or range) the loop is one
graph-level `while` op (runtime/tracing/control.py) over the statement's variables.

Decisions:
- A traced loop carries the variables assigned before it. One first assigned inside the loop
  is an error only when it is read after the loop.
- A loop variable that starts as a Python number is weak, as in NumPy (tracing/control_weak.py):
  it is carried in the dtype the body gives it, float32 where it meets float32 values
  (`total = 0.0`, `total += np.sum(row)`), and one that becomes a float (`n = 0`,
  `n = n + 0.5`) is carried as the float: the body is traced again from the promoted start.
  One the body leaves a Python number (`lr *= 0.9`) is carried as a weak scalar of Python's
  dtype, which meets float32 values as the number does (weak_scalars.make_weak).
- `for` over a traced array loops over its first axis in a graph `while` op, unless a variable
  is a list, set or other object, which cannot be a loop value: then the loop is unrolled (its
  length is known while tracing, so the trace still serves every value).
- `for i in range(n)` with a traced bound is a graph `while` op over `i`.
- A Python loop over an iterator whose break turns traced takes the items after the break
  too, so where the iterator stops is known only at run time: it is refused where the loop
  takes its items from an iterator kept in a name (`for v in it:`, `zip(w, it)`, `made_from`),
  or is itself an iterator read from an item or an attribute (`for v in holder[0]:`), which
  Python's next loop over it resumes where the break left it. An iterator made in the
  header from anything else (`enumerate(self.layers)`, a dataset, a generator call) is left
  to the loop, as nothing reads it after.
- In generated code a variable the loop body leaves the same Python bool every iteration (a
  condition on Python values), or the same trip count of a loop inside it that runs in Python
  (`_n2`), stays that bool or int, not a loop value (see `_flags_after`).
- In generated code every stack of saved values a traced loop carries becomes a graph stack
  (runtime/tracing/stacks.py); a loop whose break or condition turns traced after some iterations
  starts over in the graph, with its stacks, and the arrays those iterations changed in place
  (`v[2] *= c`), as they were before it.
"""
from __future__ import annotations

import collections.abc
import contextlib
import re

import numpy as np

from ..abstract import same_type
from ..branch_writes import loop_numbers_watched
from .control import (ControlFlowError, _aval, _describe, _same_structure,
                                       current_builder, traced_while)
from .control_branches import if_stmt
from .control_aliases import TakenOver
from .control_containers import KeptContainers
from .control_variables import (Undefined, _Retry, _error, _is_defined, named,
                                                 refuse_halves,
                                                 _lengths_differ, _list_length_error,
                                                 _may_be_placeholder, _scalar_condition,
                                                 _until_settled, _zeros_like_tree)
from .control_held import held_read_only
from ..primitives.shape import dimension_size
from ..scopes import record_refusal
from ..generated_source import TEMPORARY_NAME
from .stacks import SavedValues, TracedStack, new_stack, restore, snapshot
from .tracer import (Tracer, leaves_with_paths, map_arrays, mark_view,
                                      write_value)
from .control_weak import dtypes_from_body, loop_start
from .weak_scalars import WEAK_NUMBERS, either_of


def while_stmt(test_fn, body_fn, values: tuple, *, names: tuple, live: tuple, where: str,
               placeholders=(), user_nones: tuple = (), outside: tuple = (), made: tuple = (),
               shared: tuple = ()):
    """`while test_fn(*values): values = body_fn(*values)`, recorded as a graph `while` op
    from the first iteration whose test is traced. (`placeholders`, `user_nones` and `outside`
    as for if_stmt: a variable the user sets to None is not given zeros where it stays None;
    `made` and `shared` too.)"""
    values = first = tuple(values)
    saved = _save_loop_start(values, placeholders)
    while True:
        test = test_fn(*values)
        if isinstance(test, Tracer):
            _scalar_condition(test, where, "while")
            if values is not first and saved:
                # Generated code: iterations already run pushed onto stacks at trace time,
                # which a traced adjoint loop could not pop; run the whole loop in the graph.
                values = _start_over(first, saved)
            taken_over = TakenOver(values, names, outside)
            kept = KeptContainers(values, names, where, made, (test_fn, body_fn),
                                  shared)
            with _held(placeholders, (test_fn, body_fn), where, "`while` loop"):
                results = _graph_loop(current_builder(test), test_fn,
                                      kept.noting(taken_over.noting(body_fn)), values, names,
                                      live, where, "while loop", placeholders,
                                      user_nones=user_nones)
            return kept.write_back(taken_over.refuse_writes(results))
        if not test:
            return values
        values = tuple(body_fn(*values))


def _save_loop_start(values, placeholders) -> dict:
    """For generated code (`placeholders` True): what each stack (a list, or a TracedStack) in
    `values` holds now, and what each array in them holds, so that a loop can start over in
    the graph (`_start_over`). Empty where `values` hold no stack: no loop starts over."""
    if placeholders is not True:
        return {}
    stacks = {index: list(value) if isinstance(value, SavedValues)
              else (value._builder, value.graph_var, snapshot([value]))
              for index, value in enumerate(values)
              if isinstance(value, (SavedValues, TracedStack))}
    if not stacks:
        return {}
    return {"stacks": stacks, "arrays": [(leaf, _contents(leaf))
                                         for _, leaf in leaves_with_paths(values)]}


def _contents(array):
    """What `array` holds now, apart from its later writes in place."""
    if isinstance(array, Tracer):
        return Tracer(array._builder, array.graph_var)
    return array.copy() if isinstance(array, np.ndarray) else array


def _start_over(values, saved: dict) -> tuple:
    """`values` as they were before the loop (`saved` by _save_loop_start), for a loop that runs
    again from its start in the graph."""
    for index, state in saved["stacks"].items():
        if isinstance(values[index], SavedValues):
            values[index][:] = state
        else:  # what the iterations run so far recorded is left to dead-code elimination
            values[index]._builder, values[index].graph_var, schema = state
            restore(schema)
    # The iterations run so far changed arrays in place (`v[2] = v[2] * c`, and the views of
    # their memory with them): the loop starting over must see them as they were before it.
    for array, contents in saved["arrays"]:
        if isinstance(array, Tracer) and array.graph_var is not contents.graph_var:
            write_value(array, contents)
        elif isinstance(array, np.ndarray):
            array[...] = contents
    return values


class TracedRange:
    """`range(start, stop, step)` where a bound is traced: a loop over it is a graph op."""

    def __init__(self, start, stop, step):
        if isinstance(step, Tracer):
            raise ControlFlowError("range(): the step of a range over traced bounds must be a "
                                   "Python int, not a traced value")
        if step == 0:
            raise ValueError("range() arg 3 must not be zero")
        self.start, self.stop, self.step = start, stop, step

    def __repr__(self) -> str:
        return f"range({self.start}, {self.stop}, {self.step})"


def range_(*bounds):
    """`range(*bounds)`; a `TracedRange` when a bound is traced."""
    if not any(isinstance(bound, Tracer) for bound in bounds):
        return range(*bounds)
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    return TracedRange(start, stop, step)


def for_stmt(iterable, body_fn, values: tuple, *, names: tuple, targets: tuple, live: tuple,
             where: str, placeholders=(), stop: str | None = None, user_nones: tuple = (),
             outside: tuple = (), made: tuple = (), shared: tuple = (), adjoint: bool = False,
             made_from: tuple | None = ()):
    """`for item in iterable: values = body_fn(item, *values)`: a graph `while` op over a
    traced array's first axis or a traced range, else a Python loop (unrolled when traced).
    `stop` names the flag a `break` sets: the loop ends once it is true. (`outside`, `made` and
    `shared` as for if_stmt.) `adjoint`: the loop is an adjoint sweep's, over the iterations a
    primal loop counted (see _check_loop_values). `made_from`: for a loop with a `break`, the
    values the statement's iterator is made from, as (value, how) pairs (`x` "iterated" in
    `enumerate(x)`, "indexed" in `x[1:]`, "read" in `(next(it) for _ in x)`), or None where it is
    made from something else (transforms/control_flow/loop_sources.py)."""
    values = tuple(values)
    stop_index = names.index(stop) if stop is not None else None
    options = (names, targets, live, where, placeholders, stop_index)
    taken_over = TakenOver(values, names, outside)
    kept = KeptContainers(values, names, where, made, (body_fn,), shared)
    body = kept.noting(taken_over.noting(body_fn), offset=1)
    if isinstance(iterable, TracedRange):
        with _held(placeholders, (body_fn,), where, "`for` loop"):
            results = _range_loop(iterable, body, values, *options, user_nones=user_nones,
                                  adjoint=adjoint)
        return kept.write_back(taken_over.refuse_writes(results))
    if isinstance(iterable, Tracer) and all(_loopable(value) for value in values):
        if iterable.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        # As many steps as the array has rows, a number known only at run time where a traced
        # boolean mask selected them (x[mask]).
        rows = iterable.shape[0] if iterable.shape[0] is not None else dimension_size(iterable, 0)
        with _held(placeholders, (body_fn,), where, "`for` loop"):
            results = _range_loop(
                TracedRange(0, rows, 1), lambda i, *state: body(_item(iterable, i), *state),
                values, *options, over=iterable, user_nones=user_nones, adjoint=adjoint)
        return kept.write_back(taken_over.refuse_writes(results))
    first, saved = values, _save_loop_start(values, placeholders)
    items = iter(iterable)
    while True:
        stopped = values[stop_index] if stop_index is not None else False
        if not isinstance(stopped, Tracer) and stopped:
            break  # (before the next item is taken: an iterator a later loop resumes keeps it)
        item = next(items, _ENDED)
        if item is _ENDED:
            break
        if isinstance(stopped, Tracer) and saved and isinstance(iterable, range):
            # Generated code with a break on a traced value: the whole loop runs in the graph,
            # so that what it pushes onto stacks is saved in the graph too (see while_stmt).
            return _range_loop(TracedRange(iterable.start, iterable.stop, iterable.step),
                               body_fn, _start_over(first, saved), *options[:-1],
                               stop_index, anchor=stopped, user_nones=user_nones)
        if isinstance(stopped, Tracer):
            if not isinstance(iterable, _SEQUENCES) and any(
                    isinstance(value, collections.abc.Iterator) or how == "kept" and
                    isinstance(iterable, collections.abc.Iterator) and
                    not isinstance(iterable, np.flatiter) for value, how in made_from or ()):
                raise _error(where, _RESUMED)
            # A break on a traced value: the iterations after it do nothing, in the graph.
            values = if_stmt(stopped, lambda *state: state,
                             lambda *state, item=item: tuple(body_fn(item, *state)), values,
                             names=names, live=names, where=where,
                             placeholders=placeholders, user_nones=user_nones,
                             outside=outside, made=made, shared=shared)
            continue
        values = tuple(body_fn(item, *values))
    return values


_ENDED = object()  # what an iterator gives for_stmt's Python loop once it has no more
_RESUMED = ("this loop over an iterator breaks on a traced value, so the item it stops at is "
            "known only at run time, and the iterator may be read again after it (Python goes "
            "on from that item): loop over a list, a tuple or an array (list(...) of the "
            "iterator) and keep the position the break leaves as a traced index")
# What iterating over a value of these types takes no item from anything else.
_SEQUENCES = (collections.abc.Sequence, collections.abc.Set, collections.abc.Mapping,
              collections.abc.MappingView, np.ndarray, Tracer)


def _held(placeholders, functions, where: str, statement: str):
    """control_held.held_read_only for the user's statement; nothing for code autotrace
    generated (`placeholders` True), which its sweeps check instead."""
    if placeholders is True:
        return contextlib.nullcontext()
    return held_read_only(functions, where, statement)


def _item(iterable, i):
    """`iterable[i]`, a view of it in NumPy: part of an array argument if `iterable` is one.
    A 1-D array's item is a NumPy number, which `item op= v` rebinds, as `v = y[i]` is."""
    item = iterable[i]
    if iterable.ndim > 1:
        mark_view(item, iterable, "...")
    return item


def _loopable(value) -> bool:
    """Whether `value` can be a loop value of a graph op (not a list, set or object)."""
    if value is None or isinstance(value, (Tracer, np.ndarray, np.generic, int, float, complex,
                                           str, Undefined)):
        return True
    if isinstance(value, tuple):
        return all(_loopable(item) for item in value)
    if isinstance(value, dict):
        return all(_loopable(item) for item in value.values())
    return False


def _range_loop(bounds: TracedRange, body_fn, values, names, targets, live, where,
                placeholders, stop_index, over=None, anchor=None, user_nones=(), adjoint=False):
    # The loop's own target is rebound from the counter each iteration: it is carried only when
    # read after the loop, which leaves it at the last item (or, after no iteration, at its
    # value before the loop, as in Python).
    values = tuple(Undefined(n) if n in targets and n not in live else v
                   for n, v in zip(names, values))
    tracer = next(b for b in (over, anchor, bounds.start, bounds.stop)
                  if isinstance(b, Tracer))
    step = bounds.step

    def test(i, *state):
        going = i < bounds.stop if step > 0 else i > bounds.stop
        if stop_index is None:
            return going
        return np.logical_and(going, np.logical_not(state[stop_index]))

    def body(i, *state):
        return (i + step, *body_fn(i, *state))

    results = _graph_loop(current_builder(tracer), test, body, (bounds.start, *values),
                          ("<counter>", *names), live, where, "for loop", placeholders,
                          {target: "0" if over is None else "np.zeros_like(...), shaped like "
                           "one item" for target in targets}, user_nones,
                          may_run_none=not _runs_some(bounds), adjoint=adjoint)
    return results[1:]


def _runs_some(bounds: TracedRange) -> bool:
    """Whether a loop over `bounds` runs an iteration, known while tracing (over a traced
    array's rows, say)."""
    start, stop = bounds.start, bounds.stop
    if isinstance(start, Tracer) or isinstance(stop, Tracer):
        return False
    return len(range(start, stop, bounds.step)) > 0


def _graph_loop(parent, test_fn, body_fn, values, names, live, where, statement,
                placeholders=(), targets=None, user_nones=(), may_run_none=True, adjoint=False):
    """Record the loop as a `while` op carrying the variables assigned before it. `targets`
    maps a for loop's own variables to an example of a value to give them before it;
    `may_run_none`: whether it may run no iteration (control_weak.loop_start)."""
    # A flag first set inside the loop starts as None: the body's first trace gives its type.
    values = tuple(None if not _is_defined(value) and _may_be_placeholder(placeholders, variable)
                   else value for variable, value in zip(names, values))
    for variable, value in zip(names, values):
        if not _is_defined(value) and variable in live and variable in (targets or ()):
            raise _error(where, f"the loop variable {variable!r} is used after this {statement} "
                                f"on a traced value, which may run no iteration: assign it "
                                f"before the loop (e.g. {variable} = {targets[variable]}), so "
                                f"it has a value then")
        if not _is_defined(value) and variable in live:
            raise _error(where, f"variable {variable!r} is first assigned inside this "
                                f"{statement} on a traced value, and used after it. Assign it "
                                f"before the loop (e.g. {variable} = np.zeros_like(...)), so it "
                                f"has a shape and dtype before any iteration")
    if placeholders is True:
        # Generated code: a stack of saved values, pushed or popped every iteration.
        values = tuple(new_stack(parent, value) if isinstance(value, SavedValues) else value
                       for value in values)
    stacks = [value for value in values if isinstance(value, TracedStack)]
    before_loop = snapshot(stacks)
    values = list(values)
    # index -> the Python bool or trip count the body leaves in it (generated code; see
    # `_flags_after`). One on entry is taken for one until the body changes it.
    flags: dict = {index: value for index, value in enumerate(values)
                   if placeholders is True and _may_be_flag(names[index], value)}
    settled: set = set()  # indexes of flags the body changed: carried as graph values
    found: dict = {}  # the flags as the body's last trace left them

    def carried() -> list:
        return [index for index, value in enumerate(values)
                if _is_defined(value) and index not in flags]

    def full(state):
        merged = list(values)
        for index, value in zip(carried(), state):
            merged[index] = value
        return merged

    def loop_test(state):
        return test_fn(*full(state))

    def loop_body(state):
        with loop_numbers_watched(where, statement):  # a Python number it changes: refused
            results = body_fn(*full(state))
        if placeholders is True:
            found.clear()
            found.update(_flags_after(names, values, results, flags, settled))
        return tuple(kept if _left_dead(placeholders, names[index], results[index], live)
                     else results[index] for index, kept in zip(carried(), state))

    # index -> the Python number a loop value starts as; `weak`: those still carried in
    # Python's dtype, for want of another the body gives them (tracing/control_weak.py)
    starts = {index: values[index] for index in carried() if type(values[index]) in WEAK_NUMBERS}
    weak = set(starts)

    def learn_dtypes(numbers: dict):
        """Carry each of `numbers` (index -> a Python number) in the dtype the body makes of
        it, where the body, traced with it as it is, makes it a scalar array."""
        indexes = carried()
        found_dtypes = dtypes_from_body(parent, loop_body, tuple(values[i] for i in indexes),
                                        {indexes.index(i): number for i, number in numbers.items()})
        for position, dtype in found_dtypes.items():
            values[indexes[position]] = loop_start(starts[indexes[position]], dtype, where,
                                                   names[indexes[position]], statement,
                                                   may_run_none)
            weak.discard(indexes[position])
        restore(before_loop)

    learn_dtypes({index: number for index, number in starts.items() if type(number) is not int})

    def attempt():
        promote = {}
        indexes = carried()  # the same through one attempt: the flags change only in `check`
        init = tuple(values[index] for index in indexes)
        carried_names = [names[index] for index in indexes]
        numbers = [(starts.get(index), index in weak) for index in indexes]

        def check(before, after):
            if placeholders is True and found != flags:  # a flag found, or one changed
                for index in set(flags) - set(found):
                    if type(flags[index]) is int:  # a count the body changes: a weak int
                        values[index] = starts[index] = flags[index]
                        weak.add(index)
                    else:
                        values[index] = np.asarray(flags[index])
                    settled.add(index)
                for index in set(found) - set(flags):
                    values[index] = found[index]
                flags.clear()
                flags.update(found)
                raise _Retry()
            _check_loop_values(where, statement, carried_names, numbers, before, after,
                               promote, placeholders, user_nones, may_run_none, adjoint)

        restore(before_loop)
        try:
            state = traced_while(parent, loop_test, loop_body, init, check,
                                 weak=frozenset(position for position, index in enumerate(indexes)
                                                if index in weak))
        except _Retry:
            # A Python int the body makes a float (`n = 0`, `n = n + np.sum(row)`) met the
            # body as an int64 array, which made that float float64: learn its dtype again.
            ints = {indexes[position]: starts[indexes[position]] for position in promote
                    if indexes[position] in weak and type(starts[indexes[position]]) is int}
            for position, value in promote.items():  # (empty when the flags changed)
                values[indexes[position]] = value
                weak.discard(indexes[position])
            learn_dtypes(ints)
            raise
        return state

    return tuple(full(_until_settled(where, 2 * len(values), attempt)))


_COUNT = re.compile(r"_n\d+")  # the trip count of a loop, in generated code
# A flag's values: a comparison of Python numbers, or of NumPy scalars (np.True_ is one object)
_BOOLS = (bool, np.bool_)


def _may_be_flag(variable: str, value) -> bool:
    """Whether `value` of `variable` may stay a Python value in a loop of generated code: a bool,
    or a loop's trip count (an int)."""
    return isinstance(value, _BOOLS) or type(value) is int and bool(_COUNT.fullmatch(variable))


def _same_flag(first, second) -> bool:
    return first is second or type(first) is int and type(second) is int and first == second


def _flags_after(names, values: list, results, flags: dict, settled: set) -> dict:
    """In generated code, a variable that the loop body leaves the same Python or NumPy bool (a
    flag such as `_t3 = -0.62 > 0.41`, a condition on values known while tracing) stays that
    bool in the loop where it starts as that bool, or as None where it is a temporary of the
    derivative (read after the loop only by the adjoint of the same iterations; a user's None
    is a value code may read). The values saved with it are then bools known while tracing,
    so that the adjoint `if` on it stays a Python `if` too, and never traces the branch that
    the primal never takes (whose saved values were never assigned). So does the trip count of
    a loop inside the body that runs in Python (`_n2`, the same in every iteration): the
    adjoint's loop over it then runs in Python too, popping what the primal's pushed. A flag
    the body changes (the loop's own count) is carried as a graph value, and the body traced
    again. Returns the flags after this trace."""
    after = {}
    for index, result in enumerate(results):
        if index in settled:
            continue
        if index in flags:
            if _same_flag(result, flags[index]):
                after[index] = result
        elif _may_be_flag(names[index], result) and (
                _same_flag(values[index], result)
                or values[index] is None and TEMPORARY_NAME.fullmatch(names[index])):
            after[index] = result
    return after


def _left_dead(placeholders, variable: str, result, live) -> bool:
    """Whether generated code's loop body left `variable` unset (an if in it came back with it
    `Undefined`: read nowhere after the if, in the loop or after it); the loop then carries
    its value on unchanged, which nothing reads."""
    return placeholders is True and not _is_defined(result) and variable not in live


def _check_loop_values(where, statement, names, numbers, before, after, promote,
                       placeholders, user_nones=(), may_run_none=True, adjoint=False) -> None:
    """Raise where a loop value changes in one iteration; `_Retry` with `promote` (position ->
    its new start) where a Python number becomes another dtype. `numbers`: for each loop
    value, the Python number it starts as (or None), and whether it is still weak, carried in
    Python's dtype: it then takes the dtype NumPy gives the number meeting the new one
    (float32 for a float32 scalar), else the wider of the two. In an `adjoint` loop a value
    the body widens to another inexact dtype of the same shape starts in it (`_widened`)."""
    for index, variable in enumerate(names):
        old, new = before[index], after[index]
        refuse_halves(where, variable, old, new)
        if old is None and new is not None and _may_be_placeholder(placeholders, variable) \
                and variable not in user_nones:
            promote[index] = _zeros_like_tree(new)  # a flag's value, set by the body
            continue
        if placeholders is True and _lengths_differ(old, new):
            raise _list_length_error(where, variable, statement)
        if not _same_structure(map_arrays(old, lambda leaf: 0), map_arrays(new, lambda leaf: 0)):
            refusal = record_refusal(old, new, statement)
            if refusal is not None:  # (a record generated code keeps: no user's variable)
                raise _error(where, refusal)
            raise _error(where, f"{named(variable)} changes from {_describe(old)} to "
                                f"{_describe(new)} in one iteration of this {statement} on a "
                                f"traced value; a traced loop must keep each variable's "
                                f"structure, shape and dtype")
        for (path, old_leaf), (_, new_leaf) in zip(leaves_with_paths(old),
                                                   leaves_with_paths(new)):
            old_aval, new_aval = _aval(old_leaf), _aval(new_leaf)
            start, weak = numbers[index]
            either = either_of(new_leaf)  # a traced `if` in the body left the number or not
            if either is not None and start is not None and weak:
                scalar = next((kind for kind in either[:2] if not isinstance(kind, type)), None)
                if scalar is not None:  # carried as the NumPy scalar, from the number cast
                    promote[index] = loop_start(start, np.result_type(scalar, start), where,
                                                variable, statement, may_run_none)
                    continue
            if same_type(old_aval, new_aval):
                continue
            if adjoint and start is None and _widens(old_aval, new_aval):
                promote[index] = _widened(old, new)
                break
            if start is not None and old_aval.shape == new_aval.shape:
                joined = np.result_type(new_aval.dtype, start if weak else old_aval.dtype)
                promote[index] = loop_start(start, joined, where, variable, statement,
                                            may_run_none)
                continue
            raise _error(where, f"{named(variable)}{path} changes from {old_aval} to "
                                f"{new_aval} in one iteration of this {statement} on a traced "
                                f"value; a traced loop must keep each variable's shape and "
                                f"dtype (the loop runs in the graph, one trace for every trip "
                                f"count)")
    if promote:
        raise _Retry()


def _widens(old, new) -> bool:
    """Whether one iteration turns a loop value of aval `old` into the wider inexact `new`."""
    return old.shape == new.shape and _wider(old.dtype, new.dtype)


def _wider(old, new) -> bool:
    return (np.dtype(old).kind in "fc" and np.dtype(new).kind in "fc" and old != new
            and np.result_type(old, new) == new)


def _widened(old, new):
    """`old` with each array the body widens (`_widens`) in the body's dtype. In an adjoint
    sweep's loop an accumulator starts as its primal's dtype (`bx = zeros_like(x)`, float32)
    and takes the wider dtype of the values it sums (float64, where the primal loop computes
    in float64); run as written it holds that dtype from the first iteration on. The cast is
    exact, so each iteration sums what it does run as written, and the derivative's result
    takes its primal's dtype again (`match`)."""
    wider = iter([_aval(leaf).dtype for _, leaf in leaves_with_paths(new)])

    def cast(leaf):
        dtype = next(wider)
        castable = isinstance(leaf, (Tracer, np.ndarray, np.generic))
        return leaf.astype(dtype) if castable and _wider(_aval(leaf).dtype, dtype) else leaf
    return map_arrays(old, cast)
