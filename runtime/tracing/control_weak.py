"""Python numbers carried through a traced `if` or loop stay weak, as NumPy 2 and JAX take them.

    total = 0.0
    for row in X:                      # X float32, the loop traced
        total = total + np.sum(row)

Eagerly, `total` is a Python float until it meets the float32 sum, and float32 from then on. A
traced loop carries it as one graph value of one dtype: the dtype NumPy gives what the body
computes from the Python number (float32 here), not the float64 that the number alone has. A
traced `if` whose one branch leaves the number and the other a float32 scalar gives both the
float32 (runtime/tracing/control_branches.py). A number that the body leaves a Python number
(`lr *= 0.9`, `n = n + 1`) is carried in Python's own dtype (int64, float64, complex128) as a
weak scalar (runtime/tracing/weak_scalars.py): where it meets a float32 array in the body
or after the loop (`w - lr * g`), it is rounded to float32 first, as NumPy rounds the number,
so that `w` stays float32 as it does eagerly; Python's operators on it and other numbers keep it
weak, a NumPy function of it (np.sqrt(lr)) gives a float64 NumPy scalar, as NumPy's does. It
takes the dtype the body gives it later (`_check_loop_values` in
runtime/tracing/control_loops.py). A number both branches of a traced `if` leave a Python
number is weak after it, and values saved on a stack for the adjoint sweep stay weak when
popped (runtime/tracing/stacks.py).

Decisions:
- A loop learns the dtypes by tracing its body once more, before the loop is traced, with its
  Python floats and complex numbers as they are (the first iteration, as NumPy runs it); what
  that trace records is thrown away. Python ints are left out of it: they are counters and
  indices, which a Python value would send down other paths (a Python `if` on the counter, a
  constant index), and which stay ints. Only one that the loop's trace finds becoming a float
  (`n = 0`, `n = n + np.sum(row)`) is learned so, then: carried as int64 it made that float
  float64. An int carried as int64 that meets an int32 array stays int64 (NumPy: int32,
  after checking that the number fits, which a graph cannot check while tracing).
- The loop value starts as the number cast to that dtype, as NumPy casts it where it meets
  the body's float32 values; arithmetic the body does on it before (`t * 0.9 + np.sum(row)`)
  is then done in float32, not in Python's float64 (a rounding apart, in the first iteration).
- A body that cannot be traced that way (a constant index out of bounds, say) tells nothing:
  its numbers are carried in Python's dtypes, as before, and the loop traced as it is.
"""
from __future__ import annotations

import numpy as np

from .control import _aval, _numbers_to_arrays, _trace_subgraph
from .tracer import Tracer, is_array
from .weak_scalars import is_weak



def as_dtype(value, dtype):
    """The scalar `value` (a Python number, a NumPy scalar or a Tracer) as `dtype`."""
    if isinstance(value, Tracer):
        return value if value.dtype == dtype else value.astype(dtype)
    return np.asarray(value, dtype)[()]  # a NumPy scalar, as the number cast


def dtypes_from_body(parent, body, state: tuple, numbers: dict) -> dict:
    """Trace `body(state)` (a loop body over its loop values) once, inside `parent`'s trace,
    with the Python numbers of `numbers` (position -> number) as they are, and throw the trace
    away: position -> the dtype of the scalar the body makes of each number that it makes a
    scalar array of."""
    if not numbers:
        return {}
    results = []

    def run(others):
        others = iter(others)
        results.append(body(tuple(numbers[position] if position in numbers else next(others)
                                  for position in range(len(state)))))
        return ()

    others = _numbers_to_arrays(tuple(value for position, value in enumerate(state)
                                      if position not in numbers))
    try:
        _trace_subgraph(parent, run, (others,), ("loop", object(), "body"), share=False)
    except Exception:  # noqa: BLE001 - the body traced as it is says what is wrong
        return {}
    dtypes = {}
    for position in numbers:
        result = results[-1][position]
        if is_weak(result) or not is_array(result) or _aval(result).shape != ():
            continue  # (left a Python number: by Python, or by a traced `if` in the body)
        dtype = _aval(result).dtype
        if np.result_type(dtype, numbers[position]) == dtype:
            # NumPy would make the number this dtype where it meets the body's arrays: the
            # loop starts from it as such (a complex number the body makes a float does not)
            dtypes[position] = dtype
    return dtypes
