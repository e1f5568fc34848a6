"""np.full, np.full_like, np.linspace and np.arange for converted code, which calls these in
their place (control_statements.py NUMPY_REPLACEMENTS): NumPy's own where no value given them
is traced; where the fill value or an endpoint is, the same array made of graph ops.

NumPy shows the tracer none of these calls: np.full and np.arange have no `__array_function__`
dispatch on their values, np.full_like dispatches on its first argument only, and np.linspace
has no op. NumPy would convert the traced value into its new array, which raises.

- full(shape, v) and full_like(a, v): v broadcast to the shape, a new array in v's dtype (a's
  for full_like), or `dtype`.
- linspace(start, stop): NumPy's computation on the traced values (i * step + start, the last
  sample stop itself), so the samples are NumPy's to the last bit, in NumPy's dtype.
- arange with a traced argument is refused: the length of its result depends on their values.
"""
from __future__ import annotations

import operator

import numpy as np

from ..primitives.elementwise import astype
from ..primitives.weak_inputs import python_number_as
from ..primitives.index import as_array, holds_traced
from ..primitives.registry import UntraceableError, is_traced, static
from .weak_scalars import WEAK_DTYPES, is_weak


def full(shape, fill_value, dtype=None, order="C", **options):
    """`np.full(shape, fill_value, dtype)` for converted code: a traced fill value broadcast."""
    if not holds_traced(fill_value):
        return np.full(shape, fill_value, dtype, order, **options)
    shape = static(shape, "the shape of numpy.full")
    return _filled(as_array(fill_value), shape if isinstance(shape, tuple) else (shape,), dtype)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **options):
    """`np.full_like(a, fill_value, dtype)` for converted code: a traced fill value broadcast
    to the shape of `a` (or `shape`), in a's dtype (or `dtype`)."""
    if not holds_traced(fill_value) or is_traced(a):  # a traced `a`: the tracer's binding
        fill_value = as_array(fill_value) if holds_traced(fill_value) else fill_value
        return np.full_like(a, fill_value, dtype, order, subok, shape, **options)
    shape = np.shape(a) if shape is None else static(shape, "the shape of numpy.full_like")
    return _filled(as_array(fill_value), shape if isinstance(shape, tuple) else (shape,),
                   np.asarray(a).dtype if dtype is None else dtype)


def _filled(fill, shape, dtype):
    """A new array of `shape` holding the traced `fill` (broadcast), in `dtype` or its own."""
    dtype = fill.dtype if dtype is None else dtype
    return astype(np.broadcast_to(python_number_as(fill, dtype), shape), dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """`np.linspace` for converted code: with a traced start or stop, NumPy's computation of
    its samples (numpy/_core/function_base.py) on the traced values."""
    if not (holds_traced(start) or holds_traced(stop)):
        return np.linspace(start, stop, num, endpoint, retstep, dtype, axis, device=device)
    num = operator.index(static(num, "the number of samples of numpy.linspace"))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start, stop = (as_array(v) if holds_traced(v) else v for v in (start, stop))
    computed = _inexact_result_type(start, stop)
    delta = _cast(stop, computed) - _cast(start, computed)
    div = (num - 1) if endpoint else num
    positions = np.arange(0, num, dtype=computed).reshape((-1,) + (1,) * np.ndim(delta))
    if div > 0:
        step = delta / div
        # NumPy divides the positions first where a step is zero (a span of denormal numbers,
        # numpy gh-5437): the same choice, made when the graph runs.
        y = np.where(np.any(step == 0), (positions / div) * delta, positions * step)
    else:  # no sample, or one: the step is undefined
        step = np.nan
        y = positions * delta
    y = _cast(y + start, computed)  # NumPy adds in place: y keeps its dtype
    if endpoint and num > 1:
        y[-1, ...] = stop
    if axis != 0:
        y = np.moveaxis(y, 0, axis)
    if dtype is not None and np.issubdtype(dtype, np.integer):
        y = np.floor(y)
    if dtype is not None and np.dtype(dtype) != y.dtype:
        y = astype(y, dtype)
    return (y, step) if retstep else y


def _inexact_result_type(*values) -> np.dtype:
    """NumPy's dtype for computing np.linspace of `values`: their result type, Python numbers
    (and traced values standing for them) weak, at least float64 for integers and booleans."""
    described = [WEAK_DTYPES[v.dtype](0) if is_traced(v) and is_weak(v)
                 else v if type(v) in (int, float, complex)
                 else v.dtype if is_traced(v) else np.asarray(v).dtype for v in values]
    dtype = np.result_type(*described)
    return dtype if dtype.kind in "fc" else np.promote_types(dtype, np.float64)


def _cast(value, dtype):
    """`value` in `dtype`, as np.subtract(..., dtype=dtype) casts its inputs."""
    if is_traced(value):
        return value if value.dtype == dtype else astype(value, dtype)
    return np.asarray(value, dtype=dtype)


def arange(*args, **kwargs):
    """`np.arange` for converted code, refused for a traced start, stop or step."""
    if holds_traced(list(args) + list(kwargs.values())):
        raise UntraceableError(
            "autotrace cannot trace numpy.arange with a traced start, stop or step: the length "
            "of its result depends on their values; write start + step * np.arange(n), with a "
            "length n known while tracing")
    return np.arange(*args, **kwargs)


# NumPy's functions these stand for in converted code.
REPLACEMENTS = {np.full: full, np.full_like: full_like, np.linspace: linspace,
                np.arange: arange}
