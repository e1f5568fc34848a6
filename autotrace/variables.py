"""`autotrace.Variable`: mutable array state for models, optimizers and metrics.

    W = autotrace.Variable(np.zeros((3, 2)), name="kernel")
    W.assign(W * 0.5)            # a new value of the same shape and dtype
    np.tanh(x @ W)               # a Variable is used like the array it holds

A Variable behaves as its current value in arithmetic, comparisons, indexing and every NumPy
function (through NumPy's `__array_ufunc__` and `__array_function__` protocols); the result is
a plain array, never a Variable. Its shape and dtype are fixed when it is made: `assign`
checks both. Like TensorFlow's, Variables compare elementwise, so they are not hashable; key a
dict by `v.ref()` (or `id(v)`).

Inside `autotrace.function` a Variable read is a graph input fed with its value on every call,
and an assign is a graph output written back after the call (runtime/state.py), so a traced
training step updates the model each time it runs. Variables may be made while a function is
traced for the first time (lazily built layers, optimizer slots); making one in a later trace
is an error, since a cached graph could not make it again.
"""
from __future__ import annotations

import itertools

import numpy as np

from autotrace.placement import placed
from autotrace.runtime.devices import DeviceError, device_of, is_gpu_array, to_device
from autotrace.runtime.state import StateCell, StateError, current_scope, owned
from autotrace.runtime.derivatives.snapshots import IN_PLACE_SYMBOLS
from autotrace.runtime.derivatives.structure import array_module
from autotrace.runtime.python_operators import (BINARY_OPERATORS, COMPARISON_OPERATORS,
                                               UNARY_OPERATORS)
from autotrace.runtime.tracing.tracer import Tracer
from autotrace.runtime.tracing.weak_scalars import exact_of
from autotrace.runtime.user_frames import user_code_site

_UIDS = itertools.count()


def next_variable_number() -> int:
    """The number the next Variable made will get (taking one up): compare two to tell
    whether Variables were made in between."""
    return next(_UIDS)


class VariableReference:
    """A hashable handle of one Variable (`v.ref()`), equal only to handles of the same one."""

    __slots__ = ("_variable",)

    def __init__(self, variable: "Variable"):
        self._variable = variable

    def deref(self) -> "Variable":
        return self._variable

    def __hash__(self) -> int:
        return id(self._variable)

    def __eq__(self, other) -> bool:
        return isinstance(other, VariableReference) and other._variable is self._variable

    def __repr__(self) -> str:
        return f"<Reference to {self._variable!r}>"


def _unwrap(value):
    """`value` with every Variable (also inside tuples, lists and dicts) replaced by its value."""
    if isinstance(value, Variable):
        return value.read()
    if isinstance(value, (tuple, list)):
        return type(value)(_unwrap(item) for item in value)
    if isinstance(value, dict):
        return {key: _unwrap(item) for key, item in value.items()}
    return value


def _initial_array(value, dtype, name: str):
    if isinstance(value, Tracer):
        raise StateError(
            f"the initial value of Variable {name!r} depends on an argument of the traced "
            "function; make it from shapes (np.zeros(x.shape)) or create the Variable "
            "outside the traced function")
    module = array_module(value)
    if dtype is None and type(value) in (float, int):  # Python numbers: float64, int64
        dtype = np.float64 if type(value) is float else np.int64
    array = module.array(value, dtype=dtype, copy=True)
    if array.dtype == object:
        raise TypeError(f"Variable {name!r}: the initial value must be numeric, got "
                        f"{type(value).__name__}")
    return placed(array) if module is np else array  # a GPU array stays on its GPU


class Variable(StateCell):
    """Mutable, named array state.

    It changes by `assign`, `assign_add` and `assign_sub` only: the NumPy array it holds is
    read-only, and so are the views it hands out (`np.asarray(v)`, `v.value()`, `v[1:]`),
    which NumPy refuses to write; `v.numpy()` is a copy, to write freely. As in TensorFlow,
    `v += x` (and `-=`, `*=`, `/=`, ...) is refused, since it would rebind `v` (or
    `self.v`) to a plain array that is no longer trained or checkpointed: write
    `v.assign_add(x)`. A slice `v[1:]` is an array, with no `assign`: assign the whole new
    value (`new = v.value().copy(); new[1:] = u; v.assign(new)`).

    Arguments:
        initial_value: an array, a number, a nested list, or a function of no arguments that
            returns one (called once, now).
        name: a name for checkpoints and messages (default "Variable").
        trainable: whether `autotrace.implicit_grad` and optimizers take its gradient (it
            may change later: a traced function that read it then traces again).
        dtype: the dtype to store (default: the initial value's; Python floats are float64).

    Examples:
        >>> v = Variable(1.0, name="scale")
        >>> v.assign_add(2.0)
        <autotrace.Variable 'scale' shape=() dtype=float64, numpy=3.>
        >>> v.numpy()
        array(3.)
    """

    __array_priority__ = 2000  # above Tracer's: Variable unwraps itself first
    __hash__ = None  # elementwise ==, as for arrays; use .ref() as a dict key

    def __init__(self, initial_value, name: str | None = None, trainable: bool = True,
                 dtype=None):
        self.name = str(name) if name is not None else "Variable"
        scope = current_scope()
        if scope is not None and not scope.allow_creation:
            error = StateError(
                f"Variable {self.name!r} is created inside a traced function on a later "
                "trace than its first; a cached graph cannot create it again. Create "
                "Variables outside the traced function, or only on its first call "
                "(layers built lazily and optimizer slots are)")
            error.variable_name = self.name
            raise error
        if callable(initial_value) and not isinstance(initial_value, Variable):
            initial_value = initial_value()
        super().__init__(_initial_array(_unwrap(initial_value), dtype, self.name))
        self.trainable = bool(trainable)
        self._uid = next(_UIDS)

    # --- reading and writing -----------------------------------------------------------------
    def numpy(self):
        """A copy of the current value, as a NumPy array (from any device)."""
        value = self.read()
        if isinstance(value, Tracer):
            return np.asarray(value)  # raises the tracer's own explanation
        return value.get() if hasattr(value, "get") else np.array(value, copy=True)

    def _move_to(self, device: str) -> None:
        """Keep the value on `device` from now on (an optimizer's own state follows the
        Variables it updates). Not inside a traced function that has read it already."""
        self._value = owned(to_device(self._value, device))

    def value(self):
        """The current value (the array itself; while tracing, the traced value)."""
        return self.read()

    read_value = value

    def assign(self, value):
        """Set the value; it must have the Variable's shape (or be a scalar, which fills it)
        and cast safely (same kind) to its dtype. Returns the Variable."""
        value = self._checked(value, "assign")
        shape, dtype = self.shape, self.dtype
        if isinstance(value, Tracer):
            # (an either-value exactly, cast as NumPy casts the Python number or the scalar)
            value = exact_of(value)
            if value.dtype != dtype:
                value = value.astype(dtype)
            if value.shape != shape:
                value = np.broadcast_to(value, shape)
            self.write(value)
        else:
            # NumPy values and numbers are copied to a GPU Variable's device (a restored
            # checkpoint, a reset metric); a GPU value is never copied behind the user's back.
            if is_gpu_array(value) and device_of(value) != device_of(self._value):
                raise DeviceError(
                    f"Variable {self.name!r} is on {device_of(self._value)}; cannot assign a "
                    f"value on {device_of(value)}: move it with autotrace.to_device(value, "
                    f"{device_of(self._value)!r}) first")
            module = array_module(self._value)
            self.write(module.array(module.broadcast_to(module.asarray(value, dtype=dtype),
                                                        shape), copy=True))
        return self

    def assign_add(self, delta):
        """`assign(value + delta)`; delta has the Variable's shape, or is a scalar. Returns
        the Variable."""
        return self.assign(self.read(updating=True) + self._checked(delta, "assign_add"))

    def assign_sub(self, delta):
        """`assign(value - delta)`; delta has the Variable's shape, or is a scalar. Returns
        the Variable."""
        return self.assign(self.read(updating=True) - self._checked(delta, "assign_sub"))

    def _checked(self, value, verb: str):
        """`value` (a list or tuple as an array) if `verb` may take it: numbers of the
        Variable's shape or a scalar, that cast safely (same kind) to its dtype. Checked
        before anything is computed, so that NumPy's broadcasting never makes a shape of its
        own and the error names the Variable."""
        value = _unwrap(value)
        if isinstance(value, (list, tuple)):
            value = array_module(self._value).asarray(value)
        # Python numbers stay as they are (a GPU array takes them, not NumPy's arrays); what
        # is not a number is checked as NumPy reads it (np.result_type would read a str as a
        # dtype's name).
        checked = value if isinstance(value, Tracer) or hasattr(value, "dtype") else \
            np.asarray(value)
        if checked.dtype.kind not in "biufc":
            item = checked.item() if checked.ndim == 0 else None
            shown = (f"an array of dtype {checked.dtype}" if checked.ndim else "None"
                     if item is None else f"{item!r}, a {type(item).__name__}")
            raise TypeError(f"Variable {self.name!r} holds numbers (dtype {self.dtype}); "
                            f"cannot {verb} {shown}")
        shape, new_shape = tuple(self.shape), tuple(checked.shape)
        if new_shape not in (shape, ()):
            raise ValueError(f"Variable {self.name!r} has shape {shape}; cannot {verb} a "
                             f"value of shape {new_shape}")
        if not np.can_cast(checked.dtype, self.dtype, casting="same_kind"):
            raise TypeError(f"Variable {self.name!r} has dtype {self.dtype}; cannot {verb} a "
                            f"value of dtype {checked.dtype} (cast it first)")
        return value

    def ref(self) -> VariableReference:
        """A hashable handle for dict keys and sets."""
        return VariableReference(self)

    # --- what is known without reading -------------------------------------------------------
    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)
    device = property(lambda self: device_of(self._value))  # "cpu" or "gpu:N"
    T = property(lambda self: self.read().T)

    def state_label(self) -> str:
        return f"Variable {self.name!r}"

    def __len__(self) -> int:
        return len(self._value)

    def __repr__(self) -> str:
        head = f"<autotrace.Variable {self.name!r} shape={tuple(self.shape)} dtype={self.dtype}"
        value = self.read()
        if isinstance(value, Tracer):
            return head + " (traced)>"
        return head + f", numpy={np.array2string(np.asarray(value), separator=', ')}>"

    # --- behaving as the array it holds ------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        value = self.read()
        if isinstance(value, Tracer):
            return value.__array__(dtype)  # raises: a traced value has no concrete array
        array = np.asarray(value if not hasattr(value, "get") else value.get(), dtype=dtype)
        return array.copy() if copy else array

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(isinstance(target, Variable) for target in kwargs.get("out", ()) or ()):
            raise TypeError("a Variable cannot be a ufunc's out=; compute the value and "
                            "call .assign(value)")
        return getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs))

    def __array_function__(self, func, types, args, kwargs):
        return func(*_unwrap(args), **_unwrap(kwargs))

    def __getitem__(self, index):
        return self.read()[_unwrap(index)]

    def __setitem__(self, index, value):
        raise TypeError(f"Variable {self.name!r} does not support item assignment; build "
                        "the new value and call .assign(new_value)")

    def __iter__(self):
        return iter(self.read())

    def __bool__(self):
        return bool(self.read())

    def __float__(self):
        return float(self.read())

    def __int__(self):
        return int(self.read())

    def __index__(self):
        return self.read().__index__()

    def __complex__(self):
        return complex(self.read())

    def __format__(self, spec):
        return format(self.read(), spec)

    def __getattr__(self, attribute):
        # Array methods (sum, reshape, astype, ...) act on the current value. Attributes
        # starting with "_" are never forwarded (copy and pickle protocols look for them).
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(self.read(), attribute)

    def __copy__(self):
        raise TypeError(f"Variable {self.name!r} cannot be copied; make a new one: "
                        "autotrace.Variable(v.numpy())")

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __reduce__(self):
        raise TypeError(f"Variable {self.name!r} cannot be pickled; save it with "
                        "autotrace.Checkpoint")


def _binary(ufunc, reflected=False):
    if reflected:
        return lambda self, other: ufunc(_unwrap(other), self.read())
    return lambda self, other: ufunc(self.read(), _unwrap(other))


for _dunder, _ufunc in BINARY_OPERATORS:
    setattr(Variable, f"__{_dunder}__", _binary(_ufunc))
    setattr(Variable, f"__r{_dunder}__", _binary(_ufunc, reflected=True))

def _in_place(dunder: str):
    """`v op= x` on a Variable, refused (as TensorFlow's is): Python would bind the name or
    attribute to the plain array `v op x`, so that `self.v += 1` leaves the model holding an
    array no optimizer trains and no checkpoint saves."""
    symbol = IN_PLACE_SYMBOLS[f"i{dunder}"]
    instead = {"add": "v.assign_add(x)", "sub": "v.assign_sub(x)"}.get(
        dunder, f"v.assign(v {symbol[:-1]} x)")

    def refuse(self, other):
        site = user_code_site()
        where = "" if site is None else f"File \"{site[0]}\", line {site[1]}: "
        raise TypeError(
            f"{where}`v {symbol} x` on Variable {self.name!r} is not supported: it would "
            f"replace the Variable with a plain array, which is no longer trained or "
            f"checkpointed. Write {instead} to change the Variable, or `y = v "
            f"{symbol[:-1]} x` for a new array")
    return refuse


for _dunder, _ufunc in BINARY_OPERATORS:
    if f"i{_dunder}" in IN_PLACE_SYMBOLS:
        setattr(Variable, f"__i{_dunder}__", _in_place(_dunder))

for _dunder, _ufunc in COMPARISON_OPERATORS:
    setattr(Variable, f"__{_dunder}__", _binary(_ufunc))

for _dunder, _ufunc in UNARY_OPERATORS:
    setattr(Variable, f"__{_dunder}__", lambda self, _ufunc=_ufunc: _ufunc(self.read()))


def unique_names(cells: list) -> dict:
    """id(Variable) -> its name (its state label if it has none), made unique with _2, _3."""
    names, taken = {}, set()
    for cell in cells:
        base = getattr(cell, "name", None) or cell.state_label()
        name, number = base, 1
        while name in taken:
            number += 1
            name = f"{base}_{number}"
        names[id(cell)] = name
        taken.add(name)
    return names
