"""The base of autotrace's layers: `Layer`, and the checks of their arguments."""
from __future__ import annotations

import inspect

import numpy as np

from autotrace.module import Module, _unique_name

_PADDINGS = ("valid", "same")
_DATA_FORMATS = ("channels_last", "channels_first")


# --- argument checks ----------------------------------------------------------------------------

def _positive_int(layer: str, argument: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{layer}: argument `{argument}` must be a positive integer, got "
                         f"{value!r}")
    return int(value)


def _pair(layer: str, argument: str, value) -> tuple:
    """An int or a pair of positive ints, as a pair."""
    pair = (value, value) if isinstance(value, (int, np.integer)) else value
    if (not isinstance(pair, (tuple, list)) or len(pair) != 2 or
            not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0
                    for v in pair)):
        raise ValueError(f"{layer}: argument `{argument}` must be a positive integer or a "
                         f"pair of them, got {value!r}")
    return tuple(int(v) for v in pair)


def _choice(layer: str, argument: str, value, choices: tuple) -> str:
    if not isinstance(value, str) or value.lower() not in choices:
        expected = " or ".join(repr(choice) for choice in choices)
        raise ValueError(f"{layer}: argument `{argument}` must be {expected}, got {value!r}")
    return value.lower()


def _rate(layer: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise ValueError(f"{layer}: argument `rate` must be a number in [0, 1), got {value!r}")
    return float(value)


def _shape(inputs) -> tuple:
    return tuple(inputs.shape) if hasattr(inputs, "shape") else np.shape(inputs)


def _floating_dtype(inputs) -> np.dtype:
    """The dtype of the weights a layer makes for `inputs`: theirs if they hold floats (so
    that a float32 model stays float32), float64 otherwise."""
    dtype = np.dtype(inputs.dtype if hasattr(inputs, "dtype") else np.asarray(inputs).dtype)
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


# --- the base class -----------------------------------------------------------------------------

class Layer(Module):
    """A Module that checks its input's rank on every call and names itself like Keras.

    Subclasses set `default_name` (the name's base: "dense" gives dense, dense_1, ...),
    `input_rank` (a description of the ranks accepted and a predicate), and `takes_training`
    when `call` takes a `training` keyword (Sequential passes it on to those layers only).

    Examples:
        >>> class Scale(Layer):
        ...     default_name = "scale"
        ...     input_rank = ("at least 2 (batch, ..., features)", lambda rank: rank >= 2)
        ...     def build(self, input_shape):
        ...         self.add_weight("factor", (input_shape[-1],), initializer="ones")
        ...     def call(self, inputs):
        ...         return inputs * self.factor
        >>> Scale()(np.array([[1.0, 2.0]]))
        array([[1., 2.]])
        >>> try:
        ...     Scale(name="flat")(np.array([1.0, 2.0]))
        ... except ValueError as error:
        ...     print(error)
        Scale 'flat': argument `inputs` must have rank at least 2 (batch, ..., features),
        got shape (2,)
    """

    default_name: str | None = None
    input_rank: tuple | None = None  # (description, predicate on the rank)
    takes_training = False

    def __init__(self, name: str | None = None):
        base = self.default_name or None
        super().__init__(name or (_unique_name(base) if base else None))

    def __call__(self, inputs, *args, **kwargs):
        if self.input_rank is not None:
            description, accepts = self.input_rank
            shape = _shape(inputs)
            if not accepts(len(shape)):
                raise ValueError(f"{type(self).__name__} {self.name!r}: argument `inputs` "
                                 f"must have rank {description}, got shape {shape}")
        return super().__call__(inputs, *args, **kwargs)

    def build_for(self, inputs) -> None:
        """Builds as Module does, with `weight_dtype` set first: the floating dtype of
        `inputs` (float64 for integers), which the layers that keep float32 float32 give
        `add_weight`."""
        if not self.built:
            first = inputs[0] if isinstance(inputs, (tuple, list)) else inputs
            object.__setattr__(self, "weight_dtype", _floating_dtype(first))
        super().build_for(inputs)


_FEATURES = ("at least 2 (batch, ..., features)", lambda rank: rank >= 2)
_IMAGES = ("4 (batch, height, width, channels) or (batch, channels, height, width)",
           lambda rank: rank == 4)


def _takes_training(layer) -> bool:
    if isinstance(layer, Layer):
        return layer.takes_training
    call = getattr(layer, "call", layer)
    try:
        return "training" in inspect.signature(call).parameters
    except (TypeError, ValueError):
        return False
