"""Devices for users: `autotrace.device`, `to_device`, `to_numpy`, `num_gpus`, `list_devices`,
and `autotrace.config`.

    with autotrace.device("gpu:0"):
        autotrace.current_device()           # 'gpu:0', checked to exist
    x_gpu = autotrace.to_device(x, "gpu:0")  # NumPy -> CuPy
    autotrace.to_numpy(x_gpu)                # back, from either device

Without a GPU (or without CuPy), `num_gpus()` is 0, `list_devices()` is `["cpu"]`, and asking
for a GPU raises `autotrace.DeviceError` saying so, unless
`autotrace.config.soft_placement(True)` is on: then the request falls back to the CPU with one
warning.
"""
from __future__ import annotations

import warnings
from contextlib import contextmanager

from autotrace import dtype_policy
from autotrace.runtime.backends import selection as backends
from autotrace.runtime.backends.llvm import cpu_threads as kernel_threads
from autotrace.runtime.devices import (CPU, Device, DeviceError, check_available, cupy_module,
                                       gpu_count, parse_device)
from autotrace.runtime.devices import to_device as _to_device
from autotrace.runtime.devices import to_numpy
from autotrace.runtime.state import ThreadStack

_current = ThreadStack()  # the devices of the `device` contexts open in this thread


class _Config:
    """Process-wide device settings (`autotrace.config`).

    Examples:
        >>> autotrace.config.soft_placement()        # read a setting
        False
        >>> autotrace.config.soft_placement(True)    # set it: a missing GPU falls back to the CPU
        True
        >>> autotrace.config.soft_placement(False)
        False
    """

    def __init__(self):
        self._soft_placement = False
        self._log_placement = False
        self._gpu_memory = {"growth": True, "limit_bytes": None}
        self._warned_fallback = False

    def soft_placement(self, enabled: bool | None = None) -> bool:
        """With True, a request for a GPU that is not there falls back to the CPU with one
        warning instead of an error (off by default). Returns the setting."""
        if enabled is not None:
            self._soft_placement = bool(enabled)
        return self._soft_placement

    def log_placement(self, enabled: bool | None = None) -> bool:
        """With True, each new trace of an autotrace.function prints, on standard error, the
        device its graph runs on and the data it moves. Returns the setting."""
        if enabled is not None:
            self._log_placement = bool(enabled)
        return self._log_placement

    def cpu_backend(self, name: str | None = None) -> str:
        """Set (with a name) or read what traced functions on the CPU compile to: "auto" (the
        default: "llvm" where llvmlite, a dependency of autotrace, loads, else "numpy"), "llvm"
        (elementwise regions fused into compiled loops; an error if it cannot run here) or
        "numpy" (one NumPy call per op). Functions traced afterwards use it; graphs already
        compiled keep theirs. The environment variable AUTOTRACE_CPU_BACKEND sets it too."""
        return backends.cpu_backend(name)

    def cpu_threads(self, count: int | None = None) -> int:
        """Set (with a count) or read how many threads a large fused region of the compiled
        CPU backend runs on: by default the environment variable AUTOTRACE_NUM_THREADS, else
        as many as the cores this process may run on (os.sched_getaffinity). 1 runs every
        kernel on the calling thread. Results are the same, bit for bit, with any count. It
        applies to calls made afterwards, of functions traced before too.

        Examples:
            >>> autotrace.config.cpu_threads(1)   # fused kernels on the calling thread only
            1
        """
        return kernel_threads.cpu_threads(count)

    def gpu_memory(self, growth: bool = True, limit_bytes: int | None = None) -> dict:
        """How GPU memory is taken, through CuPy's memory pool.

        Arguments:
            growth: True (the default) takes memory as arrays need it and keeps freed blocks
                in the pool for reuse; False takes `limit_bytes` (or, without a limit, 90% of
                the free memory of each GPU) into the pool at once, so later allocations never
                wait on the driver.
            limit_bytes: the most the pool may hold, per GPU; allocations past it raise
                CuPy's OutOfMemoryError. None: no limit.
        Returns the settings. They apply to GPUs present now; without one they are kept and
        do nothing.
        """
        if limit_bytes is not None and (not isinstance(limit_bytes, int) or limit_bytes <= 0):
            raise ValueError(f"gpu_memory: limit_bytes must be a positive int or None, not "
                             f"{limit_bytes!r}")
        self._gpu_memory = {"growth": bool(growth), "limit_bytes": limit_bytes}
        cupy = cupy_module()
        for index in range(gpu_count()):
            with cupy.cuda.Device(index):
                pool = cupy.get_default_memory_pool()
                pool.set_limit(size=limit_bytes or 0)
                if not growth:
                    size = limit_bytes or int(cupy.cuda.runtime.memGetInfo()[0] * 0.9)
                    pool.malloc(size)  # freed at once: the pool keeps the block for reuse
        return dict(self._gpu_memory)

    def floatx(self) -> str | None:
        """The float dtype layers keep their weights in and compute in, as Keras's
        `keras.config.floatx()`: that of the global policy (`autotrace.mixed_precision`),
        or None, autotrace's default, where none is set: each layer then makes its weights in
        the floating dtype of its first inputs (float64 for integer inputs), so that NumPy's
        float64 programs stay float64 and float32 ones float32."""
        return dtype_policy.floatx()

    def set_floatx(self, name: str | None) -> None:
        """Make layers made from now on keep their weights and compute in `name` ("float16",
        "float32", Keras's default, or "float64"; None: autotrace's default, see `floatx`).
        It sets the global policy of `autotrace.mixed_precision`.

        Examples:
            >>> autotrace.config.set_floatx("float32")
            >>> autotrace.layers.Dense(2)(np.ones((1, 3))).dtype
            dtype('float32')
        """
        dtype_policy.set_floatx(name)

    def __dir__(self) -> list:
        # autotrace.config is an object, not a module, so it has no __all__: dir() (and a
        # shell's completion) lists its settings only, as dir(autotrace) lists public names.
        return sorted(name for name in vars(_Config) if not name.startswith("_"))


config = _Config()


def _placed(device: Device) -> Device:
    """`device`, or the CPU when it is a missing GPU and soft placement is on."""
    try:
        check_available(device)
    except DeviceError as error:
        if not config.soft_placement():
            raise
        if not config._warned_fallback:
            config._warned_fallback = True
            warnings.warn(f"{error.args[0].split(';')[0]}; running on the CPU instead "
                          "(soft placement)", RuntimeWarning, stacklevel=4)
        return CPU
    return device


@contextmanager
def device(name):
    """Within it, `current_device()` is `name` ("cpu", "gpu", "gpu:N"), checked to exist (or
    the CPU, under soft placement). Contexts nest; leaving one restores the outer device.
    Arrays autotrace makes inside it go on that device: Variables made from NumPy values or
    numbers (layers' weights, metrics' state), random draws of generators made there, and
    optimizer slots (which go where their Variable is, wherever they are made). Arrays you
    pass keep their own device, and a GPU gradient stays on the GPU. Inside a GPU's context
    that GPU is CuPy's current device too, so the CuPy calls of eager code run there (a traced
    function runs on its inputs' GPU wherever it is called).

    Examples:
        >>> with autotrace.device("cpu"):
        ...     autotrace.current_device()
        'cpu'
    """
    with _current.pushed(_placed(parse_device(name))) as placed:
        if placed.kind != "gpu":
            yield placed
            return
        with cupy_module().cuda.Device(placed.index):  # CuPy's own calls run there too
            yield placed


def current_device() -> str:
    """The name of the device autotrace places new arrays on here ("cpu" by default).

    Examples:
        >>> current_device()
        'cpu'
        >>> with autotrace.device("cpu"):
        ...     print(current_device())
        cpu
    """
    return (_current.top() or CPU).name


def placed(array):
    """`array`, a NumPy array autotrace made (a Variable's initial value, an optimizer slot, a
    random draw), on the current device: copied to the GPU inside `device("gpu:N")`."""
    device = _current.top()
    if device is None or device.kind == "cpu":
        return array
    return _to_device(array, device)


def to_device(value, name):
    """`value` (an array, or a tuple, list or dict of them) moved to device `name`.

    Examples:
        >>> moved = to_device({"w": np.ones(2)}, "cpu")     # "gpu:0" to copy onto a GPU
        >>> moved["w"]
        array([1., 1.])
    """
    return _to_device(value, _placed(parse_device(name)))


def num_gpus() -> int:
    """How many GPUs autotrace can use here (0 without CuPy or a CUDA device).

    Examples:
        >>> num_gpus() == len(autotrace.list_devices()) - 1    # 0 where there is no GPU
        True
    """
    return gpu_count()


def list_devices() -> list:
    """The devices here, by name: `["cpu", "gpu:0", ...]`.

    Examples:
        >>> list_devices()[0]                        # then "gpu:0", ... where there are GPUs
        'cpu'
    """
    return ["cpu"] + [f"gpu:{index}" for index in range(gpu_count())]


__all__ = ["device", "current_device", "to_device", "to_numpy", "num_gpus", "list_devices",
           "config", "DeviceError"]
