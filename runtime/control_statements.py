"""The helpers that converted `if`, `while` and `for` statements call (transforms/control_flow.py).

Each runs the plain Python statement when its condition is a Python value, so control flow on
Python values unrolls into the trace as before. When the condition is traced it records one
graph-level `cond` or `while` op (runtime/control.py) over the statement's variables:

    (y,) = if_stmt(x.sum() > 0, if_true, if_false, (y,), names=("y",), live=("y",),
                   where="model.py:12: if x.sum() > 0:")

`names` are the statement's variables (the values tuple, in order), `live` those read after
it, `where` the user's file, line and statement, for errors. A variable that has not been
assigned yet arrives as `Undefined(name)`.

Decisions:
- A traced `if` keeps the live variables both branches assign; one assigned in a single branch
  is an error (the graph runs both paths). Dead ones come back `Undefined`.
- A traced loop carries the variables assigned before it. One first assigned inside the loop
  is an error only when it is read after the loop.
- A loop variable that starts as a Python number and becomes a float (`n = 0`, `n = n + 0.5`)
  is carried as the float: the body is traced again from the promoted start.
- `for` over a traced array loops over its first axis in a graph `while` op, unless a variable
  is a list, set or other object, which cannot be a loop value: then the loop is unrolled (its
  length is known while tracing, so the trace still serves every value).
- `for i in range(n)` with a traced bound is a graph `while` op over `i`.
- In generated code a list is a stack of saved values. One that a traced branch pushes onto or
  pops from, and every one a traced loop carries, becomes a graph stack (runtime/stacks.py); a
  loop whose break or condition turns traced after some iterations starts over in the graph,
  with its stacks as they were before it.
"""
from __future__ import annotations

import re

import numpy as np

from runtime.abstract import same_type
from runtime.control import (ControlFlowError, _aval, _describe,
                             _same_structure, current_builder, traced_cond, traced_while, cond)
from runtime.stacks import (SavedValues, StackMismatch, TracedStack, new_stack, restore,
                            snapshot)
from runtime.tracer import (Tracer, TracerConversionError, is_array, leaves_with_paths,
                            map_arrays, mark_view, set_item as _set_array_item)


class Undefined:
    """A variable not assigned yet; any use of it says so."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def _unassigned(self, *args, **kwargs):
        raise UnboundLocalError(
            f"cannot access local variable {self.name!r} where it is not associated with a "
            f"value")

    def __eq__(self, other) -> bool:
        return isinstance(other, Undefined) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("Undefined", self.name))

    def __repr__(self) -> str:
        return f"<undefined {self.name}>"

    def __getattr__(self, attribute):
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        self._unassigned()

    __bool__ = __len__ = __iter__ = __call__ = __getitem__ = __setitem__ = _unassigned
    __float__ = __int__ = __index__ = __array__ = __neg__ = __pos__ = __abs__ = _unassigned
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unassigned
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _unassigned
    __pow__ = __rpow__ = __matmul__ = __rmatmul__ = __lt__ = __le__ = __gt__ = _unassigned
    __ge__ = __and__ = __rand__ = __or__ = __ror__ = __xor__ = __invert__ = _unassigned
    __array_ufunc__ = __array_function__ = _unassigned


def _is_defined(value) -> bool:
    return not isinstance(value, Undefined)


def _error(where: str, message: str) -> ControlFlowError:
    return ControlFlowError(f"{where}\n  {message}")


def _scalar_condition(test: Tracer, where: str, statement: str) -> None:
    if test.shape != ():
        raise _error(where, f"the condition of this `{statement}` is a traced array of type "
                            f"{test.aval}, not a scalar; reduce it first, e.g. with np.any(...) "
                            f"or np.all(...)")


# --- if -----------------------------------------------------------------------------------------

def if_stmt(test, true_fn, false_fn, values: tuple, *, names: tuple, live: tuple, where: str,
            placeholders=False):
    """`true_fn(*values)` if `test` else `false_fn(*values)`: the new values of `names`.

    With `placeholders` (True for code autotrace generated, which reads a variable assigned
    in one branch only under the same condition; or the names of such variables, the flags
    that break, continue and return became), such a variable gets zeros of its shape on the
    other path instead of being an error.
    """
    if not isinstance(test, Tracer):
        return true_fn(*values) if test else false_fn(*values)
    _scalar_condition(test, where, "if")
    keep = [variable in live for variable in names]
    fixes: dict = {}  # (branch, index) -> what makes that result fit the other branch's
    stacks: dict = {}  # index -> the TracedStack a list pushed onto or popped in a branch became
    saved: dict = {}  # index -> the snapshot of a TracedStack before the branches are traced
    counts: dict = {}  # index -> a trip count both branches leave the same Python int
    numbers: dict = {}  # side -> {index: a Python int the branch left}

    def branch(function, side):
        def run(*operands):
            results = function(*operands)
            numbers[side] = {index: value for index, value in enumerate(results)
                             if _is_trip_count(value)}  # before they become arrays
            return tuple(None if index in counts
                         else fixes[side, index](value) if (side, index) in fixes
                         else value if kept else None
                         for index, (value, kept) in enumerate(zip(results, keep)))
        return run

    def check(true_branch, false_branch):
        needed, converted = {}, False
        for index, variable in enumerate(names):
            in_true, in_false = true_branch.result[index], false_branch.result[index]
            if placeholders is True and index not in stacks and _pushed_or_popped(
                    values[index], in_true, in_false):
                # Generated code: a stack of saved values. The branches may push different
                # values, so it becomes a graph value that holds what the taken branch pushed.
                stacks[index], converted = new_stack(current_builder(test), values[index]), True
                continue
            if not keep[index] or index in counts:
                continue
            count = _same_trip_count(numbers, index, in_true, in_false)
            if placeholders is True and count is not None:
                # A loop's trip count in generated code stays a Python int, so that the
                # adjoint loop is unrolled too and pops, one by one, what the branch pushed.
                counts[index], converted = count, True
                continue
            if _may_be_placeholder(placeholders, variable):
                needed.update(_placeholders(index, values[index], in_true, in_false))
                if any(key[1] == index for key in needed):
                    continue
            _check_variable(where, variable, in_true, in_false, placeholders)
        if needed or converted:
            fixes.update(needed)
            raise _Retry()

    def attempt():
        operands = tuple(stacks.get(index, value) for index, value in enumerate(values))
        for index, value in enumerate(operands):  # undo what an earlier attempt pushed, popped
            if isinstance(value, TracedStack):
                if index in saved:
                    restore(saved[index])
                else:
                    saved[index] = snapshot([value])
        return traced_cond(test, branch(true_fn, True), branch(false_fn, False), operands, check)

    results = _until_settled(where, len(names) + 1, attempt)
    return tuple(counts[index] if index in counts else value if kept else Undefined(variable)
                 for index, (value, kept, variable) in enumerate(zip(results, keep, names)))


def _pushed_or_popped(before, in_true, in_false) -> bool:
    """Whether a branch pushed onto or popped from the stack `before`, or made it a traced
    stack (in a loop or branch of its own)."""
    return isinstance(before, SavedValues) and any(
        isinstance(after, TracedStack) or isinstance(after, list) and len(after) != len(before)
        for after in (in_true, in_false))


def _zeros_like_tree(tree):
    return map_arrays(tree, lambda leaf: np.zeros(_aval(leaf).shape, _aval(leaf).dtype))


def _is_trip_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _same_trip_count(numbers: dict, index: int, in_true, in_false):
    """The Python int both branches leave in variable `index`, or one leaves where the other
    leaves it unset (generated code reads it only under the same condition); else None."""
    true_count, false_count = numbers[True].get(index), numbers[False].get(index)
    if true_count is None and not _is_set(in_true):
        true_count = false_count
    if false_count is None and not _is_set(in_false):
        false_count = true_count
    return true_count if true_count is not None and true_count == false_count else None


def _is_set(value) -> bool:
    """Defined and not None (generated code starts a variable as None before a branch sets it)."""
    return value is not None and _is_defined(value)


def _placeholders(index: int, before, in_true, in_false) -> dict:
    """For generated code: make a variable one branch leaves unassigned (or None) zeros
    there, and the items of a list (of gradients) unset on one side zeros there."""
    true_set, false_set = _is_set(in_true), _is_set(in_false)
    if true_set != false_set:
        side = not true_set
        filler = _zeros_like_tree(in_true if true_set else in_false)
        return {(side, index): lambda value: filler}
    if _is_defined(in_true) != _is_defined(in_false):
        # None on one side (a value saved before anything set it), unassigned on the other.
        return {(_is_defined(in_false), index): lambda value: None}
    if not (isinstance(before, list) and isinstance(in_true, list)
            and isinstance(in_false, list) and len(in_true) == len(in_false)):
        return {}
    fixes = {}
    for side, mine, other in ((True, in_true, in_false), (False, in_false, in_true)):
        unset = {i: _zeros_like_tree(b) for i, (a, b) in enumerate(zip(mine, other))
                 if not _is_set(a) and _is_set(b)}
        if unset:
            fixes[side, index] = lambda value, unset=unset: [unset.get(i, item)
                                                             for i, item in enumerate(value)]
    return fixes


class _Retry(Exception):
    """The branches are traced again (with placeholders, or from promoted loop values)."""


def _until_settled(where: str, variables: int, attempt):
    """`attempt()`, again after each `_Retry` (each settles at least one more variable)."""
    for _ in range(variables + 1):
        try:
            return attempt()
        except _Retry:
            continue
        except StackMismatch as mismatch:  # the innermost statement names the user's line
            raise _error(where, str(mismatch)) from None
    raise _error(where, "the shapes and dtypes of this statement's variables did not settle "
                        "after tracing it once per variable; give them their final dtype "
                        "before the statement")


def _may_be_placeholder(placeholders, variable: str) -> bool:
    """Whether `variable` may be given zeros where it is unset (see if_stmt)."""
    return placeholders is True or variable in (placeholders or ())


def _lengths_differ(a, b) -> bool:
    return isinstance(a, list) and isinstance(b, list) and len(a) != len(b)


def _list_length_error(where: str, variable: str, statement: str) -> ControlFlowError:
    """For derivative code: a list it appends to or pops from on a traced condition."""
    if _SAVED_VALUES.match(variable):
        return _error(where, f"{variable!r} holds the values this derivative saves, and it "
                             f"appends to or pops from it in this {statement} on a traced "
                             f"value, in a way a trace cannot follow (first and second "
                             f"derivatives it can). Compute this derivative eagerly, or trace "
                             f"one of lower order, e.g. autotrace.function(autotrace.grad(f))")
    return _error(where, f"{variable!r} is a list whose length here depends on a traced value "
                         f"(this derivative appends to or pops from it in this {statement}); a "
                         f"trace needs its length. Give the loop Python bounds (it then "
                         f"unrolls), keep the values in an array of known shape instead of a "
                         f"list, or compute this derivative eagerly")


_SAVED_VALUES = re.compile(r"^[bd]*_stack\d+$")  # generated stacks, and their gradients


def _check_variable(where: str, variable: str, in_true, in_false,
                    placeholders=False) -> None:
    true_defined, false_defined = _is_defined(in_true), _is_defined(in_false)
    if true_defined != false_defined:
        branch = "true" if true_defined else "false"
        raise _error(where, f"variable {variable!r} is assigned in the {branch} branch only, "
                            f"and used after the if. A traced condition runs both branches in "
                            f"the graph: assign {variable!r} in both branches, or before the if")
    shapes = (map_arrays(in_true, lambda leaf: 0), map_arrays(in_false, lambda leaf: 0))
    if placeholders is True and _lengths_differ(in_true, in_false):
        raise _list_length_error(where, variable, "if")
    if not _same_structure(*shapes):
        raise _error(where, f"variable {variable!r} is {_describe(in_true)} after the true "
                            f"branch and {_describe(in_false)} after the false branch; a traced "
                            f"condition can only choose between arrays of one shape and dtype")
    for (path, true_leaf), (_, false_leaf) in zip(leaves_with_paths(in_true),
                                                  leaves_with_paths(in_false)):
        if not same_type(_aval(true_leaf), _aval(false_leaf)):
            raise _error(where, f"variable {variable!r}{path} is {_aval(true_leaf)} after the "
                                f"true branch and {_aval(false_leaf)} after the false branch; "
                                f"both branches must give it the same shape and dtype")


def if_exp(test, true_thunk, false_thunk):
    """`true_thunk() if test else false_thunk()`; a traced `test` records a `cond`."""
    if not isinstance(test, Tracer):
        return true_thunk() if test else false_thunk()
    return cond(test, lambda: true_thunk(), lambda: false_thunk())


def and_(left, right_thunk):
    """`left and right_thunk()`, elementwise (np.logical_and) when `left` is traced."""
    if isinstance(left, Tracer):
        return np.logical_and(left, right_thunk())
    return left and right_thunk()


def or_(left, right_thunk):
    """`left or right_thunk()`, elementwise (np.logical_or) when `left` is traced."""
    if isinstance(left, Tracer):
        return np.logical_or(left, right_thunk())
    return left or right_thunk()


def not_(value):
    """`not value`, elementwise (np.logical_not) when `value` is traced."""
    if isinstance(value, Tracer):
        return np.logical_not(value)
    return not value


# --- loops --------------------------------------------------------------------------------------

def while_stmt(test_fn, body_fn, values: tuple, *, names: tuple, live: tuple, where: str,
               placeholders=()):
    """`while test_fn(*values): values = body_fn(*values)`, recorded as a graph `while` op
    from the first iteration whose test is traced."""
    values = first = tuple(values)
    saved = _save_stacks(values, placeholders)
    while True:
        test = test_fn(*values)
        if isinstance(test, Tracer):
            _scalar_condition(test, where, "while")
            if values is not first and saved:
                # Generated code: iterations already run pushed onto stacks at trace time,
                # which a traced adjoint loop could not pop; run the whole loop in the graph.
                values = _restore_stacks(first, saved)
            return _graph_loop(current_builder(test), test_fn, body_fn, values, names, live,
                               where, "while loop", placeholders)
        if not test:
            return values
        values = tuple(body_fn(*values))


def _save_stacks(values, placeholders) -> dict:
    """For generated code (`placeholders` True): what each stack (a list, or a TracedStack) in
    `values` holds now, so that a loop can start over in the graph (`_restore_stacks`)."""
    if placeholders is not True:
        return {}
    return {index: list(value) if isinstance(value, SavedValues)
            else (value._builder, value.graph_var, snapshot([value]))
            for index, value in enumerate(values)
            if isinstance(value, (SavedValues, TracedStack))}


def _restore_stacks(values, saved: dict) -> tuple:
    for index, state in saved.items():
        if isinstance(values[index], SavedValues):
            values[index][:] = state
        else:  # what the iterations run so far recorded is left to dead-code elimination
            values[index]._builder, values[index].graph_var, schema = state
            restore(schema)
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
             where: str, placeholders=(), stop: str | None = None):
    """`for item in iterable: values = body_fn(item, *values)`: a graph `while` op over a
    traced array's first axis or a traced range, else a Python loop (unrolled when traced).
    `stop` names the flag a `break` sets: the loop ends once it is true."""
    values = tuple(values)
    stop_index = names.index(stop) if stop is not None else None
    options = (names, targets, live, where, placeholders, stop_index)
    if isinstance(iterable, TracedRange):
        return _range_loop(iterable, body_fn, values, *options)
    if isinstance(iterable, Tracer) and all(_loopable(value) for value in values):
        if iterable.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return _range_loop(TracedRange(0, iterable.shape[0], 1), lambda i, *state: body_fn(
            _item(iterable, i), *state), values, *options, over=iterable)
    first, saved = values, _save_stacks(values, placeholders)
    for item in iterable:
        stopped = values[stop_index] if stop_index is not None else False
        if isinstance(stopped, Tracer) and saved and isinstance(iterable, range):
            # Generated code with a break on a traced value: the whole loop runs in the graph,
            # so that what it pushes onto stacks is saved in the graph too (see while_stmt).
            return _range_loop(TracedRange(iterable.start, iterable.stop, iterable.step),
                               body_fn, _restore_stacks(first, saved), *options[:-1],
                               stop_index, anchor=stopped)
        if isinstance(stopped, Tracer):
            # A break on a traced value: the iterations after it do nothing, in the graph.
            values = if_stmt(stopped, lambda *state: state,
                             lambda *state, item=item: tuple(body_fn(item, *state)), values,
                             names=names, live=names, where=where,
                             placeholders=placeholders)
            continue
        if stopped:
            break
        values = tuple(body_fn(item, *values))
    return values


def _item(iterable, i):
    """`iterable[i]`, a view of it in NumPy: part of an array argument if `iterable` is one."""
    item = iterable[i]
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
                placeholders, stop_index, over=None, anchor=None):
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
                           "one item" for target in targets})
    return results[1:]


def _graph_loop(parent, test_fn, body_fn, values, names, live, where, statement,
                placeholders=(), targets=None):
    """Record the loop as a `while` op carrying the variables assigned before it. `targets`
    maps a for loop's own variables to an example of a value to give them before it."""
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
    carried = [index for index, value in enumerate(values) if _is_defined(value)]

    def full(state):
        merged = list(values)
        for index, value in zip(carried, state):
            merged[index] = value
        return merged

    def loop_test(state):
        return test_fn(*full(state))

    def loop_body(state):
        results = body_fn(*full(state))
        return tuple(kept if _left_dead(placeholders, names[index], results[index], live)
                     else results[index] for index, kept in zip(carried, state))

    init = tuple(values[index] for index in carried)
    carried_names = [names[index] for index in carried]

    def attempt():
        nonlocal init
        promote = {}

        def check(before, after):
            _check_loop_values(where, statement, carried_names, init, before, after, promote,
                               placeholders)

        restore(before_loop)
        try:
            state = traced_while(parent, loop_test, loop_body, init, check)
        except _Retry:
            init = tuple(promote.get(index, value) for index, value in enumerate(init))
            raise
        return state

    return tuple(full(_until_settled(where, len(carried), attempt)))


def _left_dead(placeholders, variable: str, result, live) -> bool:
    """Whether generated code's loop body left `variable` unset (an if in it came back with it
    `Undefined`: read nowhere after the if, in the loop or after it); the loop then carries
    its value on unchanged, which nothing reads."""
    return placeholders is True and not _is_defined(result) and variable not in live


def _check_loop_values(where, statement, names, init, before, after, promote,
                       placeholders) -> None:
    for index, variable in enumerate(names):
        old, new = before[index], after[index]
        if old is None and new is not None and _may_be_placeholder(placeholders, variable):
            promote[index] = _zeros_like_tree(new)  # a flag's value, set by the body
            continue
        if placeholders is True and _lengths_differ(old, new):
            raise _list_length_error(where, variable, statement)
        if not _same_structure(map_arrays(old, lambda leaf: 0), map_arrays(new, lambda leaf: 0)):
            raise _error(where, f"variable {variable!r} changes from {_describe(old)} to "
                                f"{_describe(new)} in one iteration of this {statement} on a "
                                f"traced value; a traced loop must keep each variable's "
                                f"structure, shape and dtype")
        for (path, old_leaf), (_, new_leaf) in zip(leaves_with_paths(old),
                                                   leaves_with_paths(new)):
            old_aval, new_aval = _aval(old_leaf), _aval(new_leaf)
            if same_type(old_aval, new_aval):
                continue
            number = isinstance(init[index], (int, float, complex)) and not is_array(init[index])
            if number and old_aval.shape == new_aval.shape:
                promote[index] = np.asarray(init[index], np.result_type(old_aval.dtype,
                                                                         new_aval.dtype))
                continue
            raise _error(where, f"variable {variable!r}{path} changes from {old_aval} to "
                                f"{new_aval} in one iteration of this {statement} on a traced "
                                f"value; a traced loop must keep each variable's shape and "
                                f"dtype (the loop runs in the graph, one trace for every trip "
                                f"count)")
    if promote:
        raise _Retry()


def set_item(target, index, value):
    """`target[index] = value` for converted code, returning the target's new value: an
    array written with traced values (or at traced indices) becomes traced; a traced boolean
    mask of the target's shape writes through np.where. Containers are written as they are."""
    if not isinstance(target, (np.ndarray, Tracer)):
        target[index] = value
        return target
    if isinstance(index, Tracer) and index.dtype == np.bool_ and index.shape == np.shape(target):
        return np.where(index, value, target)
    return _set_array_item(target, index, value)


def _holds_tracer(value) -> bool:
    if isinstance(value, Tracer):
        return True
    return isinstance(value, (list, tuple)) and any(_holds_tracer(item) for item in value)


def array(value, dtype=None, *, copy=True, **options):
    """`np.array(value, dtype)` for converted code: a (nested) list of traced values becomes
    `np.stack`s of them, a traced value a copy (cast to `dtype`)."""
    if not _holds_tracer(value):
        return np.array(value, dtype=dtype, copy=copy, **options)
    if isinstance(value, Tracer):
        result = value.copy()
    else:
        result = np.stack([array(item) if _holds_tracer(item) else np.asarray(item)
                           for item in value])
    return result if dtype is None else result.astype(dtype)


def asarray(value, dtype=None, **options):
    """`np.asarray(value, dtype)` for converted code (see `array`): a traced value as is."""
    if isinstance(value, Tracer):  # the same array, as NumPy's: it shares the memory
        return value if dtype is None or np.dtype(dtype) == value.dtype else value.astype(dtype)
    if _holds_tracer(value):
        return array(value, dtype)
    return np.asarray(value, dtype=dtype, **options)


def _compare_builtin(builtin, elementwise: str, reduction: str):
    """The builtin max or min for converted code: it compares Python values, which traced ones
    have none of; say which NumPy function does it instead."""
    def compare(*args, **kwargs):
        try:
            return builtin(*args, **kwargs)
        except TracerConversionError:
            raise TracerConversionError(
                f"built-in {builtin.__name__}() compares values as Python values, and a traced "
                f"value has none while tracing: use np.{elementwise}(a, b) for two values, or "
                f"np.{reduction}(x) over an array's elements") from None
    compare.__name__ = builtin.__name__
    return compare


def python_test(value, *, where: str, reason: str, iterable: bool = False):
    """The condition (or, for a for loop, the `iterable`) of a statement left as Python code
    (see transforms/control_flow.py): as it is, unless it is traced, which `reason` says cannot
    be. A traced array is iterable in Python: its length is known while tracing."""
    if isinstance(value, TracedRange) or isinstance(value, Tracer) and not iterable:
        raise _error(where, reason)
    return value


# What converted code calls, by the names transforms/control_flow.py gives them.
HELPERS = {"if_stmt": if_stmt, "while_stmt": while_stmt, "for_stmt": for_stmt, "if_exp": if_exp,
           "and_": and_, "or_": or_, "not_": not_, "range_": range_, "Undefined": Undefined,
           "set_item": set_item, "python_test": python_test, "SavedValues": SavedValues}

# NumPy functions that cannot see traced values in a list, and builtins that compare Python
# values: converted code calls these instead.
NUMPY_REPLACEMENTS = {np.array: array, np.asarray: asarray,
                      max: _compare_builtin(max, "maximum", "max"),
                      min: _compare_builtin(min, "minimum", "min")}
