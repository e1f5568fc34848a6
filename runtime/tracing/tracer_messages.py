"""What a Tracer says where Python asks it for a value it has only when the graph runs
(`bool(t)`, `float(t)`, `t.item()`, `out=` a NumPy array): runtime/tracing/tracer.py."""
from __future__ import annotations

from ..errors import TracerConversionError

BOOL_MESSAGE = (
    "cannot convert a traced value to a Python bool: this is control flow on a traced array "
    "value; use autotrace.cond/while_loop or compute it outside the traced function")

PYTHON_VALUE_MESSAGE = (
    "cannot convert a traced value to {what}: a traced value has no Python value while "
    "tracing (it has one only when the graph runs). Keep it an array: compute with NumPy "
    "functions (np.where to choose between values, autotrace.cond for a branch) and return "
    "it, or leave this function untraced")

VALUE_MESSAGE = (
    "cannot convert a traced value to {what}: its value is not known while tracing. If it is "
    "being written into a NumPy array made inside the traced function (buffer[i] = value), "
    "make that array from a traced one so it is traced too: np.zeros_like(x, shape=...)")

ITEM_MESSAGE = (
    "cannot convert a traced value to a Python scalar (.item()): a traced value has no Python "
    "value while tracing (it has one only when the graph runs). Index it instead, which keeps "
    "a traced NumPy scalar: x.ravel()[0] for x.item(), x.ravel()[i] for x.item(i), x[i, j] "
    "for x.item(i, j)")


def no_python_value(what: str) -> TracerConversionError:
    return TracerConversionError(PYTHON_VALUE_MESSAGE.format(what=what))
