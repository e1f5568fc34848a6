"""Core layers: Dense, Flatten, Reshape, Embedding, and the Sequential container."""
from __future__ import annotations

from typing import Callable

import numpy as np

from autotrace.layers.base import (
    _DATA_FORMATS, _FEATURES, Layer, _choice, _positive_int, takes_keyword,
)
from autotrace.nn import get_activation
from autotrace.runtime.primitives.int_checks import IndexRangeError
from autotrace.runtime.primitives.registry import bind
from autotrace.runtime.tracing.tracer import Tracer
from autotrace.transforms.rules.core import constant


class Dense(Layer):
    """A fully connected layer: `activation(inputs @ kernel + bias)`.

    Arguments:
        units: the number of outputs (a positive integer).
        activation: an activation's name ("relu", "sigmoid", "tanh", "softmax", "gelu",
            "linear"), a function, or None (linear).
        use_bias: whether to add a bias.
        kernel_initializer, bias_initializer: as for `Module.add_weight`.
        name: the layer's name (default dense, dense_1, ...).
    Returns (when called on (batch, ..., features)): (batch, ..., units). Its Variables are
    `<name>/kernel` (features, units) and `<name>/bias` (units,), made on the first call.

    Examples:
        >>> layer = Dense(3, activation="relu", name="dense")
        >>> layer(np.ones((2, 4))).shape, [v.name for v in layer.variables]
        ((2, 3), ['dense/kernel', 'dense/bias'])
    """

    default_name = "dense"
    input_rank = _FEATURES
    takes_one_array = True
    casts_weights = True
    supports_masking = True  # on (batch, steps, features), step by step

    def __init__(self, units: int, activation: str | Callable | None = None,
                 use_bias: bool = True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", name: str | None = None, dtype=None):
        super().__init__(name, dtype)
        self.units = _positive_int("Dense", "units", units)
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def build(self, input_shape) -> None:
        self.add_weight("kernel", (input_shape[-1], self.units), self.kernel_initializer,
                        dtype=self.weight_dtype)
        if self.use_bias:
            self.add_weight("bias", (self.units,), self.bias_initializer,
                            dtype=self.weight_dtype)

    def _input_spec(self):
        return None, {-1: self.kernel.shape[0]}

    def call(self, inputs):
        outputs = inputs @ self.compute(self.kernel)
        if self.use_bias:
            outputs = outputs + self.compute(self.bias)
        return self.activation(outputs)


class Flatten(Layer):
    """Reshapes (batch, ...) to (batch, product of the rest).

    Arguments:
        data_format: "channels_last", or "channels_first", which moves the channels (axis 1)
            last before flattening, as Keras does, so that a Dense layer after it sees the
            features in the same order in both formats.
    Returns: (batch, features).

    Examples:
        >>> Flatten()(np.ones((2, 3, 4))).shape
        (2, 12)
    """

    default_name = "flatten"
    input_rank = ("at least 1 (batch, ...)", lambda rank: rank >= 1)
    takes_one_array = True

    def __init__(self, data_format: str = "channels_last", name: str | None = None, dtype=None):
        super().__init__(name, dtype)
        self.data_format = _choice("Flatten", "data_format", data_format, _DATA_FORMATS)

    def call(self, inputs):
        if self.data_format == "channels_first" and inputs.ndim > 2:
            inputs = np.transpose(inputs, (0,) + tuple(range(2, inputs.ndim)) + (1,))
        if inputs.shape[0] is None:  # traced with an unknown batch size: the rows' is known
            return np.reshape(inputs, (-1, int(np.prod(inputs.shape[1:]))))
        return np.reshape(inputs, (inputs.shape[0], -1))


class Reshape(Layer):
    """Reshapes each example: (batch, ...) to (batch,) + target_shape.

    Arguments:
        target_shape: the shape of each example (a tuple of positive ints; one may be -1,
            the length that makes the sizes agree).
    Returns: (batch,) + target_shape. The batch size may be unknown when traced.

    Examples:
        >>> Reshape((3, -1))(np.ones((2, 12))).shape
        (2, 3, 4)
    """

    default_name = "reshape"
    input_rank = ("at least 1 (batch, ...)", lambda rank: rank >= 1)
    takes_one_array = True

    def __init__(self, target_shape, name: str | None = None, dtype=None):
        super().__init__(name, dtype)
        shape = tuple(target_shape) if isinstance(target_shape, (tuple, list)) else None
        if (shape is None or sum(1 for size in shape if size == -1) > 1 or not all(
                isinstance(size, (int, np.integer)) and not isinstance(size, bool) and
                (size > 0 or size == -1) for size in shape)):
            raise ValueError(f"Reshape: argument `target_shape` must be a tuple of positive "
                             f"integers, one of which may be -1, got {target_shape!r}")
        self.target_shape = tuple(int(size) for size in shape)

    def call(self, inputs):
        return np.reshape(inputs, (-1,) + self._example_shape(tuple(inputs.shape[1:])))

    def _example_shape(self, example_shape: tuple) -> tuple:
        """target_shape with its -1 resolved, checked against the examples' size."""
        size = int(np.prod(example_shape))
        known = int(np.prod([s for s in self.target_shape if s != -1]))
        if -1 in self.target_shape and size % known == 0:
            return tuple(size // known if s == -1 else s for s in self.target_shape)
        if size != known or -1 in self.target_shape:
            raise ValueError(f"Reshape {self.name!r}: cannot reshape examples of shape "
                             f"{example_shape} ({size} elements) to target_shape "
                             f"{self.target_shape}")
        return self.target_shape


class Embedding(Layer):
    """Looks up rows of a trainable table: integer indices of any shape -> vectors.

    Arguments:
        input_dim: the number of rows (indices are in [0, input_dim)).
        output_dim: the length of each row.
        embeddings_initializer: as for `Module.add_weight` (default: uniform in
            [-0.05, 0.05], as Keras').
        mask_zero: whether index 0 is padding: `compute_mask(indices)` is then `indices != 0`,
            which Sequential passes on to the layers after it (a recurrent layer skips those
            steps). Row 0 is still a row of the table, as in Keras.
        name: default embedding, embedding_1, ...
    Returns: an array of shape indices.shape + (output_dim,). The gradient of
    `<name>/embeddings` sums the output's gradient into the rows looked up.

    Examples:
        >>> layer = Embedding(10, 3)
        >>> layer(np.array([[1, 2], [3, 1]])).shape
        (2, 2, 3)
    """

    default_name = "embedding"
    takes_one_array = True
    casts_weights = True

    def __init__(self, input_dim: int, output_dim: int, embeddings_initializer=None,
                 mask_zero: bool = False, name: str | None = None, dtype=None):
        super().__init__(name, dtype)
        self.mask_zero = bool(mask_zero)
        self.input_dim = _positive_int("Embedding", "input_dim", input_dim)
        self.output_dim = _positive_int("Embedding", "output_dim", output_dim)
        self.embeddings_initializer = embeddings_initializer or _uniform_005

    def build(self, input_shape) -> None:
        self.add_weight("embeddings", (self.input_dim, self.output_dim),
                        self.embeddings_initializer, dtype=self.weight_dtype)

    def __call__(self, inputs, *args, **kwargs):
        dtype = np.dtype(inputs.dtype if hasattr(inputs, "dtype") else np.asarray(inputs).dtype)
        if dtype.kind not in "iu":
            raise TypeError(f"Embedding {self.name!r}: argument `inputs` must hold integer "
                            f"indices, got dtype {dtype}")
        if not isinstance(inputs, Tracer):
            self._in_range(inputs)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs):
        return np.take(self.compute(self.embeddings), self._in_range(inputs), axis=0)

    def _in_range(self, indices):
        """`indices`, checked to be rows of the table: np.take would read a negative one from
        the end. Traced, the check is an op of the graph, which the lookup (and its gradient,
        which may not need the lookup's value) reads the indices from."""
        name = repr(self.name).replace("{", "{{").replace("}", "}}")
        message = (f"Embedding {name}: argument `inputs` must be in [0, {self.input_dim}) "
                   f"(input_dim), got values from {{}} to {{}}")
        if isinstance(indices, Tracer):
            return bind("index_range", indices, high=self.input_dim, message=message)
        if np.size(indices) and not (0 <= np.min(indices) and
                                     np.max(indices) < self.input_dim):
            raise IndexRangeError(message.format(np.min(indices), np.max(indices)))
        return indices

    def compute_mask(self, inputs, mask=None):
        """`inputs != 0` with mask_zero=True (padding at index 0), else None."""
        return np.not_equal(inputs, 0) if self.mask_zero else None


def _uniform_005(shape, dtype, rng):
    return rng.uniform(-0.05, 0.05, size=shape).astype(dtype)


class Sequential(Layer):
    """Layers (or any Modules) applied one after another.

    Arguments:
        layers: the layers, in order (more can be appended with `add`).
        name: default sequential, sequential_1, ...
    Call as `model(inputs, training=False)`; `training` is passed on to the layers whose
    `call` takes it (Dropout, BatchNormalization, Sequential, and layers or Modules of your
    own), as Keras reads it from the signature.

    Examples:
        >>> model = Sequential([Dense(4, activation="relu")])
        >>> model.add(Dense(2))
        >>> model(np.ones((3, 5))).shape, len(model.variables)
        ((3, 2), 4)
    """

    default_name = "sequential"

    def __init__(self, layers=None, name: str | None = None, dtype=None):
        super().__init__(name, dtype)
        self.layers = []
        self.passes_training = ()
        self.passes_mask = ()
        for layer in layers or ():
            self.add(layer)

    def add(self, layer) -> None:
        """Appends `layer` (a Module, or any function of one array)."""
        if not callable(layer):
            raise TypeError(f"Sequential.add: argument `layer` must be a layer or a function, "
                            f"got {type(layer).__name__}")
        self.layers = self.layers + [layer]
        self.passes_training = self.passes_training + (takes_keyword(layer, "training"),)
        self.passes_mask = self.passes_mask + (takes_keyword(layer, "mask"),)

    def call(self, inputs, training=False):
        outputs, mask = inputs, None
        for layer, passes_training, passes_mask in zip(self.layers, self.passes_training,
                                                       self.passes_mask):
            next_mask = _output_mask(self, layer, passes_mask, outputs, mask)
            if passes_training and passes_mask and mask is not None:
                outputs = layer(outputs, training=training, mask=mask)
            elif passes_training:
                outputs = layer(outputs, training=training)
            elif passes_mask and mask is not None:
                outputs = layer(outputs, mask=mask)
            else:
                outputs = layer(outputs)
            mask = next_mask
        return outputs


def _output_mask(model, layer, passes_mask: bool, inputs, mask):
    """The mask of `layer`'s outputs, given its inputs' `mask`; refuses a layer that can
    neither take the mask nor carry it (it would compute on the steps to skip as if kept)."""
    if mask is not None and not passes_mask and not getattr(layer, "supports_masking", False):
        raise TypeError(f"Sequential {model.name!r}: layer {getattr(layer, 'name', layer)!r} "
                        f"does not support masking, but gets the mask of the steps to skip "
                        f"from the layer before it (Embedding with mask_zero=True, say); "
                        f"put a recurrent layer (without return_sequences) before it, or "
                        f"drop the mask")
    if isinstance(layer, Layer):
        return layer.compute_mask(inputs, mask)
    return None


# A mask is booleans, which carry no gradient: the transforms compute it in the primal sweep
# only, and never differentiate its source.
constant(_output_mask)
