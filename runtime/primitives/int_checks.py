"""The `python_int` check: a Python int that a traced loop or `if` carries stays within int64,
and within the integer dtype of an array it meets (int8, uint8, ...: NumPy's OverflowError).

A Python int is unbounded; one that a traced loop carries (`r *= i + 1`, `p = p * 10`) is an
int64 in the graph, where it would wrap around silently (and `while p < limit: p *= 10` would
run for ever once it wrapped). runtime/tracing/weak_ints.py computes, beside each of Python's
operators on such ints, whether the int64 result differs from Python's; this op gives the
result where it does not, and raises OverflowError, naming the user's line, where it does.
It is an op with a result, not a side effect: the passes keep it where its result is read, and
a loop or branch holding it runs and batches as any other.
"""
from __future__ import annotations

import numpy as np

from ..user_frames import code_site
from .primitive import Primitive, register
from .registry import bind, define_runtime_function


def overflow_message(site: str) -> str:
    return (f"{site}: a Python int that this traced loop or if carries left the range of int64 "
            f"(-2**63 to 2**63 - 1), the only int a graph has, where Python's int would grow "
            f"(or, for `n ** k` of a traced int k, which the graph computes as a float, passed "
            f"2**53, where the float is no longer the int). Keep the computation in floating "
            f"point (start from 1.0, not 1), or run it outside the traced function")


def bounds_message(site: str, dtype: str) -> str:
    """The message, a template for str.format given the int, of a Python int that a traced
    loop or if carries out of the bounds of the integer `dtype` of an array it meets, which
    NumPy refuses to convert it to (`np.int8 array + 300`)."""
    site = site.replace("{", "{{").replace("}", "}}")
    return (f"{site}: Python integer {{}} out of bounds for {dtype} (a Python int that this "
            f"traced loop or if carries, where it meets an array of {dtype}, which NumPy "
            f"converts it to); convert it where it may not fit (np.int64(n), or n % 256 for "
            f"the wrapped value)")


def first_flagged(value, overflowed) -> int:
    """The first int of `value` where `overflowed` is true."""
    values, flags = np.broadcast_arrays(np.asarray(value), np.asarray(overflowed, dtype=bool))
    return int(values[flags].flat[0])


def _python_int(value, overflowed, site, dtype=None):
    if np.any(overflowed):
        raise OverflowError(overflow_message(site) if dtype is None else
                            bounds_message(site, dtype).format(first_flagged(value, overflowed)))
    return value[()] if np.ndim(value) == 0 else np.copy(value)


def _python_int_statements(outputs, args, attrs):
    value, overflowed = args
    dtype, out = attrs.get("dtype"), outputs[0]
    if dtype is None:
        raising = [f"    raise OverflowError({overflow_message(attrs['site'])!r})"]
    else:  # the first int out of bounds (not 0, which every dtype holds), by functions that
        # every backend has
        raising = [f"    {out} = np.reshape(np.where({overflowed}, {value}, "
                   f"np.zeros_like({value})), (-1,))",
                   f"    raise OverflowError({bounds_message(attrs['site'], dtype)!r}.format("
                   f"int(np.take({out}, np.nonzero({out})[0])[0])))"]
    return [f"if np.any({overflowed}):", *raising,
            f"{out} = {value}[()] if np.ndim({value}) == 0 else np.copy({value})"]


def _python_int_batching(call):
    """Both batched, the check holding for every example."""
    return call.bind(call.with_batch(0), call.with_batch(1))


register(Primitive("python_int", _python_int,
                   lambda value, overflowed, site, dtype=None: value,
                   statements=_python_int_statements, batching=_python_int_batching))


def fitting_int(value, dtype):
    """The weak int `value` (int64) where it fits the integer `dtype`, narrower than int64 or
    unsigned, that NumPy converts the Python int it stands for to, checked when the graph runs:
    NumPy raises OverflowError where it does not fit (`int8_array + 300`, `np.full(3, 300,
    np.int8)`)."""
    info = np.iinfo(dtype)
    outside = bind("less", value, np.int64(max(info.min, np.iinfo(np.int64).min)))
    if info.max < np.iinfo(np.int64).max:  # (every int64 is below uint64's largest)
        outside = bind("logical_or", outside, bind("greater", value, np.int64(info.max)))
    site = code_site()
    return bind("python_int", value, outside, dtype=str(np.dtype(dtype)),
                site="<unknown>" if site is None else f'File "{site[0]}", line {site[1]}')


class IndexRangeError(IndexError, ValueError):
    """An index outside the range a lookup takes: an IndexError, as NumPy's for an index past
    the end, and a ValueError, as a wrong value of an argument."""


# `index_range`: integer indices, checked to lie in [0, high) when the graph runs, for a lookup
# that NumPy would otherwise read from the end for a negative index (Embedding's rows). The
# message is a template for str.format given the smallest and the largest index.
def _index_range(indices, high, message):
    if np.size(indices) and not (0 <= np.min(indices) and np.max(indices) < high):
        raise IndexRangeError(message.format(np.min(indices), np.max(indices)))
    return indices[()] if np.ndim(indices) == 0 else np.copy(indices)


define_runtime_function("index_range", _index_range,
                        lambda indices, high, message: indices, fresh=True,
                        batching=lambda call: call.bind(call.with_batch(0)))
