"""An emulated CuPy for running tests/gpu on a machine without a GPU (a developer's check, not
a GPU test): `PYTHONPATH=tests/gpu/emulated:$PWD pytest tests/gpu`.

It keeps the parts of CuPy's behaviour that code written for NumPy trips over, so that such
code fails here as it would on a GPU:
- `cupy.ndarray` is its own type (module "cupy"), not a NumPy array; NumPy functions and ufuncs
  given one dispatch to CuPy (NEP 13/18), and return CuPy arrays;
- converting one to NumPy implicitly (`np.asarray(x)`, `np.array(x)`) raises TypeError, as
  CuPy does; `x.get()` and `cupy.asnumpy(x)` copy it;
- CuPy functions refuse NumPy arrays (`cupy.add(cupy_x, numpy_y)` raises TypeError), and
  reductions and indexing give 0-d arrays, never NumPy scalars;
- `ElementwiseKernel` runs the kernel's C through tests/test_fusion.py's interpreter.
The arithmetic is NumPy's, on the CPU. One device, gpu:0.
"""
from __future__ import annotations

import numbers

import numpy as _np

__version__ = "0.0-emulated"

_IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
             "construct a NumPy array explicitly.")


class _Device:
    def __init__(self, device_id: int = 0):
        if device_id != 0:
            raise RuntimeError(f"cudaErrorInvalidDevice: the emulated CuPy has one device, "
                               f"not {device_id}")
        self.id = device_id

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def use(self):
        return self

    def synchronize(self):
        return None

    def __eq__(self, other):
        return isinstance(other, _Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)


def _unwrap(value, allow_numpy: bool):
    if isinstance(value, ndarray):
        return value._array
    if isinstance(value, _np.ndarray) and not allow_numpy:
        raise TypeError(f"Unsupported type {type(value)}")
    if isinstance(value, (list, tuple)):
        items = [_unwrap(item, allow_numpy) for item in value]
        return type(value)(items) if type(value) in (list, tuple) else value
    if isinstance(value, dict):
        return {key: _unwrap(item, allow_numpy) for key, item in value.items()}
    return value


def _wrap(value):
    if isinstance(value, _np.ndarray):
        return ndarray(value)
    if isinstance(value, _np.generic):
        return ndarray(_np.asarray(value))
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_wrap(item) for item in value)
    if isinstance(value, list):
        return [_wrap(item) for item in value]
    if isinstance(value, tuple):  # a named tuple (linalg results)
        return type(value)(*(_wrap(item) for item in value))
    return value


def _wrapped(function, allow_numpy=False):
    def call(*args, **kwargs):
        return _wrap(function(*_unwrap(args, allow_numpy), **_unwrap(kwargs, allow_numpy)))
    call.__name__ = getattr(function, "__name__", "function")
    return call


class ndarray:  # noqa: N801 - CuPy's name
    __array_priority__ = 100

    def __init__(self, array):
        if isinstance(array, tuple):  # cupy.ndarray(shape, dtype)
            array = _np.empty(array)
        self._array = _np.asarray(array)

    # what NumPy sees
    def __array__(self, dtype=None, copy=None):
        raise TypeError(_IMPLICIT)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        inputs = _unwrap(inputs, allow_numpy=False)
        kwargs = _unwrap(kwargs, allow_numpy=False)
        result = getattr(ufunc, method)(*inputs, **kwargs)
        if out is not None:
            return out[0] if isinstance(out, tuple) and len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        module = func.__module__ or ""
        if module.startswith("numpy.linalg"):
            target = getattr(linalg, func.__name__, None)
        elif module.startswith("numpy.fft"):
            target = getattr(fft, func.__name__, None)
        else:
            target = globals().get(func.__name__) or _module_function(func.__name__)
        if target is None:
            return NotImplemented
        return target(*args, **kwargs)

    # attributes
    shape = property(lambda self: self._array.shape)
    dtype = property(lambda self: self._array.dtype)
    ndim = property(lambda self: self._array.ndim)
    size = property(lambda self: self._array.size)
    itemsize = property(lambda self: self._array.itemsize)
    nbytes = property(lambda self: self._array.nbytes)
    strides = property(lambda self: self._array.strides)
    flags = property(lambda self: self._array.flags)
    device = property(lambda self: _Device(0))
    T = property(lambda self: ndarray(self._array.T))
    mT = property(lambda self: ndarray(_np.swapaxes(self._array, -1, -2)))
    real = property(lambda self: ndarray(self._array.real))
    imag = property(lambda self: ndarray(self._array.imag))

    def get(self, stream=None, order="C", out=None):
        return _np.array(self._array, copy=True)

    def set(self, array):
        self._array[...] = array

    def item(self, *args):
        return self._array.item(*args)

    def tolist(self):
        return self._array.tolist()

    def __getattr__(self, name):
        if name.startswith("__"):  # no __array_interface__: NumPy must not read it silently
            raise AttributeError(name)
        attribute = getattr(self._array, name)
        if callable(attribute):
            return _wrapped(attribute)
        return _wrap(attribute)

    def __repr__(self):
        return repr(self._array).replace("array(", "array(", 1)

    def __str__(self):
        return str(self._array)

    def __len__(self):
        return len(self._array)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (_wrap(item) for item in self._array)

    def __getitem__(self, index):
        return _wrap(self._array[_unwrap(index, allow_numpy=True)])

    def __setitem__(self, index, value):
        self._array[_unwrap(index, allow_numpy=True)] = _unwrap(value, allow_numpy=True)

    def __float__(self):
        return float(self._array)

    def __int__(self):
        return int(self._array)

    def __complex__(self):
        return complex(self._array)

    def __bool__(self):
        return bool(self._array)

    def __index__(self):
        return self._array.__index__()

    def __hash__(self):
        raise TypeError("unhashable type: 'cupy.ndarray'")

    def __copy__(self):
        return ndarray(self._array.copy())

    def __deepcopy__(self, memo):
        return ndarray(self._array.copy())

    def __reduce__(self):
        return (ndarray, (self._array,))


def _operator(ufunc, reflected=False):
    if reflected:
        return lambda self, other: ufunc(other, self)
    return lambda self, other: ufunc(self, other)


for _name, _ufunc in [("add", _np.add), ("sub", _np.subtract), ("mul", _np.multiply),
                      ("truediv", _np.true_divide), ("floordiv", _np.floor_divide),
                      ("mod", _np.remainder), ("pow", _np.power), ("matmul", _np.matmul),
                      ("and", _np.bitwise_and), ("or", _np.bitwise_or),
                      ("xor", _np.bitwise_xor), ("lshift", _np.left_shift),
                      ("rshift", _np.right_shift)]:
    setattr(ndarray, f"__{_name}__", _operator(_ufunc))
    setattr(ndarray, f"__r{_name}__", _operator(_ufunc, reflected=True))

    def _inplace(self, other, ufunc=_ufunc):
        ufunc(self, other, out=(self,))
        return self
    setattr(ndarray, f"__i{_name}__", _inplace)

for _name, _ufunc in [("lt", _np.less), ("le", _np.less_equal), ("gt", _np.greater),
                      ("ge", _np.greater_equal), ("eq", _np.equal), ("ne", _np.not_equal)]:
    setattr(ndarray, f"__{_name}__", _operator(_ufunc))
ndarray.__neg__ = lambda self: _np.negative(self)
ndarray.__pos__ = lambda self: _np.positive(self)
ndarray.__abs__ = lambda self: _np.absolute(self)
ndarray.__invert__ = lambda self: _np.invert(self)


# module functions: NumPy's, refusing NumPy arrays, except where CuPy takes host data
_TAKES_HOST = {"asarray", "array", "ascontiguousarray", "asfortranarray", "asanyarray"}


class _Ufunc:
    """cupy.add and the like: called, and .at, .outer, .reduce, .accumulate (CuPy >= 13)."""

    def __init__(self, ufunc):
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__
        self.nin, self.nout = ufunc.nin, ufunc.nout

    def __call__(self, *args, **kwargs):
        return _wrapped(self._ufunc)(*args, **kwargs)

    def __getattr__(self, method):
        return _wrapped(getattr(self._ufunc, method))


def _module_function(name):
    function = getattr(_np, name, None)
    if isinstance(function, _np.ufunc):
        return _Ufunc(function)
    if function is None or not callable(function) or isinstance(function, type):
        return None
    return _wrapped(function, allow_numpy=name in _TAKES_HOST)


def asnumpy(value, stream=None, order="C", out=None):
    if isinstance(value, ndarray):
        return value.get()
    return _np.asarray(value)


def copyto(target, source):
    target._array[...] = _unwrap(source, allow_numpy=False)


def get_array_module(*args):
    import sys
    if any(isinstance(arg, ndarray) for arg in args):
        return sys.modules[__name__]
    return _np


def __getattr__(name):
    value = getattr(_np, name)  # dtypes, constants (cupy.float64 is numpy.float64)
    if isinstance(value, type) or isinstance(value, (numbers.Number, _np.dtype)) or \
            name in ("s_", "index_exp", "newaxis"):
        return value
    function = _module_function(name)
    if function is None:
        raise AttributeError(f"module 'cupy' has no attribute {name!r}")
    return function


class _Submodule:
    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if isinstance(value, type):
            return value
        return _wrapped(value) if callable(value) else value


linalg = _Submodule(_np.linalg)
fft = _Submodule(_np.fft)


class _Random:
    """cupy.random: draws made by NumPy, returned on the device."""

    def default_rng(self, seed=None):
        generator = _np.random.default_rng(seed)

        class _Generator:
            def __getattr__(self, name):
                return _wrapped(getattr(generator, name))
        return _Generator()

    def __getattr__(self, name):
        return _wrapped(getattr(_np.random, name))


random = _Random()


class _ElementwiseKernel:
    def __init__(self, in_params, out_params, operation, name, **options):
        self.in_params, self.out_params = in_params, out_params
        self.operation, self.name = operation, name

    def __call__(self, *arrays):
        from tests.test_fusion import _InterpretedKernel
        kernel = _InterpretedKernel(self.in_params, self.out_params, self.operation, self.name)
        return _wrap(_np.asarray(kernel(*_unwrap(arrays, allow_numpy=False))))


ElementwiseKernel = _ElementwiseKernel


class _MemoryPool:
    def __init__(self):
        self.limit = 0

    def set_limit(self, size=None, fraction=None):
        self.limit = size or 0

    def get_limit(self):
        return self.limit

    def malloc(self, size):
        return None

    def used_bytes(self):
        return 0

    def total_bytes(self):
        return 0

    def free_all_blocks(self):
        return None


_POOL = _MemoryPool()


class OutOfMemoryError(MemoryError):
    pass


def empty(shape, dtype=float, order="C"):
    """cupy.empty, refusing more than the memory pool's limit as CuPy does."""
    array = _np.empty(shape, dtype, order)
    if _POOL.limit and array.nbytes > _POOL.limit:
        raise OutOfMemoryError(f"Out of memory allocating {array.nbytes:,} bytes (limit "
                               f"{_POOL.limit:,} bytes)")
    return ndarray(array)


def get_default_memory_pool():
    return _POOL


class _Runtime:
    @staticmethod
    def getDeviceCount():  # noqa: N802 - CuPy's name
        return 1

    @staticmethod
    def getDeviceProperties(device):  # noqa: N802
        return {"name": b"emulated GPU (NumPy on the CPU)"}

    @staticmethod
    def memGetInfo():  # noqa: N802
        return (1 << 34, 1 << 34)

    @staticmethod
    def deviceSynchronize():  # noqa: N802
        return None


class _Stream:
    null = None

    def synchronize(self):
        return None


class _Memory:
    OutOfMemoryError = OutOfMemoryError


class _Cuda:
    Device = _Device
    memory = _Memory
    runtime = _Runtime()
    Stream = _Stream

    @staticmethod
    def get_current_stream():
        return _Stream()


cuda = _Cuda()
