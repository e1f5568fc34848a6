"""Calls whose effect autotrace cannot see: functions with no rule and no source it reads,
called for what they do with a value that carries gradient (object_state.check_calls refuses
them before running, check_state_writes when the callee is known only then), and what the
methods of Python's containers keep of what they are given.
"""
from __future__ import annotations

import collections
import functools
import queue

import numpy as np

from .calls import classify_value
from ..errors import TransformError


# Python's containers, whose methods are written in C or in the standard library.
CONTAINERS = (collections.abc.MutableSequence, collections.abc.MutableMapping,
              collections.abc.MutableSet, queue.Queue, queue.SimpleQueue)
# Methods of Python's containers that store what they are given.
STORING_METHODS = frozenset({"append", "appendleft", "extend", "extendleft", "insert", "add",
                             "update", "setdefault", "put", "put_nowait", "__setitem__",
                             "__iadd__"})
# Methods of Python's containers that keep nothing they are given.
READING_METHODS = frozenset({"index", "count", "get", "copy", "discard", "remove",
                             "isdisjoint", "issubset", "issuperset", "__getitem__",
                             "__contains__", "__len__"})


def keeps_nothing(function) -> bool:
    """Whether `function`, called for what it does, keeps nothing it is given: autotrace's own
    (autotrace.print, summaries), NumPy's that write a file."""
    module = (getattr(function, "__module__", None) or "").split(".")[0]
    return module == "autotrace" or module == "numpy" and getattr(
        function, "__name__", "").startswith("save")


def partial_parts(callee) -> tuple:
    """(the function a functools.partial `callee` calls in the end, through partials of
    partials, how many positional arguments the partials hold, the keywords they give); any
    other callee as it is, holding none."""
    held, keywords = 0, ()
    while isinstance(callee, functools.partial):
        held += len(callee.args)
        keywords += tuple(callee.keywords)
        callee = callee.func
    return callee, held, keywords


def partial_target(callee):
    """The function a functools.partial calls in the end (through partials of partials); any
    other callee as it is."""
    return partial_parts(callee)[0]


def through_partials(callee, varied: tuple, read_after: tuple | None) -> tuple:
    """(the callable a functools.partial `callee` calls in the end, `varied` and `read_after`
    for that callable's arguments): those the partials hold come first, counted as carrying
    gradient and as read after the call (which may read them through another name); any
    other callee as it is."""
    callee, held, keywords = partial_parts(callee)
    if not held and not keywords:
        return callee, varied, read_after

    def shifted(which):
        return tuple(range(held)) + keywords + tuple(
            w + held if isinstance(w, int) else w for w in which)
    return callee, shifted(varied), None if read_after is None else shifted(read_after)


def has_unseen_effect(callee, varied: tuple) -> bool:
    """Whether `callee` (through functools.partial) has no rule and no source autotrace reads,
    and is given a value carrying gradient: a builtin, a method of a C object other than an
    array's (whose writes the transforms follow) or a container's (which
    object_state.may_keep_what_it_is_given decides), an operator.methodcaller; not autotrace's
    own or a NumPy save."""
    callee = partial_target(callee)
    owner = getattr(callee, "__self__", None)
    return not all(v == "<object>" for v in varied) and not keeps_nothing(callee) \
        and not isinstance(owner, (np.ndarray, np.generic, *CONTAINERS)) \
        and classify_value(callee).kind == "unknown"


def callable_name(callee) -> str:
    if isinstance(callee, functools.partial):
        return f"functools.partial({callable_name(callee.func)}, ...)"
    named = callee if hasattr(callee, "__qualname__") else type(callee)
    module = (getattr(named, "__module__", None) or "builtins").lstrip("_")  # (_heapq)
    return named.__qualname__ if module == "builtins" else f"{module}.{named.__qualname__}"


FOLLOWED = ("write the change with operations autotrace follows: items.append(v) called on "
            "a list, d[k] = v, x[i] = v, or a method of a class of your own")
UNKNOWN_EFFECT = (
    "autotrace cannot differentiate this call of {what}: it is given a value that carries "
    "gradient, and {why}, which autotrace cannot see (it has no derivative rule): the gradient "
    "of what it keeps would be lost; {followed}")
# UNKNOWN_EFFECT's `why` for a call whose result is not read
UNREAD = "its result is not read, so it is called for what it does with that value"


def refuse_numpy_out(callee, varied: tuple, read_after, filename: str, line: int) -> None:
    """Refuse a call, resolved only when it runs, of a NumPy function or ufunc (or a ufunc's
    method) given `out` (by keyword, or a ufunc's by position past its inputs) where out
    carries gradient or is read after the call: the derivative takes the call's rule, for its
    result, and would not follow the write into out (called by its NumPy name, the front end
    writes it as an assignment: transforms/front/out_arguments.py)."""
    owner = getattr(callee, "__self__", None)
    ufunc = callee if isinstance(callee, np.ufunc) else owner if isinstance(
        owner, np.ufunc) else None
    if ufunc is None and not (getattr(callee, "__module__", None) or "").startswith("numpy"):
        return
    given = set(varied) | set(read_after or ())
    if "out" in given or isinstance(callee, np.ufunc) and any(
            isinstance(w, int) and w >= callee.nin for w in given):
        name = callable_name(callee) if ufunc is None else f"numpy.{ufunc.__name__}" + (
            "" if ufunc is callee else f".{callee.__name__}")
        raise TransformError(
            f"autotrace cannot differentiate this call of {name} with out: the function is "
            f"known only when the call runs (held in a variable or a dict, or found by "
            f"getattr), and the write into out is not followed; call it by its NumPy name "
            f"(np.multiply(a, b, out=a)), or assign its result instead (a = np.multiply(a, b))",
            filename, line, "out=")
