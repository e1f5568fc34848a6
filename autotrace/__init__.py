"""autotrace: source-to-source automatic differentiation for NumPy code.

    import autotrace as at
    df = at.grad(f, wrt=(0, 1))
    print(at.source(df))
"""
import importlib as _importlib
import importlib.util as _importlib_util
import os as _os
import sys as _sys


class _CheckoutPackages:
    """In a repository checkout, runtime/ and transforms/ sit beside this folder; installed,
    they are inside it (pyproject's package-dir). Either way they import as autotrace.runtime
    and autotrace.transforms, also when the checkout is used without installing it: this finder
    finds them beside this folder. It comes first on the import path, so that the autotrace of
    a checkout (on PYTHONPATH) runs with its own runtime/ and transforms/, never with those of
    another checkout installed in editable mode, whose finder maps them to its folders."""

    def __init__(self, folders: dict):
        self.folders = folders

    def find_spec(self, fullname, path=None, target=None):
        folder = self.folders.get(fullname)
        if folder is None:
            return None
        return _importlib_util.spec_from_file_location(
            fullname, _os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])


def _find_checkout_packages() -> None:
    here = _os.path.dirname(_os.path.abspath(__file__))
    folders = {f"{__name__}.{name}": _os.path.join(_os.path.dirname(here), name)
               for name in ("runtime", "transforms")
               if not _os.path.isdir(_os.path.join(here, name))}
    folders = {full: folder for full, folder in folders.items()
               if _os.path.isfile(_os.path.join(folder, "__init__.py"))}
    if folders and not any(isinstance(finder, _CheckoutPackages) for finder in _sys.meta_path):
        _sys.meta_path.insert(0, _CheckoutPackages(folders))


_find_checkout_packages()

# Public name -> (module, attribute): each part is imported when first used, so that importing
# autotrace, or one of its layers (autotrace.runtime), loads only what is asked for. An
# attribute of None is the module itself.
_PUBLIC = {
    **{name: ("autotrace.api", name) for name in ("grad", "value_and_grad", "source")},
    **{name: ("autotrace.operators", name) for name in (
        "forward", "jvp", "vjp", "hvp", "elementwise_grad")},
    **{name: ("autotrace.custom", name) for name in (
        "custom_gradient", "custom_vjp", "custom_jvp", "stop_gradient")},
    **{name: ("autotrace.rules", name) for name in ("register_adjoint", "register_tangent", "d")},
    "TransformError": ("autotrace.transforms.errors", "TransformError"),
    "function": ("autotrace.traced_function", "function"),
    "vmap": ("autotrace.batching", "vmap"),
    **{name: ("autotrace.jacobians", name) for name in (
        "jacobian", "hessian", "jacfwd", "jacrev")},
    **{name: ("autotrace.jax_names", name) for name in ("jit", "linearize")},
    "Function": ("autotrace.traced_function", "Function"),
    "ConcreteFunction": ("autotrace.concrete", "ConcreteFunction"),
    "cond": ("autotrace.control", "cond"),
    "while_loop": ("autotrace.control", "while_loop"),
    "print": ("autotrace.control", "print_"),
    "Spec": ("autotrace.runtime.tracing.spec", "Spec"),
    "name_scope": ("autotrace.runtime.scopes", "name_scope"),
    "StateError": ("autotrace.runtime.state", "StateError"),
    "PythonStateWarning": ("autotrace.runtime.object_slots", "PythonStateWarning"),
    "TracedSourceWarning": ("autotrace.from_trace", "TracedSourceWarning"),
    "FrozenRandomWarning": ("autotrace.conversion", "FrozenRandomWarning"),
    "Variable": ("autotrace.variables", "Variable"),
    "Module": ("autotrace.module", "Module"),
    **{name: ("autotrace.clipping", name) for name in (
        "clip_by_norm", "clip_by_global_norm", "global_norm")},
    **{name: ("autotrace.coordinator", name) for name in (
        "Coordinator", "QueueRunner", "FIFOQueue", "OutOfRangeError", "QueueClosedError")},
    **{name: ("autotrace.shared_variables", name) for name in (
        "variable_scope", "get_variable", "get_variable_scope", "AUTO_REUSE", "VariableScope",
        "VariableStore")},
    "implicit_grad": ("autotrace.implicit", "implicit_grad"),
    "implicit_value_and_grad": ("autotrace.implicit", "implicit_value_and_grad"),
    "Checkpoint": ("autotrace.checkpoints", "Checkpoint"),
    "latest_checkpoint": ("autotrace.checkpoints", "latest_checkpoint"),
    "CheckpointManager": ("autotrace.checkpoints", "CheckpointManager"),
    # gradient checkpointing, as jax.checkpoint (saving Variables is Checkpoint, above)
    "checkpoint": ("autotrace.recompute", "checkpoint"),
    "export": ("autotrace.exporting", "export"),
    "ExportError": ("autotrace.exporting", "ExportError"),
    **{name: ("autotrace.placement", name) for name in (
        "device", "current_device", "to_device", "to_numpy", "num_gpus", "list_devices",
        "config", "DeviceError")},
    **{name: (f"autotrace.{name}", None) for name in (
        "nn", "losses", "random", "optimizers", "metrics", "summary", "data", "layers",
        "testing", "distributed", "tree_util", "mixed_precision")},
}

__version__ = "0.1.0"

__all__ = list(_PUBLIC)


def __getattr__(name: str):
    if name not in _PUBLIC:
        # a part of the implementation (autotrace.runtime), imported when first named
        if name.startswith("_") or _importlib_util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module 'autotrace' has no attribute {name!r}")
        return _importlib.import_module(f"{__name__}.{name}")
    module_name, attribute = _PUBLIC[name]
    module = _importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(__all__)
