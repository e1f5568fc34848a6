"""MultiHeadAttention: scaled dot-product attention over several heads, as Keras' layer."""
from __future__ import annotations

import math

import numpy as np

from autotrace.dtype_policy import cast_floating
from autotrace.layers.base import Layer, _positive_int, _rate, _shape, check_input_spec
from autotrace.layers.regularization import Dropout
from autotrace.nn import softmax

_SEQUENCES = ("3 (batch, sequence, features)", lambda rank: rank == 3)

# What a masked score becomes before the softmax: its weight underflows to 0 in float32 too.
MASKED_SCORE = -1e9


class MultiHeadAttention(Layer):
    """Multi-head attention: each head projects the query, key and value, weights the values
    by softmax(query . key / sqrt(key_dim)) over the key's positions, and the heads' results
    are projected together to the output.

    Arguments:
        num_heads: the number of heads; key_dim: the size of each head's query and key.
        value_dim: the size of each head's value (default key_dim).
        dropout: the fraction of attention weights dropped while training (a Dropout layer).
        use_bias: whether the projections add biases.
        output_shape: the size of the output's last axis (default: the query's).
        kernel_initializer, bias_initializer: as for `Module.add_weight`.
        name: default multi_head_attention, multi_head_attention_1, ...
    Call as `layer(query, value, key=None, attention_mask=None, return_attention_scores=False,
    training=False, use_causal_mask=False)`, with query (batch, target, features) and value
    and key (batch, source, features) (key defaults to value). attention_mask (batch, target,
    source) says which source positions each target position may attend to (true or 1:
    attend); use_causal_mask lets position t attend to positions up to t only.
    Returns (batch, target, output_shape), and with return_attention_scores the pair (that,
    the attention weights (batch, num_heads, target, source)). Its Variables are
    `<name>/query_kernel` (features, num_heads, key_dim) and `<name>/query_bias` (num_heads,
    key_dim), the same for key and value, `<name>/output_kernel` (num_heads, value_dim,
    output_shape) and `<name>/output_bias` (output_shape,), of the query's floating dtype.

    Examples:
        >>> layer = MultiHeadAttention(num_heads=2, key_dim=4)
        >>> output, scores = layer(np.ones((3, 5, 6)), np.ones((3, 7, 8)),
        ...                        return_attention_scores=True)
        >>> output.shape, scores.shape
        ((3, 5, 6), (3, 2, 5, 7))
    """

    default_name = "multi_head_attention"
    input_rank = _SEQUENCES
    casts_weights = True

    def __init__(self, num_heads: int, key_dim: int, value_dim: int | None = None,
                 dropout: float = 0.0, use_bias: bool = True, output_shape: int | None = None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 name: str | None = None, dtype=None):
        super().__init__(name, dtype)
        self.num_heads = _positive_int("MultiHeadAttention", "num_heads", num_heads)
        self.key_dim = _positive_int("MultiHeadAttention", "key_dim", key_dim)
        self.value_dim = (self.key_dim if value_dim is None else
                          _positive_int("MultiHeadAttention", "value_dim", value_dim))
        if isinstance(output_shape, (tuple, list)) and len(output_shape) == 1:
            output_shape = output_shape[0]
        self.output_size = (None if output_shape is None else
                            _positive_int("MultiHeadAttention", "output_shape", output_shape))
        self.dropout = Dropout(_rate("MultiHeadAttention", dropout),
                               name=f"{self.name}/dropout")
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def __call__(self, query, value, key=None, attention_mask=None,
                 return_attention_scores: bool = False, training=False,
                 use_causal_mask: bool = False):
        for argument, array in (("value", value), ("key", value if key is None else key)):
            shape = _shape(array)
            if len(shape) != 3:
                raise ValueError(f"MultiHeadAttention {self.name!r}: argument `{argument}` "
                                 f"must have rank 3 (batch, sequence, features), got shape "
                                 f"{shape}")
        built = self.built
        self.build_for((query, value, value if key is None else key))
        if built:  # the query (input 0) is checked by Layer.__call__
            for index, array, kernel in ((1, value, self.value_kernel),
                                         (2, value if key is None else key, self.key_kernel)):
                check_input_spec(self, array, index, (None, {-1: kernel.shape[0]}))
        return super().__call__(query, value, key, attention_mask, return_attention_scores,
                                training, use_causal_mask)

    def build(self, input_shape) -> None:
        query_shape, value_shape, key_shape = input_shape
        heads, dtype = self.num_heads, self.weight_dtype
        output_size = self.output_size or query_shape[-1]
        for part, features, size in (("query", query_shape[-1], self.key_dim),
                                     ("key", key_shape[-1], self.key_dim),
                                     ("value", value_shape[-1], self.value_dim)):
            self.add_weight(f"{part}_kernel", (features, heads, size), self.kernel_initializer,
                            dtype=dtype)
            if self.use_bias:
                self.add_weight(f"{part}_bias", (heads, size), self.bias_initializer,
                                dtype=dtype)
        self.add_weight("output_kernel", (heads, self.value_dim, output_size),
                        self.kernel_initializer, dtype=dtype)
        if self.use_bias:
            self.add_weight("output_bias", (output_size,), self.bias_initializer, dtype=dtype)

    def _input_spec(self):
        return None, {-1: self.query_kernel.shape[0]}

    def call(self, query, value, key=None, attention_mask=None, return_attention_scores=False,
             training=False, use_causal_mask=False):
        # The same arguments as __call__'s: the gradient transforms call `call` with the
        # arguments the user gave.
        if key is None:
            key = value
        if self.dtype_policy is not None:  # as the query, which Layer.__call__ casts
            value = cast_floating(value, self.compute_dtype)
            key = cast_floating(key, self.compute_dtype)
        # Each head's projections, (batch, heads, position, size), by matrix products, which
        # trace with an unknown batch size (autotrace's einsum needs every size).
        compute, bias = self.compute, self.use_bias
        query = self._heads(query, compute(self.query_kernel),
                            compute(self.query_bias) if bias else 0)
        key = self._heads(key, compute(self.key_kernel), compute(self.key_bias) if bias else 0)
        value = self._heads(value, compute(self.value_kernel),
                            compute(self.value_bias) if bias else 0)
        scores = query @ np.swapaxes(key, 2, 3) / math.sqrt(self.key_dim)  # weak: keeps float32
        # Under a mixed policy the scores are masked and normalized in the variable dtype
        # (float32): MASKED_SCORE is -inf in float16, and a float16 softmax loses the small
        # weights; the weights then go on in the compute dtype.
        scores = self.in_variable_dtype(scores)
        mask = self._mask(attention_mask, use_causal_mask, scores.shape[2], scores.shape[3])
        if mask is not None:
            scores = np.where(mask, scores, MASKED_SCORE)
        weights = self.compute(softmax(scores, axis=-1))
        attended = self.dropout(weights, training=training) @ value
        # the heads side by side, (batch, target, heads * value_dim), then projected
        attended = np.reshape(np.transpose(attended, (0, 2, 1, 3)),
                              (-1, attended.shape[2], self.num_heads * self.value_dim))
        outputs = attended @ np.reshape(self.compute(self.output_kernel),
                                        (self.num_heads * self.value_dim, -1))
        if self.use_bias:
            outputs = outputs + self.compute(self.output_bias)
        if return_attention_scores:
            return outputs, weights
        return outputs

    def _heads(self, inputs, kernel, bias):
        """inputs (batch, length, features) projected by kernel (features, heads, size), as
        (batch, heads, length, size)."""
        features, heads, size = kernel.shape
        projected = np.reshape(inputs @ np.reshape(kernel, (features, heads * size)),
                               (-1, inputs.shape[1], heads, size)) + bias
        return np.transpose(projected, (0, 2, 1, 3))

    def _mask(self, attention_mask, use_causal_mask, targets, sources):
        """Which scores to keep, broadcast against (batch, heads, target, source), or None."""
        mask = None
        if attention_mask is not None:
            mask = np.expand_dims(np.not_equal(attention_mask, 0), 1)
        if use_causal_mask:
            causal = np.tril(np.ones((targets, sources), dtype=bool))
            mask = causal if mask is None else mask & causal
        return mask
