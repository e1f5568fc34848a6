"""The dtypes that derivative helpers make their own values in: the masks and weights that
multiply a gradient, the identity matrices and ones of products, the zeros and broadcasts that
stand for one.

A float32 program computes its gradient in float32, as JAX's does (DESIGN.md): a value a helper
makes takes the dtype of the gradient or of the value it goes with, never NumPy's default
float64. Under NumPy 2's promotion (NEP 50) only Python scalars are weak: one float64 array, or
a NumPy float64 scalar such as np.log(2.0), beside float32 values makes every later operation
of the backward pass float64. Masks and weights are real numbers: float32 beside complex64,
which leaves a complex64 gradient complex64 when it multiplies it.
"""
from __future__ import annotations

import numpy as np

from ..array_api import numpy_dtype
from ..devices import array_module

_FLOAT64 = np.dtype(np.float64)


def real_dtype(value) -> np.dtype:
    """The real floating dtype of `value`'s numbers: its own for floats, float32 for complex64
    (float64 for complex128), and float64 for integers, booleans and Python numbers."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return _FLOAT64
    dtype = numpy_dtype(dtype)
    if dtype.kind == "f":
        return dtype
    return np.finfo(dtype).dtype if dtype.kind == "c" else _FLOAT64


def gradient_dtype(value) -> np.dtype:
    """The dtype of a gradient that goes with `value`: its own where it is floating or complex,
    float64 for integers, booleans and Python numbers."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return _FLOAT64
    dtype = numpy_dtype(dtype)
    return dtype if dtype.kind in "fc" else _FLOAT64


def dtype_beside(number, like) -> np.dtype:
    """The dtype of the Python number `number` made an array to go with `like`: as NumPy
    computes with it beside `like` (a float beside float32 is float32; beside integers, or
    alone, float64; a complex beside float32 complex64)."""
    dtype = getattr(like, "dtype", None)
    if dtype is None:
        return np.result_type(number, 0.0)
    return np.result_type(number, numpy_dtype(dtype), 0.0)


def as_weights(mask, like, always: bool = False):
    """The booleans `mask` as weights of the real dtype of `like`, for the module's functions
    (xp.multiply, xp.divide) to compute with: cast where that dtype is not float64, the mask
    itself where it is, since NumPy makes float64 of booleans by itself (a bool divided by a
    count, 1.0 times a bool), in graphs the CPU's scalar compiler reads. `always` casts in
    float64 too: weights that are summed (a sum of booleans is an int64 count, which a fused
    CPU kernel does not compute in)."""
    dtype = real_dtype(like)
    if dtype == _FLOAT64 and not always:
        return mask
    if hasattr(mask, "astype"):  # NumPy's and CuPy's arrays and scalars, traced values
        return mask.astype(dtype)
    return array_module(mask).astype(mask, dtype)  # the array API's arrays have no method
