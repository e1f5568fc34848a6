"""Abstract values: what the tracer knows about an array (shape, dtype, device) but not its data.

An `AbstractArray` prints the way JAX prints avals, so a graph reads in one glance:

    >>> AbstractArray((3, 4), np.dtype("float64"))
    f64[3,4]
    >>> AbstractArray((), np.dtype("int64")), AbstractArray((5,), np.dtype(bool))
    (i64[], bool[5])
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_KIND_PREFIX = {"f": "f", "i": "i", "u": "u", "c": "c"}


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
        shape: a tuple of ints.
        dtype: a NumPy dtype (anything `np.dtype` accepts is normalized to one).
        device: "cpu" for NumPy arrays, "cuda:N" for CuPy arrays on GPU N.
    """

    shape: tuple
    dtype: np.dtype
    device: str = "cpu"

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(n) for n in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        size = 1
        for n in self.shape:
            size *= n
        return size

    def __str__(self) -> str:
        text = f"{short_dtype(self.dtype)}[{','.join(map(str, self.shape))}]"
        return text if self.device == "cpu" else f"{text}@{self.device}"

    __repr__ = __str__


def device_of(value) -> str:
    """"cpu" for NumPy arrays and scalars; "cuda:N" for a CuPy array on GPU N."""
    device = getattr(value, "device", "cpu")  # NumPy 2 arrays and scalars say "cpu"
    if isinstance(device, str):
        return device
    return f"cuda:{getattr(device, 'id', 0)}"


def abstractify(value) -> AbstractArray:
    """The AbstractArray of a concrete array or NumPy scalar."""
    return AbstractArray(value.shape, value.dtype, device_of(value))
