"""Mixed precision, Keras's names: dtype policies for layers and loss scaling.

    from autotrace import mixed_precision
    mixed_precision.set_global_policy("mixed_float16")   # before the layers are made
    model = layers.Sequential([layers.Dense(64, activation="relu"), layers.Dense(10)])
    optimizer = mixed_precision.LossScaleOptimizer(autotrace.optimizers.Adam())

Layers made under "mixed_float16" compute in float16 and keep float32 weights (see
autotrace/dtype_policy.py); the LossScaleOptimizer scales the loss so that small float16
gradients do not vanish, and skips the steps whose gradients overflow (see
autotrace/loss_scaling.py).
"""
from autotrace.dtype_policy import Policy, global_policy, set_global_policy
from autotrace.loss_scaling import LossScaleOptimizer

# Keras 3's names for the same two functions
set_dtype_policy = set_global_policy
dtype_policy = global_policy

__all__ = ["Policy", "set_global_policy", "global_policy", "set_dtype_policy", "dtype_policy",
           "LossScaleOptimizer"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports
