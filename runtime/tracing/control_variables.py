"""The variables of a converted `if`, `while` or `for` statement, as its traced forms see them.

A variable not assigned yet arrives as `Undefined(name)`. Tracing a statement may find that a
variable must change before it fits the graph (zeros where a branch leaves it unset, a Python
number promoted to the float it becomes): the statement is then traced again (`_Retry`,
`_until_settled`). Errors name the user's file, line and statement (`where`).
"""
from __future__ import annotations

import inspect
import re

import numpy as np

from .control import ControlFlowError, _aval
from .stacks import StackMismatch
from .control_writes import LoopMemoryError
from .tracer import Tracer, map_arrays


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


def named(variable: str) -> str:
    """How errors name `variable`: the value returned, for the variable that converted code's
    returns assign (transforms/control_flow/control_flow.py), which the user never wrote."""
    if re.fullmatch(r"_retval\d*", variable):
        return "the return value"
    return f"variable {variable!r}"


def _error(where: str, message: str) -> ControlFlowError:
    return ControlFlowError(f"{where}\n  {message}")


class CallInHalvesError(ControlFlowError):
    """A called function's derivative held between its sweeps (runtime/derivatives/sweeps.py)
    by a variable of a traced `if` or loop: what it keeps belongs to the graph of one branch or
    iteration, and cannot pass to another. autotrace.function traces the derivative again with
    every call's derivative run whole (autotrace/traced_function.py)."""


def refuse_halves(where: str, variable: str, *values) -> None:
    """Raise CallInHalvesError where one of `values` (a traced statement's variable, before
    or after it) holds a derivative between its sweeps."""
    if any(_holds_generator(value) for value in values):
        raise CallInHalvesError(
            f"{where}\n  variable {variable!r} holds a called function's derivative between "
            "its sweeps, which a traced condition or loop cannot carry")


def _holds_generator(value) -> bool:
    if inspect.isgenerator(value):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_generator(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_generator(item) for item in value.values())
    return False


def _scalar_condition(test: Tracer, where: str, statement: str) -> None:
    if test.shape != ():
        raise _error(where, f"the condition of this `{statement}` is a traced array of type "
                            f"{test.aval}, not a scalar; reduce it first, e.g. with np.any(...) "
                            f"or np.all(...)")


def _zeros_like_tree(tree):
    return map_arrays(tree, lambda leaf: np.zeros(_aval(leaf).shape, _aval(leaf).dtype))


class _Retry(Exception):
    """The branches are traced again (with placeholders, or from promoted loop values)."""


def _until_settled(where: str, variables: int, attempt):
    """`attempt()`, again after each `_Retry` (each settles at least one more variable)."""
    for _ in range(variables + 1):
        try:
            return attempt()
        except _Retry:
            continue
        except (StackMismatch, LoopMemoryError) as error:  # the innermost statement names
            raise _error(where, str(error)) from None  # the user's line
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
