"""NumPy's names over an array-API namespace: what lets NumPy-spelled code run on other arrays.

Traced graphs and the gradient helpers call `np.<name>(...)` (runtime/execution/executor.py writes
`np.power(a, b)`, a helper writes `xp.sum(g, axis=0)`). An array library that follows the
Python array API standard (array_api_strict, and CuPy or torch through array-api-compat) has
most of those functions under other names or with other rules; `numpy_names(x)` gives an object
with NumPy's names and NumPy's rules over the namespace of array `x`:

    np_ = numpy_names(x)           # x an array_api_strict array
    np_.power(x, 2.0)              # array_api_strict.pow(x, 2.0)
    np_.concatenate([x, x])        # array_api_strict.concat(...)
    np_.dot(a, b)                  # matmul or tensordot, as np.dot would

What NumPy does that the standard does not say is written here once, from standard functions:
NumPy's type promotion (an int array times a float, a float function of an int array), integer
array indices mixed with slices, `np.add.at` and subscript assignment with index arrays, and
functions the standard lacks (exp2, cbrt, fmax, outer, ...). A NumPy function with no
equivalent raises ArrayApiError naming it: never a NumPy array in place of the library's.
"""
from __future__ import annotations

import importlib
import math
from functools import lru_cache, partial

import numpy as np

from .array_api_fourier import Fourier
from .array_api_products import Linalg
from .primitives.primitive import NO_FACTS, SAME_NAME, function_facts, primitives


class ArrayApiError(NotImplementedError):
    """A NumPy function or form that autotrace cannot run on an array-API namespace."""


def numpy_dtype(dtype) -> np.dtype:
    """The NumPy dtype of an array-API dtype (`array_api_strict.float64` -> float64): by name,
    which the standard fixes ("float64", "int32", "bool", "complex128")."""
    try:
        return np.dtype(dtype)
    except TypeError:
        return np.dtype(str(dtype).rsplit(".", 1)[-1])


def place_of(value) -> str:
    """The device name autotrace gives an array of another array library: the namespace's
    module (`array_api_strict`), and the device's position among the namespace's devices
    where it is not the default one (`array_api_strict:1`)."""
    namespace = value.__array_namespace__()
    info = namespace.__array_namespace_info__()
    devices = list(info.devices())
    position = devices.index(value.device) if value.device in devices else 0
    name = namespace.__name__
    return name if devices[position] == info.default_device() else f"{name}:{position}"


def is_place(device: str) -> bool:
    """Whether a device name is one `place_of` gives (not "cpu" or "gpu:N")."""
    return not (device == "cpu" or device.startswith("gpu:"))


def names_for_place(device: str) -> NumpyNames:
    """NumPy's names over the namespace and device that `place_of` named `device`."""
    module, _, position = device.partition(":")
    namespace = importlib.import_module(module)
    info = namespace.__array_namespace_info__()
    chosen = list(info.devices())[int(position)] if position else info.default_device()
    return _names(namespace, chosen)


def numpy_names(value) -> NumpyNames:
    """NumPy's names over the namespace and device of array `value`."""
    return _names(value.__array_namespace__(), value.device)


@lru_cache(maxsize=None)
def _names(namespace, device) -> NumpyNames:
    return NumpyNames(namespace, device)


_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float32", "float64", "complex64", "complex128")


def _array_api_primitive(name: str):
    """The primitive of NumPy's function `name` (a ufunc by any of its names: `abs` is
    absolute) where the array API has a function for it (`Primitive.array_api`): elementwise,
    or a scan (the standard's scans are its `cumulative_*` functions)."""
    function = getattr(np, name, None)
    primitive = primitives.get(function.__name__ if isinstance(function, np.ufunc) else name)
    return primitive if primitive is not None and primitive.array_api else None


def _array_api_function(name: str):
    """How NumPy's function `name` runs over a namespace, where it is no elementwise function of
    the standard (`array_api_function`): its primitive's, or else the NumPy function's facts'
    (np.split, np.moveaxis: no primitive is named after them)."""
    primitive = primitives.get(name)
    if primitive is not None and primitive.array_api_function is not None:
        return primitive.array_api_function
    function = getattr(np, name, None)
    return function_facts.get(function, NO_FACTS).array_api_function if callable(
        function) else None


class _ScalarType:
    """`np.float64` over a namespace: a dtype to pass (`dtype=np.float64`), and a constructor
    of 0-d arrays (`np.float64(2.0)`)."""

    def __init__(self, names: NumpyNames, dtype):
        self.names, self.dtype = names, dtype

    def __call__(self, value=0):
        return self.names.asarray(value, dtype=self.dtype)


class _Add:
    """`np.add` over a namespace: called, the function; `.at(x, index, value)` adds in place,
    repeated positions adding up."""

    def __init__(self, names: NumpyNames):
        self.names = names
        self.function = names._elementwise(names.xp.add)

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)

    def at(self, target, index, value):
        target[...] = self.names.scatter_add(target, index, value)


class _IndexMaker:
    """`np.s_`: `np.s_[0, 1:]` is the index `(0, slice(1, None))`."""

    def __getitem__(self, index):
        return index


class NumpyNames:
    """NumPy's functions, by NumPy's names and rules, over array-API namespace `xp` (arrays
    made here are made on `device`). See the module docstring."""

    nan, inf, pi, e, newaxis = math.nan, math.inf, math.pi, math.e, None
    s_ = _IndexMaker()

    def __init__(self, xp, device):
        self.xp, self.device = xp, device
        self.__name__ = f"numpy names over {xp.__name__}"
        for name in _DTYPES:
            setattr(self, name, _ScalarType(self, getattr(xp, name)))
        self.bool_ = self.bool
        self.linalg = Linalg(self)
        self.fft = Fourier(self)
        self.add = _Add(self)

    def __getattr__(self, name):
        if name.startswith("_"):  # not a NumPy function: Python asking (copy, pickle, ...)
            raise AttributeError(name)
        primitive = _array_api_primitive(name)
        written = _array_api_function(name) if primitive is None else None
        if primitive is not None and primitive.array_api.startswith("cumulative_"):
            function = partial(self._cumulative, getattr(self.xp, primitive.array_api))
        elif primitive is not None:
            function = self._elementwise(getattr(self.xp, primitive.array_api),
                                         float_only=primitive.float_only)
        elif written is SAME_NAME and hasattr(self.xp, name):
            function = getattr(self.xp, name)
        elif callable(written):
            function = partial(written, self)
        else:
            raise ArrayApiError(
                f"numpy.{name} has no equivalent in the array API that autotrace knows, so it "
                f"cannot run on {self.xp.__name__} arrays; run it on NumPy arrays")
        self.__dict__[name] = function  # found once per name
        return function

    # --- dtypes and NumPy's type promotion --------------------------------------------------

    def dtype(self, dtype):
        """The namespace's dtype for a NumPy dtype, scalar type or Python type (or its own)."""
        if dtype is None:
            return None
        if isinstance(dtype, _ScalarType):
            return dtype.dtype
        try:
            name = np.dtype(dtype).name
        except TypeError:
            return dtype  # already the namespace's
        return getattr(self.xp, name)

    def unsupported(self, message: str) -> ArrayApiError:
        return ArrayApiError(message)

    def kind(self, array) -> str:
        """NumPy's kind of an array's dtype: "f", "i", "b", ..."""
        return numpy_dtype(array.dtype).kind

    def is_array(self, value) -> bool:
        return hasattr(value, "__array_namespace__") and not isinstance(
            value, (np.ndarray, np.generic))

    def _promoted(self, values, float_only=False, arrays=False):
        """`values` (arrays and Python scalars) with the arrays cast to NumPy's result type,
        the Python scalars left weak as NumPy 2 leaves them (or made arrays of that type, with
        `arrays`)."""
        if not any(self.is_array(value) for value in values):
            return [self.asarray(value) for value in values]
        kinds = [numpy_dtype(value.dtype) if self.is_array(value) else value for value in values]
        target = np.result_type(*kinds)
        if float_only and target.kind in "biu":
            target = np.dtype(np.float64)
        converted = []
        for value in values:
            if self.is_array(value) and numpy_dtype(value.dtype) != target:
                value = self.xp.astype(value, getattr(self.xp, target.name))
            elif isinstance(value, (np.generic, np.ndarray)):
                value = self.asarray(value)
            elif not self.is_array(value) and target.kind in "fc" and isinstance(value, int):
                value = float(value)
            if arrays and not self.is_array(value):
                value = self.asarray(value, dtype=target)
            converted.append(value)
        return converted

    def _elementwise(self, function, float_only=False):
        def elementwise(*args, **kwargs):
            if kwargs.get("out") is not None or kwargs.get("where") is not None:
                raise ArrayApiError(f"numpy.{function.__name__} with out= or where= cannot "
                                    f"run on {self.xp.__name__} arrays")
            return function(*self._promoted(args, float_only))
        elementwise.__name__ = function.__name__
        return elementwise

    # --- making arrays ------------------------------------------------------------------------

    def asarray(self, value, dtype=None, copy=None):
        if self.is_array(value):
            return self.xp.asarray(value, dtype=self.dtype(dtype), copy=copy)
        if isinstance(value, (list, tuple)) and any(map(self.is_array, value)):
            return self.stack([self.asarray(item, dtype) for item in value])
        return self.xp.asarray(value, dtype=self.dtype(dtype), device=self.device, copy=copy)

    def array(self, value, dtype=None, copy=True):
        return self.asarray(value, dtype, copy=True if copy else None)

    def copy(self, value, order="K"):
        return self.asarray(value, copy=True)

    def float_power(self, x1, x2):
        """np.float_power: `pow` in float64 (complex128 for complex inputs), whatever the
        inputs' precision."""
        complex_inputs = any(isinstance(x, complex) or (
            self.is_array(x) and self.xp.isdtype(x.dtype, "complex floating")) for x in (x1, x2))
        dtype = self.xp.complex128 if complex_inputs else self.xp.float64
        return self.xp.pow(self.asarray(x1, dtype), self.asarray(x2, dtype))

    def astype(self, value, dtype, copy=True):
        return self.xp.astype(value, self.dtype(dtype), copy=copy)

    def zeros(self, shape, dtype=float):
        return self.xp.zeros(shape, dtype=self.dtype(dtype), device=self.device)

    def ones(self, shape, dtype=float):
        return self.xp.ones(shape, dtype=self.dtype(dtype), device=self.device)

    def full(self, shape, fill_value, dtype=None):
        return self.xp.full(shape, fill_value, dtype=self.dtype(dtype), device=self.device)

    def empty(self, shape, dtype=float):
        return self.zeros(shape, dtype)

    def zeros_like(self, x, dtype=None):
        return self.xp.zeros_like(x, dtype=self.dtype(dtype))

    def ones_like(self, x, dtype=None):
        return self.xp.ones_like(x, dtype=self.dtype(dtype))

    def full_like(self, x, fill_value, dtype=None):
        return self.xp.full_like(x, fill_value, dtype=self.dtype(dtype))

    def eye(self, rows, columns=None, k=0, dtype=float):
        return self.xp.eye(rows, columns, k=k, dtype=self.dtype(dtype), device=self.device)

    def arange(self, start, stop=None, step=1, dtype=None):
        return self.xp.arange(start, stop, step, dtype=self.dtype(dtype), device=self.device)

    # --- shapes -----------------------------------------------------------------------------

    def shape(self, x) -> tuple:
        return tuple(x.shape) if self.is_array(x) else np.shape(x)

    def ndim(self, x) -> int:
        return len(self.shape(x))

    def size(self, x) -> int:
        return math.prod(self.shape(x))

    def reshape(self, x, shape, order="C", copy=None):
        if order != "C":
            raise ArrayApiError(f"numpy.reshape with order={order!r} cannot run on "
                                f"{self.xp.__name__} arrays")
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        if copy is None:
            return self.xp.reshape(self.asarray(x), shape)
        return self.xp.reshape(self.asarray(x), shape, copy=copy)

    def ravel(self, x):
        return self.xp.reshape(x, (-1,))

    def transpose(self, x, axes=None):
        return self.xp.permute_dims(x, tuple(reversed(range(x.ndim))) if axes is None
                                    else tuple(axes))

    def swapaxes(self, x, first, second):
        axes = list(range(x.ndim))
        axes[first], axes[second] = axes[second], axes[first]
        return self.xp.permute_dims(x, tuple(axes))

    def expand_dims(self, x, axis):
        return self.xp.expand_dims(x, axis=axis)

    def broadcast_to(self, x, shape):
        return self.xp.broadcast_to(self.asarray(x), tuple(shape))

    def concatenate(self, arrays, axis=0):
        arrays = self._promoted(list(arrays))
        if axis is None:
            return self.xp.concat([self.ravel(array) for array in arrays])
        return self.xp.concat(arrays, axis=axis)

    def stack(self, arrays, axis=0):
        return self.xp.stack(self._promoted(list(arrays)), axis=axis)

    def flip(self, x, axis=None):
        return self.xp.flip(x, axis=axis)

    def result_type(self, *values):
        """NumPy's result type of arrays, dtypes and Python scalars, as the namespace's."""
        kinds = [numpy_dtype(value.dtype) if self.is_array(value) else value
                 if isinstance(value, (bool, int, float, complex)) else numpy_dtype(value)
                 for value in values]
        return self.dtype(np.result_type(*kinds))

    def tile(self, x, repetitions):
        return self.xp.tile(x, tuple(repetitions) if isinstance(repetitions, (
            tuple, list)) else (repetitions,))

    def repeat(self, x, repeats, axis=None):
        return self.xp.repeat(x, repeats, axis=axis)

    # --- reductions -------------------------------------------------------------------------

    def _reduce(self, name, x, axis=None, dtype=None, keepdims=False, **options):
        x = self.asarray(x)
        if name in ("sum", "prod") and numpy_dtype(x.dtype).kind == "b":
            x = self.xp.astype(x, self.dtype(np.int64 if dtype is None else dtype))
        axis = tuple(axis) if isinstance(axis, list) else axis
        if dtype is not None:
            options["dtype"] = self.dtype(dtype)
        return getattr(self.xp, name)(x, axis=axis, keepdims=keepdims, **options)

    def sum(self, x, axis=None, dtype=None, keepdims=False):
        return self._reduce("sum", x, axis, dtype, keepdims)

    def prod(self, x, axis=None, dtype=None, keepdims=False):
        return self._reduce("prod", x, axis, dtype, keepdims)

    def mean(self, x, axis=None, dtype=None, keepdims=False):
        return self._reduce("mean", *self._promoted([x], float_only=True), axis, dtype, keepdims)

    def std(self, x, axis=None, dtype=None, ddof=0, keepdims=False):
        return self._reduce("std", *self._promoted([x], float_only=True), axis, dtype,
                            keepdims, correction=ddof)

    def var(self, x, axis=None, dtype=None, ddof=0, keepdims=False):
        return self._reduce("var", *self._promoted([x], float_only=True), axis, dtype,
                            keepdims, correction=ddof)

    def max(self, x, axis=None, keepdims=False):
        return self._reduce("max", x, axis, None, keepdims)

    def min(self, x, axis=None, keepdims=False):
        return self._reduce("min", x, axis, None, keepdims)

    amax, amin = max, min

    def all(self, x, axis=None, keepdims=False):
        return self._reduce("all", x, axis, None, keepdims)

    def any(self, x, axis=None, keepdims=False):
        return self._reduce("any", x, axis, None, keepdims)

    def argmax(self, x, axis=None, keepdims=False):
        return self.xp.argmax(x, axis=axis, keepdims=keepdims)

    def argmin(self, x, axis=None, keepdims=False):
        return self.xp.argmin(x, axis=axis, keepdims=keepdims)

    def _cumulative(self, function, x, axis=None, dtype=None):
        """A NumPy scan: the standard's `cumulative_*` `function`, over x flattened where NumPy
        takes no axis."""
        x = self.ravel(x) if axis is None else x
        return function(x, axis=0 if axis is None else axis, dtype=self.dtype(dtype))

    def argsort(self, x, axis=-1, kind=None):
        return self.xp.argsort(x, axis=axis, stable=True)

    def sort(self, x, axis=-1, kind=None):
        return self.xp.sort(x, axis=axis, stable=True)

    # --- elementwise functions the standard lacks, or has with other arguments --------------

    def where(self, condition, x, y):
        x, y = self._promoted([x, y])
        return self.xp.where(self.asarray(condition), x, y)

    def clip(self, x, a_min=None, a_max=None, min=None, max=None):
        low = a_min if min is None else min
        high = a_max if max is None else max
        x, *bounds = self._promoted([x, *(b for b in (low, high) if b is not None)])
        low = bounds.pop(0) if low is not None else None
        high = bounds.pop(0) if high is not None else None
        if self.is_array(low) or self.is_array(high):  # NumPy's order: min first, then max
            result = x if low is None else self.xp.maximum(x, low)
            return result if high is None else self.xp.minimum(result, high)
        return self.xp.clip(x, low, high)

    def exp2(self, x):
        (x,) = self._promoted([x], float_only=True)
        return self.xp.pow(2.0, x)

    def cbrt(self, x):
        (x,) = self._promoted([x], float_only=True)
        return self.xp.sign(x) * self.xp.pow(self.xp.abs(x), 1.0 / 3.0)

    def logaddexp2(self, x, y):
        x, y = self._promoted([x, y], float_only=True)
        return self.xp.logaddexp(x * math.log(2.0), y * math.log(2.0)) / math.log(2.0)

    def fmax(self, x, y):
        x, y = self._promoted([x, y], arrays=True)
        return self.xp.where(self.xp.isnan(y), x, self.xp.where(self.xp.isnan(x), y,
                                                                  self.xp.maximum(x, y)))

    def fmin(self, x, y):
        x, y = self._promoted([x, y], arrays=True)
        return self.xp.where(self.xp.isnan(y), x, self.xp.where(self.xp.isnan(x), y,
                                                                  self.xp.minimum(x, y)))

    def sinc(self, x):
        (x,) = self._promoted([x], float_only=True)
        angle = math.pi * self.xp.where(x == 0, 1.0e-20, x)
        return self.xp.sin(angle) / angle

    # --- indexing ---------------------------------------------------------------------------

    def take_along_axis(self, x, indices, axis):
        return self.xp.take_along_axis(x, indices, axis=axis)

    def __repr__(self) -> str:
        return f"<{self.__name__}>"

