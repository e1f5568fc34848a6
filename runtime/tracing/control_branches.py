"""Traced `if`: the helpers that a converted `if` statement, conditional expression and boolean
operator call (transforms/control_flow/control_flow.py; runtime/tracing/control_statements.py lists them).

Each runs the plain Python statement when its condition is a Python value. When the condition
is traced, `if_stmt` records one graph-level `cond` op (runtime/tracing/control.py) over the
statement's variables; `and`, `or` and `not` become np.logical_and, np.logical_or and
np.logical_not.

Decisions:
- A traced `if` keeps the live variables both branches assign; one assigned in a single branch
  is an error (the graph runs both paths). Dead ones come back `Undefined`.
- A variable one branch leaves a Python number and the other a scalar of another dtype gets
  the dtype NumPy gives the number meeting it (tracing/control_weak.py): `total = 0.0`, and
  `total += np.sum(x)` in one branch of a float32 program, is float32 after the `if`.
- In generated code a list is a stack of saved values. One that a traced branch pushes onto or
  pops from becomes a graph stack (runtime/tracing/stacks.py) that holds what the taken branch pushed.
- In generated code a Python int (a loop's trip count), bool (a flag such as `not _returned1`,
  which gates the statements after a return) or list of ints (an index, `x[[0, 2, 1]]`) that
  both branches leave the same, or one leaves unassigned, stays a Python value: the adjoint
  reads it only under the same condition, and an adjoint `if` or loop on it must unroll as the
  primal one did, not become a traced `cond` whose other branch reads values the primal never
  assigned.
"""
from __future__ import annotations

import linecache
from contextlib import nullcontext

import numpy as np

from ..abstract import same_type
from ..generated_source import SHORT_CIRCUIT_NAME
from ..branch_writes import BranchNumbers
from ..scopes import record_refusal
from .control import (_aval, _describe, _same_structure, cond, current_builder,
                                       traced_cond)
from .control_aliases import TakenOver, holds_numpy_array, may_be_outside_array
from .control_containers import KeptContainers
from .control_scope import ControlFlowError
from .control_held import held_read_only
from .control_variables import (Undefined, _Retry, _error, _is_defined, named,
                                                 refuse_halves,
                                                 _lengths_differ, _list_length_error,
                                                 _may_be_placeholder, _scalar_condition,
                                                 _until_settled, _zeros_like_tree)
from .stacks import SavedValues, TracedStack, new_stack, restore, snapshot
from .tracer import Tracer, is_array, leaves_with_paths, map_arrays
from .weak_scalars import WEAK_DTYPES, WEAK_NUMBERS, either_of, is_weak, make_weak
from .control_weak import as_dtype, either_join


def if_stmt(test, true_fn, false_fn, values: tuple, *, names: tuple, live: tuple, where: str,
            placeholders=False, user_nones: tuple = (), outside: tuple = (), made: tuple = (),
            shared: tuple = ()):
    """`true_fn(*values)` if `test` else `false_fn(*values)`: the new values of `names`.
    `outside`: the variables that may hold a NumPy array the function does not make
    (control_aliases.may_be_outside_array); `made`: those holding a list or dict it makes,
    which the `if` may change in place, `shared`: those of them another name holds too
    (control_containers.py).

    With `placeholders` (True for code autotrace generated, which reads a variable assigned
    in one branch only under the same condition; or the names of such variables, the flags
    that break, continue and return became), such a variable gets zeros of its shape on the
    other path instead of being an error. `user_nones` are variables the user's own code sets
    to None: there None is a value (`if n is None:`), so one None on one path only is the
    error it is in the user's traced function, not a placeholder.
    """
    if not isinstance(test, Tracer):
        return true_fn(*values) if test else false_fn(*values)
    _scalar_condition(test, where, "if")
    keep = [variable in live for variable in names]
    fixes: dict = {}  # (branch, index) -> what makes that result fit the other branch's
    stacks: dict = {}  # index -> the TracedStack a list pushed onto or popped in a branch became
    saved: dict = {}  # index -> the snapshot of a TracedStack before the branches are traced
    counts: dict = {}  # index -> a Python int or bool both branches leave the same
    numbers: dict = {}  # side -> {index: a Python int or bool the branch left}
    weak: dict = {}  # side -> {index: a Python number (weak) the branch left}
    left: dict = {}  # side -> what the branch left in each variable, before `fixes`
    eithers: dict = {}  # index -> what makes its pair an either-value (control_weak.either_join)
    # index -> the side that set a Python object generated code sets in one branch only
    set_by: dict = {}

    taken_over = TakenOver(values, names, outside)
    state = BranchNumbers(where, "`if`")  # the Python numbers of objects' state
    kept = KeptContainers(values, names, where, made, (true_fn, false_fn), shared)
    for index in kept.indexes:  # written back after the `if`, live or not: another name holds it
        keep[index] = True

    def branch(function, side):
        def run(*operands):
            results = _traced_branch(kept.noting(function, side), operands, side, where,
                                     "`if`", held=placeholders is not True, state=state)
            taken_over.note(results)
            left[side] = results
            numbers[side] = {index: value for index, value in enumerate(results)
                             if _is_python_ints(value)}  # before they become arrays
            weak[side] = {index: value if type(value) in WEAK_NUMBERS
                          else WEAK_DTYPES[value.dtype](0) for index, value in enumerate(results)
                          if is_weak(value)}
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
            if not keep[index] or index in counts or index in eithers or index in set_by:
                continue
            count = _same_python_value(numbers, index, in_true, in_false,
                                       none_is_unset=variable not in user_nones)
            if placeholders is True and count is not None and variable not in user_nones:
                # A loop's trip count in generated code stays a Python int, so that the
                # adjoint loop is unrolled too and pops, one by one, what the branch pushed;
                # a flag stays a Python bool, so that the adjoint `if` on it stays Python too.
                counts[index], converted = count, True
                continue
            if _may_be_placeholder(placeholders, variable):
                filled = _placeholders(index, values[index], in_true, in_false,
                                       none_is_value=variable in user_nones)
                needed.update(filled)
                setter = not next(iter(filled))[0] if filled else None
                if placeholders is True and setter is not None and _holds_no_arrays(
                        in_true if setter else in_false):
                    # (the log of a call's writes, `_written1 = state_writes_log()`, begun
                    # in the branch that makes the call: the other branch never reads it,
                    # and each trace of the branch begins a new one: the last is kept)
                    set_by[index] = setter
                if any(key[1] == index for key in needed):
                    continue
            either = either_join({side: left[side][index] for side in (True, False)}, where)
            if either is not None:
                sides, eithers[index] = either
                needed.update({(side, index): fix for side, fix in sides.items()})
                continue
            joined = _weak_join(weak, index, in_true, in_false) or (
                placeholders is True and SHORT_CIRCUIT_NAME.match(variable) is not None
                and _short_circuit_join(test, values[index], index, in_true, in_false))
            if joined:
                needed.update(joined)
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

    results = kept.write_back(taken_over.refuse_writes(
        _until_settled(where, len(names) + 1, attempt)))
    state.check()
    # a number both branches leave a Python number (or a traced one, weak) is one after the if
    results = [make_weak(value) if index in weak[True] and index in weak[False]
               else eithers[index](value) if index in eithers
               else left[set_by[index]][index] if index in set_by else value
               for index, value in enumerate(results)]
    return tuple(counts[index] if index in counts else value if kept else Undefined(variable)
                 for index, (value, kept, variable) in enumerate(zip(results, keep, names)))


class BranchValueError(ControlFlowError, ValueError):
    """A branch of a traced `if` raised NumPy's ValueError while it was traced (a shape error
    in a branch these inputs do not take); still a ValueError for code that catches one."""


class BranchIndexError(ControlFlowError, IndexError):
    """A branch of a traced `if` raised NumPy's IndexError while it was traced."""


def _traced_branch(function, operands: tuple, side: bool, where: str, statement: str,
                   held: bool = True, state: BranchNumbers | None = None):
    """`function(*operands)`, a branch being traced; NumPy's errors of shapes and indices there
    become `_branch_error`s. With `held` (the user's code), the NumPy arrays it reaches are
    read-only meanwhile (control_held.py); `state` traces it from the Python numbers of
    objects' state as they were before the statement (branch_writes.py)."""
    try:
        with held_read_only((function,) if held else (), where, statement), \
                state.branch(side) if state is not None else nullcontext():
            return function(*operands)
    except (ValueError, IndexError) as error:
        if type(error).__module__.startswith("autotrace"):
            raise  # autotrace's own errors say where and what already
        # NumPy's error is in the message and stays the __context__, not printed twice
        raise _branch_error(where, side, error, statement).with_traceback(
            error.__traceback__) from None


def _branch_error(where: str, side: bool, error: Exception, statement: str = "`if`"):
    """The error of a branch that fails while it is traced: both branches of a traced `if` are
    traced, as tf.function traces them, also the one that NumPy would not run for these inputs,
    so a branch that fails for these shapes is an error where the `if` is, naming the branch
    and its line (its traceback is the branch's, which goes on to the failing line)."""
    frame = error.__traceback__.tb_next or error.__traceback__  # the branch's own statement
    filename, line = frame.tb_frame.f_code.co_filename, frame.tb_lineno
    text = linecache.getline(filename, line).strip()
    kind = BranchValueError if isinstance(error, ValueError) else BranchIndexError
    return kind(f"{where}\n  " + (
        f"the {'true' if side else 'false'} branch of this traced {statement} fails while it is "
        f"traced, at {filename}:{line}: {text}\n  {type(error).__name__}: {error}\n  A traced "
        f"condition traces both branches, also one that these inputs do not take (NumPy would "
        f"not run it), so both must be valid for the shapes and dtypes of this call: fix that "
        f"branch, or, where it is meant for other shapes, test the shapes in Python "
        f"(`if x.shape[0] == 4:` is not traced)"))


def _pushed_or_popped(before, in_true, in_false) -> bool:
    """Whether a branch pushed onto or popped from the stack `before`, or made it a traced
    stack (in a loop or branch of its own)."""
    return isinstance(before, SavedValues) and any(
        isinstance(after, TracedStack) or isinstance(after, list) and len(after) != len(before)
        for after in (in_true, in_false))


def _is_python_ints(value) -> bool:
    """A Python int or bool (NumPy scalars are not ints), or a list or tuple of them: an index
    that the A-normal form named (`_t3 = [0, 2, 1]`; `x[_t3]` in a branch, and its adjoint
    under the same condition, read it as the index it is)."""
    if type(value) in (list, tuple):  # (not a stack of saved values, a list subclass)
        return all(_is_python_ints(item) for item in value)
    return isinstance(value, int)


def _same_python_value(numbers: dict, index: int, in_true, in_false, none_is_unset: bool):
    """The Python int or bool both branches leave in variable `index`, or one leaves where the
    other leaves it unset (generated code reads it only under the same condition); else None.
    A bool counts as unset on the other side only where it is unassigned, or None where
    `none_is_unset` (the None generated code starts a saved name with): a variable the user's
    code sets to None before the `if` is one that code may read on either path
    (`flag = None`, `if flag:`)."""
    true_value, false_value = numbers[True].get(index), numbers[False].get(index)
    if true_value is None and _is_unset(in_true, false_value, none_is_unset):
        true_value = false_value
    if false_value is None and _is_unset(in_false, true_value, none_is_unset):
        false_value = true_value
    if true_value is None or type(true_value) is not type(false_value):
        return None
    return true_value if true_value == false_value else None


def _is_unset(value, other_side, none_is_unset: bool) -> bool:
    if isinstance(other_side, bool) and not none_is_unset:
        return not _is_defined(value)
    return not _is_set(value)


def _is_set(value) -> bool:
    """Defined and not None (generated code starts a variable as None before a branch sets it)."""
    return value is not None and _is_defined(value)


def _placeholders(index: int, before, in_true, in_false, none_is_value=False) -> dict:
    """For generated code: make a variable one branch leaves unassigned (or None) zeros
    there, and the items of a list (of gradients) unset on one side zeros there. Where
    `none_is_value` (a variable the user's code may set to None), only an unassigned one
    takes the other side's value as zeros (or None)."""
    is_set = _is_defined if none_is_value else _is_set
    true_set, false_set = is_set(in_true), is_set(in_false)
    if true_set != false_set:
        side = not true_set
        filler = _zeros_like_tree(in_true if true_set else in_false)
        return {(side, index): lambda value: filler}
    if none_is_value:
        return {}
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


def _holds_no_arrays(value) -> bool:
    """Whether `value` is an object of the helpers generated code calls (a log of state
    writes, runtime/derivatives/) that holds no array or number, traced or not: not a user's
    object, which a traced condition cannot choose (_check_variable)."""
    return _is_set(value) and type(value).__module__.startswith(
        "autotrace.runtime.derivatives.") and not callable(value) and not leaves_with_paths(value)


def _weak_join(weak: dict, index: int, in_true, in_false) -> dict:
    """Where one branch leaves a variable a Python number (weak, as NumPy 2 and JAX take it) and
    the other a scalar of another dtype (`total = 0.0` before the `if`, `total += x[i]` in one
    branch): the fixes that give both sides the dtype NumPy gives the number meeting that
    scalar (float32 for a float32 one), as the eager code has after its next use of it."""
    sides = {True: in_true, False: in_false}
    if not any(index in weak[side] for side in sides) or not all(
            is_array(value) and _aval(value).shape == () for value in sides.values()):
        return {}
    joined = np.result_type(*(weak[side][index] if index in weak[side] else _aval(value).dtype
                              for side, value in sides.items()))
    return {(side, index): lambda value: as_dtype(value, joined)
            for side, value in sides.items() if _aval(value).dtype != joined}


def _short_circuit_join(test, before, index: int, in_true, in_false) -> dict:
    """`_and1 = a` then `if _and1: _and1 = b` (generated code's `a and b`; `or` likewise: the
    caller checks the name): where one branch leaves the test as it was and the other a
    number of another dtype (a bool and a float), the fixes that give both the dtype they
    promote to, as a traced `and`/`or` gives (_short_circuit), where that cast keeps each
    value."""
    sides = {True: in_true, False: in_false}
    if before is not test or not all(is_array(value) and _aval(value).shape == ()
                                     for value in sides.values()):
        return {}
    joined = np.result_type(*(_aval(value).dtype for value in sides.values()))
    if not all(np.can_cast(_aval(value).dtype, joined, "safe") for value in sides.values()):
        return {}
    return {(side, index): lambda value: as_dtype(value, joined)
            for side, value in sides.items() if _aval(value).dtype != joined}


def _check_variable(where: str, variable: str, in_true, in_false,
                    placeholders=False) -> None:
    refuse_halves(where, variable, in_true, in_false)
    true_defined, false_defined = _is_defined(in_true), _is_defined(in_false)
    if true_defined != false_defined:
        branch = "true" if true_defined else "false"
        raise _error(where, f"{named(variable)} is assigned in the {branch} branch only, "
                            f"and used after the if. A traced condition runs both branches in "
                            f"the graph: assign {variable!r} in both branches, or before the if")
    shapes = (map_arrays(in_true, lambda leaf: 0), map_arrays(in_false, lambda leaf: 0))
    if placeholders is True and _lengths_differ(in_true, in_false):
        raise _list_length_error(where, variable, "if")
    objects = [] if in_true is in_false else [_class_of_object(v) for v in (in_true, in_false)]
    if any(objects):
        raise _error(where, f"variable {variable!r} is an object of class "
                            f"{next(filter(None, objects))} after the if; a traced condition can "
                            f"only choose between arrays: choose the object's arrays under the "
                            f"condition and make the object after the if")
    if not _same_structure(*shapes):
        refusal = record_refusal(in_true, in_false, "if")
        if refusal is not None:  # (a record generated code keeps: no user's variable)
            raise _error(where, refusal)
        raise _error(where, f"{named(variable)} is {_describe(in_true)} after the true "
                            f"branch and {_describe(in_false)} after the false branch; a traced "
                            f"condition can only choose between arrays of one shape and dtype")
    for (path, true_leaf), (_, false_leaf) in zip(leaves_with_paths(in_true),
                                                  leaves_with_paths(in_false)):
        if not same_type(_aval(true_leaf), _aval(false_leaf)):
            raise _error(where, f"{named(variable)}{path} is {_aval(true_leaf)} after the "
                                f"true branch and {_aval(false_leaf)} after the false branch; "
                                f"both branches must give it the same shape and dtype")


def _class_of_object(value) -> str | None:
    """The name of the class of `value` where it is an object of the user's (no array, number,
    container or function), else None."""
    module = type(value).__module__
    if module == "builtins" or module.startswith(("numpy", "autotrace")) or callable(value) \
            or not hasattr(value, "__dict__"):
        return None
    return type(value).__qualname__


def if_exp(test, true_thunk, false_thunk, where: str = "a conditional expression",
           outside: bool = False):
    """`true_thunk() if test else false_thunk()`; a traced `test` records a `cond`. `where`: the
    user's file, line and expression, for errors. `outside`: whether it may give a NumPy array
    the function does not make (control_aliases.may_be_outside_array)."""
    if not isinstance(test, Tracer):
        return true_thunk() if test else false_thunk()
    expression, taken_over, weak, left, fixes = "conditional expression", [], [], {}, {}
    state = BranchNumbers(where, expression)

    def branch(thunk, side):
        result = _traced_branch(thunk, (), side, where, expression, state=state)
        taken_over.append(outside and holds_numpy_array(result))
        weak.append(is_weak(result))
        left[side] = result
        return fixes[side](result) if side in fixes else result

    def attempt():
        return cond(test, lambda: branch(true_thunk, True), lambda: branch(false_thunk, False))
    error = None
    try:
        result = attempt()
    except ControlFlowError as caught:
        error = caught
    if error is not None or len(set(weak)) == 2 or any(
            either_of(value) is not None for value in left.values()):
        # A Python number on one side and another kind on the other (`1.0 if c else 2`,
        # `0.1 if c else x[0]`; `2.0 if c else np.float64(3.0)`, which the cond takes as one
        # dtype, losing that the number is weak), or an either-value on a side (`c if s else
        # 1.0` after `c = 3.0 if t else np.float64(2.0)`): joined as a traced `if` statement
        # joins them, else refused.
        made = _expression_join(left, where)
        if made is None and error is not None:
            raise error
        if made is not None:
            fixes.update(made[0])
            taken_over.clear(), weak.clear()
            result = made[1](attempt())
    state.check()
    if any(taken_over):
        may_be_outside_array(result)
    # a Python number on both sides (or a traced one, weak) is one after it, as after an `if`
    return make_weak(result) if all(weak) and isinstance(result, Tracer) else result


def _expression_join(results: dict, where: str):
    """(fixes for each side, what makes the joined value) for a conditional expression whose
    sides are numbers of different kinds, at least one a Python number; else None."""
    if len(results) != 2:
        return None
    either = either_join(results, where)
    if either is not None:
        return either[0], lambda pair: either[1](pair)
    if not all(is_weak(value) and np.ndim(value) == 0 for value in results.values()):
        return None
    joined = np.result_type(*(WEAK_DTYPES[value.dtype](0) if isinstance(value, Tracer)
                              else value for value in results.values()))
    return ({side: lambda value: as_dtype(value, joined) for side in results},
            lambda value: value)


def and_(left, right_thunk):
    """`left and right_thunk()`: where `left` is a traced number, a `cond` that computes the
    right side only where left is true, as Python does (`i < n and a[i] > 0` reads a[i] only
    for an i in range), and gives the operand Python gives (`(x[0] > 0) and x[1]` is x[1]
    where x[0] > 0), in the dtype both promote to; elementwise (np.logical_and) for a traced
    array."""
    if isinstance(left, Tracer):
        if left.ndim == 0:
            return _short_circuit(left, right_thunk, True)
        return np.logical_and(left, right_thunk())
    return left and right_thunk()


def or_(left, right_thunk):
    """`left or right_thunk()`: where `left` is a traced number, a `cond` that computes the
    right side only where left is false, and gives the operand Python gives (`np.sum(x) or
    5.0` is the sum where it is not zero), as and_ does; elementwise (np.logical_or) for a
    traced array."""
    if isinstance(left, Tracer):
        if left.ndim == 0:
            return _short_circuit(left, right_thunk, False)
        return np.logical_or(left, right_thunk())
    return left or right_thunk()


def _short_circuit(left, right_thunk, right_where: bool):
    """`left and right` (right_where True) or `left or right` (False), left a traced number:
    the right operand where left's truth is `right_where`, else left, computing right only
    there. The two are given in the dtype they promote to (a bool and a float: a float)."""
    common = []  # the dtype the right side promotes with left to, once it is traced

    def right():
        value = right_thunk()
        if np.ndim(value) != 0:  # an array on the right: elementwise, as before
            raise _ElementwiseRight
        # (a Python int out of an integer left's range, `np.max(a_uint8) or -1`: both int64)
        fits = not isinstance(value, int) or _fits(value, left.dtype)
        common.append(np.result_type(left.dtype, getattr(value, "dtype", value) if fits
                                     else np.asarray(value).dtype))
        if common[0] == bool:  # (two truths: a new one, a NumPy bool as Python's)
            return np.logical_and(value, True)
        return as_dtype(value, common[0])  # (a number: a NumPy scalar, as Python's is one)

    def left_alone():
        if common[0] == bool:
            return np.logical_and(left, True)
        return left if left.dtype == common[0] else left.astype(common[0])
    truth = left if right_where else np.logical_not(left)
    try:
        return cond(truth, right, left_alone)  # (right traced first: common known)
    except _ElementwiseRight:
        combine = np.logical_and if right_where else np.logical_or
        return combine(left, right_thunk())


def _fits(number: int, dtype) -> bool:
    """Whether the Python int `number` is one of the integer `dtype`'s (any, for another)."""
    if np.dtype(dtype).kind not in "iu":
        return True
    limits = np.iinfo(dtype)
    return limits.min <= number <= limits.max


class _ElementwiseRight(Exception):
    """The right side of a traced `and`/`or` is an array: combined elementwise."""


def not_(value):
    """`not value`, elementwise (np.logical_not) when `value` is traced."""
    if isinstance(value, Tracer):
        return np.logical_not(value)
    return not value
