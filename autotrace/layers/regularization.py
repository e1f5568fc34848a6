"""Dropout: drops a random fraction of its inputs while training."""
from __future__ import annotations

import numpy as np

from autotrace.layers.base import Layer, _rate
from autotrace.random import Generator


class Dropout(Layer):
    """Sets a random fraction `rate` of its inputs to 0 while training, and scales the rest by
    1 / (1 - rate), so that the expected output is the input; the identity otherwise.

    Arguments:
        rate: the fraction to drop, in [0, 1).
        seed: seeds the layer's `autotrace.random.Generator`, which draws the masks.
    Call as `layer(inputs, training=False)`; returns an array shaped like inputs.

    The mask is a constant to the gradient. Each call draws a new one, also each call of a
    cached traced step (the generator's key is a Variable the graph advances). A gradient
    through `training=True` (`autotrace.grad`, `implicit_grad`, eager or traced, and Hessians)
    uses the mask the value was made of: the adjoint sweep's recomputation of the layer's call
    starts from the key the call began with, and the key moves once a call.

    Examples:
        >>> layer = Dropout(0.5, seed=0)
        >>> layer(np.ones(4)), layer(np.ones(4), training=True).shape
        (array([1., 1., 1., 1.]), (4,))
    """

    default_name = "dropout"
    takes_one_array = True
    supports_masking = True  # elementwise, or per step: the mask still holds

    def __init__(self, rate: float, seed: int | None = None, name: str | None = None, dtype=None):
        super().__init__(name, dtype)
        self.rate = _rate("Dropout", rate)
        self.generator = Generator(seed, name=f"{self.name}/seed_generator")

    def call(self, inputs, training=False):
        if not training or self.rate == 0.0:
            return inputs
        keep = self.generator.uniform(np.shape(inputs)) >= self.rate
        return np.where(keep, inputs / (1.0 - self.rate), 0.0)
