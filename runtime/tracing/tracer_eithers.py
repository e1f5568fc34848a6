"""An either-value where it leaves operators: given to a NumPy function, or returned.

    big = 1e40 if np.sum(x) > 0 else np.float32(1.0)     # x: f32[n]
    y = np.where(x > 1, big, x)  # NumPy: f32 [.. inf] on one path (1e40 is weak), f32 [.. 1.]
    z = np.full(3, big)          # NumPy: f64 [1e40 ...] on one path, f32 [1. ...] on the other
    return big                   # NumPy: the float 1e40, or np.float32(1.0)

An either-value (weak_scalars.py) is a Python number on one path of a traced `if` and a NumPy
scalar on the other, and its operators compute as on each path. So does a NumPy function given
one, in its arguments or in a list among them (np.where, np.full, np.concatenate, np.linspace,
a ufunc called by name, a math function): it is called once with each, with the Python number
itself where that is known while tracing (so NumPy takes it as it takes a number: weak beside
arrays in np.where, float64 in np.full), and once with the NumPy scalar; the traced condition
chooses between the two results. Where they differ in dtype, shape or kind (np.full above:
float64 one way, float32 the other), no one graph value is NumPy's on both paths: refused at
the `if` that made the value, naming the function. Never one value rounded to the scalar's
dtype: 1e40 is inf as a float32.

Assigned into an array (`y[0] = big`), it is cast to the array's dtype as on each path.
Returned, it is the graph's value in the dtype that holds both kinds exactly (float64 above),
with its flag a further output; each call gives back the kind of the path its flag says (the
Python float, or the np.float32). Assigned to a Variable it is cast to the Variable's dtype
as on each path; kept as it is in other state (an object's array) it is refused.
"""
from __future__ import annotations

import functools

import numpy as np

from ..primitives.elementwise import astype
from ..primitives.index import setitem
from ..primitives.registry import UntraceableError, is_traced
from .trees import _Slot, map_arrays
from .type_checks import is_zero_d_array
from .weak_scalars import (PYTHON_DTYPES, WEAK_DTYPES, either_of, exact_of, holds_either,
                           is_weak, make_weak, on_each_path, on_two_paths,
                           one_type_advice, scalar_dtype_name)


def on_each_path_call(function, what: str | None = None):
    """`function` (a NumPy function, or what converted code calls in its place), computed as
    on each path of the either-values among its arguments; `what` names it in errors."""
    what = what or function_name(function)

    @functools.wraps(function)
    def call(*args, **kwargs):
        if not holds_either((args, kwargs)):
            return function(*args, **kwargs)
        return on_each_path(call, args, kwargs, what, zero_d_array=is_zero_d_array)
    return call


def function_name(function) -> str:
    """`np.full`, `np.linalg.norm`, `math.sqrt`: how code names `function`."""
    module = getattr(function, "__module__", None) or ""
    module = "np" + module[len("numpy"):] if module.startswith("numpy") else module
    name = getattr(function, "__name__", type(function).__name__)
    return f"{module}.{name}" if module and not module.startswith("np._") else f"np.{name}"


# `x[index] = value`: NumPy casts the Python number, or the NumPy scalar, to x's dtype (a
# float64 x holds 0.1 itself, not 0.1 rounded to the other path's float32)
assigned = on_each_path_call(setitem, "an assignment into an array")


class EitherOutputs:
    """The slots of a trace's result, made by `output_slot` (which makes each leaf a graph
    output), where an either-value's is an `EitherSlot`."""

    def __init__(self, output_slot):
        self.output_slot, self.made = output_slot, []

    def slots(self, result):
        """`result` with each array leaf replaced by its slot; the either-values' flags made
        outputs after all of its leaves."""
        template = map_arrays(result, self._slot)
        for slot, either in self.made:  # (a flag known while tracing: a NumPy bool)
            flag = either.flag if is_traced(either.flag) else np.bool_(either.flag)
            slot.flag_index = self.output_slot(flag).index
        return template

    def _slot(self, leaf):
        either = either_of(leaf) if is_traced(leaf) else None
        if either is None:
            if is_traced(leaf) and is_weak(leaf):  # (a Python number: returned as one)
                return NumberSlot(self.output_slot(leaf).index, WEAK_DTYPES[leaf.dtype])
            return self.output_slot(leaf)
        slot = EitherSlot(self.output_slot(exact_of(leaf)).index, either.first, either.second,
                          either.where)
        self.made.append((slot, either))
        return slot


class NumberSlot(_Slot):
    """Where a returned value that stands for a Python number (weak_scalars.make_weak) is
    among the graph's outputs: filled as that Python number (`return n` of a loop's `n += 2`
    gives the int 4, not np.int64(4)); a batch of them as it is, the int64 or float64 array
    np.stack of the examples' numbers is."""
    __slots__ = ("kind",)

    def __init__(self, index: int, kind: type):
        super().__init__(index)
        self.kind = kind

    def fill(self, outputs):
        value = outputs[self.index]
        if is_traced(value):  # (called while tracing: a Python number there too)
            return make_weak(value)
        if not isinstance(value, (np.generic, np.ndarray)) or np.ndim(value) != 0:
            return value  # (a Spec of it; a batch of examples)
        return self.kind(value.item())

    def source(self, outputs: str) -> str:
        return f"{self.kind.__name__}({outputs}[{self.index}].item())"


class EitherSlot(_Slot):
    """Where a returned either-value is among the graph's outputs (its value in a dtype that
    holds both its kinds), and its flag: filled as the kind of the path the flag says."""
    __slots__ = ("flag_index", "first", "second", "where")

    def __init__(self, index: int, first, second, where: str):
        super().__init__(index)
        self.flag_index, self.first, self.second, self.where = None, first, second, where

    def fill(self, outputs):
        value, flag = outputs[self.index], outputs[self.flag_index]
        if np.ndim(flag) != 0:  # a batch of examples (vmap)
            return self._stacked(value, flag)
        if not isinstance(value, (np.generic, np.ndarray)) or np.ndim(value) != 0:
            return value  # (a Spec of it)
        kind = self.first if flag else self.second
        return kind(value.item()) if isinstance(kind, type) else np.dtype(kind).type(value)

    def _stacked(self, value, flags):
        """The batch `value` of examples whose paths `flags` says, as np.stack of their
        results is: in the dtype of the kinds the examples are (a Python float is float64
        there: float32 where every example is an np.float32, float64 where one is 0.5)."""
        kinds = (self.first, self.second)
        known = isinstance(flags, np.ndarray)
        if known and flags.size:
            kinds = tuple(kind for kind, taken in zip(kinds, (np.any(flags), not np.all(flags)))
                          if taken)
        dtypes = [np.dtype(PYTHON_DTYPES.get(kind, kind)) for kind in kinds]
        if not known and dtypes[0] != dtypes[1]:  # (a batch traced in another function)
            raise UntraceableError(
                f"{on_two_paths(self.where, self.first, self.second)}it is returned from a "
                f"batch (autotrace.vmap) traced here, whose dtype, as np.stack of the "
                f"examples' results gives it, depends on the paths the examples take: "
                f"{one_type_advice(self.first, self.second)}")
        dtype = np.result_type(*dtypes)
        if is_traced(value):
            return value if value.dtype == dtype else astype(value, dtype)
        return value.astype(dtype, copy=False) if isinstance(value, np.ndarray) else value

    indices = property(lambda self: (self.index, self.flag_index))

    def source(self, outputs: str) -> str:
        value = f"{outputs}[{self.index}]"
        first, second = (f"{kind.__name__}({value}.item())" if isinstance(kind, type)
                         else f"np.{np.dtype(kind).name}({value})"
                         for kind in (self.first, self.second))
        return f"({first} if {outputs}[{self.flag_index}] else {second})"


def refuse_written_either(value):
    """`value`, a graph output other than a returned either-value (the value of state the
    trace writes); refused where it is an either-value."""
    either = either_of(value) if is_traced(value) else None
    if either is None:
        return value
    scalar = scalar_dtype_name(either.first, either.second)
    raise UntraceableError(
        f"{either.where}\n  leaves this variable a Python number on one path and a NumPy "
        f"{scalar} value on the other, and it is kept in the function's state (an object's "
        f"array), which holds one dtype: {one_type_advice(either.first, either.second)}")
