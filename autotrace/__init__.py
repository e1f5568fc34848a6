"""autotrace: source-to-source automatic differentiation for NumPy code.

    import autotrace as at
    df = at.grad(f, wrt=(0, 1))
    print(at.source(df))
"""
from autotrace.api import grad, source, value_and_grad
from autotrace.control import cond, while_loop
from autotrace.control import print_ as print  # noqa: A001 - autotrace.print, by design
from autotrace.custom import custom_gradient, stop_gradient
from autotrace.from_trace import TracedSourceWarning
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
from runtime.scopes import name_scope
from runtime.spec import Spec
from runtime.state import StateError
from transforms.errors import TransformError
from autotrace import data, distributed, layers, losses, metrics, nn, random, summary, testing

__version__ = "0.1.0"

__all__ = ["grad", "value_and_grad", "source", "forward", "jvp", "vjp", "jacobian", "hessian",
           "hvp", "elementwise_grad", "custom_gradient", "stop_gradient", "register_adjoint",
           "register_tangent", "d", "TransformError", "testing", "function", "Function",
           "cond", "while_loop", "print", "Spec", "Variable", "Module", "implicit_grad",
           "implicit_value_and_grad", "nn", "losses", "random", "optimizers", "Checkpoint",
           "latest_checkpoint", "metrics", "summary", "data", "layers", "StateError", "device",
           "current_device", "to_device", "to_numpy", "num_gpus", "list_devices", "config",
           "DeviceError", "CheckpointManager", "TracedSourceWarning", "distributed", "export",
           "ExportError", "name_scope"]
