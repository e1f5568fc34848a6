"""Abstract values: what the tracer knows about an array (shape, dtype, device) but not its data.

An `AbstractArray` prints the way JAX prints avals, so a graph reads in one glance:

    >>> AbstractArray((3, 4), np.dtype("float64"))
    f64[3,4]
    >>> AbstractArray((), np.dtype("int64")), AbstractArray((5,), np.dtype(bool))
    (i64[], bool[5])

A dimension may be unknown while tracing (`None`, printed `?`): `autotrace.Spec((None, 3))`
traces once for any number of rows. Shape rules carry unknown dimensions through where the
result's shape does not depend on them (elementwise ops, reductions, matmul, transposes,
indexing, reshape with -1); an op that needs the size raises `UnknownDimensionError`. Where two
dimensions meet in broadcasting, an unknown one is taken to match the other: `?` with 4 is 4,
`?` with `?` is `?` (and the graph checks, when it runs, that the two are equal:
runtime/primitives/same_sizes.py). An unknown dimension may carry its origin, the input
dimension its size comes from, so that two of one origin need no check.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .array_api import numpy_dtype
from .devices import device_of
from .errors import TracingError

_KIND_PREFIX = {"f": "f", "i": "i", "u": "u", "c": "c"}


class UnknownDimensionError(NotImplementedError, TracingError):
    """An op, or a question about a size, met a dimension whose size is not known while
    tracing (None in an `autotrace.Spec`)."""


def unknown_dimension_error(what: str, *avals) -> UnknownDimensionError:
    """The error for `what` (`numpy.roll`, `the size of x`) meeting an unknown dimension."""
    shown = ", ".join(str(aval) for aval in avals if isinstance(aval, AbstractArray))
    return UnknownDimensionError(
        f"autotrace cannot trace {what} on an array with a dimension of unknown size "
        f"({shown}; ? is None in the Spec): give that dimension a size in the Spec")


class UnknownSizeError(TypeError, TracingError):
    """Python code (`len(x)`, iteration) asked for a size known only when the graph runs."""


def unknown_size_error(what: str, aval) -> UnknownSizeError:
    """The error for Python code, `what` (`len()`), that needs the size of a dimension of
    `aval` known only when the graph runs: the rows a traced boolean mask selects, or a
    dimension None in a Spec."""
    return UnknownSizeError(
        f"{what} needs the size of a traced array's dimension that is known only when the graph "
        f"runs ({aval}: the elements a traced boolean mask selects, x[mask], or a dimension None "
        f"in the Spec); count a mask's elements as a traced value with np.sum(mask), keep the "
        f"shape with np.where(mask, x, 0.0), or give the dimension a size in the Spec")


def short_dtype(dtype: np.dtype) -> str:
    """`float64` -> `f64`, `int32` -> `i32`, `complex128` -> `c128`, `bool` -> `bool`."""
    dtype = np.dtype(dtype)
    prefix = _KIND_PREFIX.get(dtype.kind)
    if prefix is None:
        return str(dtype)
    return f"{prefix}{dtype.itemsize * 8}"


@dataclass(frozen=True)
class AbstractArray:
    """The shape, dtype and device of an array: everything a trace keys on and computes with.

    Arguments:
        shape: a tuple of ints, with None for a dimension whose size is not known.
        dtype: a NumPy dtype (anything `np.dtype` accepts is normalized to one).
        device: "cpu" for NumPy arrays, "gpu:N" for CuPy arrays on GPU N (runtime/devices.py).
        origins: for each dimension, where an unknown size comes from (a hashable token, the
            same for dimensions known to be equal), or None. Not part of equality.
    """

    shape: tuple
    dtype: np.dtype
    device: str = "cpu"
    origins: tuple | None = field(default=None, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "shape",
                           tuple(None if n is None else int(n) for n in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def known(self) -> bool:
        """Whether every dimension's size is known."""
        return None not in self.shape

    @property
    def size(self) -> int:
        """How many elements; UnknownDimensionError if a dimension is unknown."""
        if not self.known:
            raise unknown_dimension_error("the size (.size, np.size)", self)
        size = 1
        for n in self.shape:
            size *= n
        return size

    def __str__(self) -> str:
        dims = ",".join("?" if n is None else str(n) for n in self.shape)
        text = f"{short_dtype(self.dtype)}[{dims}]"
        return text if self.device == "cpu" else f"{text}@{self.device}"

    __repr__ = __str__


def abstractify(value) -> AbstractArray:
    """The AbstractArray of a concrete array (of NumPy, CuPy or an array-API library) or NumPy
    scalar."""
    device = device_of(value)
    dtype = value.dtype if device == "cpu" or device.startswith("gpu") else \
        numpy_dtype(value.dtype)
    return AbstractArray(value.shape, dtype, device)


def same_type(a: AbstractArray, b: AbstractArray) -> bool:
    """Whether values of types `a` and `b` may stand for each other in a graph (the two
    branches of a cond, a loop value before and after an iteration): equal types, or equal but
    for one being a NumPy value ("cpu", a constant) where the other is on a device or an array
    library's, where the graph's backend puts its constants."""
    return a == b or (a.shape == b.shape and a.dtype == b.dtype and "cpu" in (a.device, b.device))


def is_unknown(aval) -> bool:
    """Whether `aval` is an AbstractArray with a dimension of unknown size."""
    return isinstance(aval, AbstractArray) and None in aval.shape


def broadcast_shapes(*shapes) -> tuple:
    """`np.broadcast_shapes`, where a dimension may be None (unknown): None with n is n,
    None with 1 or None is None."""
    if all(None not in shape for shape in shapes):
        return np.broadcast_shapes(*shapes)
    ndim = max(len(shape) for shape in shapes)
    result = []
    for axis in range(ndim - 1, -1, -1):
        sizes = {shape[axis - ndim] for shape in shapes if axis - ndim >= -len(shape)} - {1}
        known = sizes - {None}
        if len(known) > 1:
            raise ValueError(f"shape mismatch: objects cannot be broadcast to a single shape: "
                             f"{', '.join(map(str, shapes))}")
        result.append(known.pop() if known else None if sizes else 1)
    return tuple(reversed(result))


def unknown_origins(aval: AbstractArray, token) -> AbstractArray:
    """`aval` with an origin of its own for each unknown dimension: (token, axis)."""
    origins = tuple(None if n is not None else (token, axis) for axis, n in enumerate(aval.shape))
    return AbstractArray(aval.shape, aval.dtype, aval.device, origins)


def carried_origins(aval, axes) -> tuple | None:
    """The origins of a result whose dimensions are `aval`'s `axes` (None for a new one)."""
    if not isinstance(aval, AbstractArray) or aval.origins is None:
        return None
    origins = tuple(None if axis is None else aval.origins[axis] for axis in axes)
    return origins if any(origin is not None for origin in origins) else None


def broadcast_origins(avals, shape: tuple) -> tuple | None:
    """The origins of a broadcast result's unknown dimensions: each that of the first input
    unknown there (the others are checked equal to it)."""
    origins = []
    for position in range(-len(shape), 0):
        origin = None
        if shape[position] is None:
            for aval in avals:
                if isinstance(aval, AbstractArray) and aval.ndim >= -position and \
                        aval.shape[position] is None:
                    origin = aval.origins[position] if aval.origins else None
                    break
        origins.append(origin)
    return tuple(origins) if any(origin is not None for origin in origins) else None
