"""Backends: what a traced graph runs on, behind one small protocol.

The executor (runtime/executor.py) writes a graph as a Python function; a backend says what
that function's names mean and how some equations are written:

    backend = backend_for(("cpu",))          # the CPU backend the configuration picks
    graph = optimize(graph, backend=backend)  # the common passes, then the backend's own
    function, source = compile_graph(graph, backend=backend)

Four backends, one module each beside this file:
- numpy   (numpy_backend.py)  NumPy's functions, one call per equation; always there.
- llvm    (llvm_backend.py)   the NumPy backend, plus regions of elementwise equations fused
                              into one compiled loop each (llvmlite, glibc's vector math);
                              needs the `cpu` extra, and falls back to numpy without it.
- cupy    (cupy_backend.py)   CuPy's functions on a GPU, elementwise regions fused into CuPy
                              ElementwiseKernels (runtime/fusion.py); needs the `gpu` extra.
- array API (array_api_backend.py) arrays of a library that follows the Python array API
                              (array_api_strict), through NumPy's names over its namespace
                              (runtime/array_api.py); one backend per namespace and device.

The protocol (`Backend`; a new backend is one module with one instance, passed to `register`):
- `name`: how configuration and errors name it.
- `device_kind`: "cpu" or "gpu", the devices (runtime/devices.py) whose arrays it runs on.
- `available()`: whether it can run here (its library imports); a reason when it cannot.
- `array_module()`: the module generated code calls as `np` (numpy, cupy).
- `namespace()`: the globals generated code runs in: `np`, `math`, and autotrace's own array
  functions (runtime/ops.source_globals); an equation's primitive may add its own (a compiled
  kernel, `Primitive.globals`).
- `place_constant(value, device)`: a graph constant (a NumPy array or scalar folded while
  tracing) as the generated code uses it: as it is on the CPU, copied once to the graph's
  `device` ("gpu:N") on a GPU, converted to an array-API library's array there.
- `passes()`: graph passes of its own, run after the common passes and before buffer reuse
  (fusion replaces regions of equations by one equation calling a kernel).
- `writes_in_place`: whether results may be written into dying buffers (`out=`, BufferReuse).
- `lowers_scalars`: whether a graph of float64 scalars may be written as Python floats
  (runtime/passes_floats.py): true on the CPU, false where values must stay on a device.
- `compile_whole(graph, python_version)`: the whole graph as one native function (a graph of
  scalars as one compiled loop), or None to run the executor's Python; `python_version` is
  that Python, which a native function may fall back on (to give NumPy's warnings).
- `run_on(function, device)`: the compiled function as it runs for a graph on `device`: as it
  is, or (CuPy, on a machine with several GPUs) making that GPU the current one for each call,
  since kernels launch on the current device.

A primitive says how it is written (`Primitive.source`/`statements`, in terms of `np`), so a
backend whose array module has NumPy's functions needs no table of its own; what it does
differently it does as a pass, whose equations carry their own source.
"""
from __future__ import annotations

import math
import os

from autotrace.runtime.array_api import is_place
from autotrace.runtime.devices import mixing_error, parse_device
from autotrace.runtime.ops import source_globals


class Backend:
    """The protocol, with the parts every backend shares; see the module docstring."""

    name = "backend"
    device_kind = "cpu"
    lowers_scalars = False
    writes_in_place = True

    def available(self) -> str | None:
        """None when this backend can run here, else why not (what to install)."""
        return None

    def array_module(self):
        raise NotImplementedError

    def namespace(self) -> dict:
        return {"np": self.array_module(), "math": math, **source_globals,
                "__name__": "autotrace_graph"}

    def place_constant(self, value, device: str):
        return value

    def passes(self) -> list:
        return []

    def compile_whole(self, graph, python_version):
        return None

    def run_on(self, function, device: str):
        return function

    def __repr__(self) -> str:
        return f"<autotrace backend {self.name}>"


_BACKENDS: dict[str, Backend] = {}

# The CPU backend asked for: "auto" (llvm where it is available, else numpy), "llvm" or "numpy".
# AUTOTRACE_CPU_BACKEND sets it for a whole process (the tests run both ways with it).
CPU_CHOICES = ("auto", "llvm", "numpy")
_settings = {"cpu": os.environ.get("AUTOTRACE_CPU_BACKEND", "auto")}


def register(backend: Backend) -> Backend:
    _BACKENDS[backend.name] = backend
    return backend


def backend_named(name: str) -> Backend:
    """The registered backend called `name`; ValueError naming those there are otherwise."""
    _load()
    if name not in _BACKENDS:
        raise ValueError(f"unknown backend {name!r}: expected one of "
                         f"{', '.join(repr(known) for known in sorted(_BACKENDS))}")
    return _BACKENDS[name]


def cpu_backend(name: str | None = None) -> str:
    """Set (with a name) or read the CPU backend: "auto" (the default: "llvm" when llvmlite is
    installed, else "numpy"), "llvm" (an error when it cannot run) or "numpy". Functions traced
    afterwards use it; graphs already compiled keep theirs."""
    if name is not None:
        if name not in CPU_CHOICES:
            raise ValueError(f"unknown CPU backend {name!r}: expected one of "
                             f"{', '.join(repr(choice) for choice in CPU_CHOICES)}")
        if name == "llvm":
            reason = backend_named("llvm").available()
            if reason is not None:
                raise RuntimeError(f"the llvm backend cannot run here: {reason}")
        _settings["cpu"] = name
    return _settings["cpu"]


def backend_for(devices) -> Backend:
    """The backend for a graph whose inputs live on `devices` ("cpu", "gpu:0", ...).

    A graph of CPU inputs (or of none) runs on the configured CPU backend, one of GPU inputs
    on CuPy. Inputs on two devices raise DeviceError naming both: autotrace never copies
    between devices behind a user's back (`autotrace.to_device` does it when asked)."""
    _load()
    found = sorted(set(devices))
    if len(found) > 1:
        raise mixing_error(found)
    if found and is_place(found[0]):
        from autotrace.runtime.backends.array_api_backend import backend_for_place
        return backend_for_place(found[0])
    if found and parse_device(found[0]).kind == "gpu":
        return _BACKENDS["cupy"]
    choice = _settings["cpu"]
    if choice == "auto":
        llvm = _BACKENDS.get("llvm")
        choice = "llvm" if llvm is not None and llvm.available() is None else "numpy"
    return _BACKENDS[choice]


def _load() -> None:
    """Register the backends beside this module (on first use, to keep imports light)."""
    if not _settings.get("loaded"):
        from autotrace.runtime.backends import (  # noqa: F401
            cupy_backend, llvm_backend, numpy_backend)
        _settings["loaded"] = True
