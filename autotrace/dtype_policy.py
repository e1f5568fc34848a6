"""Dtype policies for layers (public as `autotrace.mixed_precision`), Keras's names:
`Policy`, `set_global_policy`, `global_policy`, and the default float dtype of layers'
weights (`autotrace.config.set_floatx`).

    from autotrace import mixed_precision
    mixed_precision.set_global_policy("mixed_float16")   # before the layers are made
    model = layers.Sequential([layers.Dense(64, activation="relu"), layers.Dense(10)])
    model(x).dtype                # float16: the layers compute in float16
    model.variables[0].dtype      # float32: and keep their weights in float32

A policy names two dtypes: `variable_dtype`, that of the weights a layer makes, and
`compute_dtype`, that in which it computes: a layer with a policy casts its floating inputs
to the compute dtype, and its weights too where they are read. "mixed_float16" computes in
float16 with float32 weights, so that small updates are not lost to float16's rounding; with
it, scale the loss (`autotrace.optimizers.LossScaleOptimizer`) so that small gradients do not
vanish in float16.

A layer takes its policy when it is made: its `dtype` argument (a policy or its name), else
the global policy. Without either, autotrace's layers keep their own rule: weights in the
floating dtype of the first inputs (float64 for integer inputs), and no casts, so that NumPy
programs stay in float64 and float32 ones in float32. `set_floatx("float32")` makes
"float32" the global policy, as Keras's default is.
"""
from __future__ import annotations

import numpy as np

__all__ = ["Policy", "set_global_policy", "global_policy", "floatx", "set_floatx"]

_FLOATS = ("float16", "float32", "float64")
# policy name -> (compute dtype, variable dtype)
_POLICIES = {**{name: (name, name) for name in _FLOATS},
             "mixed_float16": ("float16", "float32")}


class Policy:
    """The dtypes a layer computes in and keeps its weights in.

    Arguments:
        name: "float16", "float32", "float64" (both dtypes that one), or "mixed_float16"
            (computing in float16, weights in float32). NumPy has no bfloat16, so
            "mixed_bfloat16" and "bfloat16" are refused.

    Examples:
        >>> policy = Policy("mixed_float16")
        >>> policy.compute_dtype, policy.variable_dtype
        ('float16', 'float32')
    """

    def __init__(self, name: str):
        if isinstance(name, Policy):
            name = name.name
        if not isinstance(name, str) or name not in _POLICIES:
            known = ", ".join(repr(known) for known in _POLICIES)
            hint = (" (NumPy has no bfloat16; use 'mixed_float16')"
                    if isinstance(name, str) and "bfloat16" in name else "")
            raise ValueError(f"Policy: argument `name` must be one of {known}, got "
                             f"{name!r}{hint}")
        self.name = name
        self.compute_dtype, self.variable_dtype = _POLICIES[name]

    @property
    def is_mixed(self) -> bool:
        """Whether the weights are kept in another dtype than the one computed in."""
        return self.compute_dtype != self.variable_dtype

    def __eq__(self, other) -> bool:
        return isinstance(other, Policy) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f'<Policy "{self.name}">'


class _Settings:
    """The process-wide defaults: the global policy, and floatx (the name of its dtype)."""

    def __init__(self):
        self.policy: Policy | None = None


_settings = _Settings()


def as_policy(dtype, owner: str) -> Policy | None:
    """A layer's `dtype` argument as a Policy: None stays None; a policy, its name, or a
    NumPy float dtype (np.float32) is one."""
    if dtype is None or isinstance(dtype, Policy):
        return dtype
    if not isinstance(dtype, str):
        try:
            dtype = np.dtype(dtype).name
        except TypeError:
            pass
    if dtype not in _POLICIES:
        known = ", ".join(repr(known) for known in _POLICIES)
        raise ValueError(f"{owner}: argument `dtype` must be a Policy or one of {known}, got "
                         f"{dtype!r}")
    return Policy(dtype)


def set_global_policy(policy) -> None:
    """The policy of the layers made from now on that are given no `dtype`.

    Arguments:
        policy: a Policy, its name ("mixed_float16", "float32", ...), or None for autotrace's
            default (weights in the inputs' floating dtype, no casts).

    Examples:
        >>> set_global_policy("mixed_float16")
        >>> global_policy().compute_dtype
        'float16'
        >>> set_global_policy(None)  # back to autotrace's default
    """
    _settings.policy = as_policy(policy, "set_global_policy")


def global_policy() -> Policy | None:
    """The policy layers made now get when given no `dtype`; None where none was set (then
    layers keep weights in the floating dtype of their first inputs).

    Examples:
        >>> print(global_policy())
        None
        >>> set_global_policy("mixed_float16")
        >>> global_policy().compute_dtype, global_policy().variable_dtype
        ('float16', 'float32')
        >>> set_global_policy(None)
    """
    return _settings.policy


def floatx() -> str | None:
    """The name of the float dtype of layers' weights and computations: that of the global
    policy's variables ("float32" after `set_floatx("float32")`), or None where no policy was
    set: then each layer makes its weights in the floating dtype of its first inputs (float64
    for integer inputs)."""
    return None if _settings.policy is None else _settings.policy.variable_dtype


def set_floatx(name: str | None) -> None:
    """Make layers compute in `name` and keep their weights in it ("float16", "float32" or
    "float64"; None restores autotrace's default, the inputs' dtype), as Keras's
    `keras.config.set_floatx`: it sets the global policy to that dtype.

    Examples:
        >>> set_floatx("float32")
        >>> layers.Dense(2)(np.ones((1, 3))).dtype     # float64 inputs are cast
        dtype('float32')
    """
    if name is not None and name not in _FLOATS:
        raise ValueError(f"set_floatx: argument `name` must be one of {_FLOATS} or None, got "
                         f"{name!r}")
    set_global_policy(name)


def cast_floating(value, dtype: str):
    """`value` in `dtype` if it holds floats (arrays, traced values, Variables), else as it
    is: integer indices and masks are never cast, as Keras's layers autocast."""
    value_dtype = getattr(value, "dtype", None)
    if value_dtype is None or np.dtype(value_dtype).kind != "f" or value_dtype == dtype:
        return value
    return value.astype(dtype)

