"""Specs: traces for every size of a dimension, from `input_signature` or `reduce_retracing`.

    Spec((None, 3))              # any number of rows of 3 float64s
    Spec((), "int32")            # an int32 scalar

- `InputSignature` checks a call of `autotrace.function(f, input_signature=[...])` against its
  Specs (a TypeError names the argument, what was expected and what came) and gives the arrays
  the one trace takes; `placeholders` are the abstract arguments that trace runs on.
- `RetracingReducer` (reduce_retracing) remembers, per family of signatures that differ only in
  their arrays' sizes, the shape of each array seen so far; a dimension seen with two sizes
  becomes None, and the widened signature is traced once for all its sizes.

A placeholder is a Tracer of no trace holding an AbstractArray: `runtime.tracing.tracer.trace` takes
it as a graph input of that shape (None dimensions included), as it takes a concrete array.
"""
from __future__ import annotations

import inspect
import re
import threading
from collections import OrderedDict

import numpy as np

from ..abstract import AbstractArray, unknown_origins
from ..array_subclasses import ArraySubclassError, is_refused_subclass
from ..containers import rebuild
from ..graph import Var
from .signature import is_array_key
from .tracer import Tracer, map_arrays, sorted_keys


class Spec:
    """The shape and dtype an array argument must have; None in the shape for any size.

    Arguments:
        shape: a tuple (or list) of ints and None: `(None, 3)` is any number of rows of 3.
        dtype: anything `np.dtype` accepts. float64 by default, NumPy's default float.

    Examples:
        >>> @autotrace.function(input_signature=[autotrace.Spec((None, 3))])
        ... def row_norms(x):
        ...     return np.sqrt(np.sum(x * x, axis=1))
        >>> row_norms(np.ones((2, 3)))
        array([1.73205081, 1.73205081])
        >>> _ = row_norms(np.ones((5, 3)))   # any number of rows of 3: the same trace
        >>> row_norms.trace_count
        1
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype=np.float64):
        if not isinstance(shape, (tuple, list)) or not all(
                n is None or (isinstance(n, (int, np.integer)) and not isinstance(n, bool)
                              and n >= 0) for n in shape):
            raise TypeError(f"Spec: shape must be a tuple of sizes (ints >= 0) and None, "
                            f"like (None, 3), but it is {shape!r}")
        self.shape = tuple(None if n is None else int(n) for n in shape)
        self.dtype = np.dtype(dtype)

    @classmethod
    def from_array(cls, array) -> Spec:
        """The Spec of `array`'s own shape and dtype: `Spec.from_array(np.ones(3))`."""
        return cls(np.shape(array), np.asarray(array).dtype if not hasattr(array, "dtype")
                   else array.dtype)

    def accepts_shape(self, shape: tuple) -> bool:
        """Whether an array of `shape` fits: the same rank, and each size given is equal."""
        return len(shape) == len(self.shape) and all(
            want is None or want == have for want, have in zip(self.shape, shape))

    @classmethod
    def parse(cls, text: str) -> Spec:
        """The Spec a type written as graphs print it stands for: `f64[3,4]`, `i32[]`,
        `bool[5]`, `f64[?,3]` (? for any size). The dtype may also be NumPy's name
        (`float32[2]`). A ValueError says the expected form."""
        match = _SPEC_TEXT.fullmatch(text.strip())
        dtype = _dtype_of_text(match.group(1)) if match else None
        sizes = [size.strip() for size in match.group(2).split(",")] if match else []
        if dtype is None or (sizes != [""] and not all(
                size == "?" or size.isdigit() for size in sizes)):
            raise ValueError(f"{text!r} is not an array type: expected a dtype and a shape "
                             f"like f64[3,4], i32[] or f64[?,3] (? for any size)")
        return cls(tuple(None if size == "?" else int(size) for size in sizes if size), dtype)

    def __eq__(self, other) -> bool:
        return isinstance(other, Spec) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"Spec(shape={self.shape!r}, dtype={self.dtype})"


_SPEC_TEXT = re.compile(r"([A-Za-z_]+[0-9]*)\[([^\]]*)\]")


def _dtype_of_text(name: str):
    """`f64` -> float64 (the short names graphs print), or any dtype name NumPy knows."""
    short = re.fullmatch(r"([fiuc])([0-9]+)", name)
    if short:
        kind = {"f": "float", "i": "int", "u": "uint", "c": "complex"}[short.group(1)]
        name = f"{kind}{short.group(2)}"
    try:
        dtype = np.dtype(name)
    except TypeError:
        return None
    return dtype if dtype.kind in "biufc" else None  # arrays of numbers and bools only


def placeholder(aval: AbstractArray) -> Tracer:
    """An abstract argument: `runtime.tracing.tracer.trace` makes it a graph input of type `aval`,
    whose unknown dimensions each have an origin of their own."""
    return Tracer(None, Var(unknown_origins(aval, object())))


def placeholders_of(value):
    """`value` (arguments, possibly nested in tuples, lists and dicts) with each Spec replaced
    by a placeholder of its type on the CPU; arrays and Python values stay (an array's type is
    taken from it, a Python value is fixed in the trace)."""
    if isinstance(value, Spec):
        return placeholder(AbstractArray(value.shape, value.dtype, "cpu"))
    if isinstance(value, dict):
        return rebuild(value, ((key, placeholders_of(item)) for key, item in value.items()))
    if isinstance(value, (tuple, list)):
        items = [placeholders_of(item) for item in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else type(value)(items)
    return value


def _is_array(value) -> bool:
    """A NumPy array or scalar, or another library's array (CuPy) with a shape and a dtype."""
    return isinstance(value, (np.ndarray, np.generic)) or (
        (hasattr(value, "__cuda_array_interface__") or hasattr(value, "__array_namespace__"))
        and hasattr(value, "dtype") and not isinstance(value, Tracer))


def _describe(value) -> str:
    """What was passed, for an error: `an array of shape (2, 4) and dtype float64`."""
    if _is_array(value):
        return f"an array of shape {tuple(value.shape)} and dtype {value.dtype}"
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    if isinstance(value, dict):
        return f"a {type(value).__name__} with keys {sorted_keys(value)}"
    if isinstance(value, (bool, int, float, complex, str)) or value is None:
        return f"{value!r} (a {type(value).__name__})"
    return f"a {type(value).__name__} object"


def _python_value_as_array(spec: Spec, value):
    """`value` (a Python number, or a list of them) as an array of spec's dtype if it fits
    without changing kind (int to float is fine; float to int, or bool to number, is not); a
    number as a NumPy scalar, which `s += v` gives a new value, as it does the number."""
    try:
        natural = np.asarray(value)
    except ValueError:  # a ragged list
        return None
    kind = natural.dtype.kind
    if kind not in "biufc" or not spec.accepts_shape(natural.shape):
        return None
    if (kind == "b") != (spec.dtype.kind == "b"):
        return None
    if not np.can_cast(natural.dtype, spec.dtype, "same_kind"):
        return None
    try:
        array = np.asarray(value, dtype=spec.dtype)
    except OverflowError:  # a Python int too large for spec's dtype
        return None
    return array[()] if not array.ndim else array  # a number: a NumPy scalar, not an array


def _fit(spec: Spec, value):
    """`value` as the array that `spec` takes, or None if it does not fit."""
    if type(value) is np.ndarray:  # the common case first
        fits = value.dtype == spec.dtype and spec.accepts_shape(value.shape)
        return value if fits else None
    if _is_array(value):
        fits = value.dtype == spec.dtype and spec.accepts_shape(tuple(value.shape))
        return value if fits else None
    if isinstance(value, (bool, int, float, complex, list, tuple)):
        return _python_value_as_array(spec, value)
    return None


class InputSignature:
    """A function's `input_signature`: one tree of Specs (tuples, lists, dicts) a parameter.

    A method's first parameter, `self`, has no Spec: the Specs cover the parameters after it,
    and the instance is part of the trace's key by identity (`takes_instance`), as any other
    object argument is.

    Arguments:
        specs: a list or tuple with a Spec tree for each leading positional parameter.
        function: the Python function, for its name and parameter names.
    """

    def __init__(self, specs, function):
        if not isinstance(specs, (list, tuple)):
            raise TypeError(f"input_signature must be a list or tuple of autotrace.Spec (one "
                            f"per positional parameter), not {type(specs).__name__}")
        for spec in specs:
            _check_tree(spec)
        self.specs = tuple(specs)
        self.function_name = getattr(function, "__name__", "function")
        self.takes_instance = _first_parameter(function) == "self"
        self.parameters = _covered_parameters(function, len(self.specs), self.function_name,
                                              skip=int(self.takes_instance))

    def __repr__(self) -> str:
        return f"InputSignature({list(self.specs)!r})"

    @property
    def call_text(self) -> str:
        """`double(x)`: how errors name the function."""
        return f"{self.function_name}({', '.join(self.parameters)})"

    def arrays(self, args: tuple, kwargs: dict) -> list:
        """The arrays of a call, in graph-input order, Python numbers made arrays of their
        Spec's dtype; a TypeError for a call that does not fit."""
        if kwargs or len(args) != len(self.specs):
            args = self._positional(args, kwargs)
        arrays: list = []
        for name, spec, value in zip(self.parameters, self.specs, args):
            self._collect(spec, value, name, (), arrays)
        return arrays

    def placeholders(self, devices) -> tuple:
        """The abstract arguments of the trace: each Spec a placeholder, on `devices` (one per
        array, in graph-input order)."""
        devices = iter(devices)

        def make(spec):
            if isinstance(spec, Spec):
                return placeholder(AbstractArray(spec.shape, spec.dtype, next(devices)))
            if isinstance(spec, dict):
                made = {key: make(spec[key]) for key in sorted_keys(spec)}
                return type(spec)((key, made[key]) for key in spec)
            items = [make(item) for item in spec]
            return type(spec)(*items) if hasattr(type(spec), "_fields") else type(spec)(items)
        return tuple(make(spec) for spec in self.specs)

    def _positional(self, args: tuple, kwargs: dict) -> list:
        count = len(self.specs)
        if len(args) > count:
            raise TypeError(
                f"{self.call_text}: input_signature has {count} "
                f"{'entry' if count == 1 else 'entries'}, but {len(args)} positional "
                f"arguments were passed")
        values = list(args) + [_MISSING] * (count - len(args))
        for name, value in kwargs.items():
            if name not in self.parameters:
                raise TypeError(f"{self.call_text}: unexpected argument {name!r}: only the "
                                f"parameters in input_signature can be passed")
            position = self.parameters.index(name)
            if values[position] is not _MISSING:
                raise TypeError(f"{self.call_text}: got multiple values for argument {name!r}")
            values[position] = value
        for name, spec, value in zip(self.parameters, self.specs, values):
            if value is _MISSING:
                raise TypeError(f"{self.call_text}: missing argument {name!r} "
                                f"(expected {spec!r})")
        return values

    def _collect(self, spec, value, name: str, path: tuple, arrays: list) -> None:
        """Append the arrays of `value` (argument `name`, at `path` inside it) to `arrays`."""
        if isinstance(spec, Spec):
            if is_refused_subclass(value):
                raise ArraySubclassError(value, f"argument {name!r}" + "".join(
                    f"[{step!r}]" for step in path))
            array = _fit(spec, value)
            if array is None:
                self._mismatch(name, path, repr(spec), value)
            arrays.append(array)
        elif isinstance(spec, dict):
            if not isinstance(value, dict) or set(value) != set(spec):
                self._mismatch(name, path, f"a dict with keys {sorted_keys(spec)}", value)
            for key in sorted_keys(spec):
                self._collect(spec[key], value[key], name, (*path, key), arrays)
        else:
            if not isinstance(value, (tuple, list)) or len(value) != len(spec):
                self._mismatch(name, path, f"a {type(spec).__name__} of {len(spec)}", value)
            for index, (item_spec, item) in enumerate(zip(spec, value)):
                self._collect(item_spec, item, name, (*path, index), arrays)

    def _mismatch(self, name: str, path: tuple, expected: str, value):
        where = "".join(f"[{step!r}]" for step in path)
        raise TypeError(f"{self.call_text}: argument {name!r}{where} expected {expected}, got "
                        f"{_describe(value)}")


_MISSING = object()


def _check_tree(spec) -> None:
    if isinstance(spec, Spec):
        return
    if isinstance(spec, dict):
        for item in spec.values():
            _check_tree(item)
    elif isinstance(spec, (tuple, list)):
        for item in spec:
            _check_tree(item)
    else:
        raise TypeError(f"input_signature holds autotrace.Spec values (in tuples, lists and "
                        f"dicts), but it holds {_describe(spec)}")


def _first_parameter(function) -> str | None:
    try:
        return next(iter(inspect.signature(function).parameters), None)
    except (TypeError, ValueError):
        return None


def _covered_parameters(function, count: int, name: str, skip: int = 0) -> tuple:
    """The names of the `count` positional parameters after the first `skip`; a TypeError if
    there are fewer, or if a parameter after them has no default."""
    try:
        parameters = list(inspect.signature(function).parameters.values())[skip:]
    except (TypeError, ValueError):
        return tuple(f"arg{i}" for i in range(count))
    positional = [p for p in parameters
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < count and not any(p.kind is p.VAR_POSITIONAL for p in parameters):
        raise TypeError(f"input_signature has {count} entries, but {name} takes "
                        f"{len(positional)} positional parameters")
    names = [p.name for p in positional[:count]]
    names += [f"arg{i}" for i in range(len(names), count)]
    for parameter in parameters:
        if parameter.name not in names and parameter.default is parameter.empty and \
                parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f"input_signature covers {', '.join(names) or 'no parameters'} of "
                            f"{name}, but {parameter.name!r} has no default: give it a Spec "
                            f"or a default")
    return tuple(names)


# --- reduce_retracing ---------------------------------------------------------------------------

def _map_array_keys(key, function):
    """`key` (a signature, runtime.tracing.signature) with each array leaf replaced by
    `function(leaf)`, visited in graph-input order."""
    if is_array_key(key):
        return function(key)
    if type(key) is tuple:
        return tuple(_map_array_keys(item, function) for item in key)
    return key


def general_avals(key) -> list:
    """The AbstractArrays of a signature's arrays (None where generalized), in input order."""
    avals: list = []
    _map_array_keys(key, lambda leaf: avals.append(AbstractArray(leaf[1], leaf[2], leaf[3])))
    return avals


def placeholders_for(args: tuple, kwargs: dict, key) -> tuple:
    """(args, kwargs) with each array replaced by a placeholder of `key`'s type for it."""
    avals = iter(general_avals(key))
    traced_args, traced_kwargs = map_arrays((tuple(args), dict(kwargs)),
                                            lambda leaf: placeholder(next(avals)))
    return traced_args, traced_kwargs


_GAVE_UP = "gave up"


class RetracingReducer:
    """reduce_retracing's memory: for each family of signatures (the same but for their arrays'
    sizes) the shapes seen so far, None where two calls differed.

    Arguments:
        maxsize: how many families to remember (the least recently missed go first).
    """

    def __init__(self, maxsize: int = 256):
        self.maxsize = maxsize
        self._shapes: OrderedDict = OrderedDict()
        self._widened: OrderedDict = OrderedDict()  # key -> its widened key, while valid
        self._lock = threading.Lock()

    def generalize(self, key):
        """The signature to trace for `key`, a new signature: `key` with each dimension seen
        with two sizes made None; None when no dimension is (then `key` itself is traced)."""
        widened = self._widened.get(key)  # the common case: a size met before
        if widened is not None:
            return widened
        family = _map_array_keys(key, lambda leaf: (leaf[0], len(leaf[1]), *leaf[2:]))
        shapes: list = []
        _map_array_keys(key, lambda leaf: shapes.append(leaf[1]))
        with self._lock:
            seen = self._shapes.get(family)
            if seen is None or seen is _GAVE_UP:
                if seen is None:
                    self._shapes[family] = shapes
                    while len(self._shapes) > self.maxsize:
                        self._shapes.popitem(last=False)
                return None
            self._shapes.move_to_end(family)
            merged = [tuple(a if a == b else None for a, b in zip(old, new))
                      for old, new in zip(seen, shapes)]
            if merged != seen:
                self._shapes[family] = merged
                self._widened.clear()  # what was widened before may widen further now
            if merged == shapes:
                return None
            merged_shapes = iter(merged)
            widened = _map_array_keys(
                key, lambda leaf: (leaf[0], next(merged_shapes), *leaf[2:]))
            self._widened[key] = widened
            while len(self._widened) > self.maxsize:
                self._widened.popitem(last=False)
        return widened

    def give_up(self, key) -> None:
        """Trace `key`'s family with concrete sizes from now on (its general trace failed)."""
        family = _map_array_keys(key, lambda leaf: (leaf[0], len(leaf[1]), *leaf[2:]))
        with self._lock:
            self._shapes[family] = _GAVE_UP
            self._widened.clear()

    def clear(self) -> None:
        with self._lock:
            self._shapes.clear()
            self._widened.clear()
