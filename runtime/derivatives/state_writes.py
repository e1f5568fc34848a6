"""Writes into the state of objects a differentiated function is given or reads from outside.

`self.n += 1`, `self.n_in = X.shape[1]`, `self.stats["calls"] += 1`: a layer counts its calls,
makes its parameters on the first one, keeps what it saw. Generated code writes them with
these helpers (transforms/state_writes.py rewrites the statements), once per call of the
user's function, as Python would; `where` is the user's file and line ("layer.py:12"), which
an error names. The values written carry no gradient (the transform refuses
one that does). An array held in the state is not changed in place: its aliases, read earlier
in the call, are what the derivative's adjoint sweep reads.
"""
from __future__ import annotations

import numpy as np

from ..ops_index import holds_traced
from ..python_operators import AUGMENTED_OPERATORS

class StateWriteError(ValueError):
    """A write into an object's state that generated code cannot make as Python would."""


def assign_attribute(owner, attribute: str, value, symbol: str | None = None,
                     where: str = "") -> None:
    """`owner.attribute = value`, or `owner.attribute op= value` for the operator `symbol`."""
    if symbol is not None:
        value = _updated(getattr(owner, attribute), value, symbol,
                         f"{type(owner).__name__}.{attribute}", where)
    _check_untraced(value, f"{type(owner).__name__}.{attribute}", where)
    setattr(owner, attribute, value)


def assign_item(container, key, value, symbol: str | None = None, where: str = "") -> None:
    """`container[key] = value` (or `op=`) where container is state held by an object: a
    dict, a list, or another object with items, but not an array, whose memory names read
    earlier in the call may share."""
    if isinstance(container, np.ndarray) or hasattr(container, "__array_namespace__"):
        raise StateWriteError(
            f"{where}: autotrace cannot write into an array held by an object "
            f"(an item of a {type(container).__name__}) in a differentiated function: values "
            "read from it earlier would change under the derivative; assign a new array to "
            "the attribute instead (self.x = np.where(...), or a copy with the item set)")
    if symbol is not None:
        value = _updated(container[key], value, symbol, f"an item {key!r}", where)
    _check_untraced(value, f"an item {key!r}", where)
    container[key] = value


def call_method(owner, method: str, arguments: tuple, where: str = "") -> None:
    """`owner.method(*arguments)` for its effect on state an object holds (`append`,
    `extend`, `insert`, `update`, ...), its result unused; not on an array."""
    if isinstance(owner, np.ndarray) or hasattr(owner, "__array_namespace__"):
        raise StateWriteError(
            f"{where}: autotrace cannot change an array held by an object in place "
            f"(.{method}) in a differentiated function: values read from it earlier would "
            "change under the derivative; assign a new array to the attribute instead")
    _check_untraced(arguments, f"the argument of .{method}", where)
    getattr(owner, method)(*arguments)


def _updated(current, value, symbol: str, what: str, where: str):
    in_place, plain = AUGMENTED_OPERATORS[symbol]
    if isinstance(current, np.ndarray) and current.ndim > 0:
        raise StateWriteError(
            f"{where}: autotrace cannot change the array {what} in place ({symbol}=) in a "
            "differentiated function: values read from it earlier would change under the "
            f"derivative; assign it a new array instead (x = x {symbol} value)")
    return in_place(current, value) if isinstance(current, (list, dict)) else plain(
        current, value)


def _check_untraced(value, what: str, where: str) -> None:
    if holds_traced(value):
        raise StateWriteError(
            f"{where}: a traced value written into the state of an object ({what}) would "
            "outlive the trace autotrace.function made of it; keep state that a traced "
            "function changes in an autotrace.Variable, or compute it outside")
