"""NumPy arrays that meet traced values in converted code: written with one, indexed by one.

A NumPy array made while tracing (`y = np.zeros(3)`, a global `W`) is concrete: NumPy shows
neither its making nor `y[i] = t` nor `W[t]` to the tracer.

- Writes. Converted code writes `y = set_item(y, i, t, where=...)` (control_statements.py):
  a concrete `y` written with a traced value becomes a new traced value, bound to `y` alone.
  NumPy's write changes memory that other names may share; where one may,
  `refuse_unfollowed_write` raises instead of giving them the old contents. The source says
  most (transforms/analysis/write_sharing.py: another name read afterwards shares it, an
  argument's, one the function does not make), and its refusal comes in as `unfollowed`; a
  view of memory that something else holds (`.base`) is refused when the write runs.
- Reads. Converted code reads `indexable(W)[t]` where the index may be traced: a NumPy array
  gives a stand-in whose `[...]` with a traced index (an int, an index array, a boolean mask)
  indexes W as a graph constant. Where NumPy's result is a view of W (a traced int selecting
  a row), a write into it is refused: it would change W, which is no traced value.
- `np.take(W, t)`: NumPy hands only W to `__array_function__`, not the indices; `take`
  hands the call to the traced indices.
"""
from __future__ import annotations

import itertools
import sys

import numpy as np

from .arguments import arrays_overlap
from .control_aliases import holds_numpy_array
from ..primitives.memory import OTHER_NAME, held_values, holds_no_arrays, memory_owner
from .control_loops import TracedRange
from .control_scope import ControlFlowError
from ..primitives.index import as_array, getitem, holds_traced, indexes_a_view
from ..primitives.registry import is_traced
from ..user_frames import code_site
from .views import Memory

_VIEW_OF_HELD_MEMORY = (
    "this writes traced values into a NumPy array that is a view of another one (its .base), "
    "which other names or objects hold: autotrace makes this name alone a new traced value, "
    "and they would keep the old contents. Make the array traced where it is made "
    "(np.zeros_like(x, shape=...), x a traced value), or write into a copy (a = a.copy())")

_WRITE_INTO_INDEXED = (
    "{site}: this indexed the NumPy array {shape} with a traced integer, which in NumPy gives "
    "a view of it; a write into the view would change the array, which is no traced value, "
    "so autotrace cannot follow it. Make the array traced where it is made "
    "(np.zeros_like(x, shape=...)), or write into a copy of the item (row = A[i].copy())")


def writes_traced(index, value) -> bool:
    """Whether `target[index] = value` writes a traced value or at a traced index."""
    pieces = index if isinstance(index, tuple) else (index,)
    return holds_traced(value) or any(holds_traced(piece) for piece in pieces)


def refuse_unfollowed_write(target: np.ndarray, where: str, unfollowed: str | None,
                            holders: tuple = ()) -> None:
    """Raise where the NumPy array `target`, about to become a new traced value by a traced
    write at `where` (the user's line), shares memory that autotrace would not update:
    `unfollowed` is the source's reason (transforms/analysis/write_sharing.py), else `target`
    is checked for a view of an array that something else holds. `holders`: functions giving
    the values of the names the reason names, where the source says none is `target` or a
    view of it (buffers exchanged, `u, un = un, u`): the reason holds only where one of them
    may hold an array (a list, an object)."""
    if unfollowed is not None and holders and all(
            holds_no_arrays(value) for value in _values(holders)):
        return
    if unfollowed is None:
        base = target.base
        # (the references: the view's own, `base` and getrefcount's argument)
        if base is None or isinstance(base, np.ndarray) and sys.getrefcount(base) <= 3:
            return
        unfollowed = _VIEW_OF_HELD_MEMORY
    raise ControlFlowError(f"{where}\n  {unfollowed}")


def _values(functions):
    """The values `functions` give, those of names not yet bound left out (they hold nothing)."""
    for value_of in functions:
        try:
            yield value_of()
        except NameError:
            continue


def refuse_traced_writes(test, arrays: tuple, refusals: tuple, sharers: tuple = ()):
    """`test`, the condition of an `if` or loop (a `for` loop's iterable) whose body writes
    into `arrays` where other names may share their memory (`refusals`, the errors:
    transforms/control_flow/concrete_writes.py; `sharers`, for each, None where it is refused
    in any case, or the other names that may share it, each with a function giving its value).
    Where `test` is traced the statement becomes a graph op, which takes a NumPy array among
    them as a traced value, every write into it traced: raise for it, where another name does
    share its memory now."""
    if is_traced(test) or isinstance(test, TracedRange):
        for array, refusal, others in itertools.zip_longest(arrays, refusals, sharers):
            if not holds_numpy_array(array) or OTHER_NAME in refusal and \
                    type(array) is not np.ndarray:
                continue  # (one the source saw no other name share: written as an array)
            other = _sharer(array, others)
            if other is not None:
                raise ControlFlowError(refusal.replace(OTHER_NAME, repr(other)))
    return test


def _sharer(written, others) -> str | None:
    """The name of `others` ((name, a function giving its value), ...) whose value holds an
    array that shares memory with one `written` holds (or is); "" where `others` is None (the
    write is refused in any case). A name not yet assigned holds nothing yet."""
    if others is None:
        return ""
    mine = [value for value in held_values([written]) if type(value) is np.ndarray]
    for other, value_of in others:
        try:
            value = value_of()
        except NameError:
            continue
        if any(arrays_overlap(array, held) for held in held_values([value])
               if type(held) is np.ndarray for array in mine
               if memory_owner(array) is memory_owner(held)):
            return other
    return None


class _Indexed:
    """A NumPy array standing where converted code indexes it (`indexable`)."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    def __getitem__(self, index):
        if not holds_traced(index):
            return self.array[index]
        result = getitem(self.array, index)  # the array becomes a graph constant
        if indexes_a_view(self.array, index):
            file, line = code_site() or ("<unknown>", 0)
            result._memory, result._seen = Memory(_WRITE_INTO_INDEXED.format(
                site=f"{file}:{line}", shape=f"of shape {self.array.shape}")), 0
        return result


def indexable(value):
    """What converted code indexes for `value[index]` where the index may be traced: a NumPy
    array's stand-in, which indexes it by a traced index too; any other value as it is."""
    return _Indexed(value) if type(value) is np.ndarray else value


def take(a, indices, *args, **kwargs):
    """np.take for converted code: where only `indices` is traced, the tracer takes the call
    (NumPy asks `a` and `out` alone); a list of traced values is taken from as the array NumPy
    reads it as."""
    a = as_array(a, None)
    if is_traced(indices) and not is_traced(a):
        return type(indices).__array_function__(indices, np.take, (type(indices),),
                                                (a, indices, *args), kwargs)
    return np.take(a, indices, *args, **kwargs)
