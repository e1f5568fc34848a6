"""Which backend runs a graph: the registered backends by name, the CPU backend configured,
and the backend for the devices of a graph's inputs (runtime/backends/__init__.py)."""
from __future__ import annotations

import os

from ..array_api import is_place
from ..devices import mixing_error, parse_device
from . import cupy_backend, numpy_backend
from .array_api_backend import backend_for_place
from .llvm import backend as llvm_backend
from .protocol import Backend


_BACKENDS: dict[str, Backend] = {}

# The CPU backend asked for: "auto" (llvm where it is available, else numpy), "llvm" or "numpy".
# AUTOTRACE_CPU_BACKEND sets it for a whole process (the tests run both ways with it).
CPU_CHOICES = ("auto", "llvm", "numpy")
_settings = {"cpu": os.environ.get("AUTOTRACE_CPU_BACKEND", "auto")}


def register(backend: Backend) -> Backend:
    _BACKENDS[backend.name] = backend
    return backend


for _module in (numpy_backend, llvm_backend, cupy_backend):
    register(_module.BACKEND)


def backend_named(name: str) -> Backend:
    """The registered backend called `name`; ValueError naming those there are otherwise."""
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
    found = sorted(set(devices))
    if len(found) > 1:
        raise mixing_error(found)
    if found and is_place(found[0]):
        return backend_for_place(found[0])
    if found and parse_device(found[0]).kind == "gpu":
        return _BACKENDS["cupy"]
    choice = _settings["cpu"]
    if choice == "auto":
        llvm = _BACKENDS.get("llvm")
        choice = "llvm" if llvm is not None and llvm.available() is None else "numpy"
    return _BACKENDS[choice]

