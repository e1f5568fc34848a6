"""Devices: the CPU (NumPy) and GPUs (CuPy), by name, and moving arrays between them.

    parse_device("gpu:1")      # Device("gpu", 1)
    to_device(x, "gpu:0")      # a CuPy array on GPU 0
    to_numpy(x)                # a NumPy array, from either device

CuPy is optional: nothing here imports it until a GPU is asked for, and without it (or without a
CUDA device) `gpu_count()` is 0 and asking for a GPU raises `DeviceError` saying so.

Names: "cpu"; "gpu", "gpu:N", "cuda" and "cuda:N" (the same GPU N, 0 when omitted) are
accepted; autotrace itself spells a device one way only, "cpu" or "gpu:N": that is what
`device_of(array)`, `Device.name`, abstract values (`f64[3]@gpu:0`) and signatures say.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .array_api import NumpyNames, is_place, numpy_names, place_of


class DeviceError(RuntimeError):
    """A device that does not exist here, or arrays of two devices in one call.

    Examples:
        >>> try:
        ...     autotrace.to_device(np.ones(2), "gpu:7")
        ... except DeviceError as error:
        ...     print(error)   # doctest: +ELLIPSIS
        device 'gpu:7' was asked for, but ...
    """


@dataclass(frozen=True)
class Device:
    kind: str  # "cpu" or "gpu"
    index: int = 0

    @property
    def name(self) -> str:
        return "cpu" if self.kind == "cpu" else f"gpu:{self.index}"

    def __str__(self) -> str:
        return self.name


CPU = Device("cpu")
_NAME = re.compile(r"(cpu|gpu|cuda)(?::(\d+))?")


def parse_device(name) -> Device:
    """The Device a name (or a Device) stands for; ValueError for a name that is none."""
    if isinstance(name, Device):
        return name
    match = _NAME.fullmatch(str(name).strip().lower()) if isinstance(name, str) else None
    if match is None:
        raise ValueError(f"unknown device {name!r}: expected 'cpu', 'gpu', 'gpu:N', 'cuda' "
                         "or 'cuda:N'")
    kind, index = match.groups()
    if kind == "cpu":
        if index not in (None, "0"):
            raise ValueError(f"unknown device {name!r}: there is one CPU device, 'cpu'")
        return CPU
    return Device("gpu", int(index or 0))


def mixing_error(devices) -> DeviceError:
    """The error for values on two or more of `devices` (device or array-library names) in one
    traced function: autotrace never copies between them behind a user's back."""
    found = sorted(set(devices))
    libraries = [device for device in found if is_place(device)]
    if libraries:
        kinds = " and ".join("NumPy" if device == "cpu" else "CuPy" if device.startswith(
            "gpu") else device for device in sorted(found, key=is_place))
        return DeviceError(f"the inputs are arrays of {kinds}: a traced function runs on one "
                           f"array library; convert them to one first (e.g. "
                           f"{libraries[0].partition(':')[0]}.asarray(x) or numpy.asarray(x))")
    return DeviceError(f"the inputs are on {' and '.join(found)}: a traced function runs on one "
                       f"device; move them with autotrace.to_device(x, {found[0]!r}) first (a "
                       f"Variable is on the device it was made on: make it inside "
                       f"autotrace.device({found[-1]!r}) to have it there)")


def is_gpu_array(value) -> bool:
    """Whether `value` is a CuPy array (without importing CuPy)."""
    return type(value).__module__.startswith("cupy") and hasattr(value, "shape")


def device_of(value) -> str:
    """Where an array lives: "gpu:N" for a CuPy array on GPU N, "cpu" for NumPy arrays and
    scalars and Python numbers; an array of another library that follows the array API is on
    its namespace (`array_api_strict`, runtime/array_api.place_of), whose backend runs it."""
    if type(value).__module__.startswith("cupy"):
        return f"gpu:{int(value.device.id)}"
    return place_of(value) if _of_another_library(value) else "cpu"


def array_module(value):
    """numpy, or cupy for a CuPy array, or NumPy's names over the namespace of another array
    API library's array (runtime/array_api.numpy_names)."""
    if type(value) is np.ndarray:  # the common case, first: eager derivatives ask per call
        return np
    if type(value).__module__.startswith("cupy"):
        import cupy  # only a CuPy array gets here, so CuPy is installed
        return cupy
    return numpy_names(value) if _of_another_library(value) else np


def _of_another_library(value) -> bool:
    """Whether `value` is an array of an array-API library other than NumPy and CuPy."""
    return not type(value).__module__.startswith(("numpy", "cupy")) and \
        hasattr(type(value), "__array_namespace__")


def _index_on(module, index):
    """`index` with its NumPy arrays (np.arange(n) in the user's subscript) copied to the
    array library `module` (CuPy, or an array-API namespace's NumPy names), which takes none in
    place of its own arrays."""
    if module is np:
        return index
    if isinstance(index, np.ndarray):
        return module.asarray(index)
    if isinstance(index, tuple):
        return tuple(module.asarray(item) if isinstance(item, np.ndarray) else item
                     for item in index)
    return index


def add_at(out, index, value) -> None:
    """`np.add.at(out, index, value)` on `out`'s device (repeated indices add up); NumPy arrays
    in `index` are copied there first."""
    module = array_module(out)
    if module is np:
        numpy_add_at(out, index, value)
    else:
        module.add.at(out, _index_on(module, index), value)


def numpy_add_at(out, index, value) -> None:
    """`np.add.at(out, index, value)`, the same bits, faster where `index` is one array of row
    numbers (an embedding's gradient: `np.add.at(table, token_ids, rows)`).

    NumPy runs `np.add.at` over rows of a 2-d array element by element through a general
    iterator, about 9 ns an element; over a 1-d array it has a loop of its own, 5x faster. So
    the rows are added as one 1-d `np.add.at` over `out`'s elements, each element's index
    `row * row_size + column`: every element still gets its values in the order of `index`,
    as NumPy adds them. (2048 rows of 64 float64 into a table of 61: 1,150 -> 240 us.) An index
    out of bounds is left to `np.add.at`, which names the row."""
    rows = index[0] if type(index) is tuple and len(index) == 1 else index
    if not (type(out) is np.ndarray and out.ndim >= 2 and out.flags.c_contiguous
            and out.flags.writeable and type(rows) is np.ndarray and rows.ndim == 1
            and rows.dtype.kind in "iu" and out.dtype.kind in "iufc"):
        np.add.at(out, index, value)
        return
    count, row_size = len(out), math.prod(out.shape[1:])
    try:
        value = np.broadcast_to(value, rows.shape + out.shape[1:])
    except ValueError:
        np.add.at(out, index, value)  # NumPy's error
        return
    if rows.size == 0 or row_size == 0 or rows.max() >= count or (
            rows.dtype.kind == "i" and rows.min() < -count):
        np.add.at(out, index, value)  # nothing to add, or NumPy's IndexError naming the row
        return
    elements = rows.astype(np.intp)[:, None] * row_size + np.arange(row_size)
    np.add.at(out.reshape(-1), elements.reshape(-1), value.reshape(-1))


def set_at(out, index, value):
    """`out[index] = value` on `out`'s device, returning the result; NumPy arrays in `index`
    are copied there first. NumPy and CuPy arrays are written in place and returned; an
    array-API library's array may take no index arrays in an assignment (the standard does not
    ask for it, and array_api_strict refuses it), so it gets a new array with the values in."""
    module = array_module(out)
    index = _index_on(module, index)
    if isinstance(module, NumpyNames):
        return module.setitem(out, index, value)
    out[index] = value
    return out


def reshape_view(a, shape):
    """`np.reshape(a, shape, copy=False)` on `a`'s device: a view of `a`, or NumPy's ValueError
    where a's memory layout allows none. CuPy's reshape takes no `copy` and copies there: its
    result is checked to share a's memory."""
    module = array_module(a)
    if not is_gpu_array(a):
        return module.reshape(a, shape, copy=False)
    view = module.reshape(a, shape)
    if a.size and not module.shares_memory(view, a):
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    return view


def cupy_module():
    """CuPy, or None when it is not installed or cannot start (no CUDA driver)."""
    try:
        import cupy
    except Exception:  # noqa: BLE001 - an ImportError, or CUDA libraries missing
        return None
    return cupy


def gpu_count() -> int:
    """How many CUDA GPUs CuPy can use here (0 without CuPy, a driver, or a GPU)."""
    cupy = cupy_module()
    if cupy is None:
        return 0
    try:
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - CUDARuntimeError without a driver or device
        return 0


def check_available(device: Device) -> None:
    """Raise DeviceError unless `device` exists here."""
    if device.kind == "cpu":
        return
    count = gpu_count()
    if device.index >= count:
        have = ("no GPU is available (CuPy is not installed: pip install 'autotrace[gpu]')"
                if cupy_module() is None else
                "no GPU is available" if count == 0 else
                f"only {count} GPU{'s' if count > 1 else ''} (gpu:0"
                f"{f' to gpu:{count - 1}' if count > 1 else ''}) available")
        raise DeviceError(f"device {device.name!r} was asked for, but {have}; use 'cpu', or "
                          "autotrace.config.soft_placement(True) to fall back to it")


def to_device(value, device):
    """`value` (an array, or a tuple, list or dict of them) on `device`; arrays already there
    are returned as they are, and other leaves (numbers, strings) too."""
    target = parse_device(device)
    if isinstance(value, (tuple, list)):
        items = [to_device(item, target) for item in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else type(value)(items)
    if isinstance(value, dict):
        return type(value)((key, to_device(item, target)) for key, item in value.items())
    if not isinstance(value, np.ndarray | np.generic) and not \
            type(value).__module__.startswith("cupy"):
        return value
    if parse_device(device_of(value)) == target:
        return value
    if target.kind == "cpu":
        return value.get()
    check_available(target)
    cupy = cupy_module()
    with cupy.cuda.Device(target.index):
        return cupy.asarray(value)


def to_numpy(value):
    """`value` with every array a NumPy array (copied from the GPU where it is on one).

    Examples:
        >>> autotrace.to_numpy([np.ones(2), 3.0])    # copied from the GPU, for arrays there
        [array([1., 1.]), 3.0]
    """
    return to_device(value, CPU)
