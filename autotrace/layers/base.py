"""The base of autotrace's layers: `Layer`, and the checks of their arguments."""
from __future__ import annotations

import functools
import inspect

import numpy as np

from autotrace.dtype_policy import Policy, as_policy, cast_floating, global_policy
from autotrace.module import Module, _unique_name
from autotrace.runtime.primitives.index import as_array
from autotrace.transforms.rules.core import constant
from autotrace.variables import Variable

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

    Arguments:
        name: the layer's name (default: `default_name`, numbered: dense, dense_1, ...).
        dtype: its dtype policy (`autotrace.mixed_precision.Policy` or its name, such as
            "mixed_float16" or "float32"; default: the global policy when the layer is made).
            With a policy the layer makes its weights in `variable_dtype`, casts its floating
            inputs to `compute_dtype`, and computes in it; without one (autotrace's default)
            it makes its weights in the floating dtype of its first inputs (float64 for
            integer inputs) and casts nothing.

    Subclasses set `default_name` (the name's base: "dense" gives dense, dense_1, ...),
    and `input_rank` (a description of the ranks accepted and a predicate); a built layer
    refuses inputs of another rank or size than its weights were made for (what
    `_input_spec()` returns, as Keras's InputSpec) with Keras's message, and one that sets
    `takes_one_array` takes a nested list of numbers as its array. Sequential passes
    `training` on to the layers whose `call` takes a `training` parameter, as Keras does; a
    layer called with `training=` that its `call` does not take drops it, as Keras's do.
    A subclass whose weights a mixed policy keeps in another dtype than it computes in reads
    them through `self.compute(weight)` and sets `casts_weights = True`; the others refuse
    such a policy.

    Masks, as Keras's: a layer that makes a mask of the time steps to skip (Embedding with
    mask_zero=True) returns it from `compute_mask(inputs, mask)`, and Sequential passes it on
    to the next layers: as `mask=` to those whose `call` takes it (the recurrent layers),
    through those that set `supports_masking` (they compute step by step, so the mask still
    holds for their outputs); any other layer refuses it.

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
    takes_one_array = False  # True: a list given as inputs is np.asarray'd (not many inputs)
    casts_weights = False
    supports_masking = False

    def __init__(self, name: str | None = None, dtype=None):
        base = self.default_name or None
        super().__init__(name or (_unique_name(base) if base else None))
        policy = as_policy(dtype, f"{type(self).__name__}") if dtype is not None else None
        object.__setattr__(self, "dtype_policy", policy or global_policy())

    @property
    def compute_dtype(self) -> str | None:
        """The dtype the layer computes in (its policy's), or None without a policy."""
        return None if self.dtype_policy is None else self.dtype_policy.compute_dtype

    @property
    def variable_dtype(self) -> str | None:
        """The dtype of the weights the layer makes (its policy's), or None without one."""
        return None if self.dtype_policy is None else self.dtype_policy.variable_dtype

    def __call__(self, inputs, *args, **kwargs):
        if "training" in kwargs and not takes_keyword(self, "training"):
            del kwargs["training"]  # as Keras does: a loop may pass it to every layer
        if isinstance(inputs, list) and self.takes_one_array:
            inputs = _as_array(self, inputs)
        if self.input_rank is not None:
            description, accepts = self.input_rank
            shape = _shape(inputs)
            if not accepts(len(shape)):
                raise ValueError(f"{type(self).__name__} {self.name!r}: argument `inputs` "
                                 f"must have rank {description}, got shape {shape}")
        if self.built:
            check_input_spec(self, inputs)
        if self.dtype_policy is not None and not isinstance(inputs, (tuple, list)):
            inputs = cast_floating(inputs, self.compute_dtype)
            self.build_for(inputs)
            self._check_policy()  # on every call: a refused layer stays refused
        return super().__call__(inputs, *args, **kwargs)

    @property
    def __autotrace_call__(self):
        """What the gradient transforms differentiate when the layer is called: `call` as
        `__call__` runs it (under a policy, with the inputs cast; without `training` where
        `call` does not take it; a list given to a layer that takes one array, as an array)."""
        if self._user_defines_call():
            return super().__autotrace_call__
        if self.dtype_policy is not None:
            return self._call_in_compute_dtype
        if self.takes_one_array:
            return self._call_on_one_array
        return self.call if takes_keyword(self, "training") else self._call_without_training

    def _call_on_one_array(self, inputs, *args, **kwargs):
        # A nested list of numbers as the array __call__ made of it (np.asarray is the
        # identity on arrays, and carries their gradient).
        inputs = np.asarray(inputs)
        if takes_keyword(self, "training"):
            return self.call(inputs, *args, **kwargs)
        return self._call_without_training(inputs, *args, **kwargs)

    def _call_in_compute_dtype(self, inputs, *args, **kwargs):
        if self.takes_one_array:
            inputs = np.asarray(inputs)
        inputs = inputs.astype(_computed_dtype(inputs.dtype, self.compute_dtype))
        if takes_keyword(self, "training"):
            return self.call(inputs, *args, **kwargs)
        return self._call_without_training(inputs, *args, **kwargs)

    def _call_without_training(self, inputs, *args, training=None, **kwargs):
        return self.call(inputs, *args, **kwargs)  # `training` dropped, as __call__ drops it

    def build_for(self, inputs) -> None:
        """Builds as Module does, with `weight_dtype` set first: the policy's variable dtype,
        or without a policy the floating dtype of `inputs` (float64 for integers)."""
        if not self.built:
            first = inputs[0] if isinstance(inputs, (tuple, list)) else inputs
            dtype = (np.dtype(self.variable_dtype) if self.dtype_policy is not None else
                     _floating_dtype(first))
            object.__setattr__(self, "weight_dtype", dtype)
            super().build_for(inputs)

    def add_weight(self, name: str, shape, initializer="glorot_uniform", dtype=None,
                   trainable: bool = True, rng=None) -> Variable:
        """As `Module.add_weight`, with the dtype the layer makes its weights in as the default
        (as Keras's layers do): in `build`, `weight_dtype` (its policy's variable dtype, or
        its first inputs' floating dtype), so that a float32 model stays float32; elsewhere its
        policy's variable dtype, or float64 without a policy."""
        if dtype is None:
            dtype = vars(self).get("weight_dtype")
        if dtype is None:
            dtype = self.variable_dtype if self.variable_dtype is not None else np.float64
        return super().add_weight(name, shape, initializer, dtype, trainable, rng)

    def _input_spec(self) -> tuple | None:
        """What the built layer takes as its inputs, as Keras's InputSpec says it: (the rank,
        or None for any, {axis: size}), read from its weights; None where anything goes."""
        return None

    def compute(self, weight):
        """`weight` (a Variable of the layer) as `call` computes with it, or a value computed
        in the variable dtype as the layer outputs it: cast to the compute dtype under a
        mixed policy, itself otherwise."""
        if self.dtype_policy is None or not self.dtype_policy.is_mixed:
            return weight
        return cast_floating(weight, self.compute_dtype)

    def compute_mask(self, inputs, mask=None):
        """The mask of this layer's outputs, given its inputs and their mask: the mask itself
        where the layer supports masking, else None."""
        return mask if self.supports_masking else None

    def in_variable_dtype(self, value):
        """`value` cast to the variable dtype under a mixed policy (where a layer computes in
        float32 for accuracy, as the normalization layers do), itself otherwise."""
        if self.dtype_policy is None or not self.dtype_policy.is_mixed:
            return value
        return cast_floating(value, self.variable_dtype)

    def _check_policy(self) -> None:
        """Refuse a mixed policy in a layer that would compute with its weights uncast."""
        policy: Policy | None = self.dtype_policy
        if policy is None or not policy.is_mixed or self.casts_weights:
            return
        own = [value.name for value in vars(self).values()
               if isinstance(value, Variable) and value.dtype.kind == "f"]
        if own:
            raise TypeError(f"{type(self).__name__} {self.name!r} does not support the mixed "
                            f"policy {policy.name!r} yet (its weights {own} would be used "
                            f"in {policy.variable_dtype}); give it dtype="
                            f"{policy.compute_dtype!r} or 'float32'")


def _computed_dtype(dtype, compute_dtype: str) -> np.dtype:
    """The dtype a layer computes inputs of `dtype` in: its compute dtype for floats, their
    own for others (integer indices, masks)."""
    return np.dtype(compute_dtype) if np.dtype(dtype).kind == "f" else np.dtype(dtype)


def check_input_spec(layer: Layer, inputs, index: int = 0, spec=None) -> None:
    """Refuse inputs of another rank or size than the built `layer` was made for (its
    `_input_spec()`, or `spec`) with Keras's message, before NumPy's own (a matmul's, a
    broadcast's) would name neither the layer nor the size it expects. `index`: which
    input of the call `inputs` is, for the message."""
    spec = spec if spec is not None else layer._input_spec()
    if spec is None:
        return
    rank, axes = spec
    shape = tuple(None if size is None else int(size) for size in _shape(inputs))
    incompatible = f"Input {index} of layer \"{layer.name}\" is incompatible with the layer"
    if rank is not None and len(shape) != rank:
        raise ValueError(f"{incompatible}: expected ndim={rank}, found ndim={len(shape)}. "
                         f"Full shape received: {shape}")
    for axis, size in axes.items():
        if -len(shape) <= axis < len(shape) and shape[axis] not in (None, size):
            raise ValueError(f"{incompatible}: expected axis {axis} of input shape to have "
                             f"value {size}, but received input with shape {shape}")


def _as_array(layer: Layer, inputs: list):
    """A list given to a layer that takes one array, as the array NumPy makes of it (as Keras
    takes nested lists of numbers); traced values in it are stacked, as converted code's
    np.asarray stacks them."""
    try:
        array = as_array(inputs)
    except ValueError as error:  # NumPy's "inhomogeneous shape", np.stack's "same shape"
        raise TypeError(f"{type(layer).__name__} {layer.name!r}: argument `inputs` must be an "
                        f"array or a nested list of numbers that NumPy makes one array of; "
                        f"got a list of rows of different lengths") from error
    if np.dtype(array.dtype).kind not in "biuf":
        raise TypeError(f"{type(layer).__name__} {layer.name!r}: argument `inputs` must be an "
                        f"array or a nested list of numbers; got a list NumPy reads as dtype "
                        f"{array.dtype}")
    return array


_FEATURES = ("at least 2 (batch, ..., features)", lambda rank: rank >= 2)
_IMAGES = ("4 (batch, height, width, channels) or (batch, channels, height, width)",
           lambda rank: rank == 4)


def takes_keyword(layer, keyword: str) -> bool:
    """Whether the `call` of `layer` (a layer, a Module, or a function) takes a parameter
    `keyword` (training, mask): one of that name, or **kwargs, as Keras reads the signature."""
    call = getattr(layer, "call", layer)
    method = getattr(call, "__func__", None)
    names = _parameter_names(method) if method is not None else (  # (a method: read once)
        _parameter_names.__wrapped__(call))
    return keyword in names or _ANY_KEYWORD in names


_ANY_KEYWORD = "**"  # (among a signature's names: it takes **kwargs)


@functools.lru_cache(maxsize=1024)
def _parameter_names(function) -> frozenset:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return frozenset()
    return frozenset(_ANY_KEYWORD if parameter.kind is inspect.Parameter.VAR_KEYWORD
                     else parameter.name for parameter in parameters)


# Whether a layer takes a keyword is a Python fact, with no gradient.
constant(takes_keyword)
