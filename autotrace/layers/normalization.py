"""BatchNormalization, which normalizes per feature and keeps moving statistics, and
LayerNormalization, which normalizes each example over its features."""
from __future__ import annotations

import numpy as np

from autotrace.layers.base import Layer
from autotrace.transforms.rules.core import constant


class BatchNormalization(Layer):
    """Normalizes its inputs per feature: `gamma * (x - mean) / sqrt(variance + epsilon) + beta`.

    Arguments:
        axis: the feature axis (default -1, the last).
        momentum: the moving statistics' decay: moving = moving * momentum + batch * (1 -
            momentum).
        epsilon: added to the variance.
        center: whether to add the trainable offset beta; scale: whether to multiply by the
            trainable gamma.
        name: default batch_normalization, batch_normalization_1, ...
        dtype: a dtype policy (see `Layer`); under "mixed_float16" the layer normalizes in
            float32, its Variables' dtype, and returns float16.
    Call as `layer(inputs, training=False)`. With training=True it normalizes with the batch's
    mean and (biased) variance over every axis but `axis`, and updates the non-trainable
    Variables `<name>/moving_mean` and `<name>/moving_variance` by assign; with training=False
    it normalizes with the moving statistics, as it does frozen (`layer.trainable = False`),
    whatever `training` says (as in Keras). Returns an array shaped like inputs.

    Under `autotrace.grad` and `implicit_grad`, eager or traced, the moving statistics are
    updated once per call of the layer, as without them: the runs of `call` that the adjoint
    sweep makes to recompute values see them as the call did, and leave them alone (a layer
    called on two batches in one loss updates from both, in order). A loss that reads them
    before such a call is refused (its adjoint sweep would read the new values). Inside
    `autotrace.function` the update is a graph output, written back on every call.

    Examples:
        >>> layer = BatchNormalization(momentum=0.5)
        >>> layer(np.array([[0.0], [2.0]]), training=True).round(4)[:, 0]
        array([-0.9995,  0.9995])
        >>> layer.moving_mean.numpy(), layer.moving_variance.numpy()
        (array([0.5]), array([1.]))
    """

    default_name = "batch_normalization"
    takes_one_array = True
    casts_weights = True

    def __init__(self, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, name: str | None = None, dtype=None):
        super().__init__(name, dtype)
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise ValueError(f"BatchNormalization: argument `axis` must be an integer, got "
                             f"{axis!r}")
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"BatchNormalization: argument `momentum` must be in [0, 1], got "
                             f"{momentum!r}")
        if not epsilon > 0.0:
            raise ValueError(f"BatchNormalization: argument `epsilon` must be positive, got "
                             f"{epsilon!r}")
        self.axis, self.momentum, self.epsilon = int(axis), float(momentum), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)

    def build(self, input_shape) -> None:
        rank = len(input_shape)
        if not -rank <= self.axis < rank:
            raise ValueError(f"BatchNormalization {self.name!r}: argument `axis` must be an "
                             f"axis of the inputs, of rank {rank}, got {self.axis}")
        axis = self.axis % rank
        features = (input_shape[axis],)
        self.reduction_axes = tuple(a for a in range(rank) if a != axis)
        self.broadcast_shape = tuple(-1 if a == axis else 1 for a in range(rank))
        dtype = self.weight_dtype
        if self.scale:
            self.add_weight("gamma", features, "ones", dtype=dtype)
        if self.center:
            self.add_weight("beta", features, "zeros", dtype=dtype)
        self.add_weight("moving_mean", features, "zeros", trainable=False, dtype=dtype)
        self.add_weight("moving_variance", features, "ones", trainable=False, dtype=dtype)

    def _input_spec(self):
        return len(self.broadcast_shape), {self.axis: self.moving_mean.shape[0]}

    def call(self, inputs, training=False):
        # under a mixed policy the statistics are computed in float32, the variables' dtype
        inputs = self.in_variable_dtype(inputs)
        if training and self.trainable:  # frozen, it runs in inference mode (as in Keras)
            mean = np.mean(inputs, axis=self.reduction_axes, keepdims=True)
            variance = np.mean((inputs - mean) ** 2, axis=self.reduction_axes, keepdims=True)
            _update_moving_statistics(self, mean, variance)
        else:
            mean = np.reshape(self.moving_mean, self.broadcast_shape)
            variance = np.reshape(self.moving_variance, self.broadcast_shape)
        return self.compute(_normalized(self, inputs, mean, variance))


def _update_moving_statistics(layer: BatchNormalization, mean, variance) -> None:
    """Moves the layer's moving statistics toward a batch's (a constant to the gradient).
    Under implicit_grad the assignments wait until the gradient is done, so the adjoint
    sweep's recomputations of the layer do not move them again."""
    decay = layer.momentum
    layer.moving_mean.assign(layer.moving_mean * decay + np.reshape(mean, (-1,)) * (1 - decay))
    layer.moving_variance.assign(layer.moving_variance * decay +
                                 np.reshape(variance, (-1,)) * (1 - decay))


# Updating statistics changes state and carries no gradient: the transforms call it in the
# primal sweep only, and never differentiate its source.
constant(_update_moving_statistics)


class LayerNormalization(Layer):
    """Normalizes each example over its features: `gamma * (x - mean) / sqrt(variance +
    epsilon) + beta`, with the mean and (biased) variance taken over `axis`.

    Arguments:
        axis: the axis or axes normalized over (default -1, the last); gamma and beta have
            the inputs' shape along them.
        epsilon: added to the variance.
        center: whether to add the trainable offset beta; scale: whether to multiply by the
            trainable gamma.
        beta_initializer, gamma_initializer: as for `Module.add_weight`.
        name: default layer_normalization, layer_normalization_1, ...
    Returns an array shaped like inputs. Its Variables `<name>/gamma` and `<name>/beta` take
    the inputs' floating dtype (or the policy's: under "mixed_float16" the layer normalizes in
    float32 and returns float16).

    Examples:
        >>> LayerNormalization()(np.array([[0.0, 2.0], [1.0, 1.0]])).round(4)
        array([[-0.9995,  0.9995],
               [ 0.    ,  0.    ]])
    """

    default_name = "layer_normalization"
    takes_one_array = True
    casts_weights = True

    def __init__(self, axis=-1, epsilon: float = 1e-3, center: bool = True, scale: bool = True,
                 beta_initializer="zeros", gamma_initializer="ones", name: str | None = None,
                 dtype=None):
        super().__init__(name, dtype)
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        if not axes or any(isinstance(a, bool) or not isinstance(a, (int, np.integer))
                           for a in axes):
            raise ValueError(f"LayerNormalization: argument `axis` must be an integer or a "
                             f"list of them, got {axis!r}")
        if not epsilon > 0.0:
            raise ValueError(f"LayerNormalization: argument `epsilon` must be positive, got "
                             f"{epsilon!r}")
        self.axis, self.epsilon = tuple(int(a) for a in axes), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer

    @property
    def supports_masking(self) -> bool:
        """Whether a mask of time steps still holds for the outputs: where each step is
        normalized on its own (over the last axis only)."""
        return self.axis == (-1,)

    def build(self, input_shape) -> None:
        rank = len(input_shape)
        if not all(-rank <= a < rank for a in self.axis):
            raise ValueError(f"LayerNormalization {self.name!r}: argument `axis` must hold "
                             f"axes of the inputs, of rank {rank}, got {list(self.axis)}")
        axes = sorted(set(a % rank for a in self.axis))
        if 0 in axes:
            raise ValueError(f"LayerNormalization {self.name!r}: argument `axis` must not "
                             f"hold the batch axis 0, got {list(self.axis)}")
        self.reduction_axes = tuple(axes)
        self.broadcast_shape = tuple(input_shape[a] if a in axes else 1 for a in range(rank))
        features = tuple(input_shape[a] for a in axes)
        if self.scale:
            self.add_weight("gamma", features, self.gamma_initializer, dtype=self.weight_dtype)
        if self.center:
            self.add_weight("beta", features, self.beta_initializer, dtype=self.weight_dtype)

    def _input_spec(self):
        # (the rank too: the axes normalized over were found for the rank it was built for)
        rank = len(self.broadcast_shape)
        return rank, {axis: self.broadcast_shape[axis % rank] for axis in self.axis}

    def call(self, inputs):
        # under a mixed policy the statistics are computed in float32, the variables' dtype
        inputs = self.in_variable_dtype(inputs)
        mean = np.mean(inputs, axis=self.reduction_axes, keepdims=True)
        variance = np.mean((inputs - mean) ** 2, axis=self.reduction_axes, keepdims=True)
        return self.compute(_normalized(self, inputs, mean, variance))


def _normalized(layer, inputs, mean, variance):
    """`inputs` less `mean`, over the standard deviation, scaled by the layer's gamma and
    shifted by its beta where it has them (BatchNormalization, LayerNormalization)."""
    outputs = (inputs - mean) / np.sqrt(variance + layer.epsilon)
    if layer.scale:
        outputs = outputs * np.reshape(layer.gamma, layer.broadcast_shape)
    if layer.center:
        outputs = outputs + np.reshape(layer.beta, layer.broadcast_shape)
    return outputs
