"""autotrace: source-to-source automatic differentiation for NumPy code.

    import autotrace as at
    df = at.grad(f, wrt=(0, 1))
    print(at.source(df))
"""
import importlib.util as _importlib_util
import os as _os
import sys as _sys


def _bind_checkout_packages() -> None:
    """In a repository checkout, runtime/ and transforms/ sit beside this folder; installed,
    they are inside it (pyproject's package-dir). Either way they import as autotrace.runtime
    and autotrace.transforms, also when the checkout is used without installing it."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    for name in ("runtime", "transforms"):
        full = f"{__name__}.{name}"
        folder = _os.path.join(_os.path.dirname(here), name)
        if full in _sys.modules or _os.path.isdir(_os.path.join(here, name)) or \
                not _os.path.isfile(_os.path.join(folder, "__init__.py")):
            continue
        spec = _importlib_util.spec_from_file_location(
            full, _os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])
        module = _importlib_util.module_from_spec(spec)
        _sys.modules[full] = module
        spec.loader.exec_module(module)
        globals()[name] = module


_bind_checkout_packages()
from autotrace.api import grad, source, value_and_grad
from autotrace.control import cond, while_loop
from autotrace.control import print_ as print  # noqa: A001 - autotrace.print, by design
from autotrace.custom import custom_gradient, stop_gradient
from autotrace.from_trace import TracedSourceWarning
from autotrace.conversion import FrozenRandomWarning
from autotrace.concrete import ConcreteFunction
from autotrace.function import Function, function
from autotrace.export import ExportError, export
from autotrace.operators import (elementwise_grad, forward, hessian, hvp, jacobian, jvp,
                                 vjp)
from autotrace.rules import d, register_adjoint, register_tangent
from autotrace.variables import Variable
from autotrace.module import Module
from autotrace.implicit import implicit_grad, implicit_value_and_grad
from autotrace import optimizers
from autotrace.checkpoint import Checkpoint, latest_checkpoint
from autotrace.checkpoint_manager import CheckpointManager
from autotrace.device import (DeviceError, config, current_device, device, list_devices,
                              num_gpus, to_device, to_numpy)
from autotrace.runtime.scopes import name_scope
from autotrace.runtime.spec import Spec
from autotrace.runtime.state import StateError
from autotrace.runtime.object_slots import PythonStateWarning
from autotrace.transforms.errors import TransformError
from autotrace import data, distributed, layers, losses, metrics, nn, random, summary, testing
# Last: the name autotrace.checkpoint is the function (as jax.checkpoint), bound after the
# module autotrace/checkpoint.py (Checkpoint, which saves Variables) has been imported, which
# would bind the name to that module.
from autotrace.recompute import checkpoint

__version__ = "0.1.0"

__all__ = ["grad", "value_and_grad", "source", "forward", "jvp", "vjp", "jacobian", "hessian",
           "hvp", "elementwise_grad", "custom_gradient", "stop_gradient", "register_adjoint",
           "register_tangent", "d", "TransformError", "testing", "function", "Function",
           "cond", "while_loop", "print", "Spec", "Variable", "Module", "implicit_grad",
           "implicit_value_and_grad", "nn", "losses", "random", "optimizers", "Checkpoint",
           "latest_checkpoint", "metrics", "summary", "data", "layers", "StateError", "device",
           "current_device", "to_device", "to_numpy", "num_gpus", "list_devices", "config",
           "DeviceError", "CheckpointManager", "TracedSourceWarning", "distributed", "export",
           "ExportError", "name_scope", "ConcreteFunction", "checkpoint", "FrozenRandomWarning",
           "PythonStateWarning"]
