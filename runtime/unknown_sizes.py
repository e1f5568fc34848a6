"""The size of a dimension known only when the graph runs, as the traced function's code sees it.

Under `input_signature=[Spec((None, 2))]`, or once `reduce_retracing` has widened a dimension,
a traced array's shape holds a dimension of unknown size. autotrace's own code reads it as None
(`aval.shape`). The user's code reads an `UnknownSize` in its place (`x.shape[0]`, `np.shape(x)`),
which refuses every question whose answer would depend on the size: `x.shape[0] == 1`,
`x.shape == (3, 2)`, `if x.shape[0]:`, `x.shape[0] in (1, 2)`, `range(x.shape[0])`,
`x.sum() / x.shape[0]` raise UnknownSizeError at the user's line. A None there would have
answered `None == 1` with False: a branch taken for every size, silently wrong for size 1.
reduce_retracing then traces for each size instead (spec.py's RetracingReducer gives up), and
an input_signature's trace names the line to change.

What does not depend on the size still works: `x.shape[1] == 2` (a known size is an int), passing
the shape back to autotrace (`x.reshape(x.shape[0], -1)`, `np.broadcast_to(y, x.shape)`: a shape
argument reads an UnknownSize as None, `static_shape`), `x.shape[0] == x.shape[0]` (one origin).
`x.shape[0] is None` is False, as it is for every array the function is called with. A size
the function returns is a graph output, the size of the array it was read from on each call
(tracing/tracer_sizes.py); one formatted into a string (`f"{n} items"`, `str(n)`) is refused,
since the string would hold for one size only (`repr` gives "?", for a shape printed while
tracing).
"""
from __future__ import annotations

import numbers
import sys

import numpy as np

from .abstract import UnknownSizeError
from .user_frames import library_frame


class UnknownSize:
    """The size of `aval`'s dimension `axis`, known only when the graph runs (see the module's
    docstring): it compares equal to itself and to sizes of the same origin; anything that needs
    its value raises UnknownSizeError."""

    __slots__ = ("aval", "axis", "source")

    def __init__(self, aval, axis: int, source=None):
        self.aval = aval
        self.axis = axis
        self.source = source  # the traced array whose size it is, where known

    @property
    def origin(self):
        """Where the size comes from (equal for dimensions known to be equal), or None."""
        return None if self.aval.origins is None else self.aval.origins[self.axis]

    def error(self, what: str) -> UnknownSizeError:
        """The error for Python code, `what`, that needs this size."""
        return UnknownSizeError(
            f"{what} needs the size of axis {self.axis} of a traced array ({self.aval}), which "
            f"is known only when the graph runs (a dimension None in the Spec, or one "
            f"reduce_retracing traces for every size): a Python test or number made of it "
            f"would hold for one size only. Give that dimension a size in the Spec, or "
            f"compute with array operations (x.mean(axis=0), np.where) instead")

    def __eq__(self, other):
        if isinstance(other, UnknownSize) and self.origin is not None and \
                self.origin == other.origin:
            return True
        if isinstance(other, (numbers.Number, np.generic, np.ndarray, UnknownSize)) or \
                hasattr(other, "dtype"):
            raise self.error(f"comparing a size with {other!r} (==, !=, in)")
        return NotImplemented  # a size is not None, a string, ...: as for an int, unequal

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash((UnknownSize, self.origin if self.origin is not None else id(self)))

    def __repr__(self) -> str:
        return "?"

    def __str__(self):
        raise self.error("formatting a size into a string (f-string, str, %)")

    def __format__(self, spec: str):
        raise self.error("formatting a size into a string (f-string, str, %)")

    def __bool__(self):
        raise self.error("testing a size's truth (if x.shape[0]:)")

    def __index__(self):
        raise self.error("using a size as a Python int (range, np.zeros, an index)")


def _refuse(what: str):
    def refuse(self, *args):
        raise self.error(what)
    return refuse


for _name, _what in [
        *((name, "ordering a size (<, <=, >, >=)") for name in ("lt", "le", "gt", "ge")),
        *((name, "arithmetic on a size") for name in (
            "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "divmod", "lshift",
            "rshift", "and", "or", "xor", "matmul", "radd", "rsub", "rmul", "rtruediv",
            "rfloordiv", "rmod", "rpow", "rdivmod", "rlshift", "rrshift", "rand", "ror",
            "rxor", "rmatmul", "neg", "pos", "abs", "invert", "round", "trunc", "floor",
            "ceil")),
        *((name, "making a size a Python number") for name in ("int", "float", "complex"))]:
    setattr(UnknownSize, f"__{_name}__", _refuse(_what))


def shown_shape(tracer) -> tuple:
    """`tracer.shape` (a property): its shape, with an UnknownSize for each dimension of unknown
    size where the code reading it is not autotrace's or NumPy's."""
    shape = tracer.aval.shape
    if None not in shape or library_frame(sys._getframe(1)):
        return shape
    return with_unknown_sizes(tracer.aval, tracer)


def asked_by_user() -> bool:
    """Whether the caller of the function that calls this one is the user's code (not
    autotrace's or NumPy's): `np.shape(x)` in the traced function, dispatched to the Tracer."""
    return not library_frame(sys._getframe(2))


def with_unknown_sizes(aval, source=None) -> tuple:
    """`aval.shape` with an UnknownSize for each None (of the traced array `source`)."""
    return tuple(UnknownSize(aval, axis, source) if n is None else n
                 for axis, n in enumerate(aval.shape))


def static_shape(shape):
    """A shape argument (a size, or a tuple or list of them) with each UnknownSize read as None:
    the dimension of unknown size that shape rules carry through."""
    if isinstance(shape, (tuple, list)):
        return type(shape)(None if isinstance(n, UnknownSize) else n for n in shape)
    return None if isinstance(shape, UnknownSize) else shape
