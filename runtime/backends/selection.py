"""Which backend runs a graph: the registered backends by name, the CPU backend configured,
and the backend for the devices of a graph's inputs (runtime/backends/__init__.py)."""
from __future__ import annotations

import os
import warnings

from ..array_api import is_place
from ..devices import mixing_error, parse_device
from ..user_frames import user_stacklevel
from . import cupy_backend, numpy_backend
from .array_api_backend import backend_for_place
from .llvm import backend as llvm_backend
from .protocol import Backend


_BACKENDS: dict[str, Backend] = {}

# The CPU backend asked for: "auto" (llvm where it can run, else numpy with one warning), "llvm"
# or "numpy".
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
    """Set (with a name) or read the CPU backend: "auto" (the default: "llvm", or "numpy" with
    one warning where llvmlite cannot compile here), "llvm" (an error when it cannot run) or
    "numpy". Functions traced afterwards use it; graphs already compiled keep theirs."""
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
        reason = _BACKENDS["llvm"].available()
        if reason is not None:
            _warn_once_without_llvm(reason)
        choice = "numpy" if reason else "llvm"
    return _BACKENDS[choice]


_warned_without_llvm: list = []


def _warn_once_without_llvm(reason: str) -> None:
    """The one warning of a process whose traced graphs run on NumPy for want of llvmlite."""
    if _warned_without_llvm:
        return
    _warned_without_llvm.append(reason)
    warnings.warn(f"autotrace's compiled CPU backend cannot run here: {reason}. Traced "
                  f"functions run on the NumPy backend, one NumPy call per operation. Reinstall "
                  f"llvmlite (pip install llvmlite), or set AUTOTRACE_CPU_BACKEND=numpy to "
                  f"choose the NumPy backend without this warning.", RuntimeWarning,
                  stacklevel=user_stacklevel())

