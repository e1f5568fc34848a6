"""Random numbers as a pure function of a key: the same key gives the same numbers.

    values = uniform(key, (3, 4))            # key: a 0-d uint64 array

A key names one stream of a counter-based generator (NumPy's Philox), so a draw is an op like any
other: it traces into a graph (its key a graph value, so each call of a cached graph can draw
anew), gradients treat it as a constant, and recomputing it, as the adjoint sweep of a called
function does, gives the same numbers. Stateful generators (autotrace.random.Generator) keep
their key in a Variable and advance it on each draw.
"""
from __future__ import annotations

import numpy as np

from ..abstract import AbstractArray
from ..devices import device_of, to_device
from .batching import unrolled_batching
from .registry import bind, define_runtime_function

_DISTRIBUTIONS = ("uniform", "normal")


def _draw(key, *, shape: tuple, dtype, distribution: str):
    generator = np.random.Generator(np.random.Philox(key=int(key)))
    values = generator.random(shape) if distribution == "uniform" else \
        generator.standard_normal(shape)
    return to_device(values.astype(dtype, copy=False), device_of(key))  # where the key is


def _draw_shape(key, *, shape: tuple, dtype, distribution: str):
    if key.shape != () or not np.issubdtype(key.dtype, np.integer):
        raise TypeError(f"a random key is a 0-d integer array, not {key}")
    return AbstractArray(shape, np.dtype(dtype), key.device)


# Each key draws its own numbers: a batch of keys, one draw per key, as each example would.
define_runtime_function("random_draw", _draw, _draw_shape, fresh=True,
                        batching=unrolled_batching)


def draw(key, shape, dtype=np.float64, distribution: str = "uniform"):
    """Numbers of `distribution` ("uniform" in [0, 1), or standard "normal") for `key`."""
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {_DISTRIBUTIONS}, not {distribution!r}")
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(size) for size in shape)
    return bind("random_draw", key, shape=shape, dtype=np.dtype(dtype),
                distribution=distribution)
