"""Subclasses of np.ndarray, which autotrace refuses as arguments: it traces and differentiates
the operations of np.ndarray, and a subclass may mean others by the same names. `m * m` of an
np.matrix is its matrix product, and a masked array's `a.sum()` leaves out its masked items;
traced as plain arrays, both would compute something else, silently. A memory map computes as
np.ndarray does (its items are a file's bytes), so it is taken as one.
"""
from __future__ import annotations

import sys

import numpy as np

from .generated_source import PREFIX
from .errors import TracingError

# Subclasses whose operations are np.ndarray's.
PLAIN_SUBCLASSES = (np.memmap,)


def is_refused_subclass(value) -> bool:
    """Whether `value` is an instance of a subclass of np.ndarray other than PLAIN_SUBCLASSES."""
    return type(value) is not np.ndarray and isinstance(value, np.ndarray) and \
        not isinstance(value, PLAIN_SUBCLASSES)


# Where such an array comes from when it is none of the arguments: `where` of the error.
READ_BESIDE_ARGUMENTS = ("an array the function reads other than its arguments (a global, a "
                         "variable of a closure or an object's attribute)")


def refuse_read_beside(value, where: str = READ_BESIDE_ARGUMENTS) -> None:
    """Raise ArraySubclassError where `value`, read beside the arguments or computed from such
    a read (`where` says which), is a refused subclass's (arguments are refused before, by
    their names)."""
    if is_refused_subclass(value):
        raise ArraySubclassError(value, where)


def arguments_of(frame) -> dict:
    """The arguments of the function running in `frame` (a generated derivative's): parameter
    name -> value. Read once by a caller that needs several of them: reading a frame's
    f_locals copies all its locals, cells and free variables into a dict each time (4 us in a
    derivative of a dozen locals, against 60 us for the whole call of a small gradient)."""
    code, given = frame.f_code, frame.f_locals
    return {name: given.get(name)
            for name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]}


def refuse_subclass_arguments(frame, arguments: dict | None = None) -> None:
    """Raise ArraySubclassError, naming the argument, where an argument of the derivative
    running in `frame` (its generated function's; `arguments`: arguments_of(frame) if read
    already), differentiated or not, is a refused subclass's: its operations computed the
    derivative, as np.ndarray's were meant to."""
    for name, value in (arguments_of(frame) if arguments is None else arguments).items():
        # (a plain array, the common case, told without a call: this runs in every `match`)
        if type(value) is not np.ndarray and is_refused_subclass(value):
            raise ArraySubclassError(value, f"argument {name!r}")


def refuse_in_derivative(*values) -> None:
    """Raise ArraySubclassError where one of `values`, which a derivative's helper is about to
    compute with (a gradient, the value it is shaped like), is a refused subclass's, before
    the helper computes with its operations (`*` of np.matrix multiplies matrices): naming the
    argument of the derivative running that is one, else as read beside the arguments, or
    given as dy, and computed from."""
    for found in values:  # (a loop: a generator would cost more than the checks)
        if is_refused_subclass(found):
            break
    else:
        return
    frame = sys._getframe(1)
    while frame is not None and not frame.f_code.co_filename.startswith(PREFIX):
        frame = frame.f_back
    if frame is not None:
        refuse_subclass_arguments(frame)
    raise ArraySubclassError(found, f"{READ_BESIDE_ARGUMENTS}, or dy,")


class ArraySubclassError(TypeError, TracingError):
    """An argument (`where`, or found in the call by `named`) is an array of a subclass of
    np.ndarray autotrace does not know the operations of."""

    def __init__(self, value, where: str = "an argument"):
        kind = type(value)
        if isinstance(value, np.ma.MaskedArray):
            advice = ("pass its data and its mask as two arrays (np.ma.getdata(a) or "
                      "a.filled(0.0), and np.ma.getmaskarray(a)) and leave out the masked "
                      "items with np.where(mask, 0.0, data)")
        elif isinstance(value, np.matrix):
            advice = "pass np.asarray(m) and write its matrix products with @"
        else:
            advice = "pass np.asarray(a), and compute with NumPy's functions"
        super().__init__(
            f"{where} is a {kind.__module__}.{kind.__qualname__}, a subclass of np.ndarray: "
            f"autotrace traces and differentiates np.ndarray's operations, which for it may "
            f"compute something else; {advice}")
        self.value = value

    def named(self, args: tuple, kwargs: dict, names=()) -> ArraySubclassError:
        """The error naming the argument of the call (`names`: the positional parameters')
        that holds the refused array, and where in it."""
        for position, argument in enumerate(args):
            path = _path_to(argument, self.value)
            if path is not None:
                name = repr(names[position]) if position < len(names) and \
                    not names[position].startswith("*") else f"at position {position}"
                return ArraySubclassError(self.value, f"argument {name}{path}")
        for name, argument in kwargs.items():
            path = _path_to(argument, self.value)
            if path is not None:
                return ArraySubclassError(self.value, f"argument {name!r}{path}")
        return self


def _path_to(container, value) -> str | None:
    """`[0]['w']`, where `value` is in `container` (tuples, lists, dicts); "" for `container`
    itself; None where it is not found."""
    if container is value:
        return ""
    items = container.items() if isinstance(container, dict) else \
        enumerate(container) if isinstance(container, (tuple, list)) else ()
    for key, item in items:
        path = _path_to(item, value)
        if path is not None:
            return f"[{key!r}]{path}"
    return None
