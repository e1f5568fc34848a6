"""Recurrent layers: SimpleRNN, LSTM and GRU, with Keras' weights, gate order and defaults.

Each runs its cell in a Python loop over the time steps, which `autotrace.function` unrolls
when it traces (the number of steps must be known; the batch size need not be) and whose
gradient the transforms take from the source like any loop's. Inputs are (batch, timesteps,
features). Each layer returns the last output, or every output (batch, timesteps, units) with
return_sequences=True; with return_state=True, a list: that output, then the final states.

Masking, as Keras: `layer(inputs, mask=mask)`, mask a boolean (batch, timesteps) array,
False at the steps to skip (padding). At a masked step the states are carried through
unchanged, and the output is the previous step's (zeros before the first unmasked step), or
zeros with zero_output_for_mask=True; so the last output is that of the last unmasked step.
With go_backwards the mask is read backwards with the inputs.

stateful=True keeps the final states of a call, in non-trainable Variables `<name>/states_0`
(and `<name>/states_1`, LSTM's cell state), as the initial states of the next: the batch size
must be known and the same on every call. `reset_states()` sets them back to zeros. Gradients
do not flow from one call into the next through the kept states, which are Variables (as in
Keras: backpropagation through time truncated at each call); within a call they do.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from autotrace.initializers import initial_value
from autotrace.layers.base import Layer, _positive_int, _shape
from autotrace.nn import get_activation

_SEQUENCES = ("3 (batch, timesteps, features)", lambda rank: rank == 3)


def orthogonal(shape, dtype, rng):
    """A random matrix with orthonormal rows or columns (Keras' recurrent_initializer)."""
    rows, columns = shape[0], int(np.prod(shape[1:]))
    flat = rng.standard_normal((max(rows, columns), min(rows, columns)))
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))  # the signs that make the distribution uniform
    return (q if rows >= columns else q.T).reshape(shape).astype(dtype)


class _Recurrent(Layer):
    """What SimpleRNN, LSTM and GRU share: arguments, weights, and the loop over time."""

    input_rank = _SEQUENCES
    takes_one_array = True
    casts_weights = True
    gates = 1  # the kernels' column blocks, each `units` wide
    state_count = 1

    def __init__(self, units: int, activation: str | Callable | None = "tanh",
                 use_bias: bool = True, kernel_initializer="glorot_uniform",
                 recurrent_initializer=orthogonal, bias_initializer="zeros",
                 return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, name: str | None = None, dtype=None,
                 stateful: bool = False, zero_output_for_mask: bool = False):
        super().__init__(name, dtype)
        self.stateful = bool(stateful)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.units = _positive_int(type(self).__name__, "units", units)
        self.activation = get_activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)

    def build(self, input_shape) -> None:
        width = self.gates * self.units
        self.add_weight("kernel", (input_shape[-1], width), self.kernel_initializer,
                        dtype=self.weight_dtype)
        self.add_weight("recurrent_kernel", (self.units, width), self.recurrent_initializer,
                        dtype=self.weight_dtype)
        if self.use_bias:
            self.add_weight("bias", self.bias_shape(), self.bias_initializer,
                            dtype=self.weight_dtype)
        if self.stateful:
            if input_shape[0] is None:
                raise ValueError(f"{type(self).__name__} {self.name!r}: stateful=True needs "
                                 f"a known batch size, the same on every call; give it a "
                                 f"size in the Spec")
            for index in range(self.state_count):
                self.add_weight(f"states_{index}", (input_shape[0], self.units), "zeros",
                                dtype=self.weight_dtype, trainable=False)

    def _input_spec(self):
        return None, {-1: self.kernel.shape[0]}

    def reset_states(self) -> None:
        """Set the states a stateful layer keeps between calls back to zeros."""
        for state in self._kept_states():
            state.assign(np.zeros(state.shape, state.dtype))

    reset_state = reset_states

    def _kept_states(self) -> list:
        if not self.stateful:
            raise ValueError(f"{type(self).__name__} {self.name!r}: reset_states needs "
                             f"stateful=True")
        return [getattr(self, f"states_{index}") for index in range(self.state_count)
                if hasattr(self, f"states_{index}")]

    def bias_shape(self) -> tuple:
        return (self.gates * self.units,)

    def __call__(self, inputs, *args, **kwargs):
        shape = _shape(inputs)
        if len(shape) == 3 and shape[1] is None:
            raise ValueError(f"{type(self).__name__} {self.name!r}: the number of time steps "
                             f"(axis 1 of `inputs`) must be known, since the loop over them "
                             f"is unrolled when traced; give it a size in the Spec")
        mask = kwargs.get("mask")
        if mask is not None:
            if not hasattr(mask, "dtype"):  # nested lists of bools
                mask = kwargs["mask"] = np.asarray(mask)
            mask_dtype = np.dtype(mask.dtype)
            if mask_dtype != np.bool_ or tuple(_shape(mask)) != tuple(shape[:2]):
                raise ValueError(f"{type(self).__name__} {self.name!r}: argument `mask` must "
                                 f"be a boolean array of shape (batch, timesteps) "
                                 f"{tuple(shape[:2])}, got dtype {mask_dtype} and shape "
                                 f"{tuple(_shape(mask))}")
        if self.stateful and self.built and tuple(shape[:1]) != (self.states_0.shape[0],):
            raise ValueError(f"{type(self).__name__} {self.name!r}: stateful=True keeps states "
                             f"for a batch of {self.states_0.shape[0]}; got inputs of shape "
                             f"{shape}; make another layer for another batch size")
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs, initial_state=None, mask=None):
        states = self._initial_states(inputs, initial_state)
        steps = range(inputs.shape[1])
        outputs = []
        output = None
        for t in (reversed(steps) if self.go_backwards else steps):
            if mask is None:
                output, states = self.step(inputs[:, t, :], states)
            else:
                output, states = self._masked_step(inputs[:, t, :], states, mask[:, t:t + 1],
                                                   output)
            outputs.append(output)
        if self.stateful:
            for index, state in enumerate(states):
                getattr(self, f"states_{index}").assign(state)
        if self.return_sequences:
            output = np.stack(outputs, axis=1)
        if self.return_state:
            return [output] + list(states)
        return output

    def compute_mask(self, inputs, mask=None):
        """The mask of the outputs: the inputs' with return_sequences (reversed with
        go_backwards, as the outputs are), else None (the last output is always valid)."""
        if not self.return_sequences or mask is None:
            return None
        return mask[:, ::-1] if self.go_backwards else mask

    def _masked_step(self, x, states, kept, previous):
        """A step at which `kept` (batch, 1) says which examples' states move on: the others
        keep their states, and output their previous output (or zeros)."""
        output, new_states = self.step(x, states)
        states = tuple(np.where(kept, new, old) for new, old in zip(new_states, states))
        if previous is None or self.zero_output_for_mask:
            previous = np.zeros_like(output)
        return np.where(kept, output, previous), states

    def _initial_states(self, inputs, initial_state) -> tuple:
        if initial_state is None and self.stateful:
            return tuple(self.compute(getattr(self, f"states_{index}"))
                         for index in range(self.state_count))
        if initial_state is None:
            # zeros (batch, units), made from the inputs so the batch size may be unknown
            zeros = np.zeros_like(inputs[:, 0, :1]) * np.zeros((1, self.units), inputs.dtype)
            return (zeros,) * self.state_count
        states = (tuple(initial_state) if isinstance(initial_state, (tuple, list))
                  else (initial_state,))
        if len(states) != self.state_count:
            raise ValueError(f"{type(self).__name__} {self.name!r}: argument `initial_state` "
                             f"must hold {self.state_count} array(s) (batch, units), got "
                             f"{len(states)}")
        return states


class SimpleRNN(_Recurrent):
    """A fully connected recurrent layer: `h = activation(x_t @ kernel + h @ recurrent_kernel +
    bias)` at each step t, from h = 0 (or `initial_state`).

    Arguments:
        units: the size of the output and of the state.
        activation: default "tanh"; use_bias: whether to add the bias.
        kernel_initializer, recurrent_initializer (default orthogonal), bias_initializer: as
            for `Module.add_weight`.
        return_sequences: return every step's output (batch, timesteps, units), not the last.
        return_state: return a list [output, final state].
        go_backwards: run over the time steps in reverse (the outputs too).
        name: default simple_rnn, simple_rnn_1, ...
        dtype: a dtype policy (see `Layer`).
        stateful: keep the final states as the next call's initial states (see the module's
            docstring; `reset_states()` zeros them).
        zero_output_for_mask: output zeros at masked steps, not the previous output.
    Call as `layer(inputs, initial_state=None, mask=None)`, mask a boolean (batch, timesteps)
    array, False at the steps to skip (see the module's docstring). Its Variables are
    `<name>/kernel` (features, units), `<name>/recurrent_kernel` (units, units) and
    `<name>/bias` (units,).

    Examples:
        >>> layer = SimpleRNN(4, return_sequences=True)
        >>> layer(np.ones((2, 5, 3))).shape
        (2, 5, 4)
    """

    default_name = "simple_rnn"

    def step(self, x, states):
        z = x @ self.compute(self.kernel) + states[0] @ self.compute(self.recurrent_kernel)
        if self.use_bias:
            z = z + self.compute(self.bias)
        h = self.activation(z)
        return h, (h,)


class LSTM(_Recurrent):
    """Long short-term memory, as Keras computes it. With z = x_t @ kernel + h @
    recurrent_kernel + bias split in four blocks of `units` in the order i, f, c, o:

        i = sigmoid(z_i), f = sigmoid(z_f), o = sigmoid(z_o), g = activation(z_c)
        c = f * c + i * g;  h = o * activation(c)

    Arguments as for SimpleRNN, and:
        recurrent_activation: the gates' activation (default "sigmoid").
        unit_forget_bias: start the forget gate's bias at 1 (Keras' default).
        name: default lstm, lstm_1, ...
    Call as `layer(inputs, initial_state=None)`, initial_state a list [h, c]. With
    return_state it returns [output, h, c]. Its Variables are `<name>/kernel` (features,
    4 units), `<name>/recurrent_kernel` (units, 4 units) and `<name>/bias` (4 units,).

    Examples:
        >>> output, h, c = LSTM(4, return_state=True)(np.ones((2, 5, 3)))
        >>> output.shape, c.shape
        ((2, 4), (2, 4))
    """

    default_name = "lstm"
    gates = 4
    state_count = 2

    def __init__(self, units: int, activation: str | Callable | None = "tanh",
                 recurrent_activation: str | Callable | None = "sigmoid",
                 use_bias: bool = True, kernel_initializer="glorot_uniform",
                 recurrent_initializer=orthogonal, bias_initializer="zeros",
                 unit_forget_bias: bool = True, return_sequences: bool = False,
                 return_state: bool = False, go_backwards: bool = False,
                 name: str | None = None, dtype=None, stateful: bool = False,
                 zero_output_for_mask: bool = False):
        super().__init__(units, activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, return_sequences,
                         return_state, go_backwards, name, dtype, stateful,
                         zero_output_for_mask)
        self.recurrent_activation = get_activation(recurrent_activation)
        if unit_forget_bias:
            self.bias_initializer = _forget_bias_one(bias_initializer, self.units)

    def step(self, x, states):
        h, c = states
        z = x @ self.compute(self.kernel) + h @ self.compute(self.recurrent_kernel)
        if self.use_bias:
            z = z + self.compute(self.bias)
        u = self.units
        i = self.recurrent_activation(z[:, :u])
        f = self.recurrent_activation(z[:, u:2 * u])
        g = self.activation(z[:, 2 * u:3 * u])
        o = self.recurrent_activation(z[:, 3 * u:])
        c = f * c + i * g
        h = o * self.activation(c)
        return h, (h, c)


def _forget_bias_one(bias_initializer, units: int) -> Callable:
    """bias_initializer's value with the forget gate's block (the second) set to 1."""
    def initializer(shape, dtype, rng):
        bias = np.array(initial_value(bias_initializer, shape, dtype, rng))
        bias[units:2 * units] = 1
        return bias
    return initializer


class GRU(_Recurrent):
    """The gated recurrent unit, as Keras computes it. With x_t @ kernel + input bias and
    h @ recurrent_kernel (+ recurrent bias) each split in three blocks of `units` in the
    order z (update), r (reset), h (candidate):

        z = sigmoid(x_z + h_z), r = sigmoid(x_r + h_r)
        candidate = activation(x_h + r * h_h)          reset_after=True (the default)
        candidate = activation(x_h + (r * h) @ recurrent_kernel_h)       reset_after=False
        h = z * h + (1 - z) * candidate

    Arguments as for LSTM (less unit_forget_bias), and:
        reset_after: apply the reset gate after the recurrent product (Keras' default, which
            gives the recurrent product a bias of its own: bias is then (2, 3 units), the
            input bias then the recurrent one).
        name: default gru, gru_1, ...
    Call as `layer(inputs, initial_state=None)`. With return_state it returns [output, h].

    Examples:
        >>> GRU(4)(np.ones((2, 5, 3))).shape
        (2, 4)
    """

    default_name = "gru"
    gates = 3

    def __init__(self, units: int, activation: str | Callable | None = "tanh",
                 recurrent_activation: str | Callable | None = "sigmoid",
                 use_bias: bool = True, kernel_initializer="glorot_uniform",
                 recurrent_initializer=orthogonal, bias_initializer="zeros",
                 return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, reset_after: bool = True,
                 name: str | None = None, dtype=None, stateful: bool = False,
                 zero_output_for_mask: bool = False):
        super().__init__(units, activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, return_sequences,
                         return_state, go_backwards, name, dtype, stateful,
                         zero_output_for_mask)
        self.recurrent_activation = get_activation(recurrent_activation)
        self.reset_after = bool(reset_after)

    def bias_shape(self) -> tuple:
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def step(self, x, states):
        h = states[0]
        u = self.units
        recurrent_kernel = self.compute(self.recurrent_kernel)
        x_gates = x @ self.compute(self.kernel)
        if self.use_bias:
            bias = self.compute(self.bias)
            x_gates = x_gates + (bias[0] if self.reset_after else bias)
        if self.reset_after:
            h_gates = h @ recurrent_kernel
            if self.use_bias:
                h_gates = h_gates + bias[1]
        else:
            h_gates = h @ recurrent_kernel[:, :2 * u]
        z = self.recurrent_activation(x_gates[:, :u] + h_gates[:, :u])
        r = self.recurrent_activation(x_gates[:, u:2 * u] + h_gates[:, u:2 * u])
        if self.reset_after:
            candidate = self.activation(x_gates[:, 2 * u:] + r * h_gates[:, 2 * u:])
        else:
            candidate = self.activation(x_gates[:, 2 * u:] +
                                        (r * h) @ recurrent_kernel[:, 2 * u:])
        h = z * h + (1 - z) * candidate
        return h, (h,)
