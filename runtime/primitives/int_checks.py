"""The `python_int` check: a Python int that a traced loop or `if` carries stays within int64.

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

from .primitive import Primitive, register


def overflow_message(site: str) -> str:
    return (f"{site}: a Python int that this traced loop or if carries left the range of int64 "
            f"(-2**63 to 2**63 - 1), the only int a graph has, where Python's int would grow "
            f"(or, for `n ** k` of a traced int k, which the graph computes as a float, passed "
            f"2**53, where the float is no longer the int). Keep the computation in floating "
            f"point (start from 1.0, not 1), or run it outside the traced function")


def _python_int(value, overflowed, site):
    if np.any(overflowed):
        raise OverflowError(overflow_message(site))
    return value[()] if np.ndim(value) == 0 else np.copy(value)


def _python_int_statements(outputs, args, attrs):
    value, overflowed = args
    return [f"if np.any({overflowed}):",
            f"    raise OverflowError({overflow_message(attrs['site'])!r})",
            f"{outputs[0]} = {value}[()] if np.ndim({value}) == 0 else np.copy({value})"]


def _python_int_batching(call):
    """Both batched, the check holding for every example."""
    return call.bind(call.with_batch(0), call.with_batch(1))


register(Primitive("python_int", _python_int, lambda value, overflowed, site: value,
                   statements=_python_int_statements, batching=_python_int_batching))
