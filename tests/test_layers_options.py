"""Keras's layer options: dilated Conv1D and Conv2D and Conv1D's causal padding (outputs
against direct loops, gradients against finite differences, traced with an unknown batch
size), and the recurrent layers' masks, stateful=True and go_backwards (against Python loops
over the time steps, traced, checkpointed)."""
import re

import numpy as np
import pytest

import autotrace as at
from autotrace import layers
from autotrace.testing import check_grads
from tests.variable_helpers import check_variable_gradients


def random(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def randomize(layer, seed=1, scale=0.5):
    for variable in layer.trainable_variables:
        variable.assign(random(*variable.shape, seed=seed + variable.size) * scale)


# --- convolutions ------------------------------------------------------------------------------

def conv1d_loop(x, kernel, rate, pad_before=0, pad_after=0):
    """out[n, t, f] = sum over taps k and channels c of x[n, t + k rate, c] kernel[k, c, f],
    element by element."""
    x = np.pad(x, ((0, 0), (pad_before, pad_after), (0, 0)))
    taps, channels, filters = kernel.shape
    steps = x.shape[1] - (taps - 1) * rate
    out = np.zeros((x.shape[0], steps, filters))
    for n in range(x.shape[0]):
        for t in range(steps):
            for f in range(filters):
                out[n, t, f] = sum(x[n, t + k * rate, c] * kernel[k, c, f]
                                   for k in range(taps) for c in range(channels))
    return out


@pytest.mark.parametrize("padding, rate, pads", [
    ("valid", 2, (0, 0)), ("causal", 1, (2, 0)), ("causal", 2, (4, 0)), ("same", 3, (3, 3))])
def test_conv1d_dilated_and_causal_outputs(padding, rate, pads):
    x = random(2, 8, 2)
    layer = layers.Conv1D(3, 3, padding=padding, dilation_rate=rate)
    layer(x)
    randomize(layer)
    expected = conv1d_loop(x, layer.kernel.numpy(), rate, *pads) + layer.bias.numpy()
    np.testing.assert_allclose(layer(x), expected, rtol=1e-12)


def test_causal_outputs_do_not_see_later_steps():
    x = random(1, 6, 2)
    layer = layers.Conv1D(2, 2, padding="causal", dilation_rate=2)
    changed = x.copy()
    changed[:, 4:] += 1.0
    before, after = layer(x), layer(changed)
    np.testing.assert_array_equal(before[:, :4], after[:, :4])
    assert not np.allclose(before[:, 4:], after[:, 4:])


def conv2d_loop(x, kernel, rates):
    rh, rw = rates
    kh, kw, channels, filters = kernel.shape
    height, width = x.shape[1] - (kh - 1) * rh, x.shape[2] - (kw - 1) * rw
    out = np.zeros((x.shape[0], height, width, filters))
    for n, i, j, f in np.ndindex(out.shape):
        out[n, i, j, f] = sum(x[n, i + a * rh, j + b * rw, c] * kernel[a, b, c, f]
                              for a in range(kh) for b in range(kw) for c in range(channels))
    return out


def test_conv2d_dilated_output_both_formats():
    x = random(2, 7, 6, 2)
    layer = layers.Conv2D(2, (2, 3), dilation_rate=(3, 2), use_bias=False)
    layer(x)
    randomize(layer)
    np.testing.assert_allclose(layer(x), conv2d_loop(x, layer.kernel.numpy(), (3, 2)),
                               rtol=1e-12)
    first = layers.Conv2D(2, (2, 3), dilation_rate=(3, 2), use_bias=False,
                          data_format="channels_first")
    first(x.transpose(0, 3, 1, 2))
    first.kernel.assign(layer.kernel.numpy())
    np.testing.assert_allclose(first(x.transpose(0, 3, 1, 2)),
                               layer(x).transpose(0, 3, 1, 2), rtol=1e-12)
    same = layers.Conv2D(1, 3, dilation_rate=2, padding="same")
    assert same(x).shape == (2, 7, 6, 1)


def test_dilated_convolution_gradients():
    x = random(2, 6, 2, seed=3)
    layer = layers.Conv1D(2, 2, padding="causal", dilation_rate=2)
    layer(x)
    randomize(layer)
    check_grads(lambda x: layer(x), (x,), modes=("reverse", "forward"))
    weights = random(2, 6, 2, seed=4)
    pairs = check_variable_gradients(lambda x: np.sum(layer(x) * weights), x)
    assert [v.name for _, v in pairs] == [v.name for v in layer.variables]

    images = random(1, 5, 5, 2, seed=5)
    conv = layers.Conv2D(2, 2, dilation_rate=(2, 1))
    conv(images)
    randomize(conv)
    check_grads(lambda x: conv(x), (images,), modes=("reverse",))
    check_variable_gradients(lambda x: np.sum(conv(x) ** 2), images, rtol=1e-5)


@pytest.mark.parametrize("make, example", [
    (lambda: layers.Conv1D(2, 3, padding="causal", dilation_rate=2), (7, 2)),
    (lambda: layers.Conv2D(2, 2, dilation_rate=2, padding="same"), (5, 4, 2)),
])
def test_dilated_traced_with_an_unknown_batch_size(make, example):
    layer = make()
    layer(random(1, *example))
    randomize(layer)
    traced = at.function(lambda x: layer(x), input_signature=[at.Spec((None,) + example)])
    for batch in (2, 3):
        x = random(batch, *example, seed=batch)
        np.testing.assert_allclose(traced(x), layer(x), rtol=1e-12)
    assert traced.trace_count == 1


def test_convolution_option_errors():
    with pytest.raises(ValueError, match=re.escape(
            "Conv1D: padding 'causal' needs data_format 'channels_last' (as in Keras); got "
            "data_format 'channels_first'")):
        layers.Conv1D(2, 3, padding="causal", data_format="channels_first")
    with pytest.raises(ValueError, match=re.escape(
            "Conv2D: strides (2, 2) and dilation_rate (2, 1) cannot both be above 1 (as in "
            "Keras); use one or the other")):
        layers.Conv2D(2, 3, strides=2, dilation_rate=(2, 1))
    with pytest.raises(ValueError, match=re.escape(
            "Conv2D: argument `dilation_rate` must be a positive integer or a pair of them, "
            "got 0")):
        layers.Conv2D(2, 3, dilation_rate=0)


# --- recurrent layers: masks, stateful, go_backwards -------------------------------------------

def simple_rnn_loop(x, kernel, recurrent, bias, mask, h=None, backwards=False,
                    zero_output=False):
    """SimpleRNN with Keras's masking, example by example and step by step."""
    batch, steps, _ = x.shape
    units = kernel.shape[1]
    outputs = np.zeros((batch, steps, units))
    finals = np.zeros((batch, units))
    order = list(range(steps))[::-1] if backwards else list(range(steps))
    for n in range(batch):
        state = np.zeros(units) if h is None else h[n].copy()
        previous = np.zeros(units)
        for position, t in enumerate(order):
            if mask[n, t]:
                state = np.tanh(x[n, t] @ kernel + state @ recurrent + bias)
                previous = state
                outputs[n, position] = state
            else:
                outputs[n, position] = 0.0 if zero_output else previous
        finals[n] = state
    return outputs, finals


MASK = np.array([[True, True, False, True, False],
                 [False, True, True, True, True],
                 [True, False, False, False, False]])


@pytest.mark.parametrize("backwards", [False, True])
@pytest.mark.parametrize("zero_output", [False, True])
def test_simple_rnn_mask_against_a_loop(backwards, zero_output):
    x = random(3, 5, 2, seed=8)
    layer = layers.SimpleRNN(3, return_sequences=True, return_state=True,
                             go_backwards=backwards, zero_output_for_mask=zero_output)
    layer(x)
    randomize(layer)
    outputs, state = layer(x, mask=MASK)
    expected, final = simple_rnn_loop(x, layer.kernel.numpy(), layer.recurrent_kernel.numpy(),
                                      layer.bias.numpy(), MASK, backwards=backwards,
                                      zero_output=zero_output)
    np.testing.assert_allclose(outputs, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(state, final, rtol=1e-12)
    as_lists = layer(x, mask=MASK.tolist())
    np.testing.assert_array_equal(as_lists[0], outputs)
    last = layers.SimpleRNN(3, go_backwards=backwards, zero_output_for_mask=zero_output)
    last(x)
    for mine, theirs in zip(last.variables, layer.variables):
        mine.assign(theirs.numpy())
    np.testing.assert_allclose(last(x, mask=MASK), expected[:, -1], rtol=1e-12, atol=1e-15)


def test_lstm_and_gru_masked_steps_keep_the_states():
    x = random(3, 5, 2, seed=9)
    for layer in (layers.LSTM(2, return_state=True), layers.GRU(2, return_state=True)):
        layer(x)
        randomize(layer)
        masked = layer(x, mask=MASK)
        # the same as running each example over its unmasked steps only
        for n in range(3):
            kept = x[n:n + 1, MASK[n]]
            alone = layer(kept)
            for a, b in zip(masked, alone):
                np.testing.assert_allclose(a[n:n + 1], b, rtol=1e-12)


def test_masked_gradients_and_traced():
    x = random(3, 5, 2, seed=10)
    layer = layers.GRU(2, return_sequences=True)
    layer(x)
    randomize(layer)
    weights = random(3, 5, 2, seed=11)
    check_grads(lambda x: layer(x, mask=MASK), (x,), modes=("reverse",))
    check_variable_gradients(lambda x: np.sum(layer(x, mask=MASK) * weights), x, rtol=1e-5)
    traced = at.function(lambda x, mask: layer(x, mask=mask),
                         input_signature=[at.Spec((None, 5, 2)), at.Spec((None, 5), np.bool_)])
    np.testing.assert_allclose(traced(x, MASK), layer(x, mask=MASK), rtol=1e-12)
    np.testing.assert_allclose(traced(x[:2], MASK[:2]), layer(x[:2], mask=MASK[:2]),
                               rtol=1e-12)
    with pytest.raises(ValueError, match=re.escape(
            f"GRU {layer.name!r}: argument `mask` must be a boolean array of shape (batch, "
            f"timesteps) (3, 5), got dtype float64 and shape (3, 5)")):
        layer(x, mask=MASK.astype(float))


def test_stateful_keeps_the_states_across_calls():
    x = random(2, 6, 2, seed=12)
    layer = layers.SimpleRNN(3, stateful=True, return_sequences=True)
    whole = layers.SimpleRNN(3, return_sequences=True)
    layer(x[:, :3])
    layer.reset_states()
    whole(x)
    randomize(layer)
    for mine, theirs in zip(whole.trainable_variables, layer.trainable_variables):
        mine.assign(theirs.numpy())
    assert [v.name for v in layer.non_trainable_variables] == [f"{layer.name}/states_0"]
    # two calls on halves are one call on the whole sequence
    first, second = layer(x[:, :3]), layer(x[:, 3:])
    np.testing.assert_allclose(np.concatenate([first, second], axis=1), whole(x), rtol=1e-12)
    np.testing.assert_allclose(layer.states_0.numpy(), whole(x)[:, -1], rtol=1e-12)
    layer.reset_states()
    np.testing.assert_array_equal(layer.states_0.numpy(), np.zeros((2, 3)))
    np.testing.assert_allclose(layer(x[:, :3]), first, rtol=1e-12)
    with pytest.raises(ValueError, match=re.escape(
            f"SimpleRNN {layer.name!r}: stateful=True keeps states for a batch of 2; got "
            f"inputs of shape (3, 3, 2); make another layer for another batch size")):
        layer(random(3, 3, 2))


def test_stateful_lstm_traced_and_checkpointed(tmp_path):
    x = random(2, 4, 2, seed=13)
    layer = layers.LSTM(2, stateful=True)
    layer(x)
    layer.reset_states()
    randomize(layer)
    eager = layers.LSTM(2, stateful=True)
    eager(x)
    for mine, theirs in zip(eager.variables, layer.variables):
        mine.assign(theirs.numpy())
    traced = at.function(lambda x: layer(x))
    for _ in range(3):
        np.testing.assert_allclose(traced(x), eager(x), rtol=1e-12)
    assert traced.trace_count == 1
    np.testing.assert_allclose(layer.states_1.numpy(), eager.states_1.numpy(), rtol=1e-12)
    path = at.Checkpoint(model=layer).save(tmp_path / "ckpt")
    kept = [v.numpy() for v in layer.non_trainable_variables]
    layer.reset_states()
    at.Checkpoint(model=layer).restore(path)
    for variable, value in zip(layer.non_trainable_variables, kept):
        np.testing.assert_array_equal(variable.numpy(), value)
    unknown = layers.GRU(2, stateful=True, name="unknown_batch")
    with pytest.raises(ValueError, match=re.escape(
            "GRU 'unknown_batch': stateful=True needs a known batch size, the same on every "
            "call; give it a size in the Spec")):
        at.function(lambda x: unknown(x), input_signature=[at.Spec((None, 4, 2))])(x)
    with pytest.raises(ValueError, match=re.escape(
            "GRU 'gru_x': reset_states needs stateful=True")):
        layers.GRU(2, name="gru_x").reset_states()


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_dilated_conv2d_transpose_is_the_adjoint_of_the_dilated_convolution(padding):
    # <transpose(x), y> = <x, conv(y)> for the convolution with the same kernel and rates,
    # whose kernel layout (height, width, in, out) is the transpose's (height, width, out, in)
    x = random(2, 4, 5, 3, seed=20)
    transpose = layers.Conv2DTranspose(2, (2, 3), dilation_rate=(2, 1), padding=padding,
                                       use_bias=False)
    outputs = transpose(x)
    expected_shape = {"valid": (2, 4 + 2, 5 + 2, 2), "same": (2, 4, 5, 2)}[padding]
    assert outputs.shape == expected_shape
    randomize(transpose)
    y = random(*expected_shape, seed=21)
    convolution = layers.Conv2D(3, (2, 3), dilation_rate=(2, 1), padding=padding,
                                use_bias=False)
    convolution(y)
    convolution.kernel.assign(transpose.kernel.numpy())
    np.testing.assert_allclose(np.sum(transpose(x) * y), np.sum(x * convolution(y)),
                               rtol=1e-12)
    check_grads(lambda x: transpose(x), (x,), modes=("reverse",))


def test_stateful_gradients_stop_at_the_kept_states():
    """Two calls in one loss: the gradient is that of the same two calls with the first's
    final state given to the second as a constant (truncated backpropagation through time,
    as Keras's stateful layers), and the value is the same as without stopping."""
    x = random(2, 6, 2, seed=22)
    layer = layers.SimpleRNN(3, stateful=True, return_sequences=True)
    layer(x[:, :3])
    randomize(layer)
    twin = layers.SimpleRNN(3, return_sequences=True, return_state=True)
    twin(x[:, :3])
    for mine, theirs in zip(twin.variables, layer.trainable_variables):
        mine.assign(theirs.numpy())
    weights = random(2, 3, 3, seed=23)

    def loss():
        layer.reset_states()
        first = layer(x[:, :3])
        return np.sum(layer(x[:, 3:]) * weights) + np.sum(first * weights)

    def truncated():
        first, state = twin(x[:, :3])
        second, _ = twin(x[:, 3:], initial_state=[at.stop_gradient(state)])
        return np.sum(second * weights) + np.sum(first * weights)
    value, gradients = at.implicit_value_and_grad(loss)()
    expected_value, expected = at.implicit_value_and_grad(truncated)()
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    assert len(gradients) == 3
    for (gradient, _), (reference, _) in zip(gradients, expected):
        np.testing.assert_allclose(gradient, reference, rtol=1e-12, atol=1e-14)


# --- masks passed on by Sequential -------------------------------------------------------------

TOKENS = np.array([[3, 1, 4, 0, 0],
                   [2, 7, 1, 8, 2],
                   [5, 0, 0, 0, 0]])


def test_embedding_mask_zero_reaches_the_recurrent_layers():
    embedding = layers.Embedding(10, 3, mask_zero=True)
    first = layers.LSTM(4, return_sequences=True)
    dense = layers.Dense(4, activation="tanh")
    second = layers.GRU(2)
    model = layers.Sequential([embedding, first, layers.Dropout(0.5), dense, second])
    model(TOKENS)
    for layer in (first, dense, second):
        randomize(layer)
    np.testing.assert_array_equal(embedding.compute_mask(TOKENS), TOKENS != 0)
    # the same layers called one by one with the mask given by hand
    mask = TOKENS != 0
    by_hand = second(dense(first(embedding(TOKENS), mask=mask)), mask=mask)
    np.testing.assert_allclose(model(TOKENS), by_hand, rtol=1e-12)
    # the padding changes nothing: each sequence alone, without its zeros
    for n, tokens in enumerate(TOKENS):
        alone = tokens[tokens != 0][None]
        unmasked = second(dense(first(embedding(alone))))
        np.testing.assert_allclose(model(TOKENS)[n:n + 1], unmasked, rtol=1e-12)

    def loss(tokens):
        return np.sum(model(tokens, training=False) ** 2)
    check_variable_gradients(loss, TOKENS, rtol=1e-5)
    # (Embedding's lookup, np.take, needs the batch size when traced)
    traced = at.function(lambda tokens: model(tokens))
    np.testing.assert_allclose(traced(TOKENS), model(TOKENS), rtol=1e-12)
    np.testing.assert_allclose(traced(TOKENS[1:]), model(TOKENS[1:]), rtol=1e-12)


def test_backwards_sequences_carry_their_mask_reversed():
    embedding = layers.Embedding(10, 2, mask_zero=True)
    backwards = layers.SimpleRNN(3, return_sequences=True, go_backwards=True)
    last = layers.SimpleRNN(2)
    model = layers.Sequential([embedding, backwards, last])
    model(TOKENS)
    mask = TOKENS != 0
    assert np.array_equal(backwards.compute_mask(embedding(TOKENS), mask), mask[:, ::-1])
    np.testing.assert_allclose(
        model(TOKENS), last(backwards(embedding(TOKENS), mask=mask), mask=mask[:, ::-1]),
        rtol=1e-12)


def test_a_layer_that_cannot_carry_the_mask_refuses_it():
    model = layers.Sequential([layers.Embedding(10, 2, mask_zero=True),
                               layers.Flatten(name="flat")], name="masked")
    with pytest.raises(TypeError, match=re.escape(
            "Sequential 'masked': layer 'flat' does not support masking, but gets the mask of "
            "the steps to skip from the layer before it (Embedding with mask_zero=True, say); "
            "put a recurrent layer (without return_sequences) before it, or drop the mask")):
        model(TOKENS)
    # after a recurrent layer without return_sequences there is no mask left
    fine = layers.Sequential([layers.Embedding(10, 2, mask_zero=True), layers.GRU(3),
                              layers.Flatten()])
    assert fine(TOKENS).shape == (3, 3)
    # normalizing over the steps too would mix the masked ones in
    assert not layers.LayerNormalization(axis=(1, 2)).supports_masking
    assert layers.LayerNormalization().supports_masking
