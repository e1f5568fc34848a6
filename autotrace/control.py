"""`autotrace.cond`, `autotrace.while_loop` and `autotrace.print`: control flow and printing
that one trace of an `autotrace.function` serves for every value.

`autotrace.function` converts a Python `if`, `while` or `for` on a traced value into these ops
by itself; they are here to call directly too. Python's `print` runs while tracing only (and
shows the tracer); `autotrace.print` prints on every call of the traced graph. On concrete
values (outside any trace) they are the plain Python statements.

`autotrace.grad` of a function that calls `cond` or `while_loop` directly is not supported:
it raises "no derivative rule for autotrace.control.cond". Write the Python `if` or `while`
instead: the gradient transforms differentiate it, and tracing converts it. (A function whose
source cannot be read is differentiated from a trace, where they are `if` and `while`
statements again: see autotrace/from_trace.py.)
"""
from __future__ import annotations

import functools
from typing import Callable

from autotrace.runtime.tracing import control


class _WithoutDerivative:
    """A function the AD transforms see as a callable with no derivative rule."""

    def __init__(self, function: Callable):
        functools.update_wrapper(self, function)
        self._function = function
        self.__autotrace_no_rule_hint__ = (
            "it has no gradient. Write a Python `if` or `while` instead: autotrace.grad "
            "differentiates it, and autotrace.function converts it into the same graph op")

    def __call__(self, *args, **kwargs):
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<autotrace.{self.__name__}>"


def cond(predicate, true_fn: Callable, false_fn: Callable, *operands):
    """`true_fn(*operands)` if `predicate` is true, else `false_fn(*operands)`.

    When `predicate` is traced, both branches are traced over `operands` and recorded as one
    graph-level `cond` op, so the same trace serves calls that take either branch.

    Arguments:
        predicate: a Python or NumPy bool, or a traced scalar (`x.sum() > 0`).
        true_fn, false_fn: functions of `*operands`; when traced, they must return the same
            structure (tuples, lists, dicts) of arrays with the same shapes and dtypes. They may
            use other traced values of the enclosing function; those become inputs of the op.
        operands: pytrees of arrays passed to the branch taken.

    Returns:
        what the branch taken returns.

    Examples:
        >>> @autotrace.function
        ... def relu_or_square(x):
        ...     return autotrace.cond(x.sum() > 0, lambda x: x, lambda x: x * x, x)
        >>> relu_or_square(np.ones(3)), relu_or_square(-np.ones(3))   # traced once
        (array([1., 1., 1.]), array([1., 1., 1.]))
    """
    return control.cond(predicate, true_fn, false_fn, *operands)


def while_loop(cond_fn: Callable, body_fn: Callable, init_vals):
    """`vals = init_vals; while cond_fn(vals): vals = body_fn(vals)`, returning `vals`.

    When a loop value or the condition is traced, `cond_fn` and `body_fn` are traced once over
    the loop values and recorded as one graph-level `while` op: the trip count may depend on
    the data. Python numbers among `init_vals` become 0-d NumPy arrays there.

    Arguments:
        cond_fn: loop values -> a scalar bool (traced or not).
        body_fn: loop values -> new loop values, with the same structure, shapes and dtypes.
        init_vals: the first loop values: an array or a pytree of arrays and numbers.

    Returns:
        the loop values once `cond_fn` is false.

    Examples:
        >>> @autotrace.function
        ... def halvings(x):      # how many halvings bring max|x| below 1
        ...     return autotrace.while_loop(lambda s: np.max(np.abs(s[1])) >= 1.0,
        ...                                 lambda s: (s[0] + 1, s[1] / 2.0), (0, x))[0]
        >>> halvings(np.array([3.0])), halvings(np.array([100.0]))      # traced once
        (np.int64(2), np.int64(7))
    """
    return control.while_loop(cond_fn, body_fn, init_vals)


def print_(*values, sep: str = " ", end: str = "\n") -> None:
    """Print `values` like Python's `print`, on every call of a traced function.

    Inside `autotrace.function`, Python's print runs only while tracing (and shows tracers);
    this one becomes a `print` op of the graph that prints the runtime values on every call.
    Outside a trace it prints at once. With only Python values it is recorded too: it prints
    on every call, in the branch of a traced `if` that runs, as tf.print does.

    Arguments:
        values: arrays (traced or not) and other objects, printed with `str`; a Variable
            prints its value, and traced values in tuples, lists, dicts and dataclasses
            their values, by `repr` as Python prints a container's items.
        sep, end: as for Python's print.

    Returns:
        None.

    Examples:
        >>> @autotrace.function
        ... def total(x):
        ...     s = x.sum()
        ...     autotrace.print("total:", s)
        ...     return s
        >>> _ = total(np.ones(3)); _ = total(np.ones(3))   # traced once, printed on both calls
        total: 3.0
        total: 3.0
    """
    control.print_values(*values, sep=sep, end=end)


print_.__name__ = print_.__qualname__ = "print"
cond = _WithoutDerivative(cond)
while_loop = _WithoutDerivative(while_loop)
print_ = _WithoutDerivative(print_)
